//! Tool naming, routing, schema cleaning, results and instructions (TOOL-*, INS-1), over stdio
//! and Streamable HTTP.

use serde_json::{Value, json};
use wave_mcp_manager::{Error, Status, names, result_text};

use super::support::*;

fn args(value: Value) -> Option<serde_json::Map<String, Value>> {
    value.as_object().cloned()
}

// TOOL-6, TOOL-9: the same tool name on two servers is routed by full name.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tool_9_same_tool_name_on_two_servers_routes_by_full_name() {
    let sandbox = Sandbox::new();
    sandbox.write_project(json!({
        "a": sandbox.server_with_pids("a", &[]),
        "b": sandbox.server_with_pids("b", &[]),
    }));
    let manager = sandbox.manager();
    manager.start_turn_dials().unwrap().settled().await;
    let pid_a = read_pids(&sandbox.pid_file("a"))[0];
    let pid_b = read_pids(&sandbox.pid_file("b"))[0];
    let full_names: Vec<String> = manager.tools().into_iter().map(|t| t.full_name).collect();
    assert!(full_names.contains(&"mcp__a__pid".to_string()));
    assert!(full_names.contains(&"mcp__b__pid".to_string()));
    let unique: std::collections::HashSet<_> = full_names.iter().collect();
    assert_eq!(unique.len(), full_names.len(), "full names clash");
    for (full, pid) in [("mcp__a__pid", pid_a), ("mcp__b__pid", pid_b)] {
        let result = manager.call_tool(full, None).await.unwrap();
        assert_eq!(result_text(&result), pid.to_string(), "{full}");
    }
    assert_eq!(
        manager.call_tool("pid", None).await.unwrap_err(),
        Error::UnknownTool("pid".into()),
        "a bare tool name never routes"
    );
    manager.cleanup().await;
}

// TOOL-5: `$schema`, `exclusiveMinimum`, `exclusiveMaximum` are gone at every depth.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tool_5_schemas_are_cleaned_at_every_depth() {
    let sandbox = Sandbox::new();
    sandbox.write_project(json!({ "s": sandbox.server(&["--tools", "schema"]) }));
    let manager = sandbox.manager();
    manager.connect("s").await.unwrap();
    let tools = manager.tools();
    assert_eq!(tools.len(), 1);
    let schema = serde_json::to_string(&*tools[0].input_schema).unwrap();
    for key in ["$schema", "exclusiveMinimum", "exclusiveMaximum"] {
        assert!(!schema.contains(key), "{key} left in {schema}");
    }
    assert!(schema.contains("\"properties\""), "{schema}");
    manager.cleanup().await;
}

// TOOL-1: names are capped at 64 characters and the capped name still routes.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tool_1_long_names_are_capped_and_still_callable() {
    let sandbox = Sandbox::new();
    sandbox.write_project(json!({ "my.server": sandbox.server(&[]) }));
    let manager = sandbox.manager();
    manager.connect("my.server").await.unwrap();
    let tools = manager.tools();
    assert!(
        tools
            .iter()
            .all(|t| t.full_name.len() <= names::MAX_TOOL_NAME_LEN)
    );
    assert!(
        tools
            .iter()
            .all(|t| t.full_name.starts_with("mcp__my_server__"))
    );
    let long = tools
        .iter()
        .find(|t| t.name.starts_with("this_is_a_deliberately"))
        .unwrap();
    assert_eq!(long.full_name.len(), names::MAX_TOOL_NAME_LEN);
    let result = manager.call_tool(&long.full_name, None).await.unwrap();
    assert_eq!(result_text(&result), "long");
    manager.cleanup().await;
}

// TOOL-8: text, image and resource parts are kept; a failing tool is an error result.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tool_8_results_keep_every_content_kind() {
    let sandbox = Sandbox::new();
    sandbox.write_project(json!({ "s": sandbox.server(&[]) }));
    let manager = sandbox.manager();
    manager.connect("s").await.unwrap();
    let mixed = manager.call_tool("mcp__s__mixed", None).await.unwrap();
    assert_eq!(
        result_text(&mixed),
        "first line\n[Image: image/png]\n[Resource: file:///tmp/wave-test.txt]\nsecond line"
    );
    let failed = manager.call_tool("mcp__s__fail", None).await.unwrap();
    assert_eq!(failed.is_error, Some(true));
    assert_eq!(result_text(&failed), "this tool always fails");
    let sum = manager
        .call_tool("mcp__s__add", args(json!({"a": 2, "b": 40})))
        .await
        .unwrap();
    assert_eq!(result_text(&sum), "42");
    manager.cleanup().await;
}

