//! Row 8, tool search (BUD-3, BUD-4): (a) bytes of tool definitions per model request with 20
//! servers × 25 tools, search on vs off (real Python SDK servers with generated catalogs,
//! `tests/peers/dynamic_server.py --catalog 23`, and a real agent: what the first model request
//! carries); (b) the hit rate of a fixed query set over a real catalog (the `tools/list` of
//! server-everything and server-filesystem, `bench/fixtures/tool_catalog.json`); (c) the time to
//! rank 1,000 tools for one query against one local tool round trip.

use std::path::{Path, PathBuf};
use std::time::Instant;

use anyhow::{Context, Result, bail};
use serde_json::{Map, Value, json};
use wave_mcp_agent::tool_rank::{SearchDoc, ToolIndex};
use wave_mcp_manager::{ManagerOptions, McpManager, names};
use wave_mcp_testkit::FakeModel;

use crate::util::{self, Scratch};

/// Servers and tools per server of row 8a.
pub const SERVERS: usize = 20;
pub const TOOLS_PER_SERVER: usize = 25;

/// The real catalog of row 8b.
const CATALOG: &str = include_str!("../fixtures/tool_catalog.json");

/// Row 8b's queries (as a user or model would put them) and the tool each one wants.
pub const QUERIES: &[(&str, &str)] = &[
    (
        "read the contents of a text file",
        "mcp__filesystem__read_text_file",
    ),
    (
        "show an image file as base64",
        "mcp__filesystem__read_media_file",
    ),
    (
        "read several files at once",
        "mcp__filesystem__read_multiple_files",
    ),
    (
        "create a new file with some content",
        "mcp__filesystem__write_file",
    ),
    ("overwrite an existing file", "mcp__filesystem__write_file"),
    ("replace some lines in a file", "mcp__filesystem__edit_file"),
    ("make a new directory", "mcp__filesystem__create_directory"),
    (
        "list the files in a directory",
        "mcp__filesystem__list_directory",
    ),
    (
        "list files with their sizes",
        "mcp__filesystem__list_directory_with_sizes",
    ),
    (
        "recursive tree of folders as json",
        "mcp__filesystem__directory_tree",
    ),
    ("rename a file", "mcp__filesystem__move_file"),
    (
        "find files matching a glob pattern",
        "mcp__filesystem__search_files",
    ),
    (
        "file size and modification time",
        "mcp__filesystem__get_file_info",
    ),
    ("get metadata of a file", "mcp__filesystem__get_file_info"),
    (
        "which directories may I access",
        "mcp__filesystem__list_allowed_directories",
    ),
    ("echo back a message", "mcp__everything__echo"),
    ("add two numbers", "mcp__everything__get-sum"),
    ("sum of numbers", "mcp__everything__get-sum"),
    ("return a tiny image", "mcp__everything__get-tiny-image"),
    (
        "print the environment variables",
        "mcp__everything__get-env",
    ),
    (
        "compress a file with gzip",
        "mcp__everything__gzip-file-as-resource",
    ),
    (
        "turn logging on or off",
        "mcp__everything__toggle-simulated-logging",
    ),
    (
        "long running operation with progress",
        "mcp__everything__trigger-long-running-operation",
    ),
    (
        "structured content with an output schema",
        "mcp__everything__get-structured-content",
    ),
    ("links to resources", "mcp__everything__get-resource-links"),
    (
        "annotations on a message",
        "mcp__everything__get-annotated-message",
    ),
    (
        "deep research on a question",
        "mcp__everything__simulate-research-query",
    ),
    (
        "resource subscription updates",
        "mcp__everything__toggle-subscriber-updates",
    ),
    (
        "a reference to one resource",
        "mcp__everything__get-resource-reference",
    ),
];

pub struct DeclaredBytes {
    /// Search off: the `tools` array of the first request.
    pub off: usize,
    /// Search on: the `tools` array plus the announcement of the deferred tools.
    pub on: usize,
    pub on_tools: usize,
    pub announcement: usize,
    pub tools: usize,
}

pub struct HitRate {
    pub hits: usize,
    pub queries: usize,
    pub catalog: usize,
    pub misses: Vec<String>,
}

pub struct RankCost {
    /// Median seconds to index and rank 1,000 tools for one query.
    pub rank: f64,
    /// Median seconds of one stdio tool round trip (`McpManager::call_tool`, our test server).
    pub round_trip: f64,
    pub tools: usize,
}

/// The venv python of the peers (`WAVE_PEERS_DIR`, default `~/.cache/wave-mcp-peers`).
fn python() -> Result<PathBuf> {
    let dir = std::env::var_os("WAVE_PEERS_DIR")
        .map(PathBuf::from)
        .or_else(|| dirs_home().map(|h| h.join(".cache/wave-mcp-peers")))
        .context("no WAVE_PEERS_DIR and no HOME")?;
    let python = dir.join("venv/bin/python");
    if !python.exists() {
        bail!(
            "{} missing: run scripts/install-peers.sh (row 8a needs the PyPI mcp venv)",
            python.display()
        );
    }
    Ok(python)
}

fn dirs_home() -> Option<PathBuf> {
    std::env::var_os("HOME").map(PathBuf::from)
}

fn dynamic_server() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/peers/dynamic_server.py")
}

