//! Prompts as slash commands and resources as mentions, against third-party peers: the Python
//! SDK server `tests/peers/py_prompts_server.py` (prompts with and without arguments, text,
//! image and JSON resources, a template, list changes at run time) and npm server-everything
//! (prompts with arguments and an embedded resource, many resources, templates). The recording
//! fake model shows the user message a command or a mention produced.

use std::path::{Path, PathBuf};

use serde_json::{Value, json};
use wave_mcp_agent::{Agent, AgentOptions, ModelSettings, PermissionRules};
use wave_mcp_manager::{Catalog, McpManager};
use wave_mcp_testkit::{FakeModel, say};

use super::super::lsp_client::Sidecar;
use super::*;

fn py_prompts_script() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/peers/py_prompts_server.py")
}

/// A stdio entry for the Python prompts peer, marked with the sandbox.
fn py_entry(sandbox: &Sandbox, python: &Path) -> Value {
    let (var, value) = marker_env(sandbox);
    json!({ "command": python, "args": [py_prompts_script()], "env": { var: value } })
}

fn everything_entry(sandbox: &Sandbox, bin: &Path) -> Value {
    let (var, value) = marker_env(sandbox);
    json!({ "command": bin, "args": ["stdio"], "env": { var: value } })
}

fn catalog(manager: &McpManager, name: &str) -> Catalog {
    (*server(manager, name).catalog).clone()
}

fn prompt_names(catalog: &Catalog) -> Vec<&str> {
    catalog.prompts.iter().map(|p| p.name.as_str()).collect()
}

fn uris(catalog: &Catalog) -> Vec<&str> {
    catalog.resources.iter().map(|r| r.uri.as_str()).collect()
}

/// Waits until the live catalog of `name` has been listed.
async fn listed(manager: &McpManager, name: &str) -> Catalog {
    let done = eventually(Duration::from_secs(20), || {
        let c = catalog(manager, name);
        !c.from_cache && !c.prompts.is_empty()
    })
    .await;
    assert!(done, "the catalog of {name} was never listed");
    catalog(manager, name)
}

fn agent(sandbox: &Sandbox, servers: Value, model: &FakeModel, vision: bool) -> Agent {
    Agent::create(AgentOptions {
        workdir: sandbox.workdir.clone(),
        home: Some(sandbox.home.clone()),
        mcp_servers: servers.as_object().cloned().unwrap(),
        model: ModelSettings {
            base_url: Some(model.base_url.clone()),
            model: Some("fake".into()),
            vision,
            ..ModelSettings::default()
        },
        mcp_timeouts: sandbox.options(Value::Null).timeouts,
        permissions: Sandbox::pre_approved(),
        ..AgentOptions::default()
    })
    .unwrap()
}

/// Where an instructions announcement joined to a user message begins (INS-*).
const ANNOUNCEMENT: &str = "\n\n<!-- wave-mcp:announce";

/// The `content` of the last `user` message of a recorded request, without an instructions
/// announcement the first turn joins to it.
fn last_user_content(request: &Value) -> Value {
    let content = request["messages"]
        .as_array()
        .unwrap()
        .iter()
        .rev()
        .find(|m| m["role"] == "user")
        .map(|m| m["content"].clone())
        .expect("no user message");
    match content
        .as_str()
        .and_then(|text| text.split_once(ANNOUNCEMENT))
    {
        Some((typed, _)) => Value::String(typed.to_string()),
        None => content,
    }
}

async fn finish(mut agent: Agent, sandbox: &Sandbox) {
    agent.destroy().await;
    assert_eq!(marked_processes(sandbox), Vec::<u32>::new());
}

