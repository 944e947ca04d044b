//! Deleting one server from a user or project config file (DEL-2, DEL-3) through a concrete
//! syntax tree (jsonc-parser), so every other byte of the file stays as the author wrote it: key
//! order, indentation, other entries, unknown fields, comments, the trailing newline.
//!
//! The file is rewritten in place (same inode, owner and mode); a file that may not be written
//! fails before anything changes. Any failure leaves the file untouched. A config file that is a
//! symbolic link is never written through: the edit fails with an error naming the link and its
//! target, and the target keeps every byte (TRUST-8).

use std::io::ErrorKind as IoKind;
use std::path::Path;

use jsonc_parser::ParseOptions;
use jsonc_parser::cst::{CstInputValue, CstObjectProp, CstRootNode};
use wave_mcp_protocol::ErrorKind;

use super::Failure;

/// Removes `mcpServers.<name>` from the file at `path`.
pub fn remove_server(path: &Path, name: &str) -> Result<(), Failure> {
    edit_file(path, &format!("delete \"{name}\""), |text| {
        without_server(text, name)
    })
}

/// Adds `mcpServers.<name>` as `entry` to the file at `path` (USE-1, USE-3): every other byte
/// stays; a missing file (and its directory) is created with only that entry.
pub fn add_server(path: &Path, name: &str, entry: &serde_json::Value) -> Result<(), Failure> {
    if std::fs::symlink_metadata(path).is_ok() {
        return edit_file(path, &format!("add \"{name}\""), |text| {
            with_server_added(text, name, entry)
        });
    }
    create_with_server(path, name, entry).map_err(|e| {
        let kind = match e.kind() {
            IoKind::PermissionDenied => ErrorKind::PermissionDenied,
            _ => ErrorKind::Io,
        };
        Failure::new(
            kind,
            format!(
                "cannot add \"{name}\": cannot create {}: {e}",
                path.display()
            ),
        )
        .with_path(path)
    })
}

/// A new file holding `{"mcpServers": {name: entry}}`, pretty-printed; never replaces one.
fn create_with_server(path: &Path, name: &str, entry: &serde_json::Value) -> std::io::Result<()> {
    use std::io::Write;
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir)?;
    }
    let text = serde_json::to_string_pretty(&serde_json::json!({ "mcpServers": { name: entry } }))
        .map_err(std::io::Error::other)?
        + "\n";
    std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(path)?
        .write_all(text.as_bytes())
}

/// Reads the file, applies `edit` to its text and writes the result back in place (nothing is
/// written when the text did not change). `action` completes "cannot ..." in every error.
pub(crate) fn edit_file(
    path: &Path,
    action: &str,
    edit: impl FnOnce(&str) -> Result<String, (ErrorKind, String)>,
) -> Result<(), Failure> {
    let shown = path.display();
    if let Some(target) = link_target(path) {
        return Err(Failure::new(
            ErrorKind::PermissionDenied,
            format!(
                "cannot {action}: {shown} is a symbolic link to {}, and config files are not edited through a symbolic link",
                target.display()
            ),
        )
        .with_path(path));
    }
    let text = std::fs::read_to_string(path).map_err(|e| {
        let failure = match e.kind() {
            IoKind::NotFound => Failure::new(
                ErrorKind::FileMissing,
                format!("cannot {action}: {shown} does not exist"),
            ),
            IoKind::PermissionDenied => Failure::new(
                ErrorKind::PermissionDenied,
                format!("cannot {action}: permission denied reading {shown}"),
            ),
            _ => Failure::new(
                ErrorKind::Io,
                format!("cannot {action}: cannot read {shown}: {e}"),
            ),
        };
        failure.with_path(path)
    })?;
    let updated = edit(&text)
        .map_err(|(kind, reason)| Failure::new(kind, format!("cannot {action}: {shown} {reason}")))
        .map_err(|f| f.with_path(path))?;
    if updated == text {
        return Ok(());
    }
    write_no_follow(path, updated.as_bytes()).map_err(|e| {
        let failure = match e.kind() {
            IoKind::PermissionDenied => Failure::new(
                ErrorKind::PermissionDenied,
                format!("cannot {action}: permission denied writing {shown}"),
            ),
            _ => Failure::new(
                ErrorKind::Io,
                format!("cannot {action}: cannot write {shown}: {e}"),
            ),
        };
        failure.with_path(path)
    })
}

/// Where `path` points when it is a symbolic link (its target as written).
fn link_target(path: &Path) -> Option<std::path::PathBuf> {
    let meta = std::fs::symlink_metadata(path).ok()?;
    if !meta.file_type().is_symlink() {
        return None;
    }
    Some(std::fs::read_link(path).unwrap_or_else(|_| "an unreadable target".into()))
}

