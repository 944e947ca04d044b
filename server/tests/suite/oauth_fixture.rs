//! A real HTTP MCP server with its own authorization server on 127.0.0.1 (one origin), for the
//! sign-in cases of SPEC-2 that the conformance suite cannot give us as it should: RFC 9207
//! `iss` on the authorization response (right or forged), scope step-up (`403
//! insufficient_scope`), the 2025-03-26 layout (no protected-resource metadata, metadata at the
//! root with its issuer the bare origin, endpoints under `/oauth`), and `client_credentials`.
//! Every request is logged for the tests' checks. Plain threads and `std::net`: no mocks.

use std::collections::HashMap;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use serde_json::{Value, json};

/// What the authorization response carries as `iss` (RFC 9207).
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Iss {
    /// Not advertised, not sent.
    Absent,
    /// Advertised and sent, equal to the issuer.
    Right,
    /// Advertised and sent, another issuer's (a mix-up attack).
    Forged,
}

#[derive(Clone)]
pub struct Options {
    pub iss: Iss,
    /// The 2025-03-26 layout: no RFC 9728 metadata, RFC 8414 metadata at the root (issuer the
    /// bare origin, as §3.3 requires), endpoints under `/oauth`.
    pub march_2025: bool,
    /// The scope `tools/call` needs beyond `basic` (a step-up), if any.
    pub call_scope: Option<&'static str>,
    /// The scopes that are never enough: `tools/call` always answers 403 (a server that keeps
    /// refusing).
    pub always_refuse: bool,
}

impl Default for Options {
    fn default() -> Options {
        Options {
            iss: Iss::Absent,
            march_2025: false,
            call_scope: None,
            always_refuse: false,
        }
    }
}

#[derive(Clone, Debug)]
pub struct Request {
    pub method: String,
    pub path: String,
    pub query: HashMap<String, String>,
    pub headers: HashMap<String, String>,
    pub body: String,
}

impl Request {
    pub fn form(&self) -> HashMap<String, String> {
        url::form_urlencoded::parse(self.body.as_bytes())
            .into_owned()
            .collect()
    }
}

pub struct Fixture {
    pub base: String,
    log: Arc<Mutex<Vec<Request>>>,
    stop: Arc<AtomicBool>,
}

impl Fixture {
    pub fn start(options: Options) -> Fixture {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let base = format!("http://127.0.0.1:{}", listener.local_addr().unwrap().port());
        let fixture = Fixture {
            base: base.clone(),
            log: Arc::default(),
            stop: Arc::default(),
        };
        let (log, stop) = (fixture.log.clone(), fixture.stop.clone());
        std::thread::spawn(move || {
            for stream in listener.incoming() {
                if stop.load(Ordering::SeqCst) {
                    return;
                }
                let Ok(stream) = stream else { continue };
                let (log, options, base) = (log.clone(), options.clone(), base.clone());
                std::thread::spawn(move || serve(stream, &options, &base, &log));
            }
        });
        fixture
    }

    pub fn url(&self) -> String {
        format!("{}/mcp", self.base)
    }

    pub fn requests(&self) -> Vec<Request> {
        self.log.lock().unwrap().clone()
    }

    pub fn requests_to(&self, path: &str) -> Vec<Request> {
        self.requests()
            .into_iter()
            .filter(|r| r.path == path)
            .collect()
    }
}

impl Drop for Fixture {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        let _ = TcpStream::connect(self.base.trim_start_matches("http://"));
    }
}

fn serve(mut stream: TcpStream, options: &Options, base: &str, log: &Mutex<Vec<Request>>) {
    let Some(request) = read_request(&stream) else {
        return;
    };
    log.lock().unwrap().push(request.clone());
    let (status, headers, body) = route(&request, options, base);
    let mut head = format!(
        "HTTP/1.1 {status}\r\ncontent-length: {}\r\nconnection: close\r\n",
        body.len()
    );
    for (k, v) in headers {
        head.push_str(&format!("{k}: {v}\r\n"));
    }
    head.push_str("\r\n");
    let _ = stream.write_all(head.as_bytes());
    let _ = stream.write_all(body.as_bytes());
}

