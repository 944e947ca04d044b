//! The scripted fake model every Rust suite uses: an OpenAI-compatible Chat Completions server
//! on 127.0.0.1 (axum) that answers from a script and records every request body. A request
//! with `stream: true` is answered as a `text/event-stream` of chunks (text word by word, tool
//! calls in pieces), optionally paced; [`FakeModel::start_without_streaming`] is an endpoint
//! that ignores `stream` and always answers with one JSON body, and [`FakeModel::saying`] one
//! that answers every request with the same text (the bench's model: no script to run out).
//! Each request's arrival is stamped before its body is read as JSON, for the bench's timings.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

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
    /// This answer, streamed with this pause before each chunk after the first.
    Paced(Duration, Box<Step>),
    /// Streams this text, then keeps the stream open without ending it (a model still
    /// generating, until the client goes away).
    Stall(String),
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

/// `step`, streamed with `ms` milliseconds before each chunk after the first.
pub fn paced(ms: u64, step: Step) -> Step {
    Step::Paced(Duration::from_millis(ms), Box::new(step))
}

/// Streams `text`, then never ends the answer.
pub fn stall(text: &str) -> Step {
    Step::Stall(text.to_string())
}

/// `Exec` with this script.
pub fn exec(script: &str) -> Step {
    call("Exec", json!({ "script": script }))
}

/// The tool names a Chat Completions request declares, in order (none without `tools`).
pub fn declared(request: &Value) -> Vec<String> {
    request["tools"]
        .as_array()
        .map(|tools| {
            tools
                .iter()
                .map(|t| t["function"]["name"].as_str().unwrap().to_string())
                .collect()
        })
        .unwrap_or_default()
}

struct FakeState {
    script: Mutex<VecDeque<Step>>,
    /// Every request body with the moment it arrived.
    requests: Mutex<Vec<(Instant, Value)>>,
    /// Answers `stream: true` with an event stream.
    streams: bool,
    /// The answer once the script is used up.
    otherwise: Step,
}

/// An OpenAI-compatible Chat Completions server on 127.0.0.1 that records every request body and
/// answers from a script; once the script is used up it answers "(script exhausted)" (or the
/// text of [`FakeModel::saying`]).
pub struct FakeModel {
    /// The base URL (`http://127.0.0.1:PORT/v1`).
    pub base_url: String,
    state: Arc<FakeState>,
    task: tokio::task::JoinHandle<()>,
}

impl FakeModel {
    pub async fn start(script: Vec<Step>) -> FakeModel {
        FakeModel::serve(script, true, say("(script exhausted)")).await
    }

    /// A model endpoint without streaming: `stream: true` is ignored, every answer is JSON.
    pub async fn start_without_streaming(script: Vec<Step>) -> FakeModel {
        FakeModel::serve(script, false, say("(script exhausted)")).await
    }

    /// A model endpoint without streaming that answers every request with `text`, however many
    /// there are.
    pub async fn saying(text: &str) -> FakeModel {
        FakeModel::serve(Vec::new(), false, say(text)).await
    }

    async fn serve(script: Vec<Step>, streams: bool, otherwise: Step) -> FakeModel {
        let state = Arc::new(FakeState {
            script: Mutex::new(script.into()),
            requests: Mutex::default(),
            streams,
            otherwise,
        });
        let router = Router::new()
            .route("/v1/chat/completions", post(answer))
            // A real model API takes requests far above axum's 2 MB default (the BUD-7 test's
            // last request carries some 800 search results).
            .layer(axum::extract::DefaultBodyLimit::max(64 << 20))
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
        let requests = self.state.requests.lock().unwrap();
        requests.iter().map(|(_, body)| body.clone()).collect()
    }

    /// How many requests have arrived: a cursor for [`FakeModel::arrivals_since`].
    pub fn received(&self) -> usize {
        self.state.requests.lock().unwrap().len()
    }

