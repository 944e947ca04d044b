//! Third-party MCP servers that nobody here wrote, over every transport they speak: npm
//! `@modelcontextprotocol/server-everything`, a server on the official Python SDK (PyPI `mcp`,
//! `tests/peers/py_server.py`) and `uvx mcp-server-time` (PyPI `uv`). Each test connects through
//! `McpManager`, reads the instructions (INS-1, INS-3), lists the tools under their full names
//! (TOOL-1), calls one (TOOL-3), disconnects (LIFE-6) and checks that no process is left (LAZY-8).
//!
//! The peers live outside the repository, in `$WAVE_PEERS_DIR`, put there by
//! `scripts/install-peers.sh`; `scripts/test-all.sh` runs this group after installing them. A
//! test whose peer is not installed says so on stderr and returns — except when `CI` is set
//! (`scripts/test-all.sh` sets it): then it fails, so a CI run never passes without its peers.
//!
//! Every process a test starts carries `WAVE_PEER_MARKER=<sandbox path>` in its environment, which
//! its descendants inherit, so the test finds its own processes in `/proc` and no one else's.

use std::collections::{BTreeSet, HashMap};
use std::fs::File;
use std::net::{Ipv4Addr, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use serde_json::{Map, Value, json};
use wave_mcp_manager::{McpManager, Status, result_text};

use super::support::*;

mod elicit;
/// The MCP revision of a connection and 2026-07-28 multi-round-trip requests (SPEC-1, SPEC-3).
mod era;
/// Live turns against the peers: progress, Stop, timeouts (LONG-1 … LONG-4).
mod logs;
mod long;
/// Prompts and resources of the same peers (PRM-1 .. PRM-4).
mod prompts;
mod roots;
/// The revision spoken with servers on other official SDKs: a TypeScript SDK v2 server limited to
/// 2025-06-18, PyPI fastmcp 4.1.6 on stdio and both HTTP modes (SPEC-1).
mod sdk_peers;
/// Tool calls run as tasks, against PyPI fastmcp-tasks (SRV-5).
mod tasks;

const MARKER_VAR: &str = "WAVE_PEER_MARKER";

/// Instructions for the Python peer: indentation, a blank line and a trailing space must survive.
const PY_INSTRUCTIONS: &str = "Python SDK peer for wave-mcp.\n  Tools:\n    - echo: returns its text\n    - add: adds two integers \n\nLast line, after a blank one.";

/// Outside CI a missing peer skips its test (the reason is printed); with `CI` set it fails it,
/// so a CI run without the peers cannot pass.
fn skip_or_fail(why: &str) {
    if std::env::var_os("CI").is_some_and(|v| !v.is_empty()) {
        panic!("CI is set, so this test may not be skipped: {why}");
    }
    eprintln!("skipped: {why}");
}

/// `$WAVE_PEERS_DIR/<rel>` when it exists; otherwise skips (or, in CI, fails: [`skip_or_fail`]).
pub(super) fn peer_path(peer: &str, rel: &str) -> Option<PathBuf> {
    let skip = || {
        skip_or_fail(&format!(
            "{peer} not installed (run scripts/install-peers.sh)"
        ))
    };
    let Some(dir) = std::env::var_os("WAVE_PEERS_DIR").filter(|d| !d.is_empty()) else {
        skip();
        return None;
    };
    let path = Path::new(&dir).join(rel);
    if !path.exists() {
        skip();
        return None;
    }
    Some(path)
}

fn everything_bin() -> Option<PathBuf> {
    peer_path(
        "npm @modelcontextprotocol/server-everything",
        "npm/node_modules/.bin/mcp-server-everything",
    )
}

/// The file server-everything sends as its instructions.
fn everything_instructions() -> String {
    let doc = peer_path(
        "npm @modelcontextprotocol/server-everything",
        "npm/node_modules/@modelcontextprotocol/server-everything/dist/docs/instructions.md",
    )
    .expect("server-everything without its docs/instructions.md");
    std::fs::read_to_string(doc).unwrap()
}

pub(super) fn python() -> Option<PathBuf> {
    let python = peer_path("PyPI mcp (venv)", "venv/bin/python")?;
    let sdk = python.parent().unwrap().parent().unwrap().join("lib");
    let has_mcp = std::fs::read_dir(&sdk)
        .into_iter()
        .flatten()
        .filter_map(Result::ok)
        .any(|py| {
            py.path()
                .join("site-packages/mcp/server/mcpserver")
                .is_dir()
        });
    if !has_mcp {
        skip_or_fail("PyPI mcp not installed (run scripts/install-peers.sh)");
        return None;
    }
    Some(python)
}

fn py_server_script() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/peers/py_server.py")
}

