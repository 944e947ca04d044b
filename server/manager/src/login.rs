//! Sign-in to a remote server (AUTH-2, AUTH-8): the OAuth 2.1 authorization-code flow with PKCE
//! on rmcp's `auth` module (discovery, registration, PKCE, token exchange), plus what rmcp
//! leaves to the host: the loopback callback server, the browser opener, and storing the result.
//!
//! The flow keeps its tokens in memory until it has succeeded; only then is one entry of the
//! credential file written, so every failure leaves stored credentials as they were.

use std::net::IpAddr;
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use crate::background::Background;
use futures::future::BoxFuture;
use rmcp::transport::auth::{
    AuthError, AuthorizationManager, AuthorizationMetadata, AuthorizationRequest,
    AuthorizationSession, CredentialStore, InMemoryCredentialStore,
};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio_util::sync::CancellationToken;
use tracing::instrument::WithSubscriber;

use crate::auth::{self, Record};
use crate::config::OAuthSettings;

/// How long sign-in waits for the browser's callback by default (AUTH-8).
pub const DEFAULT_LOGIN_TIMEOUT: Duration = Duration::from_secs(300);
/// How long sign-in waits for the browser: `WAVE_LOGIN_TIMEOUT_SECS`, else 5 minutes.
pub fn login_timeout() -> Duration {
    std::env::var("WAVE_LOGIN_TIMEOUT_SECS")
        .ok()
        .and_then(|v| v.parse().ok())
        .map(Duration::from_secs)
        .unwrap_or(DEFAULT_LOGIN_TIMEOUT)
}

/// The client name sent with dynamic client registration.
const CLIENT_NAME: &str = "wave-mcp";
/// Most bytes read of one callback request.
const MAX_REQUEST: usize = 16 * 1024;
/// Time one connection to the callback server gets to send its request line.
const REQUEST_READ_TIMEOUT: Duration = Duration::from_secs(10);

/// Shows the authorization URL to the user (printed by the CLI, a notification in the IDE) and
/// opens it if it can; resolves to whether it was opened. When it was not, sign-in opens it
/// with `$BROWSER` or the platform's opener.
pub type UrlOpener = Arc<dyn Fn(String) -> BoxFuture<'static, bool> + Send + Sync>;

