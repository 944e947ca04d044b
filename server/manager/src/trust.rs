//! The user's trust store (`~/.wave/trusted-servers.json`, 0600 in a 0700 directory): which
//! project servers the user approved, each pinned to the SHA-256 fingerprint of its entry as
//! written (TRUST-1, TRUST-2, TRUST-4), and which tools the user allowed `always`, each pinned to
//! the SHA-256 of the tool's definition (TRUST-5, TRUST-6). Keyed by the project's canonical
//! directory. Nothing in a project's files is read here: only the user can approve.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use sha2::{Digest, Sha256};

use crate::config::{ServerEntry, Source};
use crate::files::{self, Stamp};

/// Version of the file format this build reads and writes.
const FORMAT_VERSION: u32 = 1;

/// `~/.wave/trusted-servers.json`.
pub fn trust_path(home: &Path) -> PathBuf {
    home.join(".wave").join("trusted-servers.json")
}

/// SHA-256 (hex) of an entry as written: every field, keys in a canonical order, so any change
/// of a value (command, args, env, url, headers, anything) is a new fingerprint (TRUST-4).
pub fn entry_fingerprint(raw: &Value) -> String {
    let mut hash = Sha256::new();
    hash.update(b"wave-mcp-entry-v1\0");
    canonical(raw, &mut hash);
    hex(&hash.finalize())
}

/// SHA-256 (hex) of a tool's definition as the server presents it: name, title, description,
/// input schema and annotations (TRUST-6).
pub fn definition_hash(tool: &rmcp::model::Tool) -> String {
    let mut hash = Sha256::new();
    hash.update(b"wave-mcp-tool-v1\0");
    let definition = serde_json::json!({
        "name": tool.name,
        "title": tool.title,
        "description": tool.description,
        "inputSchema": tool.input_schema.as_ref(),
        "annotations": tool.annotations,
    });
    canonical(&definition, &mut hash);
    hex(&hash.finalize())
}

/// Feeds `value` to the hash with object keys sorted and every item length-prefixed.
fn canonical(value: &Value, hash: &mut Sha256) {
    let mut put = |tag: u8, bytes: &[u8]| {
        hash.update([tag]);
        hash.update((bytes.len() as u64).to_le_bytes());
        hash.update(bytes);
    };
    match value {
        Value::Null => put(b'n', b""),
        Value::Bool(b) => put(b'b', &[u8::from(*b)]),
        Value::Number(n) => put(b'#', n.to_string().as_bytes()),
        Value::String(s) => put(b's', s.as_bytes()),
        Value::Array(items) => {
            put(b'[', &(items.len() as u64).to_le_bytes());
            for item in items {
                canonical(item, hash);
            }
        }
        Value::Object(map) => {
            put(b'{', &(map.len() as u64).to_le_bytes());
            let mut keys: Vec<&String> = map.keys().collect();
            keys.sort();
            for key in keys {
                hash.update([b'k']);
                hash.update((key.len() as u64).to_le_bytes());
                hash.update(key.as_bytes());
                canonical(&map[key], hash);
            }
        }
    }
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// What approving one project entry would run, exactly as written (TRUST-3).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServerApproval {
    pub name: String,
    pub config_path: PathBuf,
    pub transport: String,
    pub command: Option<String>,
    pub args: Vec<String>,
    pub url: Option<String>,
    /// Names the entry sets in its process's environment (`env`), never the values.
    pub env_keys: Vec<String>,
    /// `${VAR}` names read from the user's environment, in any field.
    pub variables: Vec<String>,
    /// An earlier form of this entry was approved (TRUST-4).
    pub changed: bool,
    /// The source of a same-named server this entry replaces once approved.
    pub shadows: Option<Source>,
    /// The fingerprint the approval would pin.
    pub fingerprint: String,
    /// The IDE does not trust the workspace: approving is refused until it does (TRUST-9).
    pub workspace_untrusted: bool,
}

