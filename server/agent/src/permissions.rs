//! Permission rules on full tool names (`mcp__<server>__<tool>`, TOOL-1) and the consent mode
//! (TRUST-2, TRUST-5).
//!
//! Rules come from [`crate::AgentOptions::permissions`] (the host's), the user's
//! `<home>/.wave/settings.json` and the project's `<workdir>/.wave/settings.json`
//! (`{"permissions": {"allow": [...], "ask": [...], "deny": [...], "defaultMode": "ask"}}`; the
//! files are read by `settings.rs`). A pattern is a full name where `*` stands for any run of
//! characters. `deny` excludes a tool: it is neither declared nor callable (flat or inside
//! `Exec`), and deny always wins. `ask` asks the user before every call. `allow` pre-approves the
//! tools it names and hides nothing. A tool no rule names follows `defaultMode`: `ask` (the
//! default) or `allow`. A project can only narrow the user's rules: its `deny` and `ask` rules
//! apply, its `allow` rules cover only tools of its own (approved) project servers, and its
//! `defaultMode` is ignored (TRUST-2).

use serde::{Deserialize, Serialize};
use wave_mcp_manager::Source;

/// What a tool no rule names does: ask the user (the default), or run.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum DefaultMode {
    #[default]
    Ask,
    Allow,
}

/// `allow` / `ask` / `deny` patterns on full tool names and the `defaultMode`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PermissionRules {
    #[serde(default)]
    pub allow: Vec<String>,
    #[serde(default)]
    pub ask: Vec<String>,
    #[serde(default)]
    pub deny: Vec<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub default_mode: Option<DefaultMode>,
    /// The project file's `allow` rules: they cover tools of project servers only (TRUST-2).
    #[serde(skip)]
    pub project_allow: Vec<String>,
}

/// What a call of one tool needs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Verdict {
    /// Pre-approved: an `allow` rule names it, or `defaultMode` is `allow`.
    Allow,
    /// Ask the user. `rule`: the `ask` rule that names it, which asks every time (a permission
    /// given earlier does not apply).
    Ask { rule: Option<String> },
    /// Excluded by a `deny` rule: why (one lowercase line).
    Deny(String),
}

impl PermissionRules {
    /// Adds the other rules to these (a later `defaultMode` wins).
    pub fn extend(&mut self, other: PermissionRules) {
        self.allow.extend(other.allow);
        self.ask.extend(other.ask);
        self.deny.extend(other.deny);
        self.project_allow.extend(other.project_allow);
        if other.default_mode.is_some() {
            self.default_mode = other.default_mode;
        }
    }

    /// Adds a project file's rules: they can only narrow (TRUST-2).
    pub fn extend_from_project(&mut self, project: PermissionRules) {
        self.ask.extend(project.ask);
        self.deny.extend(project.deny);
        self.project_allow.extend(project.allow);
    }

    /// `None` when no `deny` rule excludes the tool, else why one does (one lowercase line).
    pub fn denial(&self, full_name: &str) -> Option<String> {
        let rule = self.deny.iter().find(|p| glob_match(p, full_name))?;
        Some(format!("it matches the deny rule \"{rule}\""))
    }

    /// Not excluded by a `deny` rule: may be declared and called (with the user's consent).
    pub fn is_usable(&self, full_name: &str) -> bool {
        self.denial(full_name).is_none()
    }

    /// What a call of `full_name`, a tool of a server from `source`, needs (TRUST-5).
    pub fn verdict(&self, full_name: &str, source: Source) -> Verdict {
        if let Some(why) = self.denial(full_name) {
            return Verdict::Deny(why);
        }
        if let Some(rule) = self.ask.iter().find(|p| glob_match(p, full_name)) {
            return Verdict::Ask {
                rule: Some(rule.clone()),
            };
        }
        let matches = |patterns: &[String]| patterns.iter().any(|p| glob_match(p, full_name));
        if matches(&self.allow) || (source == Source::Project && matches(&self.project_allow)) {
            return Verdict::Allow;
        }
        match self.default_mode.unwrap_or_default() {
            DefaultMode::Allow => Verdict::Allow,
            DefaultMode::Ask => Verdict::Ask { rule: None },
        }
    }

