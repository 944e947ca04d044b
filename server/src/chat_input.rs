//! `wave-mcp chat`'s input on a terminal (SRV-3): each line is read with rustyline, only while
//! the chat waits for one (a turn's questions read the terminal themselves), and Tab completes
//! what is typed: the first word `/mcp__<server>__<prompt>` (servers, then their prompts), then
//! a prompt's argument names (`name=`) and, after `name=`, the server's suggestions for that
//! argument from `completion/complete` with the arguments already typed as context: the path
//! `wave/mcp/complete` takes, so a server without the `completions` capability is never asked.
//! Ctrl-C or Ctrl-D at the prompt ends the input (the chat quits, as before). Lines typed ahead of
//! the prompt are read as the terminal gives them, without editing.

use std::collections::HashMap;
use std::pin::Pin;
use std::sync::mpsc as std_mpsc;
use std::task::{Context, Poll};

use rustyline::completion::{Completer, Pair};
use rustyline::error::ReadlineError;
use rustyline::highlight::Highlighter;
use rustyline::hint::Hinter;
use rustyline::validate::Validator;
use rustyline::{Editor, Helper};
use tokio::io::{AsyncRead, ReadBuf};
use tokio::sync::mpsc;
use wave_mcp_manager::{CompletionReference, McpManager, PromptSummary, Status};

/// The prompt rustyline shows (the chat shows none of its own on a terminal).
const PROMPT: &str = "> ";

/// The chat's input: lines from rustyline on a thread of their own, one per request.
pub(crate) struct TerminalInput {
    /// Asks the reading thread for the next line.
    ask: Option<std_mpsc::Sender<()>>,
    lines: mpsc::UnboundedReceiver<String>,
    waiting: bool,
    pending: Vec<u8>,
}

/// Starts reading the terminal with Tab completion from `manager`.
pub(crate) fn terminal(manager: McpManager) -> anyhow::Result<TerminalInput> {
    let config = rustyline::Config::builder()
        .completion_type(rustyline::CompletionType::List)
        .auto_add_history(true)
        .build();
    let mut editor: Editor<ChatHelper, rustyline::history::MemHistory> =
        Editor::with_history(config, rustyline::history::MemHistory::new())?;
    let runtime = tokio::runtime::Handle::current();
    editor.set_helper(Some(ChatHelper { manager, runtime }));
    let (ask, asked) = std_mpsc::channel::<()>();
    let (send, lines) = mpsc::unbounded_channel();
    std::thread::Builder::new()
        .name("chat input".into())
        .spawn(move || {
            // Input sent along with the start (a script on a terminal) may reach the terminal
            // just after the chat is ready: the first prompt gives it a moment.
            let mut wait = FIRST_LINE_GRACE;
            while asked.recv().is_ok() {
                // Lines typed ahead (or pasted) are read as the terminal gives them, one at a
                // time: rustyline reads whatever is there, which would take the answers to a
                // turn's questions (read from stdin by the consent and the elicitor) with it.
                if input_pending(std::mem::take(&mut wait)) {
                    print!("{PROMPT}");
                    let _ = std::io::Write::flush(&mut std::io::stdout());
                    let mut line = String::new();
                    match std::io::BufRead::read_line(&mut std::io::stdin().lock(), &mut line) {
                        Ok(n) if n > 0 => {
                            let line = line.trim_end_matches(['\n', '\r']).to_string();
                            if send.send(line).is_err() {
                                return;
                            }
                            continue;
                        }
                        _ => return,
                    }
                }
                match editor.readline(PROMPT) {
                    Ok(line) => {
                        if send.send(line).is_err() {
                            return;
                        }
                    }
                    // Ctrl-C or Ctrl-D at the prompt, or the terminal is gone: the input ends.
                    Err(ReadlineError::Interrupted | ReadlineError::Eof) => return,
                    Err(e) => {
                        eprintln!("cannot read the terminal: {e}");
                        return;
                    }
                }
            }
        })?;
    Ok(TerminalInput {
        ask: Some(ask),
        lines,
        waiting: false,
        pending: Vec::new(),
    })
}

impl AsyncRead for TerminalInput {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<std::io::Result<()>> {
        let this = &mut *self;
        if this.pending.is_empty() {
            if !this.waiting {
                let asked = this.ask.as_ref().is_some_and(|ask| ask.send(()).is_ok());
                if !asked {
                    return Poll::Ready(Ok(()));
                }
                this.waiting = true;
            }
            match this.lines.poll_recv(cx) {
                Poll::Pending => return Poll::Pending,
                Poll::Ready(None) => {
                    this.ask = None;
                    return Poll::Ready(Ok(()));
                }
                Poll::Ready(Some(line)) => {
                    this.waiting = false;
                    this.pending = format!("{line}\n").into_bytes();
                }
            }
        }
        let n = this.pending.len().min(buf.remaining());
        buf.put_slice(&this.pending[..n]);
        this.pending.drain(..n);
        Poll::Ready(Ok(()))
    }
}

/// How long the first prompt waits for input typed ahead before it starts editing.
const FIRST_LINE_GRACE: std::time::Duration = std::time::Duration::from_millis(300);

/// Whether the terminal holds input not read yet (typed ahead of the prompt), waiting up to
/// `wait` for some.
#[cfg(unix)]
fn input_pending(wait: std::time::Duration) -> bool {
    use nix::poll::{PollFd, PollFlags, PollTimeout, poll};
    let stdin = std::io::stdin();
    let mut fds = [PollFd::new(
        std::os::fd::AsFd::as_fd(&stdin),
        PollFlags::POLLIN,
    )];
    let wait = PollTimeout::try_from(wait).unwrap_or(PollTimeout::ZERO);
    poll(&mut fds, wait).is_ok_and(|ready| ready > 0)
}

