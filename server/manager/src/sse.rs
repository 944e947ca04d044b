//! The legacy HTTP+SSE client transport (MCP 2024-11-05), which rmcp 3 no longer ships: a GET
//! opens an event stream whose first `endpoint` event names where our messages are POSTed; the
//! server's messages arrive as `message` events on that stream.

use std::error::Error as StdError;
use std::sync::{Arc, Mutex};

use futures::StreamExt;
use futures::stream::BoxStream;
use reqwest::header::{ACCEPT, CONTENT_TYPE, HeaderMap, HeaderValue};
use rmcp::RoleClient;
use rmcp::model::{ClientJsonRpcMessage, ServerJsonRpcMessage};
use rmcp::transport::Transport;
use sse_stream::{Sse, SseStream};
use tokio::sync::{mpsc, oneshot};
use url::Url;

use crate::error::DialError;
use crate::headers::header_map;

/// Server messages read ahead of the rmcp service.
const INCOMING_BUFFER: usize = 64;

const EVENT_STREAM: &str = "text/event-stream";

type Events = BoxStream<'static, Result<Sse, sse_stream::Error>>;

/// A failed POST. One line, never holding a header value or the URL (either may be a secret).
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub(crate) struct SseError(String);

/// Whether the event stream is still open, and who waits to hear that it dropped.
enum StreamState {
    Open(Vec<oneshot::Sender<String>>),
    /// Ended or failed on its own; the reason.
    Dropped(String),
    /// Closed by us: nobody is told.
    Closed,
}

/// One legacy SSE session: the open GET stream (read by a background task) and the POST endpoint.
pub(crate) struct SseTransport {
    client: reqwest::Client,
    endpoint: Url,
    headers: HeaderMap,
    incoming: mpsc::Receiver<ServerJsonRpcMessage>,
    reader: tokio::task::AbortHandle,
    state: Arc<Mutex<StreamState>>,
    /// Resolves when the previous POST is done: POSTs go out one at a time, in send order.
    previous_post: Option<oneshot::Receiver<()>>,
}

/// Opens the event stream at `url` with `headers` and waits for the `endpoint` event. The
/// stream's reader runs under `tasks`.
pub(crate) async fn connect_sse(
    url: &str,
    headers: &[(String, String)],
    tasks: &crate::background::Background,
) -> Result<SseTransport, DialError> {
    let sse_url = Url::parse(url).map_err(|e| DialError::Sse(format!("invalid sse url: {e}")))?;
    let headers: HeaderMap = header_map(headers)?.into_iter().collect();
    let client = reqwest::Client::builder().build().map_err(|e| {
        DialError::Sse(format!(
            "cannot create an http client: {}",
            describe(&e.without_url())
        ))
    })?;
    let response = client
        .get(sse_url.clone())
        .headers(headers.clone())
        .header(ACCEPT, HeaderValue::from_static(EVENT_STREAM))
        .send()
        .await
        .map_err(|e| {
            DialError::Sse(format!(
                "sse endpoint unreachable: {}",
                describe(&e.without_url())
            ))
        })?;
    let status = response.status();
    if !status.is_success() {
        return Err(DialError::SseStatus(status));
    }
    let content_type = response
        .headers()
        .get(CONTENT_TYPE)
        .map(|v| String::from_utf8_lossy(v.as_bytes()).into_owned());
    if let Some(content_type) = content_type.filter(|ct| !ct.starts_with(EVENT_STREAM)) {
        return Err(DialError::Sse(format!(
            "sse endpoint answered with content type \"{content_type}\", not {EVENT_STREAM}"
        )));
    }
    let bytes = response
        .bytes_stream()
        .map(|r| r.map_err(|e| e.without_url()));
    let mut events: Events = SseStream::from_bytes_stream(bytes).boxed();
    let endpoint = loop {
        match events.next().await {
            Some(Ok(event)) if event.event.as_deref() == Some("endpoint") => {
                break resolve_endpoint(&sse_url, event.data.as_deref().unwrap_or_default())
                    .map_err(DialError::Sse)?;
            }
            // Anything before the endpoint has nowhere to go.
            Some(Ok(_)) => continue,
            Some(Err(e)) => {
                return Err(DialError::Sse(format!(
                    "sse stream failed before the endpoint event: {}",
                    describe(&e)
                )));
            }
            None => {
                return Err(DialError::Sse(
                    "sse stream ended before the endpoint event".into(),
                ));
            }
        }
    };
    let (sender, incoming) = mpsc::channel(INCOMING_BUFFER);
    let state = Arc::new(Mutex::new(StreamState::Open(Vec::new())));
    let reader = tasks
        .spawn(
            "sse event reader",
            read_events(events, sender, state.clone()),
        )
        .abort_handle();
    Ok(SseTransport {
        client,
        endpoint,
        headers,
        incoming,
        reader,
        state,
        previous_post: None,
    })
}

