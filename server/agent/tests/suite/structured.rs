//! Structured output (SRV-4): a tool's `outputSchema` is enforced on every path a call takes —
//! the model's flat call and an `Exec` script's call — and a structured-only result reaches the
//! model as JSON text. The tool is our test server's `temperature` (its `mode` argument picks a
//! fitting, structured-only, mismatching or unstructured result).

use serde_json::json;

use super::support::*;

fn temperature(mode: &str) -> Step {
    call("mcp__w__temperature", json!({ "mode": mode }))
}

// SRV-4: flat calls. A fitting result with text passes as its text; a structured-only one
// reaches the model as JSON; a result that breaks the schema, or has no structured content, is
// an error naming the tool, its server and what is wrong — and the server did run each call.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn srv_4_the_model_gets_checked_structured_output() {
    let sandbox = Sandbox::new();
    let model = FakeModel::start(vec![
        temperature("fits"),
        temperature("only"),
        temperature("wrong"),
        temperature("none"),
        say("done"),
    ])
    .await;
    let servers = json!({ "w": sandbox.server("w", &["--tools", "temperature"]) });
    let mut agent = sandbox.agent(servers, &model);
    let report = agent.send_message("how warm is it").await.unwrap();
    let outcomes: Vec<(bool, &str)> = report
        .tool_calls
        .iter()
        .map(|c| (c.outcome.is_error, c.outcome.text.as_str()))
        .collect();
    assert_eq!(outcomes[0], (false, "21.5 degrees"));
    assert_eq!(outcomes[1], (false, "{\"celsius\":21.5}"));
    let named = "error: tool \"temperature\" of MCP server \"w\" returned an error:\n";
    assert_eq!(
        outcomes[2],
        (
            true,
            format!("{named}its result does not fit its output schema: at /celsius, \"warm\" is not of type \"number\"").as_str()
        )
    );
    assert_eq!(
        outcomes[3],
        (
            true,
            format!(
                "{named}its result has no structured content, which its output schema requires"
            )
            .as_str()
        )
    );
    assert_eq!(tool_results(&model.request(4)).len(), 4);
    assert_eq!(sandbox.calls("w"), ["temperature"; 4]);
    agent.destroy().await;
}

// SRV-4: an `Exec` script's call passes the same check: the script sees the error.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn srv_4_an_exec_script_gets_the_same_check() {
    let sandbox = Sandbox::new();
    let model = FakeModel::start(vec![
        exec(r#"return await tools["mcp__w__temperature"]({ mode: "wrong" });"#),
        say("done"),
    ])
    .await;
    let servers = json!({ "w": sandbox.server("w", &["--tools", "temperature"]) });
    let mut agent = sandbox.exec_agent(servers, &model);
    let report = agent.send_message("how warm is it").await.unwrap();
    let outcome = &report.tool_calls[0].outcome;
    assert!(
        outcome
            .text
            .contains("its result does not fit its output schema: at /celsius"),
        "{outcome:?}"
    );
    agent.destroy().await;
}
