//! Per-tool switches of a server entry (BUD-1): `enabledTools` (only these) or `disabledTools`
//! (all but these), arrays of the server's own tool names, and `alwaysLoad` (BUD-5: the agent
//! never defers this server's tools behind tool search).
//!
//! Switches change which tools the model is offered, not how the server is reached, so an entry
//! whose only change is its switches keeps its connection on reload ([`same_connection`]).

use serde_json::{Map, Value};

use crate::config::ServerEntry;

/// Which of a server's tools are switched on.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub enum ToolSwitches {
    /// Neither key is set: every tool.
    #[default]
    All,
    /// `enabledTools`: only these.
    Only(Vec<String>),
    /// `disabledTools`: every tool but these.
    AllBut(Vec<String>),
}

impl ToolSwitches {
    /// Whether the tool (the server's own name) is switched on.
    pub fn allows(&self, tool: &str) -> bool {
        match self {
            ToolSwitches::All => true,
            ToolSwitches::Only(names) => names.iter().any(|n| n == tool),
            ToolSwitches::AllBut(names) => !names.iter().any(|n| n == tool),
        }
    }
}

/// The key of the allow list.
pub const ENABLED_TOOLS: &str = "enabledTools";
/// The key of the deny list.
pub const DISABLED_TOOLS: &str = "disabledTools";
/// The key that keeps a server's tools out of tool search.
pub const ALWAYS_LOAD: &str = "alwaysLoad";

/// Reads `enabledTools` / `disabledTools` of one server object; both set is an error naming the
/// entry. Errors name the field (`mcpServers.<name>.<field>`).
pub fn parse_switches(obj: &Map<String, Value>, at: &str) -> Result<ToolSwitches, String> {
    let enabled = names(obj, ENABLED_TOOLS, at)?;
    let disabled = names(obj, DISABLED_TOOLS, at)?;
    match (enabled, disabled) {
        (Some(_), Some(_)) => Err(format!(
            "{at}: sets both `{ENABLED_TOOLS}` and `{DISABLED_TOOLS}`; keep one of them"
        )),
        (Some(only), None) => Ok(ToolSwitches::Only(only)),
        (None, Some(but)) => Ok(ToolSwitches::AllBut(but)),
        (None, None) => Ok(ToolSwitches::All),
    }
}

/// Reads `alwaysLoad` (default `false`).
pub fn parse_always_load(obj: &Map<String, Value>, at: &str) -> Result<bool, String> {
    match obj.get(ALWAYS_LOAD) {
        None | Some(Value::Null) => Ok(false),
        Some(Value::Bool(b)) => Ok(*b),
        Some(_) => Err(format!("{at}.{ALWAYS_LOAD}: expected true or false")),
    }
}

fn names(obj: &Map<String, Value>, key: &str, at: &str) -> Result<Option<Vec<String>>, String> {
    let items = match obj.get(key) {
        None | Some(Value::Null) => return Ok(None),
        Some(Value::Array(items)) => items,
        Some(_) => return Err(format!("{at}.{key}: expected an array of tool names")),
    };
    items
        .iter()
        .enumerate()
        .map(|(i, item)| match item {
            Value::String(s) => Ok(s.clone()),
            _ => Err(format!("{at}.{key}[{i}]: expected a tool name (a string)")),
        })
        .collect::<Result<Vec<_>, _>>()
        .map(Some)
}

/// The two entries differ at most in their tool switches and `alwaysLoad`: the connection may
/// stay (BUD-2: the watcher's reload does not reconnect a server for a switch).
pub fn same_connection(old: &ServerEntry, new: &ServerEntry) -> bool {
    let (Ok(old_config), Ok(new_config)) = (&old.config, &new.config) else {
        return false;
    };
    let mut old_config = old_config.clone();
    old_config.tool_switches = new_config.tool_switches.clone();
    old_config.always_load = new_config.always_load;
    old.name == new.name
        && old.source == new.source
        && old.config_path == new.config_path
        && old.plugin_root == new.plugin_root
        && old.base_dir == new.base_dir
        && old_config == *new_config
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::parse_server;
    use serde_json::json;

    // BUD-1: the keys parse, each bad field is named, both set is an error naming the entry.
    #[test]
    fn bud_1_switch_keys_parse_and_errors_name_the_entry() {
        let only = parse_server(
            &json!({"command": "x", "enabledTools": ["a"]}),
            "mcpServers.s",
        )
        .unwrap();
        assert_eq!(only.tool_switches, ToolSwitches::Only(vec!["a".into()]));
        assert!(only.tool_switches.allows("a") && !only.tool_switches.allows("b"));
        let but = parse_server(
            &json!({"command": "x", "disabledTools": ["a"], "alwaysLoad": true}),
            "mcpServers.s",
        )
        .unwrap();
        assert!(!but.tool_switches.allows("a") && but.tool_switches.allows("b"));
        assert!(but.always_load);
        for (value, error) in [
            (
                json!({"command": "x", "enabledTools": [], "disabledTools": []}),
                "mcpServers.s: sets both `enabledTools` and `disabledTools`; keep one of them",
            ),
            (
                json!({"command": "x", "disabledTools": "a"}),
                "mcpServers.s.disabledTools: expected an array of tool names",
            ),
            (
                json!({"command": "x", "enabledTools": ["a", 1]}),
                "mcpServers.s.enabledTools[1]: expected a tool name (a string)",
            ),
            (
                json!({"command": "x", "alwaysLoad": "yes"}),
                "mcpServers.s.alwaysLoad: expected true or false",
            ),
        ] {
            assert_eq!(parse_server(&value, "mcpServers.s").unwrap_err(), error);
        }
    }

    // BUD-2: only switch changes keep the connection.
    #[test]
    fn bud_2_switch_changes_keep_the_connection() {
        let entry = |value: Value| ServerEntry {
            name: "s".into(),
            source: crate::config::Source::User,
            config_path: None,
            plugin_root: None,
            base_dir: "/b".into(),
            config: parse_server(&value, "mcpServers.s"),
            raw: value,
            replaced: None,
        };
        let plain = entry(json!({"command": "x"}));
        let switched = entry(json!({"command": "x", "disabledTools": ["a"], "alwaysLoad": true}));
        let moved = entry(json!({"command": "y", "disabledTools": ["a"]}));
        assert!(same_connection(&plain, &switched));
        assert!(!same_connection(&switched, &moved));
    }
}
