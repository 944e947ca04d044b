//! Sign-in cases a third-party authorization server cannot produce here (AUTH-3, AUTH-4, AUTH-5,
//! AUTH-6, AUTH-8), against our own test authorization server `tests/peers/oauth_server.py`: a
//! real HTTP authorization server on 127.0.0.1 (RFC 8414 metadata, RFC 7591 registration, PKCE
//! S256, refresh-token rotation, RFC 7009 revocation, switchable faults, `/stats`) beside two MCP
//! resource servers "alpha" and "beta" on the official Python SDK that require its tokens. The
//! "browser" is a `$BROWSER` script that fetches the authorization URL and follows its redirects
//! to our loopback callback, as a browser would.
//!
//! Runs in the peers group (`scripts/test-all.sh`): it needs the SDK in `$WAVE_PEERS_DIR/venv`.
//! A missing venv fails every test when `CI` is set and skips it otherwise.

use std::future::Future;
use std::io::{BufRead, BufReader, Read};
use std::net::TcpStream;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::sync::Arc;
use std::time::Duration;

use serde_json::{Value, json};
use wave_mcp_manager::{McpManager, Status};
use wave_mcp_testkit::{FakeModel, call, say};

use super::support::*;

/// The venv's python and our script, or `None` (a failure under CI).
fn peer() -> Option<(PathBuf, PathBuf)> {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/peers/oauth_server.py");
    let python = std::env::var_os("WAVE_PEERS_DIR")
        .filter(|d| !d.is_empty())
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| Path::new(&h).join(".cache/wave-mcp-peers")))
        .map(|d| d.join("venv/bin/python"));
    match python.filter(|p| p.exists()) {
        Some(python) => Some((python, script)),
        None if std::env::var_os("CI").is_some() => {
            panic!("the PyPI mcp SDK venv is not installed (scripts/install-peers.sh)")
        }
        None => {
            eprintln!("skipped: the PyPI mcp venv is not installed (run scripts/install-peers.sh)");
            None
        }
    }
}

/// `oauth_server.py` in its own process group; killed when stopped or dropped.
struct OAuthPeer {
    child: Child,
    alpha: String,
    beta: String,
    issuer: String,
    stderr: PathBuf,
}

impl OAuthPeer {
    fn start(sandbox: &Sandbox, flags: &[&str]) -> Option<OAuthPeer> {
        let (python, script) = peer()?;
        let stderr = std::fs::File::create(sandbox.path("oauth_server.stderr")).unwrap();
        let mut command = Command::new(python);
        let mut child = wave_mcp_testkit::dies_with_test(&mut command)
            .arg(script)
            .args(flags)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(stderr)
            .process_group(0)
            .spawn()
            .expect("python");
        let stdout = child.stdout.take().unwrap();
        let (sender, ready) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let mut line = String::new();
            let _ = BufReader::new(stdout).read_line(&mut line);
            let _ = sender.send(line);
        });
        let line = ready
            .recv_timeout(wave_mcp_testkit::COMMAND_LIMIT)
            .unwrap_or_else(|_| {
                let _ = nix::sys::signal::kill(
                    nix::unistd::Pid::from_raw(child.id() as i32),
                    nix::sys::signal::Signal::SIGUSR1,
                );
                std::thread::sleep(Duration::from_millis(500));
                let stderr = std::fs::read_to_string(sandbox.path("oauth_server.stderr"));
                let _ = child.kill();
                panic!("oauth_server.py did not say it listens: {stderr:?}")
            });
        let ready: Value = serde_json::from_str(&line).unwrap_or_else(|e| {
            let stderr = std::fs::read_to_string(sandbox.path("oauth_server.stderr"));
            panic!("oauth_server.py did not start ({e}): {line:?} {stderr:?}")
        });
        assert_eq!(ready["pid"], child.id());
        let field = |k: &str| ready[k].as_str().unwrap().to_string();
        Some(OAuthPeer {
            alpha: field("a"),
            beta: field("b"),
            issuer: field("as"),
            stderr: sandbox.path("oauth_server.stderr"),
            child,
        })
    }

    fn request(&self, method: &str, path: &str) -> (u16, String) {
        wave_mcp_testkit::http_request(&self.issuer, method, path)
    }

    fn stats(&self) -> Value {
        let (status, body) = self.request("GET", "/stats");
        assert_eq!(status, 200, "{body}");
        serde_json::from_str(&body).unwrap()
    }

    /// Requests to the authorization server so far (every endpoint but `/stats`).
    fn as_requests(&self) -> u64 {
        self.stats()["as_requests"].as_u64().unwrap()
    }

    fn fault(&self, name: &str) {
        let (status, body) = self.request("POST", &format!("/fault?name={name}&on=1"));
        assert_eq!(status, 200, "{body}");
    }

    fn set(&self, name: &str, value: u64) {
        let (status, body) = self.request("POST", &format!("/fault?name={name}&value={value}"));
        assert_eq!(status, 200, "{body}");
    }

    /// Kills the process and checks through `/proc` that it is gone.
    async fn stop(mut self) {
        let pid = self.child.id();
        self.kill();
        assert_all_dead(&[pid]).await;
    }

    fn kill(&mut self) {
        let group = nix::unistd::Pid::from_raw(self.child.id() as i32);
        let _ = nix::sys::signal::killpg(group, nix::sys::signal::Signal::SIGKILL);
        let _ = self.child.wait();
    }
}