fn read_request(stream: &TcpStream) -> Option<Request> {
    let mut reader = BufReader::new(stream);
    let mut line = String::new();
    reader.read_line(&mut line).ok()?;
    let mut parts = line.split_whitespace();
    let (method, target) = (parts.next()?.to_string(), parts.next()?.to_string());
    let mut headers = HashMap::new();
    loop {
        let mut header = String::new();
        reader.read_line(&mut header).ok()?;
        let header = header.trim_end();
        if header.is_empty() {
            break;
        }
        let (k, v) = header.split_once(':')?;
        headers.insert(k.trim().to_ascii_lowercase(), v.trim().to_string());
    }
    let length: usize = headers
        .get("content-length")
        .and_then(|v| v.parse().ok())
        .unwrap_or(0);
    let mut body = vec![0; length];
    reader.read_exact(&mut body).ok()?;
    let url = url::Url::parse(&format!("http://x{target}")).ok()?;
    Some(Request {
        method,
        path: url.path().to_string(),
        query: url.query_pairs().into_owned().collect(),
        headers,
        body: String::from_utf8_lossy(&body).into_owned(),
    })
}

type Response = (&'static str, Vec<(&'static str, String)>, String);

fn json_response(status: &'static str, value: Value) -> Response {
    let headers = vec![("content-type", "application/json".to_string())];
    (status, headers, value.to_string())
}

fn not_found() -> Response {
    ("404 Not Found", Vec::new(), String::new())
}

fn route(request: &Request, options: &Options, base: &str) -> Response {
    let prefix = if options.march_2025 { "/oauth" } else { "" };
    let path = request.path.as_str();
    match (request.method.as_str(), path) {
        ("GET", "/.well-known/oauth-protected-resource/mcp") if !options.march_2025 => {
            json_response(
                "200 OK",
                json!({
                    "resource": format!("{base}/mcp"),
                    "authorization_servers": [base],
                    "scopes_supported": ["basic", "write"],
                }),
            )
        }
        ("GET", "/.well-known/oauth-authorization-server") => json_response(
            "200 OK",
            json!({
                "issuer": base,
                "authorization_endpoint": format!("{base}{prefix}/authorize"),
                "token_endpoint": format!("{base}{prefix}/token"),
                "registration_endpoint": format!("{base}{prefix}/register"),
                "response_types_supported": ["code"],
                "grant_types_supported": ["authorization_code", "refresh_token", "client_credentials"],
                "code_challenge_methods_supported": ["S256"],
                "token_endpoint_auth_methods_supported": ["none", "client_secret_basic"],
                "authorization_response_iss_parameter_supported": options.iss != Iss::Absent,
            }),
        ),
        ("POST", p) if p == format!("{prefix}/register") => {
            let body: Value = serde_json::from_str(&request.body).unwrap_or_default();
            json_response(
                "201 Created",
                json!({
                    "client_id": "fixture-client",
                    "redirect_uris": body["redirect_uris"],
                    "token_endpoint_auth_method": "none",
                }),
            )
        }
        ("GET", p) if p == format!("{prefix}/authorize") => {
            let q = |k: &str| request.query.get(k).cloned().unwrap_or_default();
            let mut to = url::Url::parse(&q("redirect_uri")).unwrap();
            let scope = q("scope");
            to.query_pairs_mut()
                .append_pair("code", &format!("code:{scope}"))
                .append_pair("state", &q("state"));
            match options.iss {
                Iss::Absent => {}
                Iss::Right => drop(to.query_pairs_mut().append_pair("iss", base)),
                Iss::Forged => drop(
                    to.query_pairs_mut()
                        .append_pair("iss", "https://attacker.example"),
                ),
            }
            (
                "302 Found",
                vec![("location", to.to_string())],
                String::new(),
            )
        }
        ("POST", p) if p == format!("{prefix}/token") => {
            let form = request.form();
            let scope = match form.get("grant_type").map(String::as_str) {
                Some("authorization_code") => form
                    .get("code")
                    .and_then(|c| c.strip_prefix("code:"))
                    .unwrap_or_default()
                    .to_string(),
                Some("client_credentials") if request.headers.contains_key("authorization") => {
                    form.get("scope").cloned().unwrap_or_else(|| "basic".into())
                }
                _ => {
                    return json_response("400 Bad Request", json!({"error": "invalid_grant"}));
                }
            };
            json_response(
                "200 OK",
                json!({
                    "access_token": format!("token:{}", scope.replace(' ', ",")),
                    "token_type": "Bearer",
                    "expires_in": 3600,
                    "scope": scope,
                }),
            )
        }
        ("POST", "/mcp") => mcp(request, options, base),
        ("GET", "/mcp") | ("DELETE", "/mcp") => {
            ("405 Method Not Allowed", Vec::new(), String::new())
        }
        _ => not_found(),
    }
}