/// Runs the whole flow for the server at `url` and stores the credentials in `path`. A browser
/// opener it starts is reaped under `tasks` until `stop` (the manager's cleanup).
pub(crate) async fn sign_in(
    url: &str,
    settings: &OAuthSettings,
    path: &Path,
    open: &UrlOpener,
    timeout: Duration,
    (tasks, stop): (&Background, &CancellationToken),
) -> Result<(), String> {
    // Machine-to-machine grants need no browser: the dial gets the token (SPEC-2).
    if settings.machine.is_some() {
        return Ok(());
    }
    let key = auth::canonical_url(url)?;
    let previous = {
        let (path, key) = (path.to_path_buf(), key.clone());
        tokio::task::spawn_blocking(move || auth::load(&path, &key))
            .await
            .map_err(|e| e.to_string())??
    };
    let mut manager = AuthorizationManager::new(url).await.map_err(describe)?;
    let tokens = InMemoryCredentialStore::new();
    manager.set_credential_store(tokens.clone());

    let challenge = challenge_of(url).await;
    let resolution = manager
        .resolve_metadata_from_challenge(challenge.as_deref())
        .await
        .map_err(describe)?;
    let mut metadata = resolution.metadata;
    let fallback = !resolution.source.is_discovered();
    let explain = |reason: String| match fallback {
        true => format!(
            "the server publishes no OAuth metadata (neither RFC 9728 nor RFC 8414), and its default endpoints (MCP 2025-03-26: /authorize, /token, /register at its origin) failed: {reason}"
        ),
        false => reason,
    };
    if fallback {
        // MCP 2025-03-26: without metadata, the default endpoints at the server's origin, with
        // PKCE (S256) required of the client.
        metadata.code_challenge_methods_supported = Some(vec!["S256".into()]);
    }
    check_metadata(&metadata)?;
    manager.set_metadata(metadata.clone());

    // A client registered by an earlier sign-in is reused with its redirect URI (AUTH-3), and
    // only at the authorization server it was registered at.
    let reuse = match (&settings.client_id, &previous) {
        (None, Some(record)) if same_authorization_server(&record.metadata, &metadata) => {
            Some(record)
        }
        _ => None,
    };
    let wanted_port = reuse
        .and_then(|r| url::Url::parse(&r.redirect_uri).ok()?.port())
        .or(settings.callback_port);
    let listener = bind_callback(wanted_port, settings.callback_port.is_some()).await?;
    let port = listener
        .local_addr()
        .map_err(|e| format!("loopback callback: {e}"))?
        .port();
    let redirect_uri = format!("http://127.0.0.1:{port}/callback");

    let mut request = AuthorizationRequest::new(&redirect_uri)
        .with_client_name(CLIENT_NAME)
        .with_initial_scope_selection();
    if let Some(challenge) = &challenge {
        request = request.with_challenge(challenge);
    }
    // A step-up (a 403 insufficient_scope since the last sign-in) asks for the scopes granted
    // so far and the new ones together (SPEC-2).
    let step_up = previous
        .as_ref()
        .filter(|record| !record.pending_scopes.is_empty());
    if let Some(record) = step_up
        && record.step_ups >= auth::MAX_STEP_UPS
    {
        return Err(format!(
            "the server still refused after {} sign-ins for more scope ({}); signing in again will not help",
            record.step_ups,
            record.pending_scopes.join(" ")
        ));
    }
    let mut scopes = settings.scopes.clone();
    if let Some(record) = step_up {
        if scopes.is_empty() {
            scopes = challenge_scopes(challenge.as_deref());
        }
        for scope in record
            .credentials
            .granted_scopes
            .iter()
            .chain(&record.pending_scopes)
        {
            if !scopes.contains(scope) {
                scopes.push(scope.clone());
            }
        }
    }
    if !scopes.is_empty() {
        request = request.with_scopes(scopes);
    }
    if let Some(document) = &settings.client_metadata_url {
        request = request.with_client_metadata_url(document);
    }
    let client_id = settings.client_id.clone().or_else(|| {
        reuse
            .filter(|r| r.redirect_uri == redirect_uri)
            .map(|r| r.credentials.client_id.clone())
    });
    if let Some(client_id) = &client_id {
        request = request.with_preregistered_client(client_id);
        if let Some(secret) = &settings.client_secret {
            request = request.with_client_secret(secret.expose());
        }
    }
    let session = AuthorizationSession::new(manager, request)
        .await
        .map_err(|(_, e)| explain(describe(e)))?;
    let auth_url = session.get_authorization_url().to_string();
    let state = url::Url::parse(&auth_url)
        .ok()
        .and_then(|u| {
            u.query_pairs()
                .find(|(k, _)| k == "state")
                .map(|(_, v)| v.into_owned())
        })
        .ok_or("the authorization URL has no `state`")?;

    // The callback is served while the host opens the URL: a host may only answer once the
    // browser has come back.
    let opening = async {
        if !open(auth_url.clone()).await {
            open_in_browser(&auth_url, tasks, stop.clone());
        }
    };
    let code = {
        let waiting = tokio::time::timeout(timeout, wait_for_code(&listener, &state));
        tokio::pin!(waiting);
        tokio::select! {
            code = &mut waiting => code,
            () = opening => waiting.await,
        }
    };
    let callback = code.map_err(|_| {
        format!(
            "no answer from the browser within {} s; sign-in abandoned",
            timeout.as_secs()
        )
    })??;
    drop(listener);
    // rmcp logs the authorization code at debug level ("start exchange code for token"): the
    // exchange runs with logging off so no `WAVE_LOG` level shows it (AUTH-6).
    session
        .handle_callback_with_issuer(callback.code.expose(), &state, callback.iss.as_deref())
        .with_subscriber(tracing::subscriber::NoSubscriber::default())
        .await
        .map_err(|e| explain(describe(e)))?;
    let credentials = tokens
        .load()
        .await
        .map_err(describe)?
        .ok_or("the token endpoint returned no tokens")?;
    let record = Record {
        credentials,
        metadata,
        redirect_uri,
        client_secret: None,
        pending_scopes: Vec::new(),
        step_ups: step_up.map_or(0, |record| record.step_ups + 1),
    };
    let path = path.to_path_buf();
    tokio::task::spawn_blocking(move || {
        auth::update(&path, |servers| drop(servers.insert(key, record)))
    })
    .await
    .map_err(|e| e.to_string())?
}

