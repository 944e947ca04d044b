//! Sign-in (AUTH-*) against a real third-party authorization server: the official TypeScript
//! SDK's example `simpleStreamableHttp.js --oauth` (npm `@modelcontextprotocol/sdk`, installed
//! into `$WAVE_PEERS_DIR/sdk` by `scripts/install-peers.sh`), an MCP server that answers 401 and
//! runs its own in-memory authorization server with RFC 9728/8414 metadata, dynamic client
//! registration and PKCE; with `--oauth-strict` it accepts only tokens issued for its own URL
//! (RFC 8707). The "browser" is a `$BROWSER` script that fetches the authorization URL and
//! follows its redirects to our loopback callback, as a browser would.
//!
//! Runs in the peers group (`scripts/test-all.sh`). A missing SDK fails the test when `CI` is set.

use std::net::{Ipv4Addr, TcpStream};
use std::os::unix::fs::PermissionsExt;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::time::Duration;

use serde_json::{Value, json};
use wave_mcp_manager::{McpManager, Status};

use super::support::*;

/// `$WAVE_PEERS_DIR/sdk/.../simpleStreamableHttp.js`, or `None` (a failure under CI).
fn sdk_example() -> Option<PathBuf> {
    let dir = std::env::var_os("WAVE_PEERS_DIR").filter(|d| !d.is_empty());
    let path = dir.map(|d| {
        Path::new(&d).join(
            "sdk/node_modules/@modelcontextprotocol/sdk/dist/esm/examples/server/simpleStreamableHttp.js",
        )
    });
    match path.filter(|p| p.exists()) {
        Some(path) => Some(path),
        None if std::env::var_os("CI").is_some() => {
            panic!("the MCP TypeScript SDK is not installed (scripts/install-peers.sh)")
        }
        None => {
            eprintln!(
                "skipped: npm @modelcontextprotocol/sdk not installed (run scripts/install-peers.sh)"
            );
            None
        }
    }
}

/// The SDK example in its own process group, killed with it when dropped.
struct SdkServer {
    child: Child,
    url: String,
}

impl SdkServer {
    async fn start(example: &Path, strict: bool) -> SdkServer {
        let (mcp_port, auth_port) = (free_port(), free_port());
        let mut command = Command::new("node");
        command
            .arg(example)
            .arg(if strict { "--oauth-strict" } else { "--oauth" })
            .env("MCP_PORT", mcp_port.to_string())
            .env("MCP_AUTH_PORT", auth_port.to_string())
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .process_group(0);
        wave_mcp_testkit::dies_with_test(&mut command);
        if strict {
            command.arg("--oauth");
        }
        let child = command.spawn().expect("node");
        let up = eventually(Duration::from_secs(30), || {
            [mcp_port, auth_port]
                .iter()
                .all(|&p| TcpStream::connect((Ipv4Addr::LOCALHOST, p)).is_ok())
        })
        .await;
        assert!(up, "the SDK's OAuth example did not start listening");
        // It names itself `localhost` in its metadata: configure it the same way.
        SdkServer {
            child,
            url: format!("http://localhost:{mcp_port}/mcp"),
        }
    }

    fn pid(&self) -> u32 {
        self.child.id()
    }
}

impl Drop for SdkServer {
    fn drop(&mut self) {
        let group = nix::unistd::Pid::from_raw(self.child.id() as i32);
        let _ = nix::sys::signal::killpg(group, nix::sys::signal::Signal::SIGKILL);
        let _ = self.child.wait();
    }
}

/// The stored access token of the only signed-in server.
fn stored_access_token(sandbox: &Sandbox) -> String {
    let file: Value =
        serde_json::from_slice(&std::fs::read(credentials_file(sandbox)).unwrap()).unwrap();
    let servers = file["servers"].as_object().unwrap();
    assert_eq!(servers.len(), 1, "one signed-in server: {servers:?}");
    let record = servers.values().next().unwrap();
    record["credentials"]["token_response"]["access_token"]
        .as_str()
        .unwrap()
        .to_string()
}

