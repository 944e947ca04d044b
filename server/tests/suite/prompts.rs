//! Prompts and resources through the real sidecar and the real CLI, with our test server's
//! `--prompts` (two prompts, 25 resources in pages of 10, a template): `wave/mcp/prompts`,
//! `wave/mcp/resources`, a command and a mention sent with `wave/session/send` to the recording
//! fake model, a denied server, and `wave-mcp prompts|resources` (PRM-1 .. PRM-3).

use std::time::Duration;

use serde_json::{Value, json};
use wave_mcp_testkit::{FakeModel, say};

use super::lsp_client::*;
use super::support::*;

fn names<'a>(list: &'a Value, key: &str) -> Vec<&'a str> {
    list.as_array()
        .unwrap()
        .iter()
        .map(|p| p[key].as_str().unwrap())
        .collect()
}

/// The user-side text of a model request (user messages joined), without announcements.
fn user_text(request: &Value) -> String {
    request["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["role"] == "user")
        .map(|m| m["content"].as_str().unwrap_or_default().to_string())
        .collect::<Vec<_>>()
        .join("\n\n")
}

/// Waits (bounded) until `servers` servers' prompts are in the cache file.
async fn cached_prompts(sandbox: &Sandbox, servers: usize) -> bool {
    eventually(Duration::from_secs(10), || {
        let cache = std::fs::read_to_string(sandbox.home.join(".wave/mcp-tools-cache.json"))
            .unwrap_or_default();
        cache.matches("\"review\"").count() == servers
    })
    .await
}

// PRM-1, PRM-3: `wave/mcp/prompts` and `wave/mcp/resources` list the live prompts (with their
// arguments in declared order), every page of resources, and the templates; before a connect
// nothing is listed, and after a restart the cached lists are shown, marked as cached.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn prm_1_sidecar_lists_prompts_and_resources_live_and_cached() {
    let sandbox = Sandbox::new();
    sandbox.write_project(json!({ "a": sandbox.server(&["--prompts"]) }));
    let sidecar = Sidecar::start(&sandbox, Value::Null).await;
    let empty = sidecar.ok("wave/mcp/prompts", json!({})).await;
    assert_eq!(empty, json!({ "sessionId": "default", "prompts": [] }));
    sidecar.ok("wave/mcp/connect", json!({ "name": "a" })).await;
    // The catalog is listed right after the connect; its cache write follows its install.
    assert!(
        cached_prompts(&sandbox, 1).await,
        "the prompts were never listed"
    );
    let prompts = sidecar.ok("wave/mcp/prompts", json!({})).await;
    assert_eq!(
        prompts["prompts"][0],
        json!({
            "server": "a", "name": "review", "fullName": "mcp__a__review",
            "description": "Review a file",
            "arguments": [
                { "name": "file", "description": "The file to review", "required": true },
                { "name": "focus", "description": "What to look at", "required": false },
            ],
            "fromCache": false,
        })
    );
    assert_eq!(
        names(&prompts["prompts"], "fullName"),
        ["mcp__a__review", "mcp__a__hello"]
    );
    let resources = sidecar.ok("wave/mcp/resources", json!({})).await;
    let uris = names(&resources["resources"], "uri");
    let expected: Vec<String> = (1..=25).map(|n| format!("test://doc/{n}")).collect();
    assert_eq!(uris, expected, "every page of resources/list");
    assert_eq!(resources["resources"][0]["mimeType"], "text/plain");
    assert_eq!(
        resources["templates"],
        json!([{ "server": "a", "uriTemplate": "test://doc/{n}", "name": "doc",
                 "mimeType": "text/plain", "fromCache": false }])
    );
    sidecar.stop().await;
    sandbox.assert_no_process_left().await;

    let restarted = Sidecar::start(&sandbox, Value::Null).await;
    let cached = restarted.ok("wave/mcp/prompts", json!({})).await;
    assert_eq!(
        names(&cached["prompts"], "fullName"),
        ["mcp__a__review", "mcp__a__hello"]
    );
    assert_eq!(cached["prompts"][0]["fromCache"], true);
    let cached = restarted.ok("wave/mcp/resources", json!({})).await;
    assert_eq!(cached["resources"].as_array().unwrap().len(), 25);
    assert_eq!(
        sandbox.live_processes(),
        Vec::<u32>::new(),
        "the cache started nothing"
    );
    restarted.stop().await;
}

