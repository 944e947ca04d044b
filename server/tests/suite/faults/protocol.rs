//! Protocol fuzz, the sidecar over its real stdio: seeded random JSON-RPC messages, `$/` methods,
//! requests before `initialize`, and broken frames; every request gets one reply, nothing
//! panics, and no process is left.

use std::collections::HashMap;
use std::process::Stdio;
use std::time::Duration;

use serde_json::{Value, json};
use wave_mcp_protocol::{Direction, MESSAGES, METHODS};

use super::{assert_no_panic, env_count, initialize, spawn_logged};
use crate::suite::lsp_client::*;
use crate::suite::support::*;

/// Every request a client may send: the protocol crate's declared messages (client to server),
/// so a message added there is fuzzed without touching this file.
fn wave_methods() -> Vec<&'static str> {
    MESSAGES
        .iter()
        .filter(|m| m.direction == Direction::ClientToServer)
        .map(|m| m.method)
        .collect()
}

/// What the sidecar sends: a client sending it back is a mistake the sidecar must survive.
fn sidecar_methods() -> Vec<&'static str> {
    MESSAGES
        .iter()
        .filter(|m| m.direction == Direction::ServerToClient)
        .map(|m| m.method)
        .collect()
}

/// Methods a client may send by mistake: server-to-client notifications, LSP methods the sidecar
/// does not implement, nonsense.
const OTHER_METHODS: &[&str] = &[
    "wave/mcp/nope",
    "wave/",
    "textDocument/hover",
    "workspace/executeCommand",
    "$/cancelRequest",
    "$/setTrace",
    "initialized",
    "initialize",
    "",
    "é字🙂",
];

fn random_string(rng: &mut Rng) -> String {
    match rng.below(12) {
        0 => String::new(),
        1 => "a".into(),
        2 => "default".into(),
        3 => "nope".into(),
        4 => (*rng.pick(&["project", "user", "plugin", "constructor"])).into(),
        5 => "x".repeat(10_000),
        6 => "é字🙂\u{0}\u{202e}".into(),
        7 => "../../etc/passwd".into(),
        8 => "${HOME}".into(),
        9 => format!("session-{}", rng.below(5)),
        _ => (0..rng.below(20))
            .map(|_| char::from(b' ' + rng.below(95) as u8))
            .collect(),
    }
}

const KEYS: &[&str] = &[
    "name",
    "sessionId",
    "source",
    "text",
    "mcpServers",
    "workdir",
    "model",
    "home",
    "baseUrl",
    "id",
    "command",
    "args",
    "url",
    "type",
    "tool",
    "enabled",
    "turn",
    "action",
    "content",
    "opened",
    "query",
    "server",
    "scope",
    "version",
    "cursor",
];

fn random_value(rng: &mut Rng, depth: usize) -> Value {
    match rng.below(if depth == 0 { 6 } else { 9 }) {
        0 => Value::Null,
        1 => Value::Bool(rng.chance(50)),
        2 => json!(*rng.pick(&[0i64, -1, 1, 7, i64::MAX, i64::MIN])),
        3 => json!(*rng.pick(&[u64::MAX, 1u64 << 53])),
        4 => json!(*rng.pick(&[1.5f64, -0.0, 1e308, -1e-308])),
        5 => Value::String(random_string(rng)),
        6 | 7 => Value::Array(
            (0..rng.below(4))
                .map(|_| random_value(rng, depth - 1))
                .collect(),
        ),
        _ => Value::Object(
            (0..rng.below(5))
                .map(|_| {
                    let key = match rng.chance(80) {
                        true => (*rng.pick(KEYS)).to_string(),
                        false => random_string(rng),
                    };
                    (key, random_value(rng, depth - 1))
                })
                .collect(),
        ),
    }
}