pub(super) fn marker_env(sandbox: &Sandbox) -> (String, String) {
    (MARKER_VAR.to_string(), sandbox.root.display().to_string())
}

fn args(value: Value) -> Option<Map<String, Value>> {
    value.as_object().cloned()
}

// ---- /proc -----------------------------------------------------------------------------------

fn all_pids() -> Vec<u32> {
    std::fs::read_dir("/proc")
        .map(|dir| {
            dir.filter_map(|e| e.ok()?.file_name().to_str()?.parse().ok())
                .collect()
        })
        .unwrap_or_default()
}

fn parent_of(pid: u32) -> Option<u32> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // pid (comm) state ppid ...
    let (_, rest) = stat.rsplit_once(')')?;
    rest.split_whitespace().nth(1)?.parse().ok()
}

fn comm(pid: u32) -> String {
    std::fs::read_to_string(format!("/proc/{pid}/comm"))
        .map(|c| c.trim().to_string())
        .unwrap_or_else(|_| "?".into())
}

/// Live processes whose environment holds this sandbox's marker.
pub(super) fn marked_processes(sandbox: &Sandbox) -> Vec<u32> {
    let (var, value) = marker_env(sandbox);
    let wanted = format!("{var}={value}");
    all_pids()
        .into_iter()
        .filter(|pid| {
            std::fs::read(format!("/proc/{pid}/environ"))
                .map(|env| env.split(|&b| b == 0).any(|kv| kv == wanted.as_bytes()))
                .unwrap_or(false)
        })
        .filter(|&pid| alive(pid))
        .collect()
}

/// `root` and every live descendant of it, found by walking parent links in `/proc`.
fn process_tree(root: u32) -> Vec<u32> {
    let mut children: HashMap<u32, Vec<u32>> = HashMap::new();
    for pid in all_pids() {
        if let Some(parent) = parent_of(pid) {
            children.entry(parent).or_default().push(pid);
        }
    }
    let mut tree = vec![root];
    let mut i = 0;
    while i < tree.len() {
        tree.extend(children.get(&tree[i]).into_iter().flatten());
        i += 1;
    }
    tree.into_iter().filter(|&p| alive(p)).collect()
}

/// The processes of a connected stdio server: the direct child of this test process that carries
/// the sandbox marker, all its descendants, and anything else carrying the marker.
fn stdio_server_processes(sandbox: &Sandbox) -> Vec<u32> {
    let marked = marked_processes(sandbox);
    let me = std::process::id();
    let mut all: BTreeSet<u32> = marked.iter().copied().collect();
    let direct: Vec<u32> = marked
        .iter()
        .copied()
        .filter(|&pid| parent_of(pid) == Some(me))
        .collect();
    assert_eq!(
        direct.len(),
        1,
        "expected one direct child carrying the marker, found {direct:?} among {marked:?}"
    );
    let tree = process_tree(direct[0]);
    all.extend(&tree);
    // The direct child first, then the rest of its tree, then other marked processes.
    let mut ordered = tree.clone();
    ordered.extend(all.into_iter().filter(|p| !tree.contains(p)));
    ordered
}