/// The endpoint is usually relative (`/message?sessionId=..`). It must stay on the stream's
/// origin: our headers (maybe secrets) go with every POST.
fn resolve_endpoint(sse_url: &Url, data: &str) -> Result<Url, String> {
    let endpoint = sse_url
        .join(data.trim())
        .map_err(|e| format!("sse endpoint event holds an invalid url: {e}"))?;
    if endpoint.origin() != sse_url.origin() {
        return Err("sse endpoint event points to a different origin".into());
    }
    Ok(endpoint)
}

/// Forwards `message` events until the stream ends, then records why. Dropping `sender` on
/// return is what makes `receive()` answer `None`.
async fn read_events(
    mut events: Events,
    sender: mpsc::Sender<ServerJsonRpcMessage>,
    state: Arc<Mutex<StreamState>>,
) {
    let reason = loop {
        let event = match events.next().await {
            None => break "sse stream ended".to_string(),
            Some(Err(e)) => break format!("sse stream failed: {}", describe(&e)),
            Some(Ok(event)) => event,
        };
        match event.event.as_deref() {
            None | Some("message") => {
                let Some(data) = event.data else { continue };
                match serde_json::from_str::<ServerJsonRpcMessage>(&data) {
                    Ok(message) => {
                        if sender.send(message).await.is_err() {
                            return; // The transport is gone.
                        }
                    }
                    Err(e) => tracing::warn!("ignoring an sse message that is not json-rpc: {e}"),
                }
            }
            Some(other) => tracing::debug!("ignoring sse event `{other}`"),
        }
    };
    tracing::debug!("{reason}");
    let mut state = lock(&state);
    if let StreamState::Open(waiters) = &mut *state {
        for waiter in waiters.drain(..) {
            let _ = waiter.send(reason.clone());
        }
        *state = StreamState::Dropped(reason);
    }
}

fn lock(state: &Mutex<StreamState>) -> std::sync::MutexGuard<'_, StreamState> {
    state.lock().unwrap_or_else(|e| e.into_inner())
}

