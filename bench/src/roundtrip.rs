//! Row 3, tool-call round trip: `Agent::execute_tool` (the agent's one execution funnel:
//! permission check, routing by full name, result rendering) against a direct rmcp `call_tool`
//! on the very same connected peer (`McpManager::peer`), for a stdio server and a Streamable
//! HTTP server. `McpManager::call_tool` (the manager's routing alone) is measured beside them,
//! to show where a difference comes from. Calls rotate funnel/direct/manager (the order changes
//! every iteration, so drift and caching favour none), many times; medians compared.

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::time::Instant;

use anyhow::{Context, Result, bail};
use rmcp::model::CallToolRequestParams;
use serde_json::{Map, Value, json};
use wave_mcp_manager::result_text;
use wave_mcp_testkit::FakeModel;

use crate::util::{self, Scratch};

pub struct Transport {
    pub funnel: f64,
    pub direct: f64,
    /// `McpManager::call_tool` (routing by full name, timeout) without the agent's funnel.
    pub manager: f64,
    pub funnel_p90: f64,
    pub direct_p90: f64,
}

pub struct RoundTripResult {
    pub stdio: Transport,
    pub http: Transport,
    pub calls: usize,
    /// Row 3c, stdio: a call the user allowed `always` (the trust store's definition hash
    /// checked on every call) and the same call under `defaultMode: "allow"`, medians.
    pub remembered: f64,
    pub allow_mode: f64,
}

/// Our test server over Streamable HTTP on 127.0.0.1; killed when dropped.
pub struct HttpServer {
    child: Child,
    pub url: String,
}

impl HttpServer {
    pub fn start(args: &[&str]) -> Result<HttpServer> {
        let mut child = Command::new(util::test_server())
            .args(["--transport", "http", "--port", "0"])
            .args(args)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .context("starting the http test server")?;
        let mut line = String::new();
        BufReader::new(child.stdout.take().context("stdout")?).read_line(&mut line)?;
        let url = line
            .trim()
            .strip_prefix("listening on ")
            .context("unexpected first line of the http test server")?
            .to_string();
        Ok(HttpServer { child, url })
    }
}

impl Drop for HttpServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

pub async fn run(calls: usize) -> Result<RoundTripResult> {
    let scratch = Scratch::new()?;
    let model = FakeModel::saying("done").await;
    let http = HttpServer::start(&["--tools", "echo"])?;
    let mut servers = Map::new();
    servers.insert("stdio".into(), util::stdio_server(&["--tools", "echo"]));
    servers.insert("http".into(), json!({ "type": "http", "url": http.url }));
    let options = util::agent_options(
        &scratch,
        &scratch.workdir,
        servers,
        &model.base_url,
        "calls",
    );
    let mut agent = util::agent(options)?;
    agent.connect_mcp_server("stdio").await?;
    agent.connect_mcp_server("http").await?;
    let stdio = measure(&agent, "stdio", calls).await;
    let http_result = measure(&agent, "http", calls).await;
    let consent = remembered_vs_allow_mode(&scratch, &agent, &model.base_url, calls).await;
    agent.destroy().await;
    let (remembered, allow_mode) = consent?;
    Ok(RoundTripResult {
        stdio: stdio?,
        http: http_result?,
        calls,
        remembered,
        allow_mode,
    })
}