/// A request id: numbers across the i64 range and strings, unique by `n`.
fn random_id(rng: &mut Rng, n: usize) -> Value {
    match rng.below(6) {
        0 => json!(i64::MAX - n as i64),
        1 => json!(i64::MIN + n as i64),
        2 => json!(-(n as i64) - 1),
        3 => json!(format!("{n}")),
        4 => json!(format!("{}-{n}", "é字🙂".repeat(rng.below(200)))),
        _ => json!(1_000_000 + n as i64),
    }
}

/// Waits for the reply whose id is `id` (any JSON value); panics after [`LIMIT`].
async fn reply_to(sidecar: &Sidecar, id: &Value, what: &str) -> Value {
    let deadline = tokio::time::Instant::now() + LIMIT;
    loop {
        let found = sidecar
            .messages()
            .into_iter()
            .find(|m| m.get("method").is_none() && m.get("id") == Some(id));
        if let Some(reply) = found {
            return reply;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "no reply to {what} within {LIMIT:?}"
        );
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

// Protocol fuzz: 600 seeded random JSON-RPC messages — every wave method, server-to-client and
// unknown methods, notifications sent with ids, requests without params, random params of every
// JSON type (huge strings, deep objects, numbers at the i64 edges), ids across the whole i64
// range and as unicode strings, sent in bursts without waiting. Every request gets exactly one
// reply carrying its id (a result or a JSON-RPC error), the sidecar never panics, keeps answering
// `wave/mcp/servers`, and after `shutdown`/`exit` no process is left.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn protocol_fuzz_random_messages_get_replies_and_the_sidecar_keeps_answering() {
    let seed = faults_seed();
    let mut rng = Rng::new(seed);
    let sandbox = Sandbox::new();
    sandbox.write_project(json!({ "a": sandbox.server(&[]), "b": sandbox.server(&[]) }));
    let log = sandbox.path("sidecar.log");
    // The registry methods ask a local registry, never the official one (USE-3).
    let registry = HttpServer::start_registry();
    let mut sidecar = spawn_logged(
        &sandbox,
        &log,
        "info",
        &[("WAVE_REGISTRY_URL", &registry.base)],
    );
    initialize(&sidecar, &sandbox).await;
    sidecar.ok("wave/mcp/connect", json!({ "name": "b" })).await;

    let wave = wave_methods();
    let pushed = sidecar_methods();
    assert_eq!(
        wave.len() + pushed.len(),
        METHODS.len(),
        "every declared method is fuzzed"
    );
    let mut sent = 0;
    let mut answers = 0;
    for burst in 0..env_count("WAVE_FAULTS_PROTOCOL_BURSTS", 30) {
        let mut waiting = Vec::new();
        for _ in 0..20 {
            sent += 1;
            // A reply to a request the sidecar never sent (a stale `wave/session/elicit` or
            // `wave/mcp/openUrl` answer): a result of any shape or an error, never answered.
            if rng.chance(10) {
                answers += 1;
                let mut reply = json!({ "jsonrpc": "2.0", "id": random_id(&mut rng, sent) });
                match rng.below(3) {
                    0 => {
                        reply["error"] =
                            json!({ "code": -32603, "message": random_string(&mut rng) })
                    }
                    1 => reply["error"] = random_value(&mut rng, 2),
                    _ => reply["result"] = random_value(&mut rng, 3),
                }
                sidecar
                    .write_raw(&serde_json::to_vec(&reply).unwrap())
                    .await;
                continue;
            }
            let method = match rng.below(10) {
                0..=5 => *rng.pick(&wave),
                6 => *rng.pick(&pushed),
                _ => *rng.pick(OTHER_METHODS),
            };
            let mut message = json!({ "jsonrpc": "2.0", "method": method });
            match rng.below(10) {
                0 => {}
                1 => message["params"] = Value::Null,
                _ => message["params"] = random_value(&mut rng, 3),
            }
            // A notification (no id) now and then, whatever the method.
            if rng.chance(85) {
                let id = random_id(&mut rng, sent);
                message["id"] = id.clone();
                waiting.push((id, message.clone()));
            }
            let body = serde_json::to_vec(&message).unwrap();
            sidecar.write_raw(&body).await;
        }
        for (id, message) in waiting {
            let what = format!("burst {burst} (seed {seed}): {message}");
            let reply = reply_to(&sidecar, &id, &what).await;
            assert!(
                reply.get("result").is_some() != reply.get("error").is_some(),
                "{what}: {reply}"
            );
            if let Some(error) = reply.get("error") {
                assert!(
                    error["code"].is_i64() && error["message"].is_string(),
                    "{what}: {reply}"
                );
            }
        }
        assert!(
            sidecar.running(),
            "the sidecar died in burst {burst} (seed {seed})"
        );
        // Still answering (the default session may have been destroyed by a random request).
        match sidecar.request("wave/mcp/servers", json!({})).await {
            Ok(snapshot) => assert!(snapshot["servers"].is_array(), "{snapshot}"),
            Err(e) => assert_eq!(e.kind(), "unknownSession", "{e:?}"),
        }
    }
    // Exactly one reply per id.
    let mut replies: HashMap<String, usize> = HashMap::new();
    for message in sidecar.messages() {
        if message.get("method").is_none() {
            *replies.entry(message["id"].to_string()).or_default() += 1;
        }
    }
    let repeated: Vec<_> = replies.iter().filter(|&(_, &n)| n > 1).collect();
    assert!(repeated.is_empty(), "ids answered twice: {repeated:?}");
    eprintln!(
        "protocol fuzz: {sent} messages ({answers} stray replies) over {} methods from seed {seed}",
        wave.len() + pushed.len() + OTHER_METHODS.len()
    );
    sidecar.stop().await;
    assert_no_panic(&log);
    sandbox.assert_no_process_left().await;
}

// tower-lsp-server 0.23 (`LspService::call`) turns every MethodNotFound of a `$/` method into
// "no response", which LSP allows for notifications only ("a request starting with '$/' must be
// errored with MethodNotFound"). The sidecar answers such requests itself (its `EmptyParams`
// layer), so a client never waits forever.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn protocol_fuzz_requests_to_dollar_methods_get_method_not_found() {
    let sandbox = Sandbox::new();
    let sidecar = Sidecar::start(&sandbox, Value::Null).await;
    for method in ["$/setTrace", "$/progress", "$/nope"] {
        let id = json!(format!("dollar-{method}"));
        let message = json!({ "jsonrpc": "2.0", "id": id, "method": method, "params": {} });
        sidecar
            .write_raw(&serde_json::to_vec(&message).unwrap())
            .await;
        let answered = eventually(Duration::from_secs(5), || {
            sidecar.messages().iter().any(|m| m["id"] == id)
        })
        .await;
        assert!(answered, "no reply to the request {message}");
        let reply = reply_to(&sidecar, &id, method).await;
        assert_eq!(reply["error"]["code"], -32601, "{reply}");
    }
    sidecar.stop().await;
}

