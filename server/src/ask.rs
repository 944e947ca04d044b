//! The terminal's answers to a server's questions (MCP elicitation, LONG-5, LONG-6) for
//! `wave-mcp chat` and `wave-mcp call`: asked on stderr and read from stdin when stdin is a
//! terminal, declined otherwise. A form is asked field by field (title, description, choices,
//! default, required mark), each answer checked against its property and asked again when it
//! does not fit; a URL is shown with its host and opened only after the user accepts.
//! Everything is written through [`TerminalSafe`]: the message, URL, titles, descriptions and
//! choices are the server's text, and no escape sequence of its reaches the terminal (TRUST-7).

use std::io::{BufRead, IsTerminal, Write};
use std::sync::Arc;

use futures::future::BoxFuture;
use serde_json::{Map, Value};
use wave_mcp_manager::elicitation::{check_property, enum_values, url_host};
use wave_mcp_manager::inert::terminal_safe;
use wave_mcp_manager::{Elicitation, ElicitationAnswer, ElicitationKind, Elicitor};

/// Asks on the terminal.
pub struct TerminalElicitor;

/// The elicitor of the CLI's managers.
pub fn terminal() -> Arc<dyn Elicitor> {
    Arc::new(TerminalElicitor)
}

impl Elicitor for TerminalElicitor {
    fn url_mode(&self) -> bool {
        std::io::stdin().is_terminal()
    }

    fn elicit(&self, request: Elicitation) -> BoxFuture<'static, ElicitationAnswer> {
        Box::pin(async move {
            if !std::io::stdin().is_terminal() {
                eprintln!(
                    "MCP server \"{}\" asks: {} (declined: stdin is not a terminal)",
                    request.server,
                    terminal_safe(&request.message)
                );
                return ElicitationAnswer::decline();
            }
            let asked = tokio::task::spawn_blocking(move || {
                let stdin = std::io::stdin();
                let mut input = stdin.lock();
                let mut output = TerminalSafe(std::io::stderr());
                ask(&request, &mut input, &mut output)
            })
            .await;
            asked
                .ok()
                .flatten()
                .unwrap_or_else(ElicitationAnswer::cancel)
        })
    }

    fn completed(&self, server: &str, _elicitation_id: &str) -> BoxFuture<'static, ()> {
        eprintln!("MCP server \"{server}\": the page you opened is done");
        Box::pin(async {})
    }
}

/// A terminal writer that shows control characters escaped (TRUST-7). Formatting hands it
/// whole `str` pieces, so a character is never split between two writes.
pub(crate) struct TerminalSafe<W>(pub(crate) W);

impl<W: Write> Write for TerminalSafe<W> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let text = String::from_utf8_lossy(buf);
        self.0.write_all(terminal_safe(&text).as_bytes())?;
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.0.flush()
    }
}

/// Asks `request` on `output`, reading `input`; `None` when the input ended.
fn ask(
    request: &Elicitation,
    input: &mut dyn BufRead,
    output: &mut dyn Write,
) -> Option<ElicitationAnswer> {
    let _ = writeln!(
        output,
        "\nMCP server \"{}\" asks: {}",
        request.server, request.message
    );
    match &request.kind {
        ElicitationKind::Url { url, .. } => {
            let host = url_host(url);
            let _ = writeln!(output, "It wants to open a page on {host}:\n  {url}");
            let choice = decision(input, output, "open it")?;
            if choice == 'a' {
                request.browser.open(url);
            }
            Some(answer_of(choice, None))
        }
        ElicitationKind::Form { requested_schema } => {
            let choice = decision(input, output, "fill it in")?;
            if choice != 'a' {
                return Some(answer_of(choice, None));
            }
            let content = fill(requested_schema, input, output)?;
            Some(ElicitationAnswer::accept(Some(content)))
        }
    }
}

fn answer_of(choice: char, content: Option<Map<String, Value>>) -> ElicitationAnswer {
    match choice {
        'a' => ElicitationAnswer::accept(content),
        'd' => ElicitationAnswer::decline(),
        _ => ElicitationAnswer::cancel(),
    }
}

/// `a`ccept, `d`ecline or `c`ancel.
fn decision(input: &mut dyn BufRead, output: &mut dyn Write, accept: &str) -> Option<char> {
    loop {
        let _ = write!(output, "[a]ccept ({accept}), [d]ecline, [c]ancel? ");
        let _ = output.flush();
        let line = read_line(input)?;
        match line.trim().chars().next().map(|c| c.to_ascii_lowercase()) {
            Some(c @ ('a' | 'd' | 'c')) => return Some(c),
            _ => continue,
        }
    }
}