/// AUTH-1: a 401 makes the server `needs-auth` with a reason that says how to sign in; a turn's
/// on-demand dial never opens a browser and does not retry.
#[tokio::test]
async fn auth1_unauthorized_server_is_needs_auth_and_a_turn_opens_no_browser() {
    let Some(example) = sdk_example() else { return };
    let sdk = SdkServer::start(&example, false).await;
    let sandbox = Sandbox::new();
    sandbox.write_project(json!({ "sdk": { "type": "http", "url": sdk.url } }));
    let manager = McpManager::new(sandbox.options(Value::Null));
    manager
        .start_turn_dials()
        .expect("one dial")
        .settled()
        .await;
    let row = server(&manager, "sdk");
    assert_eq!(row.status, Status::NeedsAuth);
    let reason = row.error.unwrap();
    assert!(reason.contains("wave-mcp login sdk"), "{reason}");
    assert!(!row.signed_in);
    assert!(manager.start_turn_dials().is_none(), "no retry loop");
    assert_eq!(browser_runs(&sandbox), 0);
    manager.cleanup().await;

    let listed = cli(&sandbox, &["tools", "sdk"], &[]);
    assert!(!listed.status.success());
    assert!(
        text(&listed).contains("wave-mcp login sdk"),
        "{}",
        text(&listed)
    );
    drop(sdk);
}

/// AUTH-2, AUTH-3, AUTH-5, AUTH-6: `wave-mcp login` signs in through the browser and connects;
/// the tokens sit in a 0600 file in a 0700 directory; later processes use them without a
/// browser; no output, cache or snapshot shows a token; `logout` deletes them and the next
/// dial finds the server `needs-auth`.
#[tokio::test]
async fn auth2_auth3_auth5_auth6_login_use_across_processes_then_logout() {
    let Some(example) = sdk_example() else { return };
    let sdk = SdkServer::start(&example, true).await;
    let sandbox = Sandbox::new();
    sandbox.write_project(json!({ "sdk": { "type": "http", "url": sdk.url } }));
    let browser = browser(&sandbox, true);
    let browser = browser.as_str();

    let login = cli(
        &sandbox,
        &["login", "sdk"],
        &[("BROWSER", browser), ("WAVE_LOG", "trace")],
    );
    let login_out = text(&login);
    assert!(login.status.success(), "{login_out}");
    assert!(login_out.contains("signed in to sdk"), "{login_out}");
    // AUTH-2: the URL is printed too, with PKCE S256 and the resource of RFC 8707.
    assert!(
        login_out.contains("code_challenge_method=S256"),
        "{login_out}"
    );
    assert!(
        login_out.contains("resource=http%3A%2F%2Flocalhost"),
        "{login_out}"
    );
    assert_eq!(browser_runs(&sandbox), 1);

    // AUTH-3: private file and directory.
    let file = credentials_file(&sandbox);
    let mode = |p: &Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode(&file), 0o600);
    assert_eq!(mode(file.parent().unwrap()), 0o700);
    let token = stored_access_token(&sandbox);

    // AUTH-3: another process, no browser.
    let tools = cli(
        &sandbox,
        &["tools", "sdk", "--json"],
        &[("WAVE_LOG", "trace")],
    );
    let tools_out = text(&tools);
    assert!(tools.status.success(), "{tools_out}");
    let listed: Value = serde_json::from_slice(&tools.stdout).unwrap();
    assert_eq!(listed["server"]["status"], "connected");
    assert_eq!(listed["server"]["signedIn"], true);
    assert!(listed["tools"].as_array().unwrap().len() > 1);
    assert_eq!(browser_runs(&sandbox), 1, "no second browser");

    // AUTH-3 in the library, as the sidecar uses it: a turn's dial connects silently.
    let manager = McpManager::new(sandbox.options(Value::Null));
    manager
        .start_turn_dials()
        .expect("one dial")
        .settled()
        .await;
    assert_eq!(server_status(&manager), Status::Connected);
    assert!(server(&manager, "sdk").signed_in);
    manager.cleanup().await;

    // AUTH-6: the token is nowhere but the credential file, even at trace level.
    let cache = std::fs::read_to_string(sandbox.home.join(".wave/mcp-tools-cache.json")).unwrap();
    let servers = cli(&sandbox, &["servers", "--json"], &[("WAVE_LOG", "trace")]);
    for (what, haystack) in [
        ("login output", login_out.as_str()),
        ("tools output", tools_out.as_str()),
        ("servers output", &text(&servers)),
        ("tool cache", cache.as_str()),
    ] {
        assert!(
            !haystack.contains(&token),
            "the access token leaked into the {what}"
        );
    }

    // AUTH-5: sign out, then the next dial needs a sign-in again.
    let logout = cli(&sandbox, &["logout", "sdk"], &[]);
    assert!(logout.status.success(), "{}", text(&logout));
    let file: Value = serde_json::from_slice(&std::fs::read(&file).unwrap()).unwrap();
    assert_eq!(file["servers"], json!({}));
    let manager = McpManager::new(sandbox.options(Value::Null));
    manager
        .start_turn_dials()
        .expect("one dial")
        .settled()
        .await;
    assert_eq!(server_status(&manager), Status::NeedsAuth);
    assert!(!server(&manager, "sdk").signed_in);
    manager.cleanup().await;

    let pid = sdk.pid();
    drop(sdk);
    assert!(!alive(pid), "the SDK server outlived the test");
}

