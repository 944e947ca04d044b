//! The HTTP client of a Streamable HTTP connection: rmcp's reqwest client, except that the raw
//! `initialize` and `tools/list` results of a server that may run tool calls as 2025-11-25 tasks
//! are also handed to [`Legacy`] (SRV-5), as a stdio server's lines are (`notice.rs`). rmcp's
//! types drop what says so (`capabilities.tasks.requests.tools.call`, a tool's
//! `execution.taskSupport`), and its client hands on a JSON answer already parsed into them; so
//! such a request is posted here, with the headers rmcp's client would send, and its answer (a
//! JSON body, or an SSE stream whose events are read as they pass) goes on to rmcp unchanged.
//! Every other request, and every request once the server is known to run no 2025-11-25 task
//! tools ([`Legacy::is_reading`]), goes through rmcp's client untouched.

use std::collections::HashMap;
use std::sync::Arc;

use futures::StreamExt;
use futures::stream::BoxStream;
use http::{HeaderName, HeaderValue, StatusCode, header};
use rmcp::model::{ClientJsonRpcMessage, ClientRequest, JsonRpcMessage, ServerJsonRpcMessage};
use rmcp::transport::common::http_header::{
    EVENT_STREAM_MIME_TYPE, HEADER_LAST_EVENT_ID, HEADER_SESSION_ID, JSON_MIME_TYPE,
};
use rmcp::transport::streamable_http_client::{
    AuthRequiredError, StreamableHttpClient, StreamableHttpError, StreamableHttpPostResponse,
    StreamableHttpResponseLimits,
};
use sse_stream::{Sse, SseStream};

use crate::tasks::Legacy;

type Error = StreamableHttpError<reqwest::Error>;

type Events = BoxStream<'static, Result<Sse, sse_stream::Error>>;

/// rmcp's reqwest client, reading the answers [`Legacy`] needs on the way (see the module doc).
#[derive(Clone)]
pub(crate) struct HttpTee {
    http: reqwest::Client,
    legacy: Legacy,
}

impl HttpTee {
    pub(crate) fn new(http: reqwest::Client, legacy: Legacy) -> HttpTee {
        HttpTee { http, legacy }
    }

    /// Whether the answer to `message` is read here: an `initialize` while the server may still
    /// run 2025-11-25 task tools, a `tools/list` once its `initialize` said it does.
    fn reads(&self, message: &ClientJsonRpcMessage) -> bool {
        let ClientJsonRpcMessage::Request(request) = message else {
            return false;
        };
        match request.request {
            ClientRequest::InitializeRequest(_) => self.legacy.is_reading(),
            ClientRequest::ListToolsRequest(_) => self.legacy.reads_tools(),
            _ => false,
        }
    }

    /// Posts `message` as rmcp's client would and reads its answer. `None` when the answer is
    /// neither a success with a JSON or SSE body, a JSON-RPC error, nor a 401 challenge: rmcp's
    /// client then sends the request once more and makes of the answer what it always does (an
    /// `initialize` or a `tools/list` that failed changed nothing on the server).
    async fn post_reading(
        &self,
        uri: &str,
        message: &ClientJsonRpcMessage,
        session_id: Option<&str>,
        auth_token: Option<&str>,
        custom_headers: &HashMap<HeaderName, HeaderValue>,
        limits: StreamableHttpResponseLimits,
    ) -> Result<Option<StreamableHttpPostResponse>, Error> {
        // A header that clashes with the transport's own is rmcp's error to report.
        let reserved = [
            header::ACCEPT.as_str(),
            HEADER_SESSION_ID,
            HEADER_LAST_EVENT_ID,
        ];
        if custom_headers.keys().any(|name| {
            reserved
                .iter()
                .any(|r| name.as_str().eq_ignore_ascii_case(r))
        }) {
            return Ok(None);
        }
        let mut request = self
            .http
            .post(uri)
            .header(
                header::ACCEPT,
                format!("{EVENT_STREAM_MIME_TYPE}, {JSON_MIME_TYPE}"),
            )
            .json(message);
        if let Some(token) = auth_token {
            request = request.bearer_auth(token);
        }
        for (name, value) in custom_headers {
            request = request.header(name, value);
        }
        if let Some(session_id) = session_id {
            request = request.header(HEADER_SESSION_ID, session_id);
        }
        let response = request.send().await.map_err(StreamableHttpError::Client)?;
        let status = response.status();
        if status == StatusCode::UNAUTHORIZED
            && let Some(challenge) = response
                .headers()
                .get(header::WWW_AUTHENTICATE)
                .and_then(|v| v.to_str().ok())
        {
            let challenge = AuthRequiredError::new(challenge.to_string());
            return Err(StreamableHttpError::AuthRequired(challenge));
        }
        let session = response
            .headers()
            .get(HEADER_SESSION_ID)
            .and_then(|v| v.to_str().ok())
            .map(str::to_string);
        let media = response
            .headers()
            .get(header::CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.split(';').next())
            .map(str::trim)
            .unwrap_or_default()
            .to_ascii_lowercase();
        if !status.is_success() {
            return Ok(rpc_error(response, status, session_id, &media, session, limits).await);
        }
        if matches!(status, StatusCode::ACCEPTED | StatusCode::NO_CONTENT) {
            return Ok(None);
        }
        if media == EVENT_STREAM_MIME_TYPE {
            let events = self.read_events(response, limits.max_sse_event_size, false);
            return Ok(Some(StreamableHttpPostResponse::Sse(events, session)));
        }
        if media != JSON_MIME_TYPE {
            return Ok(None);
        }
        let body = json_body(response, limits.max_json_response_size).await?;
        self.legacy.read_line(&body);
        let answer = serde_json::from_slice::<ServerJsonRpcMessage>(&body).map_err(|e| {
            let reason = format!("the server's answer is not a JSON-RPC message: {e}");
            StreamableHttpError::UnexpectedServerResponse(reason.into())
        })?;
        Ok(Some(StreamableHttpPostResponse::Json(answer, session)))
    }