/// Writes `bytes` over the file at `path` in place, refusing (on Unix) a symbolic link that
/// appeared since it was read.
fn write_no_follow(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    use std::io::Write;
    let mut options = std::fs::OpenOptions::new();
    options.write(true).truncate(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::custom_flags(&mut options, nix::libc::O_NOFOLLOW);
    options.open(path)?.write_all(bytes)
}

/// The text without the `mcpServers.<name>` entry. Errors complete "`<file>` ...".
pub fn without_server(text: &str, name: &str) -> Result<String, (ErrorKind, String)> {
    let root = parse_root(text)?;
    server_entry(&root, name)?.remove();
    Ok(root.to_string())
}

/// The text with `mcpServers.<name>` added as `entry` (USE-1): `mcpServers` is created when
/// missing; a server of that name already there is an error. Errors complete "`<file>` ...".
pub fn with_server_added(
    text: &str,
    name: &str,
    entry: &serde_json::Value,
) -> Result<String, (ErrorKind, String)> {
    let root = parse_root(text)?;
    let Some(object) = root.object_value_or_create() else {
        return Err((
            ErrorKind::InvalidFile,
            "has no JSON object at the top level".into(),
        ));
    };
    let Some(servers) = object.object_value_or_create("mcpServers") else {
        return Err((
            ErrorKind::InvalidFile,
            "has an `mcpServers` that is not an object".into(),
        ));
    };
    if servers.get(name).is_some() {
        return Err((
            ErrorKind::InvalidFile,
            format!(
                "already has a server named \"{name}\"; remove it first or choose another name"
            ),
        ));
    }
    servers.append(name, input_value(entry));
    Ok(root.to_string())
}

/// A JSON value as the editor's input, in its key order.
fn input_value(value: &serde_json::Value) -> CstInputValue {
    use serde_json::Value;
    match value {
        Value::Null => CstInputValue::Null,
        Value::Bool(b) => CstInputValue::Bool(*b),
        Value::Number(n) => CstInputValue::Number(n.to_string()),
        Value::String(s) => CstInputValue::String(s.clone()),
        Value::Array(items) => CstInputValue::Array(items.iter().map(input_value).collect()),
        Value::Object(map) => CstInputValue::Object(
            map.iter()
                .map(|(k, v)| (k.clone(), input_value(v)))
                .collect(),
        ),
    }
}

/// Parses a config file's text for editing.
pub(super) fn parse_root(text: &str) -> Result<CstRootNode, (ErrorKind, String)> {
    CstRootNode::parse(text, &ParseOptions::default())
        .map_err(|e| (ErrorKind::InvalidFile, format!("is not valid JSON: {e}")))
}

/// The `mcpServers.<name>` property of a parsed file. Errors complete "`<file>` ...".
pub(super) fn server_entry(
    root: &CstRootNode,
    name: &str,
) -> Result<CstObjectProp, (ErrorKind, String)> {
    let Some(object) = root.object_value() else {
        return Err((
            ErrorKind::InvalidFile,
            "has no JSON object at the top level".into(),
        ));
    };
    let Some(servers) = object.get("mcpServers") else {
        return Err((ErrorKind::EntryMissing, "has no `mcpServers`".into()));
    };
    let Some(servers) = servers.object_value() else {
        return Err((
            ErrorKind::InvalidFile,
            "has an `mcpServers` that is not an object".into(),
        ));
    };
    servers.get(name).ok_or_else(|| {
        (
            ErrorKind::EntryMissing,
            format!("has no server named \"{name}\""),
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn removed(text: &str, name: &str) -> String {
        without_server(text, name).unwrap()
    }

    // DEL-2: only the entry goes; everything around it stays byte for byte.
    #[test]
    fn removes_middle_first_and_last_entries_only() {
        let text = "{\n\t\"$schema\": \"x\",\n  \"mcpServers\" : {\n      \"a\": {\"command\": \"a\"},\n      \"b\": {\n         \"command\": \"b\"\n      },\n      \"c\": {\"url\": \"http://c\"}\n  },\n  \"z\": [1,2]\n}\n";
        assert_eq!(
            removed(text, "b"),
            "{\n\t\"$schema\": \"x\",\n  \"mcpServers\" : {\n      \"a\": {\"command\": \"a\"},\n      \"c\": {\"url\": \"http://c\"}\n  },\n  \"z\": [1,2]\n}\n"
        );
        assert_eq!(
            removed(text, "a"),
            "{\n\t\"$schema\": \"x\",\n  \"mcpServers\" : {\n      \"b\": {\n         \"command\": \"b\"\n      },\n      \"c\": {\"url\": \"http://c\"}\n  },\n  \"z\": [1,2]\n}\n"
        );
        assert_eq!(
            removed(text, "c"),
            "{\n\t\"$schema\": \"x\",\n  \"mcpServers\" : {\n      \"a\": {\"command\": \"a\"},\n      \"b\": {\n         \"command\": \"b\"\n      }\n  },\n  \"z\": [1,2]\n}\n"
        );
    }

    #[test]
    fn removing_the_only_entry_leaves_valid_json() {
        let text = "{\n  \"mcpServers\": {\n    \"a\": {\"command\": \"a\"}\n  }\n}";
        let out = removed(text, "a");
        let value: serde_json::Value = serde_json::from_str(&out).unwrap();
        assert_eq!(value, serde_json::json!({"mcpServers": {}}));
    }

    #[test]
    fn comments_and_one_line_objects_survive() {
        let text = "{ // servers\n  \"mcpServers\": { \"a\": {\"command\": \"a\"}, \"b\": {\"command\": \"b\"} }\n}\n";
        assert_eq!(
            removed(text, "a"),
            "{ // servers\n  \"mcpServers\": { \"b\": {\"command\": \"b\"} }\n}\n"
        );
    }

    #[test]
    fn errors_name_the_problem() {
        let missing = without_server("{\"mcpServers\": {}}", "a").unwrap_err();
        assert_eq!(missing.0, ErrorKind::EntryMissing);
        assert!(missing.1.contains("no server named \"a\""), "{}", missing.1);
        assert_eq!(
            without_server("{}", "a").unwrap_err().0,
            ErrorKind::EntryMissing
        );
        assert_eq!(
            without_server("{\"mcpServers\": [", "a").unwrap_err().0,
            ErrorKind::InvalidFile
        );
        assert_eq!(
            without_server("{\"mcpServers\": []}", "a").unwrap_err().0,
            ErrorKind::InvalidFile
        );
        assert_eq!(
            without_server("[1]", "a").unwrap_err().0,
            ErrorKind::InvalidFile
        );
    }
}
