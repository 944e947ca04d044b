//! Config sources, precedence, bad files and variable expansion (CFG-*, SEC-1), through the
//! manager and real servers.

use serde_json::json;
use wave_mcp_manager::{McpManager, Source, Status};

use super::support::*;

// CFG-1, CFG-2: plugin → user → project → constructor, the later source wins per name.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cfg_2_precedence_constructor_over_project_over_user_over_plugin() {
    let sandbox = Sandbox::new();
    let entry = |label: &str| json!({ "command": "srv", "args": [label] });
    sandbox.write_plugin(
        "tools",
        json!({ "all": entry("plugin"), "pu": entry("plugin"), "only-plugin": entry("plugin") }),
    );
    sandbox.write_user(json!({ "all": entry("user"), "pu": entry("user"), "up": entry("user") }));
    sandbox.write_project(json!({ "all": entry("project"), "up": entry("project") }));
    let manager = McpManager::new(sandbox.options(json!({ "all": entry("constructor") })));
    let source_and_arg = |name: &str| {
        let s = server(&manager, name);
        (s.source, s.args[0].clone())
    };
    assert_eq!(
        source_and_arg("all"),
        (Source::Constructor, "constructor".into())
    );
    assert_eq!(source_and_arg("up"), (Source::Project, "project".into()));
    assert_eq!(source_and_arg("pu"), (Source::User, "user".into()));
    assert_eq!(
        source_and_arg("only-plugin"),
        (Source::Plugin, "plugin".into())
    );
    assert_eq!(manager.snapshot().servers.len(), 4);
    assert!(manager.config_problems().is_empty());
    let user = server(&manager, "pu");
    assert_eq!(
        user.config_path.unwrap(),
        sandbox.home.join(".wave").join("mcp.json")
    );
    assert!(server(&manager, "all").config_path.is_none());
}

// CFG-3: no user file, no project file: no problem reported, empty list.
#[test]
fn cfg_3_missing_files_are_normal() {
    let sandbox = Sandbox::new();
    let manager = sandbox.manager();
    assert!(manager.snapshot().servers.is_empty());
    assert!(manager.config_problems().is_empty());
}

// CFG-4: a malformed file is reported with its path and position and skipped; the other
// sources still load and work.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cfg_4_malformed_file_is_named_and_skipped() {
    let sandbox = Sandbox::new();
    let project = sandbox.workdir.join(".mcp.json");
    std::fs::write(
        &project,
        "{\n  \"mcpServers\": {\n    \"x\": { \"command\": \"a\", }\n  }\n}",
    )
    .unwrap();
    sandbox.write_user(json!({ "fine": sandbox.server(&[]) }));
    let manager = sandbox.manager();
    let problems = manager.config_problems();
    assert_eq!(problems.len(), 1);
    assert_eq!(problems[0].path, project);
    let message = problems[0].to_string();
    assert!(message.contains(".mcp.json"), "{message}");
    assert!(message.contains("line 3"), "{message}");
    let names: Vec<_> = manager
        .snapshot()
        .servers
        .iter()
        .map(|s| s.name.clone())
        .collect();
    assert_eq!(names, ["fine"]);
    manager.connect("fine").await.unwrap();
    manager.cleanup().await;
    // Nothing rewrote the user's broken file.
    assert!(
        std::fs::read_to_string(&project)
            .unwrap()
            .contains("\"a\", }")
    );
}

// A wrong-typed field is listed as `error` naming the file and field; siblings are unaffected.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn wrong_typed_entry_is_an_error_naming_file_and_field() {
    let sandbox = Sandbox::new();
    sandbox.write_project(json!({
        "typo": { "command": "srv", "args": "--not-a-list" },
        "ok": sandbox.server(&[]),
    }));
    let manager = sandbox.manager();
    let typo = server(&manager, "typo");
    assert_eq!(typo.status, Status::Error);
    let reason = typo.error.unwrap();
    assert!(
        reason.contains(".mcp.json: mcpServers.typo.args"),
        "{reason}"
    );
    let pending = manager.start_turn_dials().unwrap();
    assert_eq!(pending.len(), 1, "only the readable entry is dialed");
    pending.settled().await;
    assert_eq!(status(&manager, "ok"), Status::Connected);
    manager.cleanup().await;
}