// INS-1: multi-line instructions are kept verbatim per server.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ins_1_instructions_are_kept_verbatim() {
    let sandbox = Sandbox::new();
    let text = "Line one.\n  Indented line two.\n\nLine four after a blank.";
    sandbox.write_project(json!({
        "with": sandbox.server(&["--instructions", text]),
        "without": sandbox.server(&[]),
    }));
    let manager = sandbox.manager();
    manager.start_turn_dials().unwrap().settled().await;
    assert_eq!(server(&manager, "with").instructions.as_deref(), Some(text));
    assert_eq!(server(&manager, "without").instructions, None);
    manager.cleanup().await;
    assert_eq!(
        server(&manager, "with").instructions,
        None,
        "gone with the connection"
    );
}

// CFG-5: Streamable HTTP with a configured header whose value comes from the environment;
// without the header the server refuses and the status is `error` (no SSE fallback, CFG-7).
// That the value never reaches a snapshot on the wire, the CLI or a log (SEC-1) is
// `faults::secrets_never_reach_the_cache_snapshots_logs_or_cli`, which reads the serialized output.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn http_transport_sends_configured_headers() {
    let http = HttpServer::start(&[
        "--require-header",
        "X-Api-Key:s3cret-value",
        "--name",
        "remote",
    ]);
    let sandbox = Sandbox::new();
    let var = format!("WAVE_TEST_API_KEY_{}", std::process::id());
    // SAFETY: the variable name is unique to this test process and test.
    unsafe { std::env::set_var(&var, "s3cret-value") };
    sandbox.write_project(json!({
        "remote": { "type": "http", "url": http.url, "headers": { "X-Api-Key": format!("${{{var}}}") } },
        "no-key": { "url": http.url },
    }));
    let manager = sandbox.manager();
    manager.start_turn_dials().unwrap().settled().await;
    assert_eq!(status(&manager, "remote"), Status::Connected);
    let echoed = manager
        .call_tool("mcp__remote__echo", args(json!({"text": "over http"})))
        .await
        .unwrap();
    assert_eq!(result_text(&echoed), "over http");
    let no_key = server(&manager, "no-key");
    assert_eq!(no_key.status, Status::Error);
    assert_eq!(no_key.transport, "http");
    manager.cleanup().await;
}

// CACHE-7: a disconnected server's tools are not callable.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn disconnected_tools_are_not_callable() {
    let sandbox = Sandbox::new();
    sandbox.write_project(json!({ "s": sandbox.server(&[]) }));
    let manager = sandbox.manager();
    manager.connect("s").await.unwrap();
    manager.disconnect("s").await.unwrap();
    assert!(manager.tools().is_empty());
    assert_eq!(
        manager.call_tool("mcp__s__echo", None).await.unwrap_err(),
        Error::UnknownTool("mcp__s__echo".into())
    );
    manager.cleanup().await;
}

