//! Servers that ask the user (MCP elicitation, LONG-5 … LONG-7), against servers nobody here
//! wrote: the official Python SDK (`tests/peers/py_elicit.py`, `ctx.elicit`, `ctx.elicit_url`, a
//! raw malformed schema) behind the real sidecar over stdio, answered by the test's LSP client;
//! the official TypeScript SDK's `elicitationFormExample.js` over Streamable HTTP through the
//! manager; and `wave-mcp call` without a terminal.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures::future::BoxFuture;
use serde_json::{Value, json};
use wave_mcp_manager::{
    Elicitation, ElicitationAnswer, ElicitationKind, Elicitor, ManagerOptions, McpManager,
    result_text,
};
use wave_mcp_testkit::{FakeModel, call, say};

use super::super::lsp_client::Sidecar;
use super::super::support::*;
use super::{HttpPeer, free_port, marked_processes, marker_env, peer_path, python};

fn py_elicit_script() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/peers/py_elicit.py")
}

fn py_entry(sandbox: &Sandbox, python: &Path) -> Value {
    let (var, value) = marker_env(sandbox);
    json!({ "command": python, "args": [py_elicit_script()], "env": { var: value } })
}

/// A sidecar whose default session has the Python elicitation server `py` and `model`.
async fn sidecar_with(
    sandbox: &Sandbox,
    python: &Path,
    model: &FakeModel,
    env: &[(&str, &str)],
) -> Sidecar {
    sandbox.write_project(json!({ "py": py_entry(sandbox, python) }));
    let env: Vec<(String, String)> = env
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    sandbox.allow_tool_calls();
    Sidecar::with_model(sandbox, &model.base_url, |command| {
        command.env_remove("BROWSER");
        for (key, value) in env {
            command.env(key, value);
        }
    })
    .await
}

/// The tool result of `turn`, once the turn ended.
async fn tool_result(sidecar: &Sidecar, turn: u64) -> String {
    let ended = sidecar
        .wait_notification(0, "wave/session/turnEnded", |p| p["turn"] == turn)
        .await;
    assert!(ended.get("error").is_none(), "{ended:#}");
    let tool = sidecar
        .notifications("wave/session/message")
        .into_iter()
        .find(|p| p["turn"] == turn && p["message"]["role"] == "tool")
        .unwrap_or_else(|| panic!("turn {turn} has no tool message"));
    tool["message"]["content"].as_str().unwrap().to_string()
}

// LONG-5: a Python SDK server's `ctx.elicit` during a turn reaches the client as
// `wave/session/elicit` with the server, the message and the schema (order kept, required,
// defaults); the client's answer reaches the server: accept with content, decline, cancel; an
// error answer and an answer that does not fit the schema are declined.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn long_5_sidecar_relays_a_python_form_and_every_answer() {
    let Some(python) = python() else { return };
    let sandbox = Sandbox::new();
    let model = FakeModel::start(
        (0..5)
            .flat_map(|_| [call("mcp__py__ask_form", json!({})), say("ok")])
            .collect(),
    )
    .await;
    let sidecar = sidecar_with(&sandbox, &python, &model, &[]).await;

    let answers = [
        json!({ "action": "accept", "content": { "name": "Ada", "age": 36, "subscribe": true, "colour": "red" } }),
        json!({ "action": "decline" }),
        json!({ "action": "cancel" }),
        Value::Null, // an error answer
        json!({ "action": "accept", "content": { "name": "Ada", "age": "old" } }),
    ];
    let mut results = Vec::new();
    for (i, answer) in answers.iter().enumerate() {
        let since = sidecar.received();
        let turn = sidecar.send_text(&format!("ask {i}")).await;
        let request = sidecar.wait_request(since, "wave/session/elicit").await;
        let params = &request["params"];
        assert_eq!(params["sessionId"], "default");
        assert_eq!(params["server"], "py");
        assert_eq!(params["mode"], "form");
        assert_eq!(params["message"], "Tell me about you");
        if i == 0 {
            let schema = &params["requestedSchema"];
            let order: Vec<&String> = schema["properties"].as_object().unwrap().keys().collect();
            assert_eq!(order, ["name", "age", "subscribe", "colour"], "{schema:#}");
            assert_eq!(schema["properties"]["age"]["type"], "integer");
            assert_eq!(schema["properties"]["age"]["maximum"], 150);
            assert_eq!(schema["properties"]["name"]["minLength"], 2);
            assert_eq!(schema["properties"]["subscribe"]["default"], false);
            assert_eq!(
                schema["properties"]["colour"]["enum"],
                json!(["red", "green"])
            );
            assert_eq!(schema["required"], json!(["name", "age"]));
        }
        match answer {
            Value::Null => sidecar.answer_error(&request, -32603, "no chat page").await,
            answer => sidecar.answer(&request, answer.clone()).await,
        }
        results.push(tool_result(&sidecar, turn).await);
    }
    assert_eq!(
        results[0],
        r#"accept: {"age": 36, "colour": "red", "name": "Ada", "subscribe": true}"#
    );
    assert_eq!(results[1], "decline");
    assert_eq!(results[2], "cancel");
    assert_eq!(results[3], "decline", "an error answer is a decline");
    assert_eq!(
        results[4], "decline",
        "content that does not fit is declined"
    );

    sidecar.stop().await;
    let gone = eventually(Duration::from_secs(10), || {
        marked_processes(&sandbox).is_empty()
    })
    .await;
    assert!(gone, "left running: {:?}", marked_processes(&sandbox));
}