// CFG-5, CFG-6: an unknown type is listed, and becomes `error` with the reason on connect.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cfg_6_unknown_type_is_an_error_at_connect_time() {
    let sandbox = Sandbox::new();
    sandbox.write_project(json!({ "ws": { "type": "websocket", "url": "ws://127.0.0.1:1/" } }));
    let manager = sandbox.manager();
    let ws = server(&manager, "ws");
    assert_eq!(ws.status, Status::Disconnected);
    assert_eq!(ws.transport, "websocket");
    let err = manager.connect("ws").await.unwrap_err().to_string();
    assert!(
        err.contains("unknown transport type \"websocket\""),
        "{err}"
    );
    let ws = server(&manager, "ws");
    assert_eq!(ws.status, Status::Error);
    assert!(ws.error.unwrap().contains("websocket"));
    manager.cleanup().await;
}

// `${VAR}` / `${VAR:-default}` reach the server process (here through its instructions text);
// the list keeps showing the config as written (SEC-1).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn env_expansion_reaches_the_process_and_lists_show_it_unexpanded() {
    let sandbox = Sandbox::new();
    let var = format!("WAVE_TEST_EXPAND_{}", std::process::id());
    // SAFETY: the variable name is unique to this test process and test.
    unsafe { std::env::set_var(&var, "from-env") };
    let text = format!("a=${{{var}}} b=${{WAVE_TEST_SURELY_UNSET:-fallback}}");
    sandbox.write_project(json!({ "s": sandbox.server(&["--instructions", &text]) }));
    let manager = sandbox.manager();
    assert!(
        server(&manager, "s").args.contains(&text),
        "SEC-1: shown as written"
    );
    manager.connect("s").await.unwrap();
    let s = server(&manager, "s");
    assert_eq!(s.instructions.as_deref(), Some("a=from-env b=fallback"));
    assert!(s.args.contains(&text));
    manager.cleanup().await;
}

// An unset variable without a default is a per-server error naming the variable; the server is
// still listed and the others still connect.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn unset_variable_is_a_clear_per_server_error() {
    let sandbox = Sandbox::new();
    sandbox.write_project(json!({
        "needs-token": { "type": "http", "url": "http://127.0.0.1:9/mcp?key=${WAVE_TEST_NO_SUCH_TOKEN}" },
        "fine": sandbox.server(&[]),
    }));
    let manager = sandbox.manager();
    manager.start_turn_dials().unwrap().settled().await;
    let failed = server(&manager, "needs-token");
    assert_eq!(failed.status, Status::Error);
    assert_eq!(
        failed.error.unwrap(),
        "mcpServers.needs-token.url: environment variable WAVE_TEST_NO_SUCH_TOKEN is not set \
         (write ${WAVE_TEST_NO_SUCH_TOKEN:-default} to give a default)"
    );
    assert_eq!(status(&manager, "fine"), Status::Connected);
    manager.cleanup().await;
}

// Plugins: every ~/.wave/plugins/<plugin>/.mcp.json is a source, `${WAVE_PLUGIN_ROOT}` is that
// directory.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn plugin_root_expands_to_the_plugin_directory() {
    let sandbox = Sandbox::new();
    let root = sandbox.home.join(".wave").join("plugins").join("acme");
    std::fs::create_dir_all(root.join("bin")).unwrap();
    std::fs::copy(test_server(), root.join("bin").join("server")).unwrap();
    sandbox.write_plugin(
        "acme",
        json!({ "acme": {
            "command": "${WAVE_PLUGIN_ROOT}/bin/server",
            "args": ["--instructions", "root=${WAVE_PLUGIN_ROOT}", "--event-log", sandbox.events_path()]
        }}),
    );
    let manager = sandbox.manager();
    let acme = server(&manager, "acme");
    assert_eq!(acme.source, Source::Plugin);
    assert_eq!(
        acme.command.as_deref(),
        Some("${WAVE_PLUGIN_ROOT}/bin/server")
    );
    manager.connect("acme").await.unwrap();
    let expected = format!("root={}", root.display());
    assert_eq!(server(&manager, "acme").instructions, Some(expected));
    manager.cleanup().await;
}

// A relative command path is resolved against its config file's directory.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn relative_command_is_resolved_against_the_config_directory() {
    let sandbox = Sandbox::new();
    std::fs::create_dir_all(sandbox.workdir.join("tools")).unwrap();
    std::fs::copy(test_server(), sandbox.workdir.join("tools").join("srv")).unwrap();
    sandbox.write_project(json!({ "rel": {
        "command": "./tools/srv",
        "args": ["--event-log", sandbox.events_path()]
    }}));
    let manager = sandbox.manager();
    manager.connect("rel").await.unwrap();
    manager.cleanup().await;
}
