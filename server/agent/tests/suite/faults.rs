//! The agent's part of the fault and bad-input suite (issue 8): load through the execution
//! funnel, and secrets that must not reach the model or the transcript.

use std::sync::Arc;

use serde_json::{Map, Value, json};
use wave_mcp_agent::Status;

use super::support::*;

// TOOL-3, TOOL-9: 1,000 tool calls at once across 10 servers (eight stdio, two Streamable HTTP)
// through one agent's execution funnel (`Agent::execute_tool` takes `&self`, so they really run
// concurrently, from many tasks): every result is the one of its own call (each echoes a text
// unique to its call), none is an error, and each server saw exactly its 100 calls.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn load_1000_concurrent_tool_calls_across_10_servers_each_get_their_own_result() {
    const SERVERS: usize = 10;
    const CALLS: usize = 1000;
    let sandbox = Sandbox::new();
    let model = FakeModel::start(vec![]).await;
    let http: Vec<HttpServer> = (8..SERVERS)
        .map(|i| {
            let events = sandbox.events_path(&format!("s{i}")).display().to_string();
            HttpServer::start(&["--tools", "echo", "--event-log", &events])
        })
        .collect();
    let mut servers = Map::new();
    for i in 0..SERVERS {
        let entry = match i {
            0..8 => sandbox.server(&format!("s{i}"), &["--tools", "echo"]),
            _ => json!({ "type": "http", "url": http[i - 8].url }),
        };
        servers.insert(format!("s{i}"), entry);
    }
    let agent = Arc::new(sandbox.agent(Value::Object(servers), &model));
    for i in 0..SERVERS {
        agent.connect_mcp_server(&format!("s{i}")).await.unwrap();
        assert_eq!(status(&agent, &format!("s{i}")), Status::Connected);
    }

    let mut rng = Rng::new(faults_seed());
    let calls: Vec<(String, String)> = (0..CALLS)
        .map(|i| {
            let tool = format!("mcp__s{}__echo", i % SERVERS);
            (tool, format!("call {i} {:016x} ✓", rng.next_u64()))
        })
        .collect();
    let tasks: Vec<_> = calls
        .iter()
        .cloned()
        .map(|(tool, text)| {
            let agent = agent.clone();
            tokio::spawn(async move {
                let mut arguments = Map::new();
                arguments.insert("text".into(), Value::String(text));
                agent.execute_tool(&tool, arguments).await
            })
        })
        .collect();
    let mut wrong = Vec::new();
    for ((tool, text), task) in calls.iter().zip(tasks) {
        let outcome = task.await.expect("the call's task").expect("execute_tool");
        if outcome.is_error || outcome.text != *text {
            wrong.push(format!("{tool}({text:?}) → {outcome:?}"));
        }
    }
    assert!(
        wrong.is_empty(),
        "{} wrong results:\n{}",
        wrong.len(),
        wrong.join("\n")
    );
    for i in 0..SERVERS {
        let seen = sandbox.calls(&format!("s{i}")).len();
        assert_eq!(seen, CALLS / SERVERS, "server s{i} saw {seen} calls");
    }
    let mut agent = Arc::into_inner(agent).expect("every task has ended");
    agent.destroy().await;
    drop(http);
    sandbox.assert_no_process_left().await;
}

// SEC-1: env and header values (literal and expanded from the environment) never reach the
// model's requests (tool declarations, announcements) or the transcript, even when the server
// is used in a turn.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn secrets_never_reach_the_model_or_the_transcript() {
    let secret = format!(
        "agent-secret-{:x}",
        Rng::new(faults_seed() ^ 0x77).next_u64()
    );
    let literal = format!(
        "agent-literal-{:x}",
        Rng::new(faults_seed() ^ 0x78).next_u64()
    );
    // SAFETY: set before any thread of this test reads the environment; the name is unique to
    // this test.
    unsafe { std::env::set_var("WAVE_AGENT_TEST_SECRET", &secret) };
    let sandbox = Sandbox::new();
    let http = HttpServer::start(&["--require-header", &format!("X-Key:{secret}")]);
    let mut stdio =
        sandbox.server_with_instructions("s", "Use the echo tool.", &["--tools", "echo"]);
    stdio["env"] = json!({ "TOKEN": "${WAVE_AGENT_TEST_SECRET}", "LITERAL": literal });
    let remote = json!({
        "type": "http",
        "url": http.url,
        "headers": { "X-Key": "${WAVE_AGENT_TEST_SECRET}", "X-Literal": literal },
    });
    let model = FakeModel::start(vec![
        call("mcp__s__echo", json!({ "text": "one" })),
        call("mcp__r__echo", json!({ "text": "two" })),
        say("done"),
    ])
    .await;
    let mut agent = sandbox.agent(json!({ "s": stdio, "r": remote }), &model);
    let report = agent.send_message("use both").await.unwrap();
    assert_eq!(report.dialed, 2);
    assert_eq!(report.tool_calls.len(), 2);
    assert!(
        report.tool_calls.iter().all(|c| !c.outcome.is_error),
        "{report:?}"
    );
    let transcript_path = agent.transcript_path().to_path_buf();
    agent.destroy().await;
    let requests = serde_json::to_string(&model.requests()).unwrap();
    let transcript = std::fs::read_to_string(transcript_path).unwrap();
    for (place, text) in [
        ("the model requests", &requests),
        ("the transcript", &transcript),
    ] {
        for value in [&secret, &literal] {
            assert!(!text.contains(value.as_str()), "{place} show {value}");
        }
    }
}
