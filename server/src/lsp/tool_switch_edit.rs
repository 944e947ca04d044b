//! Switching one tool of a server on or off in its config file (BUD-2): the entry's
//! `disabledTools` (or its `enabledTools`, when the entry uses that) gains or loses the tool's
//! name, with the same byte-preserving editor and the same errors as delete (DEL-2,
//! [`super::config_edit`]): nothing outside that one array changes.

use std::path::Path;

use jsonc_parser::cst::{CstInputValue, CstObject};
use wave_mcp_manager::switches::{DISABLED_TOOLS, ENABLED_TOOLS};
use wave_mcp_protocol::ErrorKind;

use super::Failure;
use super::config_edit::{edit_file, parse_root, server_entry};

/// Switches `tool` of `mcpServers.<name>` in the file at `path` on or off.
pub fn set_tool_enabled(path: &Path, name: &str, tool: &str, enabled: bool) -> Result<(), Failure> {
    let verb = if enabled { "on" } else { "off" };
    let action = format!("switch tool \"{tool}\" of \"{name}\" {verb}");
    edit_file(path, &action, |text| {
        with_tool_switched(text, name, tool, enabled)
    })
}

/// The text with the tool switched. Errors complete "`<file>` ...".
pub fn with_tool_switched(
    text: &str,
    name: &str,
    tool: &str,
    enabled: bool,
) -> Result<String, (ErrorKind, String)> {
    let root = parse_root(text)?;
    let entry = server_entry(&root, name)?;
    let Some(entry) = entry.object_value() else {
        return Err((
            ErrorKind::InvalidFile,
            format!("has a server \"{name}\" that is not an object"),
        ));
    };
    // An allow list is edited as such: on = listed (BUD-2).
    let (key, listed) = match entry.get(ENABLED_TOOLS) {
        Some(_) => (ENABLED_TOOLS, enabled),
        None => (DISABLED_TOOLS, !enabled),
    };
    set_listed(&entry, key, tool, listed).map_err(|reason| (ErrorKind::InvalidFile, reason))?;
    Ok(root.to_string())
}

/// Puts `tool` into the array `key` of `entry` (created when missing) or takes it out (the key
/// goes when its array becomes empty and it is `disabledTools`, so on → off → on restores the
/// file byte for byte).
fn set_listed(entry: &CstObject, key: &str, tool: &str, listed: bool) -> Result<(), String> {
    let prop = entry.get(key);
    let array = match &prop {
        Some(prop) => Some(
            prop.array_value()
                .ok_or_else(|| format!("has a `{key}` that is not an array"))?,
        ),
        None => None,
    };
    let same = |node: &jsonc_parser::cst::CstNode| {
        node.as_string_lit()
            .and_then(|s| s.decoded_value().ok())
            .is_some_and(|v| v == tool)
    };
    match (array, listed) {
        (None, false) => Ok(()),
        (None, true) => {
            entry.append(
                key,
                CstInputValue::Array(vec![CstInputValue::String(tool.to_string())]),
            );
            Ok(())
        }
        (Some(array), true) => {
            if !array.elements().iter().any(same) {
                array.append(CstInputValue::String(tool.to_string()));
            }
            Ok(())
        }
        (Some(array), false) => {
            // `["a", "b"]` without `"a"` is `["b"]`, not `[ "b"]`.
            let tight = array.children().get(1).is_some_and(|c| !c.is_whitespace());
            for element in array.elements().into_iter().filter(same) {
                element.remove();
            }
            if tight && let Some(space) = array.children().get(1).filter(|c| c.is_whitespace()) {
                space.clone().remove();
            }
            if key == DISABLED_TOOLS
                && array.elements().is_empty()
                && let Some(prop) = prop
            {
                prop.remove();
            }
            Ok(())
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn switched(text: &str, tool: &str, enabled: bool) -> String {
        with_tool_switched(text, "b", tool, enabled).unwrap()
    }

    // BUD-2: only the entry's array changes; everything around it stays byte for byte, and
    // off → on gives the file back as it was.
    #[test]
    fn bud_2_off_then_on_touches_only_the_entry_and_round_trips() {
        let text = "{\n  // mine\n  \"mcpServers\": {\n    \"a\": {\"command\": \"a\"},\n    \"b\": {\n      \"command\": \"b\",\n      \"args\": [\"x\"]\n    }\n  },\n  \"z\": 1\n}\n";
        let off = switched(text, "echo", false);
        assert_eq!(
            off,
            "{\n  // mine\n  \"mcpServers\": {\n    \"a\": {\"command\": \"a\"},\n    \"b\": {\n      \"command\": \"b\",\n      \"args\": [\"x\"],\n      \"disabledTools\": [\"echo\"]\n    }\n  },\n  \"z\": 1\n}\n"
        );
        let two = switched(&off, "add", false);
        assert_eq!(
            two,
            off.replace("[\"echo\"]", "[\"echo\", \"add\"]"),
            "a second tool joins the array"
        );
        assert_eq!(switched(&two, "add", false), two, "already off: unchanged");
        assert_eq!(switched(&switched(&two, "add", true), "echo", true), text);
    }

    // BUD-2: an entry with `enabledTools` is edited there.
    #[test]
    fn bud_2_enabled_tools_entries_are_edited_there() {
        let text = "{\"mcpServers\": {\"b\": {\"command\": \"b\", \"enabledTools\": [\"echo\", \"add\"]}}}";
        let off = switched(text, "echo", false);
        assert_eq!(
            off,
            "{\"mcpServers\": {\"b\": {\"command\": \"b\", \"enabledTools\": [\"add\"]}}}"
        );
        assert_eq!(
            switched(&off, "pid", true),
            "{\"mcpServers\": {\"b\": {\"command\": \"b\", \"enabledTools\": [\"add\", \"pid\"]}}}"
        );
    }

    #[test]
    fn bud_2_errors_are_those_of_delete() {
        let missing = with_tool_switched("{\"mcpServers\": {}}", "b", "t", false).unwrap_err();
        assert_eq!(missing.0, ErrorKind::EntryMissing);
        let bad = with_tool_switched("{\"mcpServers\": [", "b", "t", false).unwrap_err();
        assert_eq!(bad.0, ErrorKind::InvalidFile);
        let not_array = with_tool_switched(
            "{\"mcpServers\": {\"b\": {\"disabledTools\": 1}}}",
            "b",
            "t",
            false,
        )
        .unwrap_err();
        assert_eq!(not_array.0, ErrorKind::InvalidFile);
        assert!(not_array.1.contains("`disabledTools`"), "{}", not_array.1);
    }
}
