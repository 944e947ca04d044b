//! A terminal conversation (`wave-mcp chat`): one line of input is one user message; `/mcp`
//! lists the MCP servers, `/connect NAME` and `/disconnect NAME` act on one, `/exit` ends.
//! The model's text is printed as it streams, each tool call before it runs and its result
//! when it returns (LONG-1). An interrupt (Ctrl-C) stops the running turn; a second one, or one
//! at the prompt, quits (LONG-3).
//! A server's prompt (`/mcp__<server>__<prompt> ARGS`) and resource mentions (`@<server>:<uri>`)
//! are expanded by the agent like every other message's (PRM-2, PRM-3).
//! Everything a server or the model wrote is printed through `terminal_safe`: control
//! characters show escaped, so no escape sequence reaches the terminal (TRUST-7).

use std::io::{self, Write};
use std::sync::Arc;

use tokio::io::{AsyncBufRead, AsyncBufReadExt};
use tokio::sync::mpsc;
use wave_mcp_manager::inert::terminal_safe as safe;

use crate::agent::Agent;
use crate::consent::Consent;
use crate::live::{CancellationToken, TurnEvent, TurnHooks};
use crate::message::{Message, Role};

/// Lines of a tool result shown in the terminal.
const RESULT_LINES: usize = 12;

/// Reads lines from `input` until it ends or `/exit`, writing to `out`. `prompt` prints `> `
/// before each line (for an interactive terminal). The agent is not destroyed here.
pub async fn chat<R, W>(agent: &mut Agent, input: R, out: &mut W, prompt: bool) -> io::Result<()>
where
    R: AsyncBufRead + Unpin,
    W: Write,
{
    let (_never, interrupts) = mpsc::unbounded_channel();
    chat_with_interrupts(agent, input, out, prompt, interrupts, None).await
}

/// [`chat`], where each message on `interrupts` is a Ctrl-C: it stops the running turn, and
/// a second one (or one at the prompt) ends the chat. `consent` asks the user to approve
/// project servers and to confirm tool calls (TRUST-3, TRUST-5); without it nothing is
/// approved and every call that would ask is declined.
pub async fn chat_with_interrupts<R, W>(
    agent: &mut Agent,
    input: R,
    out: &mut W,
    prompt: bool,
    mut interrupts: mpsc::UnboundedReceiver<()>,
    consent: Option<Arc<dyn Consent>>,
) -> io::Result<()>
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
        let line = tokio::select! {
            line = lines.next_line() => line?,
            Some(()) = interrupts.recv() => None,
        };
        let Some(line) = line else {
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
            _ => {
                let consent = consent.clone();
                if run_turn(agent, line, out, &mut interrupts, consent).await? == Ended::Quit {
                    return Ok(());
                }
            }
        }
        out.flush()?;
    }
}

fn print_servers<W: Write>(agent: &Agent, out: &mut W) -> io::Result<()> {
    let servers = match agent.get_mcp_servers() {
        Ok(servers) => servers,
        Err(e) => return writeln!(out, "error: {}", safe(&e.to_string())),
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
            writeln!(out, "  error: {}", safe(error))?;
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
        Ok(()) => writeln!(out, "{done} {}", safe(name)),
        Err(e) => writeln!(out, "error: {}", safe(&e.to_string())),
    }
}

/// How a turn at the terminal ended.
#[derive(Debug, PartialEq, Eq)]
enum Ended {
    Done,
    /// A second interrupt: leave the chat.
    Quit,
}

/// Runs one turn, printing its events as they come.
async fn run_turn<W: Write>(
    agent: &mut Agent,
    line: &str,
    out: &mut W,
    interrupts: &mut mpsc::UnboundedReceiver<()>,
    consent: Option<Arc<dyn Consent>>,
) -> io::Result<Ended> {
    let (events, mut received) = mpsc::unbounded_channel();
    let cancel = CancellationToken::new();
    let hooks = TurnHooks {
        events: Some(events),
        cancel: cancel.clone(),
        consent,
    };
    let mut printer = Printer::default();
    let turn = agent.send_message_live(line, hooks);
    tokio::pin!(turn);
    let result = loop {
        tokio::select! {
            result = &mut turn => break result,
            Some(event) = received.recv() => printer.show(out, event)?,
            Some(()) = interrupts.recv() => {
                if cancel.is_cancelled() {
                    return Ok(Ended::Quit);
                }
                cancel.cancel();
                printer.end_text(out)?;
                writeln!(out, "(stopping the turn; Ctrl-C again quits)")?;
                out.flush()?;
            }
        }
    };
    while let Ok(event) = received.try_recv() {
        printer.show(out, event)?;
    }
    printer.end_text(out)?;
    match result {
        Ok(report) if report.cancelled => writeln!(out, "(turn stopped)")?,
        Ok(_) => {}
        Err(e) => writeln!(out, "error: {}", safe(&e.to_string()))?,
    }
    Ok(Ended::Done)
}

/// Prints a turn's events: streamed text as it comes, tool calls and results.
#[derive(Default)]
struct Printer {
    /// Text of an assistant message is being printed (no newline yet).
    in_text: bool,
}

impl Printer {
    fn show<W: Write>(&mut self, out: &mut W, event: TurnEvent) -> io::Result<()> {
        match event {
            TurnEvent::Delta(text) => {
                self.in_text = true;
                write!(out, "{}", safe(&text))?;
            }
            TurnEvent::Message(message) => self.message(out, &message)?,
            TurnEvent::Progress {
                progress,
                total,
                message,
                ..
            } => {
                self.end_text(out)?;
                let of = total.map(|t| format!("/{t}")).unwrap_or_default();
                let message = message.map(|m| format!(" {m}")).unwrap_or_default();
                writeln!(out, "progress: {progress}{of}{}", safe(&message))?;
            }
        }
        out.flush()
    }

    fn end_text<W: Write>(&mut self, out: &mut W) -> io::Result<()> {
        if std::mem::take(&mut self.in_text) {
            writeln!(out)?;
        }
        Ok(())
    }

    fn message<W: Write>(&mut self, out: &mut W, message: &Message) -> io::Result<()> {
        match message.role {
            Role::User => Ok(()),
            Role::Assistant => {
                self.end_text(out)?;
                for call in &message.tool_calls {
                    let call = format!("{} {}", call.name, call.arguments);
                    writeln!(out, "tool call: {}", safe(&call))?;
                }
                Ok(())
            }
            Role::Tool => {
                let label = if message.is_error {
                    "tool error"
                } else {
                    "tool result"
                };
                let lines: Vec<&str> = message.content.lines().collect();
                writeln!(out, "{label}:")?;
                for line in lines.iter().take(RESULT_LINES) {
                    writeln!(out, "  {}", safe(line))?;
                }
                if lines.len() > RESULT_LINES {
                    writeln!(out, "  …({} more lines)", lines.len() - RESULT_LINES)?;
                }
                Ok(())
            }
        }
    }
}