fn cmdline(pid: u32) -> Vec<String> {
    std::fs::read(format!("/proc/{pid}/cmdline"))
        .unwrap_or_default()
        .split(|&b| b == 0)
        .filter(|a| !a.is_empty())
        .map(|a| String::from_utf8_lossy(a).into_owned())
        .collect()
}

/// `pid (parent) comm`, one per process.
fn describe(pids: &[u32]) -> String {
    pids.iter()
        .map(|&p| format!("{p} (parent {}) {}", parent_of(p).unwrap_or(0), comm(p)))
        .collect::<Vec<_>>()
        .join(", ")
}

// ---- HTTP peers started by the test ----------------------------------------------------------

/// A peer listening on 127.0.0.1:`port`, started by the test and killed when dropped.
struct HttpPeer {
    child: Child,
    port: u16,
    log: PathBuf,
}

impl HttpPeer {
    /// Starts `command`, which must listen on `port`, and waits until 127.0.0.1:`port` accepts.
    async fn start(sandbox: &Sandbox, mut command: Command, port: u16) -> HttpPeer {
        let log = sandbox.path(&format!("peer-{port}.log"));
        let out = File::create(&log).unwrap();
        let (var, value) = marker_env(sandbox);
        let child = command
            .env(var, value)
            .current_dir(&sandbox.workdir)
            .stdin(Stdio::null())
            .stdout(out.try_clone().unwrap())
            .stderr(out)
            .spawn()
            .expect("start the peer");
        let mut peer = HttpPeer { child, port, log };
        let mut exited = None;
        let up = eventually(Duration::from_secs(30), || {
            if let Ok(Some(status)) = peer.child.try_wait() {
                exited = Some(status);
                return true;
            }
            TcpStream::connect((Ipv4Addr::LOCALHOST, port)).is_ok()
        })
        .await;
        assert!(
            up && exited.is_none(),
            "peer never listened on 127.0.0.1:{port} (exit: {exited:?}); its output:\n{}",
            std::fs::read_to_string(&peer.log).unwrap_or_default()
        );
        peer
    }

    fn url(&self, path: &str) -> String {
        format!("http://127.0.0.1:{}{path}", self.port)
    }

    fn pid(&self) -> u32 {
        self.child.id()
    }

    /// Kills the peer and reaps it.
    fn stop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Drop for HttpPeer {
    fn drop(&mut self) {
        self.stop();
    }
}

/// A port that was free on 127.0.0.1 a moment ago.
async fn start_everything(sandbox: &Sandbox, bin: &Path, mode: &str) -> HttpPeer {
    let port = free_port();
    let mut command = Command::new(bin);
    // server-everything binds every interface; the tests only ever talk to 127.0.0.1.
    command.arg(mode).env("PORT", port.to_string());
    HttpPeer::start(sandbox, command, port).await
}

async fn start_python(sandbox: &Sandbox, python: &Path, transport: &str) -> HttpPeer {
    let port = free_port();
    let mut command = Command::new(python);
    command
        .arg(py_server_script())
        .args(["--transport", transport, "--port", &port.to_string()])
        .args(["--instructions", PY_INSTRUCTIONS]);
    HttpPeer::start(sandbox, command, port).await
}

// ---- the round every peer goes through -------------------------------------------------------

struct Expect<'a> {
    instructions: &'a str,
    tools: &'a [&'a str],
    call: &'a str,
    call_args: Value,
    result: &'a str,
}

