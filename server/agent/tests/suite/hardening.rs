//! Attacks on what the agent hands on: a server's hidden characters never reach the model
//! (TRUST-7), and the transcript is the user's alone (TRUST-8).

use std::os::unix::fs::PermissionsExt;
use std::path::Path;

use serde_json::{Value, json};

use super::support::*;

fn assert_no_hidden(text: &str, what: &str) {
    for hidden in HIDDEN_CHARS {
        assert!(!text.contains(*hidden), "{what} has {hidden:?}: {text:?}");
    }
}

/// The declaration of `name` in a request.
fn declaration<'a>(request: &'a Value, name: &str) -> &'a Value {
    request["tools"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["function"]["name"] == name)
        .unwrap_or_else(|| panic!("{name} not declared: {request:#}"))
}

// TRUST-7: a server puts hidden characters in its instructions, a tool's description, title and
// schema, and the tool's result. In a chat turn that calls the tool, no request the model
// receives holds any of them — not in the declarations, not in the instructions announcement,
// not in the tool result — while the visible text around them arrives; the snapshot marks the
// tool `hidden_text`, and the plain tool beside it is not marked.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn trust_7_the_model_never_sees_a_servers_hidden_characters() {
    let sandbox = Sandbox::new();
    let model = FakeModel::start(vec![
        call("mcp__h__hostile", json!({ "text": "x" })),
        say("done"),
    ])
    .await;
    let mut agent = sandbox.agent(
        json!({ "h": sandbox.server("h", &["--hostile-text", "--tools", "echo"]) }),
        &model,
    );
    agent.send_message("use the hostile tool").await.unwrap();
    let requests = model.requests();
    assert_eq!(requests.len(), 2);
    for (i, request) in requests.iter().enumerate() {
        assert_no_hidden(&request.to_string(), &format!("request {i}"));
        let hostile = declaration(request, "mcp__h__hostile");
        let description = hostile["function"]["description"].as_str().unwrap();
        assert!(
            description.contains("Hostile tool.") && description.contains("REDDescribed."),
            "{description:?}"
        );
        let parameter = &hostile["function"]["parameters"]["properties"]["text"]["description"];
        assert!(parameter.as_str().unwrap().ends_with("RED"), "{parameter}");
    }
    let announced = contents(&requests[0]).join("\n");
    assert!(announced.contains("Hostile instructions."), "{announced}");
    let results = tool_results(&requests[1]);
    assert_eq!(results.len(), 1);
    assert!(
        results[0].starts_with("result") && results[0].ends_with("REDend"),
        "{:?}",
        results[0]
    );
    // The transcript (the history) is as clean as the requests.
    let transcript = std::fs::read_to_string(agent.transcript_path()).unwrap();
    assert_no_hidden(&transcript, "the transcript");

    let servers = agent.get_mcp_servers().unwrap();
    let marks: Vec<(&str, bool)> = servers[0]
        .tools
        .iter()
        .map(|t| (t.name.as_str(), t.hidden_text))
        .collect();
    assert_eq!(marks, [("echo", false), ("hostile", true)]);
    let instructions = servers[0].instructions.as_deref().unwrap();
    assert_no_hidden(instructions, "the snapshot's instructions");
    agent.destroy().await;
}

fn mode(path: &Path) -> u32 {
    std::fs::metadata(path).unwrap().permissions().mode() & 0o777
}

// TRUST-8: a session's transcript is created 0600 in a 0700 `sessions` directory; a session
// whose transcript and directory already exist with looser modes (0644 in 0755) gets both
// tightened when it writes.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn trust_8_transcripts_are_0600_in_a_0700_directory() {
    let fresh = Sandbox::new();
    let model = FakeModel::start(vec![say("ok")]).await;
    let mut agent = fresh.agent(json!({}), &model);
    agent.send_message("hi").await.unwrap();
    let path = agent.transcript_path().to_path_buf();
    assert_eq!(mode(&path), 0o600, "{}", path.display());
    assert_eq!(mode(path.parent().unwrap()), 0o700);
    agent.destroy().await;

    let loose = Sandbox::new();
    let sessions = loose.home.join(".wave").join("sessions");
    std::fs::create_dir_all(&sessions).unwrap();
    std::fs::set_permissions(&sessions, std::fs::Permissions::from_mode(0o755)).unwrap();
    let existing = sessions.join("test-session.jsonl");
    std::fs::write(&existing, "").unwrap();
    std::fs::set_permissions(&existing, std::fs::Permissions::from_mode(0o644)).unwrap();
    let model = FakeModel::start(vec![say("ok")]).await;
    let mut agent = loose.agent(json!({}), &model);
    assert_eq!(agent.transcript_path(), existing);
    agent.send_message("hi").await.unwrap();
    assert_eq!(mode(&existing), 0o600);
    assert_eq!(mode(&sessions), 0o700);
    assert!(!read_transcript(&existing).is_empty());
    agent.destroy().await;
}

/// Bytes that must not reach a terminal: ESC, BEL, C1 CSI (U+009B, UTF-8 C2 9B).
fn has_control(bytes: &[u8]) -> bool {
    let c1 = "\u{9b}".as_bytes();
    bytes.contains(&0x1b) || bytes.contains(&0x07) || bytes.windows(2).any(|w| w == c1)
}

// TRUST-7: `wave-mcp chat` on a terminal-like stdout prints a hostile tool result, an echoed
// result with control characters, and model text carrying control sequences (a model can be
// talked into repeating them) all escaped: its stdout holds no ESC, BEL or C1 CSI.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn trust_7_chat_prints_no_control_sequence() {
    let sandbox = Sandbox::new();
    let model = FakeModel::start(vec![
        Step::Call(vec![
            ("mcp__h__hostile".into(), json!({ "text": "x" })),
            (
                "mcp__h__echo".into(),
                json!({ "text": "echo\u{1b}[2J\u{9b}31m\u{7}" }),
            ),
        ]),
        say("model \u{1b}]0;PWNED-TITLE\u{7} says \u{9b}31m done"),
    ])
    .await;
    let user = sandbox.home.join(".wave");
    std::fs::create_dir_all(&user).unwrap();
    let config = json!({ "mcpServers": {
        "h": sandbox.server("h", &["--hostile-text", "--tools", "echo"]),
    } });
    std::fs::write(user.join("mcp.json"), config.to_string()).unwrap();
    // The user lets tool calls run without asking (TRUST-5): stdin is not a terminal.
    sandbox.write_settings(true, json!({ "permissions": { "defaultMode": "allow" } }));

    let mut chat = std::process::Command::new(wave_mcp());
    chat.args(["chat", "--workdir"])
        .arg(&sandbox.workdir)
        .env("HOME", &sandbox.home)
        .env("WAVE_BASE_URL", &model.base_url)
        .env("WAVE_MODEL", "fake-model")
        .env("WAVE_API_KEY", "k");
    let output = wave_mcp_testkit::run_with_input(chat, b"go\n/exit\n").await;
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(output.status.success(), "{stdout}");
    assert!(!has_control(&output.stdout), "{stdout:?}");
    assert!(!has_control(&output.stderr), "{:?}", output.stderr);
    wave_mcp_testkit::assert_in_order(
        &stdout,
        &[
            "tool result:\n  result\\x1b]0;PWNED-TITLE\\x07",
            "tool result:\n  echo\\x1b[2J\\u{9b}31m\\x07",
            "\\x1b]0;PWNED-TITLE\\x07",
            "\\u{9b}31m",
        ],
    );
    assert_eq!(sandbox.calls("h"), ["hostile", "echo"]);
}