// LONG-5: only one question at a time per session: a server that asks two at once gets the
// second asked after the first was answered, and both answers back.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn long_5_two_questions_at_once_are_asked_one_after_another() {
    let Some(python) = python() else { return };
    let sandbox = Sandbox::new();
    let model = FakeModel::start(vec![call("mcp__py__ask_two", json!({})), say("ok")]).await;
    let sidecar = sidecar_with(&sandbox, &python, &model, &[]).await;
    let turn = sidecar.send_text("two").await;
    let first = sidecar.wait_request(0, "wave/session/elicit").await;
    // A window for a second question to show up if it were not queued.
    tokio::time::sleep(Duration::from_millis(500)).await;
    assert_eq!(
        sidecar.requests_of("wave/session/elicit").len(),
        1,
        "the second waits"
    );
    let since = sidecar.received();
    sidecar
        .answer(
            &first,
            json!({ "action": "accept", "content": { "ok": true } }),
        )
        .await;
    let second = sidecar.wait_request(since, "wave/session/elicit").await;
    assert_ne!(first["params"]["message"], second["params"]["message"]);
    sidecar
        .answer(&second, json!({ "action": "decline" }))
        .await;
    let result = tool_result(&sidecar, turn).await;
    let mut parts: Vec<&str> = result.split(" | ").collect();
    parts.sort();
    assert_eq!(parts, [r#"accept: {"ok": true}"#, "decline"], "{result}");
    sidecar.stop().await;
}

// LONG-7: a server's elicitation whose schema has an object property is answered with a
// JSON-RPC error (-32602, naming the property) without asking the client; the call returns,
// the server stays connected and the next turn's elicitation works.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn long_7_malformed_elicitation_is_an_error_to_the_server_and_all_goes_on() {
    let Some(python) = python() else { return };
    let sandbox = Sandbox::new();
    let model = FakeModel::start(vec![
        call("mcp__py__ask_malformed", json!({})),
        say("ok"),
        call("mcp__py__ask_form", json!({})),
        say("ok"),
    ])
    .await;
    let sidecar = sidecar_with(&sandbox, &python, &model, &[]).await;
    let turn = sidecar.send_text("malformed").await;
    let result = tool_result(&sidecar, turn).await;
    assert!(result.starts_with("error -32602:"), "{result}");
    assert!(
        result.contains("requestedSchema.properties.address"),
        "{result}"
    );
    assert!(sidecar.requests_of("wave/session/elicit").is_empty());

    let servers = sidecar.ok("wave/mcp/servers", json!({})).await;
    assert_eq!(
        super::super::lsp_client::status_of(&servers, "py").as_deref(),
        Some("connected")
    );
    let since = sidecar.received();
    let turn = sidecar.send_text("again").await;
    let request = sidecar.wait_request(since, "wave/session/elicit").await;
    sidecar
        .answer(&request, json!({ "action": "decline" }))
        .await;
    assert_eq!(tool_result(&sidecar, turn).await, "decline");
    sidecar.stop().await;
}

