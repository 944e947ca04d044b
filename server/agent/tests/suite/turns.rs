//! Turns: on-demand dial inside the first turn, tool calls through the funnel, results, routing,
//! permissions in flat mode, the transcript (LAZY-*, TOOL-*, CACHE-7).

use std::time::Duration;

use serde_json::json;
use wave_mcp_agent::{Agent, AgentError, AgentOptions, ModelSettings, Role, Status};

use super::support::*;

// LAZY-1, LAZY-2, TOOL-1, TOOL-3, LAZY-3, LAZY-9: a fresh agent spawns nothing; its first
// message dials every server, the very first model request already lists their tools, and the
// model's call reaches the right server in the same turn. The next turn dials nothing.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn lazy_2_tool_3_first_message_lists_and_calls_mcp_tools_in_the_same_turn() {
    let sandbox = Sandbox::new();
    let model = FakeModel::start(vec![
        call("mcp__a__echo", json!({ "text": "hello from a" })),
        say("a said hello"),
        say("second answer"),
    ])
    .await;
    let servers = json!({
        "a": sandbox.server("a", &["--tools", "echo,add"]),
        "b": sandbox.server("b", &["--tools", "echo"]),
    });
    let mut agent = sandbox.agent(servers, &model);
    // LAZY-1: nothing runs, nothing is pending (the sync point), everything is listed.
    assert_eq!(agent.manager().background_tasks(), 0);
    assert_eq!(sandbox.live_processes(), Vec::<u32>::new());
    assert!(
        agent
            .get_mcp_servers()
            .unwrap()
            .iter()
            .all(|s| s.status == Status::Disconnected)
    );

    let report = agent.send_message("please echo").await.unwrap();
    assert_eq!(report.dialed, 2);
    assert_eq!(report.text, "a said hello");
    assert_eq!(report.rounds, 2);
    assert_eq!(report.tool_calls.len(), 1);
    assert_eq!(report.tool_calls[0].outcome.text, "hello from a");
    assert!(!report.tool_calls[0].outcome.is_error);

    let first = model.request(0);
    assert_eq!(first["model"], "fake-model");
    let mut names = declared(&first);
    names.sort();
    assert_eq!(names, ["mcp__a__add", "mcp__a__echo", "mcp__b__echo"]);
    let messages = first["messages"].as_array().unwrap();
    assert_eq!(messages.len(), 2);
    assert_eq!(
        messages[1],
        json!({ "role": "user", "content": "please echo" })
    );
    let second = model.request(1);
    assert_eq!(tool_results(&second), ["hello from a"]);
    assert_eq!(
        second["messages"][2]["tool_calls"][0]["function"]["name"],
        "mcp__a__echo"
    );
    assert_eq!(
        second["messages"][3]["tool_call_id"],
        second["messages"][2]["tool_calls"][0]["id"]
    );
    assert_eq!(sandbox.calls("a"), ["echo"]);
    assert_eq!(sandbox.calls("b"), Vec::<String>::new());

    // LAZY-3, LAZY-9: connected servers are reused; nothing to dial, nothing awaited.
    let report = agent.send_message("again").await.unwrap();
    assert_eq!(report.dialed, 0);
    assert_eq!(report.text, "second answer");
    assert_eq!((sandbox.starts("a"), sandbox.starts("b")), (1, 1));
    agent.destroy().await;
}

// LAZY-9: an agent without MCP servers sends no tools and never dials.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn lazy_9_session_without_servers_has_no_tools_and_no_dial() {
    let sandbox = Sandbox::new();
    let model = FakeModel::start(vec![say("hi")]).await;
    let mut agent = sandbox.agent(json!({}), &model);
    let report = agent.send_message("hello").await.unwrap();
    assert_eq!(report.dialed, 0);
    assert_eq!(
        agent.manager().background_tasks(),
        0,
        "LAZY-9: the turn left work behind"
    );
    assert!(model.request(0).get("tools").is_none());
    assert_eq!(report.meta_messages, Vec::<String>::new());
    agent.destroy().await;
}

