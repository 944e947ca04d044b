//! The client's roots (SRV-1): the directories a server may work in — the IDE's workspace
//! folders, or the CLI's `--workdir` — answered to `roots/list` as `file://` URIs. Shared by a
//! manager and every connection it dials; a change is announced with
//! `notifications/roots/list_changed`. Roots are deprecated from MCP 2026-07-28 on (SEP-2577)
//! and stay for the servers of the 2025 revisions, hence the `deprecated` allowance.
#![allow(deprecated)]

use std::path::PathBuf;
use std::sync::{Arc, RwLock};

use rmcp::model::{ListRootsResult, Root};

/// The current roots; cheap to clone, all clones see the same list.
#[derive(Clone, Debug, Default)]
pub(crate) struct Roots(Arc<RwLock<Vec<PathBuf>>>);

impl Roots {
    pub(crate) fn new(folders: Vec<PathBuf>) -> Roots {
        Roots(Arc::new(RwLock::new(folders)))
    }

    pub(crate) fn folders(&self) -> Vec<PathBuf> {
        self.0.read().unwrap_or_else(|e| e.into_inner()).clone()
    }

    /// Replaces the list; whether it changed.
    pub(crate) fn set(&self, folders: Vec<PathBuf>) -> bool {
        let mut current = self.0.write().unwrap_or_else(|e| e.into_inner());
        if *current == folders {
            return false;
        }
        *current = folders;
        true
    }

    /// The `roots/list` answer: each folder as a `file://` URI named by its last component.
    pub(crate) fn list(&self) -> ListRootsResult {
        let roots = self
            .folders()
            .iter()
            .filter_map(|folder| {
                let uri = url::Url::from_directory_path(folder).ok()?;
                let root = Root::new(uri.as_str().trim_end_matches('/'));
                Some(match folder.file_name() {
                    Some(name) => root.with_name(name.to_string_lossy()),
                    None => root,
                })
            })
            .collect();
        ListRootsResult::new(roots)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    // SRV-1: absolute folders become file URIs (percent-encoded), named by their last part; a
    // relative path cannot be a URI and is left out.
    #[test]
    fn srv_1_roots_are_file_uris_of_the_folders() {
        let roots = Roots::new(vec![
            PathBuf::from("/work/my project"),
            PathBuf::from("relative"),
        ]);
        let list = roots.list();
        let shown: Vec<(&str, Option<&str>)> = list
            .roots
            .iter()
            .map(|r| (r.uri.as_str(), r.name.as_deref()))
            .collect();
        assert_eq!(shown, [("file:///work/my%20project", Some("my project"))]);
        assert!(!roots.set(vec![
            PathBuf::from("/work/my project"),
            PathBuf::from("relative")
        ]));
        assert!(roots.set(vec![PathBuf::from("/b")]));
        assert_eq!(roots.folders(), [PathBuf::from("/b")]);
    }
}
