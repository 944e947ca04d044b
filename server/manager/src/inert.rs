//! Server text made inert (TRUST-7): [`strip_hidden`] removes the characters a model reads but a
//! person does not see (Unicode tags, bidi overrides and isolates, zero-width characters), and
//! [`terminal_safe`] shows terminal control characters escaped, so no ESC/OSC/CSI sequence a
//! server sends reaches the terminal. Both borrow when there is nothing to change.

use std::borrow::Cow;

use serde_json::{Map, Value};

/// A character that is removed before server text reaches the model: Unicode tag characters
/// (U+E0000–U+E007F), bidi overrides and isolates (U+202A–U+202E, U+2066–U+2069) and
/// zero-width characters (U+200B–U+200D, U+2060, U+FEFF).
pub fn is_hidden(c: char) -> bool {
    matches!(
        c,
        '\u{E0000}'..='\u{E007F}'
            | '\u{202A}'..='\u{202E}'
            | '\u{2066}'..='\u{2069}'
            | '\u{200B}'..='\u{200D}'
            | '\u{2060}'
            | '\u{FEFF}'
    )
}

/// `text` without its hidden characters, and whether there were any.
pub fn strip_hidden(text: &str) -> (Cow<'_, str>, bool) {
    // Every hidden character is outside ASCII: a pure ASCII text is returned at once.
    if text.is_ascii() || !text.chars().any(is_hidden) {
        return (Cow::Borrowed(text), false);
    }
    (
        Cow::Owned(text.chars().filter(|&c| !is_hidden(c)).collect()),
        true,
    )
}

/// [`strip_hidden`] in place on an owned string; returns whether anything was removed.
pub fn strip_hidden_in_place(text: &mut String) -> bool {
    let stripped = match strip_hidden(text) {
        (Cow::Owned(stripped), true) => stripped,
        _ => return false,
    };
    *text = stripped;
    true
}

/// [`strip_hidden_in_place`] on an optional string.
pub fn strip_hidden_option(text: &mut Option<String>) -> bool {
    text.as_mut().is_some_and(strip_hidden_in_place)
}

/// Removes hidden characters from the `description` and `title` strings of a JSON schema, at
/// every depth (what a model reads of an input schema besides the property names, which the
/// server expects as they are). Returns whether anything was removed.
pub fn strip_hidden_in_schema(schema: &mut Map<String, Value>) -> bool {
    let mut removed = false;
    for (key, value) in schema.iter_mut() {
        removed |= match value {
            Value::String(text) if key == "description" || key == "title" => {
                strip_hidden_in_place(text)
            }
            other => strip_hidden_in_value(other),
        };
    }
    removed
}

fn strip_hidden_in_value(value: &mut Value) -> bool {
    match value {
        Value::Object(object) => strip_hidden_in_schema(object),
        Value::Array(items) => items
            .iter_mut()
            .fold(false, |removed, item| strip_hidden_in_value(item) | removed),
        _ => false,
    }
}

/// A character a terminal must not receive from a server: C0 controls but tab and newline,
/// DEL, and C1 controls (U+0080–U+009F, which some terminals take as 8-bit ESC/CSI/OSC).
fn is_control(c: char) -> bool {
    matches!(c, '\0'..='\u{8}' | '\u{B}'..='\u{1F}' | '\u{7F}'..='\u{9F}')
}

/// `text` as the CLI may print it: every control character but tab and newline shown escaped
/// (`\x1b`, `\x07`, `\x7f`, `\u{9b}`), a carriage return too unless a newline follows it. So
/// no escape sequence from a server (a window title, a cleared screen, an OSC 52 clipboard
/// write) reaches the terminal.
pub fn terminal_safe(text: &str) -> Cow<'_, str> {
    let unsafe_at = |(i, c): (usize, char)| {
        (c == '\r' && !text[i + 1..].starts_with('\n')) || (c != '\r' && is_control(c))
    };
    if !text.char_indices().any(unsafe_at) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 16);
    for (i, c) in text.char_indices() {
        if !unsafe_at((i, c)) {
            out.push(c);
        } else if (c as u32) < 0x80 {
            out.push_str(&format!("\\x{:02x}", c as u32));
        } else {
            out.push_str(&format!("\\u{{{:x}}}", c as u32));
        }
    }
    Cow::Owned(out)
}