impl Drop for OAuthPeer {
    fn drop(&mut self) {
        if std::thread::panicking() {
            // A failing test shows where the authorization and resource servers were.
            let pid = nix::unistd::Pid::from_raw(self.child.id() as i32);
            let _ = nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGUSR1);
            std::thread::sleep(Duration::from_millis(500));
            let stacks = std::fs::read_to_string(&self.stderr).unwrap_or_default();
            eprintln!("--- oauth_server.py (stderr, stacks) ---\n{stacks}");
        }
        self.kill();
    }
}

/// Both resource servers as remote entries "alpha" and "beta" of the project.
fn configure(sandbox: &Sandbox, peer: &OAuthPeer) {
    sandbox.write_project(json!({
        "alpha": { "type": "http", "url": peer.alpha },
        "beta": { "type": "http", "url": peer.beta },
    }));
}

/// `wave-mcp login NAME` with the following browser; panics unless it signs in.
fn login(sandbox: &Sandbox, name: &str, extra: &[(&str, &str)]) -> String {
    let browser = browser(sandbox, true);
    let mut env = vec![("BROWSER", browser.as_str())];
    env.extend_from_slice(extra);
    let output = cli(sandbox, &["login", name], &env);
    let out = text(&output);
    assert!(output.status.success(), "login {name}: {out}");
    assert!(out.contains(&format!("signed in to {name}")), "{out}");
    out
}

fn credentials(sandbox: &Sandbox) -> Value {
    serde_json::from_slice(&std::fs::read(credentials_file(sandbox)).unwrap()).unwrap()
}

/// The stored token response of the server at `url`.
fn stored_tokens(sandbox: &Sandbox, url: &str) -> Value {
    credentials(sandbox)["servers"][url]["credentials"]["token_response"].clone()
}

/// Makes the stored access token of `url` look expired (received two hours ago), as the clock
/// would after its lifetime, without waiting for it.
fn age_token(sandbox: &Sandbox, url: &str) {
    let mut file = credentials(sandbox);
    let received = &mut file["servers"][url]["credentials"]["token_received_at"];
    let at = received.as_u64().expect("token_received_at");
    *received = json!(at - 7200);
    std::fs::write(
        credentials_file(sandbox),
        serde_json::to_vec_pretty(&file).unwrap(),
    )
    .unwrap();
}

async fn dial_status(sandbox: &Sandbox, name: &str) -> Status {
    let manager = McpManager::new(sandbox.options(Value::Null));
    let dials = manager.start_turn_dials().expect("dials");
    bounded(&manager, "the dials", dials.settled()).await;
    let status = status(&manager, name);
    bounded(&manager, "cleanup", manager.cleanup()).await;
    status
}

/// Awaits `future`, or fails the test naming `what` and the manager's background tasks still
/// running, where it hangs.
async fn bounded<T>(manager: &McpManager, what: &str, future: impl Future<Output = T>) -> T {
    match tokio::time::timeout(wave_mcp_testkit::COMMAND_LIMIT, future).await {
        Ok(output) => output,
        Err(_) => panic!(
            "{what} did not end; still running: {:?}",
            manager.running_background_tasks()
        ),
    }
}

/// AUTH-3: after sign-in, later processes (CLI `tools`, `call`, a library dial) use the stored
/// tokens silently: no browser, and not one request to the authorization server.
#[tokio::test]
async fn auth3_valid_token_is_used_across_processes_without_asking_the_authorization_server() {
    let sandbox = Sandbox::new();
    let Some(peer) = OAuthPeer::start(&sandbox, &[]) else {
        return;
    };
    configure(&sandbox, &peer);
    login(&sandbox, "alpha", &[]);
    assert_eq!(browser_runs(&sandbox), 1);
    let before = peer.as_requests();
    let presented_before = peer.stats()["presented"]["a"].as_array().unwrap().len();

    for args in [&["tools", "alpha"][..], &["call", "alpha", "whoami", "{}"]] {
        let output = cli(&sandbox, args, &[]);
        assert!(output.status.success(), "{args:?}: {}", text(&output));
    }
    let called = cli(&sandbox, &["call", "alpha", "whoami", "{}"], &[]);
    assert!(
        text(&called).contains("client-"),
        "whoami names the registered client: {}",
        text(&called)
    );
    assert_eq!(dial_status(&sandbox, "alpha").await, Status::Connected);

    assert_eq!(
        peer.as_requests(),
        before,
        "a valid token needs no authorization server: {}",
        peer.stats()
    );
    assert!(peer.stats()["presented"]["a"].as_array().unwrap().len() > presented_before);
    assert_eq!(browser_runs(&sandbox), 1, "no second browser");
    peer.stop().await;
}