/// An error and its sources on one line, without repeating a source its parent already printed.
fn describe(error: &(dyn StdError + 'static)) -> String {
    let mut text = error.to_string();
    let mut source = error.source();
    while let Some(cause) = source {
        let part = cause.to_string();
        if !text.contains(&part) {
            text.push_str(": ");
            text.push_str(&part);
        }
        source = cause.source();
    }
    text
}

impl SseTransport {
    /// Fires with a reason when the event stream ends or fails, unless `close()` came first (then
    /// the sender is dropped). Take it before handing the transport to rmcp.
    pub(crate) fn closed_signal(&self) -> oneshot::Receiver<String> {
        let (sender, receiver) = oneshot::channel();
        match &mut *lock(&self.state) {
            StreamState::Open(waiters) => waiters.push(sender),
            StreamState::Dropped(reason) => {
                let _ = sender.send(reason.clone());
            }
            StreamState::Closed => {}
        }
        receiver
    }
}

impl Transport<RoleClient> for SseTransport {
    type Error = SseError;

    fn send(
        &mut self,
        item: ClientJsonRpcMessage,
    ) -> impl Future<Output = Result<(), SseError>> + Send + 'static {
        let (done, next) = oneshot::channel::<()>();
        let previous = self.previous_post.replace(next);
        let request = self
            .client
            .post(self.endpoint.clone())
            .headers(self.headers.clone())
            .header(CONTENT_TYPE, HeaderValue::from_static("application/json"));
        async move {
            // Dropped when this POST finishes or is abandoned: the next one may go.
            let _done = done;
            if let Some(previous) = previous {
                let _ = previous.await;
            }
            let body = serde_json::to_vec(&item)
                .map_err(|e| SseError(format!("cannot encode a message: {e}")))?;
            let response = request.body(body).send().await.map_err(|e| {
                SseError(format!("sse post failed: {}", describe(&e.without_url())))
            })?;
            let status = response.status();
            // Usually an empty 202; read it so the connection can be reused.
            let _ = response.bytes().await;
            if !status.is_success() {
                return Err(SseError(format!("sse post returned {status}")));
            }
            Ok(())
        }
    }

    async fn receive(&mut self) -> Option<ServerJsonRpcMessage> {
        self.incoming.recv().await
    }

    async fn close(&mut self) -> Result<(), SseError> {
        {
            let mut state = lock(&self.state);
            if matches!(*state, StreamState::Open(_)) {
                *state = StreamState::Closed;
            }
        }
        self.reader.abort();
        Ok(())
    }
}

impl Drop for SseTransport {
    fn drop(&mut self) {
        self.reader.abort();
    }
}

#[cfg(test)]
mod tests {
    use std::convert::Infallible;

    use axum::Router;
    use axum::extract::State;
    use axum::http::{HeaderMap as AxumHeaders, StatusCode};
    use axum::response::sse::{Event, Sse as AxumSse};
    use axum::response::{IntoResponse, Response};
    use axum::routing::{get, post};
    use serde_json::{Value, json};

    use super::*;
    use crate::background::Background;

    /// A one-session legacy SSE server: the test pushes events through `push`; dropping `push`
    /// ends the stream. Records the `x-key` header of every request and every POSTed body.
    #[derive(Default)]
    struct Peer {
        push: Mutex<Option<mpsc::UnboundedReceiver<String>>>,
        seen: Mutex<Vec<(String, Option<String>)>>,
        posts: Mutex<Vec<Value>>,
    }

    fn key(headers: &AxumHeaders) -> Option<String> {
        headers
            .get("x-key")
            .map(|v| v.to_str().unwrap().to_string())
    }

    async fn stream(State(peer): State<Arc<Peer>>, headers: AxumHeaders) -> Response {
        peer.seen
            .lock()
            .unwrap()
            .push(("GET".into(), key(&headers)));
        let Some(push) = peer.push.lock().unwrap().take() else {
            return StatusCode::GONE.into_response();
        };
        let endpoint = Event::default()
            .event("endpoint")
            .data("/message?sessionId=1");
        let messages = futures::stream::unfold(push, |mut push| async move {
            let data = push.recv().await?;
            Some((Event::default().event("message").data(data), push))
        });
        let events = futures::stream::once(async { endpoint })
            .chain(messages)
            .map(Ok::<_, Infallible>);
        AxumSse::new(events).into_response()
    }

    async fn message(
        State(peer): State<Arc<Peer>>,
        headers: AxumHeaders,
        body: axum::body::Bytes,
    ) -> StatusCode {
        peer.seen
            .lock()
            .unwrap()
            .push(("POST".into(), key(&headers)));
        peer.posts
            .lock()
            .unwrap()
            .push(serde_json::from_slice(&body).unwrap());
        StatusCode::ACCEPTED
    }

    async fn start() -> (String, Arc<Peer>, mpsc::UnboundedSender<String>) {
        let (push_tx, push_rx) = mpsc::unbounded_channel();
        let peer = Arc::new(Peer {
            push: Mutex::new(Some(push_rx)),
            ..Peer::default()
        });
        let router = Router::new()
            .route("/sse", get(stream))
            .route("/message", post(message))
            .with_state(peer.clone());
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("http://{}/sse", listener.local_addr().unwrap());
        tokio::spawn(async move { axum::serve(listener, router).await });
        (url, peer, push_tx)
    }

