//! The converged tool pool: one `Exec` tool with a catalog; scripts call MCP tools through the
//! same funnel as flat calls (TOOL-2, TOOL-4), permissions included, within a time limit.

use std::time::Duration;

use serde_json::{Value, json};
use wave_mcp_agent::{Agent, AgentOptions, ToolPoolMode};

use super::support::*;

fn exec_declaration(request: &Value) -> Value {
    let tools = request["tools"].as_array().unwrap();
    assert_eq!(tools.len(), 1, "{tools:?}");
    tools[0]["function"].clone()
}

// TOOL-2, TOOL-4: one Exec tool whose description lists the tools; a script calls two tools of
// two servers, each call reaches its server, and the results return to the script.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tool_4_exec_script_calls_two_tools_of_two_servers() {
    let sandbox = Sandbox::new();
    let model = FakeModel::start(vec![
        exec(
            r#"const said = await tools["mcp__a__echo"]({ text: "from a" });
               const sum = await tools["mcp__b__add"]({ a: 2, b: 3 });
               console.log("echo gave", said);
               return { said, sum };"#,
        ),
        say("done"),
    ])
    .await;
    let servers = json!({
        "a": sandbox.server("a", &["--tools", "echo"]),
        "b": sandbox.server("b", &["--tools", "add"]),
    });
    let mut agent = sandbox.exec_agent(servers, &model);
    let report = agent.send_message("use both").await.unwrap();

    let exec_tool = exec_declaration(&model.request(0));
    assert_eq!(exec_tool["name"], "Exec");
    let description = exec_tool["description"].as_str().unwrap();
    assert!(
        description.contains("- mcp__a__echo: Echo the given text back.\n"),
        "{description}"
    );
    assert!(
        description.contains("- mcp__b__add: Add two numbers.\n"),
        "{description}"
    );
    assert_eq!(exec_tool["parameters"]["required"], json!(["script"]));

    let outcome = &report.tool_calls[0].outcome;
    assert!(!outcome.is_error, "{outcome:?}");
    assert_eq!(
        outcome.text,
        "console output:\necho gave from a\n\nreturned:\n{\n  \"said\": \"from a\",\n  \"sum\": \"5\"\n}"
    );
    assert_eq!(
        tool_results(&model.request(1)),
        std::slice::from_ref(&outcome.text)
    );
    assert_eq!(sandbox.calls("a"), ["echo"]);
    assert_eq!(sandbox.calls("b"), ["add"]);
    agent.destroy().await;
}

// TOOL-2: `search()` inside a script shows a tool's full description and input schema.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tool_2_exec_search_shows_full_description_and_schema() {
    let sandbox = Sandbox::new();
    let model = FakeModel::start(vec![exec(r#"return search("add numbers");"#), say("ok")]).await;
    let mut agent = sandbox.exec_agent(
        json!({ "a": sandbox.server("a", &["--tools", "echo,add"]) }),
        &model,
    );
    let report = agent.send_message("find").await.unwrap();
    let text = &report.tool_calls[0].outcome.text;
    let found: Value = serde_json::from_str(text.strip_prefix("returned:\n").unwrap()).unwrap();
    assert_eq!(found.as_array().unwrap().len(), 1);
    assert_eq!(found[0]["name"], "mcp__a__add");
    assert_eq!(found[0]["description"], "Add two numbers.");
    assert_eq!(found[0]["inputSchema"]["required"], json!(["a", "b"]));
    agent.destroy().await;
}

// Permissions (Exec): a denied tool is missing from the catalog, `search()` and `tools`, and a
// script calling it anyway is refused by the funnel; the server never sees the call.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tool_4_permissions_denied_tool_is_refused_inside_exec() {
    let sandbox = Sandbox::new();
    let model = FakeModel::start(vec![
        exec(
            r#"console.log(JSON.stringify(Object.keys(tools)), search("echo").length);
               try { await tools["mcp__a__echo"]({ text: "x" }); } catch (e) { console.log(e.message); }
               return await tools["mcp__a__add"]({ a: 1, b: 1 });"#,
        ),
        exec(r#"return await tools["mcp__a__echo"]({ text: "y" });"#),
        say("ok"),
    ])
    .await;
    let mut options = sandbox.options(
        json!({ "a": sandbox.server("a", &["--tools", "echo,add"]) }),
        &model,
    );
    options.tool_pool = ToolPoolMode::Exec;
    options.permissions.deny.push("mcp__a__echo".into());
    let mut agent = Agent::create(options).unwrap();
    let report = agent.send_message("try").await.unwrap();

    let description = exec_declaration(&model.request(0))["description"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(!description.contains("mcp__a__echo"), "{description}");
    assert!(description.contains("mcp__a__add"));
    let refusal = "permission denied: the tool \"mcp__a__echo\" may not be used (it matches the deny rule \"mcp__a__echo\"); do not call it again";
    assert_eq!(
        report.tool_calls[0].outcome.text,
        format!("console output:\n[\"mcp__a__add\"] 0\n{refusal}\n\nreturned:\n2")
    );
    let uncaught = &report.tool_calls[1].outcome;
    assert!(uncaught.is_error);
    assert_eq!(uncaught.text, format!("error: Error: {refusal}"));
    assert_eq!(sandbox.calls("a"), ["add"]);
    agent.destroy().await;
}

// TOOL-2: with no permitted tool the pool is empty and no Exec tool is declared.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tool_2_empty_pool_declares_no_exec_tool() {
    let sandbox = Sandbox::new();
    let model = FakeModel::start(vec![say("ok")]).await;
    let mut agent = sandbox.exec_agent(
        json!({ "a": sandbox.server("a", &["--tools", "none"]) }),
        &model,
    );
    agent.send_message("hi").await.unwrap();
    assert!(model.request(0).get("tools").is_none());
    agent.destroy().await;
}

// A script that never ends is stopped at the time limit and the turn goes on.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn exec_scripts_stop_at_the_time_limit() {
    let sandbox = Sandbox::new();
    let model = FakeModel::start(vec![
        exec("console.log('start'); while (true) {}"),
        exec(r#"await tools["mcp__a__slow"]({ ms: 10000 }); return "never";"#),
        say("gave up"),
    ])
    .await;
    let mut agent = Agent::create(AgentOptions {
        tool_pool: ToolPoolMode::Exec,
        exec_time_limit: Some(Duration::from_millis(500)),
        ..sandbox.options(
            json!({ "a": sandbox.server("a", &["--tools", "slow"]) }),
            &model,
        )
    })
    .unwrap();
    let report = agent.send_message("loop").await.unwrap();
    assert_eq!(report.text, "gave up");
    let endless = &report.tool_calls[0].outcome;
    assert!(endless.is_error);
    assert_eq!(
        endless.text,
        "console output:\nstart\n\nerror: the script was stopped: it ran longer than the time limit of 500 ms"
    );
    let waiting = &report.tool_calls[1].outcome;
    assert!(waiting.is_error);
    assert!(waiting.text.contains("time limit"), "{}", waiting.text);
    agent.destroy().await;
}