/// AUTH-4: an expired access token is refreshed once; the rotated tokens are stored and the
/// next process uses them without another refresh.
#[tokio::test]
async fn auth4_expired_token_is_refreshed_once_and_the_rotated_tokens_are_stored() {
    let sandbox = Sandbox::new();
    let Some(peer) = OAuthPeer::start(&sandbox, &[]) else {
        return;
    };
    configure(&sandbox, &peer);
    login(&sandbox, "alpha", &[]);
    let old = stored_tokens(&sandbox, &peer.alpha);
    age_token(&sandbox, &peer.alpha);

    let tools = cli(&sandbox, &["tools", "alpha"], &[]);
    assert!(tools.status.success(), "{}", text(&tools));
    let stats = peer.stats();
    assert_eq!(stats["refresh_ok"], 1, "{stats}");
    assert_eq!(stats["refresh_reuse"], 0, "{stats}");
    let new = stored_tokens(&sandbox, &peer.alpha);
    assert_ne!(
        new["refresh_token"], old["refresh_token"],
        "rotated refresh token stored"
    );
    assert_ne!(
        new["access_token"], old["access_token"],
        "new access token stored"
    );

    let again = cli(&sandbox, &["tools", "alpha"], &[]);
    assert!(again.status.success(), "{}", text(&again));
    assert_eq!(
        peer.stats()["refresh_ok"],
        1,
        "a fresh token is not refreshed again"
    );
    assert_eq!(browser_runs(&sandbox), 1);
    peer.stop().await;
}

/// AUTH-4: two processes that find the access token expired at once spend each refresh token
/// once (the refresh lock; the loser rereads the store) and both connect. The authorization
/// server holds each refresh for a while so the two overlap; it counts any reuse of a rotated
/// refresh token.
#[tokio::test]
async fn auth4_two_processes_refreshing_at_once_spend_each_refresh_token_once() {
    let sandbox = Sandbox::new();
    let Some(peer) = OAuthPeer::start(&sandbox, &[]) else {
        return;
    };
    configure(&sandbox, &peer);
    login(&sandbox, "alpha", &[]);
    peer.set("refresh-delay-ms", 500);
    for round in 0..2 {
        age_token(&sandbox, &peer.alpha);
        // Both at once, each under the command-line watchdog: a run that hangs is killed after
        // COMMAND_LIMIT with its threads' backtraces, instead of holding the test forever.
        let outputs: Vec<Output> = std::thread::scope(|scope| {
            let runs: Vec<_> = (0..2)
                .map(|_| scope.spawn(|| cli(&sandbox, &["tools", "alpha"], &[])))
                .collect();
            runs.into_iter()
                .map(|run| {
                    run.join()
                        .unwrap_or_else(|panic| std::panic::resume_unwind(panic))
                })
                .collect()
        });
        for output in outputs {
            assert!(output.status.success(), "round {round}: {}", text(&output));
        }
        let stats = peer.stats();
        assert_eq!(
            stats["refresh_reuse"], 0,
            "a refresh token was spent twice: {stats}"
        );
        assert!(stats["refresh_ok"].as_u64().unwrap() > round, "{stats}");
    }
    // The stored refresh token is the newest one: one more refresh succeeds.
    age_token(&sandbox, &peer.alpha);
    let last = cli(&sandbox, &["tools", "alpha"], &[]);
    assert!(last.status.success(), "{}", text(&last));
    assert_eq!(peer.stats()["refresh_reuse"], 0);
    assert_eq!(browser_runs(&sandbox), 1);
    peer.stop().await;
}

/// AUTH-4: a refresh the authorization server refuses leaves the server `needs-auth` (CLI and
/// library), with the way to sign in again, and opens no browser.
#[tokio::test]
async fn auth4_failed_refresh_leaves_the_server_needs_auth() {
    let sandbox = Sandbox::new();
    let Some(peer) = OAuthPeer::start(&sandbox, &[]) else {
        return;
    };
    configure(&sandbox, &peer);
    login(&sandbox, "alpha", &[]);
    age_token(&sandbox, &peer.alpha);
    peer.fault("refresh-error");

    let tools = cli(&sandbox, &["tools", "alpha"], &[]);
    assert!(!tools.status.success());
    assert!(
        text(&tools).contains("wave-mcp login alpha"),
        "{}",
        text(&tools)
    );
    assert_eq!(dial_status(&sandbox, "alpha").await, Status::NeedsAuth);
    assert!(
        peer.stats()["requests"]["as:token:refresh_token"]
            .as_u64()
            .unwrap()
            >= 1
    );
    assert_eq!(browser_runs(&sandbox), 1, "a dial never opens a browser");
    peer.stop().await;
}

/// AUTH-5: `wave-mcp logout` revokes both tokens at the authorization server (RFC 7009),
/// deletes them, and the next dial finds the server `needs-auth`; the other server's sign-in
/// stays.
#[tokio::test]
async fn auth5_logout_revokes_at_the_authorization_server_and_the_next_dial_needs_auth() {
    let sandbox = Sandbox::new();
    let Some(peer) = OAuthPeer::start(&sandbox, &[]) else {
        return;
    };
    configure(&sandbox, &peer);
    login(&sandbox, "alpha", &[]);
    login(&sandbox, "beta", &[]);
    let tokens = stored_tokens(&sandbox, &peer.alpha);

    let logout = cli(&sandbox, &["logout", "alpha"], &[]);
    assert!(logout.status.success(), "{}", text(&logout));
    let stats = peer.stats();
    let revoked = stats["revoked"].as_array().unwrap();
    assert!(revoked.contains(&tokens["refresh_token"]), "{stats}");
    assert!(revoked.contains(&tokens["access_token"]), "{stats}");
    let file = credentials(&sandbox);
    assert!(file["servers"].get(&peer.alpha).is_none());
    assert!(
        file["servers"].get(&peer.beta).is_some(),
        "beta stays signed in"
    );

    assert_eq!(dial_status(&sandbox, "alpha").await, Status::NeedsAuth);
    assert_eq!(dial_status(&sandbox, "beta").await, Status::Connected);
    peer.stop().await;
}