// PRM-2, PRM-3, ADD-4 through the sidecar: a command with a quoted argument and a mention reach
// the model as the turn's user message; the expanded messages are recorded after the typed
// one; a missing required argument ends the turn with that error and sends nothing.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn prm_2_sidecar_send_expands_commands_and_mentions() {
    let sandbox = Sandbox::new();
    sandbox.write_project(json!({ "a": sandbox.server(&["--prompts"]) }));
    let model = FakeModel::start(vec![say("reviewed"), say("read")]).await;
    sandbox.allow_tool_calls();
    let sidecar = Sidecar::with_model(&sandbox, &model.base_url, |_| {}).await;
    let send = |text: &str| json!({ "sessionId": "default", "text": text });
    sidecar
        .ok(
            "wave/session/send",
            send(r#"/mcp__a__review "src/main.rs" "error handling""#),
        )
        .await;
    let ended = sidecar
        .wait_notification(0, "wave/session/turnEnded", |p| p["turn"] == 1)
        .await;
    assert!(ended.get("error").is_none(), "{ended:#}");
    assert!(
        user_text(&model.request(0))
            .starts_with("Review src/main.rs with a focus on error handling."),
        "{:#}",
        model.request(0)
    );
    let recorded: Vec<Value> = sidecar
        .notifications("wave/session/message")
        .into_iter()
        .map(|p| p["message"].clone())
        .filter(|m| m["role"] == "user" && m["isMeta"] == false)
        .collect();
    assert_eq!(
        recorded
            .iter()
            .map(|m| m["content"].as_str().unwrap())
            .collect::<Vec<_>>(),
        [
            r#"/mcp__a__review "src/main.rs" "error handling""#,
            "Review src/main.rs with a focus on error handling."
        ]
    );

    sidecar
        .ok(
            "wave/session/send",
            send("compare @a:test://doc/3 and @a:test://doc/17"),
        )
        .await;
    sidecar
        .wait_notification(0, "wave/session/turnEnded", |p| p["turn"] == 2)
        .await;
    let text = user_text(&model.request(1));
    assert!(
        text.ends_with(
            "compare @a:test://doc/3 and @a:test://doc/17\n\nAttached MCP resources:\n\n\
             <resource uri=\"test://doc/3\" mimeType=\"text/plain\">\ndocument 3\n</resource>\n\n\
             <resource uri=\"test://doc/17\" mimeType=\"text/plain\">\ndocument 17\n</resource>"
        ),
        "{text}"
    );

    sidecar
        .ok("wave/session/send", send("/mcp__a__review"))
        .await;
    let ended = sidecar
        .wait_notification(0, "wave/session/turnEnded", |p| p["turn"] == 3)
        .await;
    assert_eq!(
        ended["error"],
        "missing required argument \"file\" of /mcp__a__review (usage: /mcp__a__review <file> [focus])"
    );
    assert_eq!(
        model.requests().len(),
        2,
        "the failed command reached the model"
    );
    sidecar.stop().await;
    sandbox.assert_no_process_left().await;
}

// PRM-1, PRM-3: a server the settings file's rules deny is not offered (its prompts and
// resources are left out), and the others still are.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn prm_1_sidecar_does_not_offer_denied_servers() {
    let sandbox = Sandbox::new();
    sandbox.write_project(json!({
        "a": sandbox.server(&["--prompts", "--name", "a"]),
        "secret": sandbox.server(&["--prompts", "--name", "secret"]),
    }));
    std::fs::create_dir_all(sandbox.workdir.join(".wave")).unwrap();
    std::fs::write(
        sandbox.workdir.join(".wave/settings.json"),
        r#"{"permissions": {"deny": ["mcp__secret__*"]}}"#,
    )
    .unwrap();
    let sidecar = Sidecar::start(&sandbox, Value::Null).await;
    sidecar.ok("wave/mcp/connect", json!({ "name": "a" })).await;
    sidecar
        .ok("wave/mcp/connect", json!({ "name": "secret" }))
        .await;
    assert!(
        cached_prompts(&sandbox, 2).await,
        "both servers' prompts were cached"
    );
    let prompts = sidecar.ok("wave/mcp/prompts", json!({})).await;
    let servers: Vec<&str> = names(&prompts["prompts"], "server");
    assert_eq!(servers, ["a", "a"], "{prompts:#}");
    let resources = sidecar.ok("wave/mcp/resources", json!({})).await;
    assert!(
        resources["resources"]
            .as_array()
            .unwrap()
            .iter()
            .all(|r| r["server"] == "a"),
        "{resources:#}"
    );
    sidecar.stop().await;
    sandbox.assert_no_process_left().await;
}