pub(crate) fn read_line(input: &mut dyn BufRead) -> Option<String> {
    let mut line = String::new();
    match input.read_line(&mut line) {
        Ok(0) | Err(_) => None,
        Ok(_) => Some(line.trim_end_matches(['\n', '\r']).to_string()),
    }
}

/// Asks every property in the schema's order.
fn fill(
    schema: &Value,
    input: &mut dyn BufRead,
    output: &mut dyn Write,
) -> Option<Map<String, Value>> {
    let empty = Map::new();
    let properties = schema
        .get("properties")
        .and_then(Value::as_object)
        .unwrap_or(&empty);
    let required: Vec<&str> = schema
        .get("required")
        .and_then(Value::as_array)
        .map(|r| r.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let mut content = Map::new();
    for (name, property) in properties {
        let is_required = required.contains(&name.as_str());
        if let Some(value) = field(name, property, is_required, input, output)? {
            content.insert(name.clone(), value);
        }
    }
    Some(content)
}

/// Asks one property until the answer fits; `Some(None)` when left empty and optional.
fn field(
    name: &str,
    property: &Value,
    required: bool,
    input: &mut dyn BufRead,
    output: &mut dyn Write,
) -> Option<Option<Value>> {
    let title = property
        .get("title")
        .and_then(Value::as_str)
        .unwrap_or(name);
    let kind = property
        .get("type")
        .and_then(Value::as_str)
        .unwrap_or_default();
    let choices = choices(property);
    let default = property.get("default");
    loop {
        let mark = if required { " *" } else { "" };
        let _ = write!(output, "{title}{mark}");
        if let Some(description) = property.get("description").and_then(Value::as_str) {
            let _ = write!(output, " ({description})");
        }
        if !choices.is_empty() {
            let _ = writeln!(output);
            for (i, (_, label)) in choices.iter().enumerate() {
                let _ = writeln!(output, "  {}) {label}", i + 1);
            }
            let hint = if kind == "array" {
                "numbers, comma-separated"
            } else {
                "number"
            };
            let _ = write!(output, "  {hint}");
        } else if kind == "boolean" {
            let _ = write!(output, " [y/n]");
        }
        if let Some(default) = default {
            let _ = write!(output, " [default {default}]");
        }
        let _ = write!(output, ": ");
        let _ = output.flush();
        let line = read_line(input)?;
        let text = line.trim();
        if text.is_empty() {
            match (default, required) {
                (Some(default), _) => return Some(Some(default.clone())),
                (None, false) => return Some(None),
                (None, true) => {
                    let _ = writeln!(output, "  {title} is required");
                    continue;
                }
            }
        }
        let value = match parse(kind, &choices, text) {
            Ok(value) => value,
            Err(problem) => {
                let _ = writeln!(output, "  {problem}");
                continue;
            }
        };
        match check_property(property, &value) {
            Ok(()) => return Some(Some(value)),
            Err(problem) => {
                let _ = writeln!(output, "  {title} {problem}");
            }
        }
    }
}

/// An enum's values with their labels (`oneOf` titles, `enumNames`, else the value).
fn choices(property: &Value) -> Vec<(Value, String)> {
    let source = match property.get("type").and_then(Value::as_str) {
        Some("array") => property.get("items").cloned().unwrap_or_default(),
        _ => property.clone(),
    };
    let Some(values) = enum_values(&source) else {
        return Vec::new();
    };
    let options = source.get("oneOf").or_else(|| source.get("anyOf"));
    let names = source.get("enumNames").and_then(Value::as_array);
    values
        .into_iter()
        .enumerate()
        .map(|(i, value)| {
            let titled = options
                .and_then(Value::as_array)
                .and_then(|o| o.iter().find(|o| o.get("const") == Some(&value)))
                .and_then(|o| o.get("title"))
                .or_else(|| names.and_then(|n| n.get(i)))
                .and_then(Value::as_str);
            let label = match titled {
                Some(title) => title.to_string(),
                None => value
                    .as_str()
                    .map(str::to_string)
                    .unwrap_or_else(|| value.to_string()),
            };
            (value, label)
        })
        .collect()
}

fn parse(kind: &str, choices: &[(Value, String)], text: &str) -> Result<Value, String> {
    let pick = |token: &str| -> Result<Value, String> {
        let n: usize = token
            .trim()
            .parse()
            .map_err(|_| format!("\"{token}\" is not a choice number"))?;
        choices
            .get(n.wrapping_sub(1))
            .map(|(value, _)| value.clone())
            .ok_or_else(|| format!("{n} is not a choice"))
    };
    if kind == "array" {
        let picked: Result<Vec<Value>, String> = text.split(',').map(pick).collect();
        return picked.map(Value::Array);
    }
    if !choices.is_empty() {
        return pick(text);
    }
    match kind {
        "boolean" => match text.to_ascii_lowercase().as_str() {
            "y" | "yes" | "true" => Ok(Value::Bool(true)),
            "n" | "no" | "false" => Ok(Value::Bool(false)),
            _ => Err("answer y or n".into()),
        },
        "integer" => text
            .parse::<i64>()
            .map(Value::from)
            .map_err(|_| "must be an integer".into()),
        "number" => text
            .parse::<f64>()
            .ok()
            .and_then(serde_json::Number::from_f64)
            .map(Value::Number)
            .ok_or_else(|| "must be a number".into()),
        _ => Ok(Value::String(text.to_string())),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn form(schema: Value) -> Elicitation {
        Elicitation {
            server: "s".into(),
            message: "tell me".into(),
            kind: ElicitationKind::Form {
                requested_schema: schema,
            },
            browser: wave_mcp_manager::Browser::default(),
        }
    }

    /// LONG-5: the terminal asks field by field, re-asks what does not fit, takes defaults.
    #[test]
    fn long_5_terminal_form_is_checked_and_defaults_apply() {
        let request = form(json!({
            "type": "object",
            "properties": {
                "email": {"type": "string", "format": "email", "title": "Email"},
                "age": {"type": "integer", "minimum": 1},
                "role": {"type": "string", "oneOf": [{"const": "dev", "title": "Developer"}, {"const": "pm", "title": "Manager"}]},
                "news": {"type": "boolean", "default": false},
            },
            "required": ["email"],
        }));
        let typed = "a\n\nnot-an-email\nme@example.com\n0\n7\n2\n\n";
        let mut output = Vec::new();
        let answer = ask(&request, &mut typed.as_bytes(), &mut output).expect("answered");
        let shown = String::from_utf8(output).unwrap();
        assert_eq!(answer.action, wave_mcp_manager::ElicitationAction::Accept);
        assert_eq!(
            Value::Object(answer.content.unwrap()),
            json!({"email": "me@example.com", "age": 7, "role": "pm", "news": false})
        );
        assert!(shown.contains("MCP server \"s\" asks: tell me"), "{shown}");
        assert!(shown.contains("Email is required"), "{shown}");
        assert!(shown.contains("valid email"), "{shown}");
        assert!(shown.contains("at least 1"), "{shown}");
        assert!(shown.contains("2) Manager"), "{shown}");
    }

    /// TRUST-7: a hostile question (window title, cleared screen, clipboard write, C1 CSI in
    /// the message, a title, a description and a choice) reaches the terminal escaped.
    #[test]
    fn trust_7_terminal_questions_print_no_control_sequence() {
        const HOSTILE: &str =
            "\u{1b}]0;PWNED-TITLE\u{7}\u{1b}[2J\u{1b}]52;c;cHduZWQ=\u{7}\u{9b}31m";
        let mut request = form(json!({
            "type": "object",
            "properties": {
                "x": {"type": "string", "title": HOSTILE, "description": HOSTILE,
                      "enum": ["a"], "enumNames": [HOSTILE]},
            },
        }));
        request.message = format!("tell me{HOSTILE}");
        let mut output = TerminalSafe(Vec::new());
        ask(&request, &mut "a\n1\n".as_bytes(), &mut output).expect("answered");
        let bytes = output.0;
        let shown = String::from_utf8(bytes.clone()).unwrap();
        assert!(
            !bytes.contains(&0x1b) && !bytes.contains(&0x07),
            "{shown:?}"
        );
        assert!(!shown.contains('\u{9b}'), "{shown:?}");
        assert!(
            shown.contains("tell me\\x1b]0;PWNED-TITLE\\x07"),
            "{shown:?}"
        );
        assert!(shown.contains("\\u{9b}31m"), "{shown:?}");
    }

    #[test]
    fn long_5_terminal_decline_and_end_of_input() {
        let request = form(json!({"type": "object", "properties": {}}));
        let answer = ask(&request, &mut "d\n".as_bytes(), &mut Vec::new()).unwrap();
        assert_eq!(answer.action, wave_mcp_manager::ElicitationAction::Decline);
        assert!(ask(&request, &mut "".as_bytes(), &mut Vec::new()).is_none());
    }
}
