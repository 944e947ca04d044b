//! MCP Apps through the real sidecar (APPS-1, APPS-4, APPS-5): the test server's `app_clock`
//! (an app at `ui://test/clock.html`), `app_write` (visibility `["app"]`, writes a marker file)
//! and `model_only` (visibility `["model"]`), a fake model, and the page's side played by the
//! LSP test client.

use serde_json::{Value, json};
use wave_mcp_testkit::{FakeModel, call, say};

use super::lsp_client::*;
use super::support::*;

const TOOLS: &str = "echo,app_clock,app_write,model_only";

/// A sidecar for the sandbox with the fake model; `apps` is what the client says it can show.
async fn sidecar(sandbox: &Sandbox, model: &FakeModel, apps: bool) -> Sidecar {
    let sidecar = Sidecar::spawn(&sandbox.root, |_| {});
    let mut options = json!({
        "home": sandbox.home,
        "workdir": sandbox.workdir,
        "model": { "baseUrl": model.base_url, "model": "fake" },
    });
    if apps {
        options["apps"] = json!(true);
    }
    sidecar
        .initialize(json!({ "initializationOptions": options }))
        .await
        .expect("initialize");
    sidecar
}

fn settings(sandbox: &Sandbox, permissions: Value) {
    let dir = sandbox.home.join(".wave");
    std::fs::create_dir_all(&dir).unwrap();
    let settings = json!({ "permissions": permissions });
    std::fs::write(dir.join("settings.json"), settings.to_string()).unwrap();
}

/// Runs one turn (`text`) and returns its `wave/session/message` messages.
async fn turn(sidecar: &Sidecar, text: &str) -> Vec<Value> {
    let since = sidecar.received();
    let turn = sidecar.send_text(text).await;
    let ended = sidecar
        .wait_notification(since, "wave/session/turnEnded", |p| p["turn"] == turn)
        .await;
    assert!(ended.get("error").is_none(), "{ended:#}");
    sidecar
        .notifications("wave/session/message")
        .into_iter()
        .filter(|p| p["turn"] == turn)
        .map(|p| p["message"].clone())
        .collect()
}

fn tool_message<'a>(messages: &'a [Value], name: &str) -> &'a Value {
    messages
        .iter()
        .find(|m| m["role"] == "tool" && m["toolName"] == name)
        .unwrap_or_else(|| panic!("no tool message of {name}: {messages:#?}"))
}

/// The tool names of the model's request `index`.
fn declared(model: &FakeModel, index: usize) -> Vec<String> {
    model.request(index)["tools"]
        .as_array()
        .cloned()
        .unwrap_or_default()
        .iter()
        .filter_map(|t| t["function"]["name"].as_str().map(str::to_string))
        .collect()
}

/// A plain HTTP/1.1 GET on the loopback sandbox origin: the status line, headers and body.
async fn http_get(url: &str) -> String {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let rest = url.strip_prefix("http://").expect("an http URL");
    let (host, path) = rest.split_at(rest.find('/').unwrap());
    let mut stream = tokio::net::TcpStream::connect(host).await.unwrap();
    let request = format!("GET {path} HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\n\r\n");
    stream.write_all(request.as_bytes()).await.unwrap();
    let mut response = String::new();
    stream.read_to_string(&mut response).await.unwrap();
    response
}