// PRM-1, CACHE-2, CACHE-5: prompts (with their declared arguments), resources and templates of
// the Python peer are listed once it is connected, written to the cache beside its tools, and
// shown from the cache by the next manager that has not started it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn prm_1_python_prompts_and_resources_are_listed_and_cached() {
    let Some(python) = python() else { return };
    let sandbox = Sandbox::new();
    let servers = json!({ "py": py_entry(&sandbox, &python) });
    let manager = McpManager::new(sandbox.options(servers.clone()));
    assert_eq!(catalog(&manager, "py"), Catalog::default());
    manager.connect("py").await.unwrap();
    let live = listed(&manager, "py").await;
    assert_eq!(prompt_names(&live), ["greet", "status", "picture"]);
    let greet = &live.prompts[0];
    assert_eq!(greet.full_name, "mcp__py__greet");
    assert_eq!(greet.description.as_deref(), Some("Greets someone"));
    let arguments: Vec<(&str, bool)> = greet
        .arguments
        .iter()
        .map(|a| (a.name.as_str(), a.required))
        .collect();
    assert_eq!(arguments, [("name", true), ("style", false)]);
    assert!(live.prompts[1].arguments.is_empty());
    assert_eq!(
        uris(&live),
        ["notes://readme", "notes://logo", "notes://config"]
    );
    assert_eq!(live.resources[1].mime_type.as_deref(), Some("image/png"));
    let templates: Vec<&str> = live.templates.iter().map(|t| t.uri.as_str()).collect();
    assert_eq!(templates, ["notes://item/{id}"]);
    // The cache write runs in the background; cleanup waits for it.
    manager.cleanup().await;
    assert_eq!(marked_processes(&sandbox), Vec::<u32>::new());

    let later = McpManager::new(sandbox.options(servers));
    let cached = catalog(&later, "py");
    assert!(cached.from_cache, "{cached:?}");
    assert_eq!(
        Catalog {
            from_cache: false,
            ..cached
        },
        live
    );
    assert_eq!(
        later.background_tasks(),
        0,
        "showing the cache started something"
    );
    later.cleanup().await;
}

// PRM-4: `prompts/list_changed` and `resources/list_changed` refresh the lists live, and the
// change is published as a new snapshot (what `wave/mcp/serversChanged` carries).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn prm_4_python_list_changes_refresh_prompts_and_resources() {
    let Some(python) = python() else { return };
    let sandbox = Sandbox::new();
    let manager = McpManager::new(sandbox.options(json!({ "py": py_entry(&sandbox, &python) })));
    manager.connect("py").await.unwrap();
    listed(&manager, "py").await;
    let mut events = manager.subscribe();
    let result = manager
        .call_tool("mcp__py__add_prompt", args(json!({ "name": "fresh" })))
        .await
        .unwrap();
    assert_eq!(result_text(&result), "added fresh");
    let added = eventually(Duration::from_secs(20), || {
        prompt_names(&catalog(&manager, "py")).contains(&"fresh")
    })
    .await;
    assert!(added, "{:?}", catalog(&manager, "py"));
    let fresh = catalog(&manager, "py").prompts.pop().unwrap();
    assert_eq!(fresh.full_name, "mcp__py__fresh");
    assert_eq!(
        fresh.description.as_deref(),
        Some("added at run time: fresh")
    );
    let mut published = false;
    while let Ok(snapshot) = events.try_recv() {
        let row = snapshot.servers.iter().find(|s| s.name == "py").unwrap();
        published |= prompt_names(&row.catalog).contains(&"fresh");
    }
    assert!(published, "no snapshot carried the new prompt");

    manager
        .call_tool("mcp__py__add_note", args(json!({ "name": "todo" })))
        .await
        .unwrap();
    let noted = eventually(Duration::from_secs(20), || {
        uris(&catalog(&manager, "py")).contains(&"notes://todo")
    })
    .await;
    assert!(noted, "{:?}", catalog(&manager, "py"));
    manager.cleanup().await;
    assert_eq!(marked_processes(&sandbox), Vec::<u32>::new());
}

