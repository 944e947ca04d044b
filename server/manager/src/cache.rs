//! The tool snapshot cache (`~/.wave/mcp-tools-cache.json`): last known tool lists of servers, keyed by name + config fingerprint (CACHE-1..8).
//! Each entry also keeps the server's prompts, resources and resource templates (PRM-1); files
//! written before those existed read as entries without them.

use std::collections::BTreeMap;
use std::fs;
use std::io;
use std::path::{Path, PathBuf};

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use sha2::{Digest, Sha256};
use tracing::debug;

use crate::files;
pub use crate::manager::{PromptArgumentSummary, ResourceSummary};

/// Version of the on-disk format; a file with another version is treated as empty.
const FORMAT_VERSION: u64 = 1;

/// Domain tag mixed into every fingerprint, so a future encoding change yields new fingerprints.
const FINGERPRINT_TAG: &[u8] = b"wave-mcp-tools-cache-fingerprint-v1";

/// What identifies a configured server for the cache: the config as written (before ${VAR} expansion).
#[derive(Debug, Clone, Copy)]
pub struct CacheKeyInput<'a> {
    pub name: &'a str,
    pub workdir: &'a Path,
    /// "stdio" | "http" | "sse" | whatever was written.
    pub transport: &'a str,
    pub command: Option<&'a str>,
    pub args: &'a [String],
    pub url: Option<&'a str>,
    /// Values as written.
    pub env: &'a BTreeMap<String, String>,
    /// Values as written.
    pub headers: &'a BTreeMap<String, String>,
}

/// SHA-256 hex over a length-prefixed encoding of workdir, transport, command, args, url, env
/// and headers (CACHE-3). The name is not part of the fingerprint (it is part of the key).
pub fn fingerprint(input: &CacheKeyInput) -> String {
    let mut h = Sha256::new();
    put_bytes(&mut h, FINGERPRINT_TAG);
    put_bytes(&mut h, input.workdir.as_os_str().as_encoded_bytes());
    put_bytes(&mut h, input.transport.as_bytes());
    put_opt(&mut h, input.command);
    put_len(&mut h, input.args.len());
    for arg in input.args {
        put_bytes(&mut h, arg.as_bytes());
    }
    put_opt(&mut h, input.url);
    put_map(&mut h, input.env);
    put_map(&mut h, input.headers);
    hex(&h.finalize())
}

fn put_len(h: &mut Sha256, len: usize) {
    h.update((len as u64).to_le_bytes());
}

fn put_bytes(h: &mut Sha256, bytes: &[u8]) {
    put_len(h, bytes.len());
    h.update(bytes);
}

fn put_opt(h: &mut Sha256, value: Option<&str>) {
    match value {
        None => h.update([0u8]),
        Some(v) => {
            h.update([1u8]);
            put_bytes(h, v.as_bytes());
        }
    }
}

fn put_map(h: &mut Sha256, map: &BTreeMap<String, String>) {
    put_len(h, map.len());
    for (k, v) in map {
        put_bytes(h, k.as_bytes());
        put_bytes(h, v.as_bytes());
    }
}

fn hex(bytes: &[u8]) -> String {
    use std::fmt::Write as _;
    let mut out = String::with_capacity(bytes.len() * 2);
    for b in bytes {
        let _ = write!(out, "{b:02x}");
    }
    out
}

/// One tool of a snapshot.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CachedTool {
    pub name: String,
    pub description: Option<String>,
    /// The server's text for the tool had hidden characters (TRUST-7); absent when it had none.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub hidden_text: bool,
    /// The tool's `title`, annotations and icons (SRV-4); absent in files written before.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub annotations: Option<rmcp::model::ToolAnnotations>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub icons: Vec<crate::icons::Icon>,
}

/// One prompt of a snapshot.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CachedPrompt {
    pub name: String,
    #[serde(default)]
    pub description: Option<String>,
    #[serde(default)]
    pub arguments: Vec<PromptArgumentSummary>,
}

