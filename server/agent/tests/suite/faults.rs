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

/// A Chat Completions endpoint on 127.0.0.1 that answers the first request of each connection
/// (keeping the connection alive) and closes the connection, unanswered, as soon as a second
/// request arrives on it: what a model endpoint does when its idle keep-alive timer fires the
/// moment the client reuses the connection. It counts the requests it read.
async fn endpoint_closing_reused_connections() -> (String, Arc<std::sync::atomic::AtomicUsize>) {
    use std::sync::atomic::{AtomicUsize, Ordering};
    use tokio::io::{AsyncReadExt, AsyncWriteExt};

    /// Reads one request (head and `content-length` body); `false` when the peer closed.
    async fn read_request(socket: &mut tokio::net::TcpStream, buffer: &mut Vec<u8>) -> bool {
        loop {
            if let Some(end) = buffer.windows(4).position(|w| w == b"\r\n\r\n") {
                let head = String::from_utf8_lossy(&buffer[..end]).to_ascii_lowercase();
                let length: usize = head
                    .lines()
                    .find_map(|l| l.strip_prefix("content-length:"))
                    .map_or(0, |v| v.trim().parse().unwrap());
                if buffer.len() >= end + 4 + length {
                    buffer.drain(..end + 4 + length);
                    return true;
                }
            }
            let mut chunk = [0u8; 4096];
            match socket.read(&mut chunk).await {
                Ok(0) | Err(_) => return false,
                Ok(n) => buffer.extend_from_slice(&chunk[..n]),
            }
        }
    }

    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/v1", listener.local_addr().unwrap());
    let requests = Arc::new(AtomicUsize::new(0));
    let counted = requests.clone();
    tokio::spawn(async move {
        while let Ok((mut socket, _)) = listener.accept().await {
            let counted = counted.clone();
            tokio::spawn(async move {
                let mut buffer = Vec::new();
                if !read_request(&mut socket, &mut buffer).await {
                    return;
                }
                let n = counted.fetch_add(1, Ordering::SeqCst) + 1;
                let body = json!({ "choices": [{ "index": 0, "finish_reason": "stop",
                    "message": { "role": "assistant", "content": format!("answer {n}") } }] })
                .to_string();
                let reply = format!(
                    "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\nconnection: keep-alive\r\ncontent-length: {}\r\n\r\n{body}",
                    body.len()
                );
                socket.write_all(reply.as_bytes()).await.unwrap();
                // The client reuses the connection: its request is read, then the connection
                // closes without an answer.
                if read_request(&mut socket, &mut buffer).await {
                    counted.fetch_add(1, Ordering::SeqCst);
                }
            });
        }
    });
    (url, requests)
}

// A model request that goes out on a keep-alive connection the endpoint closes under it gets
// no answer through no fault of the model: it is sent again on a new connection, and the turn
// goes on. Without that, the user's second message ends in "connection closed before message
// completed" whenever it is sent as the endpoint's idle timer fires (LONG-1: every turn gets
// its answer).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn long_1_a_model_request_lost_on_a_closing_keep_alive_connection_is_sent_again() {
    let sandbox = Sandbox::new();
    let model = FakeModel::start(vec![]).await;
    let (url, requests) = endpoint_closing_reused_connections().await;
    let mut options = sandbox.options(json!({}), &model);
    options.model.base_url = Some(url);
    let mut agent = wave_mcp_agent::Agent::create(options).unwrap();

    let first = agent.send_message("hello").await.unwrap();
    assert_eq!(first.text, "answer 1");
    let second = agent.send_message("and again").await.unwrap();
    // The second request was read on the old connection and lost (request 2), then sent again
    // on a new one and answered (request 3).
    assert_eq!(second.text, "answer 3");
    assert_eq!(requests.load(std::sync::atomic::Ordering::SeqCst), 3);
}