fn mcp(request: &Request, options: &Options, base: &str) -> Response {
    let message: Value = serde_json::from_str(&request.body).unwrap_or_default();
    let method = message["method"].as_str().unwrap_or_default();
    let id = message["id"].clone();
    if method.starts_with("notifications/") {
        return ("202 Accepted", Vec::new(), String::new());
    }
    // A 2025-06-18 server: no `server/discover` (the client falls back to `initialize`, SPEC-1).
    if method == "server/discover" {
        return json_response(
            "200 OK",
            json!({"jsonrpc": "2.0", "id": id, "error": {
                "code": -32601, "message": "Method not found: server/discover",
            }}),
        );
    }
    if method == "initialize" {
        return json_response(
            "200 OK",
            json!({"jsonrpc": "2.0", "id": id, "result": {
                "protocolVersion": "2025-06-18",
                "capabilities": {"tools": {}},
                "serverInfo": {"name": "oauth-fixture", "version": "1.0.0"},
            }}),
        );
    }
    let metadata = if options.march_2025 {
        String::new()
    } else {
        format!(", resource_metadata=\"{base}/.well-known/oauth-protected-resource/mcp\"")
    };
    let scopes: Vec<String> = match request
        .headers
        .get("authorization")
        .and_then(|a| a.strip_prefix("Bearer token:"))
    {
        Some(scopes) => scopes.split(',').map(str::to_string).collect(),
        None => {
            return (
                "401 Unauthorized",
                vec![(
                    "www-authenticate",
                    format!("Bearer scope=\"basic\"{metadata}"),
                )],
                json!({"error": "invalid_token"}).to_string(),
            );
        }
    };
    match method {
        "tools/list" => json_response(
            "200 OK",
            json!({"jsonrpc": "2.0", "id": id, "result": {"tools": [
                {"name": "write_note", "inputSchema": {"type": "object"}}
            ]}}),
        ),
        "tools/call" => {
            let needed = options.call_scope;
            let lacking = needed.is_some_and(|s| !scopes.iter().any(|have| have == s));
            if options.always_refuse || lacking {
                let wanted = match needed {
                    Some(extra) => format!("basic {extra}"),
                    None => "basic".into(),
                };
                return (
                    "403 Forbidden",
                    vec![(
                        "www-authenticate",
                        format!(
                            "Bearer error=\"insufficient_scope\", scope=\"{wanted}\"{metadata}"
                        ),
                    )],
                    json!({"error": "insufficient_scope"}).to_string(),
                );
            }
            json_response(
                "200 OK",
                json!({"jsonrpc": "2.0", "id": id, "result": {
                    "content": [{"type": "text", "text": format!("noted with {}", scopes.join(" "))}]
                }}),
            )
        }
        _ => json_response("200 OK", json!({"jsonrpc": "2.0", "id": id, "result": {}})),
    }
}