// PRM-1, PRM-3: `wave-mcp prompts NAME` and `wave-mcp resources NAME` connect, list, and leave
// nothing running.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn prm_1_cli_lists_prompts_and_resources() {
    let sandbox = Sandbox::new();
    sandbox.write_project(json!({ "a": sandbox.server(&["--prompts"]) }));
    let out = cli(&sandbox, &["prompts", "a"], &[]);
    assert!(out.status.success(), "{}", text(&out));
    let shown = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(shown.starts_with("2 prompts:\n"), "{shown}");
    assert!(shown.contains("\n/mcp__a__review <file> [focus]\n  Review a file\n  file, required: The file to review\n  focus: What to look at\n"), "{shown}");
    assert!(shown.contains("\n/mcp__a__hello\n  Say hello\n"), "{shown}");
    let out = cli(&sandbox, &["resources", "a", "--json"], &[]);
    assert!(out.status.success(), "{}", text(&out));
    let listed: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(listed["resources"].as_array().unwrap().len(), 25);
    assert_eq!(listed["templates"][0]["uriTemplate"], "test://doc/{n}");
    let out = cli(&sandbox, &["resources", "a"], &[]);
    let shown = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        shown.contains("  @a:test://doc/25  doc-25  (text/plain)\n"),
        "{shown}"
    );
    let out = cli(&sandbox, &["prompts", "ghost"], &[]);
    assert!(!out.status.success());
    assert!(
        text(&out).contains("no MCP server named \"ghost\""),
        "{}",
        text(&out)
    );
    sandbox.assert_no_process_left().await;
}

// PRM-2, PRM-3 in `wave-mcp chat`: a command line gets the prompt, a missing argument prints the
// error and sends nothing, a mention attaches the resource.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn prm_2_cli_chat_sends_prompts_and_mentions() {
    let sandbox = Sandbox::new();
    sandbox.write_project(json!({ "a": sandbox.server(&["--prompts"]) }));
    let model = FakeModel::start(vec![say("reviewed it"), say("read it")]).await;
    let chat = command(
        &sandbox,
        &["chat"],
        &[("WAVE_BASE_URL", &model.base_url), ("WAVE_MODEL", "fake")],
    );
    let output = wave_mcp_testkit::run_with_input(
        chat,
        b"/mcp__a__review src/a.rs\n/mcp__a__review\n@a:test://doc/2 what is it?\n/exit\n",
    )
    .await;
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(output.status.success(), "{}", text(&output));
    let expected = [
        "reviewed it",
        "error: missing required argument \"file\" of /mcp__a__review (usage: /mcp__a__review <file> [focus])",
        "read it",
    ];
    wave_mcp_testkit::assert_in_order(&stdout, &expected);
    assert_eq!(model.requests().len(), 2);
    assert!(
        user_text(&model.request(0)).starts_with("Review src/a.rs with a focus on everything."),
        "{:#}",
        model.request(0)
    );
    assert!(
        user_text(&model.request(1)).contains(
            "@a:test://doc/2 what is it?\n\nAttached MCP resources:\n\n<resource uri=\"test://doc/2\" mimeType=\"text/plain\">\ndocument 2\n</resource>"
        ),
        "{:#}",
        model.request(1)
    );
    sandbox.assert_no_process_left().await;
}

// PRM-2: a server whose name makes `mcp__<server>__<prompt>` longer than 64 characters offers
// its prompts under hashed names (TOOL-6's rule); the command the `/` menu offers still reaches
// that server's prompt.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn prm_2_a_hashed_prompt_name_reaches_its_server() {
    let sandbox = Sandbox::new();
    let server = "a-server-whose-name-is-long-enough-to-hash-every-prompt";
    sandbox.write_project(json!({ server: sandbox.server(&["--prompts"]) }));
    let model = FakeModel::start(vec![say("reviewed")]).await;
    sandbox.allow_tool_calls();
    let sidecar = Sidecar::with_model(&sandbox, &model.base_url, |_| {}).await;
    sidecar
        .ok("wave/mcp/connect", json!({ "name": server }))
        .await;
    // The catalog is listed right after the connect; its cache write follows its install.
    assert!(
        cached_prompts(&sandbox, 1).await,
        "the prompts were never listed"
    );
    let prompts = sidecar.ok("wave/mcp/prompts", json!({})).await;
    let review = prompts["prompts"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["name"] == "review")
        .unwrap_or_else(|| panic!("{prompts:#}"));
    let command = review["fullName"].as_str().unwrap();
    assert_eq!(command.len(), 64, "{command}");
    assert!(!command.ends_with("__review"), "hashed: {command}");
    let turn = sidecar.send_text(&format!("/{command} lib.rs")).await;
    let ended = sidecar
        .wait_notification(0, "wave/session/turnEnded", |p| p["turn"] == turn)
        .await;
    assert!(ended.get("error").is_none(), "{ended:#}");
    assert!(
        user_text(&model.request(0)).starts_with("Review lib.rs"),
        "{:#}",
        model.request(0)
    );
    sidecar.stop().await;
}

