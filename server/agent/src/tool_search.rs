//! Tool search (BUD-3, BUD-4, BUD-5): keeping big MCP catalogs out of the model's context.
//!
//! When search is on, the tools of servers without `alwaysLoad` are *deferred*: instead of their
//! schemas the agent declares one `search_mcp_tools` tool, and one `isMeta` message names every
//! deferred tool (full names, one a line). A search's matches are declared in full from the next
//! model request on, for the rest of the session.
//!
//! Settings: `toolSearch` (`"auto"` default, `"on"`, `"off"`) and `contextWindow` (tokens,
//! default 128,000) in `<home>/.wave/settings.json` and `<workdir>/.wave/settings.json` (the
//! project's win), and `WAVE_TOOL_SEARCH` in the environment (wins over both). `auto` turns
//! search on once the enabled, permitted MCP tools' definitions (as JSON) exceed 10% of the
//! context window at 4 bytes a token; once on, it stays on for the session so the declared set
//! does not flip back and forth.
//!
//! The announcement is appended like the instructions announcements (INS-*): only when the set
//! of searchable tools changed since the last one in the history (read from `isMeta` messages'
//! first line only, INS-12), never by editing an earlier message, so the prompt prefix stays
//! cacheable:
//!
//! ```text
//! <!-- wave-mcp:deferred-tools {"hash":"<16 hex>"} -->
//! <system-reminder>
//! These MCP tools are available but not declared; find them with search_mcp_tools ...
//! mcp__a__x
//! mcp__b__y
//! </system-reminder>
//! ```

use std::collections::{BTreeSet, HashSet};
use std::path::Path;
use std::sync::{Arc, Mutex};

use serde_json::{Value, json};
use wave_mcp_manager::McpTool;

use crate::announce::{Marker, short_hash};
use crate::message::Message;
use crate::permissions::PermissionRules;
use crate::tool_rank::{SearchDoc, ToolIndex};

/// The name of the search tool.
pub const SEARCH_TOOL: &str = "search_mcp_tools";
/// Results of one search unless `limit` says otherwise.
pub const DEFAULT_LIMIT: usize = 5;
/// The most results of one search.
pub const MAX_LIMIT: usize = 20;
/// The default `contextWindow`, in tokens.
pub const DEFAULT_CONTEXT_WINDOW: u64 = 128_000;
/// Bytes counted per token.
const BYTES_PER_TOKEN: u64 = 4;
/// `auto`: search is on when the definitions take more than this share (in %) of the window.
const AUTO_SHARE_PERCENT: u64 = 10;
/// The environment variable that overrides `toolSearch`.
pub const TOOL_SEARCH_VAR: &str = "WAVE_TOOL_SEARCH";

/// `toolSearch`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum ToolSearchMode {
    #[default]
    Auto,
    On,
    Off,
}

impl ToolSearchMode {
    fn parse(text: &str) -> Option<ToolSearchMode> {
        match text.trim().to_ascii_lowercase().as_str() {
            "auto" => Some(ToolSearchMode::Auto),
            "on" | "true" => Some(ToolSearchMode::On),
            "off" | "false" => Some(ToolSearchMode::Off),
            _ => None,
        }
    }
}

/// The tool search settings in force.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SearchSettings {
    pub mode: ToolSearchMode,
    /// Tokens.
    pub context_window: u64,
}

impl Default for SearchSettings {
    fn default() -> Self {
        SearchSettings {
            mode: ToolSearchMode::Auto,
            context_window: DEFAULT_CONTEXT_WINDOW,
        }
    }
}

impl SearchSettings {
    /// The definitions' size (bytes) above which `auto` turns search on.
    pub fn auto_budget(&self) -> u64 {
        self.context_window * BYTES_PER_TOKEN * AUTO_SHARE_PERCENT / 100
    }
}

/// `settings` with the environment's `WAVE_TOOL_SEARCH` applied (it wins over the files).
pub(crate) fn with_env(mut settings: SearchSettings) -> SearchSettings {
    if let Ok(value) = std::env::var(TOOL_SEARCH_VAR)
        && !value.trim().is_empty()
    {
        match ToolSearchMode::parse(&value) {
            Some(mode) => settings.mode = mode,
            None => tracing::warn!(
                "ignoring {TOOL_SEARCH_VAR}={value:?}: expected \"auto\", \"on\" or \"off\""
            ),
        }
    }
    settings
}

