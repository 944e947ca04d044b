//! Live turns at the agent (LONG-1): with a streaming model and with an endpoint that does not
//! stream, the turn's events come in order — text deltas, then each message as it is complete
//! (the assistant message with its tool call before the tool result) — and the history and the
//! transcript hold complete messages only.

use serde_json::json;
use wave_mcp_agent::{Agent, Message, Role, TurnEvent, TurnHooks};

use super::support::*;

async fn live_turn(agent: &mut Agent, text: &str) -> Vec<TurnEvent> {
    let (events, mut received) = tokio::sync::mpsc::unbounded_channel();
    let hooks = TurnHooks {
        events: Some(events),
        ..TurnHooks::default()
    };
    agent.send_message_live(text, hooks).await.unwrap();
    let mut all = Vec::new();
    while let Ok(event) = received.try_recv() {
        all.push(event);
    }
    all
}

fn messages(events: &[TurnEvent]) -> Vec<Message> {
    events
        .iter()
        .filter_map(|e| match e {
            TurnEvent::Message(m) => Some(m.clone()),
            _ => None,
        })
        .collect()
}

fn streamed(events: &[TurnEvent]) -> String {
    events
        .iter()
        .filter_map(|e| match e {
            TurnEvent::Delta(text) => Some(text.as_str()),
            _ => None,
        })
        .collect()
}

/// The roles of the events, `delta` for text: the order the host sees.
fn order(events: &[TurnEvent]) -> Vec<&'static str> {
    let mut order: Vec<&str> = Vec::new();
    for event in events {
        let name = match event {
            TurnEvent::Delta(_) => "delta",
            TurnEvent::Message(m) if m.is_meta => continue,
            TurnEvent::Message(m) => match m.role {
                Role::User => "user",
                Role::Assistant if m.tool_calls.is_empty() => "answer",
                Role::Assistant => "call",
                Role::Tool => "result",
            },
            TurnEvent::Progress { .. } => "progress",
        };
        if order.last() != Some(&name) || name != "delta" {
            order.push(name);
        }
    }
    order
}

async fn check(model: FakeModel, streams: bool) {
    let sandbox = Sandbox::new();
    let mut agent = sandbox.agent(
        json!({ "a": sandbox.server("a", &["--tools", "echo"]) }),
        &model,
    );
    let events = live_turn(&mut agent, "echo it").await;
    assert_eq!(
        order(&events),
        ["user", "call", "result", "delta", "answer"],
        "{events:#?}"
    );
    assert_eq!(streamed(&events), "the echo said streamed words");
    if streams {
        let deltas = events
            .iter()
            .filter(|e| matches!(e, TurnEvent::Delta(_)))
            .count();
        assert!(deltas >= 5, "word by word: {events:#?}");
    }
    let sent = messages(&events);
    let history: Vec<Message> = agent.history().to_vec();
    assert_eq!(sent, history, "every message once, complete");
    let call = &history
        .iter()
        .find(|m| !m.tool_calls.is_empty())
        .unwrap()
        .tool_calls[0];
    assert_eq!(call.name, "mcp__a__echo");
    assert_eq!(
        call.arguments,
        json!({ "text": "streamed words" }).to_string()
    );
    let transcript = read_transcript(agent.transcript_path());
    assert_eq!(transcript.len(), history.len());
    agent.destroy().await;
}

// LONG-1: a streaming model; the tool call's arguments arrive in pieces and are assembled.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn long_1_streamed_turn_sends_each_message_when_complete() {
    let model = FakeModel::start(vec![
        call("mcp__a__echo", json!({ "text": "streamed words" })),
        say("the echo said streamed words"),
    ])
    .await;
    check(model, true).await;
}

// LONG-1: an endpoint that ignores `stream: true` and answers with JSON still works.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn long_1_a_non_streaming_endpoint_still_works() {
    let model = FakeModel::start_without_streaming(vec![
        call("mcp__a__echo", json!({ "text": "streamed words" })),
        say("the echo said streamed words"),
    ])
    .await;
    check(model, false).await;
}