fn server_status(manager: &McpManager) -> Status {
    status(manager, "sdk")
}

/// AUTH-2 in the library: sign-in through `McpManager::login` (as the sidecar runs it) shows the
/// URL to the host first; a host that opened it keeps the sidecar from starting `$BROWSER`;
/// a second sign-in of the same server cancels the first.
#[tokio::test]
async fn auth2_login_shows_the_url_to_the_host_and_a_second_login_cancels_the_first() {
    let Some(example) = sdk_example() else { return };
    let sdk = SdkServer::start(&example, false).await;
    let sandbox = Sandbox::new();
    sandbox.write_project(json!({ "sdk": { "type": "http", "url": sdk.url } }));
    let manager = McpManager::new(sandbox.options(Value::Null));

    // A host that "opens" nothing and answers true: the sign-in waits for a callback.
    let shown = Arc::new(std::sync::Mutex::new(Vec::<String>::new()));
    let recorder = shown.clone();
    let waiting: wave_mcp_manager::UrlOpener = Arc::new(move |url: String| {
        recorder.lock().unwrap().push(url);
        Box::pin(async { true })
    });
    let first = {
        let manager = manager.clone();
        tokio::spawn(async move { manager.login("sdk", waiting, Duration::from_secs(60)).await })
    };
    let asked = eventually(Duration::from_secs(20), || {
        !shown.lock().unwrap().is_empty()
    })
    .await;
    assert!(asked, "the host was never shown the URL");

    // The second host fetches the URL, as a browser would.
    let follow: wave_mcp_manager::UrlOpener = Arc::new(|url: String| {
        Box::pin(async move {
            let fetched = tokio::process::Command::new("curl")
                .args(["-sS", "-L", "-o", "/dev/null", &url])
                .status()
                .await;
            fetched.is_ok_and(|s| s.success())
        })
    });
    manager
        .login("sdk", follow, Duration::from_secs(60))
        .await
        .expect("second sign-in");
    let cancelled = first.await.unwrap().unwrap_err();
    assert!(
        matches!(cancelled, wave_mcp_manager::Error::SignInCancelled(_)),
        "{cancelled}"
    );
    assert_eq!(server_status(&manager), Status::Connected);
    assert!(server(&manager, "sdk").signed_in);
    assert_eq!(
        browser_runs(&sandbox),
        0,
        "the host opened the URL: no $BROWSER"
    );
    manager.cleanup().await;
    drop(sdk);
}

/// AUTH-7: an entry with its own `Authorization` header uses it and never starts OAuth: a 401 is
/// that header's `error`, and `login` refuses.
#[tokio::test]
async fn auth7_own_authorization_header_never_starts_oauth() {
    let Some(example) = sdk_example() else { return };
    let sdk = SdkServer::start(&example, false).await;
    let sandbox = Sandbox::new();
    sandbox.write_project(json!({ "sdk": {
        "type": "http", "url": sdk.url,
        "headers": { "Authorization": "Bearer not-a-token" }
    } }));
    let manager = McpManager::new(sandbox.options(Value::Null));
    manager
        .start_turn_dials()
        .expect("one dial")
        .settled()
        .await;
    // The SDK answers a token it does not know with 500: the header was used, and no sign-in.
    assert_eq!(status(&manager, "sdk"), Status::Error);
    manager.cleanup().await;

    let browser = browser(&sandbox, true);
    let login = cli(
        &sandbox,
        &["login", "sdk"],
        &[("BROWSER", browser.as_str())],
    );
    assert!(!login.status.success());
    assert!(
        text(&login).contains("own `Authorization` header"),
        "{}",
        text(&login)
    );
    assert_eq!(browser_runs(&sandbox), 0);
    assert!(!credentials_file(&sandbox).exists());
    drop(sdk);
}