// LONG-6: URL mode. The client sees the server, the message, the URL and its id; nothing is
// opened before the answer; after accept the sidecar asks the client to open it
// (`wave/mcp/openUrl`), and a client that cannot leaves it to `$BROWSER`; the server's
// `notifications/elicitation/complete` arrives as `wave/session/elicitationComplete`. A
// declined URL is never opened.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn long_6_url_mode_opens_only_after_accept_and_completion_is_relayed() {
    let Some(python) = python() else { return };
    let sandbox = Sandbox::new();
    let model = FakeModel::start(vec![
        call("mcp__py__ask_url", json!({})),
        say("ok"),
        call("mcp__py__ask_url", json!({})),
        say("ok"),
    ])
    .await;
    let browser = browser(&sandbox, false);
    let sidecar = sidecar_with(&sandbox, &python, &model, &[("BROWSER", &browser)]).await;
    let url = "https://accounts.example.com/connect?session=1";

    let turn = sidecar.send_text("declined url").await;
    let request = sidecar.wait_request(0, "wave/session/elicit").await;
    assert_eq!(request["params"]["mode"], "url");
    assert_eq!(request["params"]["url"], url);
    sidecar
        .answer(&request, json!({ "action": "decline" }))
        .await;
    assert_eq!(tool_result(&sidecar, turn).await, "decline");
    assert!(sidecar.requests_of("wave/mcp/openUrl").is_empty());
    assert_eq!(browser_runs(&sandbox), 0, "a declined URL is not opened");

    let since = sidecar.received();
    let turn = sidecar.send_text("accepted url").await;
    let request = sidecar.wait_request(since, "wave/session/elicit").await;
    let params = &request["params"];
    assert_eq!(
        (
            &params["server"],
            &params["message"],
            &params["elicitationId"]
        ),
        (
            &json!("py"),
            &json!("Open the page to connect your account"),
            &json!("url-1")
        )
    );
    assert!(params.get("requestedSchema").is_none());
    assert!(
        sidecar.requests_of("wave/mcp/openUrl").is_empty(),
        "nothing opened before the answer"
    );
    let since = sidecar.received();
    sidecar
        .answer(&request, json!({ "action": "accept" }))
        .await;
    let open = sidecar.wait_request(since, "wave/mcp/openUrl").await;
    assert_eq!(
        (&open["params"]["name"], &open["params"]["url"]),
        (&json!("py"), &json!(url))
    );
    sidecar.answer(&open, json!({ "opened": false })).await;
    let complete = sidecar
        .wait_notification(since, "wave/session/elicitationComplete", |_| true)
        .await;
    assert_eq!(
        complete,
        json!({ "sessionId": "default", "server": "py", "elicitationId": "url-1" })
    );
    assert_eq!(tool_result(&sidecar, turn).await, "accept");
    let opened = eventually(Duration::from_secs(10), || browser_runs(&sandbox) == 1).await;
    assert!(opened, "the client could not open it: $BROWSER did");
    let log = std::fs::read_to_string(sandbox.path("browser.log")).unwrap();
    assert_eq!(log.trim(), url);
    sidecar.stop().await;
}

/// An elicitor that records each request and answers from a list.
pub(super) struct Scripted {
    pub(super) asked: Mutex<Vec<Elicitation>>,
    pub(super) answers: Mutex<Vec<ElicitationAnswer>>,
}

impl Elicitor for Scripted {
    fn url_mode(&self) -> bool {
        false
    }

    fn elicit(&self, request: Elicitation) -> BoxFuture<'static, ElicitationAnswer> {
        self.asked.lock().unwrap().push(request);
        let answer = self.answers.lock().unwrap().remove(0);
        Box::pin(async move { answer })
    }
}