// PRM-2: `/mcp__py__greet Ada "very warm"` maps the arguments in declared order, gets the
// prompt, and its message is the turn's user message; a prompt without arguments gives two
// user messages (joined on the wire); `key=value` names an argument.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn prm_2_python_prompt_becomes_the_user_message() {
    let Some(python) = python() else { return };
    let sandbox = Sandbox::new();
    let model = FakeModel::start(vec![say("one"), say("two"), say("three"), say("four")]).await;
    let mut agent = agent(
        &sandbox,
        json!({ "py": py_entry(&sandbox, &python) }),
        &model,
        false,
    );
    let report = agent
        .send_message(r#"/mcp__py__greet Ada "very warm""#)
        .await
        .unwrap();
    assert_eq!(report.text, "one");
    assert_eq!(report.dialed, 1);
    assert_eq!(
        last_user_content(&model.request(0)),
        "Greet Ada in a very warm way."
    );
    agent.send_message("/mcp__py__status").await.unwrap();
    assert_eq!(
        last_user_content(&model.request(1)),
        "What is the status?\n\nAnswer in one line."
    );
    agent
        .send_message("/mcp__py__greet style=formal Grace")
        .await
        .unwrap();
    assert_eq!(
        last_user_content(&model.request(2)),
        "Greet Grace in a formal way."
    );
    // A prompt's image, for a model without vision: named, not sent.
    agent.send_message("/mcp__py__picture").await.unwrap();
    assert_eq!(
        last_user_content(&model.request(3)),
        "Describe this picture.\n\n[Image: image/png]"
    );
    let image = &agent.history()[agent.history().len() - 2];
    assert_eq!(image.images.len(), 1, "the image is kept in the history");
    finish(agent, &sandbox).await;
}

// PRM-2: a missing required argument, an unknown prompt or an unknown server is a clear error,
// and nothing reaches the model or the history. ADD-4: `/settings ...` is sent verbatim.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn prm_2_python_missing_argument_reaches_nothing() {
    let Some(python) = python() else { return };
    let sandbox = Sandbox::new();
    let model = FakeModel::start(vec![say("verbatim")]).await;
    let mut agent = agent(
        &sandbox,
        json!({ "py": py_entry(&sandbox, &python) }),
        &model,
        false,
    );
    let error = agent.send_message("/mcp__py__greet").await.unwrap_err();
    assert_eq!(
        error.to_string(),
        "missing required argument \"name\" of /mcp__py__greet (usage: /mcp__py__greet <name> [style])"
    );
    let error = agent.send_message("/mcp__py__nope x").await.unwrap_err();
    assert!(
        error.to_string().starts_with(
            "/mcp__py__nope: MCP server \"py\" has no such prompt (it has /mcp__py__greet"
        ),
        "{error}"
    );
    let error = agent.send_message("/mcp__ghost__p").await.unwrap_err();
    assert!(
        error.to_string().contains("no configured MCP server"),
        "{error}"
    );
    assert!(
        model.requests().is_empty(),
        "a failed command reached the model"
    );
    assert!(agent.history().is_empty(), "{:?}", agent.history());
    agent.send_message("/settings model gpt").await.unwrap();
    assert_eq!(last_user_content(&model.request(0)), "/settings model gpt");
    finish(agent, &sandbox).await;
}

// PRM-3: `@py:notes://readme` attaches the text, a JSON blob is decoded as text, and an image
// resource goes to a vision model as an image part of the user's message.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn prm_3_python_mentions_attach_resource_contents() {
    let Some(python) = python() else { return };
    let sandbox = Sandbox::new();
    let model = FakeModel::start(vec![say("read"), say("seen")]).await;
    let mut agent = agent(
        &sandbox,
        json!({ "py": py_entry(&sandbox, &python) }),
        &model,
        true,
    );
    agent
        .send_message("compare @py:notes://readme with @py:notes://config.")
        .await
        .unwrap();
    assert_eq!(
        last_user_content(&model.request(0)),
        "compare @py:notes://readme with @py:notes://config.\n\nAttached MCP resources:\n\n\
         <resource uri=\"notes://readme\" mimeType=\"text/plain\">\nRead me first: the notes server.\n</resource>\n\n\
         <resource uri=\"notes://config\" mimeType=\"application/json\">\n{\"answer\": 42}\n</resource>"
    );
    agent
        .send_message("what is @py:notes://logo")
        .await
        .unwrap();
    let content = last_user_content(&model.request(1));
    let parts = content.as_array().expect("parts with an image");
    assert_eq!(parts.last().unwrap()["type"], "image_url");
    let url = parts.last().unwrap()["image_url"]["url"].as_str().unwrap();
    assert!(
        url.starts_with("data:image/png;base64,iVBORw0KGgo"),
        "{url}"
    );
    let error = agent
        .send_message("read @py:notes://missing")
        .await
        .unwrap_err();
    assert!(
        error
            .to_string()
            .starts_with("resource \"notes://missing\" of MCP server \"py\" could not be read"),
        "{error}"
    );
    assert_eq!(model.requests().len(), 2);
    finish(agent, &sandbox).await;
}

