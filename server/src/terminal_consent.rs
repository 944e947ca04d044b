//! The terminal's consent (TRUST-3, TRUST-5) for `wave-mcp chat` and the one-server commands:
//! project servers are approved and tool calls confirmed on stderr/stdin when stdin is a
//! terminal; otherwise nothing is approved (the skipped servers and the command that approves
//! them are named on stderr) and every call that would ask is declined.

use std::io::{BufRead, IsTerminal, Write};
use std::sync::Arc;

use futures::future::BoxFuture;
use wave_mcp_agent::{Consent, ServerApproval, ToolConfirmation, ToolDecision};

use wave_mcp_manager::inert::terminal_safe;

use crate::ask::{TerminalSafe, read_line};

/// Asks on the terminal.
pub struct TerminalConsent;

/// The consent of the CLI's chat.
pub fn terminal() -> Arc<dyn Consent> {
    Arc::new(TerminalConsent)
}

impl Consent for TerminalConsent {
    fn approve_servers(&self, servers: Vec<ServerApproval>) -> BoxFuture<'static, Vec<String>> {
        Box::pin(async move {
            if !std::io::stdin().is_terminal() {
                for server in &servers {
                    eprintln!("{}", terminal_safe(&not_approved_notice(&server.name)));
                }
                return Vec::new();
            }
            tokio::task::spawn_blocking(move || {
                let (stdin, mut stderr) = (std::io::stdin(), std::io::stderr());
                let mut input = stdin.lock();
                servers
                    .iter()
                    .filter(|server| ask_approval(server, &mut input, &mut stderr))
                    .map(|server| server.name.clone())
                    .collect()
            })
            .await
            .unwrap_or_default()
        })
    }

    fn confirm_tool(&self, request: ToolConfirmation) -> BoxFuture<'static, ToolDecision> {
        Box::pin(async move {
            if !std::io::stdin().is_terminal() {
                eprintln!(
                    "declined a call of {}: stdin is not a terminal to ask on (allow the tool with a `permissions.allow` rule in ~/.wave/settings.json)",
                    request.full_name
                );
                return ToolDecision::Deny;
            }
            tokio::task::spawn_blocking(move || {
                let (stdin, mut stderr) = (std::io::stdin(), std::io::stderr());
                confirm(&request, &mut stdin.lock(), &mut stderr)
            })
            .await
            .unwrap_or(ToolDecision::Deny)
        })
    }
}

/// One line naming a skipped project server and the command that approves it.
pub fn not_approved_notice(name: &str) -> String {
    format!(
        "skipped MCP server \"{name}\" of the project's .mcp.json: it is not approved (run `wave-mcp approve {name}` to approve it)"
    )
}

/// What approving `server` would run, one fact a line, as the user should read it first.
pub fn describe(server: &ServerApproval) -> String {
    let mut lines = vec![format!(
        "MCP server \"{}\" from {}{}",
        server.name,
        server.config_path.display(),
        if server.changed {
            " (changed since you approved it)"
        } else {
            ""
        }
    )];
    if let Some(command) = &server.command {
        let args: Vec<String> = server
            .args
            .iter()
            .map(|a| crate::cli::display_arg(a))
            .collect();
        lines.push(
            format!("  runs:      {command} {}", args.join(" "))
                .trim_end()
                .to_string(),
        );
    }
    if let Some(url) = &server.url {
        lines.push(format!("  connects:  {url} ({})", server.transport));
    }
    if !server.env_keys.is_empty() {
        lines.push(format!("  sets env:  {}", server.env_keys.join(", ")));
    }
    if !server.variables.is_empty() {
        lines.push(format!(
            "  reads:     ${{{}}} from your environment, sent where the entry says",
            server.variables.join("}, ${")
        ));
    }
    if let Some(source) = server.shadows {
        lines.push(format!(
            "  replaces:  your {} server of the same name, in this project",
            source.as_str()
        ));
    }
    lines.join("\n")
}