/// connect → instructions verbatim → tools by full name → one call → disconnect.
async fn round(manager: &McpManager, name: &str, expect: Expect<'_>, on_connected: impl FnOnce()) {
    if let Err(e) = manager.connect(name).await {
        panic!("connecting {name}: {e}");
    }
    let snapshot = server(manager, name);
    assert_eq!(snapshot.status, Status::Connected);
    let instructions = snapshot.instructions.expect("no instructions");
    assert!(
        instructions.lines().count() > 1,
        "not multi-line: {instructions:?}"
    );
    assert_eq!(
        instructions, expect.instructions,
        "INS-1/INS-3: instructions not kept verbatim"
    );
    let full_names: Vec<String> = manager.tools().into_iter().map(|t| t.full_name).collect();
    for tool in expect.tools {
        let full = format!("mcp__{name}__{tool}");
        assert!(full_names.contains(&full), "{full} not in {full_names:?}");
    }
    assert!(
        full_names
            .iter()
            .all(|f| f.starts_with(&format!("mcp__{name}__"))),
        "{full_names:?}"
    );
    on_connected();
    let result = manager
        .call_tool(
            &format!("mcp__{name}__{}", expect.call),
            args(expect.call_args),
        )
        .await
        .unwrap_or_else(|e| panic!("calling {}: {e}", expect.call));
    assert_ne!(result.is_error, Some(true), "{result:?}");
    assert_eq!(result_text(&result), expect.result);
    manager.disconnect(name).await.unwrap();
    assert_eq!(status(manager, name), Status::Disconnected);
    assert!(manager.tools().is_empty(), "tools left after disconnect");
    assert_eq!(server(manager, name).instructions, None);
}

/// A stdio round that records the server's process tree while connected and checks that all of
/// it is gone after the disconnect (LAZY-8).
async fn stdio_round(sandbox: &Sandbox, entry: Value, name: &str, expect: Expect<'_>) {
    let manager = McpManager::new(sandbox.options(json!({ name: entry })));
    assert_eq!(marked_processes(sandbox), Vec::<u32>::new());
    let mut tree = Vec::new();
    round(&manager, name, expect, || {
        tree = stdio_server_processes(sandbox);
        eprintln!("{name}: process tree while connected: {}", describe(&tree));
    })
    .await;
    assert_all_dead(&tree).await;
    assert_eq!(marked_processes(sandbox), Vec::<u32>::new());
    manager.cleanup().await;
}

/// A remote round against a peer this test started; afterwards the peer is stopped and checked
/// gone.
async fn remote_round(sandbox: &Sandbox, mut peer: HttpPeer, entry: Value, expect: Expect<'_>) {
    let manager = McpManager::new(sandbox.options(json!({ "remote": entry })));
    round(&manager, "remote", expect, || {}).await;
    manager.cleanup().await;
    let pid = peer.pid();
    peer.stop();
    assert_all_dead(&[pid]).await;
    assert_eq!(marked_processes(sandbox), Vec::<u32>::new());
}

fn everything_expect(instructions: &str) -> Expect<'_> {
    Expect {
        instructions,
        tools: &["echo", "get-sum", "get-tiny-image"],
        call: "echo",
        call_args: json!({ "message": "hello from wave-mcp" }),
        result: "Echo: hello from wave-mcp",
    }
}

fn python_expect() -> Expect<'static> {
    Expect {
        instructions: PY_INSTRUCTIONS,
        tools: &["echo", "add"],
        call: "echo",
        call_args: json!({ "text": "line one\nline two" }),
        result: "line one\nline two",
    }
}

// ---- npm @modelcontextprotocol/server-everything ---------------------------------------------

// INS-1, INS-3, TOOL-1, TOOL-3, CFG-5, LIFE-6, LAZY-8: server-everything over stdio.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn everything_over_stdio() {
    let Some(bin) = everything_bin() else { return };
    let sandbox = Sandbox::new();
    let (var, value) = marker_env(&sandbox);
    let entry = json!({ "command": bin, "args": ["stdio"], "env": { var: value } });
    let instructions = everything_instructions();
    stdio_round(
        &sandbox,
        entry,
        "everything",
        everything_expect(&instructions),
    )
    .await;
}