// LONG-5: the official TypeScript SDK's `elicitationFormExample.js` over Streamable HTTP: the
// manager declares form mode, gets its registration form (lengths, email format, boolean
// default, `oneOf` titles, a multi-select array, required) and its tool sees the answer.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn long_5_typescript_sdk_form_example_over_streamable_http() {
    let Some(example) = peer_path(
        "npm @modelcontextprotocol/sdk examples",
        "sdk/node_modules/@modelcontextprotocol/sdk/dist/esm/examples/server/elicitationFormExample.js",
    ) else {
        return;
    };
    let sandbox = Sandbox::new();
    let port = free_port();
    let mut command = Command::new("node");
    command.arg(&example).env("PORT", port.to_string());
    let peer = HttpPeer::start(&sandbox, command, port).await;
    let manager = McpManager::new(ManagerOptions {
        servers: json!({ "form": { "type": "http", "url": peer.url("/mcp") } })
            .as_object()
            .cloned()
            .unwrap(),
        ..sandbox.options(Value::Null)
    });
    let content = json!({ "username": "ada", "email": "ada@example.com", "password": "secret123",
                          "newsletter": true, "role": "designer", "interests": ["ai"] });
    let elicitor = Arc::new(Scripted {
        asked: Mutex::default(),
        answers: Mutex::new(vec![ElicitationAnswer::accept(
            content.as_object().cloned(),
        )]),
    });
    manager.set_elicitor(elicitor.clone());
    manager.connect("form").await.expect("connect");
    let result = manager
        .call_tool("mcp__form__register_user", None)
        .await
        .expect("call");
    let text = result_text(&result);
    assert!(text.contains("Registration successful"), "{text}");
    assert!(
        text.contains("Username: ada") && text.contains("Email: ada@example.com"),
        "{text}"
    );
    assert!(text.contains("Newsletter: Yes"), "{text}");

    let asked = elicitor.asked.lock().unwrap().clone();
    assert_eq!(asked.len(), 1);
    assert_eq!(asked[0].server, "form");
    assert_eq!(
        asked[0].message,
        "Please provide your registration information:"
    );
    let ElicitationKind::Form { requested_schema } = &asked[0].kind else {
        panic!("{:?}", asked[0].kind);
    };
    let properties = requested_schema["properties"].as_object().unwrap();
    let order: Vec<&String> = properties.keys().collect();
    assert_eq!(
        order,
        [
            "username",
            "email",
            "password",
            "newsletter",
            "role",
            "interests"
        ]
    );
    assert_eq!(properties["email"]["format"], "email");
    assert_eq!(properties["username"]["maxLength"], 20);
    assert_eq!(
        properties["role"]["oneOf"][1],
        json!({ "const": "designer", "title": "Designer" })
    );
    assert_eq!(properties["interests"]["type"], "array");
    assert_eq!(
        requested_schema["required"],
        json!(["username", "email", "password"])
    );
    manager.cleanup().await;
}

// LONG-5: `wave-mcp call` with stdin that is not a terminal declines (and says so on stderr).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn long_5_cli_call_without_a_terminal_declines() {
    let Some(python) = python() else { return };
    let sandbox = Sandbox::new();
    sandbox.write_project(json!({ "py": py_entry(&sandbox, &python) }));
    let output = cli(&sandbox, &["call", "py", "ask_form"], &[]);
    let shown = text(&output);
    assert!(output.status.success(), "{shown}");
    assert_eq!(
        String::from_utf8_lossy(&output.stdout).trim(),
        "decline",
        "{shown}"
    );
    assert!(
        shown.contains(
            "MCP server \"py\" asks: Tell me about you (declined: stdin is not a terminal)"
        ),
        "{shown}"
    );
    let gone = eventually(Duration::from_secs(10), || {
        marked_processes(&sandbox).is_empty()
    })
    .await;
    assert!(gone, "left running: {:?}", marked_processes(&sandbox));
}

