//! The scripted fake model every Rust suite uses: an OpenAI-compatible Chat Completions server
//! on 127.0.0.1 (axum) that answers from a script and records every request body.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::Router;
use axum::body::Bytes;
use axum::extract::State;
use axum::http::header;
use axum::response::IntoResponse;
use axum::routing::post;
use serde_json::{Value, json};

/// One scripted model answer.
#[derive(Debug, Clone)]
pub enum Step {
    /// Answer with this text and no tool call (ends the turn).
    Say(String),
    /// Call these tools: `(name, arguments)`.
    Call(Vec<(String, Value)>),
    /// This answer, sent only after a pause (a slow model: what runs meanwhile shows).
    After(Duration, Box<Step>),
}

pub fn say(text: &str) -> Step {
    Step::Say(text.to_string())
}

pub fn call(name: &str, arguments: Value) -> Step {
    Step::Call(vec![(name.to_string(), arguments)])
}

/// `step`, answered `ms` milliseconds late.
pub fn after(ms: u64, step: Step) -> Step {
    Step::After(Duration::from_millis(ms), Box::new(step))
}

/// `Exec` with this script.
pub fn exec(script: &str) -> Step {
    call("Exec", json!({ "script": script }))
}

#[derive(Default)]
struct FakeState {
    script: Mutex<VecDeque<Step>>,
    requests: Mutex<Vec<Value>>,
}

/// An OpenAI-compatible Chat Completions server on 127.0.0.1 that records every request body and
/// answers from a script; once the script is used up it answers "(script exhausted)".
pub struct FakeModel {
    /// The base URL (`http://127.0.0.1:PORT/v1`).
    pub base_url: String,
    state: Arc<FakeState>,
    task: tokio::task::JoinHandle<()>,
}

impl FakeModel {
    pub async fn start(script: Vec<Step>) -> FakeModel {
        let state = Arc::new(FakeState::default());
        state.script.lock().unwrap().extend(script);
        let router = Router::new()
            .route("/v1/chat/completions", post(answer))
            .with_state(state.clone());
        let listener = tokio::net::TcpListener::bind(("127.0.0.1", 0))
            .await
            .expect("bind the fake model");
        let port = listener.local_addr().unwrap().port();
        let task = tokio::spawn(async move {
            let _ = axum::serve(listener, router).await;
        });
        FakeModel {
            base_url: format!("http://127.0.0.1:{port}/v1"),
            state,
            task,
        }
    }

    /// Every request body received, in order.
    pub fn requests(&self) -> Vec<Value> {
        self.state.requests.lock().unwrap().clone()
    }

    pub fn request(&self, index: usize) -> Value {
        self.requests()
            .get(index)
            .cloned()
            .unwrap_or_else(|| panic!("no request {index}"))
    }

    pub fn last_request(&self) -> Value {
        self.requests().last().cloned().expect("no request yet")
    }
}

impl Drop for FakeModel {
    fn drop(&mut self) {
        self.task.abort();
    }
}

async fn answer(State(state): State<Arc<FakeState>>, body: Bytes) -> impl IntoResponse {
    let request: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
    let number = {
        let mut requests = state.requests.lock().unwrap();
        requests.push(request);
        requests.len()
    };
    let mut step = state
        .script
        .lock()
        .unwrap()
        .pop_front()
        .unwrap_or_else(|| say("(script exhausted)"));
    while let Step::After(pause, next) = step {
        tokio::time::sleep(pause).await;
        step = *next;
    }
    let message = match step {
        Step::Say(text) => json!({ "role": "assistant", "content": text }),
        Step::After(..) => unreachable!("unwrapped above"),
        Step::Call(calls) => json!({
            "role": "assistant",
            "content": null,
            "tool_calls": calls.iter().enumerate().map(|(i, (name, arguments))| json!({
                "id": format!("call_{number}_{i}"),
                "type": "function",
                "function": { "name": name, "arguments": arguments.to_string() },
            })).collect::<Vec<_>>(),
        }),
    };
    let body = json!({
        "id": format!("chatcmpl-{number}"),
        "object": "chat.completion",
        "model": "fake",
        "choices": [{ "index": 0, "message": message, "finish_reason": "stop" }],
    });
    (
        [(header::CONTENT_TYPE, "application/json")],
        body.to_string(),
    )
}