// SRV-3: a server that does not declare the `completions` capability is never sent
// `completion/complete` (our test server records every one it gets); `wave/mcp/complete`
// answers with no values. A ref without its name is the request's error.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn srv_3_sidecar_never_asks_a_server_without_the_completions_capability() {
    let sandbox = Sandbox::new();
    sandbox.write_project(json!({ "a": sandbox.server(&["--prompts"]) }));
    let sidecar = Sidecar::start(&sandbox, Value::Null).await;
    sidecar.ok("wave/mcp/connect", json!({ "name": "a" })).await;
    for reference in [
        json!({ "type": "ref/prompt", "name": "review" }),
        json!({ "type": "ref/resource", "uri": "test://doc/{n}" }),
    ] {
        let answer = sidecar
            .ok(
                "wave/mcp/complete",
                json!({
                    "server": "a", "ref": reference,
                    "argument": { "name": "file", "value": "src" },
                    "context": { "arguments": { "focus": "style" } },
                }),
            )
            .await;
        assert_eq!(answer, json!({ "values": [] }));
    }
    let asked: Vec<String> = sandbox
        .events()
        .into_iter()
        .filter(|e| e.starts_with("complete "))
        .collect();
    assert_eq!(asked, Vec::<String>::new());
    let malformed = sidecar
        .err(
            "wave/mcp/complete",
            json!({
                "server": "a", "ref": { "type": "ref/prompt" },
                "argument": { "name": "file", "value": "" },
            }),
        )
        .await;
    assert!(malformed.message.contains("ref/prompt"), "{malformed:?}");
}

// SRV-3: a server that declares `completions` is asked `completion/complete` with the prompt or
// template, the argument as typed and the arguments already given as context; its values come
// back as `wave/mcp/complete`'s answer.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn srv_3_sidecar_completes_prompt_arguments_with_context_and_template_variables() {
    let sandbox = Sandbox::new();
    sandbox.write_project(json!({ "a": sandbox.server(&["--prompts", "--completions"]) }));
    let sidecar = Sidecar::start(&sandbox, Value::Null).await;
    sidecar.ok("wave/mcp/connect", json!({ "name": "a" })).await;
    let review = json!({ "type": "ref/prompt", "name": "review" });
    let files = sidecar
        .ok(
            "wave/mcp/complete",
            json!({ "server": "a", "ref": review, "argument": { "name": "file", "value": "src/" } }),
        )
        .await;
    assert_eq!(files["values"], json!(["src/main.rs", "src/lib.rs"]));
    let focus = sidecar
        .ok(
            "wave/mcp/complete",
            json!({ "server": "a", "ref": review, "argument": { "name": "focus", "value": "" },
                    "context": { "arguments": { "file": "src/main.rs" } } }),
        )
        .await;
    assert_eq!(focus["values"], json!(["ownership", "lifetimes"]));
    let numbers = sidecar
        .ok(
            "wave/mcp/complete",
            json!({ "server": "a", "ref": { "type": "ref/resource", "uri": "test://doc/{n}" },
                    "argument": { "name": "n", "value": "2" } }),
        )
        .await;
    assert_eq!(
        numbers["values"],
        json!(["2", "20", "21", "22", "23", "24", "25"])
    );
    let asked: Vec<String> = sandbox
        .events()
        .into_iter()
        .filter(|e| e.starts_with("complete "))
        .map(|e| e.splitn(3, ' ').nth(2).unwrap_or_default().to_string())
        .collect();
    assert_eq!(
        asked,
        vec!["file src/", "focus  file=src/main.rs", "n 2"],
        "what the server was asked"
    );
    sidecar.stop().await;
}