// INS-1, INS-3, TOOL-1, TOOL-3, CFG-5, LIFE-6: server-everything over Streamable HTTP.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn everything_over_streamable_http() {
    let Some(bin) = everything_bin() else { return };
    let sandbox = Sandbox::new();
    let peer = start_everything(&sandbox, &bin, "streamableHttp").await;
    let entry = json!({ "type": "http", "url": peer.url("/mcp") });
    let instructions = everything_instructions();
    remote_round(&sandbox, peer, entry, everything_expect(&instructions)).await;
}

// INS-1, INS-3, TOOL-1, TOOL-3, CFG-5, LIFE-6: server-everything over the legacy SSE transport.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn everything_over_sse() {
    let Some(bin) = everything_bin() else { return };
    let sandbox = Sandbox::new();
    let peer = start_everything(&sandbox, &bin, "sse").await;
    let entry = json!({ "type": "sse", "url": peer.url("/sse") });
    let instructions = everything_instructions();
    remote_round(&sandbox, peer, entry, everything_expect(&instructions)).await;
}

// ---- PyPI mcp (the official Python SDK) ------------------------------------------------------

// INS-1, INS-3, TOOL-1, TOOL-3, LIFE-6, LAZY-8: a Python SDK server over stdio.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn python_sdk_over_stdio() {
    let Some(python) = python() else { return };
    let sandbox = Sandbox::new();
    let (var, value) = marker_env(&sandbox);
    let entry = json!({
        "command": python,
        "args": [py_server_script(), "--instructions", PY_INSTRUCTIONS],
        "env": { var: value },
    });
    stdio_round(&sandbox, entry, "py", python_expect()).await;
}

// INS-1, INS-3, TOOL-1, TOOL-3, CFG-5, LIFE-6: a Python SDK server over Streamable HTTP.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn python_sdk_over_streamable_http() {
    let Some(python) = python() else { return };
    let sandbox = Sandbox::new();
    let peer = start_python(&sandbox, &python, "streamable-http").await;
    let entry = json!({ "type": "http", "url": peer.url("/mcp") });
    remote_round(&sandbox, peer, entry, python_expect()).await;
}

// INS-1, INS-3, TOOL-1, TOOL-3, CFG-5, LIFE-6: a Python SDK server over the legacy SSE transport.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn python_sdk_over_sse() {
    let Some(python) = python() else { return };
    let sandbox = Sandbox::new();
    let peer = start_python(&sandbox, &python, "sse").await;
    let entry = json!({ "type": "sse", "url": peer.url("/sse") });
    remote_round(&sandbox, peer, entry, python_expect()).await;
}

// ---- PyPI uv: uvx mcp-server-time ------------------------------------------------------------