/// AUTH-6: alpha's token is never sent to beta (nor beta's to alpha), and no token, code or
/// PKCE verifier appears in any output at `WAVE_LOG=trace` (login, tools, call, servers, a
/// refresh), in the snapshot JSON, or in the tool cache.
#[tokio::test]
async fn auth6_a_token_goes_only_to_its_server_and_never_into_any_output() {
    let sandbox = Sandbox::new();
    let Some(peer) = OAuthPeer::start(&sandbox, &[]) else {
        return;
    };
    configure(&sandbox, &peer);
    let trace = [("WAVE_LOG", "trace")];
    let mut outputs = vec![login(&sandbox, "alpha", &trace)];
    // beta before its own sign-in: a 401, and alpha's token must not be offered to it.
    let beta = cli(&sandbox, &["tools", "beta"], &trace);
    assert!(!beta.status.success());
    outputs.push(text(&beta));
    outputs.push(login(&sandbox, "beta", &trace));
    for args in [
        &["tools", "alpha"][..],
        &["tools", "beta"],
        &["call", "alpha", "whoami", "{}"],
        &["call", "beta", "whoami", "{}"],
        &["servers", "--json"],
    ] {
        let output = cli(&sandbox, args, &trace);
        assert!(output.status.success(), "{args:?}: {}", text(&output));
        outputs.push(text(&output));
    }
    age_token(&sandbox, &peer.alpha);
    let refreshed = cli(&sandbox, &["tools", "alpha", "--json"], &trace);
    assert!(refreshed.status.success(), "{}", text(&refreshed));
    outputs.push(text(&refreshed));
    assert_eq!(peer.stats()["refresh_ok"], 1);

    let manager = McpManager::new(sandbox.options(Value::Null));
    let dials = manager.start_turn_dials().expect("dials");
    bounded(&manager, "the dials", dials.settled()).await;
    assert_eq!(status(&manager, "alpha"), Status::Connected);
    assert_eq!(status(&manager, "beta"), Status::Connected);
    outputs.push(format!("{:?}", manager.snapshot()));
    bounded(&manager, "cleanup", manager.cleanup()).await;
    for entry in std::fs::read_dir(sandbox.home.join(".wave")).unwrap() {
        let path = entry.unwrap().path();
        if path.is_file() && path != credentials_file(&sandbox) {
            outputs.push(std::fs::read_to_string(&path).unwrap_or_default());
        }
    }

    let stats = peer.stats();
    let issued = stats["issued"].as_object().unwrap();
    for (server, own) in [("a", &peer.alpha), ("b", &peer.beta)] {
        for token in stats["presented"][server].as_array().unwrap() {
            let token = token.as_str().unwrap();
            if let Some(resource) = issued.get(token) {
                assert_eq!(
                    resource, own,
                    "server {server} was sent a token for {resource}"
                );
            }
        }
    }
    assert!(!stats["presented"]["b"].as_array().unwrap().is_empty());
    let secrets = stats["secrets"].as_array().unwrap();
    assert!(secrets.len() >= 8, "codes, verifiers and tokens: {stats}");
    for secret in secrets {
        let secret = secret.as_str().unwrap();
        for (i, output) in outputs.iter().enumerate() {
            if let Some(at) = output.find(secret) {
                let line_start = output[..at].rfind('\n').map_or(0, |n| n + 1);
                let line_end = output[at..].find('\n').map_or(output.len(), |n| at + n);
                panic!(
                    "a secret leaked into output #{i}: {}",
                    &output[line_start..line_end]
                );
            }
        }
    }
    peer.stop().await;
}

/// One AUTH-8 case: beta is signed in first; with `fault` on, `wave-mcp login alpha` fails with
/// an error naming alpha and containing `cause`, and the credential file is byte-for-byte what
/// it was. Returns the sandbox and the peer for the case's own checks.
async fn auth8_case(fault: Option<&str>, follow: bool, cause: &str) -> (Sandbox, OAuthPeer) {
    let sandbox = Sandbox::new();
    let peer = OAuthPeer::start(&sandbox, &[]).expect("peer present (checked by the caller)");
    configure(&sandbox, &peer);
    login(&sandbox, "beta", &[]);
    let before = std::fs::read(credentials_file(&sandbox)).unwrap();
    if let Some(fault) = fault {
        peer.fault(fault);
    }
    let browser = browser(&sandbox, follow);
    let output = cli(
        &sandbox,
        &["login", "alpha"],
        &[
            ("BROWSER", &browser),
            ("WAVE_LOGIN_TIMEOUT_SECS", "1"),
            ("WAVE_LOG", "trace"),
        ],
    );
    let out = text(&output);
    assert!(!output.status.success(), "{out}");
    assert!(
        out.contains("sign-in to MCP server \"alpha\" failed"),
        "names the server: {out}"
    );
    assert!(out.contains(cause), "cause {cause:?}: {out}");
    assert!(!out.to_lowercase().contains("panick"), "{out}");
    let after = std::fs::read(credentials_file(&sandbox)).unwrap();
    assert!(before == after, "the credential file changed");
    (sandbox, peer)
}

fn peer_present() -> bool {
    peer().is_some()
}