    /// The events of an SSE body, each message handed to [`Legacy`] as it passes (`filtered`:
    /// only those that hold one of [`Legacy::NEEDLES`]); an event over `max_event` bytes ends
    /// the stream with an error, as in rmcp's client.
    fn read_events(&self, response: reqwest::Response, max_event: usize, filtered: bool) -> Events {
        let mut size = EventSize::default();
        let bytes = response.bytes_stream().map(move |chunk| {
            let chunk = chunk.map_err(std::io::Error::other)?;
            if !size.fits(&chunk, max_event) {
                let reason = format!("an event of the server's stream is over {max_event} bytes");
                return Err(std::io::Error::other(reason));
            }
            Ok(chunk)
        });
        self.tee(SseStream::from_bytes_stream(bytes).boxed(), filtered)
    }

    /// `events`, each message handed to [`Legacy`] as it passes.
    fn tee(&self, events: Events, filtered: bool) -> Events {
        let legacy = self.legacy.clone();
        events
            .inspect(move |event| {
                let Ok(Sse {
                    data: Some(data), ..
                }) = event
                else {
                    return;
                };
                let data = data.as_bytes();
                let wanted = !filtered
                    || Legacy::NEEDLES
                        .iter()
                        .any(|needle| data.windows(needle.len()).any(|w| w == *needle));
                if wanted && legacy.is_reading() {
                    legacy.read_line(data);
                }
            })
            .boxed()
    }
}

/// The bytes of the SSE event being read so far, to bound it.
#[derive(Default)]
struct EventSize {
    bytes: usize,
    /// Nothing but the line break was read on the current line (a blank line ends an event).
    blank_line: bool,
    after_cr: bool,
}

impl EventSize {
    /// Counts `chunk`; false once the event being read is over `max` bytes.
    fn fits(&mut self, chunk: &[u8], max: usize) -> bool {
        for &byte in chunk {
            let after_cr = std::mem::replace(&mut self.after_cr, byte == b'\r');
            match byte {
                b'\n' if after_cr => {}
                b'\n' | b'\r' => {
                    if self.blank_line {
                        self.bytes = 0;
                    }
                    self.blank_line = true;
                }
                _ => {
                    self.blank_line = false;
                    self.bytes += 1;
                }
            }
            if self.bytes > max {
                return false;
            }
        }
        true
    }
}