/// JSON text (as serde_json writes it) with DEL and the C1 controls written as `\u007f` ..
/// `\u009f`: serde_json escapes C0 controls but passes these through, and some terminals take
/// a C1 control as ESC/CSI/OSC. Still the same JSON value. For the CLI's `--json` output.
pub fn json_safe(json: &str) -> Cow<'_, str> {
    let c1 = |c: char| matches!(c, '\u{7F}'..='\u{9F}');
    if !json.chars().any(c1) {
        return Cow::Borrowed(json);
    }
    let mut out = String::with_capacity(json.len() + 16);
    for c in json.chars() {
        match c1(c) {
            true => out.push_str(&format!("\\u{:04x}", c as u32)),
            false => out.push(c),
        }
    }
    Cow::Owned(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    // TRUST-7: tags, bidi and zero-width characters go; everything else stays.
    #[test]
    fn trust_7_hidden_characters_are_removed_and_reported() {
        let (text, removed) = strip_hidden("plain text, ünïcode ✓");
        assert!(matches!(text, Cow::Borrowed(_)) && !removed);
        let hostile = "a\u{E0041}\u{E0049}\u{E007F}b\u{202E}c\u{2066}d\u{2069}e\u{200B}\u{200C}\u{200D}f\u{2060}\u{FEFF}g\u{202A}";
        let (text, removed) = strip_hidden(hostile);
        assert_eq!(text, "abcdefg");
        assert!(removed);
        // Neighbours of the ranges are kept.
        let edges = "\u{200A}\u{200E}\u{2029}\u{202F}\u{2065}\u{206A}\u{E0080}";
        assert_eq!(strip_hidden(edges), (Cow::Borrowed(edges), false));
    }

    // TRUST-7: descriptions and titles of a schema at every depth; property names kept.
    #[test]
    fn trust_7_schema_descriptions_lose_hidden_characters() {
        let mut schema = serde_json::json!({
            "type": "object",
            "description": "top\u{200B}",
            "properties": {
                "q\u{200B}": {"type": "string", "description": "deep\u{E0041}", "title": "t\u{202E}"},
                "list": {"type": "array", "items": [{"description": "x\u{FEFF}"}]}
            }
        });
        let removed = strip_hidden_in_schema(schema.as_object_mut().unwrap());
        assert!(removed);
        assert_eq!(
            schema,
            serde_json::json!({
                "type": "object",
                "description": "top",
                "properties": {
                    "q\u{200B}": {"type": "string", "description": "deep", "title": "t"},
                    "list": {"type": "array", "items": [{"description": "x"}]}
                }
            })
        );
        let mut clean = serde_json::json!({"description": "fine"});
        assert!(!strip_hidden_in_schema(clean.as_object_mut().unwrap()));
    }

    // TRUST-7: C0 (but tab and newline), DEL and C1 are shown escaped; CRLF stays.
    #[test]
    fn trust_7_control_characters_are_escaped_for_the_terminal() {
        let fine = "tab\there\nnew line\r\nünïcode ✓ \\x1b";
        assert!(matches!(terminal_safe(fine), Cow::Borrowed(_)));
        let hostile = "\u{1b}]0;PWNED\u{7}\u{1b}[2J\u{9b}31m\u{7f}\r\u{0}x";
        assert_eq!(
            terminal_safe(hostile),
            "\\x1b]0;PWNED\\x07\\x1b[2J\\u{9b}31m\\x7f\\x0d\\x00x"
        );
        assert_eq!(terminal_safe("end\r"), "end\\x0d");
        assert_eq!(terminal_safe("\u{80}\u{9f}\u{a0}"), "\\u{80}\\u{9f}\u{a0}");
    }

    // TRUST-7: JSON output keeps its value, without raw DEL or C1 characters.
    #[test]
    fn trust_7_json_output_has_no_raw_c1_controls() {
        let value = serde_json::json!({"d": "a\u{1b}b\u{9b}c\u{7f}d\u{a0}ü"});
        let text = serde_json::to_string(&value).unwrap();
        let safe = json_safe(&text);
        assert!(!safe.contains(['\u{1b}', '\u{9b}', '\u{7f}']), "{safe}");
        assert_eq!(
            serde_json::from_str::<serde_json::Value>(&safe).unwrap(),
            value
        );
        assert!(matches!(json_safe("{\"a\":\"ü\"}"), Cow::Borrowed(_)));
    }
}
