//! A terminal conversation (`wave-mcp chat`): one line of input is one user message; `/mcp`
//! lists the MCP servers, `/connect NAME` and `/disconnect NAME` act on one, `/exit` ends. A
//! server's prompt (`/mcp__<server>__<prompt> ARGS`) and resource mentions (`@<server>:<uri>`)
//! are expanded by the agent like every other message's (PRM-2, PRM-3).
//! Tool calls and their results are printed before the model's answer.

use std::io::{self, Write};

use tokio::io::{AsyncBufRead, AsyncBufReadExt};

use crate::agent::{Agent, TurnReport};

/// Lines of a tool result shown in the terminal.
const RESULT_LINES: usize = 12;

/// Reads lines from `input` until it ends or `/exit`, writing to `out`. `prompt` prints `> `
/// before each line (for an interactive terminal). The agent is not destroyed here.
pub async fn chat<R, W>(agent: &mut Agent, input: R, out: &mut W, prompt: bool) -> io::Result<()>
where
    R: AsyncBufRead + Unpin,
    W: Write,
{
    writeln!(
        out,
        "wave-mcp chat in {} (session {}). /mcp lists MCP servers, /connect NAME, /disconnect NAME, /exit quits; /mcp__<server>__<prompt> ARGS sends a server's prompt, @<server>:<uri> attaches a resource.",
        agent.workdir().display(),
        agent.session_id()
    )?;
    let mut lines = input.lines();
    loop {
        if prompt {
            write!(out, "> ")?;
            out.flush()?;
        }
        let Some(line) = lines.next_line().await? else {
            return Ok(());
        };
        let line = line.trim();
        let (command, argument) = match line.split_once(char::is_whitespace) {
            Some((command, argument)) => (command, argument.trim()),
            None => (line, ""),
        };
        match command {
            "" => {}
            "/exit" | "/quit" => return Ok(()),
            "/mcp" => print_servers(agent, out)?,
            "/connect" => {
                let result = agent.connect_mcp_server(argument).await;
                print_action(out, "connected", argument, result)?;
            }
            "/disconnect" => {
                let result = agent.disconnect_mcp_server(argument).await;
                print_action(out, "disconnected", argument, result)?;
            }
            _ => match agent.send_message(line).await {
                Ok(report) => print_turn(out, &report)?,
                Err(e) => writeln!(out, "error: {e}")?,
            },
        }
        out.flush()?;
    }
}

fn print_servers<W: Write>(agent: &Agent, out: &mut W) -> io::Result<()> {
    let servers = match agent.get_mcp_servers() {
        Ok(servers) => servers,
        Err(e) => return writeln!(out, "error: {e}"),
    };
    if servers.is_empty() {
        return writeln!(
            out,
            "no MCP servers configured (add them to .mcp.json in the project or to ~/.wave/mcp.json)"
        );
    }
    for server in servers {
        let cached = if server.tools_from_cache {
            " (cached)"
        } else {
            ""
        };
        writeln!(
            out,
            "{}  [{}]  {}  {} tools{cached}",
            server.name,
            server.source.as_str(),
            server.status.as_str(),
            server.tools.len()
        )?;
        if let Some(error) = &server.error {
            writeln!(out, "  error: {error}")?;
        }
    }
    Ok(())
}

fn print_action<W: Write>(
    out: &mut W,
    done: &str,
    name: &str,
    result: Result<(), crate::AgentError>,
) -> io::Result<()> {
    match result {
        Ok(()) => writeln!(out, "{done} {name}"),
        Err(e) => writeln!(out, "error: {e}"),
    }
}

fn print_turn<W: Write>(out: &mut W, report: &TurnReport) -> io::Result<()> {
    for step in &report.tool_calls {
        writeln!(out, "tool call: {} {}", step.call.name, step.call.arguments)?;
        let label = if step.outcome.is_error {
            "tool error"
        } else {
            "tool result"
        };
        let lines: Vec<&str> = step.outcome.text.lines().collect();
        writeln!(out, "{label}:")?;
        for line in lines.iter().take(RESULT_LINES) {
            writeln!(out, "  {line}")?;
        }
        if lines.len() > RESULT_LINES {
            writeln!(out, "  …({} more lines)", lines.len() - RESULT_LINES)?;
        }
    }
    writeln!(out, "{}", report.text)
}