impl ServerApproval {
    pub(crate) fn of(entry: &ServerEntry, fingerprint: String, changed: bool) -> ServerApproval {
        let config = entry.config.as_ref().ok();
        let mut variables = Vec::new();
        collect_variables(&entry.raw, &mut variables);
        ServerApproval {
            name: entry.name.clone(),
            config_path: entry.config_path.clone().unwrap_or_default(),
            transport: config.map_or_else(|| "unknown".into(), |c| c.transport_label()),
            command: config.and_then(|c| c.command.clone()),
            args: config.map(|c| c.args.clone()).unwrap_or_default(),
            url: config.and_then(|c| c.url.clone()),
            env_keys: config
                .map(|c| c.env.keys().cloned().collect())
                .unwrap_or_default(),
            variables,
            changed,
            shadows: entry.replaced.as_ref().map(|r| r.source),
            fingerprint,
            workspace_untrusted: false,
        }
    }
}

/// The `${VAR}` / `${VAR:-default}` names in every string of `value`, each once, in order.
fn collect_variables(value: &Value, out: &mut Vec<String>) {
    match value {
        Value::String(text) => {
            let mut rest = text.as_str();
            while let Some(start) = rest.find("${") {
                let after = &rest[start + 2..];
                let Some(end) = after.find('}') else { break };
                let inner = &after[..end];
                let name = inner.split_once(":-").map_or(inner, |(name, _)| name);
                if !name.is_empty() && !out.iter().any(|known| known == name) {
                    out.push(name.to_string());
                }
                rest = &after[end + 1..];
            }
        }
        Value::Array(items) => items.iter().for_each(|item| collect_variables(item, out)),
        Value::Object(map) => map.values().for_each(|item| collect_variables(item, out)),
        _ => {}
    }
}

#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
struct Disk {
    version: u32,
    #[serde(default)]
    projects: BTreeMap<String, Project>,
}

#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
struct Project {
    /// Approved project servers by name.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    servers: BTreeMap<String, Pinned>,
    /// Tools allowed `always`, by server name, then by the server's tool name.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    tools: BTreeMap<String, BTreeMap<String, Pinned>>,
}

/// A permission pinned to a hash: of the entry (servers) or of the definition (tools).
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
struct Pinned {
    sha256: String,
    at: DateTime<Utc>,
}

/// One version of the file as read: what identifies it on disk and what it holds.
struct Read {
    stamp: Option<Stamp>,
    /// When the stamp was last compared with the file's.
    checked: Instant,
    disk: Arc<Disk>,
}

/// The trust store of one home directory, for one project. Reads are cached per version of the
/// file (a `stat` per check); writes are a locked read-merge-write with an atomic replace.
pub struct TrustStore {
    path: PathBuf,
    /// The project's canonical directory: the key of its approvals and tool permissions.
    project: String,
    cached: Mutex<Option<Read>>,
}

impl TrustStore {
    pub fn new(home: &Path, project: &Path) -> TrustStore {
        TrustStore {
            path: trust_path(home),
            project: project.to_string_lossy().into_owned(),
            cached: Mutex::new(None),
        }
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The fingerprint the user approved for project server `name`, if any. A file that cannot
    /// be read approves nothing (a warning names it).
    pub fn approved_fingerprint(&self, name: &str) -> Option<String> {
        let disk = self.current();
        let pinned = disk.projects.get(&self.project)?.servers.get(name)?;
        Some(pinned.sha256.clone())
    }

    /// Approves project server `name` in the form whose fingerprint is `fingerprint`.
    pub fn approve(&self, name: &str, fingerprint: &str) -> Result<(), String> {
        let pinned = Pinned {
            sha256: fingerprint.to_string(),
            at: Utc::now(),
        };
        self.update(|project| {
            project.servers.insert(name.to_string(), pinned);
        })
    }

    /// Forgets the approval of `name` and the tools allowed for it; whether there was one.
    pub fn revoke(&self, name: &str) -> Result<bool, String> {
        self.update(|project| {
            project.tools.remove(name);
            project.servers.remove(name).is_some()
        })
    }

    /// The definition hash a tool was allowed `always` for, if it was.
    pub fn tool_permission(&self, server: &str, tool: &str) -> Option<String> {
        self.view()
            .tool_permission(server, tool)
            .map(str::to_string)
    }

    /// The file as it is now, for many look-ups at one `stat`'s cost.
    pub fn view(&self) -> TrustView<'_> {
        self.view_within(Duration::ZERO)
    }

