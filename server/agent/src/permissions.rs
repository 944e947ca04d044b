//! Permission rules on full tool names (`mcp__<server>__<tool>`, TOOL-1).
//!
//! Rules come from [`crate::AgentOptions::permissions`], `<workdir>/.wave/settings.json` and
//! `<home>/.wave/settings.json` (`{"permissions": {"allow": [...], "deny": [...]}}`); all three
//! are merged. The files are checked at the start of every turn (the turn's tool calls use those
//! rules) and re-read when one changed; a tool call made outside a turn uses rules checked at
//! most [`RECHECK_AFTER`] ago ([`PermissionSource`]). A pattern is a full name where `*` stands for any run of
//! characters. A tool is denied when a `deny` pattern matches it (deny always wins), or when the
//! `allow` list names MCP tools (has a pattern starting with `mcp__`) and none of those matches
//! it. Allow patterns for other tools (built-in tools of a host agent) do not restrict MCP tools.
//! A denied tool is neither declared nor callable (flat or inside `Exec`).

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant, SystemTime};

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::tool_search::{self, SearchSettings};

/// `allow` / `deny` patterns on full tool names.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct PermissionRules {
    #[serde(default)]
    pub allow: Vec<String>,
    #[serde(default)]
    pub deny: Vec<String>,
}

impl PermissionRules {
    /// Adds the other rules to these.
    pub fn extend(&mut self, other: PermissionRules) {
        self.allow.extend(other.allow);
        self.deny.extend(other.deny);
    }

    /// `None` when the tool may be called, else why not (one lowercase line).
    pub fn denial(&self, full_name: &str) -> Option<String> {
        if let Some(rule) = self.deny.iter().find(|p| glob_match(p, full_name)) {
            return Some(format!("it matches the deny rule \"{rule}\""));
        }
        let mut mcp_allow = self
            .allow
            .iter()
            .filter(|p| p.starts_with("mcp__"))
            .peekable();
        if mcp_allow.peek().is_none() || mcp_allow.any(|p| glob_match(p, full_name)) {
            return None;
        }
        Some("no allow rule matches it".to_string())
    }

    pub fn is_allowed(&self, full_name: &str) -> bool {
        self.denial(full_name).is_none()
    }

    /// `None` when the rules leave some name of `server` usable, else why not: its prompts and
    /// resources are then neither offered nor usable. A server is denied when a `deny` pattern
    /// covers all its names (`mcp__<server>__*`, `mcp__*`, `*`), or when the `allow` list names
    /// MCP tools and none of those patterns can match a name of this server.
    pub fn server_denial(&self, server: &str) -> Option<String> {
        let prefix = format!("mcp__{}__", wave_mcp_manager::names::sanitize(server));
        let every_name = format!("{prefix}*");
        if let Some(rule) = self.deny.iter().find(|p| glob_match(p, &every_name)) {
            return Some(format!("the deny rule \"{rule}\" covers it"));
        }
        let mut mcp_allow = self
            .allow
            .iter()
            .filter(|p| p.starts_with("mcp__"))
            .peekable();
        let reachable = |p: &String| glob_match(p, &every_name) || p.starts_with(&prefix);
        if mcp_allow.peek().is_none() || mcp_allow.any(reachable) {
            return None;
        }
        Some("no allow rule names it".to_string())
    }
}

/// The rules of the project and user settings files of `workdir` and `home`, read now: for
/// hosts that list prompts and resources without holding the agent.
pub fn settings_rules(workdir: &Path, home: &Path) -> PermissionRules {
    PermissionSource::new(PermissionRules::default(), workdir, home)
        .load()
        .0
}

/// Whole-string match where `*` matches any run of characters (including none).
pub fn glob_match(pattern: &str, name: &str) -> bool {
    let parts: Vec<&str> = pattern.split('*').collect();
    let [first, middle @ .., last] = parts.as_slice() else {
        return pattern == name; // split always yields at least one part
    };
    if parts.len() == 1 {
        return pattern == name;
    }
    let Some(mut rest) = name.strip_prefix(first) else {
        return false;
    };
    for part in middle {
        let Some(at) = rest.find(part) else {
            return false;
        };
        rest = &rest[at + part.len()..];
    }
    rest.len() >= last.len() && rest.ends_with(last)
}

/// How old the last check of the settings files may be for a tool call outside a turn. Two
/// `stat`s cost a few microseconds, a noticeable share of a local tool call's round trip.
pub(crate) const RECHECK_AFTER: Duration = Duration::from_secs(1);

/// The options' rules plus those of the project and user settings files, re-read only when a
/// file changed (its length, modification time or identity): a check costs two `stat`s instead
/// of two reads and parses. The same read gives the files' tool search settings (BUD-3).
pub(crate) struct PermissionSource {
    options: PermissionRules,
    files: [PathBuf; 2],
    cached: Mutex<Option<Checked>>,
}