    fn message_from(value: Value) -> ClientJsonRpcMessage {
        serde_json::from_value(value).unwrap()
    }

    #[test]
    fn endpoint_resolves_against_the_stream_and_keeps_its_origin() {
        let base = Url::parse("http://127.0.0.1:9/a/sse?x=1").unwrap();
        assert_eq!(
            resolve_endpoint(&base, "/message?sessionId=7")
                .unwrap()
                .as_str(),
            "http://127.0.0.1:9/message?sessionId=7"
        );
        assert_eq!(
            resolve_endpoint(&base, "messages/?id=1").unwrap().as_str(),
            "http://127.0.0.1:9/a/messages/?id=1"
        );
        assert!(resolve_endpoint(&base, "http://127.0.0.1:9/m").is_ok());
        assert_eq!(
            resolve_endpoint(&base, "http://evil.example/m").unwrap_err(),
            "sse endpoint event points to a different origin"
        );
    }

    #[tokio::test]
    async fn posts_and_receives_with_headers_and_signals_a_dropped_stream() {
        let (url, peer, push) = start().await;
        let headers = [("X-Key".to_string(), "s3cret".to_string())];
        let mut transport = connect_sse(&url, &headers, &Background::default())
            .await
            .unwrap();
        let dropped = transport.closed_signal();
        let first = json!({"jsonrpc": "2.0", "id": 1, "method": "ping"});
        let second = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
        let sends = [
            transport.send(message_from(first.clone())),
            transport.send(message_from(second.clone())),
        ];
        for result in futures::future::join_all(sends).await {
            result.unwrap();
        }
        assert_eq!(*peer.posts.lock().unwrap(), vec![first, second], "in order");
        let seen = peer.seen.lock().unwrap().clone();
        assert_eq!(seen.len(), 3);
        assert!(
            seen.iter().all(|(_, key)| key.as_deref() == Some("s3cret")),
            "{seen:?}"
        );
        push.send(r#"{"jsonrpc":"2.0","method":"notifications/tools/list_changed"}"#.into())
            .unwrap();
        let received = serde_json::to_value(transport.receive().await.unwrap()).unwrap();
        assert_eq!(received["method"], "notifications/tools/list_changed");
        drop(push);
        assert_eq!(dropped.await.unwrap(), "sse stream ended");
        assert!(transport.receive().await.is_none());
        // A signal asked for after the drop fires at once.
        assert_eq!(transport.closed_signal().await.unwrap(), "sse stream ended");
    }

    #[tokio::test]
    async fn a_local_close_is_not_a_drop() {
        let (url, _peer, push) = start().await;
        let mut transport = connect_sse(&url, &[], &Background::default())
            .await
            .unwrap();
        let dropped = transport.closed_signal();
        transport.close().await.unwrap();
        drop(push);
        assert!(dropped.await.is_err());
    }

    #[tokio::test]
    async fn errors_name_the_status_and_never_a_header_value() {
        let (url, _peer, _push) = start().await;
        let missing = url.replace("/sse", "/nowhere");
        let headers = [("X-Key".to_string(), "s3cret".to_string())];
        let err = connect_sse(&missing, &headers, &Background::default())
            .await
            .err()
            .unwrap()
            .to_string();
        assert_eq!(err, "sse endpoint returned 404 Not Found");
        let bad = [("X-Key".to_string(), "line\nbreak-s3cret".to_string())];
        let err = connect_sse(&url, &bad, &Background::default())
            .await
            .err()
            .unwrap()
            .to_string();
        assert!(!err.contains("s3cret"), "{err}");
        let err = connect_sse("http://127.0.0.1:1/sse", &[], &Background::default())
            .await
            .err()
            .unwrap()
            .to_string();
        assert!(err.starts_with("sse endpoint unreachable: "), "{err}");
        assert!(!err.contains('\n'), "{err}");
    }
}