// TOOL-5, TOOL-1: flat declarations carry the cleaned schema and the description.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tool_5_flat_declarations_carry_cleaned_schemas() {
    let sandbox = Sandbox::new();
    let model = FakeModel::start(vec![say("ok")]).await;
    let mut agent = sandbox.agent(
        json!({ "s": sandbox.server("s", &["--tools", "schema,echo"]) }),
        &model,
    );
    agent.send_message("hi").await.unwrap();
    let tools = model.request(0)["tools"].clone();
    let schema = tools
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["function"]["name"] == "mcp__s__schema")
        .unwrap();
    let text = schema.to_string();
    for key in ["$schema", "exclusiveMinimum", "exclusiveMaximum"] {
        assert!(!text.contains(key), "{key} left in {text}");
    }
    assert_eq!(schema["type"], "function");
    assert_eq!(
        schema["function"]["parameters"]["properties"]["limit"]["type"],
        "integer"
    );
    let echo = tools
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["function"]["name"] == "mcp__s__echo")
        .unwrap();
    assert_eq!(echo["function"]["description"], "Echo the given text back.");
    assert_eq!(echo["function"]["parameters"]["required"], json!(["text"]));
    agent.destroy().await;
}

// CACHE-7: tools known only from the snapshot cache are shown in lists but never declared.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cache_7_cached_tools_are_never_declared() {
    let sandbox = Sandbox::new();
    let model = FakeModel::start(vec![say("first"), say("second")]).await;
    let servers = json!({ "c": sandbox.server("c", &["--tools", "echo,add"]) });
    let mut first = sandbox.agent(servers.clone(), &model);
    first.send_message("fill the cache").await.unwrap();
    first.destroy().await;
    let cached = eventually(Duration::from_secs(10), || {
        std::fs::read_to_string(sandbox.home.join(".wave/mcp-tools-cache.json"))
            .is_ok_and(|t| t.contains("\"add\""))
    })
    .await;
    assert!(cached, "the first agent never wrote the tool cache");

    let mut second = Agent::create(AgentOptions {
        session_id: Some("second".into()),
        ..sandbox.options(servers, &model)
    })
    .unwrap();
    second.disconnect_mcp_server("c").await.unwrap();
    let listed = second.get_mcp_servers().unwrap();
    assert!(listed[0].tools_from_cache, "{listed:?}");
    assert_eq!(listed[0].tools.len(), 2);
    second.send_message("what tools?").await.unwrap();
    assert_eq!(declared(&model.request(1)), Vec::<String>::new());
    assert_eq!(sandbox.starts("c"), 1, "LAZY-6: not dialed again");
    second.destroy().await;
}

// TOOL-8: text parts joined with newlines, images kept with their MIME type (and sent as
// image parts to a vision model), resources as [Resource: uri]; a failing call comes back as an
// error result naming server and tool, and the turn goes on.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tool_8_results_reach_the_model_faithfully_and_failures_do_not_end_the_turn() {
    let sandbox = Sandbox::new();
    let model = FakeModel::start(vec![
        call("mcp__a__mixed", json!({})),
        call("mcp__a__fail", json!({})),
        call("mcp__a__nope", json!({})),
        call("mcp__a__crash", json!({})),
        say("all done"),
    ])
    .await;
    let mut options = sandbox.options(json!({ "a": sandbox.server("a", &[]) }), &model);
    options.model = ModelSettings {
        vision: true,
        ..options.model
    };
    let mut agent = Agent::create(options).unwrap();
    let report = agent.send_message("try everything").await.unwrap();
    assert_eq!(report.text, "all done");
    let outcomes: Vec<_> = report.tool_calls.iter().map(|c| &c.outcome).collect();

    assert_eq!(
        outcomes[0].text,
        "first line\n[Image: image/png]\n[Resource: file:///tmp/wave-test.txt]\nsecond line"
    );
    assert!(!outcomes[0].is_error);
    assert_eq!(outcomes[0].images.len(), 1);
    assert_eq!(outcomes[0].images[0].mime_type, "image/png");
    assert_eq!(outcomes[0].images[0].data, "iVBORw0KGgo=");
    let after_mixed = model.request(1);
    let messages = after_mixed["messages"].as_array().unwrap();
    let last = messages.last().unwrap();
    assert_eq!(last["role"], "user");
    assert_eq!(last["content"][1]["type"], "image_url");
    assert_eq!(
        last["content"][1]["image_url"]["url"],
        "data:image/png;base64,iVBORw0KGgo="
    );

    assert!(outcomes[1].is_error);
    assert_eq!(
        outcomes[1].text,
        "error: tool \"fail\" of MCP server \"a\" returned an error:\nthis tool always fails"
    );
    assert!(outcomes[2].is_error);
    assert!(
        outcomes[2].text.contains("mcp__a__nope"),
        "{}",
        outcomes[2].text
    );
    assert!(outcomes[3].is_error);
    assert!(
        outcomes[3]
            .text
            .contains("tool \"crash\" of MCP server \"a\""),
        "{}",
        outcomes[3].text
    );
    let results = tool_results(&model.last_request());
    assert_eq!(results.len(), 4);
    assert_eq!(results[1], outcomes[1].text);
    agent.destroy().await;
}