// Requests before `initialize` are refused (-32002) and notifications ignored; `initialize`
// afterwards works as usual.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn protocol_fuzz_requests_before_initialize_are_refused() {
    let mut rng = Rng::new(faults_seed());
    let sandbox = Sandbox::new();
    sandbox.write_project(json!({ "a": sandbox.server(&[]) }));
    let log = sandbox.path("sidecar.log");
    let sidecar = spawn_logged(&sandbox, &log, "info", &[]);
    for (n, method) in wave_methods().iter().enumerate() {
        sidecar.notify(method, random_value(&mut rng, 2)).await;
        let id = random_id(&mut rng, n);
        let message = json!({ "jsonrpc": "2.0", "id": id, "method": method,
                              "params": random_value(&mut rng, 2) });
        sidecar
            .write_raw(&serde_json::to_vec(&message).unwrap())
            .await;
        let reply = reply_to(&sidecar, &id, method).await;
        assert_eq!(reply["error"]["code"], -32002, "{method}: {reply}");
    }
    initialize(&sidecar, &sandbox).await;
    let snapshot = sidecar.ok("wave/mcp/servers", Value::Null).await;
    assert!(lists(&snapshot, "a"));
    assert!(sandbox.live_processes().is_empty());
    sidecar.stop().await;
    assert_no_panic(&log);
}