/// The `WWW-Authenticate` header of the server's 401 to an unauthenticated `initialize`, or,
/// where `initialize` is open, to a `tools/list` after it: it names the protected-resource
/// metadata and the scopes (RFC 9728 §5.1).
async fn challenge_of(url: &str) -> Option<String> {
    let http = reqwest::Client::new();
    let post = |body: serde_json::Value, session: Option<&str>| {
        let mut request = http
            .post(url)
            .header("accept", "application/json, text/event-stream")
            .header("content-type", "application/json")
            .body(body.to_string())
            .timeout(Duration::from_secs(30));
        if let Some(session) = session {
            request = request
                .header("mcp-session-id", session)
                .header("mcp-protocol-version", "2025-06-18");
        }
        request.send()
    };
    let challenge = |response: &reqwest::Response| {
        (response.status() == reqwest::StatusCode::UNAUTHORIZED)
            .then(|| response.headers().get(reqwest::header::WWW_AUTHENTICATE))
            .flatten()
            .and_then(|v| v.to_str().ok())
            .map(str::to_string)
    };
    let initialize = serde_json::json!({
        "jsonrpc": "2.0", "id": 0, "method": "initialize",
        "params": {
            "protocolVersion": "2025-06-18", "capabilities": {},
            "clientInfo": { "name": CLIENT_NAME, "version": env!("CARGO_PKG_VERSION") }
        }
    });
    let response = post(initialize, None).await.ok()?;
    if let Some(found) = challenge(&response) {
        return Some(found);
    }
    if !response.status().is_success() {
        return None;
    }
    let session = response
        .headers()
        .get("mcp-session-id")
        .and_then(|v| v.to_str().ok())
        .map(str::to_string);
    drop(response);
    let list = serde_json::json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"});
    let response = post(list, session.as_deref()).await.ok()?;
    challenge(&response)
}

/// What the MCP authorization spec requires of the authorization server before a browser opens:
/// PKCE with S256 and no plain-`http:` endpoint off the loopback interface (AUTH-8).
fn check_metadata(metadata: &AuthorizationMetadata) -> Result<(), String> {
    let s256 = metadata
        .code_challenge_methods_supported
        .as_ref()
        .is_some_and(|methods| methods.iter().any(|m| m == "S256"));
    if !s256 {
        return Err("the authorization server does not offer PKCE with S256 (code_challenge_methods_supported), which MCP sign-in requires".into());
    }
    let endpoints = [
        Some(&metadata.authorization_endpoint),
        Some(&metadata.token_endpoint),
        metadata.registration_endpoint.as_ref(),
        metadata.issuer.as_ref(),
    ];
    for endpoint in endpoints.into_iter().flatten() {
        let parsed = url::Url::parse(endpoint)
            .map_err(|e| format!("the authorization server names `{endpoint}`: {e}"))?;
        if parsed.scheme() == "https" || (parsed.scheme() == "http" && is_loopback(&parsed)) {
            continue;
        }
        return Err(format!(
            "the authorization server uses `{endpoint}`: only https, or http on the loopback interface, may carry credentials"
        ));
    }
    Ok(())
}