/// The JSON-RPC error an error status carries (a refused revision, `-32022`), which is the
/// answer as in rmcp's client; `None` for any other failure (rmcp's client classifies it): a
/// challenge-less 401 or 403, a 429, an expired session, a body that is not a JSON-RPC error.
async fn rpc_error(
    response: reqwest::Response,
    status: StatusCode,
    sent_session: Option<&str>,
    media: &str,
    session: Option<String>,
    limits: StreamableHttpResponseLimits,
) -> Option<StreamableHttpPostResponse> {
    let classified = matches!(
        status,
        StatusCode::UNAUTHORIZED | StatusCode::FORBIDDEN | StatusCode::TOO_MANY_REQUESTS
    ) || (status == StatusCode::NOT_FOUND && sent_session.is_some());
    if classified || media != JSON_MIME_TYPE {
        return None;
    }
    let body = json_body(response, limits.max_json_response_size)
        .await
        .ok()?;
    match serde_json::from_slice::<ServerJsonRpcMessage>(&body).ok()? {
        error @ JsonRpcMessage::Error(_) => Some(StreamableHttpPostResponse::Json(error, session)),
        _ => None,
    }
}

/// A JSON body, up to `limit` bytes.
async fn json_body(mut response: reqwest::Response, limit: usize) -> Result<Vec<u8>, Error> {
    let too_large = StreamableHttpError::ResponseBodyTooLarge { max_size: limit };
    if response
        .content_length()
        .is_some_and(|length| length > limit as u64)
    {
        return Err(too_large);
    }
    let mut body = Vec::new();
    while let Some(chunk) = response
        .chunk()
        .await
        .map_err(StreamableHttpError::Client)?
    {
        if body.len() + chunk.len() > limit {
            return Err(too_large);
        }
        body.extend_from_slice(&chunk);
    }
    Ok(body)
}

impl StreamableHttpClient for HttpTee {
    type Error = reqwest::Error;

    async fn post_message(
        &self,
        uri: Arc<str>,
        message: ClientJsonRpcMessage,
        session_id: Option<Arc<str>>,
        auth_token: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
    ) -> Result<StreamableHttpPostResponse, Error> {
        let limits = StreamableHttpResponseLimits::default();
        self.post_message_with_response_limits(
            uri,
            message,
            session_id,
            auth_token,
            custom_headers,
            limits,
        )
        .await
    }

    async fn post_message_with_max_sse_event_size(
        &self,
        uri: Arc<str>,
        message: ClientJsonRpcMessage,
        session_id: Option<Arc<str>>,
        auth_token: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
        max_sse_event_size: usize,
    ) -> Result<StreamableHttpPostResponse, Error> {
        let mut limits = StreamableHttpResponseLimits::default();
        limits.max_sse_event_size = max_sse_event_size;
        self.post_message_with_response_limits(
            uri,
            message,
            session_id,
            auth_token,
            custom_headers,
            limits,
        )
        .await
    }

    async fn post_message_with_response_limits(
        &self,
        uri: Arc<str>,
        message: ClientJsonRpcMessage,
        session_id: Option<Arc<str>>,
        auth_token: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
        limits: StreamableHttpResponseLimits,
    ) -> Result<StreamableHttpPostResponse, Error> {
        if self.reads(&message)
            && let Some(answer) = self
                .post_reading(
                    &uri,
                    &message,
                    session_id.as_deref(),
                    auth_token.as_deref(),
                    &custom_headers,
                    limits,
                )
                .await?
        {
            return Ok(answer);
        }
        self.http
            .post_message_with_response_limits(
                uri,
                message,
                session_id,
                auth_token,
                custom_headers,
                limits,
            )
            .await
    }

    async fn delete_session(
        &self,
        uri: Arc<str>,
        session_id: Arc<str>,
        auth_token: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
    ) -> Result<(), Error> {
        self.http
            .delete_session(uri, session_id, auth_token, custom_headers)
            .await
    }

    async fn get_stream(
        &self,
        uri: Arc<str>,
        session_id: Option<Arc<str>>,
        last_event_id: Option<String>,
        auth_token: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
    ) -> Result<Events, Error> {
        let max = StreamableHttpResponseLimits::default().max_sse_event_size;
        self.get_stream_with_max_sse_event_size(
            uri,
            session_id,
            last_event_id,
            auth_token,
            custom_headers,
            max,
        )
        .await
    }