/// AUTH-8: no OAuth metadata at all (neither RFC 9728 nor RFC 8414) and no default endpoints
/// (SPEC-2: the 2025-03-26 `/register` at the server's origin is tried and fails): no browser.
#[tokio::test]
async fn auth8_no_metadata_fails_naming_the_server_and_keeps_credentials() {
    if !peer_present() {
        return;
    }
    let (sandbox, peer) = auth8_case(Some("no-metadata"), true, "no OAuth metadata").await;
    assert_eq!(
        browser_runs(&sandbox),
        1,
        "only beta's sign-in opened a browser"
    );
    peer.stop().await;
}

/// AUTH-8: the authorization server offers no PKCE S256: no browser.
#[tokio::test]
async fn auth8_no_s256_fails_naming_the_server_and_keeps_credentials() {
    if !peer_present() {
        return;
    }
    let (sandbox, peer) = auth8_case(Some("no-s256"), true, "S256").await;
    assert_eq!(browser_runs(&sandbox), 1);
    peer.stop().await;
}

/// AUTH-8: registration refused and no `oauth.clientId`: the error says to set it; then with
/// `oauth.clientId` the same server signs in without registering.
#[tokio::test]
async fn auth8_registration_refused_without_client_id_fails_and_keeps_credentials() {
    if !peer_present() {
        return;
    }
    let (sandbox, peer) = auth8_case(Some("refuse-registration"), true, "oauth.clientId").await;
    assert_eq!(browser_runs(&sandbox), 1);
    let registrations = peer.stats()["requests"]["as:register"].as_u64().unwrap();
    sandbox.write_project(json!({
        "alpha": { "type": "http", "url": peer.alpha, "oauth": { "clientId": "pre-configured" } },
        "beta": { "type": "http", "url": peer.beta },
    }));
    login(&sandbox, "alpha", &[]);
    assert_eq!(
        peer.stats()["requests"]["as:register"],
        registrations,
        "no registration"
    );
    assert_eq!(
        credentials(&sandbox)["servers"][&peer.alpha]["credentials"]["client_id"],
        "pre-configured"
    );
    peer.stop().await;
}

/// AUTH-8: the browser comes back with `error=access_denied`.
#[tokio::test]
async fn auth8_callback_with_error_fails_naming_the_server_and_keeps_credentials() {
    if !peer_present() {
        return;
    }
    let (_sandbox, peer) = auth8_case(Some("callback-error"), true, "access_denied").await;
    assert_eq!(
        peer.stats()["requests"]["as:token:authorization_code"],
        1,
        "beta's only"
    );
    peer.stop().await;
}

/// AUTH-8: the browser comes back with a `state` that is not ours: the code is never exchanged.
#[tokio::test]
async fn auth8_callback_with_wrong_state_fails_naming_the_server_and_keeps_credentials() {
    if !peer_present() {
        return;
    }
    let (_sandbox, peer) = auth8_case(Some("wrong-state"), true, "wrong `state`").await;
    assert_eq!(
        peer.stats()["requests"]["as:token:authorization_code"],
        1,
        "beta's only"
    );
    peer.stop().await;
}

/// AUTH-8: no callback before the timeout (`WAVE_LOGIN_TIMEOUT_SECS=1`, a browser that never
/// loads the page).
#[tokio::test]
async fn auth8_no_callback_before_the_timeout_fails_naming_the_server_and_keeps_credentials() {
    if !peer_present() {
        return;
    }
    let (sandbox, peer) = auth8_case(None, false, "no answer from the browser within 1 s").await;
    assert_eq!(
        browser_runs(&sandbox),
        2,
        "the URL was handed to the browser"
    );
    peer.stop().await;
}

/// AUTH-8: the token endpoint refuses the authorization code.
#[tokio::test]
async fn auth8_token_endpoint_error_fails_naming_the_server_and_keeps_credentials() {
    if !peer_present() {
        return;
    }
    let (_sandbox, peer) = auth8_case(Some("token-error"), true, "token endpoint").await;
    assert_eq!(peer.stats()["requests"]["as:token:authorization_code"], 2);
    peer.stop().await;
}

/// AUTH-8: the metadata names a token endpoint on plain `http:` off the loopback interface (an
/// unresolvable `.invalid` host): refused before any browser opens, nothing contacted.
#[tokio::test]
async fn auth8_plain_http_endpoint_off_loopback_fails_naming_the_server_and_keeps_credentials() {
    if !peer_present() {
        return;
    }
    let (sandbox, peer) =
        auth8_case(Some("insecure-endpoint"), true, "http://as.invalid/token").await;
    assert_eq!(browser_runs(&sandbox), 1, "no browser for alpha");
    assert_eq!(peer.stats()["requests"]["as:authorize"], 1, "beta's only");
    peer.stop().await;
}