// APPS-1: with `apps: true` the servers are told (the call's request declares the extension with
// the app MIME type), the tool's `_meta.ui` shows in the snapshot, the app-only tool is never
// declared to the model and a model call of it is refused (the marker never appears); the app's
// tool call names its app from the call's start. Without `apps` nothing is declared.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn apps_1_extension_declared_only_for_app_clients_and_app_only_tools_never_reach_the_model() {
    for apps in [true, false] {
        let sandbox = Sandbox::new();
        sandbox.write_project(json!({ "a": sandbox.server(&["--tools", TOOLS]) }));
        sandbox.allow_tool_calls();
        let marker = sandbox.root.join("model-wrote");
        let model = FakeModel::start(vec![
            call("mcp__a__app_clock", json!({})),
            call("mcp__a__app_write", json!({ "path": marker })),
            say("done"),
        ])
        .await;
        let sidecar = sidecar(&sandbox, &model, apps).await;
        let messages = turn(&sidecar, "what time is it").await;
        let clock = tool_message(&messages, "mcp__a__app_clock");
        let content = clock["content"].as_str().unwrap();
        match apps {
            true => assert!(
                content.contains("ui extension declared")
                    && content.contains("text/html;profile=mcp-app"),
                "{clock:#}"
            ),
            false => assert!(content.contains("ui extension not declared"), "{clock:#}"),
        }
        // The model never saw the app-only tool, and its call of it was refused.
        let names = declared(&model, 0);
        assert!(
            names.contains(&"mcp__a__app_clock".to_string()),
            "{names:?}"
        );
        assert!(
            names.contains(&"mcp__a__model_only".to_string()),
            "{names:?}"
        );
        assert!(
            !names.contains(&"mcp__a__app_write".to_string()),
            "{names:?}"
        );
        let refused = tool_message(&messages, "mcp__a__app_write");
        assert_eq!(refused["isError"], true, "{refused:#}");
        assert!(
            refused["content"]
                .as_str()
                .unwrap()
                .contains("only for its app"),
            "{refused:#}"
        );
        assert!(!marker.exists(), "the app-only tool ran for the model");
        // The assistant's call names the app from the call's start.
        let assistant = messages
            .iter()
            .find(|m| m["role"] == "assistant" && m["toolCalls"][0]["name"] == "mcp__a__app_clock")
            .expect("the assistant's call");
        assert_eq!(
            assistant["toolCalls"][0]["app"],
            json!({ "server": "a", "tool": "app_clock", "resourceUri": "ui://test/clock.html" })
        );
        // The snapshot shows the tools' `_meta.ui`.
        let snapshot = sidecar
            .ok("wave/mcp/servers", json!({ "sessionId": "default" }))
            .await;
        let tools = row(&snapshot, "a")["tools"].clone();
        assert_app_tools_ui(&tools);
        sidecar.stop().await;
        assert_eq!(sandbox.live_processes(), Vec::<u32>::new());
    }
}

// APPS-1, APPS-2: `wave/app/resource` returns the app's HTML and `_meta.ui`, and a sandbox URL
// whose page carries a CSP with the declared connect domain and no other remote origin; a URI no
// tool names is `noApp` with words naming the server and the URI; `wave/app/readResource`
// reads the app's own server and refuses a server without an app (APPS-4); a client without `apps` gets
// `noApp`; `wave/app/closed` makes the URL serve nothing.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn apps_1_resource_is_read_and_served_from_the_sandbox_origin_under_its_declared_csp() {
    let sandbox = Sandbox::new();
    sandbox.write_project(json!({
        "a": sandbox.server(&["--tools", TOOLS]),
        "plain": sandbox.server(&["--prompts"]),
    }));
    let model = FakeModel::start(vec![say("hi")]).await;
    let sidecar = sidecar(&sandbox, &model, true).await;
    sidecar
        .ok(
            "wave/mcp/connect",
            json!({ "sessionId": "default", "name": "a" }),
        )
        .await;
    let params = json!({ "sessionId": "default", "server": "a", "uri": "ui://test/clock.html" });
    let resource = sidecar.ok("wave/app/resource", params.clone()).await;
    assert!(
        resource["html"]
            .as_str()
            .unwrap()
            .contains("test clock app"),
        "{resource:#}"
    );
    assert_eq!(resource["mimeType"], "text/html;profile=mcp-app");
    assert_eq!(
        resource["csp"],
        json!({ "connectDomains": ["https://api.clock.example"] })
    );
    assert_eq!(resource["prefersBorder"], false);
    let url = resource["sandboxUrl"].as_str().unwrap().to_string();
    assert!(url.starts_with("http://127.0.0.1:"), "{url}");
    let page = http_get(&url).await;
    assert!(page.starts_with("HTTP/1.1 200"), "{page}");
    let csp = page
        .lines()
        .find(|l| {
            l.to_ascii_lowercase()
                .starts_with("content-security-policy:")
        })
        .unwrap_or_else(|| panic!("no CSP header: {page}"))
        .to_string();
    assert!(csp.contains("https://api.clock.example"), "{csp}");
    assert!(csp.contains("object-src 'none'"), "{csp}");
    // Only the declared domain: no other remote origin in the policy.
    let remote: Vec<&str> = csp
        .split(|c: char| c.is_whitespace() || c == ';')
        .filter(|w| w.starts_with("http") && *w != "https://api.clock.example")
        .collect();
    assert_eq!(remote, Vec::<&str>::new(), "{csp}");

    let missing = sidecar
        .err(
            "wave/app/resource",
            json!({ "sessionId": "default", "server": "a", "uri": "ui://test/other.html" }),
        )
        .await;
    assert_eq!(missing.data["kind"], "noApp", "{missing:?}");
    assert!(
        missing.message.contains("\"a\"") && missing.message.contains("ui://test/other.html"),
        "{missing:?}"
    );

    // APPS-4: the app reads its own server's resources; a server without an app is refused.
    let read = sidecar.ok("wave/app/readResource", params.clone()).await;
    assert_eq!(
        read["contents"][0]["mimeType"], "text/html;profile=mcp-app",
        "{read:#}"
    );
    let other = sidecar
        .err(
            "wave/app/readResource",
            json!({ "sessionId": "default", "server": "plain", "uri": "test://doc/1" }),
        )
        .await;
    assert_eq!(other.data["kind"], "noApp", "{other:?}");
    assert!(other.message.contains("\"plain\""), "{other:?}");

    let closed = sidecar.ok("wave/app/closed", json!({ "url": url })).await;
    assert_eq!(closed, json!({ "forgotten": true }));
    let gone = http_get(&url).await;
    assert!(gone.starts_with("HTTP/1.1 404"), "{gone}");
    sidecar.stop().await;

    // A client that cannot show apps gets none.
    let sidecar = self::sidecar(&sandbox, &model, false).await;
    sidecar
        .ok(
            "wave/mcp/connect",
            json!({ "sessionId": "default", "name": "a" }),
        )
        .await;
    let refused = sidecar.err("wave/app/resource", params).await;
    assert_eq!(refused.data["kind"], "noApp", "{refused:?}");
    sidecar.stop().await;
    assert_eq!(sandbox.live_processes(), Vec::<u32>::new());
}

