//! Which configured entries may run: a project entry only once the user approved it exactly as
//! written, and only in a project the IDE trusts (TRUST-1, TRUST-4, TRUST-9). The others wait as
//! `needs-approval` rows; a user or plugin entry a waiting project entry would replace keeps
//! running under its name meanwhile.

use std::path::Path;

use super::slot::Slot;
use crate::config::{ServerEntry, Source};
use crate::trust::{self, ServerApproval, TrustStore};

/// The entries that may run, in config order, and the slots of those waiting for approval.
pub(super) struct Arranged {
    pub(super) runnable: Vec<ServerEntry>,
    pub(super) awaiting: Vec<Slot>,
}

/// Sorts merged entries into runnable ones and waiting ones. Reads the user's trust store;
/// expands nothing.
pub(super) fn arrange(
    entries: Vec<ServerEntry>,
    store: &TrustStore,
    untrusted: bool,
    workdir: &Path,
) -> Arranged {
    let mut arranged = Arranged {
        runnable: Vec::with_capacity(entries.len()),
        awaiting: Vec::new(),
    };
    for mut entry in entries {
        // An entry that cannot be read runs nothing: it shows its error as before.
        if entry.source != Source::Project || entry.config.is_err() {
            arranged.runnable.push(entry);
            continue;
        }
        let fingerprint = trust::entry_fingerprint(&entry.raw);
        let approved = store.approved_fingerprint(&entry.name);
        if !untrusted && approved.as_deref() == Some(fingerprint.as_str()) {
            arranged.runnable.push(entry);
            continue;
        }
        let changed = approved.is_some();
        let approval = ServerApproval {
            workspace_untrusted: untrusted,
            ..ServerApproval::of(&entry, fingerprint, changed)
        };
        let reason = reason(&entry, changed, untrusted);
        if let Some(replaced) = entry.replaced.take() {
            arranged.runnable.push(*replaced);
        }
        arranged
            .awaiting
            .push(Slot::awaiting(entry, workdir, approval, reason));
    }
    arranged
}

/// Why a project entry does not run, and how to change that (one lowercase line).
fn reason(entry: &ServerEntry, changed: bool, untrusted: bool) -> String {
    let name = &entry.name;
    if untrusted {
        return "the workspace is not trusted: trust it in your IDE to approve its project servers"
            .into();
    }
    let how = format!("approve it with `wave-mcp approve {name}` or the settings page's Approve");
    let file = entry
        .config_path
        .as_deref()
        .map_or_else(|| ".mcp.json".into(), |p| p.display().to_string());
    match changed {
        true => format!("its entry in {file} changed since you approved it: {how}"),
        false => format!("a server of the project's {file} runs only once you approve it: {how}"),
    }
}

/// What one waiting row shows, for comparing two arrangements.
pub(super) fn same_waiting(old: &[Slot], new: &[Slot]) -> bool {
    let key = |s: &Slot| (s.entry.clone(), s.approval.clone(), s.error.clone());
    old.len() == new.len() && old.iter().zip(new).all(|(a, b)| key(a) == key(b))
}