/// `wave-mcp chat` on a pseudo-terminal: what it printed so far (read on a thread of its own).
struct PtyChat {
    child: std::process::Child,
    master: std::fs::File,
    seen: std::sync::Arc<std::sync::Mutex<Vec<u8>>>,
}

impl PtyChat {
    fn start(mut chat: std::process::Command) -> PtyChat {
        use std::io::Read;
        let size = nix::pty::Winsize {
            ws_row: 40,
            ws_col: 200,
            ws_xpixel: 0,
            ws_ypixel: 0,
        };
        let pty = nix::pty::openpty(Some(&size), None).expect("openpty");
        let slave = std::fs::File::from(pty.slave);
        chat.stdin(slave.try_clone().unwrap())
            .stdout(slave.try_clone().unwrap())
            .stderr(slave);
        let child = chat.spawn().expect("wave-mcp chat");
        let master = std::fs::File::from(pty.master);
        let mut reader = master.try_clone().unwrap();
        let seen = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
        let sink = seen.clone();
        std::thread::spawn(move || {
            let mut buf = [0u8; 4096];
            // Ends with an error (EIO) once the chat and its children closed the terminal.
            while let Ok(n) = reader.read(&mut buf) {
                if n == 0 {
                    break;
                }
                sink.lock().unwrap().extend_from_slice(&buf[..n]);
            }
        });
        // The chat's own copy of the terminal is closed when `chat` (the Command) is dropped.
        drop(chat);
        PtyChat {
            child,
            master,
            seen,
        }
    }

    fn shown(&self) -> String {
        String::from_utf8_lossy(&self.seen.lock().unwrap()).into_owned()
    }

    fn write(&mut self, keys: &str) {
        use std::io::Write;
        self.master.write_all(keys.as_bytes()).unwrap();
    }

    /// Waits until the terminal shows `text` (after what it showed before `since`).
    async fn wait_for(&self, since: usize, text: &str) -> usize {
        let found = eventually(Duration::from_secs(30), || {
            self.shown().get(since..).is_some_and(|s| s.contains(text))
        })
        .await;
        assert!(
            found,
            "the terminal never showed {text:?}:\n{}",
            self.shown()
        );
        self.shown().len()
    }
}

// SRV-3: `wave-mcp chat` on a terminal completes with Tab: the first word to the server's
// prefix and then to its prompt, an argument's name, and its value from the server's
// `completion/complete` (the server records the request); Enter sends the completed command, so
// the model gets the prompt with the completed value.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn srv_3_cli_chat_completes_prompt_arguments_with_tab_on_a_terminal() {
    let sandbox = Sandbox::new();
    sandbox.write_project(json!({ "a": sandbox.server(&["--prompts", "--completions"]) }));
    let model = FakeModel::start(vec![say("reviewed it")]).await;
    let mut chat = command(
        &sandbox,
        &["chat"],
        &[("WAVE_BASE_URL", &model.base_url), ("WAVE_MODEL", "fake")],
    );
    chat.env("TERM", "xterm");
    let mut chat = PtyChat::start(chat);
    let at = chat.wait_for(0, "> ").await;
    chat.write("/mcp__");
    let at = chat.wait_for(at, "/mcp__").await;
    chat.write("\t");
    let at = chat.wait_for(at, "/mcp__a__").await;
    chat.write("rev\t");
    let at = chat.wait_for(at, "/mcp__a__review ").await;
    chat.write("fi\t");
    let at = chat.wait_for(at, "/mcp__a__review file=").await;
    chat.write("src/m\t");
    let at = chat.wait_for(at, "/mcp__a__review file=src/main.rs").await;
    chat.write("\r");
    let at = chat.wait_for(at, "reviewed it").await;
    chat.write("/exit\r");
    let exited = eventually(Duration::from_secs(30), || {
        chat.child.try_wait().ok().flatten().is_some()
    })
    .await;
    assert!(exited, "the chat did not exit:\n{}", &chat.shown()[at..]);
    let status = chat.child.wait().unwrap();
    assert!(status.success(), "{status}:\n{}", chat.shown());
    assert!(
        user_text(&model.request(0)).starts_with("Review src/main.rs with a focus on everything."),
        "{:#}",
        model.request(0)
    );
    let asked: Vec<String> = sandbox
        .events()
        .into_iter()
        .filter(|e| e.starts_with("complete "))
        .collect();
    assert_eq!(asked.len(), 1, "{asked:?}");
    assert!(asked[0].ends_with(" file src/m"), "{asked:?}");
    sandbox.assert_no_process_left().await;
}