/// Row 3c: a second agent of the same home in `ask` mode, whose stdio `echo` the user allowed
/// `always` (pinned to the live definition), against `agent` (`defaultMode: "allow"`); calls
/// alternate between the two, medians returned (remembered, allow mode).
async fn remembered_vs_allow_mode(
    scratch: &Scratch,
    agent: &wave_mcp_agent::Agent,
    base_url: &str,
    calls: usize,
) -> Result<(f64, f64)> {
    let mut servers = Map::new();
    servers.insert("stdio".into(), util::stdio_server(&["--tools", "echo"]));
    let mut options = util::agent_options(scratch, &scratch.workdir, servers, base_url, "ask");
    options.permissions = wave_mcp_agent::PermissionRules::default();
    let mut asking = util::agent(options)?;
    asking.connect_mcp_server("stdio").await?;
    let echo = asking
        .manager()
        .tool("mcp__stdio__echo")
        .context("echo is not listed")?;
    asking
        .manager()
        .trust()
        .allow_tool("stdio", "echo", &echo.definition)
        .map_err(|e| anyhow::anyhow!(e))?;
    let full_name = "mcp__stdio__echo";
    for i in 0..calls / 10 {
        funnel_call(&asking, full_name, i).await?;
        funnel_call(agent, full_name, i).await?;
    }
    let (mut remembered, mut allow_mode) = (Vec::new(), Vec::new());
    for i in 0..calls {
        if i % 2 == 0 {
            remembered.push(funnel_call(&asking, full_name, i).await?);
            allow_mode.push(funnel_call(agent, full_name, i).await?);
        } else {
            allow_mode.push(funnel_call(agent, full_name, i).await?);
            remembered.push(funnel_call(&asking, full_name, i).await?);
        }
    }
    asking.destroy().await;
    Ok((util::median(&remembered), util::median(&allow_mode)))
}

/// The arguments of the `i`-th `echo` call; the server answers with the text `call {i}`.
pub fn echo_args(i: usize) -> Map<String, Value> {
    let mut map = Map::new();
    map.insert("text".into(), Value::String(format!("call {i}")));
    map
}

/// One `echo` call through `Agent::execute_tool` (`full_name` is `mcp__<server>__echo`), its
/// answer checked; seconds taken.
pub async fn funnel_call(agent: &wave_mcp_agent::Agent, full_name: &str, i: usize) -> Result<f64> {
    let start = Instant::now();
    let outcome = agent.execute_tool(full_name, echo_args(i)).await?;
    let took = start.elapsed();
    if outcome.is_error || outcome.text != format!("call {i}") {
        bail!("funnel call {i} answered {:?}", outcome.text);
    }
    Ok(util::secs(took))
}

async fn measure(agent: &wave_mcp_agent::Agent, server: &str, calls: usize) -> Result<Transport> {
    let peer = agent
        .manager()
        .peer(server)
        .context("the server is not connected")?;
    let full_name = format!("mcp__{server}__echo");
    let args = echo_args;
    let funnel_call = |i: usize| funnel_call(agent, &full_name, i);
    let direct_call = |i: usize| {
        let peer = peer.clone();
        async move {
            let params = CallToolRequestParams::new("echo").with_arguments(args(i));
            let start = Instant::now();
            let result = peer.call_tool(params).await?;
            let took = start.elapsed();
            if result_text(&result) != format!("call {i}") {
                bail!("direct call {i} answered {:?}", result_text(&result));
            }
            Ok(util::secs(took))
        }
    };
    let manager_call = |i: usize| {
        let full_name = full_name.clone();
        async move {
            let start = Instant::now();
            let result = agent.manager().call_tool(&full_name, Some(args(i))).await?;
            let took = start.elapsed();
            if result_text(&result) != format!("call {i}") {
                bail!("manager call {i} answered {:?}", result_text(&result));
            }
            Ok(util::secs(took))
        }
    };
    // Warm-up: connections, allocator, caches.
    for i in 0..calls / 10 {
        funnel_call(i).await?;
        direct_call(i).await?;
        manager_call(i).await?;
    }
    let mut funnel = Vec::with_capacity(calls);
    let mut direct = Vec::with_capacity(calls);
    let mut manager = Vec::with_capacity(calls);
    for i in 0..calls {
        // Rotate the order, so that none of the three always follows another.
        for k in 0..3 {
            match (i + k) % 3 {
                0 => funnel.push(funnel_call(i).await?),
                1 => direct.push(direct_call(i).await?),
                _ => manager.push(manager_call(i).await?),
            }
        }
    }
    Ok(Transport {
        funnel: util::median(&funnel),
        direct: util::median(&direct),
        manager: util::median(&manager),
        funnel_p90: util::percentile(&funnel, 0.9),
        direct_p90: util::percentile(&direct, 0.9),
    })
}