pub(crate) fn is_loopback(url: &url::Url) -> bool {
    match url.host() {
        Some(url::Host::Domain(host)) => host.eq_ignore_ascii_case("localhost"),
        Some(url::Host::Ipv4(ip)) => IpAddr::V4(ip).is_loopback(),
        Some(url::Host::Ipv6(ip)) => IpAddr::V6(ip).is_loopback(),
        None => false,
    }
}

/// Binds the callback server on 127.0.0.1. A port that is only a preference (the one an earlier
/// registration used) falls back to a free one; a configured `callbackPort` must be had.
async fn bind_callback(port: Option<u16>, required: bool) -> Result<TcpListener, String> {
    if let Some(port) = port {
        match TcpListener::bind(("127.0.0.1", port)).await {
            Ok(listener) => return Ok(listener),
            Err(e) if required => {
                return Err(format!(
                    "cannot listen on 127.0.0.1:{port} (oauth.callbackPort) for the sign-in callback: {e}"
                ));
            }
            Err(_) => {}
        }
    }
    TcpListener::bind(("127.0.0.1", 0))
        .await
        .map_err(|e| format!("cannot listen on 127.0.0.1 for the sign-in callback: {e}"))
}

/// Serves the loopback redirect until `/callback` arrives. Other requests (a favicon, a probe,
/// bytes that are not HTTP) get an error page and are otherwise ignored; a callback with
/// `error`, a wrong `state` or no `code` ends the sign-in with that cause. Connections are
/// served side by side, so one that sends nothing (a browser's preconnect) never holds up the
/// redirect.
async fn wait_for_code(listener: &TcpListener, state: &str) -> Result<Callback, String> {
    let mut serving = futures::stream::FuturesUnordered::new();
    loop {
        tokio::select! {
            accepted = listener.accept() => {
                if let Ok((stream, _)) = accepted {
                    serving.push(serve_callback(stream, state));
                }
            }
            Some(outcome) = futures::StreamExt::next(&mut serving) => {
                if let Some(outcome) = outcome {
                    return outcome;
                }
            }
        }
    }
}

/// One connection to the callback server: `None` when it was not the callback.
async fn serve_callback(mut stream: TcpStream, state: &str) -> Option<Result<Callback, String>> {
    let target = match tokio::time::timeout(REQUEST_READ_TIMEOUT, request_target(&mut stream)).await
    {
        Ok(Some(target)) => target,
        _ => {
            respond(&mut stream, "400 Bad Request", "Not a sign-in callback.").await;
            return None;
        }
    };
    let Ok(url) = url::Url::parse(&format!("http://127.0.0.1{target}")) else {
        respond(&mut stream, "400 Bad Request", "Not a sign-in callback.").await;
        return None;
    };
    if url.path() != "/callback" {
        respond(&mut stream, "404 Not Found", "Not a sign-in callback.").await;
        return None;
    }
    let param = |name: &str| {
        url.query_pairs()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.into_owned())
    };
    let outcome = match (param("error"), param("state"), param("code")) {
        (Some(error), _, _) => {
            let detail = param("error_description")
                .map(|d| format!(": {d}"))
                .unwrap_or_default();
            Err(format!(
                "the authorization server refused the sign-in ({error}{detail})"
            ))
        }
        (None, got, _) if got.as_deref() != Some(state) => Err(
            "the browser's callback carried a wrong `state` (a possible forged request); sign-in aborted"
                .to_string(),
        ),
        (None, _, None) => Err("the browser's callback carried no authorization code".into()),
        // RFC 9207: `iss` is passed on to be checked against the authorization server.
        (None, _, Some(code)) => Ok(Callback {
            code: auth::Secret::new(code),
            iss: param("iss"),
        }),
    };
    match &outcome {
        Ok(_) => {
            respond(
                &mut stream,
                "200 OK",
                "Signed in. You can close this tab and return to your editor.",
            )
            .await
        }
        Err(reason) => respond(&mut stream, "400 Bad Request", reason).await,
    }
    Some(outcome)
}