struct Checked {
    at: Instant,
    stamps: Stamps,
    rules: Arc<PermissionRules>,
    /// `toolSearch` / `contextWindow` of the files (the environment is applied on use).
    search: SearchSettings,
}

/// What identifies a version of each settings file (`None`: the file does not exist).
type Stamps = [Option<Stamp>; 2];

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Stamp {
    len: u64,
    modified: Option<SystemTime>,
    inode: u64,
}

impl PermissionSource {
    pub(crate) fn new(options: PermissionRules, workdir: &Path, home: &Path) -> PermissionSource {
        PermissionSource {
            options,
            files: [
                workdir.join(".wave").join("settings.json"),
                home.join(".wave").join("settings.json"),
            ],
            cached: Mutex::new(None),
        }
    }

    /// The rules and the tool search settings now in force (the files checked now; the
    /// environment's `WAVE_TOOL_SEARCH` wins over the files).
    pub(crate) fn current_with_search(&self) -> (Arc<PermissionRules>, SearchSettings) {
        self.check(Duration::ZERO)
    }

    /// The rules as of a check at most `max_age` ago.
    pub(crate) fn checked_within(&self, max_age: Duration) -> Arc<PermissionRules> {
        self.check(max_age).0
    }

    fn check(&self, max_age: Duration) -> (Arc<PermissionRules>, SearchSettings) {
        let mut cached = self.cached.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(checked) = cached.as_ref()
            && !max_age.is_zero()
            && checked.at.elapsed() <= max_age
        {
            return (checked.rules.clone(), tool_search::with_env(checked.search));
        }
        let stamps = self.files.each_ref().map(|path| stamp(path));
        let (rules, search) = match cached.take() {
            Some(checked) if checked.stamps == stamps => (checked.rules, checked.search),
            _ => {
                let (rules, search) = self.load();
                (Arc::new(rules), search)
            }
        };
        *cached = Some(Checked {
            at: Instant::now(),
            stamps,
            rules: rules.clone(),
            search,
        });
        (rules, tool_search::with_env(search))
    }

    /// Reads every source once: the merged rules, and the files' tool search settings (the
    /// user's file first, the project's wins).
    fn load(&self) -> (PermissionRules, SearchSettings) {
        let mut rules = self.options.clone();
        let values = self.files.each_ref().map(|path| read_json(path));
        for (path, value) in self.files.iter().zip(&values) {
            if let Some(file_rules) = value.as_ref().and_then(|v| permissions_of(v, path)) {
                rules.extend(file_rules);
            }
        }
        let mut search = SearchSettings::default();
        for (path, value) in self.files.iter().zip(&values).rev() {
            if let Some(value) = value {
                tool_search::apply_file(&mut search, value, path);
            }
        }
        (rules, search)
    }
}

fn stamp(path: &Path) -> Option<Stamp> {
    let metadata = std::fs::metadata(path).ok()?;
    #[cfg(unix)]
    let inode = std::os::unix::fs::MetadataExt::ino(&metadata);
    #[cfg(not(unix))]
    let inode = 0;
    Some(Stamp {
        len: metadata.len(),
        modified: metadata.modified().ok(),
        inode,
    })
}

/// One settings file as JSON; a missing file is silent, one that is not JSON a warning.
fn read_json(path: &Path) -> Option<Value> {
    let text = std::fs::read_to_string(path).ok()?;
    match serde_json::from_str(&text) {
        Ok(value) => Some(value),
        Err(e) => {
            tracing::warn!("ignoring settings file {}: {e}", path.display());
            None
        }
    }
}

