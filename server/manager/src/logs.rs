//! Each server's log (SRV-2): its `notifications/message` (level, logger, data) and its stderr
//! lines, the newest [`LOG_ENTRIES`] kept per server (older ones dropped and counted), read by
//! [`McpManager::logs`](crate::McpManager::logs) and followed by
//! [`McpManager::subscribe_logs`](crate::McpManager::subscribe_logs). Server text: what is kept
//! loses its hidden characters (TRUST-7); control characters are escaped where it is printed.

use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Mutex};

use chrono::{DateTime, Utc};
use serde_json::Value;
use tokio::sync::broadcast;

/// How many entries a server's log keeps.
pub const LOG_ENTRIES: usize = 2000;

/// Longest text kept of one entry, in bytes (longer is cut, with `…`).
const ENTRY_TEXT: usize = 8 * 1024;

/// How many appended batches a slow follower may fall behind before it misses some.
const FOLLOW_BACKLOG: usize = 256;

/// Where an entry came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LogSource {
    /// The server's `notifications/message`.
    Message,
    /// A line the server's process wrote to stderr.
    Stderr,
}

/// One entry of a server's log.
#[derive(Debug, Clone, PartialEq)]
pub struct LogEntry {
    pub time: DateTime<Utc>,
    pub source: LogSource,
    /// The MCP level (`debug` … `emergency`) of a message.
    pub level: Option<String>,
    pub logger: Option<String>,
    pub text: String,
}

/// One server's log as read.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ServerLog {
    pub entries: Vec<LogEntry>,
    /// Entries dropped to keep the newest [`LOG_ENTRIES`].
    pub dropped: u64,
}

#[derive(Default)]
struct Kept {
    entries: VecDeque<LogEntry>,
    dropped: u64,
}

/// The logs of one manager's servers; cheap to clone.
#[derive(Clone)]
pub(crate) struct Logs {
    kept: Arc<Mutex<HashMap<String, Kept>>>,
    appended: broadcast::Sender<(String, LogEntry)>,
}

impl Default for Logs {
    fn default() -> Logs {
        Logs {
            kept: Arc::default(),
            appended: broadcast::channel(FOLLOW_BACKLOG).0,
        }
    }
}

impl Logs {
    pub(crate) fn read(&self, server: &str) -> ServerLog {
        let kept = self.kept.lock().unwrap_or_else(|e| e.into_inner());
        kept.get(server)
            .map(|log| ServerLog {
                entries: log.entries.iter().cloned().collect(),
                dropped: log.dropped,
            })
            .unwrap_or_default()
    }

    pub(crate) fn subscribe(&self) -> broadcast::Receiver<(String, LogEntry)> {
        self.appended.subscribe()
    }

    /// Where `server`'s entries go.
    pub(crate) fn sink(&self, server: &str) -> LogSink {
        LogSink {
            server: server.into(),
            logs: self.clone(),
        }
    }

    fn append(&self, server: &str, mut entry: LogEntry) {
        crate::inert::strip_hidden_in_place(&mut entry.text);
        if entry.text.len() > ENTRY_TEXT {
            let mut cut = ENTRY_TEXT;
            while !entry.text.is_char_boundary(cut) {
                cut -= 1;
            }
            entry.text.truncate(cut);
            entry.text.push('…');
        }
        {
            let mut kept = self.kept.lock().unwrap_or_else(|e| e.into_inner());
            let log = kept.entry(server.to_string()).or_default();
            if log.entries.len() == LOG_ENTRIES {
                log.entries.pop_front();
                log.dropped += 1;
            }
            log.entries.push_back(entry.clone());
        }
        // No follower is not an error.
        let _ = self.appended.send((server.to_string(), entry));
    }
}

/// Appends to one server's log: given to its connection and its process.
#[derive(Clone)]
pub(crate) struct LogSink {
    server: Arc<str>,
    logs: Logs,
}

impl LogSink {
    /// A `notifications/message`: its data as text (a string as is, anything else as JSON).
    pub(crate) fn message(&self, level: &str, logger: Option<String>, data: &Value) {
        let text = match data {
            Value::String(text) => text.clone(),
            other => other.to_string(),
        };
        self.logs.append(
            &self.server,
            LogEntry {
                time: Utc::now(),
                source: LogSource::Message,
                level: Some(level.to_string()),
                logger,
                text,
            },
        );
    }

    /// One line of a stdio server's stdout that names `notifications/message`: logged when it
    /// is one (its params as [`LogSink::message`] takes them), in the order the server wrote it.
    pub(crate) fn message_line(&self, line: &[u8]) {
        let Ok(message) = serde_json::from_slice::<Value>(line) else {
            return;
        };
        if message["method"] != "notifications/message" {
            return;
        }
        let params = &message["params"];
        let level = params["level"].as_str().unwrap_or("info");
        let logger = params["logger"].as_str().map(str::to_string);
        self.message(level, logger, &params["data"]);
    }

    /// A line of the server's stderr.
    pub(crate) fn stderr(&self, line: &str) {
        self.logs.append(
            &self.server,
            LogEntry {
                time: Utc::now(),
                source: LogSource::Stderr,
                level: None,
                logger: None,
                text: line.to_string(),
            },
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    // SRV-2: the newest LOG_ENTRIES are kept, older ones counted; messages keep level and
    // logger, JSON data becomes its text, hidden characters go; followers get each entry.
    #[test]
    fn srv_2_a_bounded_log_per_server() {
        let logs = Logs::default();
        let mut follower = logs.subscribe();
        let sink = logs.sink("db");
        sink.message("warning", Some("pool".into()), &json!("slow\u{200B} query"));
        sink.message("info", None, &json!({ "rows": 3 }));
        sink.stderr("listening");
        let log = logs.read("db");
        assert_eq!(log.dropped, 0);
        let shown: Vec<(LogSource, Option<&str>, Option<&str>, &str)> = log
            .entries
            .iter()
            .map(|e| {
                (
                    e.source,
                    e.level.as_deref(),
                    e.logger.as_deref(),
                    e.text.as_str(),
                )
            })
            .collect();
        assert_eq!(
            shown,
            [
                (
                    LogSource::Message,
                    Some("warning"),
                    Some("pool"),
                    "slow query"
                ),
                (LogSource::Message, Some("info"), None, "{\"rows\":3}"),
                (LogSource::Stderr, None, None, "listening"),
            ]
        );
        assert_eq!(follower.try_recv().unwrap().1.text, "slow query");
        for i in 0..LOG_ENTRIES {
            sink.stderr(&format!("line {i}"));
        }
        let log = logs.read("db");
        assert_eq!(log.entries.len(), LOG_ENTRIES);
        assert_eq!(log.dropped, 3);
        assert_eq!(log.entries[0].text, "line 0");
        assert!(logs.read("other").entries.is_empty());
    }
}
