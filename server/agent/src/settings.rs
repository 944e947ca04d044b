//! The settings files, read in one place: `<workdir>/.wave/settings.json` (the project's) and
//! `<home>/.wave/settings.json` (the user's). They give the permission rules (with the host's
//! options, see [`crate::permissions`]) and tool search's `toolSearch` / `contextWindow`
//! (BUD-3). The files are checked at the start of every turn (the turn's tool calls use those
//! rules) and re-read only when one changed; a tool call made outside a turn uses rules checked
//! at most [`RECHECK_AFTER`] ago.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::Value;

use wave_mcp_manager::Stamp;

use crate::permissions::PermissionRules;
use crate::tool_search::{self, SearchSettings};

/// The rules of the project and user settings files of `workdir` and `home`, read now: for
/// hosts that list prompts and resources without holding the agent.
pub fn settings_rules(workdir: &Path, home: &Path) -> PermissionRules {
    PermissionSource::new(PermissionRules::default(), workdir, home)
        .load()
        .0
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
        let stamps = self.files.each_ref().map(|path| Stamp::of(path));
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
        let values = self.files.each_ref().map(|path| read_json(path));
        let [project_path, user_path] = &self.files;
        let [project, user] = &values;
        // The user's file, then the host's options (they win on `defaultMode`), then the
        // project's, which can only narrow (TRUST-2).
        let mut rules = PermissionRules::default();
        if let Some(user_rules) = user.as_ref().and_then(|v| permissions_of(v, user_path)) {
            rules.extend(user_rules);
        }
        rules.extend(self.options.clone());
        if let Some(project_rules) = project
            .as_ref()
            .and_then(|v| permissions_of(v, project_path))
        {
            rules.extend_from_project(project_rules);
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

    // TOOL-1: the settings files are checked at every use; a change (even one of the same
    // length) is seen at once, and an unchanged file is not parsed again.
    #[test]
    fn settings_changes_are_seen_and_unchanged_files_are_not_reread() {
        let root = tempfile::tempdir().unwrap();
        let (workdir, home) = (root.path().join("project"), root.path().join("home"));
        let options = PermissionRules {
            deny: vec!["mcp__x__*".into()],
            ..PermissionRules::default()
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
}