/// Shows `server` and asks yes or no; no answer (end of input) is no.
pub fn ask_approval(server: &ServerApproval, input: &mut dyn BufRead, out: &mut dyn Write) -> bool {
    // The entry is the repository's text: no escape sequence of it reaches the terminal (TRUST-7).
    let out = &mut TerminalSafe(out);
    let _ = writeln!(out, "\n{}", describe(server));
    loop {
        let _ = write!(out, "Approve and run it? [y]es, [n]o: ");
        let _ = out.flush();
        let Some(line) = read_line(input) else {
            return false;
        };
        match line.trim().chars().next().map(|c| c.to_ascii_lowercase()) {
            Some('y') => return true,
            Some('n') => return false,
            _ => continue,
        }
    }
}

fn confirm(
    request: &ToolConfirmation,
    input: &mut dyn BufRead,
    out: &mut dyn Write,
) -> ToolDecision {
    // The title and arguments are the server's and the model's text (TRUST-7).
    let out = &mut TerminalSafe(out);
    let hints = request.annotations.as_ref();
    let mut badges = Vec::new();
    if hints.and_then(|a| a.read_only_hint) == Some(true) {
        badges.push("read-only");
    }
    if hints.and_then(|a| a.destructive_hint) == Some(true) {
        badges.push("DESTRUCTIVE");
    }
    if hints.and_then(|a| a.open_world_hint) == Some(true) {
        badges.push("open-world");
    }
    let title = request
        .title
        .as_deref()
        .or_else(|| hints.and_then(|a| a.title.as_deref()))
        .unwrap_or(&request.tool);
    let badges = match badges.is_empty() {
        true => String::new(),
        false => format!(" [{}]", badges.join(", ")),
    };
    let _ = writeln!(
        out,
        "\nMCP server \"{}\" wants to run {} ({}){badges}",
        request.server, title, request.full_name
    );
    if request.definition_changed {
        let _ = writeln!(out, "  its definition changed since you allowed it");
    }
    let arguments = serde_json::to_string_pretty(&request.arguments).unwrap_or_default();
    for line in arguments.lines() {
        let _ = writeln!(out, "  {line}");
    }
    loop {
        let _ = write!(
            out,
            "Allow? [y]es once, for this [s]ession, [a]lways, [n]o: "
        );
        let _ = out.flush();
        let Some(line) = read_line(input) else {
            return ToolDecision::Deny;
        };
        match line.trim().chars().next().map(|c| c.to_ascii_lowercase()) {
            Some('y') => return ToolDecision::Once,
            Some('s') => return ToolDecision::Session,
            Some('a') => return ToolDecision::Always,
            Some('n') => return ToolDecision::Deny,
            _ => continue,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    // TRUST-3, TRUST-7: the terminal's question shows what would run, with the repository's
    // escape sequences shown escaped (so no sequence can hide or retitle what is approved); `y`
    // approves, the end of input does not.
    #[test]
    fn trust_7_the_approval_question_shows_the_entry_inert() {
        let server = ServerApproval {
            name: "db".into(),
            config_path: "/p/.mcp.json".into(),
            transport: "stdio".into(),
            command: Some("sh\u{1b}[2K\r".into()),
            args: vec!["-c".into(), "touch x\u{1b}]0;t\u{7}".into()],
            url: None,
            env_keys: vec!["TOKEN".into()],
            variables: vec!["HOME".into()],
            changed: true,
            shadows: Some(wave_mcp_manager::Source::User),
            fingerprint: "f".into(),
            workspace_untrusted: false,
        };
        let mut shown = Vec::new();
        assert!(ask_approval(&server, &mut &b"maybe\ny\n"[..], &mut shown));
        let shown = String::from_utf8(shown).unwrap();
        assert!(!shown.contains(['\u{1b}', '\u{7}', '\r']), "{shown:?}");
        assert!(
            shown.contains("runs:      sh\\x1b[2K\\x0d -c \"touch x\\u{1b}]0;t\\u{7}\""),
            "{shown}"
        );
        assert!(shown.contains("(changed since you approved it)"), "{shown}");
        assert!(shown.contains("sets env:  TOKEN"), "{shown}");
        assert!(shown.contains("replaces:  your user server"), "{shown}");
        assert!(!ask_approval(&server, &mut &b""[..], &mut Vec::new()));
    }
}