// ---- SPEC-2, SPEC-4 against our own authorization server (suite/oauth_fixture.rs) ----------

use super::oauth_fixture::{Fixture, Iss, Options};

fn fixture_project(sandbox: &Sandbox, fixture: &Fixture, oauth: Option<Value>) {
    let mut entry = json!({ "type": "http", "url": fixture.url() });
    if let Some(oauth) = oauth {
        entry["oauth"] = oauth;
    }
    sandbox.write_project(json!({ "s": entry }));
}

fn login_s(sandbox: &Sandbox) -> std::process::Output {
    let browser = browser(sandbox, true);
    cli(
        sandbox,
        &["login", "s"],
        &[("BROWSER", &browser), ("WAVE_LOGIN_TIMEOUT_SECS", "20")],
    )
}

/// SPEC-4: no Rust type name, no Debug dump in what the user reads.
fn assert_in_words(out: &str) {
    for bad in ["rmcp::", "WorkerTransport", "Transport [", "Some(", "{ "] {
        assert!(!out.contains(bad), "{bad:?} in: {out}");
    }
}

/// SPEC-2 (RFC 9207), an attack: the authorization response carries another issuer's `iss`
/// (a mix-up). The code is never exchanged, no token is stored, and the error says why.
#[tokio::test]
async fn spec_2_a_callback_with_a_forged_iss_yields_no_token() {
    let sandbox = Sandbox::new();
    let fixture = Fixture::start(Options {
        iss: Iss::Forged,
        ..Options::default()
    });
    fixture_project(&sandbox, &fixture, None);
    let output = login_s(&sandbox);
    let out = text(&output);
    assert!(!output.status.success(), "{out}");
    assert!(out.contains("sign-in to MCP server \"s\" failed"), "{out}");
    assert!(
        out.contains("attacker.example"),
        "names the wrong issuer: {out}"
    );
    assert!(
        fixture.requests_to("/token").is_empty(),
        "the code was exchanged"
    );
    assert!(!credentials_file(&sandbox).exists(), "a token was stored");
    assert_in_words(&out);
}

/// SPEC-2 (RFC 9207): the right `iss` is accepted (it is checked, not merely tolerated: the
/// forged case above fails on the same server).
#[tokio::test]
async fn spec_2_a_callback_with_the_right_iss_signs_in() {
    let sandbox = Sandbox::new();
    let fixture = Fixture::start(Options {
        iss: Iss::Right,
        ..Options::default()
    });
    fixture_project(&sandbox, &fixture, None);
    let output = login_s(&sandbox);
    assert!(output.status.success(), "{}", text(&output));
    let call = cli(&sandbox, &["call", "s", "write_note", "{}"], &[]);
    assert!(call.status.success(), "{}", text(&call));
}

/// SPEC-2, SPEC-4: a `403 insufficient_scope` on a call names the missing scope and asks for
/// sign-in; the next `login` requests the union of the granted and the new scopes; then the
/// call works. Sign-ins stop being offered after 3 step-ups of a server that keeps refusing.
#[tokio::test]
async fn spec_2_spec_4_step_up_names_the_scope_and_login_asks_for_the_union() {
    let sandbox = Sandbox::new();
    let fixture = Fixture::start(Options {
        call_scope: Some("write"),
        ..Options::default()
    });
    fixture_project(&sandbox, &fixture, None);
    assert!(login_s(&sandbox).status.success());
    let first = fixture.requests_to("/authorize");
    assert_eq!(first.len(), 1);
    assert_eq!(first[0].query["scope"], "basic");

    let refused = cli(&sandbox, &["call", "s", "write_note", "{}"], &[]);
    let out = text(&refused);
    assert!(!refused.status.success(), "{out}");
    assert!(out.contains("MCP server \"s\" needs sign-in"), "{out}");
    assert!(out.contains("`basic write`"), "names the scopes: {out}");
    assert!(out.contains("insufficient_scope"), "{out}");
    assert!(out.contains("wave-mcp login s"), "{out}");
    assert_in_words(&out);

    assert!(login_s(&sandbox).status.success());
    let second = fixture.requests_to("/authorize");
    assert_eq!(second.len(), 2);
    let mut asked: Vec<&str> = second[1].query["scope"].split(' ').collect();
    asked.sort_unstable();
    assert_eq!(asked, ["basic", "write"]);
    let call = cli(&sandbox, &["call", "s", "write_note", "{}"], &[]);
    assert!(call.status.success(), "{}", text(&call));
    assert!(
        text(&call).contains("noted with basic write"),
        "{}",
        text(&call)
    );
}