/// One server's last snapshot.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CacheEntry {
    pub server: String,
    pub workdir: PathBuf,
    pub fingerprint: String,
    pub tools: Vec<CachedTool>,
    pub last_connected_at: DateTime<Utc>,
    /// Absent in files written before prompts were cached.
    #[serde(default)]
    pub prompts: Vec<CachedPrompt>,
    #[serde(default)]
    pub resources: Vec<ResourceSummary>,
    #[serde(default)]
    pub resource_templates: Vec<ResourceSummary>,
    /// The MCP revision negotiated at that connection, e.g. `2026-07-28` (SPEC-1): the next
    /// dial of the entry as written opens its session the way that revision does. Absent in
    /// older files.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub protocol_version: Option<String>,
}

impl CacheEntry {
    /// The key of this entry in the cache file.
    pub fn key(&self) -> String {
        cache_key(&self.server, &self.fingerprint)
    }
}

/// The key of an entry: `{server}@{fingerprint}`.
pub fn cache_key(server: &str, fingerprint: &str) -> String {
    format!("{server}@{fingerprint}")
}

/// The whole cache: key (`{server}@{fingerprint}`) -> entry.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct CacheFile {
    pub entries: BTreeMap<String, CacheEntry>,
}

impl CacheFile {
    /// The snapshot of `server` with exactly this config fingerprint, if any (CACHE-3).
    /// Adds or replaces one entry in memory (the file is written by [`record`]).
    pub fn insert(&mut self, entry: CacheEntry) {
        self.entries.insert(entry.key(), entry);
    }

    pub fn lookup(&self, server: &str, fingerprint: &str) -> Option<&CacheEntry> {
        self.entries.get(&cache_key(server, fingerprint))
    }

    /// Drops entries of `workdir` whose (server, fingerprint) is not configured (CACHE-4, CACHE-8).
    fn prune(&mut self, workdir: &Path, configured: &[(String, String)]) {
        self.entries.retain(|_, e| {
            e.workdir != workdir
                || configured
                    .iter()
                    .any(|(s, f)| *s == e.server && *f == e.fingerprint)
        });
    }
}

/// The on-disk shape.
#[derive(Serialize)]
struct Disk<'a> {
    version: u64,
    entries: &'a BTreeMap<String, CacheEntry>,
}

/// The file `~/.wave/mcp-tools-cache.json`.
pub fn cache_path(home: &Path) -> PathBuf {
    home.join(".wave").join("mcp-tools-cache.json")
}

/// Reads the whole cache. A missing, unreadable, corrupt or wrong-shaped file is empty
/// (CACHE-6); individually malformed entries are skipped, the rest kept. Never errors.
pub fn read(path: &Path) -> CacheFile {
    let bytes = match fs::read(path) {
        Ok(b) => b,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return CacheFile::default(),
        Err(e) => {
            debug!(path = %path.display(), error = %e, "mcp tools cache unreadable, treated as empty");
            return CacheFile::default();
        }
    };
    parse(path, &bytes)
}

fn parse(path: &Path, bytes: &[u8]) -> CacheFile {
    let value: Value = match serde_json::from_slice(bytes) {
        Ok(v) => v,
        Err(e) => {
            debug!(path = %path.display(), error = %e, "mcp tools cache corrupt, treated as empty");
            return CacheFile::default();
        }
    };
    let Value::Object(mut root) = value else {
        debug!(path = %path.display(), "mcp tools cache is not an object, treated as empty");
        return CacheFile::default();
    };
    let version = root.get("version").and_then(Value::as_u64);
    if version != Some(FORMAT_VERSION) {
        debug!(path = %path.display(), ?version, "mcp tools cache has an unknown version, treated as empty");
        return CacheFile::default();
    }
    let Some(Value::Object(raw)) = root.remove("entries") else {
        debug!(path = %path.display(), "mcp tools cache has no entries object, treated as empty");
        return CacheFile::default();
    };
    let mut file = CacheFile::default();
    for (key, raw_entry) in raw {
        let entry: CacheEntry = match serde_json::from_value(raw_entry) {
            Ok(e) => e,
            Err(e) => {
                debug!(path = %path.display(), key, error = %e, "malformed mcp tools cache entry skipped");
                continue;
            }
        };
        if entry.key() != key {
            debug!(path = %path.display(), key, "mcp tools cache entry does not match its key, skipped");
            continue;
        }
        file.entries.insert(key, entry);
    }
    file
}

