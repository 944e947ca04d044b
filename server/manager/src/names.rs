//! Model-facing tool names (`mcp__<server>__<tool>`) and input-schema cleaning.

use serde_json::{Map, Value};
use sha2::{Digest, Sha256};

/// The longest tool name the common LLM APIs accept.
pub const MAX_TOOL_NAME_LEN: usize = 64;
const HASH_LEN: usize = 8;

/// `mcp__<server>__<tool>` (TOOL-1, TOOL-6), each part reduced to `[A-Za-z0-9_-]`. A name longer
/// than 64 characters keeps its first 55 characters and ends with `_` and 8 hex digits of the
/// SHA-256 of the unsanitised server and tool names, so it stays unique and stable.
///
/// Codex does the same sanitising and hashes over-long names too, but appends a 40-character SHA-1
/// (leaving 24 readable characters) and drops a tool whose name collides; we keep 55 readable
/// characters and give a colliding tool its hashed name instead of dropping it.
pub fn full_tool_name(server: &str, tool: &str) -> String {
    let name = format!("mcp__{}__{}", sanitize(server), sanitize(tool));
    if name.len() <= MAX_TOOL_NAME_LEN {
        return name;
    }
    hashed_name(&name, server, tool)
}

/// The variant used when two tools would get the same full name.
pub fn disambiguated_tool_name(server: &str, tool: &str) -> String {
    let name = format!("mcp__{}__{}", sanitize(server), sanitize(tool));
    hashed_name(&name, server, tool)
}

fn hashed_name(name: &str, server: &str, tool: &str) -> String {
    let digest = Sha256::digest(format!("{server}\0{tool}").as_bytes());
    let hash: String = digest
        .iter()
        .take(HASH_LEN / 2)
        .map(|b| format!("{b:02x}"))
        .collect();
    let keep = (MAX_TOOL_NAME_LEN - HASH_LEN - 1).min(name.len());
    format!("{}_{hash}", &name[..keep])
}

/// Replaces every character outside `[A-Za-z0-9_-]` with `_`.
pub fn sanitize(part: &str) -> String {
    part.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' || c == '-' {
                c
            } else {
                '_'
            }
        })
        .collect()
}

/// Fields some LLM APIs reject in tool schemas (TOOL-5).
const UNSUPPORTED_SCHEMA_KEYS: [&str; 3] = ["$schema", "exclusiveMinimum", "exclusiveMaximum"];

/// Removes the unsupported keys at every depth. Property *names* that happen to equal one of the
/// keys (a tool parameter called `exclusiveMinimum`) are kept: only schema keywords are removed.
pub fn clean_schema(schema: &Map<String, Value>) -> Map<String, Value> {
    clean_object(schema, false)
}

fn clean_object(object: &Map<String, Value>, keys_are_names: bool) -> Map<String, Value> {
    object
        .iter()
        .filter(|(key, _)| keys_are_names || !UNSUPPORTED_SCHEMA_KEYS.contains(&key.as_str()))
        .map(|(key, value)| {
            let holds_names = !keys_are_names
                && matches!(
                    key.as_str(),
                    "properties" | "patternProperties" | "$defs" | "definitions"
                );
            (key.clone(), clean_value(value, holds_names))
        })
        .collect()
}

fn clean_value(value: &Value, keys_are_names: bool) -> Value {
    match value {
        Value::Object(object) => Value::Object(clean_object(object, keys_are_names)),
        Value::Array(items) => Value::Array(items.iter().map(|v| clean_value(v, false)).collect()),
        other => other.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    // TOOL-1, TOOL-6
    #[test]
    fn full_names_are_prefixed_sanitised_and_capped() {
        assert_eq!(full_tool_name("github", "search"), "mcp__github__search");
        assert_eq!(full_tool_name("my server", "a.b"), "mcp__my_server__a_b");
        assert_ne!(full_tool_name("a", "x"), full_tool_name("b", "x"));
        let long = full_tool_name("server", &"t".repeat(100));
        assert_eq!(long.len(), MAX_TOOL_NAME_LEN);
        assert!(long.starts_with("mcp__server__ttt"));
        assert_ne!(long, full_tool_name("server", &"t".repeat(101)));
        assert_eq!(long, full_tool_name("server", &"t".repeat(100)));
        let other = disambiguated_tool_name("a.b", "x");
        assert_ne!(other, disambiguated_tool_name("a_b", "x"));
    }

    // TOOL-5
    #[test]
    fn schema_cleaning_reaches_every_depth_but_keeps_property_names() {
        let schema = json!({
            "$schema": "http://json-schema.org/draft-07/schema#",
            "type": "object",
            "properties": {
                "limit": {"type": "integer", "exclusiveMinimum": 0},
                "exclusiveMaximum": {"type": "number"},
                "range": {"type": "object", "properties": {
                    "low": {"type": "number", "exclusiveMaximum": 10}
                }},
                "list": {"type": "array", "items": [{"exclusiveMinimum": 1, "type": "number"}]}
            }
        });
        let cleaned = Value::Object(clean_schema(schema.as_object().unwrap()));
        assert_eq!(
            cleaned,
            json!({
                "type": "object",
                "properties": {
                    "limit": {"type": "integer"},
                    "exclusiveMaximum": {"type": "number"},
                    "range": {"type": "object", "properties": {"low": {"type": "number"}}},
                    "list": {"type": "array", "items": [{"type": "number"}]}
                }
            })
        );
    }
}