/// AUTH-8 (callback server): garbage bytes, wrong paths, other methods, an oversized request
/// and half-sent lines reach the loopback callback before the real redirect: each gets an
/// answer or a closed connection, the callback keeps waiting, and the real redirect signs in.
#[tokio::test]
async fn auth8_callback_server_survives_malformed_requests_and_keeps_waiting() {
    let sandbox = Sandbox::new();
    let Some(peer) = OAuthPeer::start(&sandbox, &[]) else {
        return;
    };
    configure(&sandbox, &peer);
    let seed = faults_seed();
    let opener: wave_mcp_manager::UrlOpener = Arc::new(move |url: String| {
        Box::pin(async move {
            // redirect_uri=http%3A%2F%2F127.0.0.1%3A<port>%2Fcallback
            let marker = "redirect_uri=http%3A%2F%2F127.0.0.1%3A";
            let tail = &url[url.find(marker).expect("a loopback redirect_uri") + marker.len()..];
            let port: u16 = tail[..tail.find('%').unwrap()].parse().unwrap();
            let mut rng = Rng::new(seed);
            let mut probes: Vec<Vec<u8>> = vec![
                b"GET /favicon.ico HTTP/1.1\r\nHost: x\r\n\r\n".to_vec(),
                b"GET / HTTP/1.1\r\n\r\n".to_vec(),
                b"POST /callback?code=x&state=y HTTP/1.1\r\n\r\n".to_vec(),
                b"GET /callbackx?code=x HTTP/1.1\r\n\r\n".to_vec(),
                b"GET http://evil/callback?code=x HTTP/1.1\r\n\r\n".to_vec(),
                b"GET /callback?code=x SPDY/9\r\n\r\n".to_vec(),
                b"\r\n".to_vec(),
                b"GET /callb".to_vec(),
                vec![b'A'; 20 * 1024],
                vec![0xff, 0xfe, 0x00, b'\r', b'\n'],
            ];
            for _ in 0..6 {
                let len = 1 + rng.below(300);
                let mut bytes: Vec<u8> = (0..len).map(|_| rng.next_u64() as u8).collect();
                bytes.extend_from_slice(b"\r\n\r\n");
                probes.push(bytes);
            }
            for probe in probes {
                let probe_task = async {
                    let mut stream = tokio::net::TcpStream::connect(("127.0.0.1", port)).await?;
                    use tokio::io::{AsyncReadExt, AsyncWriteExt};
                    stream.write_all(&probe).await?;
                    stream.shutdown().await?;
                    let mut answer = Vec::new();
                    let _ = stream.read_to_end(&mut answer).await;
                    Ok::<Vec<u8>, std::io::Error>(answer)
                };
                let answer = tokio::time::timeout(Duration::from_secs(30), probe_task)
                    .await
                    .expect("the callback server answers or closes each connection");
                if let Ok(answer) = answer {
                    let head = String::from_utf8_lossy(&answer);
                    assert!(
                        answer.is_empty() || !head.starts_with("HTTP/1.1 200"),
                        "a malformed request was taken as the callback: {head}"
                    );
                }
            }
            let fetched = tokio::process::Command::new("curl")
                .args(["-sS", "-L", "-o", "/dev/null", &url])
                .status()
                .await;
            fetched.is_ok_and(|s| s.success())
        })
    });
    let manager = McpManager::new(sandbox.options(Value::Null));
    manager
        .login("alpha", opener, Duration::from_secs(120))
        .await
        .expect("the real callback signs in after the garbage");
    assert_eq!(status(&manager, "alpha"), Status::Connected);
    manager.cleanup().await;
    assert!(credentials(&sandbox)["servers"].get(&peer.alpha).is_some());
    peer.stop().await;
}

/// AUTH-8 (callback server): a connection that opens and sends nothing (a browser's speculative
/// preconnect) does not hold up the real redirect: the callback is answered while the idle
/// connection is still unanswered, and that one is only closed, never answered, once sign-in is
/// done.
#[tokio::test]
async fn auth8_callback_server_answers_the_redirect_while_another_connection_sits_idle() {
    let sandbox = Sandbox::new();
    let Some(peer) = OAuthPeer::start(&sandbox, &[]) else {
        return;
    };
    configure(&sandbox, &peer);
    let idle: Arc<std::sync::Mutex<Option<TcpStream>>> = Arc::default();
    let holder = idle.clone();
    let opener: wave_mcp_manager::UrlOpener = Arc::new(move |url: String| {
        let holder = holder.clone();
        Box::pin(async move {
            let marker = "redirect_uri=http%3A%2F%2F127.0.0.1%3A";
            let tail = &url[url.find(marker).expect("a loopback redirect_uri") + marker.len()..];
            let port: u16 = tail[..tail.find('%').unwrap()].parse().unwrap();
            let stream = TcpStream::connect(("127.0.0.1", port)).unwrap();
            *holder.lock().unwrap() = Some(stream);
            let fetched = tokio::process::Command::new("curl")
                .args(["-sS", "-L", "-o", "/dev/null", &url])
                .status()
                .await;
            fetched.is_ok_and(|s| s.success())
        })
    });
    let manager = McpManager::new(sandbox.options(Value::Null));
    manager
        .login("alpha", opener, Duration::from_secs(120))
        .await
        .expect("sign-in");
    let mut stream = idle.lock().unwrap().take().expect("the idle connection");
    let mut answer = Vec::new();
    let _ = stream.read_to_end(&mut answer);
    assert!(
        answer.is_empty(),
        "the idle connection was served before the redirect: {}",
        String::from_utf8_lossy(&answer)
    );
    assert_eq!(status(&manager, "alpha"), Status::Connected);
    manager.cleanup().await;
    peer.stop().await;
}