// PRM-1, PRM-3: a server the permission rules deny offers nothing and cannot be used.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn prm_1_python_denied_server_is_not_usable() {
    let Some(python) = python() else { return };
    let sandbox = Sandbox::new();
    let model = FakeModel::start(vec![]).await;
    let mut agent = Agent::create(AgentOptions {
        permissions: PermissionRules {
            deny: vec!["mcp__py__*".into()],
            ..PermissionRules::default()
        },
        ..agent_options(
            &sandbox,
            json!({ "py": py_entry(&sandbox, &python) }),
            &model,
        )
    })
    .unwrap();
    let error = agent.send_message("/mcp__py__status").await.unwrap_err();
    assert!(
        error.to_string().starts_with("permission denied"),
        "{error}"
    );
    let error = agent
        .send_message("see @py:notes://readme")
        .await
        .unwrap_err();
    assert!(
        error.to_string().starts_with("permission denied"),
        "{error}"
    );
    assert!(model.requests().is_empty());
    finish(agent, &sandbox).await;
}

fn agent_options(sandbox: &Sandbox, servers: Value, model: &FakeModel) -> AgentOptions {
    AgentOptions {
        workdir: sandbox.workdir.clone(),
        home: Some(sandbox.home.clone()),
        mcp_servers: servers.as_object().cloned().unwrap(),
        model: ModelSettings {
            base_url: Some(model.base_url.clone()),
            model: Some("fake".into()),
            ..ModelSettings::default()
        },
        permissions: Sandbox::pre_approved(),
        ..AgentOptions::default()
    }
}

// PRM-1, PRM-2, PRM-3: server-everything's prompts (with and without arguments, one embedding a
// resource), its many resources and its templates; a command and a mention reach the model.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn prm_2_everything_prompts_and_resources() {
    let Some(bin) = everything_bin() else { return };
    let sandbox = Sandbox::new();
    let model = FakeModel::start(vec![say("a"), say("b"), say("c"), say("d")]).await;
    let mut agent = agent(
        &sandbox,
        json!({ "everything": everything_entry(&sandbox, &bin) }),
        &model,
        false,
    );
    agent
        .send_message("/mcp__everything__simple-prompt")
        .await
        .unwrap();
    assert_eq!(
        last_user_content(&model.request(0)),
        "This is a simple prompt without arguments."
    );
    let live = listed(agent.manager(), "everything").await;
    for name in ["simple-prompt", "args-prompt", "resource-prompt"] {
        assert!(
            prompt_names(&live).contains(&name),
            "{:?}",
            prompt_names(&live)
        );
    }
    let args_prompt = live
        .prompts
        .iter()
        .find(|p| p.name == "args-prompt")
        .unwrap();
    let arguments: Vec<(&str, bool)> = args_prompt
        .arguments
        .iter()
        .map(|a| (a.name.as_str(), a.required))
        .collect();
    assert_eq!(arguments, [("city", true), ("state", false)]);
    assert!(live.resources.len() > 3, "{:?}", uris(&live));
    let instructions = "demo://resource/static/document/instructions.md";
    assert!(uris(&live).contains(&instructions), "{:?}", uris(&live));
    let templates: Vec<&str> = live.templates.iter().map(|t| t.uri.as_str()).collect();
    assert!(
        templates.contains(&"demo://resource/dynamic/text/{resourceId}"),
        "{templates:?}"
    );

    agent
        .send_message(r#"/mcp__everything__args-prompt "New York" state=NY"#)
        .await
        .unwrap();
    assert_eq!(
        last_user_content(&model.request(1)),
        "What's weather in New York, NY?"
    );
    agent
        .send_message("/mcp__everything__resource-prompt Text 2")
        .await
        .unwrap();
    let embedded = last_user_content(&model.request(2));
    let embedded = embedded.as_str().unwrap();
    assert!(
        embedded.starts_with("This prompt includes the Text resource with id: 2."),
        "{embedded}"
    );
    assert!(
        embedded.contains("<resource uri=\"demo://resource/dynamic/text/2\" mimeType=\"text/plain\">\nResource 2: This is a plaintext resource"),
        "{embedded}"
    );
    agent
        .send_message(&format!("summarize @everything:{instructions}"))
        .await
        .unwrap();
    let mention = last_user_content(&model.request(3));
    let expected = everything_instructions();
    assert!(
        mention.as_str().unwrap().contains(expected.trim_end()),
        "{mention}"
    );
    let error = agent
        .send_message("/mcp__everything__args-prompt")
        .await
        .unwrap_err();
    assert!(
        error
            .to_string()
            .starts_with("missing required argument \"city\""),
        "{error}"
    );
    assert_eq!(model.requests().len(), 4);
    finish(agent, &sandbox).await;
}