    /// A resumed stream (`Last-Event-ID`) may carry the rest of an `initialize` or `tools/list`
    /// answer: while [`Legacy`] reads, its messages that may matter are handed to it.
    async fn get_stream_with_max_sse_event_size(
        &self,
        uri: Arc<str>,
        session_id: Option<Arc<str>>,
        last_event_id: Option<String>,
        auth_token: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
        max_sse_event_size: usize,
    ) -> Result<Events, Error> {
        let resumed = last_event_id.is_some();
        let events = self
            .http
            .get_stream_with_max_sse_event_size(
                uri,
                session_id,
                last_event_id,
                auth_token,
                custom_headers,
                max_sse_event_size,
            )
            .await?;
        if !resumed || !self.legacy.is_reading() {
            return Ok(events);
        }
        Ok(self.tee(events, true))
    }
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicUsize, Ordering};

    use rmcp::model::{ProtocolVersion, ServerResult};

    use super::*;

    const TASKS_INIT: &str = r#"{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":"2025-11-25","capabilities":{"tasks":{"requests":{"tools":{"call":{}}}}},"serverInfo":{"name":"s","version":"1"}}}"#;

    /// A server whose every POST to `/mcp` gets `status`, `media` and `body`; its POSTs counted.
    async fn serve(status: u16, media: &'static str, body: &str) -> (Arc<str>, Arc<AtomicUsize>) {
        let posts = Arc::new(AtomicUsize::new(0));
        let (seen, body) = (posts.clone(), body.to_string());
        let answer = move || {
            seen.fetch_add(1, Ordering::SeqCst);
            let status = axum::http::StatusCode::from_u16(status).unwrap();
            let answer = (
                status,
                [(axum::http::header::CONTENT_TYPE, media)],
                body.clone(),
            );
            async move { answer }
        };
        let app = axum::Router::new().route("/mcp", axum::routing::post(answer));
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("http://{}/mcp", listener.local_addr().unwrap());
        tokio::spawn(async move { axum::serve(listener, app).await });
        (url.into(), posts)
    }

    fn request(method: &str) -> ClientJsonRpcMessage {
        let params = match method {
            "initialize" => serde_json::json!({ "protocolVersion": "2025-11-25",
                "capabilities": {}, "clientInfo": { "name": "c", "version": "1" } }),
            _ => serde_json::json!({}),
        };
        let message = serde_json::json!({ "jsonrpc": "2.0", "id": 0, "method": method,
            "params": params });
        serde_json::from_value(message).unwrap()
    }

    async fn post(tee: &HttpTee, url: &Arc<str>, method: &str) -> StreamableHttpPostResponse {
        let limits = StreamableHttpResponseLimits::default();
        tee.post_message_with_response_limits(
            url.clone(),
            request(method),
            None,
            None,
            HashMap::new(),
            limits,
        )
        .await
        .unwrap()
    }

    // SRV-5: a JSON `initialize` answer is read for tasks and handed on to rmcp whole, in one
    // request; then `tools/list` is read too.
    #[tokio::test]
    async fn srv_5_a_json_initialize_answer_is_read_and_handed_on() {
        let (url, posts) = serve(200, "application/json; charset=utf-8", TASKS_INIT).await;
        let tee = HttpTee::new(reqwest::Client::new(), Legacy::default());
        let StreamableHttpPostResponse::Json(JsonRpcMessage::Response(answer), _) =
            post(&tee, &url, "initialize").await
        else {
            panic!("not a JSON response");
        };
        assert!(tee.legacy.reads_tools());
        assert!(tee.reads(&request("tools/list")));
        let ServerResult::InitializeResult(init) = answer.result else {
            panic!("not an initialize result");
        };
        assert_eq!(init.protocol_version, ProtocolVersion::V_2025_11_25);
        assert_eq!(posts.load(Ordering::SeqCst), 1);
    }

    // SRV-5: an SSE answer's events reach rmcp unchanged and are read as they pass.
    #[tokio::test]
    async fn srv_5_an_sse_initialize_answer_is_read_as_it_passes() {
        let body = format!("event: message\nid: 1\ndata: {TASKS_INIT}\n\n");
        let (url, _) = serve(200, "text/event-stream", &body).await;
        let tee = HttpTee::new(reqwest::Client::new(), Legacy::default());
        let StreamableHttpPostResponse::Sse(events, _) = post(&tee, &url, "initialize").await
        else {
            panic!("not an SSE response");
        };
        let events: Vec<Sse> = events.map(Result::unwrap).collect().await;
        assert_eq!(events.len(), 1);
        assert_eq!(events[0].data.as_deref(), Some(TASKS_INIT));
        assert_eq!(events[0].id.as_deref(), Some("1"));
        assert!(tee.legacy.reads_tools());
    }

    // SRV-5: a server on another revision stops the reading: its `tools/list` goes through
    // rmcp's client untouched.
    #[tokio::test]
    async fn srv_5_a_server_without_task_tools_is_read_no_more() {
        let init = TASKS_INIT.replace("2025-11-25", "2025-06-18");
        let (url, _) = serve(200, "application/json", &init).await;
        let tee = HttpTee::new(reqwest::Client::new(), Legacy::default());
        post(&tee, &url, "initialize").await;
        assert!(!tee.legacy.is_reading());
        assert!(!tee.reads(&request("initialize")));
        assert!(!tee.reads(&request("tools/list")));
    }

    // SRV-5: a `tools/list` read here goes out with what rmcp's client would send: the access
    // token (`AuthClient` hands it down), the session, the revision header, both media types.
    #[tokio::test]
    async fn srv_5_a_request_read_here_carries_the_headers_of_rmcps_client() {
        let headers = Arc::new(std::sync::Mutex::new(None::<axum::http::HeaderMap>));
        let seen = headers.clone();
        let answer = move |got: axum::http::HeaderMap| {
            *seen.lock().unwrap() = Some(got);
            let body = r#"{"jsonrpc":"2.0","id":0,"result":{"tools":[{"name":"t","inputSchema":{"type":"object"},"execution":{"taskSupport":"required"}}]}}"#;
            async move {
                (
                    [(axum::http::header::CONTENT_TYPE, "application/json")],
                    body,
                )
            }
        };
        let app = axum::Router::new().route("/mcp", axum::routing::post(answer));
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url: Arc<str> = format!("http://{}/mcp", listener.local_addr().unwrap()).into();
        tokio::spawn(async move { axum::serve(listener, app).await });
        let legacy = Legacy::default();
        legacy.read_line(TASKS_INIT.as_bytes());
        let tee = HttpTee::new(reqwest::Client::new(), legacy.clone());
        let version = HeaderName::from_static("mcp-protocol-version");
        let custom = HashMap::from([(version, HeaderValue::from_static("2025-11-25"))]);
        let sent = tee
            .post_message_with_response_limits(
                url,
                request("tools/list"),
                Some("s-1".into()),
                Some("tok".into()),
                custom,
                StreamableHttpResponseLimits::default(),
            )
            .await
            .unwrap();
        assert!(matches!(sent, StreamableHttpPostResponse::Json(..)));
        assert!(legacy.runs_as_task(Some(&ProtocolVersion::V_2025_11_25), "t"));
        let got = headers
            .lock()
            .unwrap()
            .take()
            .expect("the request reached the server");
        let header = |name: &str| {
            got.get(name)
                .and_then(|v| v.to_str().ok())
                .unwrap_or_default()
        };
        assert_eq!(header("authorization"), "Bearer tok");
        assert_eq!(header("mcp-session-id"), "s-1");
        assert_eq!(header("mcp-protocol-version"), "2025-11-25");
        assert_eq!(header("accept"), "text/event-stream, application/json");
        assert_eq!(header("content-type"), "application/json");
    }

    // SPEC-1, SRV-5: a refusal in an error status (`-32022`) is the answer, sent once.
    #[tokio::test]
    async fn srv_5_a_refused_initialize_is_answered_with_its_error_in_one_request() {
        let refusal = r#"{"jsonrpc":"2.0","id":0,"error":{"code":-32022,"message":"unsupported","data":{"supported":["2026-07-28"]}}}"#;
        let (url, posts) = serve(400, "application/json", refusal).await;
        let tee = HttpTee::new(reqwest::Client::new(), Legacy::default());
        let StreamableHttpPostResponse::Json(JsonRpcMessage::Error(error), _) =
            post(&tee, &url, "initialize").await
        else {
            panic!("not a JSON-RPC error");
        };
        assert_eq!(error.error.code.0, -32022);
        assert_eq!(posts.load(Ordering::SeqCst), 1);
    }

    // SRV-5: an SSE event is bounded on its own, whatever line breaks the server uses; a long
    // stream of small events is not.
    #[test]
    fn srv_5_sse_events_are_bounded_one_by_one() {
        for newline in ["\n", "\r\n", "\r"] {
            let event = format!("data: {}{newline}{newline}", "x".repeat(10));
            let mut size = EventSize::default();
            for _ in 0..100 {
                assert!(size.fits(event.as_bytes(), 16), "{newline:?}");
            }
            let long = format!("data: {}{newline}", "x".repeat(8));
            assert!(size.fits(long.as_bytes(), 16));
            assert!(!size.fits(long.as_bytes(), 16), "{newline:?}");
        }
    }
}