/// A host that fetches the authorization URL and follows its redirects, as a browser would.
fn following_opener() -> wave_mcp_manager::UrlOpener {
    Arc::new(|url: String| {
        Box::pin(async move {
            let fetched = tokio::process::Command::new("curl")
                .args(["-sS", "-L", "-o", "/dev/null", &url])
                .status()
                .await;
            fetched.is_ok_and(|s| s.success())
        })
    })
}

/// SPEC-2, SPEC-4 in the library (as the sidecar runs it): a `403 insufficient_scope` answered
/// to a `tools/call` of a connected server makes that server `needs-auth` in the snapshot, with
/// a reason that names the missing scope in words; `login` then asks for the union of the
/// granted and the new scopes, reconnects, and the same call works.
#[tokio::test]
async fn spec_2_a_tool_call_refused_for_scope_makes_the_server_needs_auth() {
    let sandbox = Sandbox::new();
    let fixture = Fixture::start(Options {
        call_scope: Some("write"),
        ..Options::default()
    });
    fixture_project(&sandbox, &fixture, None);
    let manager = McpManager::new(sandbox.options(Value::Null));
    manager
        .login("s", following_opener(), Duration::from_secs(60))
        .await
        .expect("first sign-in");
    assert_eq!(status(&manager, "s"), Status::Connected);
    assert_eq!(fixture.requests_to("/authorize")[0].query["scope"], "basic");

    let refused = manager
        .call_tool("mcp__s__write_note", None)
        .await
        .expect_err("the call lacks the `write` scope");
    assert!(
        matches!(refused, wave_mcp_manager::Error::NeedsSignIn { .. }),
        "{refused}"
    );
    let row = server(&manager, "s");
    assert_eq!(row.status, Status::NeedsAuth, "{:?}", row.error);
    let reason = row.error.expect("a reason");
    assert!(
        reason.contains("`basic write`"),
        "names the scopes: {reason}"
    );
    assert!(reason.contains("wave-mcp login s"), "{reason}");
    assert_in_words(&reason);

    manager
        .login("s", following_opener(), Duration::from_secs(60))
        .await
        .expect("step-up sign-in");
    let asked = fixture.requests_to("/authorize");
    assert_eq!(asked.len(), 2);
    let mut scopes: Vec<&str> = asked[1].query["scope"].split(' ').collect();
    scopes.sort_unstable();
    assert_eq!(scopes, ["basic", "write"]);
    assert_eq!(status(&manager, "s"), Status::Connected);
    let result = manager
        .call_tool("mcp__s__write_note", None)
        .await
        .expect("the call works with the new scope");
    let said = serde_json::to_string(&result.content).unwrap();
    assert!(said.contains("noted with basic write"), "{said}");
    manager.cleanup().await;
}

/// SPEC-2: a server that refuses every token with 403 is not an endless sign-in loop: after 3
/// step-up sign-ins, the error says signing in again will not help and `login` refuses.
#[tokio::test]
async fn spec_2_step_up_stops_after_three_sign_ins() {
    let sandbox = Sandbox::new();
    let fixture = Fixture::start(Options {
        always_refuse: true,
        ..Options::default()
    });
    fixture_project(&sandbox, &fixture, None);
    assert!(login_s(&sandbox).status.success());
    let mut last = String::new();
    for _ in 0..6 {
        let call = cli(&sandbox, &["call", "s", "write_note", "{}"], &[]);
        last = text(&call);
        assert!(!call.status.success(), "{last}");
        if !last.contains("wave-mcp login s") {
            break;
        }
        // The login's own connect succeeds (tools/list is allowed): it signs in.
        assert!(login_s(&sandbox).status.success());
    }
    assert!(last.contains("signing in again will not help"), "{last}");
    assert!(
        fixture.requests_to("/authorize").len() <= 4,
        "one first sign-in and at most 3 step-ups"
    );
    let again = login_s(&sandbox);
    assert!(!again.status.success());
    assert!(text(&again).contains("will not help"), "{}", text(&again));
    assert_in_words(&text(&again));
}