    /// `None` when the rules leave some name of `server` usable, else why not: its prompts and
    /// resources are then neither offered nor usable. A server is denied when a `deny` pattern
    /// covers all its names (`mcp__<server>__*`, `mcp__*`, `*`).
    pub fn server_denial(&self, server: &str) -> Option<String> {
        let prefix = format!("mcp__{}__", wave_mcp_manager::names::sanitize(server));
        let every_name = format!("{prefix}*");
        let rule = self.deny.iter().find(|p| glob_match(p, &every_name))?;
        Some(format!("the deny rule \"{rule}\" covers it"))
    }
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

#[cfg(test)]
mod tests {
    use super::*;
    use wave_mcp_manager::Source;

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

    // TRUST-5: deny excludes and wins; ask asks even in allow mode; allow pre-approves and
    // hides nothing; the rest follows defaultMode (ask by default).
    #[test]
    fn trust_5_verdicts() {
        let rules = PermissionRules {
            allow: vec!["mcp__a__*".into(), "Bash(npm test)".into()],
            ask: vec!["mcp__a__drop".into()],
            deny: vec!["mcp__a__fail".into()],
            ..PermissionRules::default()
        };
        let user = Source::User;
        assert_eq!(rules.verdict("mcp__a__echo", user), Verdict::Allow);
        assert!(matches!(
            rules.verdict("mcp__a__fail", user),
            Verdict::Deny(_)
        ));
        assert_eq!(
            rules.verdict("mcp__a__drop", user),
            Verdict::Ask {
                rule: Some("mcp__a__drop".into())
            }
        );
        assert_eq!(
            rules.verdict("mcp__b__echo", user),
            Verdict::Ask { rule: None }
        );
        assert!(rules.is_usable("mcp__b__echo"), "allow hides nothing");
        assert!(!rules.is_usable("mcp__a__fail"));
        let allow_mode = PermissionRules {
            ask: vec!["mcp__a__drop".into()],
            default_mode: Some(DefaultMode::Allow),
            ..PermissionRules::default()
        };
        assert_eq!(allow_mode.verdict("mcp__b__echo", user), Verdict::Allow);
        assert!(matches!(
            allow_mode.verdict("mcp__a__drop", user),
            Verdict::Ask { rule: Some(_) }
        ));
    }

    // TRUST-2: a project's file narrows only: its deny and ask apply, its allow covers only
    // project servers' tools, its defaultMode is ignored.
    #[test]
    fn trust_2_a_projects_rules_only_narrow() {
        let mut rules = PermissionRules::default();
        rules.extend_from_project(PermissionRules {
            allow: vec!["mcp__*".into()],
            ask: vec!["mcp__u__ask".into()],
            deny: vec!["mcp__u__gone".into()],
            default_mode: Some(DefaultMode::Allow),
            ..PermissionRules::default()
        });
        assert_eq!(
            rules.verdict("mcp__u__echo", Source::User),
            Verdict::Ask { rule: None }
        );
        assert_eq!(
            rules.verdict("mcp__p__echo", Source::Project),
            Verdict::Allow
        );
        assert!(matches!(
            rules.verdict("mcp__u__gone", Source::User),
            Verdict::Deny(_)
        ));
        assert!(matches!(
            rules.verdict("mcp__u__ask", Source::User),
            Verdict::Ask { rule: Some(_) }
        ));
        assert_eq!(rules.default_mode, None);
    }

    // PRM-1, PRM-3: the prompts and resources of a server the rules deny are not offered.
    #[test]
    fn prm_1_server_denial_covers_whole_servers_only() {
        let rules = |allow: &[&str], deny: &[&str]| PermissionRules {
            allow: allow.iter().map(|p| p.to_string()).collect(),
            deny: deny.iter().map(|p| p.to_string()).collect(),
            ..PermissionRules::default()
        };
        assert!(rules(&[], &[]).server_denial("s").is_none());
        assert!(rules(&[], &["mcp__s__*"]).server_denial("s").is_some());
        assert!(rules(&[], &["mcp__*"]).server_denial("s").is_some());
        assert!(rules(&[], &["mcp__s__*"]).server_denial("other").is_none());
        // One denied tool does not deny the server.
        assert!(rules(&[], &["mcp__s__echo"]).server_denial("s").is_none());
        // Allow rules hide nothing (TRUST-5).
        assert!(rules(&["mcp__a__*"], &[]).server_denial("s").is_none());
    }
}