/// AUTH-6: a chat turn that calls a signed-in server's tool (after a refresh, at
/// `WAVE_LOG=trace`) leaves no token, code or verifier in its output, the transcript under
/// `~/.wave/sessions/`, or the requests sent to the model.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn auth6_chat_transcript_and_model_requests_carry_no_secret() {
    let sandbox = Sandbox::new();
    let Some(peer) = OAuthPeer::start(&sandbox, &[]) else {
        return;
    };
    configure(&sandbox, &peer);
    sandbox.allow_tool_calls();
    let mut outputs = vec![login(&sandbox, "alpha", &[("WAVE_LOG", "trace")])];
    age_token(&sandbox, &peer.alpha);
    // The testkit's fake model: the first answer calls `mcp__alpha__whoami`, the next reports.
    let model = FakeModel::start(vec![call("mcp__alpha__whoami", json!({})), say("done")]).await;
    let base_url = model.base_url.clone();
    let mut chat = tokio::process::Command::from(command(
        &sandbox,
        &["chat"],
        &[
            ("WAVE_LOG", "trace"),
            ("WAVE_BASE_URL", &base_url),
            ("WAVE_MODEL", "fake"),
            ("WAVE_API_KEY", "not-a-secret"),
        ],
    ));
    chat.stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = chat.spawn().unwrap();
    {
        use tokio::io::AsyncWriteExt;
        let mut stdin = child.stdin.take().unwrap();
        stdin.write_all(b"who am I?\n/exit\n").await.unwrap();
    }
    let output = child.wait_with_output().await.unwrap();
    let out = text(&output);
    assert!(output.status.success(), "{out}");
    assert!(out.contains("done"), "the turn ran: {out}");
    outputs.push(out);
    let sent: Vec<String> = model.requests().iter().map(Value::to_string).collect();
    assert!(
        sent.iter().any(|r| r.contains("client-")),
        "the tool result reached the model: {sent:?}"
    );
    outputs.extend(sent);
    let sessions = sandbox.home.join(".wave/sessions");
    let mut transcripts = 0;
    for entry in std::fs::read_dir(&sessions).expect("a transcript directory") {
        outputs.push(std::fs::read_to_string(entry.unwrap().path()).unwrap());
        transcripts += 1;
    }
    assert!(transcripts >= 1, "a transcript was written");
    let stats = peer.stats();
    assert_eq!(
        stats["refresh_ok"], 1,
        "the turn refreshed the token: {stats}"
    );
    for secret in stats["secrets"].as_array().unwrap() {
        let secret = secret.as_str().unwrap();
        for (i, output) in outputs.iter().enumerate() {
            assert!(!output.contains(secret), "a secret leaked into output #{i}");
        }
    }
    peer.stop().await;
}

/// AUTH-4: an access token the resource server rejects before its stored expiry (revoked at
/// the authorization server) is refreshed once and the dial goes on with the new token.
#[tokio::test]
async fn auth4_rejected_access_token_is_refreshed_once() {
    let sandbox = Sandbox::new();
    let Some(peer) = OAuthPeer::start(&sandbox, &[]) else {
        return;
    };
    configure(&sandbox, &peer);
    login(&sandbox, "alpha", &[]);
    let old = stored_tokens(&sandbox, &peer.alpha);
    let access = old["access_token"].as_str().unwrap();
    let (status, body) = peer.request("POST", &format!("/revoke?token={access}"));
    assert_eq!(status, 200, "{body}");
    assert!(
        peer.stats()["revoked"]
            .as_array()
            .unwrap()
            .iter()
            .any(|t| t == access)
    );

    let tools = cli(&sandbox, &["tools", "alpha"], &[]);
    assert!(tools.status.success(), "{}", text(&tools));
    let stats = peer.stats();
    assert_eq!(stats["refresh_ok"], 1, "{stats}");
    assert_ne!(
        stored_tokens(&sandbox, &peer.alpha)["access_token"],
        old["access_token"]
    );
    peer.stop().await;
}

/// AUTH-8: a failed sign-in again to a server that is already signed in (the token endpoint
/// refuses the new code) keeps its stored credentials byte for byte, and it still connects.
#[tokio::test]
async fn auth8_failed_second_sign_in_keeps_the_existing_sign_in() {
    let sandbox = Sandbox::new();
    let Some(peer) = OAuthPeer::start(&sandbox, &[]) else {
        return;
    };
    configure(&sandbox, &peer);
    login(&sandbox, "alpha", &[]);
    let before = std::fs::read(credentials_file(&sandbox)).unwrap();
    peer.fault("token-error");
    let browser = browser(&sandbox, true);
    let output = cli(&sandbox, &["login", "alpha"], &[("BROWSER", &browser)]);
    let out = text(&output);
    assert!(!output.status.success(), "{out}");
    assert!(
        out.contains("sign-in to MCP server \"alpha\" failed"),
        "{out}"
    );
    assert!(out.contains("token endpoint"), "{out}");
    assert!(before == std::fs::read(credentials_file(&sandbox)).unwrap());
    assert_eq!(dial_status(&sandbox, "alpha").await, Status::Connected);
    peer.stop().await;
}

/// The loopback port and the `state` of an authorization URL.
fn callback_of(url: &str) -> (u16, String) {
    let marker = "redirect_uri=http%3A%2F%2F127.0.0.1%3A";
    let tail = &url[url.find(marker).expect("a loopback redirect_uri") + marker.len()..];
    let port: u16 = tail[..tail.find('%').unwrap()].parse().unwrap();
    // As it stands in the URL (percent-encoded): the callback server decodes it back.
    let query = &url[url.find('?').expect("a query") + 1..];
    let state = query
        .split('&')
        .find_map(|pair| pair.strip_prefix("state="))
        .expect("a state")
        .to_string();
    (port, state)
}