// LAZY-8, TOOL-1, TOOL-3: `uvx mcp-server-time` runs as uvx → uv → python; after disconnect none
// of the processes of that tree is alive (a zombie counts as dead).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn uvx_time_server_whole_tree_dies_on_disconnect() {
    let Some(uvx) = peer_path("PyPI uv", "venv/bin/uvx") else {
        return;
    };
    let Some(spec) = peer_path("uvx mcp-server-time", "mcp-server-time.spec") else {
        return;
    };
    let peers = spec.parent().unwrap();
    let spec = std::fs::read_to_string(&spec).unwrap().trim().to_string();
    let sandbox = Sandbox::new();
    let (var, value) = marker_env(&sandbox);
    // The same uv settings as scripts/install-peers.sh, offline: everything comes from its cache.
    let entry = json!({
        "command": uvx,
        "args": [spec, "--local-timezone", "UTC"],
        "env": {
            var: value,
            "UV_CACHE_DIR": peers.join("uv-cache"),
            "UV_PYTHON": peers.join("venv/bin/python"),
            "UV_PYTHON_DOWNLOADS": "never",
            "UV_NO_CONFIG": "1",
            "UV_OFFLINE": "1",
        },
    });
    let manager = McpManager::new(sandbox.options(json!({ "time": entry })));
    assert_eq!(marked_processes(&sandbox), Vec::<u32>::new());
    if let Err(e) = manager.connect("time").await {
        panic!("connecting uvx {spec}: {e}");
    }
    let tree = stdio_server_processes(&sandbox);
    eprintln!("uvx tree while connected: {}", describe(&tree));
    // uvx execs `uv tool uvx ...` in its own process (same pid), which runs the tool's python.
    let root = tree[0];
    let root_cmd = cmdline(root);
    assert!(
        root_cmd.first().is_some_and(|a| a.ends_with("/uv"))
            && root_cmd.get(1).map(String::as_str) == Some("tool")
            && root_cmd.get(2).map(String::as_str) == Some("uvx"),
        "the direct child is not `uv tool uvx`: {root_cmd:?}"
    );
    let pythons: Vec<u32> = tree
        .iter()
        .copied()
        .filter(|&p| parent_of(p) == Some(root) && comm(p).starts_with("python"))
        .collect();
    assert_eq!(
        pythons.len(),
        1,
        "expected uv → python, found {}",
        describe(&tree)
    );
    let full_names: Vec<String> = manager.tools().into_iter().map(|t| t.full_name).collect();
    for tool in ["get_current_time", "convert_time"] {
        let full = format!("mcp__time__{tool}");
        assert!(full_names.contains(&full), "{full} not in {full_names:?}");
    }
    let result = manager
        .call_tool(
            "mcp__time__get_current_time",
            args(json!({ "timezone": "UTC" })),
        )
        .await
        .unwrap();
    assert_ne!(result.is_error, Some(true), "{result:?}");
    let text = result_text(&result);
    let answer: Value = serde_json::from_str(&text).unwrap_or_else(|e| panic!("{e}: {text}"));
    assert_eq!(answer["timezone"], "UTC", "{text}");
    assert!(answer["datetime"].is_string(), "{text}");
    manager.disconnect("time").await.unwrap();
    assert_eq!(status(&manager, "time"), Status::Disconnected);
    assert_all_dead(&tree).await;
    assert_eq!(marked_processes(&sandbox), Vec::<u32>::new());
    manager.cleanup().await;
}

// ---- BUD: tool lists that change at run time, a large catalog (PyPI mcp) ---------------------

fn dynamic_server_script() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/peers/dynamic_server.py")
}

/// An agent of the sandbox with `servers` as constructor servers, talking to `model`.
fn budget_agent(
    sandbox: &Sandbox,
    servers: Value,
    model: &wave_mcp_testkit::FakeModel,
) -> wave_mcp_agent::Agent {
    let options = sandbox.options(servers);
    wave_mcp_agent::Agent::create(wave_mcp_agent::AgentOptions {
        workdir: options.workdir,
        home: options.home,
        mcp_servers: options.servers,
        mcp_timeouts: options.timeouts,
        model: wave_mcp_agent::ModelSettings {
            base_url: Some(model.base_url.clone()),
            model: Some("fake-model".into()),
            timeout: Some(Duration::from_secs(60)),
            ..Default::default()
        },
        session_id: Some("bud".into()),
        permissions: Sandbox::pre_approved(),
        ..Default::default()
    })
    .expect("create the agent")
}

fn declared_names(request: &Value) -> Vec<String> {
    let mut names = wave_mcp_testkit::declared(request);
    names.sort();
    names
}