/// What became of one broken frame.
struct FrameOutcome {
    label: &'static str,
    /// Error codes of the replies it got.
    errors: Vec<i64>,
    /// The sidecar ended the connection and exited (cleanly).
    exited: bool,
    /// What docs/protocol.md says it gets.
    want_errors: &'static [i64],
    want_exit: bool,
}

/// docs/protocol.md: a body that is not JSON (or no readable frame at all) is `-32700` and ends
/// the connection.
const PARSE: &[i64] = &[-32700];
/// JSON that is no JSON-RPC request (JSON-RPC 2.0 §5.1 Invalid Request): `-32600`, and the
/// connection ends like for a parse error.
const INVALID: &[i64] = &[-32600];
/// A message with an id but no method: `-32601` (MethodNotFound), and the sidecar goes on.
const NOT_FOUND: &[i64] = &[-32601];
/// A well-formed request that cannot be carried out: `-32803` (RequestFailed).
const FAILED: &[i64] = &[-32803];
/// No reply. Only for a zero-length body (tower-lsp-server skips it as an empty frame) and for
/// `exit` sent as a request (it exits, as the notification would); see docs/performance.md.
const NONE: &[i64] = &[];

// Broken framing and messages that are not JSON-RPC requests: a missing, non-numeric or
// overflowing Content-Length, garbage before the header, a wrong charset, a body that is not
// UTF-8 or not JSON, JSON that is no message, a batch, ids that are no JSON-RPC id (beyond i64,
// fractional, objects), a body cut short by the end of input, `exit` sent as a request. For
// each, a fresh sidecar with a connected server: it never panics or dies from a signal; either
// it answers with an error and goes on (then still answers `wave/mcp/servers`), or it answers
// with an error, ends the connection and exits with status 0 (docs/protocol.md) — and in both
// cases no process of it is left afterwards. Each frame gets exactly the reply (error code) and
// outcome listed with it (docs/protocol.md, "Errors").
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn protocol_fuzz_broken_frames_never_crash_and_leave_no_process() {
    let frame = |body: &[u8]| {
        [
            format!("Content-Length: {}\r\n\r\n", body.len()).as_bytes(),
            body,
        ]
        .concat()
    };
    let huge = frame(
        &serde_json::to_vec(
            &json!({ "jsonrpc": "2.0", "id": 99, "method": "wave/mcp/servers",
                                      "params": { "sessionId": "x".repeat(30 << 20) } }),
        )
        .unwrap(),
    );
    // (label, bytes, close stdin afterwards, expected error codes, expected to end the connection)
    type Case = (&'static str, Vec<u8>, bool, &'static [i64], bool);
    let cases: Vec<Case> =
        vec![
        ("not json", frame(b"{not json"), false, PARSE, true),
        (
            "invalid utf-8",
            frame(b"{\"jsonrpc\": \"2.0\", \"method\": \"\xff\"}"),
            false, PARSE, true,
        ),
        ("json array", frame(b"[]"), false, INVALID, true),
        ("json number", frame(b"42"), false, INVALID, true),
        ("empty object", frame(b"{}"), false, INVALID, true),
        ("no method", frame(br#"{"jsonrpc": "2.0", "id": 5}"#), false, NOT_FOUND, false),
        (
            "jsonrpc 1.0",
            frame(br#"{"jsonrpc": "1.0", "id": 5, "method": "wave/mcp/servers"}"#),
            false, INVALID, true,
        ),
        (
            "batch",
            frame(br#"[{"jsonrpc": "2.0", "id": 5, "method": "wave/mcp/servers"}]"#),
            false, INVALID, true,
        ),
        (
            "id beyond i64",
            frame(
                br#"{"jsonrpc": "2.0", "id": 18446744073709551615, "method": "wave/mcp/servers"}"#,
            ),
            false, INVALID, true,
        ),
        (
            "fractional id",
            frame(br#"{"jsonrpc": "2.0", "id": 1.5, "method": "wave/mcp/servers"}"#),
            false, INVALID, true,
        ),
        (
            "object id",
            frame(br#"{"jsonrpc": "2.0", "id": {}, "method": "wave/mcp/servers"}"#),
            false, INVALID, true,
        ),
        (
            "no content-length",
            b"Content-Type: application/vscode-jsonrpc; charset=utf-8\r\n\r\n{}".to_vec(),
            false, PARSE, true,
        ),
        (
            "content-length not a number",
            b"Content-Length: ten\r\n\r\n{}".to_vec(),
            false, PARSE, true,
        ),
        (
            "content-length overflow",
            b"Content-Length: 99999999999999999999999\r\n\r\n{}".to_vec(),
            false, PARSE, true,
        ),
        (
            "garbage before the header",
            b"GET / HTTP/1.1\r\nHost: x\r\n\r\n".to_vec(),
            false, PARSE, true,
        ),
        (
            "latin-1 charset",
            b"Content-Length: 2\r\nContent-Type: application/json; charset=latin1\r\n\r\n{}"
                .to_vec(),
            false, PARSE, true,
        ),
        ("zero length", b"Content-Length: 0\r\n\r\n".to_vec(), false, NONE, false),
        (
            "body cut short by end of input",
            b"Content-Length: 100\r\n\r\n{\"jsonrpc\"".to_vec(),
            true, PARSE, true,
        ),
        (
            "exit as a request",
            frame(br#"{"jsonrpc": "2.0", "id": 5, "method": "exit"}"#),
            false, NONE, true,
        ),
        ("30 MB request", huge, false, FAILED, false),
    ];
    let mut outcomes = Vec::new();
    for (label, bytes, close_stdin, want_errors, want_exit) in cases {
        let sandbox = Sandbox::new();
        sandbox.write_project(
            json!({ "a": sandbox.server_with_pids("a", &["--spawn-descendants", "1"]) }),
        );
        let log = sandbox.path("sidecar.log");
        let stderr = std::fs::File::create(&log).unwrap();
        let mut sidecar = Sidecar::spawn(&sandbox.root, |command| {
            command.env("WAVE_LOG", "info").stderr(Stdio::from(stderr));
        });
        sidecar
            .initialize(json!({ "initializationOptions": {
                "home": sandbox.home,
                "workdir": sandbox.workdir,
            }}))
            .await
            .expect("initialize");
        let connected = sidecar.ok("wave/mcp/connect", json!({ "name": "a" })).await;
        assert_eq!(status_of(&connected, "a").as_deref(), Some("connected"));
        let pids = wait_for_pids(&sandbox.pid_file("a"), 2).await;
        let before = sidecar.received();
        sidecar.write_bytes(&bytes).await;
        if close_stdin {
            sidecar.close_stdin().await;
        }
        // Either it exits, or it is still there and answering.
        let exited = eventually(Duration::from_secs(3), || !sidecar.running()).await;
        if !exited {
            let snapshot = sidecar.ok("wave/mcp/servers", json!({})).await;
            assert!(lists(&snapshot, "a"), "{label}: {snapshot}");
        }
        let errors: Vec<i64> = sidecar.messages()[before..]
            .iter()
            .filter_map(|m| m["error"]["code"].as_i64())
            .collect();
        if !exited {
            sidecar.ok("shutdown", Value::Null).await;
            sidecar.notify("exit", Value::Null).await;
        }
        let status = sidecar
            .exited_within(Duration::from_secs(20))
            .await
            .unwrap_or_else(|| panic!("{label}: the sidecar did not exit"));
        assert!(
            status.success(),
            "{label}: the sidecar exited with {status}"
        );
        assert_no_panic(&log);
        assert_all_dead(&pids).await;
        assert!(
            eventually(Duration::from_secs(10), || sandbox
                .live_processes()
                .is_empty())
            .await,
            "{label}: left running {:?}",
            sandbox.live_processes()
        );
        outcomes.push(FrameOutcome {
            label,
            errors,
            exited,
            want_errors,
            want_exit,
        });
    }
    let describe = |errors: &[i64], exited: bool| {
        let what = if exited {
            "ended the connection, exit 0"
        } else {
            "went on"
        };
        format!("error replies {errors:?}, {what}")
    };
    let wrong: Vec<String> = outcomes
        .iter()
        .filter(|o| o.errors != o.want_errors || o.exited != o.want_exit)
        .map(|o| {
            format!(
                "{:<32} {} (expected {})",
                o.label,
                describe(&o.errors, o.exited),
                describe(o.want_errors, o.want_exit)
            )
        })
        .collect();
    assert!(
        wrong.is_empty(),
        "unexpected outcomes:\n{}",
        wrong.join("\n")
    );
}

/// A client's answer to a sidecar request (`wave/session/elicit`, `wave/mcp/openUrl`): an error
/// or a result of any shape, and the elicitation action the server should get for it.
fn random_answer(rng: &mut Rng, form: bool) -> (Option<Value>, Option<Value>, &'static str) {
    let error = |code: i64, message: &str| json!({ "code": code, "message": message });
    match rng.below(12) {
        0 => (None, Some(error(-32603, "the page went away")), "decline"),
        1 => (None, Some(error(-32800, &random_string(rng))), "decline"),
        2 => (Some(Value::Null), None, "decline"),
        3 => (Some(json!(42)), None, "decline"),
        4 => (Some(json!("accept")), None, "decline"),
        5 => (Some(json!({ "action": "nope" })), None, "decline"),
        6 => (Some(json!({ "action": "decline" })), None, "decline"),
        7 => (Some(json!({ "action": "cancel" })), None, "cancel"),
        // A form answer that does not fit the schema is declined (the page should have checked).
        8 if form => (
            Some(json!({ "action": "accept", "content": { "answer": 5 } })),
            None,
            "decline",
        ),
        9 if form => (Some(json!({ "action": "accept" })), None, "decline"),
        10 => (
            Some(json!({ "action": "accept", "content": { "answer": random_string(rng) } })),
            None,
            "accept",
        ),
        _ => (
            Some(json!({ "action": "accept", "content": { "answer": "ok" } })),
            None,
            "accept",
        ),
    }
}

// Protocol fuzz, the client's answers to the sidecar's own requests: a test server's tool asks
// the user (MCP elicitation, form and URL mode) in seeded rounds, and the client answers
// `wave/session/elicit` — and, after an accepted URL, `wave/mcp/openUrl` — with errors, results
// of the wrong type or shape, answers that do not fit the form, stray answers to ids the sidecar
// never used and second answers to the same id. An answer the sidecar cannot use counts as
// `decline` (docs/protocol.md), the server gets exactly that, every turn ends without error,
// the sidecar never panics and keeps answering, and no process is left after shutdown.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn protocol_fuzz_malformed_answers_to_elicit_and_open_url_are_declined() {
    let seed = faults_seed();
    let mut rng = Rng::new(seed);
    let rounds = env_count("WAVE_FAULTS_PROTOCOL_BURSTS", 30);
    let modes: Vec<&str> = (0..rounds).map(|_| *rng.pick(&["form", "url"])).collect();
    let mut script = Vec::new();
    for mode in &modes {
        script.push(wave_mcp_testkit::call(
            "mcp__q__ask",
            json!({ "mode": mode }),
        ));
        script.push(wave_mcp_testkit::say("asked"));
    }
    let model = wave_mcp_testkit::FakeModel::start(script).await;
    let sandbox = Sandbox::new();
    sandbox.write_project(json!({ "q": sandbox.server(&["--tools", "echo,ask"]) }));
    sandbox.allow_tool_calls();
    let log = sandbox.path("sidecar.log");
    let mut sidecar = spawn_logged(&sandbox, &log, "info", &[("BROWSER", "true")]);
    sidecar
        .initialize(json!({ "initializationOptions": {
            "home": sandbox.home, "workdir": sandbox.workdir,
            "model": { "baseUrl": model.base_url, "model": "fake" },
        }}))
        .await
        .expect("initialize");

    let mut open_urls = 0;
    for (round, mode) in modes.iter().enumerate() {
        let what = format!("round {round} ({mode}, seed {seed})");
        let since = sidecar.received();
        let accepted = sidecar
            .ok(
                "wave/session/send",
                json!({ "sessionId": "default", "text": format!("ask {round}") }),
            )
            .await;
        let turn = accepted["turn"].as_u64().unwrap();
        let request = sidecar.wait_request(since, "wave/session/elicit").await;
        assert_eq!(request["params"]["mode"], *mode, "{what}: {request}");
        if rng.chance(30) {
            let stray = json!({ "jsonrpc": "2.0", "id": 900_000 + round, "result": { "action": "accept" } });
            sidecar
                .write_raw(&serde_json::to_vec(&stray).unwrap())
                .await;
        }
        let (result, error, want) = random_answer(&mut rng, *mode == "form");
        let mut reply = json!({ "jsonrpc": "2.0", "id": request["id"] });
        match (result, error) {
            (_, Some(error)) => reply["error"] = error,
            (Some(result), None) => reply["result"] = result,
            (None, None) => unreachable!(),
        }
        sidecar
            .write_raw(&serde_json::to_vec(&reply).unwrap())
            .await;
        if rng.chance(30) {
            // A second answer to the same request: it is no longer pending.
            let again =
                json!({ "jsonrpc": "2.0", "id": request["id"], "result": { "action": "cancel" } });
            sidecar
                .write_raw(&serde_json::to_vec(&again).unwrap())
                .await;
        }
        if *mode == "url" && want == "accept" {
            // The sidecar asks the client to open the accepted URL; whatever the client says, the
            // server has its `accept` (the sidecar opens the URL itself when the client did not).
            let open = sidecar.wait_request(since, "wave/mcp/openUrl").await;
            open_urls += 1;
            assert_eq!(open["params"]["purpose"], "elicitation", "{what}: {open}");
            let (result, error, _) = random_answer(&mut rng, false);
            let answer = match rng.below(3) {
                0 => Some(json!({ "opened": true })),
                1 => Some(json!({ "opened": "yes" })),
                _ => result,
            };
            let mut reply = json!({ "jsonrpc": "2.0", "id": open["id"] });
            match (answer, error) {
                (_, Some(error)) => reply["error"] = error,
                (Some(result), None) => reply["result"] = result,
                (None, None) => unreachable!(),
            }
            sidecar
                .write_raw(&serde_json::to_vec(&reply).unwrap())
                .await;
        }
        let ended = sidecar
            .wait_notification(since, "wave/session/turnEnded", |p| p["turn"] == turn)
            .await;
        assert!(ended.get("error").is_none(), "{what}: {ended}");
        let tool = sidecar
            .messages_since(since)
            .into_iter()
            .find(|m| {
                m["method"] == "wave/session/message"
                    && m["params"]["turn"] == turn
                    && m["params"]["message"]["role"] == "tool"
            })
            .unwrap_or_else(|| panic!("{what}: no tool result"));
        let text = tool["params"]["message"]["content"]
            .as_str()
            .unwrap_or_default();
        let answer: Value = serde_json::from_str(text)
            .unwrap_or_else(|e| panic!("{what}: the server's reply {text:?}: {e}"));
        assert_eq!(
            answer["action"], want,
            "{what}: sent {reply}, server got {answer}"
        );
        assert!(sidecar.running(), "{what}: the sidecar died");
    }
    let snapshot = sidecar.ok("wave/mcp/servers", json!({})).await;
    assert_eq!(
        status_of(&snapshot, "q").as_deref(),
        Some("connected"),
        "{snapshot}"
    );
    eprintln!(
        "protocol fuzz: {rounds} elicitations answered ({open_urls} openUrl) from seed {seed}"
    );
    sidecar.stop().await;
    assert_no_panic(&log);
    sandbox.assert_no_process_left().await;
}