    /// The requests received from position `since` on, each with the moment it arrived.
    pub fn arrivals_since(&self, since: usize) -> Vec<(Instant, Value)> {
        let requests = self.state.requests.lock().unwrap();
        requests[since.min(requests.len())..].to_vec()
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
    let arrived = Instant::now();
    let request: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
    let number = {
        let mut requests = state.requests.lock().unwrap();
        requests.push((arrived, request));
        requests.len()
    };
    let mut step = state
        .script
        .lock()
        .unwrap()
        .pop_front()
        .unwrap_or_else(|| state.otherwise.clone());
    while let Step::After(pause, next) = step {
        tokio::time::sleep(pause).await;
        step = *next;
    }
    let streamed = request_streams(&state, number);
    if streamed {
        return stream(number, step).into_response();
    }
    let step = match step {
        Step::Paced(_, step) => *step,
        Step::Stall(text) => Step::Say(text),
        step => step,
    };
    let message = match step {
        Step::Say(text) => json!({ "role": "assistant", "content": text }),
        Step::After(..) | Step::Paced(..) | Step::Stall(_) => unreachable!("unwrapped above"),
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
        .into_response()
}

/// Whether request `number` asked for a stream and this model streams.
fn request_streams(state: &FakeState, number: usize) -> bool {
    let requests = state.requests.lock().unwrap();
    state.streams && requests[number - 1].1["stream"] == json!(true)
}

/// The answer as Chat Completions chunks (`data: {...}` events, then `data: [DONE]`).
fn stream(number: usize, step: Step) -> axum::response::Response {
    let (pace, step) = match step {
        Step::Paced(pace, step) => (pace, *step),
        step => (Duration::ZERO, step),
    };
    let chunk = |delta: Value| {
        let body = json!({
            "id": format!("chatcmpl-{number}"),
            "object": "chat.completion.chunk",
            "model": "fake",
            "choices": [{ "index": 0, "delta": delta, "finish_reason": null }],
        });
        format!("data: {body}\n\n")
    };
    let mut chunks = vec![chunk(json!({ "role": "assistant", "content": "" }))];
    let mut stall = false;
    match step {
        Step::Say(text) => chunks.extend(
            text.split_inclusive(' ')
                .map(|word| chunk(json!({ "content": word }))),
        ),
        Step::Stall(text) => {
            stall = true;
            chunks.extend(
                text.split_inclusive(' ')
                    .map(|word| chunk(json!({ "content": word }))),
            );
        }
        Step::Call(calls) => {
            for (i, (name, arguments)) in calls.iter().enumerate() {
                let text = arguments.to_string();
                let (head, tail) = text.split_at(text.len() / 2);
                chunks.push(chunk(json!({ "tool_calls": [{
                    "index": i, "id": format!("call_{number}_{i}"), "type": "function",
                    "function": { "name": name, "arguments": "" },
                }]})));
                for part in [head, tail] {
                    chunks.push(chunk(json!({ "tool_calls": [{
                        "index": i, "function": { "arguments": part },
                    }]})));
                }
            }
        }
        Step::After(..) | Step::Paced(..) => unreachable!("unwrapped by the caller"),
    }
    if !stall {
        chunks.push("data: [DONE]\n\n".to_string());
    }
    let (sender, receiver) = tokio::sync::mpsc::channel::<String>(1);
    tokio::spawn(async move {
        for (i, chunk) in chunks.into_iter().enumerate() {
            if i > 0 && !pace.is_zero() {
                tokio::time::sleep(pace).await;
            }
            if sender.send(chunk).await.is_err() {
                return;
            }
        }
        if stall {
            // Open until the client hangs up.
            sender.closed().await;
        }
    });
    let body = futures::stream::unfold(receiver, |mut receiver| async move {
        let chunk = receiver.recv().await?;
        Some((Ok::<_, std::convert::Infallible>(chunk), receiver))
    });
    (
        [(header::CONTENT_TYPE, "text/event-stream")],
        axum::body::Body::from_stream(body),
    )
        .into_response()
}