// LONG-5: `wave-mcp call` on a terminal (a pty from `script`) asks field by field and sends
// the answer.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn long_5_cli_call_on_a_terminal_asks_the_form() {
    let Some(python) = python() else { return };
    if Command::new("script").arg("--version").output().is_err() {
        eprintln!("skipped: util-linux `script` (for a pty) is not installed");
        return;
    }
    let sandbox = Sandbox::new();
    sandbox.write_project(json!({ "py": py_entry(&sandbox, &python) }));
    let typed = sandbox.path("typed.txt");
    // accept; name; age; subscribe (default); colour: 1 = red.
    std::fs::write(&typed, "a\nAda\n36\n\n1\n").unwrap();
    let inner = format!(
        "{} call py ask_form --workdir {}",
        wave_mcp().display(),
        sandbox.workdir.display()
    );
    let output = Command::new("script")
        .args(["-q", "-e", "-c", &inner, "/dev/null"])
        .env("HOME", &sandbox.home)
        .env_remove("WAVE_LOG")
        .stdin(std::fs::File::open(&typed).unwrap())
        .output()
        .expect("script");
    let shown = text(&output);
    assert!(
        shown.contains("MCP server \"py\" asks: Tell me about you"),
        "{shown}"
    );
    assert!(shown.contains("Name *"), "required mark: {shown}");
    assert!(
        shown
            .contains(r#"accept: {"age": 36, "colour": "red", "name": "Ada", "subscribe": false}"#),
        "{shown}"
    );
    let gone = eventually(Duration::from_secs(10), || {
        marked_processes(&sandbox).is_empty()
    })
    .await;
    assert!(gone, "left running: {:?}", marked_processes(&sandbox));
}

// LONG-5: `wave-mcp chat` on a terminal (a pty from `script`): the turn's tool asks, the chat
// asks field by field on the terminal, the tool gets the answer and the model sees it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn long_5_cli_chat_on_a_terminal_asks_the_form() {
    let Some(python) = python() else { return };
    if Command::new("script").arg("--version").output().is_err() {
        eprintln!("skipped: util-linux `script` (for a pty) is not installed");
        return;
    }
    let sandbox = Sandbox::new();
    sandbox.write_project(json!({ "py": py_entry(&sandbox, &python) }));
    sandbox.allow_tool_calls();
    let model = FakeModel::start(vec![call("mcp__py__ask_form", json!({})), say("thanks")]).await;
    let typed = sandbox.path("typed.txt");
    // The message; accept; name; age; subscribe: yes; colour (default); then quit.
    std::fs::write(&typed, "sign me up\na\nAda\n36\ny\n\n/exit\n").unwrap();
    let inner = format!(
        "{} chat --workdir {}",
        wave_mcp().display(),
        sandbox.workdir.display()
    );
    let output = tokio::process::Command::new("script")
        .args(["-q", "-e", "-c", &inner, "/dev/null"])
        .env("HOME", &sandbox.home)
        .env("WAVE_BASE_URL", &model.base_url)
        .env("WAVE_MODEL", "fake")
        .env_remove("WAVE_LOG")
        .stdin(std::fs::File::open(&typed).unwrap())
        .output()
        .await
        .expect("script");
    let shown = text(&output);
    assert!(
        shown.contains("MCP server \"py\" asks: Tell me about you"),
        "{shown}"
    );
    let answer = r#"accept: {"age": 36, "colour": "green", "name": "Ada", "subscribe": true}"#;
    assert!(shown.contains(answer), "{shown}");
    assert!(shown.contains("thanks"), "{shown}");
    let last = model.last_request();
    let tool = last["messages"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["role"] == "tool")
        .cloned()
        .unwrap_or_default();
    assert_eq!(tool["content"], answer, "the model saw the answer");
    let gone = eventually(Duration::from_secs(10), || {
        marked_processes(&sandbox).is_empty()
    })
    .await;
    assert!(gone, "left running: {:?}", marked_processes(&sandbox));
}