/// Records one server's fresh snapshot (CACHE-5: overwrite, empty list included) and prunes
/// entries of `workdir` only whose (server, fingerprint) is not in `configured` (CACHE-4,
/// CACHE-8). `configured` lists the (server, fingerprint) pairs of this workdir; the new entry
/// is kept even if absent from it. Read-merge-write under an exclusive lock, written atomically.
pub fn record(
    path: &Path,
    workdir: &Path,
    configured: &[(String, String)],
    entry: CacheEntry,
) -> io::Result<()> {
    if entry.workdir != workdir {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!(
                "cache entry workdir {} does not match {}",
                entry.workdir.display(),
                workdir.display()
            ),
        ));
    }
    files::ensure_parent(path, false)?;
    let _lock = files::lock(&files::sibling(path, ".lock"))?;
    let mut file = read(path);
    file.prune(workdir, configured);
    file.entries.insert(entry.key(), entry);
    write_atomic(path, &file)
}

/// Prunes only (no new entry): used when the config changes without a connect. Same locking and
/// atomic-write rules as [`record`]; nothing is written if nothing was pruned.
pub fn prune(path: &Path, workdir: &Path, configured: &[(String, String)]) -> io::Result<()> {
    files::ensure_parent(path, false)?;
    let _lock = files::lock(&files::sibling(path, ".lock"))?;
    let mut file = read(path);
    let before = file.entries.len();
    file.prune(workdir, configured);
    if file.entries.len() == before {
        return Ok(());
    }
    write_atomic(path, &file)
}