#[cfg(not(unix))]
fn input_pending(_wait: std::time::Duration) -> bool {
    false
}

/// Tab completion from the manager's servers.
struct ChatHelper {
    manager: McpManager,
    runtime: tokio::runtime::Handle,
}

impl Helper for ChatHelper {}
impl Hinter for ChatHelper {
    type Hint = String;
}
impl Highlighter for ChatHelper {}
impl Validator for ChatHelper {}

impl Completer for ChatHelper {
    type Candidate = Pair;

    fn complete(
        &self,
        line: &str,
        pos: usize,
        _ctx: &rustyline::Context<'_>,
    ) -> rustyline::Result<(usize, Vec<Pair>)> {
        let before = &line[..pos];
        let Some(command_end) = before.find(char::is_whitespace) else {
            return Ok((0, self.commands(before)));
        };
        let Some(command) = before[..command_end].strip_prefix('/') else {
            return Ok((pos, Vec::new()));
        };
        let Some((server, prompt)) = self.prompt(command) else {
            return Ok((pos, Vec::new()));
        };
        let word_start = before.rfind(char::is_whitespace).map_or(0, |i| {
            i + before[i..].chars().next().map_or(1, char::len_utf8)
        });
        let word = &before[word_start..];
        let given: HashMap<String, String> = before[command_end..word_start]
            .split_whitespace()
            .filter_map(|w| w.split_once('='))
            .map(|(k, v)| (k.to_string(), unquote(v)))
            .collect();
        let Some((name, typed)) = word.split_once('=') else {
            // An argument's name.
            let names = prompt
                .arguments
                .iter()
                .filter(|a| a.name.starts_with(word) && !given.contains_key(&a.name))
                .map(|a| pair(&format!("{}=", a.name)))
                .collect();
            return Ok((word_start, names));
        };
        let reference = CompletionReference::for_prompt(prompt.name.clone());
        let typed = unquote(typed);
        let asked = self
            .manager
            .complete(&server, reference, name, &typed, given);
        let values = match self.runtime.block_on(asked) {
            Ok(info) => info.values,
            Err(e) => {
                tracing::info!("no completions from {server}: {e}");
                Vec::new()
            }
        };
        let values = values.iter().map(|v| pair(&quoted(v))).collect();
        Ok((word_start + name.len() + 1, values))
    }
}

impl ChatHelper {
    /// Completions of a first word: `/mcp__<server>__` for each server whose prefix fits, and
    /// the prompt commands of the servers it names (a server is connected for this).
    fn commands(&self, typed: &str) -> Vec<Pair> {
        let snapshot = self.manager.snapshot();
        let mut found = Vec::new();
        for server in &snapshot.servers {
            let prefix = format!("/{}", server_prefix(&server.name));
            if prefix.starts_with(typed) && prefix != typed {
                found.push(pair(&prefix));
            } else if typed.starts_with(&prefix) {
                let prompts = self.prompts_of(&server.name);
                found.extend(
                    prompts
                        .iter()
                        .map(|p| format!("/{} ", p.full_name))
                        .filter(|c| c.starts_with(typed))
                        .map(|c| pair(&c)),
                );
            }
        }
        found
    }

    /// The server and prompt of a command `mcp__<server>__<prompt>`.
    fn prompt(&self, command: &str) -> Option<(String, PromptSummary)> {
        let server = self.manager.snapshot().owner_of(command)?.name.clone();
        let prompt = self
            .prompts_of(&server)
            .into_iter()
            .find(|p| p.full_name == command)?;
        Some((server, prompt))
    }

    /// `server`'s prompts, from its live connection: a server not connected yet is connected
    /// (a project server only once approved, as for any dial).
    fn prompts_of(&self, server: &str) -> Vec<PromptSummary> {
        let manager = &self.manager;
        let listed = self.runtime.block_on(async {
            let connected = manager
                .snapshot()
                .server(server)
                .is_some_and(|s| s.status == Status::Connected);
            if !connected {
                manager.connect(server).await?;
            }
            manager.live_catalog(server).await
        });
        match listed {
            Ok(catalog) => catalog.prompts.clone(),
            Err(e) => {
                tracing::info!("no prompts of {server} to complete: {e}");
                Vec::new()
            }
        }
    }
}

/// `mcp__<server>__` as the chat's commands spell it.
fn server_prefix(server: &str) -> String {
    format!("mcp__{}__", wave_mcp_manager::names::sanitize(server))
}

fn pair(text: &str) -> Pair {
    Pair {
        display: text.trim_end().to_string(),
        replacement: text.to_string(),
    }
}

/// A value as the chat's argument syntax reads it: in double quotes when it has whitespace or
/// quotes.
fn quoted(value: &str) -> String {
    if value.is_empty() || value.contains(|c: char| c.is_whitespace() || c == '"' || c == '\'') {
        format!("\"{}\"", value.replace('\\', "\\\\").replace('"', "\\\""))
    } else {
        value.to_string()
    }
}

/// What a typed value means without its opening quote (completion of a value being typed).
fn unquote(value: &str) -> String {
    let inner = value
        .strip_prefix('"')
        .or_else(|| value.strip_prefix('\''))
        .unwrap_or(value);
    let inner = inner
        .strip_suffix('"')
        .or_else(|| inner.strip_suffix('\''))
        .unwrap_or(inner);
    inner.replace("\\\"", "\"").replace("\\\\", "\\")
}