/// What the browser's callback carried: the code and, where sent, the issuer (RFC 9207).
struct Callback {
    code: auth::Secret,
    iss: Option<String>,
}

/// Whether two metadata documents are of one authorization server (its issuer, else its
/// endpoints): a registered client id is only valid at the server that issued it.
fn same_authorization_server(a: &AuthorizationMetadata, b: &AuthorizationMetadata) -> bool {
    match (&a.issuer, &b.issuer) {
        (Some(x), Some(y)) => x == y && a.token_endpoint == b.token_endpoint,
        _ => {
            a.token_endpoint == b.token_endpoint
                && a.authorization_endpoint == b.authorization_endpoint
        }
    }
}

/// The `scope` of a `WWW-Authenticate` challenge, split.
fn challenge_scopes(challenge: Option<&str>) -> Vec<String> {
    challenge
        .and_then(|c| crate::error::challenge_param(c, "scope"))
        .map(|s| s.split_whitespace().map(str::to_string).collect())
        .unwrap_or_default()
}

/// The request target of an HTTP `GET`, read up to the end of the request line.
async fn request_target(stream: &mut TcpStream) -> Option<String> {
    let mut buffer = Vec::with_capacity(1024);
    let mut chunk = [0u8; 1024];
    while !buffer.windows(2).any(|w| w == b"\r\n") {
        let n = stream.read(&mut chunk).await.ok()?;
        if n == 0 || buffer.len() + n > MAX_REQUEST {
            return None;
        }
        buffer.extend_from_slice(&chunk[..n]);
    }
    let line = std::str::from_utf8(&buffer).ok()?.lines().next()?;
    let mut parts = line.split(' ');
    let (method, target, version) = (parts.next()?, parts.next()?, parts.next()?);
    (method == "GET" && target.starts_with('/') && version.starts_with("HTTP/"))
        .then(|| target.to_string())
}

async fn respond(stream: &mut TcpStream, status: &str, message: &str) {
    let body = format!(
        "<!doctype html><meta charset=utf-8><title>wave-mcp sign-in</title><p>{}</p>\n",
        message
            .replace('&', "&amp;")
            .replace('<', "&lt;")
            .replace('>', "&gt;")
    );
    let response = format!(
        "HTTP/1.1 {status}\r\ncontent-type: text/html; charset=utf-8\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
        body.len()
    );
    let _ = stream.write_all(response.as_bytes()).await;
    let _ = stream.shutdown().await;
}

/// The user's browser, for a host that opens a URL itself (an accepted URL elicitation): the
/// opener is reaped under the manager's task tracker, as for sign-in.
/// `Browser::default()` has a tracker of its own, awaited by no manager (for tests).
#[derive(Debug, Clone, Default)]
pub struct Browser {
    tasks: Background,
    stop: CancellationToken,
}

impl Browser {
    /// A browser whose openers run under `tasks` until `stop`.
    pub(crate) fn new(tasks: Background, stop: CancellationToken) -> Browser {
        Browser { tasks, stop }
    }

    /// Opens `url` (see [`open_in_browser`]).
    pub fn open(&self, url: &str) {
        open_in_browser(url, &self.tasks, self.stop.clone());
    }
}