/// The `permissions` of one settings file; a bad value is a warning.
fn permissions_of(value: &Value, path: &Path) -> Option<PermissionRules> {
    let permissions = value.get("permissions")?.clone();
    match serde_json::from_value(permissions) {
        Ok(rules) => Some(rules),
        Err(e) => {
            tracing::warn!(
                "ignoring the permissions of settings file {}: {e}",
                path.display()
            );
            None
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn globs_match_whole_names() {
        assert!(glob_match("mcp__github__*", "mcp__github__search"));
        assert!(!glob_match("mcp__github__*", "mcp__gitlab__search"));
        assert!(glob_match("*", "anything"));
        assert!(glob_match("mcp__*__echo", "mcp__a__echo"));
        assert!(!glob_match("mcp__*__echo", "mcp__a__echo2"));
        assert!(glob_match("mcp__a__echo", "mcp__a__echo"));
        assert!(!glob_match("mcp__a__echo", "mcp__a__echo_x"));
        assert!(glob_match("a*a", "aa"));
        assert!(!glob_match("a*a", "a"));
    }

    #[test]
    fn deny_wins_and_mcp_allow_lists_are_exhaustive() {
        let rules = PermissionRules {
            allow: vec!["mcp__a__*".into(), "Bash(npm test)".into()],
            deny: vec!["mcp__a__fail".into()],
        };
        assert!(rules.is_allowed("mcp__a__echo"));
        assert!(!rules.is_allowed("mcp__a__fail"));
        assert!(!rules.is_allowed("mcp__b__echo"));
        let only_other = PermissionRules {
            allow: vec!["Bash(npm test)".into()],
            deny: vec![],
        };
        assert!(only_other.is_allowed("mcp__b__echo"));
    }

    // TOOL-1: the settings files are checked at every use; a change (even one of the same
    // length) is seen at once, and an unchanged file is not parsed again.
    #[test]
    fn settings_changes_are_seen_and_unchanged_files_are_not_reread() {
        let root = tempfile::tempdir().unwrap();
        let (workdir, home) = (root.path().join("project"), root.path().join("home"));
        let options = PermissionRules {
            allow: vec![],
            deny: vec!["mcp__x__*".into()],
        };
        let source = PermissionSource::new(options, &workdir, &home);
        let current = || source.current_with_search().0;
        let first = current();
        assert_eq!(first.deny, ["mcp__x__*"]);
        assert!(Arc::ptr_eq(&first, &current()), "nothing changed");

        let settings = workdir.join(".wave").join("settings.json");
        std::fs::create_dir_all(settings.parent().unwrap()).unwrap();
        std::fs::write(&settings, r#"{"permissions": {"deny": ["mcp__a__*"]}}"#).unwrap();
        assert_eq!(current().deny, ["mcp__x__*", "mcp__a__*"]);

        // Same length, written anew through a rename (as editors save): a new inode.
        let next = workdir.join(".wave").join("next.json");
        std::fs::write(&next, r#"{"permissions": {"deny": ["mcp__b__*"]}}"#).unwrap();
        std::fs::rename(&next, &settings).unwrap();
        assert_eq!(current().deny, ["mcp__x__*", "mcp__b__*"]);

        std::fs::remove_file(&settings).unwrap();
        assert_eq!(current().deny, ["mcp__x__*"]);

        // Within the window a recent check is reused; `current()` always looks again.
        std::fs::write(&settings, r#"{"permissions": {"deny": ["mcp__c__*"]}}"#).unwrap();
        let hour = Duration::from_secs(3600);
        assert_eq!(source.checked_within(hour).deny, ["mcp__x__*"]);
        assert_eq!(current().deny, ["mcp__x__*", "mcp__c__*"]);
        assert_eq!(source.checked_within(hour).deny, ["mcp__x__*", "mcp__c__*"]);
    }

    // BUD-3: the same read gives `toolSearch` and `contextWindow`: the project's file wins,
    // what it does not set comes from the user's, a bad value is ignored.
    #[test]
    fn bud_3_tool_search_settings_come_from_both_files_the_projects_winning() {
        let root = tempfile::tempdir().unwrap();
        let (workdir, home) = (root.path().join("project"), root.path().join("home"));
        for (dir, text) in [
            (&workdir, r#"{"toolSearch": "on", "contextWindow": "big"}"#),
            (&home, r#"{"toolSearch": "off", "contextWindow": 1000}"#),
        ] {
            std::fs::create_dir_all(dir.join(".wave")).unwrap();
            std::fs::write(dir.join(".wave").join("settings.json"), text).unwrap();
        }
        let source = PermissionSource::new(PermissionRules::default(), &workdir, &home);
        let (_, search) = source.current_with_search();
        let expected = SearchSettings {
            mode: tool_search::ToolSearchMode::On,
            context_window: 1000,
        };
        if std::env::var_os(tool_search::TOOL_SEARCH_VAR).is_none() {
            assert_eq!(search, expected);
        } else {
            assert_eq!(search.context_window, expected.context_window);
        }
    }

    // PRM-1, PRM-3: the prompts and resources of a server the rules deny are not offered.
    #[test]
    fn prm_1_server_denial_covers_whole_servers_only() {
        let rules = |allow: &[&str], deny: &[&str]| PermissionRules {
            allow: allow.iter().map(|p| p.to_string()).collect(),
            deny: deny.iter().map(|p| p.to_string()).collect(),
        };
        assert!(rules(&[], &[]).server_denial("s").is_none());
        assert!(rules(&[], &["mcp__s__*"]).server_denial("s").is_some());
        assert!(rules(&[], &["mcp__*"]).server_denial("s").is_some());
        assert!(rules(&[], &["mcp__s__*"]).server_denial("other").is_none());
        // One denied tool does not deny the server.
        assert!(rules(&[], &["mcp__s__echo"]).server_denial("s").is_none());
        // An allow list naming only other servers' tools denies this one.
        assert!(rules(&["mcp__a__*"], &[]).server_denial("s").is_some());
        assert!(rules(&["mcp__s__echo"], &[]).server_denial("s").is_none());
        assert!(rules(&["Read"], &[]).server_denial("s").is_none());
    }
}