/// Applies `toolSearch` and `contextWindow` of one settings file (`root`, read from `path`);
/// a bad value is a warning naming the file and field, and leaves the setting as it was.
pub(crate) fn apply_file(settings: &mut SearchSettings, root: &Value, path: &Path) {
    match root.get("toolSearch") {
        None | Some(Value::Null) => {}
        Some(Value::String(s)) if ToolSearchMode::parse(s).is_some() => {
            settings.mode = ToolSearchMode::parse(s).unwrap_or_default();
        }
        Some(other) => tracing::warn!(
            "{}: toolSearch: expected \"auto\", \"on\" or \"off\", got {other}",
            path.display()
        ),
    }
    match root.get("contextWindow") {
        None | Some(Value::Null) => {}
        Some(Value::Number(n)) if n.as_u64().is_some_and(|t| t > 0) => {
            settings.context_window = n.as_u64().unwrap_or(DEFAULT_CONTEXT_WINDOW);
        }
        Some(other) => tracing::warn!(
            "{}: contextWindow: expected a positive number of tokens, got {other}",
            path.display()
        ),
    }
}

/// The session's search state: whether `auto` has turned search on, and which tools a search
/// has found (declared in full for the rest of the session).
#[derive(Debug, Default)]
pub(crate) struct SearchState {
    inner: Mutex<Inner>,
}

#[derive(Debug, Default)]
struct Inner {
    switched_on: bool,
    loaded: HashSet<String>,
    /// The ranking of the last searched set, with that set's key ([`index_key`]): built once
    /// while the set of searchable tools and their definitions stay the same.
    index: Option<(String, Arc<ToolIndex>)>,
    /// The names' hash of the last set handed to the embedding model in the background.
    prepared: Option<String>,
}

/// How one model request declares the MCP tools.
#[derive(Debug, Clone, Default)]
pub(crate) struct SearchPlan {
    /// Declared in full: every tool when search is off; else the `alwaysLoad` servers' tools and
    /// those found by a search.
    pub declared: Vec<McpTool>,
    /// Searchable (permitted, not `alwaysLoad`); empty when search is off.
    pub searchable: Vec<McpTool>,
    /// The announcement to append before the request, when the searchable set changed.
    pub announcement: Option<String>,
}

impl SearchPlan {
    /// Search is on for this request.
    pub fn active(&self) -> bool {
        !self.searchable.is_empty()
    }

    /// Deferred: searchable and not yet found.
    pub fn is_deferred(&self, full_name: &str, state: &SearchState) -> bool {
        self.searchable.iter().any(|t| t.full_name == full_name) && !state.is_loaded(full_name)
    }
}

