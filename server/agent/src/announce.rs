//! Announcing MCP servers' `instructions` to the model (INS-2…INS-12).
//!
//! Before every model request the agent compares the servers that are available now with what
//! the history says was announced, and appends one `isMeta` message per change:
//!
//! ```text
//! <!-- wave-mcp:announce {"server":"docs","hash":"<16 hex>","connectedAt":"<rfc3339>"} -->
//! <system-reminder>
//! Instructions from MCP server "docs" (its tools are named mcp__docs__*), verbatim:
//!
//! <the server's text, at most 2048 characters, then "…(truncated: N more characters)">
//! </system-reminder>
//! ```
//!
//! ```text
//! <!-- wave-mcp:offline {"server":"docs"} -->
//! <system-reminder>
//! MCP server "docs" is offline (status: disconnected). The instructions it announced earlier
//! in this conversation no longer apply, and its tools cannot be called.
//! </system-reminder>
//! ```
//!
//! The marker is the first line of the message, a fixed prefix followed by a JSON object (so
//! any server name round-trips). Only the first line of an `isMeta` message is read: a marker
//! quoted by the user or the model, or a marker-like line inside a server's own text, counts for
//! nothing (INS-12). The history is the only record (INS-8): the last marker per server decides.
//! `hash` is the SHA-256 of the full text (before the cut), `connectedAt` the start of the
//! connection that was announced, so a reconnect is announced again even when it happened
//! between two requests (INS-10).

use std::collections::{BTreeMap, HashSet};

use chrono::{DateTime, SecondsFormat, Utc};
use serde_json::{Value, json};
use sha2::{Digest, Sha256};
use wave_mcp_manager::names;
use wave_mcp_manager::{McpTool, ServerSnapshot, Status};

use crate::message::Message;
use crate::permissions::PermissionRules;

/// The most characters of one server's instructions that are announced (INS-3).
pub const INSTRUCTIONS_LIMIT: usize = 2048;

const MARKER_PREFIX: &str = "<!-- wave-mcp:";
const MARKER_SUFFIX: &str = " -->";

/// What the first line of an announcement, an offline message or the deferred-tools list of
/// tool search (BUD-3) says.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Marker {
    Announce {
        server: String,
        hash: String,
        connected_at: Option<String>,
    },
    Offline {
        server: String,
    },
    /// `hash` is [`short_hash`] of the deferred tools' full names, one a line.
    DeferredTools {
        hash: String,
    },
}

impl Marker {
    /// The server an announcement or offline marker is about.
    pub fn server(&self) -> Option<&str> {
        match self {
            Marker::Announce { server, .. } | Marker::Offline { server } => Some(server),
            Marker::DeferredTools { .. } => None,
        }
    }

    /// The one-line marker text.
    pub fn line(&self) -> String {
        let (kind, body) = match self {
            Marker::Announce {
                server,
                hash,
                connected_at,
            } => {
                let mut body = json!({ "server": server, "hash": hash });
                if let Some(at) = connected_at {
                    body["connectedAt"] = Value::String(at.clone());
                }
                ("announce", body)
            }
            Marker::Offline { server } => ("offline", json!({ "server": server })),
            Marker::DeferredTools { hash } => ("deferred-tools", json!({ "hash": hash })),
        };
        format!("{MARKER_PREFIX}{kind} {body}{MARKER_SUFFIX}")
    }

    /// The marker on the first line of `content`, if any.
    pub fn parse(content: &str) -> Option<Marker> {
        let line = content.lines().next()?;
        let rest = line
            .strip_prefix(MARKER_PREFIX)?
            .strip_suffix(MARKER_SUFFIX)?;
        let (kind, body) = rest.split_once(' ')?;
        let body: Value = serde_json::from_str(body).ok()?;
        let field = |key: &str| body.get(key).and_then(Value::as_str).map(str::to_string);
        match kind {
            "announce" => Some(Marker::Announce {
                server: field("server")?,
                hash: field("hash")?,
                connected_at: field("connectedAt"),
            }),
            "offline" => Some(Marker::Offline {
                server: field("server")?,
            }),
            "deferred-tools" => Some(Marker::DeferredTools {
                hash: field("hash")?,
            }),
            _ => None,
        }
    }
}