// APPS-4, TRUST-5: an app's `tools/call` goes through the same funnel as the model's: a
// model-only tool is refused with words; under an `ask` rule the sidecar asks with
// `wave/session/confirmTool` (while no turn runs) and a decline means the tool never ran; an
// allowed call runs and answers with the server's full result; a deny rule refuses it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn apps_4_app_calls_pass_the_funnel_and_its_consent() {
    let sandbox = Sandbox::new();
    sandbox.write_project(json!({ "a": sandbox.server(&["--tools", TOOLS]) }));
    settings(
        &sandbox,
        json!({ "defaultMode": "allow", "ask": ["mcp__a__app_write"], "deny": ["mcp__a__echo"] }),
    );
    let model = FakeModel::start(vec![say("hi")]).await;
    let sidecar = sidecar(&sandbox, &model, true).await;
    sidecar
        .ok(
            "wave/mcp/connect",
            json!({ "sessionId": "default", "name": "a" }),
        )
        .await;
    let app_call = |name: &str, arguments: Value| {
        json!({
            "sessionId": "default", "server": "a", "name": name,
            "arguments": arguments, "toolCallId": "call-1",
        })
    };

    let model_only = sidecar
        .err("wave/app/callTool", app_call("model_only", json!({})))
        .await;
    assert_eq!(model_only.data["kind"], "appRefused", "{model_only:?}");
    assert!(
        model_only.message.contains("not visible to apps"),
        "{model_only:?}"
    );
    let other_server = sidecar
        .err(
            "wave/app/callTool",
            json!({ "sessionId": "default", "server": "b", "name": "app_write", "arguments": {} }),
        )
        .await;
    assert_eq!(other_server.data["kind"], "appRefused", "{other_server:?}");
    let denied = sidecar
        .err(
            "wave/app/callTool",
            app_call("echo", json!({ "text": "x" })),
        )
        .await;
    assert_eq!(denied.data["kind"], "appRefused", "{denied:?}");
    assert!(denied.message.contains("permission denied"), "{denied:?}");

    // Asked, declined: never ran.
    let marker = sandbox.root.join("app-wrote");
    let since = sidecar.received();
    let (declined, ()) = tokio::join!(
        sidecar.request(
            "wave/app/callTool",
            app_call("app_write", json!({ "path": marker }))
        ),
        async {
            let asked = sidecar
                .wait_request(since, "wave/session/confirmTool")
                .await;
            assert_eq!(
                asked["params"]["fullName"], "mcp__a__app_write",
                "{asked:#}"
            );
            assert_eq!(asked["params"]["toolCallId"], "call-1", "{asked:#}");
            sidecar.answer(&asked, json!({ "decision": "deny" })).await;
        }
    );
    let declined = declined.expect_err("a declined call is an error");
    assert_eq!(declined.data["kind"], "appRefused", "{declined:?}");
    assert!(declined.message.contains("declined"), "{declined:?}");
    assert!(!marker.exists(), "the declined call ran");

    // Asked, allowed once: it runs and the app gets the server's result.
    let since = sidecar.received();
    let (allowed, ()) = tokio::join!(
        sidecar.request(
            "wave/app/callTool",
            app_call("app_write", json!({ "path": marker }))
        ),
        async {
            let asked = sidecar
                .wait_request(since, "wave/session/confirmTool")
                .await;
            sidecar.answer(&asked, json!({ "decision": "once" })).await;
        }
    );
    let allowed = allowed.expect("an allowed call answers");
    assert!(
        allowed["content"][0]["text"]
            .as_str()
            .unwrap()
            .starts_with("wrote"),
        "{allowed:#}"
    );
    assert_eq!(std::fs::read_to_string(&marker).unwrap(), "ran");

    // Not asked under `defaultMode: allow`: the full result, structured content and _meta kept.
    let clock = sidecar
        .ok("wave/app/callTool", app_call("app_clock", json!({})))
        .await;
    assert_eq!(clock["structuredContent"]["time"], "12:34:56", "{clock:#}");
    assert_eq!(clock["_meta"]["clock/zone"], "UTC", "{clock:#}");
    sidecar.stop().await;
    assert_eq!(sandbox.live_processes(), Vec::<u32>::new());
}

