//! Row 8, tool search (BUD-3, BUD-4): (a) bytes of tool definitions per model request with 20
//! servers × 25 tools, search on vs off (real Python SDK servers with generated catalogs,
//! `tests/peers/dynamic_server.py --catalog 23`, and a real agent: what the first model request
//! carries); (b) BUD-7: the hit rate of hand-written queries over the recorded `tools/list` of 23
//! real servers from npm and PyPI (`bench/fixtures/catalog/`, 363 tools; queries in
//! `bench/fixtures/tool_queries.json`, split into a tuning and a held-out half, and two more
//! held-out sets); (c) the time to rank 1,000 tools for one query against one local tool round
//! trip, and with the embedding model, the time to embed those 1,000 tools.

use std::path::{Path, PathBuf};
use std::time::Instant;

use anyhow::{Context, Result, bail};
use serde_json::{Map, Value, json};
use wave_mcp_agent::tool_rank::embedding::{self, Embedder};
use wave_mcp_agent::tool_rank::{SearchDoc, ToolIndex};
use wave_mcp_manager::{ManagerOptions, McpManager, names};
use wave_mcp_testkit::FakeModel;
use wave_mcp_testkit::catalog::{ToolQuery, tool_queries};

use crate::util::{self, Scratch};

/// Servers and tools per server of row 8a.
pub const SERVERS: usize = 20;
pub const TOOLS_PER_SERVER: usize = 25;

pub struct DeclaredBytes {
    /// Search off: the `tools` array of the first request.
    pub off: usize,
    /// Search on: the `tools` array plus the announcement of the deferred tools.
    pub on: usize,
    pub on_tools: usize,
    pub announcement: usize,
    pub tools: usize,
}

/// Row 8b over one half of the queries.
#[derive(Default)]
pub struct HitRate {
    pub hits: usize,
    pub queries: usize,
    /// The queries that share no word with the wanted tool's own name.
    pub paraphrased_hits: usize,
    pub paraphrased: usize,
    /// The queries no tool answers, and how many of them found nothing.
    pub empty: usize,
    pub nothing: usize,
    pub misses: Vec<String>,
}

/// Row 8b: each half over the recorded catalog.
pub struct HitRates {
    /// Per half (`tune`, `held`, `held2` …), in the order the query files give them.
    pub halves: Vec<(String, HitRate)>,
    /// The ranking used the embedding model.
    pub by_meaning: bool,
    pub catalog: usize,
    pub servers: usize,
}

pub struct RankCost {
    /// Median seconds to index and rank 1,000 tools for one query (a set's first search).
    pub build: f64,
    /// Median seconds to rank 1,000 indexed tools for one query (a later search).
    pub rank: f64,
    /// Median seconds of one stdio tool round trip (`McpManager::call_tool`, our test server).
    pub round_trip: f64,
    pub tools: usize,
    /// With the embedding model: seconds to embed the 1,000 tools once (a new set of tools,
    /// done in the background while the model answers), and the median to embed one query
    /// (part of `build` and `rank`).
    pub embed_tools: Option<f64>,
    pub embed_query: Option<f64>,
    /// The same 1,000 tools in the next process: their vectors read from disk.
    pub read_tools: Option<f64>,
    /// What loading the model added to this process's resident memory (KiB).
    pub model_kib: Option<u64>,
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

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures")
}

/// The recorded catalogs' tools as search documents (full names as the agent declares them),
/// and how many servers.
fn catalog_docs() -> Result<(Vec<SearchDoc>, usize)> {
    let mut paths: Vec<PathBuf> = std::fs::read_dir(fixtures().join("catalog"))?
        .map(|e| e.map(|e| e.path()))
        .collect::<std::io::Result<_>>()?;
    paths.sort();
    let mut docs = Vec::new();
    for path in &paths {
        let file: Value = serde_json::from_str(&std::fs::read_to_string(path)?)
            .with_context(|| path.display().to_string())?;
        let server = file["server"].as_str().context("server")?;
        let empty = Map::new();
        for tool in file["tools"].as_array().context("tools")? {
            docs.push(SearchDoc::new(
                &names::full_tool_name(server, tool["name"].as_str().unwrap_or("")),
                tool["title"].as_str(),
                tool["description"].as_str(),
                tool["inputSchema"].as_object().unwrap_or(&empty),
                tool.get("annotations"),
            ));
        }
    }
    Ok((docs, paths.len()))
}