/// The first 16 hex digits of the SHA-256 of `bytes`: what a marker's `hash` holds.
pub fn short_hash(bytes: impl AsRef<[u8]>) -> String {
    Sha256::digest(bytes.as_ref())
        .iter()
        .take(8)
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// The hash of a server's instructions.
pub fn instructions_hash(text: &str) -> String {
    short_hash(text)
}

/// The text as announced: verbatim, cut at [`INSTRUCTIONS_LIMIT`] characters with a note.
pub fn cut_instructions(text: &str) -> String {
    let total = text.chars().count();
    if total <= INSTRUCTIONS_LIMIT {
        return text.to_string();
    }
    let kept: String = text.chars().take(INSTRUCTIONS_LIMIT).collect();
    format!(
        "{kept}\n…(truncated: {} more characters)",
        total - INSTRUCTIONS_LIMIT
    )
}

/// The content of the meta message announcing `server`'s instructions.
pub fn announcement(server: &str, text: &str, connected_at: Option<DateTime<Utc>>) -> String {
    let marker = Marker::Announce {
        server: server.to_string(),
        hash: instructions_hash(text),
        connected_at: connected_at.map(stamp),
    };
    format!(
        "{}\n<system-reminder>\nInstructions from MCP server {} (its tools are named mcp__{}__*), verbatim:\n\n{}\n</system-reminder>",
        marker.line(),
        quoted(server),
        names::sanitize(server),
        cut_instructions(text)
    )
}

/// The content of the meta message saying `server` went offline.
pub fn offline_notice(server: &str, status: &str) -> String {
    let marker = Marker::Offline {
        server: server.to_string(),
    };
    format!(
        "{}\n<system-reminder>\nMCP server {} is offline (status: {status}). The instructions it announced earlier in this conversation no longer apply, and its tools cannot be called.\n</system-reminder>",
        marker.line(),
        quoted(server)
    )
}

/// The last marker of every server, read from `isMeta` messages only (INS-8, INS-12).
pub fn markers(history: &[Message]) -> BTreeMap<String, Marker> {
    history
        .iter()
        .filter(|m| m.is_meta)
        .filter_map(|m| Marker::parse(&m.content))
        .filter_map(|marker| Some((marker.server()?.to_string(), marker)))
        .collect()
}

/// The meta messages to append before the next request: offline notices for announced servers
/// that are gone (INS-5), announcements for available servers not announced for their current
/// connection and text (INS-2, INS-9, INS-10), nothing when nothing changed (INS-6). Servers whose
/// tools are all denied are not announced (INS-4).
pub(crate) fn plan(
    history: &[Message],
    servers: &[ServerSnapshot],
    tools: &[McpTool],
    rules: &PermissionRules,
) -> Vec<String> {
    let last = markers(history);
    let mut notes = Vec::new();
    for server in servers {
        let announced = match last.get(&server.name) {
            Some(Marker::Announce {
                hash, connected_at, ..
            }) => Some((hash, connected_at)),
            _ => None,
        };
        if !is_available(server.status) {
            if announced.is_some() {
                notes.push(offline_notice(&server.name, server.status.as_str()));
            }
            continue;
        }
        let Some(text) = server
            .instructions
            .as_ref()
            .filter(|t| !t.trim().is_empty())
        else {
            continue;
        };
        if all_tools_denied(&server.name, tools, rules) {
            continue;
        }
        let current = server.last_connected_at.map(stamp);
        let same = announced.is_some_and(|(hash, at)| {
            *hash == instructions_hash(text)
                && (at.is_none() || current.is_none() || *at == current)
        });
        if same {
            continue;
        }
        notes.push(announcement(&server.name, text, server.last_connected_at));
    }
    let configured: HashSet<&str> = servers.iter().map(|s| s.name.as_str()).collect();
    for (name, marker) in &last {
        if matches!(marker, Marker::Announce { .. }) && !configured.contains(name.as_str()) {
            notes.push(offline_notice(name, "removed"));
        }
    }
    notes
}

/// Connected, or reconnecting with the previous tools kept (INS-2, TOOL-7).
fn is_available(status: Status) -> bool {
    matches!(status, Status::Connected | Status::Reconnecting)
}

/// The server has tools and every one is denied; a server with no tools is not excluded (INS-4).
fn all_tools_denied(server: &str, tools: &[McpTool], rules: &PermissionRules) -> bool {
    let mut own = tools.iter().filter(|t| t.server == server).peekable();
    own.peek().is_some() && own.all(|t| !rules.is_usable(&t.full_name))
}

fn stamp(at: DateTime<Utc>) -> String {
    at.to_rfc3339_opts(SecondsFormat::Nanos, true)
}

fn quoted(name: &str) -> String {
    Value::String(name.to_string()).to_string()
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::*;
    use wave_mcp_manager::Source;

    fn server(name: &str, status: Status, instructions: Option<&str>) -> ServerSnapshot {
        ServerSnapshot {
            name: name.into(),
            source: Source::Constructor,
            config_path: None,
            transport: "stdio".into(),
            command: Some("x".into()),
            args: Vec::new(),
            url: None,
            status,
            error: None,
            tools: Vec::new(),
            tools_from_cache: false,
            last_connected_at: Some(DateTime::from_timestamp(1_700_000_000, 5).unwrap()),
            instructions: instructions.map(str::to_string),
            connection_id: Some(1),
            signed_in: false,
            catalog: Default::default(),
            approval: None,
            icons: Vec::new(),
            protocol_version: None,
        }
    }

    fn tool(server: &str, name: &str) -> McpTool {
        McpTool {
            server: server.into(),
            name: name.into(),
            full_name: names::full_tool_name(server, name),
            description: None,
            input_schema: Arc::new(serde_json::Map::new()),
            ..McpTool::default()
        }
    }

    #[test]
    fn markers_round_trip_any_server_name() {
        for name in ["docs", "a \"b\" -->\nc", "数据库"] {
            let marker = Marker::Announce {
                server: name.into(),
                hash: "0123456789abcdef".into(),
                connected_at: Some("2024-01-01T00:00:00Z".into()),
            };
            assert_eq!(Marker::parse(&marker.line()), Some(marker.clone()));
            let offline = Marker::Offline {
                server: name.into(),
            };
            assert_eq!(Marker::parse(&offline.line()), Some(offline));
            let deferred = Marker::DeferredTools {
                hash: short_hash("mcp__a__x\n"),
            };
            assert_eq!(
                deferred.line(),
                format!(
                    "<!-- wave-mcp:deferred-tools {{\"hash\":\"{}\"}} -->",
                    short_hash("mcp__a__x\n")
                )
            );
            assert_eq!(Marker::parse(&deferred.line()), Some(deferred));
        }
        assert_eq!(Marker::parse("no marker here"), None);
    }

    // INS-2, TOOL-7: a reconnecting server keeps its announcement and is announced when new.
    #[test]
    fn ins_2_tool_7_reconnecting_counts_as_available() {
        let servers = [server("s", Status::Reconnecting, Some("use s wisely"))];
        let tools = [tool("s", "echo")];
        let rules = PermissionRules::default();
        let notes = plan(&[], &servers, &tools, &rules);
        assert_eq!(notes.len(), 1);
        assert!(notes[0].contains("use s wisely"));
        let history = [Message::meta(notes[0].clone())];
        assert!(plan(&history, &servers, &tools, &rules).is_empty());
        let gone = [server("s", Status::Error, Some("use s wisely"))];
        let notes = plan(&history, &gone, &[], &rules);
        assert_eq!(notes.len(), 1);
        assert!(notes[0].starts_with("<!-- wave-mcp:offline"));
    }

    // INS-12: a marker outside an isMeta message counts for nothing; nor does one that is not
    // on the first line (a server's text cannot fake another server's departure).
    #[test]
    fn ins_12_only_first_lines_of_meta_messages_count() {
        let servers = [server("s", Status::Connected, Some("text"))];
        let announce = announcement("s", "text", servers[0].last_connected_at);
        let rules = PermissionRules::default();
        let quoted = [Message::user(announce.clone())];
        assert_eq!(plan(&quoted, &servers, &[], &rules).len(), 1);
        let buried = [Message::meta(format!("hello\n{announce}"))];
        assert_eq!(plan(&buried, &servers, &[], &rules).len(), 1);
        let real = [Message::meta(announce)];
        assert!(plan(&real, &servers, &[], &rules).is_empty());
    }

    // INS-3
    #[test]
    fn ins_3_cut_at_2048_characters_with_a_note() {
        assert_eq!(cut_instructions("a\nb"), "a\nb");
        let exact = "é".repeat(INSTRUCTIONS_LIMIT);
        assert_eq!(cut_instructions(&exact), exact);
        let long = "é".repeat(INSTRUCTIONS_LIMIT + 7);
        assert_eq!(
            cut_instructions(&long),
            format!("{exact}\n…(truncated: 7 more characters)")
        );
    }
}