// APPS-5: the history keeps the app's call (with its app) and its full result (structured
// content and `_meta`), so a reopened chat shows the app without calling the tool again.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn apps_5_history_keeps_the_app_and_its_full_result() {
    let sandbox = Sandbox::new();
    sandbox.write_project(json!({ "a": sandbox.server(&["--tools", TOOLS]) }));
    sandbox.allow_tool_calls();
    let model = FakeModel::start(vec![call("mcp__a__app_clock", json!({})), say("done")]).await;
    let sidecar = sidecar(&sandbox, &model, true).await;
    turn(&sidecar, "what time is it").await;
    let calls_before = sandbox.count_events("call");
    let history = sidecar
        .ok("wave/session/history", json!({ "sessionId": "default" }))
        .await;
    let messages: Vec<Value> = history["messages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["message"].clone())
        .collect();
    let assistant = messages
        .iter()
        .find(|m| m["role"] == "assistant" && !m["toolCalls"].as_array().unwrap().is_empty())
        .expect("the assistant's call");
    let call_id = assistant["toolCalls"][0]["id"].clone();
    assert_eq!(
        assistant["toolCalls"][0]["app"]["resourceUri"],
        "ui://test/clock.html"
    );
    let tool = tool_message(&messages, "mcp__a__app_clock");
    assert_eq!(tool["toolCallId"], call_id);
    let app = &tool["app"];
    assert_eq!(
        (&app["server"], &app["tool"], &app["resourceUri"]),
        (
            &json!("a"),
            &json!("app_clock"),
            &json!("ui://test/clock.html")
        )
    );
    assert_eq!(
        app["result"]["structuredContent"]["time"], "12:34:56",
        "{app:#}"
    );
    assert_eq!(app["result"]["_meta"]["clock/zone"], "UTC", "{app:#}");
    assert!(app["result"]["content"][0]["text"].is_string(), "{app:#}");
    // Reading the history called nothing.
    assert_eq!(sandbox.count_events("call"), calls_before);
    // The model never got the structured result or `_meta`: only the text.
    let second = model.request(1).to_string();
    assert!(!second.contains("clock/zone"), "{second}");
    sidecar.stop().await;
    assert_eq!(sandbox.live_processes(), Vec::<u32>::new());
}

// APPS-1: `wave-mcp tools --json` shows each tool's `ui` (resource and visibility); the CLI
// declares no apps extension (it cannot show them): the app tool's own answer says so.
#[test]
fn apps_1_tools_json_shows_ui_and_the_cli_declares_no_apps() {
    let sandbox = Sandbox::new();
    sandbox.write_project(json!({ "a": sandbox.server(&["--tools", TOOLS]) }));
    let output = cli(&sandbox, &["tools", "a", "--json"], &[]);
    assert!(output.status.success(), "{}", text(&output));
    let listed: Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_app_tools_ui(&listed["tools"]);
    let called = cli(&sandbox, &["call", "a", "app_clock", "{}"], &[]);
    assert!(
        text(&called).contains("ui extension not declared"),
        "{}",
        text(&called)
    );
    assert_eq!(sandbox.live_processes(), Vec::<u32>::new());
}

/// The test server's app tools as a tool list shows them (`ui` of each): the app's tool names its
/// `ui://` resource, the app-only and model-only tools their visibility, a plain tool nothing.
fn assert_app_tools_ui(tools: &Value) {
    let ui_of = |name: &str| {
        tools
            .as_array()
            .unwrap()
            .iter()
            .find(|t| t["name"] == name)
            .map(|t| t["ui"].clone())
            .unwrap_or_default()
    };
    assert_eq!(
        ui_of("app_clock"),
        json!({ "resourceUri": "ui://test/clock.html" })
    );
    assert_eq!(ui_of("app_write"), json!({ "visibility": ["app"] }));
    assert_eq!(ui_of("model_only"), json!({ "visibility": ["model"] }));
    assert_eq!(ui_of("echo"), Value::Null);
}