// LONG-6: the official TypeScript SDK's `elicitationUrlExample.js` (Streamable HTTP behind its
// own OAuth server, so we sign in first). Its tools refuse with `URLElicitationRequiredError`
// (-32042, MCP 2025-11-25) naming a page; the sidecar puts each page to the user exactly like an
// `elicitation/create` in URL mode (server, message, URL, id; nothing opened before the answer),
// opens it only when accepted, and the model learns what became of it without the URL. The
// server's later `notifications/elicitation/complete` reaches the client with the page's id.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn long_6_typescript_sdk_url_example_pages_are_put_to_the_user() {
    let Some(example) = peer_path(
        "npm @modelcontextprotocol/sdk examples",
        "sdk/node_modules/@modelcontextprotocol/sdk/dist/esm/examples/server/elicitationUrlExample.js",
    ) else {
        return;
    };
    let sandbox = Sandbox::new();
    let (port, auth_port) = (free_port(), free_port());
    let mut command = Command::new("node");
    command
        .arg(&example)
        .env("MCP_PORT", port.to_string())
        .env("MCP_AUTH_PORT", auth_port.to_string());
    let _peer = HttpPeer::start(&sandbox, command, port).await;
    let auth_up = eventually(Duration::from_secs(30), || {
        std::net::TcpStream::connect((std::net::Ipv4Addr::LOCALHOST, auth_port)).is_ok()
    })
    .await;
    assert!(auth_up, "the example's authorization server never listened");
    // It names itself `localhost` in its OAuth metadata: configure it the same way.
    sandbox.write_project(
        json!({ "pay": { "type": "http", "url": format!("http://localhost:{port}/mcp") } }),
    );
    let login = cli(
        &sandbox,
        &["login", "pay"],
        &[("BROWSER", &browser(&sandbox, true))],
    );
    assert!(login.status.success(), "{}", text(&login));
    let signed_in_pages = browser_runs(&sandbox);

    let model = FakeModel::start(vec![
        call("mcp__pay__payment-confirm", json!({ "cartId": "cart-7" })),
        say("ok"),
        call("mcp__pay__third-party-auth", json!({ "param1": "x" })),
        say("ok"),
    ])
    .await;
    let idle = browser(&sandbox, false);
    sandbox.allow_tool_calls();
    let sidecar = Sidecar::with_model(&sandbox, &model.base_url, |command| {
        command.env("BROWSER", &idle);
    })
    .await;

    // Accepts the next question of the session, which must be the page at `wanted`, and
    // answers its `wave/mcp/openUrl` with `opened: false`, so `$BROWSER` opens it.
    let accept_page = |since: usize, wanted: String| {
        let sidecar = &sidecar;
        async move {
            let request = sidecar.wait_request(since, "wave/session/elicit").await;
            let params = request["params"].clone();
            assert_eq!(
                (&params["server"], &params["mode"]),
                (&json!("pay"), &json!("url"))
            );
            let url = params["url"].as_str().unwrap().to_string();
            assert!(url.starts_with(&wanted), "{params:#}");
            assert!(
                sidecar
                    .requests_of("wave/mcp/openUrl")
                    .iter()
                    .all(|open| open["params"]["url"] != url.as_str()),
                "nothing opened before the answer"
            );
            let before = sidecar.received();
            sidecar
                .answer(&request, json!({ "action": "accept" }))
                .await;
            let open = sidecar.wait_request(before, "wave/mcp/openUrl").await;
            assert_eq!(open["params"]["url"], url);
            sidecar.answer(&open, json!({ "opened": false })).await;
            params
        }
    };

    let turn = sidecar.send_text("pay for cart 7").await;
    let confirm = format!("http://localhost:{port}/confirm-payment?");
    let page = accept_page(0, confirm).await;
    assert_eq!(
        page["message"],
        "This tool requires a payment confirmation. Open the link to confirm payment!"
    );
    assert!(
        page["url"].as_str().unwrap().contains("cartId=cart-7"),
        "{page:#}"
    );
    let result = tool_result(&sidecar, turn).await;
    assert!(
        result.contains("requires a payment confirmation"),
        "{result}"
    );
    assert!(
        result.contains("the user agreed and it was opened"),
        "{result}"
    );
    assert!(
        !result.contains("http://"),
        "the URL stays out of the model's context: {result}"
    );
    let opened = eventually(Duration::from_secs(10), || {
        browser_runs(&sandbox) == signed_in_pages + 1
    })
    .await;
    assert!(opened, "the accepted page was opened by $BROWSER");
    let log = std::fs::read_to_string(sandbox.path("browser.log")).unwrap();
    assert_eq!(log.lines().last(), page["url"].as_str());

    // The third-party sign-in page: accepted; the example completes it five seconds later.
    let since = sidecar.received();
    let turn = sidecar.send_text("use the third-party service").await;
    let page = accept_page(since, "https://www.example.com/oauth/authorize".into()).await;
    let complete = sidecar
        .wait_notification(since, "wave/session/elicitationComplete", |p| {
            p["elicitationId"] == page["elicitationId"]
        })
        .await;
    assert_eq!(complete["server"], "pay");
    assert!(
        tool_result(&sidecar, turn)
            .await
            .contains("example.com account")
    );
    sidecar.stop().await;
}