/// Random bytes, printable or not, ending like an HTTP head.
fn garbage(rng: &mut Rng) -> Vec<u8> {
    let len = 1 + rng.below(400);
    let mut bytes: Vec<u8> = (0..len).map(|_| rng.next_u64() as u8).collect();
    if rng.chance(50) {
        bytes.extend_from_slice(b"\r\n\r\n");
    }
    bytes
}

/// Sends `request` to the callback server and reads what comes back (bounded).
async fn probe(port: u16, request: &[u8]) -> Vec<u8> {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let exchange = async {
        let mut stream = tokio::net::TcpStream::connect(("127.0.0.1", port)).await?;
        stream.write_all(request).await?;
        stream.shutdown().await?;
        let mut answer = Vec::new();
        let _ = stream.read_to_end(&mut answer).await;
        Ok::<Vec<u8>, std::io::Error>(answer)
    };
    tokio::time::timeout(Duration::from_secs(30), exchange)
        .await
        .expect("the callback server answers or closes each connection")
        .unwrap_or_default()
}

/// AUTH-8 (callback fuzz): seeded rounds of sign-in whose "browser" sends the loopback callback
/// random bytes and then a malformed `/callback` instead of the authorization server's redirect:
/// no query, no `state`, a wrong or broken `state`, the right `state` without a code or with a
/// made-up one, an `error` with a random description, duplicated parameters, a huge query. Each
/// sign-in fails with an error naming the server and its cause, no panic, the server stays
/// `needs-auth`, and the credential file is byte-for-byte what it was.
#[tokio::test]
async fn auth8_callback_fuzz_malformed_callbacks_fail_cleanly_and_keep_credentials() {
    let sandbox = Sandbox::new();
    let Some(peer) = OAuthPeer::start(&sandbox, &[]) else {
        return;
    };
    configure(&sandbox, &peer);
    login(&sandbox, "beta", &[]);
    let before = std::fs::read(credentials_file(&sandbox)).unwrap();
    let seed = faults_seed();
    let mut rng = Rng::new(seed);
    // (label, builds the request target from the right state, the cause the error names)
    type Case = (&'static str, fn(&str, &mut Rng) -> String, &'static str);
    let cases: Vec<Case> = vec![
        ("no query", |_, _| "/callback".into(), "wrong `state`"),
        (
            "no state",
            |_, _| "/callback?code=abc".into(),
            "wrong `state`",
        ),
        (
            "wrong state",
            |_, rng| format!("/callback?code=abc&state=s{}", rng.next_u64()),
            "wrong `state`",
        ),
        (
            "broken percent-encoding",
            |_, _| "/callback?code=%ZZ&state=%E0%A4%A".into(),
            "wrong `state`",
        ),
        (
            "state twice",
            |state, _| format!("/callback?state=forged&state={state}&code=abc"),
            "wrong `state`",
        ),
        (
            "no code",
            |state, _| format!("/callback?state={state}"),
            "no authorization code",
        ),
        (
            "made-up code",
            |state, rng| format!("/callback?state={state}&code=made-up-{}", rng.next_u64()),
            "token endpoint",
        ),
        (
            "error with a random description",
            |state, rng| {
                let junk: String = (0..rng.below(60))
                    .map(|_| char::from(b'a' + rng.below(26) as u8))
                    .collect();
                format!("/callback?error=server_error&error_description={junk}&state={state}")
            },
            "server_error",
        ),
        (
            "huge query",
            |state, _| format!("/callback?state={state}&code={}", "c".repeat(6000)),
            "token endpoint",
        ),
    ];
    for (label, target, cause) in cases {
        let probes: Vec<Vec<u8>> = (0..1 + rng.below(4)).map(|_| garbage(&mut rng)).collect();
        let salt = rng.next_u64();
        let opener: wave_mcp_manager::UrlOpener = Arc::new(move |url: String| {
            let probes = probes.clone();
            Box::pin(async move {
                let (port, state) = callback_of(&url);
                for bytes in probes {
                    probe(port, &bytes).await;
                }
                let mut rng = Rng::new(salt);
                let request = format!(
                    "GET {} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n\r\n",
                    target(&state, &mut rng)
                );
                probe(port, request.as_bytes()).await;
                true
            })
        });
        let manager = McpManager::new(sandbox.options(Value::Null));
        let outcome = manager
            .login("alpha", opener, Duration::from_secs(20))
            .await;
        let what = format!("{label} (seed {seed})");
        let error = outcome.expect_err(&what).to_string();
        assert!(
            error.contains("sign-in to MCP server \"alpha\" failed"),
            "{what}: {error}"
        );
        assert!(error.contains(cause), "{what}: cause {cause:?}: {error}");
        assert!(!error.to_lowercase().contains("panic"), "{what}: {error}");
        assert_ne!(status(&manager, "alpha"), Status::Connected, "{what}");
        manager.cleanup().await;
        let after = std::fs::read(credentials_file(&sandbox)).unwrap();
        assert!(before == after, "{what}: the credential file changed");
        eprintln!("callback fuzz: {label}: {error}");
    }
    peer.stop().await;
}