// TOOL-9, TOOL-6: two servers with the same tool name are routed by full name.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tool_9_same_tool_name_on_two_servers_is_routed_by_full_name() {
    let sandbox = Sandbox::new();
    let model = FakeModel::start(vec![
        Step::Call(vec![
            ("mcp__b__pid".into(), json!({})),
            ("mcp__a__pid".into(), json!({})),
        ]),
        say("done"),
    ])
    .await;
    let servers = json!({
        "a": sandbox.server_with_pids("a", &["--tools", "pid"]),
        "b": sandbox.server_with_pids("b", &["--tools", "pid"]),
    });
    let mut agent = sandbox.agent(servers, &model);
    let report = agent.send_message("whose pid?").await.unwrap();
    assert_eq!(declared(&model.request(0)), ["mcp__a__pid", "mcp__b__pid"]);
    let pid_a = read_pids(&sandbox.pid_file("a"))[0].to_string();
    let pid_b = read_pids(&sandbox.pid_file("b"))[0].to_string();
    assert_ne!(pid_a, pid_b);
    assert_eq!(report.tool_calls[0].outcome.text, pid_b);
    assert_eq!(report.tool_calls[1].outcome.text, pid_a);
    assert_eq!(
        (sandbox.calls("a"), sandbox.calls("b")),
        (vec!["pid".to_string()], vec!["pid".to_string()])
    );
    agent.destroy().await;
}

// Permissions (flat): a denied tool is not declared, and calling it anyway is refused with a
// clear message; it never reaches its server. Rules come from options, the project's and the
// user's settings files.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tool_1_permissions_denied_tool_is_neither_declared_nor_callable_flat() {
    let sandbox = Sandbox::new();
    sandbox.write_settings(
        false,
        json!({ "permissions": { "deny": ["mcp__a__echo"] } }),
    );
    sandbox.write_settings(true, json!({ "permissions": { "deny": ["mcp__b__*"] } }));
    let model = FakeModel::start(vec![
        call("mcp__a__echo", json!({ "text": "x" })),
        call("mcp__b__echo", json!({ "text": "x" })),
        call("mcp__c__add", json!({ "a": 1, "b": 2 })),
        say("refused"),
    ])
    .await;
    let servers = json!({
        "a": sandbox.server("a", &["--tools", "echo,add"]),
        "b": sandbox.server("b", &["--tools", "echo"]),
        "c": sandbox.server("c", &["--tools", "echo,add"]),
    });
    let mut options = sandbox.options(servers, &model);
    options.permissions.deny.push("mcp__c__echo".into());
    let mut agent = Agent::create(options).unwrap();
    let report = agent.send_message("call denied tools").await.unwrap();
    assert_eq!(declared(&model.request(0)), ["mcp__a__add", "mcp__c__add"]);
    let a = &report.tool_calls[0].outcome;
    assert!(a.is_error);
    assert_eq!(
        a.text,
        "permission denied: the tool \"mcp__a__echo\" may not be used (it matches the deny rule \"mcp__a__echo\"); do not call it again"
    );
    assert!(report.tool_calls[1].outcome.text.contains("\"mcp__b__*\""));
    assert_eq!(report.tool_calls[2].outcome.text, "3");
    assert_eq!(sandbox.calls("a"), Vec::<String>::new());
    assert_eq!(sandbox.calls("b"), Vec::<String>::new());
    assert_eq!(sandbox.calls("c"), ["add"]);
    agent.destroy().await;
}