    /// The file as of a check at most `max_age` ago: for a tool call's remembered permission,
    /// which another process's edit of the file reaches within that window (the settings files'
    /// rules take the same); this process's own writes are seen at once.
    pub fn view_within(&self, max_age: Duration) -> TrustView<'_> {
        TrustView {
            disk: self.checked_within(max_age),
            project: &self.project,
        }
    }

    /// Allows `tool` of `server` always, for the definition hashed `definition` (TRUST-6).
    pub fn allow_tool(&self, server: &str, tool: &str, definition: &str) -> Result<(), String> {
        let pinned = Pinned {
            sha256: definition.to_string(),
            at: Utc::now(),
        };
        self.update(|project| {
            project
                .tools
                .entry(server.to_string())
                .or_default()
                .insert(tool.to_string(), pinned);
        })
    }

    /// The file's content now: re-read only when its stamp changed.
    fn current(&self) -> Arc<Disk> {
        self.checked_within(Duration::ZERO)
    }

    /// The file's content as of a check at most `max_age` ago (zero: now). A write of this
    /// store is seen at once, whatever `max_age`.
    fn checked_within(&self, max_age: Duration) -> Arc<Disk> {
        let mut cached = self.cached.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(read) = cached.as_ref()
            && !max_age.is_zero()
            && read.checked.elapsed() <= max_age
        {
            return read.disk.clone();
        }
        let now = Stamp::of(&self.path);
        if let Some(read) = cached.as_mut()
            && read.stamp == now
        {
            read.checked = Instant::now();
            return read.disk.clone();
        }
        let disk = match read_disk(&self.path) {
            Ok(disk) => Arc::new(disk),
            Err(e) => {
                tracing::warn!("{e}; no project server counts as approved");
                Arc::new(Disk::default())
            }
        };
        *cached = Some(Read {
            stamp: now,
            checked: Instant::now(),
            disk: disk.clone(),
        });
        disk
    }

    /// Read-merge-write under the file's lock: only this project's part changes.
    fn update<T>(&self, change: impl FnOnce(&mut Project) -> T) -> Result<T, String> {
        let path = &self.path;
        let io = |e: std::io::Error| format!("cannot write {}: {e}", path.display());
        files::ensure_parent(path, true).map_err(io)?;
        let _lock = files::lock(&files::sibling(path, ".lock")).map_err(io)?;
        let mut disk = read_disk(path)?;
        disk.version = FORMAT_VERSION;
        let project = disk.projects.entry(self.project.clone()).or_default();
        let result = change(project);
        if project.servers.is_empty() && project.tools.is_empty() {
            disk.projects.remove(&self.project);
        }
        let mut json = serde_json::to_vec_pretty(&disk).map_err(|e| format!("{path:?}: {e}"))?;
        json.push(b'\n');
        files::write_atomic(path, &json, true).map_err(io)?;
        // The next look-up reads what was just written, whatever window it allows.
        *self.cached.lock().unwrap_or_else(|e| e.into_inner()) = None;
        Ok(result)
    }
}

/// One version of the trust file, read for one project.
pub struct TrustView<'a> {
    disk: Arc<Disk>,
    project: &'a str,
}

impl TrustView<'_> {
    /// The definition hash a tool was allowed `always` for, if it was.
    pub fn tool_permission(&self, server: &str, tool: &str) -> Option<&str> {
        let project = self.disk.projects.get(self.project)?;
        Some(project.tools.get(server)?.get(tool)?.sha256.as_str())
    }
}