/// Row 8b: per half, the wanted tool among the top 5 of each query; nothing found for the
/// queries no tool answers.
pub fn hit_rate() -> Result<HitRates> {
    let (docs, servers) = catalog_docs()?;
    let index = ToolIndex::new(&docs);
    let mut halves: Vec<(String, HitRate)> = Vec::new();
    for ToolQuery {
        query,
        tool: wanted,
        half,
        shares_name_word: shares,
    } in tool_queries()
    {
        let at = match halves.iter().position(|(h, _)| *h == half) {
            Some(at) => at,
            None => {
                halves.push((half.clone(), HitRate::default()));
                halves.len() - 1
            }
        };
        let rate = &mut halves[at].1;
        let found: Vec<&str> = index
            .search(&query, 5)
            .iter()
            .map(|d| d.full_name.as_str())
            .collect();
        let Some(wanted) = wanted else {
            rate.nothing += 1;
            match found.is_empty() {
                true => rate.empty += 1,
                false => rate
                    .misses
                    .push(format!("{half}: {query:?} → {found:?} (no tool does it)")),
            }
            continue;
        };
        if !docs.iter().any(|d| d.full_name == wanted) {
            bail!("{wanted} is not in the catalog");
        }
        let hit = found.contains(&wanted.as_str());
        rate.queries += 1;
        rate.hits += usize::from(hit);
        if !shares {
            rate.paraphrased += 1;
            rate.paraphrased_hits += usize::from(hit);
        }
        if !hit {
            rate.misses
                .push(format!("{half}: {query:?} → {found:?} (wanted {wanted})"));
        }
    }
    // The tuning half, the held-out half, then the later sets in order.
    halves.sort_by_key(|(half, _)| (half != "tune", half != "held", half.len(), half.clone()));
    Ok(HitRates {
        halves,
        by_meaning: index.by_meaning(),
        catalog: docs.len(),
        servers,
    })
}

/// Row 8c: 1,000 tools (the recorded catalog under three server prefixes, cut at 1,000) ranked per query,
/// against `McpManager::call_tool` of our stdio test server's `echo`; medians.
pub async fn rank_cost(repeats: usize) -> Result<RankCost> {
    let (base, _) = catalog_docs()?;
    let queries: Vec<String> = tool_queries()
        .into_iter()
        .filter(|q| q.tool.is_some())
        .map(|q| q.query)
        .collect();
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
                ..doc.clone()
            });
        }
    }
    // With the model: the 1,000 tools embedded once by a fresh model (nothing cached), and the
    // process's model given them too, so the loop below times a set whose vectors are ready
    // (the agent embeds a new set in the background from the request that first defers it).
    let (mut embed_tools, mut read_tools, mut embed_query, mut model_kib) =
        (None, None, None, None);
    if Embedder::shared().is_some()
        && let Some(dir) = embedding::model_dir()
    {
        let disk = tempfile::tempdir()?;
        let keep = Some(disk.path().to_path_buf());
        let before = util::rss_kib(std::process::id());
        let fresh = Embedder::load(&dir)?.with_disk_cache(keep.clone());
        model_kib = Some(util::rss_kib(std::process::id()).saturating_sub(before));
        let texts: Vec<String> = docs.iter().map(SearchDoc::meaning_text).collect();
        let start = Instant::now();
        fresh.tools(&texts)?;
        embed_tools = Some(util::secs(start.elapsed()));
        // The next process: the same tools, their vectors read from disk.
        let next = Embedder::load(&dir)?.with_disk_cache(keep);
        let start = Instant::now();
        next.tools(&texts)?;
        read_tools = Some(util::secs(start.elapsed()));
        drop(next);
        let mut times = Vec::with_capacity(repeats);
        for i in 0..repeats {
            let start = Instant::now();
            fresh.embed(
                &[queries[i % queries.len()].as_str()],
                embedding::QUERY_TOKENS,
            )?;
            times.push(util::secs(start.elapsed()));
        }
        embed_query = Some(util::median(&times));
        drop(fresh);
        ToolIndex::new(&docs);
    }
    let mut build = Vec::with_capacity(repeats);
    let mut rank = Vec::with_capacity(repeats);
    for i in 0..repeats {
        let query = &queries[i % queries.len()];
        // The first search of a tool set: the documents built from the tool list, indexed,
        // ranked. The agent keeps the index while the set stays the same, so a later search
        // of the session is the ranking alone.
        let start = Instant::now();
        let index = ToolIndex::new(&docs.clone());
        let first = index.search(query, 5).len();
        build.push(util::secs(start.elapsed()));
        let start = Instant::now();
        let again = index.search(query, 5).len();
        rank.push(util::secs(start.elapsed()));
        if first != again {
            bail!("{query:?}: {first} then {again} results");
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
        build: util::median(&build),
        rank: util::median(&rank),
        round_trip: util::median(&round_trip),
        tools: docs.len(),
        embed_tools,
        read_tools,
        embed_query,
        model_kib,
    })
}