// The transcript: JSONL under <home>/.wave/sessions, one message per line with role, content,
// tool calls, isMeta and a timestamp; a resumed agent reads it back.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn transcript_is_jsonl_and_resumes() {
    let sandbox = Sandbox::new();
    let model = FakeModel::start(vec![
        call("mcp__a__echo", json!({ "text": "t" })),
        say("done"),
    ])
    .await;
    let servers =
        json!({ "a": sandbox.server("a", &["--tools", "echo", "--instructions", "be nice"]) });
    let mut agent = sandbox.agent(servers.clone(), &model);
    agent.send_message("hi").await.unwrap();
    let path = sandbox.home.join(".wave/sessions/test-session.jsonl");
    assert_eq!(agent.transcript_path(), path);
    let lines = read_transcript(&path);
    let roles: Vec<_> = lines.iter().map(|l| l["role"].as_str().unwrap()).collect();
    assert_eq!(roles, ["user", "user", "assistant", "tool", "assistant"]);
    let meta: Vec<_> = lines
        .iter()
        .map(|l| l["isMeta"].as_bool().unwrap())
        .collect();
    assert_eq!(meta, [false, true, false, false, false]);
    assert!(lines.iter().all(|l| l["timestamp"].is_string()));
    assert_eq!(lines[2]["toolCalls"][0]["name"], "mcp__a__echo");
    assert_eq!(lines[3]["toolCallId"], lines[2]["toolCalls"][0]["id"]);
    assert_eq!(lines[3]["content"], "t");
    let history = agent.history().to_vec();
    agent.destroy().await;

    let resumed = sandbox.agent(servers, &model);
    assert_eq!(resumed.history(), history.as_slice());
    assert_eq!(resumed.history()[1].role, Role::User);
}

// A model that never stops calling tools is stopped at the round cap.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn turns_stop_at_the_round_cap() {
    let sandbox = Sandbox::new();
    let model = FakeModel::start(vec![
        call("mcp__x__y", json!({})),
        call("mcp__x__y", json!({})),
        call("mcp__x__y", json!({})),
    ])
    .await;
    let mut agent = Agent::create(AgentOptions {
        max_rounds: Some(2),
        ..sandbox.options(json!({}), &model)
    })
    .unwrap();
    let error = agent.send_message("loop").await.unwrap_err();
    assert!(matches!(error, AgentError::RoundLimit(2)), "{error}");
    assert_eq!(model.requests().len(), 2);
    agent.destroy().await;
}

// TOOL-7: while an SSE server is reconnecting, its previous tools stay declared, no offline
// notice is written, and a call made meanwhile waits for the reconnect (or fails saying the
// server is reconnecting) — never "no such tool".
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tool_7_reconnecting_server_keeps_its_tools_and_calls_wait() {
    let sandbox = Sandbox::new();
    let http = HttpServer::start_sse(&["--tools", "echo", "--instructions", "sse rules"]);
    let model = FakeModel::start(vec![
        say("connected"),
        call("mcp__s__echo", json!({ "text": "during reconnect" })),
        say("done"),
    ])
    .await;
    let mut agent = sandbox.agent(json!({ "s": { "type": "sse", "url": http.url } }), &model);
    agent.send_message("connect").await.unwrap();
    assert_eq!(status(&agent, "s"), Status::Connected);
    http.control("refuse?count=3");
    http.control("drop");
    wait_for_status(&agent, "s", Status::Reconnecting).await;

    let report = agent.send_message("call it").await.unwrap();
    assert_eq!(declared(&model.request(1)), ["mcp__s__echo"]);
    let outcome = &report.tool_calls[0].outcome;
    assert!(
        outcome.text == "during reconnect" || outcome.text.contains("reconnecting"),
        "{outcome:?}"
    );
    assert!(!outcome.text.contains("no MCP tool"), "{outcome:?}");
    assert_eq!(offline(agent.history()), Vec::<String>::new());
    if outcome.text == "during reconnect" {
        // INS-10: the call ran on the new connection, which was announced before the next request.
        assert_eq!(announced(agent.history()), ["s", "s"]);
        assert_eq!(occurrences(&model.last_request(), "sse rules"), 2);
    }
    agent.destroy().await;
}
