//! Deleting one server from a user or project config file (DEL-2, DEL-3) through a concrete
//! syntax tree (jsonc-parser), so every other byte of the file stays as the author wrote it: key
//! order, indentation, other entries, unknown fields, comments, the trailing newline.
//!
//! The file is rewritten in place (same inode, owner and mode); a file that may not be written
//! fails before anything changes. Any failure leaves the file untouched.

use std::io::ErrorKind as IoKind;
use std::path::Path;

use jsonc_parser::ParseOptions;
use jsonc_parser::cst::CstRootNode;
use wave_mcp_protocol::ErrorKind;

use super::Failure;

/// Removes `mcpServers.<name>` from the file at `path`.
pub fn remove_server(path: &Path, name: &str) -> Result<(), Failure> {
    let shown = path.display();
    let text = std::fs::read_to_string(path).map_err(|e| {
        let failure = match e.kind() {
            IoKind::NotFound => Failure::new(
                ErrorKind::FileMissing,
                format!("cannot delete \"{name}\": {shown} does not exist"),
            ),
            IoKind::PermissionDenied => Failure::new(
                ErrorKind::PermissionDenied,
                format!("cannot delete \"{name}\": permission denied reading {shown}"),
            ),
            _ => Failure::new(
                ErrorKind::Io,
                format!("cannot delete \"{name}\": cannot read {shown}: {e}"),
            ),
        };
        failure.with_path(path)
    })?;
    let updated = without_server(&text, name)
        .map_err(|(kind, reason)| {
            Failure::new(kind, format!("cannot delete \"{name}\": {shown} {reason}"))
        })
        .map_err(|f| f.with_path(path))?;
    std::fs::write(path, updated).map_err(|e| {
        let failure = match e.kind() {
            IoKind::PermissionDenied => Failure::new(
                ErrorKind::PermissionDenied,
                format!("cannot delete \"{name}\": permission denied writing {shown}"),
            ),
            _ => Failure::new(
                ErrorKind::Io,
                format!("cannot delete \"{name}\": cannot write {shown}: {e}"),
            ),
        };
        failure.with_path(path)
    })
}

/// The text without the `mcpServers.<name>` entry. Errors complete "`<file>` ...".
pub fn without_server(text: &str, name: &str) -> Result<String, (ErrorKind, String)> {
    let root = CstRootNode::parse(text, &ParseOptions::default())
        .map_err(|e| (ErrorKind::InvalidFile, format!("is not valid JSON: {e}")))?;
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
    let Some(entry) = servers.get(name) else {
        return Err((
            ErrorKind::EntryMissing,
            format!("has no server named \"{name}\""),
        ));
    };
    entry.remove();
    Ok(root.to_string())
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