// SRV-4 through `wave-mcp call` over Streamable HTTP: a structured-only result prints as its
// JSON; a result that breaks the tool's output schema fails the command with the tool, the
// server and the place named.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn srv_4_call_checks_structured_output() {
    let sandbox = Sandbox::new();
    let server = HttpServer::start(&["--tools", "temperature"]);
    sandbox.write_user(json!({ "w": { "type": "http", "url": server.url } }));
    let only = cli(
        &sandbox,
        &["call", "w", "temperature", r#"{"mode":"only"}"#],
        &[],
    );
    assert!(only.status.success(), "{}", text(&only));
    assert_eq!(
        String::from_utf8_lossy(&only.stdout).trim(),
        r#"{"celsius":21.5}"#
    );
    let wrong = cli(
        &sandbox,
        &["call", "w", "temperature", r#"{"mode":"wrong"}"#],
        &[],
    );
    assert!(!wrong.status.success(), "{}", text(&wrong));
    let said = String::from_utf8_lossy(&wrong.stderr);
    assert!(
        said.contains("tool \"temperature\" of \"w\" returned an error: its result does not fit its output schema: at /celsius, \"warm\" is not of type \"number\""),
        "{said}"
    );
}

// SRV-4: `wave-mcp tools` shows a tool's title, hints and output schema; `--json` (the
// snapshot's view) carries them with the server's and the tool's icons, of which only the
// `https:` PNG and the `data:` PNG are kept, in the server's order (the SVG and the `http:` one are dropped).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn srv_4_tools_show_titles_hints_and_only_safe_icons() {
    let sandbox = Sandbox::new();
    sandbox.write_user(json!({ "w": sandbox.server(&["--tools", "temperature"]) }));
    let out = cli(&sandbox, &["tools", "w"], &[]);
    assert!(out.status.success(), "{}", text(&out));
    let shown = String::from_utf8_lossy(&out.stdout);
    assert!(
        shown.contains("mcp__w__temperature\n  Temperature [read-only, idempotent]\n"),
        "{shown}"
    );
    assert!(shown.contains("  output: {\"type\":\"object\""), "{shown}");

    let out = cli(&sandbox, &["tools", "w", "--json"], &[]);
    assert!(out.status.success(), "{}", text(&out));
    let listed: Value = serde_json::from_slice(&out.stdout).unwrap();
    let kept = |icons: &Value| -> Vec<String> {
        icons
            .as_array()
            .unwrap()
            .iter()
            .map(|i| i["src"].as_str().unwrap().chars().take(30).collect())
            .collect()
    };
    let expected = [
        "data:image/png;base64,iVBORw0K",
        "https://icons.example.com/ther",
    ];
    assert_eq!(kept(&listed["server"]["icons"]), expected);
    let row = &listed["server"]["tools"][0];
    assert_eq!(
        row["annotations"],
        json!({ "title": "Temperature", "readOnlyHint": true, "idempotentHint": true })
    );
    assert_eq!(kept(&row["icons"]), expected);
    assert_eq!(
        listed["tools"][0]["outputSchema"]["required"],
        json!(["celsius"])
    );
}

// SRV-2: at connect, a server that declares `logging` gets `logging/setLevel` with its entry's
// `logLevel` (default `info`); one that does not is not asked. A `logLevel` that is no MCP
// level is an error naming the entry and the field.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn srv_2_log_level_is_set_at_connect_where_the_server_logs() {
    let sandbox = Sandbox::new();
    let mut quiet = sandbox.server(&["--logging", "--name", "quiet"]);
    quiet["logLevel"] = json!("warning");
    let mut bad = sandbox.server(&["--logging"]);
    bad["logLevel"] = json!("loud");
    sandbox.write_user(json!({
        "quiet": quiet,
        "plain": sandbox.server(&["--logging", "--name", "plain"]),
        "silent": sandbox.server(&["--name", "silent"]),
        "bad": bad,
    }));
    let manager = sandbox.manager();
    let problem = manager
        .snapshot()
        .server("bad")
        .and_then(|s| s.error.clone())
        .unwrap_or_default();
    assert!(
        problem.contains("mcpServers.bad.logLevel: \"loud\" is not a log level"),
        "{problem}"
    );
    for name in ["quiet", "plain", "silent"] {
        manager.connect(name).await.unwrap();
    }
    let levels = || -> Vec<String> {
        let mut levels: Vec<String> = sandbox
            .events()
            .iter()
            .filter(|line| line.starts_with("set-level "))
            .map(|line| line.rsplit(' ').next().unwrap().to_string())
            .collect();
        levels.sort();
        levels
    };
    assert!(eventually(std::time::Duration::from_secs(10), || levels().len() >= 2).await);
    // Any stray third one (the server without the capability) would have come by now.
    manager
        .call_tool(
            "mcp__silent__echo",
            json!({"text": "x"}).as_object().cloned(),
        )
        .await
        .unwrap();
    assert_eq!(levels(), ["info", "warning"]);
    // The test server then logs from the level it was given: the log holds what it sent.
    let messages = |name: &str| -> Vec<String> {
        manager
            .logs(name)
            .entries
            .iter()
            .filter(|e| e.source == wave_mcp_manager::logs::LogSource::Message)
            .map(|e| format!("{} {}", e.level.as_deref().unwrap_or(""), e.text))
            .collect()
    };
    assert!(
        eventually(std::time::Duration::from_secs(10), || messages("quiet")
            .len()
            == 2
            && messages("plain").len() == 3)
        .await,
        "{:?} {:?}",
        messages("quiet"),
        messages("plain")
    );
    assert_eq!(
        messages("quiet"),
        ["warning the cache is cold", "error one request failed"]
    );
    assert!(messages("silent").is_empty());
    manager.cleanup().await;
}