// BUD-6: a Python SDK server whose tool adds another tool and sends
// `notifications/tools/list_changed` (`ctx.session.send_tool_list_changed()`): the very next
// model request declares the new tool, and calling it works; the snapshot shows it too.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bud_6_python_server_adding_a_tool_is_usable_on_the_next_request() {
    use wave_mcp_testkit::{FakeModel, call, say};
    let Some(python) = python() else { return };
    let sandbox = Sandbox::new();
    let (var, value) = marker_env(&sandbox);
    let entry =
        json!({ "command": python, "args": [dynamic_server_script()], "env": { var: value } });
    let model = FakeModel::start(vec![
        call("mcp__py__add_tool", json!({ "name": "shout" })),
        call("mcp__py__shout", json!({ "text": "hello" })),
        say("done"),
    ])
    .await;
    let mut agent = budget_agent(&sandbox, json!({ "py": entry }), &model);
    let report = agent.send_message("grow").await.unwrap();
    assert_eq!(
        declared_names(&model.request(0)),
        ["mcp__py__add_tool", "mcp__py__echo"]
    );
    assert_eq!(
        declared_names(&model.request(1)),
        ["mcp__py__add_tool", "mcp__py__echo", "mcp__py__shout"]
    );
    let shouted = &report.tool_calls[1].outcome;
    assert!(!shouted.is_error, "{shouted:?}");
    assert_eq!(shouted.text, "HELLO");
    let listed = server(agent.manager(), "py");
    assert!(listed.tools.iter().any(|t| t.name == "shout"));
    agent.destroy().await;
    assert_eq!(marked_processes(&sandbox), Vec::<u32>::new());
}

// BUD-3, BUD-4: a Python SDK server with a generated catalog of 300 tools (realistic schemas,
// ~390 KB of definitions) over stdio: with the default settings (`auto`, 128k window) search is
// on, the first request declares only `search_mcp_tools` (a small share of the bytes), the
// announcement names all 302 tools, a search by words finds the right tool first, and the next
// request declares it in full.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bud_3_bud_4_large_python_catalog_is_searched_not_declared() {
    use wave_mcp_testkit::{FakeModel, call, say};
    let Some(python) = python() else { return };
    let sandbox = Sandbox::new();
    let (var, value) = marker_env(&sandbox);
    let entry = json!({
        "command": python,
        "args": [dynamic_server_script(), "--catalog", "300"],
        "env": { var: value },
    });
    let model = FakeModel::start(vec![
        call(
            "search_mcp_tools",
            json!({ "query": "archive a support ticket", "limit": 3 }),
        ),
        say("done"),
    ])
    .await;
    let mut agent = budget_agent(&sandbox, json!({ "big": entry }), &model);
    let report = agent.send_message("archive ticket 7").await.unwrap();
    let first = model.request(0);
    assert_eq!(declared_names(&first), ["search_mcp_tools"]);
    let all_tools = agent.manager().tools();
    assert_eq!(all_tools.len(), 302);
    let full_bytes: usize = all_tools
        .iter()
        .map(|t| {
            json!({"type": "function", "function": {"name": t.full_name,
                "description": t.description, "parameters": *t.input_schema}})
            .to_string()
            .len()
        })
        .sum();
    let declared_bytes = first["tools"].to_string().len();
    eprintln!("declared {declared_bytes} bytes instead of {full_bytes}");
    assert!(
        declared_bytes * 50 < full_bytes,
        "{declared_bytes} vs {full_bytes}"
    );
    let announcement = agent
        .history()
        .iter()
        .find(|m| m.is_meta && m.content.starts_with("<!-- wave-mcp:deferred-tools "))
        .expect("the deferred tools announced")
        .content
        .clone();
    assert_eq!(
        announcement
            .lines()
            .filter(|l| l.starts_with("mcp__big__"))
            .count(),
        302
    );
    let found = &report.tool_calls[0].outcome.text;
    let first_hit = found
        .lines()
        .find(|l| l.starts_with("mcp__"))
        .unwrap_or_default();
    assert_eq!(first_hit, "mcp__big__archive_ticket", "{found}");
    let second = declared_names(&model.request(1));
    assert!(
        second.contains(&"mcp__big__archive_ticket".to_string()),
        "{second:?}"
    );
    assert_eq!(second.len(), 4, "{second:?}");
    agent.destroy().await;
    assert_eq!(marked_processes(&sandbox), Vec::<u32>::new());
}