impl SearchState {
    fn lock(&self) -> std::sync::MutexGuard<'_, Inner> {
        self.inner.lock().unwrap_or_else(|e| e.into_inner())
    }

    pub fn is_loaded(&self, full_name: &str) -> bool {
        self.lock().loaded.contains(full_name)
    }

    /// Splits the live tools of one request (BUD-3, BUD-5). `live` are the enabled tools; denied
    /// ones take no part (they are neither declared nor found).
    pub fn plan(
        &self,
        settings: SearchSettings,
        live: Vec<McpTool>,
        always_loaded: &HashSet<String>,
        rules: &PermissionRules,
        history: &[Message],
    ) -> SearchPlan {
        let live: Vec<McpTool> = live
            .into_iter()
            .filter(|t| rules.is_usable(&t.full_name))
            .collect();
        let on = {
            let mut inner = self.lock();
            let on = match settings.mode {
                ToolSearchMode::Off => false,
                ToolSearchMode::On => true,
                ToolSearchMode::Auto => {
                    inner.switched_on || definitions_bytes(&live) > settings.auto_budget()
                }
            };
            if on && settings.mode == ToolSearchMode::Auto {
                inner.switched_on = true;
            }
            on
        };
        if !on {
            return SearchPlan {
                declared: live,
                ..SearchPlan::default()
            };
        }
        let (pinned, searchable): (Vec<McpTool>, Vec<McpTool>) = live
            .into_iter()
            .partition(|t| always_loaded.contains(&t.server));
        if searchable.is_empty() {
            return SearchPlan {
                declared: pinned,
                ..SearchPlan::default()
            };
        }
        let mut declared = pinned;
        {
            let inner = self.lock();
            declared.extend(
                searchable
                    .iter()
                    .filter(|t| inner.loaded.contains(&t.full_name))
                    .cloned(),
            );
        }
        let names: BTreeSet<&str> = searchable.iter().map(|t| t.full_name.as_str()).collect();
        let hash = names_hash(&names);
        self.prepare(&hash, &searchable);
        let announcement = (last_announced(history).as_deref() != Some(hash.as_str()))
            .then(|| announcement(&hash, &names));
        SearchPlan {
            declared,
            searchable,
            announcement,
        }
    }

    /// Runs `search_mcp_tools` over the plan's searchable tools; the matches are declared from
    /// the next request on (BUD-4).
    pub fn search(
        &self,
        plan: &SearchPlan,
        arguments: &serde_json::Map<String, Value>,
    ) -> Result<String, String> {
        let Some(query) = arguments.get("query").and_then(Value::as_str) else {
            return Err(format!("{SEARCH_TOOL} needs a \"query\" string argument"));
        };
        let limit = match arguments.get("limit") {
            None | Some(Value::Null) => DEFAULT_LIMIT,
            Some(Value::Number(n)) if n.as_u64().is_some_and(|l| l > 0) => {
                (n.as_u64().unwrap_or(1) as usize).min(MAX_LIMIT)
            }
            Some(_) => return Err("\"limit\" must be a positive integer".into()),
        };
        let index = self.index(&plan.searchable);
        let found = index.search(query, limit);
        if found.is_empty() {
            return Ok(format!(
                "no MCP tool matches \"{query}\"; try other words, or full names separated by commas"
            ));
        }
        let mut inner = self.lock();
        let mut text = format!(
            "{} matching MCP tools; they are declared in full from your next request on:\n",
            found.len()
        );
        for doc in found {
            inner.loaded.insert(doc.full_name.clone());
            let description = doc.description.trim();
            match description.is_empty() {
                true => text.push_str(&format!("\n{}\n", doc.full_name)),
                false => text.push_str(&format!("\n{}\n  {description}\n", doc.full_name)),
            }
        }
        Ok(text)
    }
}

impl SearchState {
    /// The ranking of `tools`, reused while they stay the same (names and definitions).
    fn index(&self, tools: &[McpTool]) -> Arc<ToolIndex> {
        let key = index_key(tools);
        if let Some((cached, index)) = &self.lock().index
            && *cached == key
        {
            return index.clone();
        }
        let index = Arc::new(ToolIndex::new(&search_docs(tools)));
        self.lock().index = Some((key, index.clone()));
        index
    }

    /// Starts embedding a new set of searchable tools (`names_hash`: its names' hash) while the
    /// model thinks, so the first search does not wait for it (BUD-7). A definition that changed
    /// under the same names is embedded by the search that needs it.
    fn prepare(&self, names_hash: &str, tools: &[McpTool]) {
        {
            let mut inner = self.lock();
            if inner.prepared.as_deref() == Some(names_hash) {
                return;
            }
            inner.prepared = Some(names_hash.to_string());
        }
        ToolIndex::prepare(&search_docs(tools));
    }
}

fn search_docs(tools: &[McpTool]) -> Vec<SearchDoc> {
    tools
        .iter()
        .map(|t| {
            let annotations = t
                .annotations
                .as_ref()
                .and_then(|a| serde_json::to_value(a).ok());
            SearchDoc::new(
                &t.full_name,
                t.title.as_deref(),
                t.description.as_deref(),
                &t.input_schema,
                annotations.as_ref(),
            )
        })
        .collect()
}

/// What identifies a set of tools for the ranking: each full name with its definition's hash.
fn index_key(tools: &[McpTool]) -> String {
    let mut text = String::new();
    for tool in tools {
        text.push_str(&tool.full_name);
        text.push(' ');
        text.push_str(&tool.definition);
        text.push('\n');
    }
    short_hash(text)
}