// PRM-4 with server-everything: its `gzip-file-as-resource` tool registers a session resource at
// run time (the TypeScript SDK then sends `notifications/resources/list_changed`); the manager
// lists the resources again and the new one is offered, without a reconnect.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn prm_4_everything_resource_added_at_run_time_is_listed() {
    let Some(bin) = everything_bin() else { return };
    let sandbox = Sandbox::new();
    let manager =
        McpManager::new(sandbox.options(json!({ "everything": everything_entry(&sandbox, &bin) })));
    manager.connect("everything").await.unwrap();
    let before = listed(&manager, "everything").await;
    let connection = server(&manager, "everything").connection_id;
    let result = manager
        .call_tool(
            "mcp__everything__gzip-file-as-resource",
            args(json!({ "name": "hello.txt.gz", "data": "data:text/plain;base64,aGVsbG8=" })),
        )
        .await
        .unwrap();
    assert_ne!(result.is_error, Some(true), "{}", result_text(&result));
    let added = |catalog: &Catalog| {
        uris(catalog)
            .iter()
            .find(|uri| uri.ends_with("hello.txt.gz"))
            .map(|uri| uri.to_string())
    };
    assert_eq!(added(&before), None);
    let listed_now = eventually(Duration::from_secs(20), || {
        added(&catalog(&manager, "everything")).is_some()
    })
    .await;
    assert!(listed_now, "{:?}", uris(&catalog(&manager, "everything")));
    assert_eq!(server(&manager, "everything").connection_id, connection);
    manager.cleanup().await;
    assert_eq!(marked_processes(&sandbox), Vec::<u32>::new());
}

// SRV-3: `wave/mcp/complete` through the sidecar asks server-everything's `completion/complete`:
// its completable prompt's first argument by prefix, its second with the first as context, and
// the variable of its dynamic text resource template.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn srv_3_sidecar_completes_server_everything_prompt_arguments_and_template_variables() {
    let Some(bin) = everything_bin() else { return };
    let sandbox = Sandbox::new();
    sandbox.write_project(json!({ "everything": everything_entry(&sandbox, &bin) }));
    let sidecar = Sidecar::start(&sandbox, Value::Null).await;
    sidecar
        .ok("wave/mcp/connect", json!({ "name": "everything" }))
        .await;
    let prompt = json!({ "type": "ref/prompt", "name": "completable-prompt" });
    let departments = sidecar
        .ok(
            "wave/mcp/complete",
            json!({ "server": "everything", "ref": prompt,
                    "argument": { "name": "department", "value": "S" } }),
        )
        .await;
    assert_eq!(departments["values"], json!(["Sales", "Support"]));
    let names = sidecar
        .ok(
            "wave/mcp/complete",
            json!({ "server": "everything", "ref": prompt,
                    "argument": { "name": "name", "value": "" },
                    "context": { "arguments": { "department": "Engineering" } } }),
        )
        .await;
    assert_eq!(names["values"], json!(["Alice", "Bob", "Charlie"]));
    let ids = sidecar
        .ok(
            "wave/mcp/complete",
            json!({ "server": "everything",
                    "ref": { "type": "ref/resource", "uri": "demo://resource/dynamic/text/{resourceId}" },
                    "argument": { "name": "resourceId", "value": "7" } }),
        )
        .await;
    assert_eq!(ids["values"], json!(["7"]));
    sidecar.stop().await;
    assert_eq!(marked_processes(&sandbox), Vec::<u32>::new());
}