/// The whole file; missing is empty. A file that cannot be read or parsed is an error naming it:
/// it is never discarded or overwritten.
fn read_disk(path: &Path) -> Result<Disk, String> {
    let disk = files::read_versioned(path, FORMAT_VERSION, "trust file", "fix or remove it")?;
    Ok(disk.unwrap_or(Disk {
        version: FORMAT_VERSION,
        ..Disk::default()
    }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    // TRUST-4: any change of any field is a new fingerprint; key order is not a change.
    #[test]
    fn trust_4_fingerprint_covers_every_field_and_ignores_key_order() {
        let base = json!({"command": "node", "args": ["s.js"], "env": {"A": "1"}});
        let same = json!({"env": {"A": "1"}, "args": ["s.js"], "command": "node"});
        assert_eq!(entry_fingerprint(&base), entry_fingerprint(&same));
        for changed in [
            json!({"command": "node", "args": ["s.js"], "env": {"A": "2"}}),
            json!({"command": "node", "args": ["s.js", "x"], "env": {"A": "1"}}),
            json!({"command": "sh", "args": ["s.js"], "env": {"A": "1"}}),
            json!({"command": "node", "args": ["s.js"], "env": {"A": "1"}, "x": null}),
            json!({"command": "node", "args": ["s.js"], "env": {"A": "1"}, "disabledTools": []}),
        ] {
            assert_ne!(
                entry_fingerprint(&base),
                entry_fingerprint(&changed),
                "{changed}"
            );
        }
        // Length-prefixed: moving text between two strings is a change.
        assert_ne!(
            entry_fingerprint(&json!({"args": ["ab", "c"]})),
            entry_fingerprint(&json!({"args": ["a", "bc"]}))
        );
    }

    #[test]
    fn trust_3_variables_are_named_once_in_order() {
        let mut out = Vec::new();
        collect_variables(
            &json!({"url": "http://h/?k=${TOKEN}", "headers": {"x": "${B:-d} ${TOKEN}"},
                    "args": ["${}", "$NOT", "${C"]}),
            &mut out,
        );
        assert_eq!(out, ["TOKEN", "B"]);
    }

    // TRUST-2: approvals per project and name, 0600 in a 0700 directory; revoke forgets.
    #[test]
    fn trust_2_approvals_are_per_project_and_private() {
        let home = tempfile::tempdir().unwrap();
        let a = TrustStore::new(home.path(), Path::new("/p/a"));
        let b = TrustStore::new(home.path(), Path::new("/p/b"));
        assert_eq!(a.approved_fingerprint("db"), None);
        a.approve("db", "f1").unwrap();
        a.allow_tool("db", "drop", "d1").unwrap();
        assert_eq!(a.approved_fingerprint("db").as_deref(), Some("f1"));
        assert_eq!(b.approved_fingerprint("db"), None);
        assert_eq!(a.tool_permission("db", "drop").as_deref(), Some("d1"));
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = |p: &Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
            assert_eq!(mode(a.path()), 0o600);
            assert_eq!(mode(a.path().parent().unwrap()), 0o700);
        }
        assert!(a.revoke("db").unwrap());
        assert_eq!(a.approved_fingerprint("db"), None);
        assert_eq!(a.tool_permission("db", "drop"), None);
        assert!(!a.revoke("db").unwrap());
    }

    #[test]
    fn a_broken_trust_file_approves_nothing_and_is_never_overwritten() {
        let home = tempfile::tempdir().unwrap();
        let store = TrustStore::new(home.path(), Path::new("/p"));
        std::fs::create_dir_all(store.path().parent().unwrap()).unwrap();
        std::fs::write(store.path(), "{not json").unwrap();
        assert_eq!(store.approved_fingerprint("db"), None);
        let err = store.approve("db", "f").unwrap_err();
        assert!(err.contains("trusted-servers.json"), "{err}");
        assert_eq!(std::fs::read_to_string(store.path()).unwrap(), "{not json");
    }

    // TRUST-6: a remembered permission read within a window: this store's own write is seen at
    // once; another process's (another store of the same file) once the window has passed.
    #[test]
    fn trust_6_a_windowed_view_sees_its_own_writes_at_once() {
        let home = tempfile::tempdir().unwrap();
        let ours = TrustStore::new(home.path(), Path::new("/p"));
        let other = TrustStore::new(home.path(), Path::new("/p"));
        let hour = Duration::from_secs(3600);
        assert_eq!(ours.view_within(hour).tool_permission("db", "q"), None);
        ours.allow_tool("db", "q", "d1").unwrap();
        assert_eq!(
            ours.view_within(hour).tool_permission("db", "q"),
            Some("d1")
        );
        other.allow_tool("db", "q", "d2").unwrap();
        assert_eq!(
            ours.view_within(hour).tool_permission("db", "q"),
            Some("d1")
        );
        assert_eq!(
            ours.view_within(Duration::ZERO).tool_permission("db", "q"),
            Some("d2")
        );
        assert_eq!(
            ours.view_within(hour).tool_permission("db", "q"),
            Some("d2")
        );
    }
}
