//! `wave-mcp chat`: the real binary, stdin piped, against the fake model and a real MCP server.

use std::process::Command;

use serde_json::json;
use wave_mcp_testkit::run_with_input;

use super::support::*;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn chat_command_runs_turns_and_mcp_commands() {
    let sandbox = Sandbox::new();
    let model = FakeModel::start(vec![
        call("mcp__a__echo", json!({ "text": "echoed text" })),
        say("the server echoed"),
    ])
    .await;
    let config = json!({ "mcpServers": {
        "a": sandbox.server("a", &["--tools", "echo", "--instructions", "A rules"]),
    } });
    std::fs::write(sandbox.workdir.join(".mcp.json"), config.to_string()).unwrap();
    // The user approved the project's server and allows tool calls without asking (TRUST-1,
    // TRUST-5): stdin is not a terminal to ask on.
    sandbox.approve_project();
    sandbox.write_settings(true, json!({ "permissions": { "defaultMode": "allow" } }));

    let mut chat = Command::new(wave_mcp());
    chat.args(["chat", "--workdir"])
        .arg(&sandbox.workdir)
        .env("HOME", &sandbox.home)
        .env("WAVE_BASE_URL", &model.base_url)
        .env("WAVE_MODEL", "fake-model")
        .env("WAVE_API_KEY", "k");
    let output = run_with_input(
        chat,
        b"/mcp\nplease echo\n/mcp\n/disconnect a\n/mcp\n/connect nope\n/exit\n",
    )
    .await;
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        output.status.success(),
        "stdout:\n{stdout}\nstderr:\n{stderr}"
    );
    let expected = [
        "a  [project]  disconnected  0 tools",
        "tool call: mcp__a__echo {\"text\":\"echoed text\"}",
        "tool result:\n  echoed text",
        "the server echoed",
        "a  [project]  connected  1 tools",
        "disconnected a",
        "a  [project]  disconnected  1 tools (cached)",
        "error: no MCP server named \"nope\" is configured",
    ];
    wave_mcp_testkit::assert_in_order(&stdout, &expected);
    assert_eq!(occurrences(&model.request(0), "A rules"), 1);
    assert_eq!(sandbox.calls("a"), ["echo"]);
    assert_eq!(sandbox.live_processes(), Vec::<u32>::new());
}