/// The `search_mcp_tools` declaration.
pub(crate) fn declaration(deferred: usize) -> Value {
    json!({
        "type": "function",
        "function": {
            "name": SEARCH_TOOL,
            "description": format!(
                "Search the {deferred} MCP tools that are available but not declared (their full names are listed in a system reminder). Returns the best matches' full names and descriptions; the matches are declared in full, and callable, from your next request on. Query with words (ranked by name and description) or with full names separated by commas (selects exactly those)."
            ),
            "parameters": {
                "type": "object",
                "properties": {
                    "query": { "type": "string", "description": "Words describing the tool you need, or full tool names separated by commas." },
                    "limit": { "type": "integer", "description": "How many tools to return (default 5, at most 20).", "minimum": 1, "maximum": MAX_LIMIT }
                },
                "required": ["query"]
            }
        }
    })
}

/// Bytes of the tools' definitions as declared (JSON), the measure of `auto` (BUD-3).
pub fn definitions_bytes(tools: &[McpTool]) -> u64 {
    /// One declaration as the pool writes it (same keys, same order), borrowing the tool.
    #[derive(serde::Serialize)]
    struct Declared<'a> {
        r#type: &'static str,
        function: Function<'a>,
    }
    #[derive(serde::Serialize)]
    struct Function<'a> {
        name: &'a str,
        description: &'a str,
        parameters: &'a serde_json::Map<String, Value>,
    }
    /// Counts what is written instead of keeping it.
    struct Counter(u64);
    impl std::io::Write for Counter {
        fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
            self.0 += bytes.len() as u64;
            Ok(bytes.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    let mut counter = Counter(0);
    for tool in tools {
        let declared = Declared {
            r#type: "function",
            function: Function {
                name: &tool.full_name,
                description: tool.description.as_deref().unwrap_or(""),
                parameters: &tool.input_schema,
            },
        };
        // Writing into a counter cannot fail.
        let _ = serde_json::to_writer(&mut counter, &declared);
    }
    counter.0
}

/// [`short_hash`] of the names, each followed by a newline.
fn names_hash(names: &BTreeSet<&str>) -> String {
    let mut text = String::new();
    for name in names {
        text.push_str(name);
        text.push('\n');
    }
    short_hash(text)
}

/// The hash of the last deferred-tools list in the history, from `isMeta` messages' first line
/// only (INS rules).
fn last_announced(history: &[Message]) -> Option<String> {
    history
        .iter()
        .rev()
        .filter(|m| m.is_meta)
        .find_map(|m| match Marker::parse(&m.content)? {
            Marker::DeferredTools { hash } => Some(hash),
            _ => None,
        })
}

fn announcement(hash: &str, names: &BTreeSet<&str>) -> String {
    let marker = Marker::DeferredTools {
        hash: hash.to_string(),
    };
    let mut text = format!(
        "{}\n<system-reminder>\nThese {} MCP tools are available but not declared, to save context. To use one, call {SEARCH_TOOL} with words describing what you need (or with full names separated by commas); the matches are declared in full from your next request on.\n",
        marker.line(),
        names.len()
    );
    for name in names {
        text.push_str(name);
        text.push('\n');
    }
    text.push_str("</system-reminder>");
    text
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::*;

    fn tool(server: &str, name: &str, description: &str) -> McpTool {
        McpTool {
            server: server.into(),
            name: name.into(),
            full_name: format!("mcp__{server}__{name}"),
            description: Some(description.into()),
            input_schema: Arc::new(serde_json::Map::new()),
            ..McpTool::default()
        }
    }

    fn settings(mode: ToolSearchMode, context_window: u64) -> SearchSettings {
        SearchSettings {
            mode,
            context_window,
        }
    }

    // BUD-3: the measure of `auto` is the byte length of the declarations as JSON.
    #[test]
    fn bud_3_definitions_bytes_are_the_declarations_length() {
        let tools = vec![tool("a", "x", "does x"), tool("b", "y", "")];
        let written: usize = tools
            .iter()
            .map(|t| {
                json!({
                    "type": "function",
                    "function": {
                        "name": t.full_name,
                        "description": t.description.as_deref().unwrap_or(""),
                        "parameters": Value::Object((*t.input_schema).clone()),
                    }
                })
                .to_string()
                .len()
            })
            .sum();
        assert_eq!(definitions_bytes(&tools), written as u64);
    }

    // BUD-3: auto turns on above 10% of the window (4 bytes a token) and stays on; on/off as set.
    #[test]
    fn bud_3_auto_threshold_and_modes() {
        let tools = vec![tool("a", "x", "does x"), tool("a", "y", "does y")];
        let bytes = definitions_bytes(&tools);
        let rules = PermissionRules::default();
        let none = HashSet::new();
        // Budget just above the size: off.
        let window = (bytes * 10 / 4) + 10;
        let state = SearchState::default();
        let plan = state.plan(
            settings(ToolSearchMode::Auto, window),
            tools.clone(),
            &none,
            &rules,
            &[],
        );
        assert!(!plan.active());
        assert_eq!(plan.declared.len(), 2);
        // Budget below: on, everything deferred, announced.
        let plan = state.plan(
            settings(ToolSearchMode::Auto, window / 2),
            tools.clone(),
            &none,
            &rules,
            &[],
        );
        assert!(plan.active());
        assert!(plan.declared.is_empty());
        let note = plan.announcement.clone().unwrap();
        assert!(note.contains("\nmcp__a__x\nmcp__a__y\n"), "{note}");
        // Sticky: a bigger window later keeps it on; the same set is not announced again.
        let history = [Message::meta(note.clone())];
        let plan = state.plan(
            settings(ToolSearchMode::Auto, window * 100),
            tools.clone(),
            &none,
            &rules,
            &history,
        );
        assert!(plan.active());
        assert_eq!(plan.announcement, None);
        // INS-12 style: the marker quoted in a user message does not count.
        let quoted = [Message::user(note)];
        let plan = state.plan(
            settings(ToolSearchMode::On, window),
            tools.clone(),
            &none,
            &rules,
            &quoted,
        );
        assert!(plan.announcement.is_some());
        let off = SearchState::default().plan(
            settings(ToolSearchMode::Off, 1),
            tools,
            &none,
            &rules,
            &[],
        );
        assert!(!off.active());
    }

    // BUD-4, BUD-5: found tools are declared from then on; alwaysLoad servers never deferred;
    // denied tools are never found.
    #[test]
    fn bud_4_bud_5_found_tools_are_declared_and_denied_ones_never_found() {
        let tools = vec![
            tool("fs", "read_file", "Read a file."),
            tool("fs", "delete_file", "Delete a file."),
            tool("pinned", "ping", "Ping."),
        ];
        let rules = PermissionRules {
            deny: vec!["mcp__fs__delete_*".into()],
            ..PermissionRules::default()
        };
        let pinned: HashSet<String> = ["pinned".to_string()].into();
        let state = SearchState::default();
        let on = settings(ToolSearchMode::On, DEFAULT_CONTEXT_WINDOW);
        let plan = state.plan(on, tools.clone(), &pinned, &rules, &[]);
        let names = |tools: &[McpTool]| {
            tools
                .iter()
                .map(|t| t.full_name.clone())
                .collect::<Vec<_>>()
        };
        assert_eq!(names(&plan.declared), ["mcp__pinned__ping"]);
        assert_eq!(names(&plan.searchable), ["mcp__fs__read_file"]);
        let args = |query: &str| {
            let mut map = serde_json::Map::new();
            map.insert("query".into(), json!(query));
            map
        };
        // "file" matches both; the denied one is not there. Named, it is not found either.
        let text = state.search(&plan, &args("file")).unwrap();
        assert!(!text.contains("delete_file"), "{text}");
        let named = state.search(&plan, &args("mcp__fs__delete_file")).unwrap();
        assert!(!named.contains("delete_file"), "{named}");
        assert!(
            text.contains("mcp__fs__read_file\n  Read a file."),
            "{text}"
        );
        let next = state.plan(on, tools, &pinned, &rules, &[]);
        assert_eq!(
            names(&next.declared),
            ["mcp__pinned__ping", "mcp__fs__read_file"]
        );
        assert!(!next.is_deferred("mcp__fs__read_file", &state));
        assert!(state.search(&plan, &serde_json::Map::new()).is_err());
    }
}