/// Writes the cache atomically (temp file + rename).
fn write_atomic(path: &Path, file: &CacheFile) -> io::Result<()> {
    let mut json = serde_json::to_vec_pretty(&Disk {
        version: FORMAT_VERSION,
        entries: &file.entries,
    })
    .map_err(|e| io::Error::new(io::ErrorKind::InvalidData, e))?;
    json.push(b'\n');
    files::write_atomic(path, &json, false)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::{Arc, Barrier};

    struct Cfg {
        workdir: PathBuf,
        transport: String,
        command: Option<String>,
        args: Vec<String>,
        url: Option<String>,
        env: BTreeMap<String, String>,
        headers: BTreeMap<String, String>,
    }

    fn base() -> Cfg {
        Cfg {
            workdir: PathBuf::from("/proj/a"),
            transport: "stdio".into(),
            command: Some("npx".into()),
            args: vec!["-y".into(), "server".into()],
            url: None,
            env: BTreeMap::from([("TOKEN".into(), "${TOKEN}".into())]),
            headers: BTreeMap::new(),
        }
    }

    fn fp_named(name: &str, c: &Cfg) -> String {
        fingerprint(&CacheKeyInput {
            name,
            workdir: &c.workdir,
            transport: &c.transport,
            command: c.command.as_deref(),
            args: &c.args,
            url: c.url.as_deref(),
            env: &c.env,
            headers: &c.headers,
        })
    }

    fn fp(c: &Cfg) -> String {
        fp_named("srv", c)
    }

    fn entry(server: &str, workdir: &Path, fingerprint: &str, tools: &[&str]) -> CacheEntry {
        CacheEntry {
            server: server.into(),
            workdir: workdir.into(),
            fingerprint: fingerprint.into(),
            tools: tools
                .iter()
                .map(|t| CachedTool {
                    name: (*t).into(),
                    description: Some(format!("does {t}")),
                    ..CachedTool::default()
                })
                .collect(),
            last_connected_at: Utc::now(),
            prompts: Vec::new(),
            resources: Vec::new(),
            resource_templates: Vec::new(),
            protocol_version: None,
        }
    }

    fn conf(pairs: &[(&str, &str)]) -> Vec<(String, String)> {
        pairs
            .iter()
            .map(|(s, f)| ((*s).to_string(), (*f).to_string()))
            .collect()
    }

    fn tool_names(e: &CacheEntry) -> Vec<&str> {
        e.tools.iter().map(|t| t.name.as_str()).collect()
    }

    #[test]
    fn cache3_fingerprint_stable_when_nothing_changes() {
        let a = fp(&base());
        assert_eq!(a, fp(&base()));
        assert_eq!(a.len(), 64);
        assert!(a.bytes().all(|b| b.is_ascii_hexdigit()));
        // the name is part of the key, not of the fingerprint
        assert_eq!(a, fp_named("other", &base()));
    }

    #[test]
    fn cache3_fingerprint_changes_with_each_field() {
        let orig = fp(&base());
        type Change = fn(&mut Cfg);
        let changes: [(&str, Change); 12] = [
            ("workdir", |c: &mut Cfg| {
                c.workdir = PathBuf::from("/proj/b")
            }),
            ("transport", |c: &mut Cfg| c.transport = "http".into()),
            ("command", |c: &mut Cfg| c.command = Some("node".into())),
            ("command none", |c: &mut Cfg| c.command = None),
            ("command empty", |c: &mut Cfg| {
                c.command = Some(String::new())
            }),
            ("args", |c: &mut Cfg| c.args.push("--x".into())),
            ("args order", |c: &mut Cfg| c.args.reverse()),
            ("url", |c: &mut Cfg| c.url = Some("https://x".into())),
            ("env value", |c: &mut Cfg| {
                c.env.insert("TOKEN".into(), "literal".into());
            }),
            ("env key", |c: &mut Cfg| {
                c.env.insert("OTHER".into(), "1".into());
            }),
            ("env removed", |c: &mut Cfg| c.env.clear()),
            ("headers", |c: &mut Cfg| {
                c.headers.insert("Authorization".into(), "Bearer x".into());
            }),
        ];
        for (what, change) in changes {
            let mut c = base();
            change(&mut c);
            assert_ne!(fp(&c), orig, "fingerprint unchanged after changing {what}");
        }
    }

    #[test]
    fn cache3_fingerprint_encoding_is_unambiguous() {
        let mut a = base();
        a.args = vec!["a b".into()];
        let mut b = base();
        b.args = vec!["a".into(), "b".into()];
        let mut c = base();
        c.args = vec!["ab".into()];
        assert_ne!(fp(&a), fp(&b));
        assert_ne!(fp(&b), fp(&c));

        let mut e1 = base();
        e1.env = BTreeMap::from([("a".into(), "bc".into())]);
        let mut e2 = base();
        e2.env = BTreeMap::from([("ab".into(), "c".into())]);
        assert_ne!(fp(&e1), fp(&e2));

        // same pair in env vs headers
        let mut h1 = base();
        h1.env = BTreeMap::from([("K".into(), "V".into())]);
        h1.headers = BTreeMap::new();
        let mut h2 = base();
        h2.env = BTreeMap::new();
        h2.headers = BTreeMap::from([("K".into(), "V".into())]);
        assert_ne!(fp(&h1), fp(&h2));

        // url vs command with the same text
        let mut u1 = base();
        u1.command = Some("x".into());
        u1.url = None;
        let mut u2 = base();
        u2.command = None;
        u2.url = Some("x".into());
        assert_ne!(fp(&u1), fp(&u2));
    }

    #[test]
    fn cache8_cache_path_is_under_dot_wave() {
        assert_eq!(
            cache_path(Path::new("/home/u")),
            PathBuf::from("/home/u/.wave/mcp-tools-cache.json")
        );
    }

    #[test]
    fn cache8_record_creates_dir_and_writes_versioned_pretty_json() {
        let home = tempfile::tempdir().unwrap();
        let path = cache_path(home.path());
        let wd = Path::new("/proj/a");
        let e = entry("srv", wd, "f1", &["t1", "t2"]);
        record(&path, wd, &conf(&[("srv", "f1")]), e.clone()).unwrap();

        let text = fs::read_to_string(&path).unwrap();
        assert!(text.contains('\n'), "pretty-printed");
        let v: Value = serde_json::from_str(&text).unwrap();
        assert_eq!(v["version"], 1);
        let stored = &v["entries"]["srv@f1"];
        assert_eq!(stored["server"], "srv");
        assert_eq!(stored["workdir"], "/proj/a");
        assert_eq!(stored["tools"][1]["name"], "t2");
        assert!(stored["lastConnectedAt"].is_string());

        let file = read(&path);
        assert_eq!(file.lookup("srv", "f1"), Some(&e));
        // CACHE-3: another fingerprint is not a hit
        assert_eq!(file.lookup("srv", "f2"), None);

        // no temp files left behind
        let names: Vec<_> = fs::read_dir(path.parent().unwrap())
            .unwrap()
            .map(|d| d.unwrap().file_name().into_string().unwrap())
            .collect();
        assert!(
            names.iter().all(|n| !n.contains(".tmp")),
            "leftover temp files: {names:?}"
        );
    }

    #[test]
    fn cache8_same_name_two_workdirs_two_entries_and_prune_keeps_other_workdir() {
        let home = tempfile::tempdir().unwrap();
        let path = cache_path(home.path());
        let a = Path::new("/proj/a");
        let b = Path::new("/proj/b");
        record(
            &path,
            a,
            &conf(&[("srv", "fa")]),
            entry("srv", a, "fa", &["ta"]),
        )
        .unwrap();
        record(
            &path,
            b,
            &conf(&[("srv", "fb")]),
            entry("srv", b, "fb", &["tb"]),
        )
        .unwrap();
        let file = read(&path);
        assert_eq!(file.entries.len(), 2);
        assert_eq!(tool_names(file.lookup("srv", "fa").unwrap()), ["ta"]);
        assert_eq!(tool_names(file.lookup("srv", "fb").unwrap()), ["tb"]);

        // workdir A removes every server: B's snapshot survives
        prune(&path, a, &[]).unwrap();
        let file = read(&path);
        assert!(file.lookup("srv", "fa").is_none());
        assert_eq!(tool_names(file.lookup("srv", "fb").unwrap()), ["tb"]);

        // a record in A with another server does not touch B either
        record(&path, a, &conf(&[("x", "fx")]), entry("x", a, "fx", &[])).unwrap();
        let file = read(&path);
        assert!(file.lookup("srv", "fb").is_some());
        assert!(file.lookup("x", "fx").is_some());
    }

    #[test]
    fn cache4_removed_server_pruned_at_next_write() {
        let home = tempfile::tempdir().unwrap();
        let path = cache_path(home.path());
        let wd = Path::new("/proj/a");
        let both = conf(&[("one", "f1"), ("two", "f2")]);
        record(&path, wd, &both, entry("one", wd, "f1", &["a"])).unwrap();
        record(&path, wd, &both, entry("two", wd, "f2", &["b"])).unwrap();
        assert_eq!(read(&path).entries.len(), 2);

        // "two" removed from the config; next write (a record of "one") prunes it
        record(
            &path,
            wd,
            &conf(&[("one", "f1")]),
            entry("one", wd, "f1", &["a"]),
        )
        .unwrap();
        let file = read(&path);
        assert!(file.lookup("two", "f2").is_none());
        assert!(file.lookup("one", "f1").is_some());
        assert_eq!(file.entries.len(), 1);
    }

    #[test]
    fn cache4_prune_only_removes_unconfigured_and_stale_fingerprints() {
        let home = tempfile::tempdir().unwrap();
        let path = cache_path(home.path());
        let wd = Path::new("/proj/a");
        let all = conf(&[("one", "f1"), ("two", "f2")]);
        record(&path, wd, &all, entry("one", wd, "f1", &["a"])).unwrap();
        record(&path, wd, &all, entry("two", wd, "f2", &["b"])).unwrap();

        // nothing to prune: the file is not rewritten
        let before = fs::read(&path).unwrap();
        prune(&path, wd, &all).unwrap();
        assert_eq!(fs::read(&path).unwrap(), before);

        // "one" config changed (CACHE-3 stale fingerprint), "two" removed
        prune(&path, wd, &conf(&[("one", "f1-new")])).unwrap();
        assert!(read(&path).entries.is_empty());
    }

    #[test]
    fn cache3_new_fingerprint_replaces_stale_one_on_record() {
        let home = tempfile::tempdir().unwrap();
        let path = cache_path(home.path());
        let wd = Path::new("/proj/a");
        record(
            &path,
            wd,
            &conf(&[("srv", "old")]),
            entry("srv", wd, "old", &["a"]),
        )
        .unwrap();
        record(
            &path,
            wd,
            &conf(&[("srv", "new")]),
            entry("srv", wd, "new", &["b"]),
        )
        .unwrap();
        let file = read(&path);
        assert!(file.lookup("srv", "old").is_none());
        assert_eq!(tool_names(file.lookup("srv", "new").unwrap()), ["b"]);
        assert_eq!(file.entries.len(), 1);
    }

    #[test]
    fn cache5_empty_tool_list_overwrites_old_list() {
        let home = tempfile::tempdir().unwrap();
        let path = cache_path(home.path());
        let wd = Path::new("/proj/a");
        let c = conf(&[("srv", "f")]);
        record(&path, wd, &c, entry("srv", wd, "f", &["a", "b"])).unwrap();
        let later = entry("srv", wd, "f", &[]);
        record(&path, wd, &c, later.clone()).unwrap();
        let file = read(&path);
        let got = file.lookup("srv", "f").unwrap();
        assert!(got.tools.is_empty());
        assert_eq!(got, &later);
    }

    #[test]
    fn record_rejects_entry_of_another_workdir() {
        let home = tempfile::tempdir().unwrap();
        let path = cache_path(home.path());
        let err = record(
            &path,
            Path::new("/proj/a"),
            &[],
            entry("srv", Path::new("/proj/b"), "f", &[]),
        )
        .unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::InvalidInput);
    }

    fn read_text(text: &str) -> CacheFile {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("mcp-tools-cache.json");
        fs::write(&path, text).unwrap();
        read(&path)
    }

    #[test]
    fn cache6_missing_corrupt_or_wrong_shaped_file_is_empty() {
        let dir = tempfile::tempdir().unwrap();
        assert!(read(&dir.path().join("nope.json")).entries.is_empty());

        let cases = [
            "",
            "not json",
            "{\"version\": 1, \"entries\": {\"srv@f\": {\"server\": \"srv\"",
            "[]",
            "null",
            "42",
            "\"text\"",
            "{}",
            "{\"version\": 1}",
            "{\"version\": 1, \"entries\": []}",
            "{\"version\": 1, \"entries\": \"x\"}",
            "{\"version\": \"1\", \"entries\": {}}",
            "{\"version\": 2, \"entries\": {}}",
            "{\"entries\": {}}",
        ];
        for text in cases {
            assert!(read_text(text).entries.is_empty(), "not empty for {text:?}");
        }

        // binary garbage
        let path = dir.path().join("bin.json");
        fs::write(&path, [0xff, 0x00, 0xfe, 0x7b]).unwrap();
        assert!(read(&path).entries.is_empty());
    }

    #[test]
    fn cache6_directory_instead_of_file_is_empty_and_record_errors_without_panic() {
        let home = tempfile::tempdir().unwrap();
        let path = cache_path(home.path());
        fs::create_dir_all(&path).unwrap();
        assert!(read(&path).entries.is_empty());
        let wd = Path::new("/proj/a");
        assert!(record(&path, wd, &[], entry("srv", wd, "f", &[])).is_err());
        assert!(prune(&path, wd, &[]).is_ok());
    }

    #[test]
    fn cache6_malformed_entries_skipped_rest_kept() {
        let good = serde_json::to_value(entry("ok", Path::new("/p"), "f", &["t"])).unwrap();
        let text = serde_json::json!({
            "version": 1,
            "entries": {
                "ok@f": good,
                "wrong-key@f": good,
                "typed@f": {"server": "typed", "workdir": "/p", "fingerprint": "f",
                            "tools": "oops", "lastConnectedAt": "2024-01-01T00:00:00Z"},
                "date@f": {"server": "date", "workdir": "/p", "fingerprint": "f",
                           "tools": [], "lastConnectedAt": "yesterday"},
                "missing@f": {"server": "missing"},
                "null@f": null,
                "tool@f": {"server": "tool", "workdir": "/p", "fingerprint": "f",
                           "tools": [{"description": "no name"}],
                           "lastConnectedAt": "2024-01-01T00:00:00Z"},
            }
        })
        .to_string();
        let file = read_text(&text);
        assert_eq!(file.entries.len(), 1, "{file:?}");
        assert!(file.lookup("ok", "f").is_some());
    }

    #[test]
    fn cache6_unknown_fields_are_tolerated() {
        let text = r#"{"version": 1, "extra": true, "entries": {"s@f": {
            "server": "s", "workdir": "/p", "fingerprint": "f", "future": 1,
            "tools": [{"name": "t", "description": null, "x": 2}],
            "lastConnectedAt": "2024-01-01T00:00:00Z"}}}"#;
        let file = read_text(text);
        let e = file.lookup("s", "f").unwrap();
        assert_eq!(tool_names(e), ["t"]);
        assert_eq!(e.tools[0].description, None);
    }

    // PRM-1, CACHE-6: a file written before prompts were cached reads as entries without
    // them; prompts, resources and templates round-trip through a record.
    #[test]
    fn prm_1_old_files_read_and_prompts_round_trip() {
        let old = r#"{"version": 1, "entries": {"s@f": {
            "server": "s", "workdir": "/p", "fingerprint": "f",
            "tools": [{"name": "t", "description": null}],
            "lastConnectedAt": "2024-01-01T00:00:00Z"}}}"#;
        let e = read_text(old).lookup("s", "f").cloned().unwrap();
        assert_eq!(tool_names(&e), ["t"]);
        assert!(e.prompts.is_empty() && e.resources.is_empty() && e.resource_templates.is_empty());

        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("cache.json");
        let mut fresh = entry("s", Path::new("/p"), "f", &["t"]);
        fresh.prompts = vec![CachedPrompt {
            name: "review".into(),
            description: Some("Review a file".into()),
            arguments: vec![PromptArgumentSummary {
                name: "file".into(),
                description: None,
                required: true,
            }],
        }];
        let resource = ResourceSummary {
            uri: "test://doc/1".into(),
            name: "doc-1".into(),
            mime_type: Some("text/plain".into()),
            description: None,
        };
        fresh.resources = vec![resource.clone()];
        fresh.resource_templates = vec![ResourceSummary {
            uri: "test://doc/{n}".into(),
            ..resource
        }];
        record(&path, Path::new("/p"), &conf(&[("s", "f")]), fresh.clone()).unwrap();
        assert_eq!(read(&path).lookup("s", "f"), Some(&fresh));
    }

    #[test]
    fn cache6_record_into_corrupt_file_replaces_it() {
        let home = tempfile::tempdir().unwrap();
        let path = cache_path(home.path());
        fs::create_dir_all(path.parent().unwrap()).unwrap();
        fs::write(&path, "{\"version\": 1, \"entries\": {tru").unwrap();
        let wd = Path::new("/proj/a");
        record(
            &path,
            wd,
            &conf(&[("srv", "f")]),
            entry("srv", wd, "f", &["t"]),
        )
        .unwrap();
        let file = read(&path);
        assert_eq!(file.entries.len(), 1);
        assert_eq!(tool_names(file.lookup("srv", "f").unwrap()), ["t"]);
    }

    #[test]
    fn cache8_concurrent_threads_all_entries_survive() {
        let home = tempfile::tempdir().unwrap();
        let path = Arc::new(cache_path(home.path()));
        let wd = PathBuf::from("/proj/a");
        let n = 8;
        let configured: Vec<(String, String)> =
            (0..n).map(|i| (format!("s{i}"), format!("f{i}"))).collect();
        let barrier = Arc::new(Barrier::new(n));
        let handles: Vec<_> = (0..n)
            .map(|i| {
                let (path, wd, configured, barrier) = (
                    path.clone(),
                    wd.clone(),
                    configured.clone(),
                    barrier.clone(),
                );
                std::thread::spawn(move || {
                    let e = entry(&format!("s{i}"), &wd, &format!("f{i}"), &["t"]);
                    barrier.wait();
                    record(&path, &wd, &configured, e)
                })
            })
            .collect();
        for h in handles {
            h.join().unwrap().unwrap();
        }
        let file = read(&path);
        for (s, f) in &configured {
            assert!(file.lookup(s, f).is_some(), "{s} lost");
        }
        assert_eq!(file.entries.len(), n);
    }

    const CHILD_PATH: &str = "WAVE_MCP_CACHE_TEST_CHILD_PATH";
    const CHILD_INDEX: &str = "WAVE_MCP_CACHE_TEST_CHILD_INDEX";
    const PROCS: usize = 6;
    const ROUNDS: usize = 15;

    fn proc_configured() -> Vec<(String, String)> {
        (0..PROCS)
            .map(|i| (format!("p{i}"), format!("f{i}")))
            .collect()
    }

    /// Child half of the cross-process test. Ignored, so a run never counts it as a pass on its
    /// own; the parent starts it with `--ignored`, and run without the parent it fails.
    #[test]
    #[ignore = "child half of cache8_concurrent_processes_all_entries_survive, started by it"]
    fn cache8_cross_process_child() {
        let (Ok(path), Ok(index)) = (std::env::var(CHILD_PATH), std::env::var(CHILD_INDEX)) else {
            panic!(
                "cache8_cross_process_child only runs when started by \
                 cache8_concurrent_processes_all_entries_survive"
            );
        };
        let path = PathBuf::from(path);
        let wd = Path::new("/proj/a");
        let configured = proc_configured();
        for _ in 0..ROUNDS {
            let e = entry(&format!("p{index}"), wd, &format!("f{index}"), &["t"]);
            record(&path, wd, &configured, e).unwrap();
        }
    }

    #[cfg(unix)]
    #[test]
    fn cache8_concurrent_processes_all_entries_survive() {
        let home = tempfile::tempdir().unwrap();
        let path = cache_path(home.path());
        let exe = std::env::current_exe().unwrap();
        let module = module_path!();
        let test_name = format!(
            "{}::cache8_cross_process_child",
            module.split_once("::").map_or(module, |(_, rest)| rest)
        );
        let children: Vec<_> = (0..PROCS)
            .map(|i| {
                std::process::Command::new(&exe)
                    .args([
                        "--exact",
                        &test_name,
                        "--ignored",
                        "--test-threads=1",
                        "--quiet",
                    ])
                    .env(CHILD_PATH, &path)
                    .env(CHILD_INDEX, i.to_string())
                    .stdout(std::process::Stdio::null())
                    .spawn()
                    .unwrap()
            })
            .collect();
        for mut c in children {
            assert!(c.wait().unwrap().success());
        }
        let file = read(&path);
        for (s, f) in proc_configured() {
            assert!(file.lookup(&s, &f).is_some(), "{s} lost");
        }
        assert_eq!(file.entries.len(), PROCS);
    }
}