/// Row 8a: one agent per setting, each with the same 20 servers; the first request's bytes.
pub async fn declared_bytes() -> Result<DeclaredBytes> {
    let python = python()?;
    let catalog = (TOOLS_PER_SERVER - 2).to_string(); // + echo and add_tool
    let servers: Map<String, Value> = (0..SERVERS)
        .map(|i| {
            let entry =
                json!({ "command": python, "args": [dynamic_server(), "--catalog", catalog] });
            (format!("srv{i:02}"), entry)
        })
        .collect();
    let mut measured = Vec::new();
    for setting in ["off", "on"] {
        let scratch = Scratch::new()?;
        std::fs::create_dir_all(scratch.workdir.join(".wave"))?;
        std::fs::write(
            scratch.workdir.join(".wave/settings.json"),
            json!({ "toolSearch": setting }).to_string(),
        )?;
        let model = FakeModel::saying("done").await;
        let options = util::agent_options(
            &scratch,
            &scratch.workdir,
            servers.clone(),
            &model.base_url,
            "b8",
        );
        let mut agent = util::agent(options)?;
        agent.send_message("hello").await?;
        let tools = agent.manager().tools().len();
        let requests = model.requests();
        let first = requests.first().context("no model request")?;
        let tool_bytes = first["tools"]
            .as_array()
            .map_or(0, |_| first["tools"].to_string().len());
        let announcement: usize = agent
            .history()
            .iter()
            .filter(|m| m.is_meta && m.content.starts_with("<!-- wave-mcp:deferred-tools "))
            .map(|m| m.content.len())
            .sum();
        agent.destroy().await;
        measured.push((tool_bytes, announcement, tools));
    }
    let [(off, _, tools), (on_tools, announcement, _)] = measured[..] else {
        bail!("two settings measured");
    };
    if tools != SERVERS * TOOLS_PER_SERVER {
        bail!(
            "expected {} tools, the agent had {tools}",
            SERVERS * TOOLS_PER_SERVER
        );
    }
    Ok(DeclaredBytes {
        off,
        on: on_tools + announcement,
        on_tools,
        announcement,
        tools,
    })
}

/// The fixture's tools as search documents (full names as the agent declares them).
fn catalog_docs() -> Result<Vec<SearchDoc>> {
    let catalog: Value = serde_json::from_str(CATALOG)?;
    let tools = catalog["tools"].as_array().context("tools")?;
    Ok(tools
        .iter()
        .map(|t| SearchDoc {
            full_name: names::full_tool_name(
                t["server"].as_str().unwrap_or(""),
                t["name"].as_str().unwrap_or(""),
            ),
            description: t["description"].as_str().unwrap_or("").to_string(),
        })
        .collect())
}

/// Row 8b: the wanted tool among the top 5 of each query.
pub fn hit_rate() -> Result<HitRate> {
    let docs = catalog_docs()?;
    let index = ToolIndex::new(&docs);
    let mut hits = 0;
    let mut misses = Vec::new();
    for (query, wanted) in QUERIES {
        if !docs.iter().any(|d| d.full_name == *wanted) {
            bail!("{wanted} is not in the catalog");
        }
        let found: Vec<&str> = index
            .search(query, 5)
            .iter()
            .map(|d| d.full_name.as_str())
            .collect();
        match found.contains(wanted) {
            true => hits += 1,
            false => misses.push(format!("{query:?} → {found:?} (wanted {wanted})")),
        }
    }
    Ok(HitRate {
        hits,
        queries: QUERIES.len(),
        catalog: docs.len(),
        misses,
    })
}

/// Row 8c: 1,000 tools (the real catalog under 37 server names, plus one) ranked per query,
/// against `McpManager::call_tool` of our stdio test server's `echo`; medians.
pub async fn rank_cost(repeats: usize) -> Result<RankCost> {
    let base = catalog_docs()?;
    let mut docs = Vec::with_capacity(1000);
    'fill: for copy in 0.. {
        for doc in &base {
            if docs.len() == 1000 {
                break 'fill;
            }
            docs.push(SearchDoc {
                full_name: doc
                    .full_name
                    .replacen("mcp__", &format!("mcp__c{copy}_"), 1),
                description: doc.description.clone(),
            });
        }
    }
    let mut rank = Vec::with_capacity(repeats);
    for i in 0..repeats {
        let (query, _) = QUERIES[i % QUERIES.len()];
        let start = Instant::now();
        // As the agent does per search: the documents built from the tool list, then ranked.
        let owned = docs.clone();
        let found = ToolIndex::new(&owned).search(query, 5);
        rank.push(util::secs(start.elapsed()));
        if found.is_empty() {
            bail!("no match for {query:?}");
        }
    }
    let scratch = Scratch::new()?;
    let manager = McpManager::new(ManagerOptions {
        workdir: scratch.workdir.clone(),
        home: Some(scratch.home.clone()),
        servers: util::stdio_servers(1, &["--tools", "echo"]),
        ..ManagerOptions::default()
    });
    manager.connect("s0").await?;
    let mut round_trip = Vec::with_capacity(repeats);
    let arguments: Map<String, Value> = json!({ "text": "x" })
        .as_object()
        .cloned()
        .unwrap_or_default();
    for _ in 0..repeats {
        let start = Instant::now();
        manager
            .call_tool("mcp__s0__echo", Some(arguments.clone()))
            .await?;
        round_trip.push(util::secs(start.elapsed()));
    }
    manager.cleanup().await;
    Ok(RankCost {
        rank: util::median(&rank),
        round_trip: util::median(&round_trip),
        tools: docs.len(),
    })
}