/// SPEC-2: the 2025-03-26 layout, done right (the case the conformance suite's 0.1.16 mock gets
/// wrong, docs/performance.md): no protected-resource metadata, RFC 8414 metadata at the root
/// with the bare origin as issuer and endpoints under `/oauth`. The advertised endpoints are
/// used, not the defaults.
#[tokio::test]
async fn spec_2_2025_03_26_metadata_at_the_root_is_used() {
    let sandbox = Sandbox::new();
    let fixture = Fixture::start(Options {
        march_2025: true,
        ..Options::default()
    });
    fixture_project(&sandbox, &fixture, None);
    let output = login_s(&sandbox);
    assert!(output.status.success(), "{}", text(&output));
    assert_eq!(fixture.requests_to("/oauth/register").len(), 1);
    assert_eq!(fixture.requests_to("/oauth/authorize").len(), 1);
    assert_eq!(fixture.requests_to("/oauth/token").len(), 1);
    assert!(fixture.requests_to("/authorize").is_empty());
    let call = cli(&sandbox, &["call", "s", "write_note", "{}"], &[]);
    assert!(call.status.success(), "{}", text(&call));
}

/// SPEC-2: `client_credentials` with a client secret: no `login`, no browser; the dial gets the
/// token itself (client_secret_basic) and nothing is written to the credential file.
#[tokio::test]
async fn spec_2_client_credentials_dial_gets_its_token_without_a_browser() {
    let sandbox = Sandbox::new();
    let fixture = Fixture::start(Options::default());
    fixture_project(
        &sandbox,
        &fixture,
        Some(
            json!({ "grant": "client_credentials", "clientId": "machine", "clientSecret": "s3cret" }),
        ),
    );
    let call = cli(&sandbox, &["call", "s", "write_note", "{}"], &[]);
    let out = text(&call);
    assert!(call.status.success(), "{out}");
    let tokens = fixture.requests_to("/token");
    assert_eq!(tokens.len(), 1);
    assert_eq!(tokens[0].form()["grant_type"], "client_credentials");
    let basic = tokens[0].headers["authorization"].clone();
    assert!(basic.starts_with("Basic "), "{basic}");
    assert!(
        fixture.requests_to("/authorize").is_empty(),
        "no browser flow"
    );
    assert!(!credentials_file(&sandbox).exists());
    assert!(!out.contains("s3cret"), "the secret leaked: {out}");
}

/// SPEC-2: a bad `oauth` object is an error naming the server's field in words.
#[tokio::test]
async fn spec_2_a_machine_grant_without_its_secret_names_the_field() {
    let sandbox = Sandbox::new();
    let fixture = Fixture::start(Options::default());
    fixture_project(
        &sandbox,
        &fixture,
        Some(json!({ "grant": "client_credentials", "clientId": "machine" })),
    );
    let output = cli(&sandbox, &["tools", "s"], &[]);
    let out = text(&output);
    assert!(!output.status.success(), "{out}");
    assert!(
        out.contains("mcpServers.s.oauth: grant \"client_credentials\" needs `clientSecret` or `privateKeyPath`"),
        "{out}"
    );
    assert!(out.contains(".mcp.json"), "names the file: {out}");
}

/// SPEC-2: a registered client id is reused by a later sign-in at the same authorization
/// server, and never presented to another one: when the server's authorization server is not
/// the one the stored client was registered at, sign-in registers anew.
#[tokio::test]
async fn spec_2_a_registered_client_is_reused_only_at_its_authorization_server() {
    let sandbox = Sandbox::new();
    let fixture = Fixture::start(Options::default());
    fixture_project(&sandbox, &fixture, None);
    assert!(login_s(&sandbox).status.success());
    assert!(login_s(&sandbox).status.success());
    assert_eq!(
        fixture.requests_to("/register").len(),
        1,
        "the second sign-in reuses the client"
    );
    // The stored client now says it was registered at another authorization server.
    let path = credentials_file(&sandbox);
    let mut stored: Value = serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
    let record = stored["servers"]
        .as_object_mut()
        .unwrap()
        .values_mut()
        .next()
        .unwrap();
    record["metadata"]["issuer"] = json!("https://other-as.example");
    record["metadata"]["token_endpoint"] = json!("https://other-as.example/token");
    std::fs::write(&path, serde_json::to_vec(&stored).unwrap()).unwrap();
    assert!(login_s(&sandbox).status.success());
    assert_eq!(
        fixture.requests_to("/register").len(),
        2,
        "a client of another authorization server is not presented here"
    );
}
