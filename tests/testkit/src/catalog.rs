//! The recorded catalogs of real MCP servers and the hand-written queries over them (BUD-7,
//! bench row 8): `bench/fixtures/catalog/<server>.json` (recorded by `scripts/record-catalog.sh`)
//! and `bench/fixtures/tool_queries.json`, then one `tool_queries_heldN.json` a set
//! (`scripts/tool-queries.py`).

use std::path::PathBuf;

use serde_json::Value;

/// `bench/fixtures` of this workspace.
pub fn fixtures_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../bench/fixtures")
}

/// Each recorded server: its name and its catalog file, by name.
pub fn recorded_catalogs() -> Vec<(String, PathBuf)> {
    let mut catalogs: Vec<(String, PathBuf)> = std::fs::read_dir(fixtures_dir().join("catalog"))
        .expect("bench/fixtures/catalog")
        .map(|entry| entry.expect("catalog entry").path())
        .filter(|path| path.extension().is_some_and(|e| e == "json"))
        .map(|path| {
            let text = std::fs::read_to_string(&path).expect("read a catalog");
            let file: Value = serde_json::from_str(&text).expect("a catalog is JSON");
            let server = file["server"].as_str().expect("catalog server").to_string();
            (server, path)
        })
        .collect();
    catalogs.sort();
    catalogs
}

/// One query: the words, the full name of the tool it wants (`None`: no tool does it), its
/// half (`tune` or `held`; `held2`: the second held-out set, written after `held` had been seen;
/// from `held3` on: each written blind, from the catalog alone),
/// and whether it shares a word with the tool's own name.
#[derive(Debug, Clone)]
pub struct ToolQuery {
    pub query: String,
    pub tool: Option<String>,
    pub half: String,
    pub shares_name_word: bool,
}

/// Every query of every set, the sets in file-name order (`tool_queries.json` first, then
/// `tool_queries_held2.json`, …): a new set is found without being listed.
pub fn tool_queries() -> Vec<ToolQuery> {
    let mut names: Vec<String> = std::fs::read_dir(fixtures_dir())
        .expect("bench/fixtures")
        .filter_map(|entry| entry.ok()?.file_name().into_string().ok())
        .filter(|name| name.starts_with("tool_queries") && name.ends_with(".json"))
        .collect();
    names.sort();
    let mut out = Vec::new();
    for name in names {
        let text = std::fs::read_to_string(fixtures_dir().join(&name))
            .unwrap_or_else(|e| panic!("bench/fixtures/{name}: {e}"));
        let file: Value = serde_json::from_str(&text).expect("a query file is JSON");
        out.extend(
            file["queries"]
                .as_array()
                .expect("queries")
                .iter()
                .map(|q| ToolQuery {
                    query: q["query"].as_str().expect("query").to_string(),
                    tool: q["tool"].as_str().map(str::to_string),
                    half: q["half"].as_str().expect("half").to_string(),
                    shares_name_word: q["sharesNameWord"].as_bool().expect("sharesNameWord"),
                }),
        );
    }
    out
}

/// The full names a `search_mcp_tools` result lists, in its order.
pub fn found_names(result: &str) -> Vec<String> {
    result
        .lines()
        .filter(|line| line.starts_with("mcp__"))
        .map(|line| line.trim().to_string())
        .collect()
}