/// Opens `url` with the command in `$BROWSER` (the URL is its argument), else the platform's
/// opener. The opener is reaped by a task under `tasks`; a browser it starts is the user's. A
/// `$BROWSER` that runs the browser in the foreground may never exit: at `stop` the task stops
/// waiting (tokio reaps the child once it exits), so cleanup never waits for the user's browser.
pub(crate) fn open_in_browser(url: &str, tasks: &Background, stop: CancellationToken) {
    let browser = std::env::var("BROWSER")
        .ok()
        .filter(|b| !b.trim().is_empty());
    let mut command = match browser {
        Some(browser) => {
            // `$BROWSER` may be a list (`a:b`, as xdg-open reads it): the first is used.
            let first = browser.split(':').next().unwrap_or(&browser).to_string();
            tokio::process::Command::new(first)
        }
        None if cfg!(target_os = "macos") => tokio::process::Command::new("open"),
        None if cfg!(windows) => {
            let mut c = tokio::process::Command::new("cmd");
            c.args(["/C", "start", ""]);
            c
        }
        None => tokio::process::Command::new("xdg-open"),
    };
    command
        .arg(url)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null());
    match command.spawn() {
        Ok(mut child) => {
            tasks.spawn("browser opener", async move {
                tokio::select! {
                    _ = child.wait() => {}
                    () = stop.cancelled() => {}
                }
            });
        }
        Err(e) => tracing::warn!("could not start a browser for the sign-in URL: {e}"),
    }
}

/// Revokes a signed-out server's tokens at the authorization server's `revocation_endpoint`
/// (RFC 7009), refresh token first, where the metadata names one. Best effort: the credentials
/// are already deleted, and a failure is only logged.
pub(crate) async fn revoke(record: &Record) {
    let Some(endpoint) = record
        .metadata
        .additional_fields
        .get("revocation_endpoint")
        .and_then(|v| v.as_str())
    else {
        return;
    };
    let Ok(endpoint_url) = url::Url::parse(endpoint) else {
        return;
    };
    if endpoint_url.scheme() != "https" && !is_loopback(&endpoint_url) {
        return;
    }
    let tokens = serde_json::to_value(&record.credentials.token_response).unwrap_or_default();
    for (field, hint) in [
        ("refresh_token", "refresh_token"),
        ("access_token", "access_token"),
    ] {
        let Some(token) = tokens.get(field).and_then(|t| t.as_str()) else {
            continue;
        };
        let body = {
            let mut form = url::form_urlencoded::Serializer::new(String::new());
            form.append_pair("token", token)
                .append_pair("token_type_hint", hint)
                .append_pair("client_id", &record.credentials.client_id);
            if let Some(secret) = &record.client_secret {
                form.append_pair("client_secret", secret);
            }
            form.finish()
        };
        let sent = reqwest::Client::new()
            .post(endpoint_url.clone())
            .header("content-type", "application/x-www-form-urlencoded")
            .body(body)
            .timeout(Duration::from_secs(10))
            .send()
            .await;
        match sent {
            Ok(response) if response.status().is_success() => {}
            Ok(response) => tracing::warn!("token revocation answered {}", response.status()),
            Err(e) => tracing::warn!("token revocation failed: {}", e.without_url()),
        }
    }
}

/// rmcp's errors as one line; they never carry token values.
pub(crate) fn describe(error: AuthError) -> String {
    match error {
        AuthError::PkceUnsupported => {
            "the authorization server does not offer PKCE with S256, which MCP sign-in requires"
                .into()
        }
        AuthError::RegistrationFailed(reason) => format!(
            "client registration failed ({reason}); set `oauth.clientId` in the entry to use a pre-registered client"
        ),
        AuthError::TokenExchangeFailed(reason) => {
            format!("the token endpoint refused the authorization code: {reason}")
        }
        other => lowercase_first(&other.to_string()),
    }
}

/// `OAuth token exchange failed` → `oAuth...` would be wrong: acronyms keep their case.
fn lowercase_first(text: &str) -> String {
    let mut chars = text.chars();
    let acronym = text.chars().nth(1).is_some_and(char::is_uppercase);
    match chars.next() {
        Some(first) if !acronym => first.to_lowercase().chain(chars).collect(),
        _ => text.to_string(),
    }
}
