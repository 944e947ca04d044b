//! The command line: `servers`, `tools`, `call`, `login`, `logout`, `approve`, `revoke` and
//! `chat`, and `lsp` (the IDE sidecar). Server text is printed through `terminal_safe`, `--json`
//! output through `json_safe` (serde_json leaves DEL and C1 controls raw) (TRUST-7).

use std::path::PathBuf;
use std::sync::Arc;

use anyhow::{Context, Result, anyhow, bail};
use clap::{Parser, Subcommand};
use serde_json::{Map, Value, json};
use wave_mcp_manager::inert::{json_safe, terminal_safe as safe};
use wave_mcp_manager::{
    ManagerOptions, McpManager, McpTool, ServerSnapshot, UrlOpener, result_text,
};

use crate::view::{annotations_view, server_view};

#[derive(Parser)]
#[command(
    name = "wave-mcp",
    version,
    about = "MCP servers of a coding agent: list, inspect, call"
)]
pub struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(clap::Args)]
struct Common {
    /// Project directory (its `.mcp.json` is the project config). Default: the current directory.
    #[arg(long, value_name = "DIR")]
    workdir: Option<PathBuf>,
    /// Print JSON (camelCase fields) instead of text.
    #[arg(long)]
    json: bool,
}

#[derive(Subcommand)]
enum Command {
    /// List every configured server with its source, transport, status and (cached) tools.
    /// Starts no server.
    Servers {
        #[command(flatten)]
        common: Common,
    },
    /// Connect one server, print its instructions and tools, then shut it down.
    Tools {
        server: String,
        #[command(flatten)]
        common: Common,
    },
    /// Connect one server, call one tool, print the result, then shut it down.
    Call {
        server: String,
        /// The tool's own name or its full name (`mcp__<server>__<tool>`).
        tool: String,
        /// Arguments as a JSON object, e.g. '{"text": "hi"}'.
        #[arg(value_name = "JSON_ARGS")]
        arguments: Option<String>,
        #[command(flatten)]
        common: Common,
    },
    /// Connect one server, print its prompts (the chat's `/mcp__<server>__<prompt>` commands)
    /// with their arguments, then shut it down.
    Prompts {
        server: String,
        #[command(flatten)]
        common: Common,
    },
    /// Connect one server, print its resources (`@<server>:<uri>` in the chat) and resource
    /// templates, then shut it down.
    Resources {
        server: String,
        #[command(flatten)]
        common: Common,
    },
    /// Connect one server and print its log: its log messages (level, logger) and its stderr
    /// lines; with --follow, keep printing new entries until Ctrl-C, then shut it down.
    Logs {
        server: String,
        /// Keep printing entries as they come.
        #[arg(long)]
        follow: bool,
        #[command(flatten)]
        common: Common,
    },
    /// Sign in to a remote server (OAuth, in the browser), then check it connects. The tokens
    /// are stored in ~/.wave/mcp-credentials.json for every later use.
    Login {
        server: String,
        #[arg(long, value_name = "DIR")]
        workdir: Option<PathBuf>,
    },
    /// Sign out of a remote server: revoke and delete its stored tokens.
    Logout {
        server: String,
        #[arg(long, value_name = "DIR")]
        workdir: Option<PathBuf>,
    },
    /// Approve a server of the project's .mcp.json exactly as it is written now: from then on it
    /// may run, until its entry changes. Approvals are yours, kept in
    /// ~/.wave/trusted-servers.json. Starts nothing.
    Approve {
        server: String,
        #[arg(long, value_name = "DIR")]
        workdir: Option<PathBuf>,
    },
    /// Forget the approval of a project server (and the tools you allowed always for it): it
    /// does not run again until approved.
    Revoke {
        server: String,
        #[arg(long, value_name = "DIR")]
        workdir: Option<PathBuf>,
    },
    /// Talk to the model (WAVE_BASE_URL, WAVE_API_KEY, WAVE_MODEL) with the MCP servers' tools,
    /// one stdin line per message. `/mcp` lists servers, `/connect NAME`, `/disconnect NAME`,
    /// `/exit` quits; `/mcp__<server>__<prompt> args` sends a server's prompt, `@<server>:<uri>`
    /// attaches a resource.
    Chat {
        /// Project directory (its `.mcp.json` is the project config). Default: the current
        /// directory.
        #[arg(long, value_name = "DIR")]
        workdir: Option<PathBuf>,
    },
    /// Add a server to a config file: `add NAME [flags] -- COMMAND [ARGS...]` or
    /// `add NAME --transport http|sse URL`. Values are written as given (`${VAR}` stays).
    /// A server added to the project counts as approved.
    Add {
        name: String,
        /// Which file: the workdir's .mcp.json (project) or ~/.wave/mcp.json (user).
        #[arg(long, value_enum, default_value = "project")]
        scope: crate::cli_config::Scope,
        #[arg(long, value_name = "DIR")]
        workdir: Option<PathBuf>,
        /// An environment variable of the server process (repeatable).
        #[arg(long = "env", value_name = "KEY=VALUE")]
        env: Vec<String>,
        /// An HTTP header sent to a remote server (repeatable).
        #[arg(long = "header", value_name = "NAME: VALUE")]
        headers: Vec<String>,
        /// A remote server's transport; its URL follows.
        #[arg(long, value_enum)]
        transport: Option<crate::cli_config::Transport>,
        /// The URL of a remote server (with --transport).
        #[arg(value_name = "URL")]
        url: Option<String>,
        /// The command and its arguments, after `--`.
        #[arg(last = true, allow_hyphen_values = true, value_name = "COMMAND")]
        command: Vec<String>,
        /// Add a server of the MCP Registry (WAVE_REGISTRY_URL, default the official one):
        /// its first npm, PyPI or OCI package, else its first remote. The values it needs
        /// become ${VAR} placeholders, listed after the add.
        #[arg(long, value_name = "SERVER[@VERSION]", conflicts_with_all = ["transport", "url", "command", "env", "headers"])]
        from_registry: Option<String>,
    },
    /// Add a server given as the JSON of its entry, e.g. '{"command": "npx", "args": ["x"]}'.
    AddJson {
        name: String,
        #[arg(value_name = "ENTRY_JSON")]
        json: String,
        #[arg(long, value_enum, default_value = "project")]
        scope: crate::cli_config::Scope,
        #[arg(long, value_name = "DIR")]
        workdir: Option<PathBuf>,
    },
    /// Remove a server from the project's .mcp.json, else from ~/.wave/mcp.json (or --scope's).
    Remove {
        name: String,
        #[arg(long, value_enum)]
        scope: Option<crate::cli_config::Scope>,
        #[arg(long, value_name = "DIR")]
        workdir: Option<PathBuf>,
    },
    /// Print a server's entry as written, from the project's file, else the user's.
    Get {
        name: String,
        #[arg(long, value_enum)]
        scope: Option<crate::cli_config::Scope>,
        #[arg(long, value_name = "DIR")]
        workdir: Option<PathBuf>,
    },
    /// Copy the servers of another host's config (Claude Desktop, Claude Code, VS Code, Cursor);
    /// names that exist are left alone.
    Import {
        #[arg(long, value_enum)]
        from: crate::cli_config::Host,
        #[arg(long, value_enum, default_value = "user")]
        scope: crate::cli_config::Scope,
        /// Show what would be added; write nothing.
        #[arg(long)]
        dry_run: bool,
        #[arg(long, value_name = "DIR")]
        workdir: Option<PathBuf>,
    },
    /// The MCP Registry (WAVE_REGISTRY_URL, default https://registry.modelcontextprotocol.io).
    Registry {
        #[command(subcommand)]
        command: RegistryCommand,
    },
    /// Run the IDE sidecar: LSP over stdin/stdout with the `wave/*` methods (docs/protocol.md).
    /// The workdir comes from `initialize`.
    Lsp {
        /// Accepted for LSP clients that pass it (vscode-languageclient's stdio transport);
        /// stdio is the only transport.
        #[arg(long)]
        stdio: bool,
    },
}

#[derive(Subcommand)]
enum RegistryCommand {
    /// Search the registry's servers by name (the latest version of each).
    Search {
        term: String,
        /// How many servers to show.
        #[arg(long, default_value_t = 30, value_parser = clap::value_parser!(u32).range(1..=100))]
        limit: u32,
    },
}

pub async fn run(cli: Cli) -> Result<()> {
    // Commands that spawn servers first reap the trees of crashed owners (REAP-2), in the
    // background; the pass is waited for before exiting, so it is never cut short.
    let reaper = match &cli.command {
        Command::Tools { .. }
        | Command::Call { .. }
        | Command::Chat { .. }
        | Command::Prompts { .. }
        | Command::Resources { .. } => {
            Some(wave_mcp_manager::registry::reap_orphans_at_start(None))
        }
        _ => None,
    };
    let result = run_command(cli).await;
    if let Some(reaper) = reaper {
        tokio::task::spawn_blocking(move || reaper.finish())
            .await
            .ok();
    }
    result
}

async fn run_command(cli: Cli) -> Result<()> {
    match cli.command {
        Command::Servers { common } => servers(common),
        Command::Tools { server, common } => tools(&server, common).await,
        Command::Call {
            server,
            tool,
            arguments,
            common,
        } => call(&server, &tool, arguments.as_deref(), common).await,
        Command::Prompts { server, common } => {
            let manager = connected(&server, &common).await?;
            let result = crate::cli_catalog::prompts(&manager, &server, common.json).await;
            manager.cleanup().await;
            result
        }
        Command::Resources { server, common } => {
            let manager = connected(&server, &common).await?;
            let result = crate::cli_catalog::resources(&manager, &server, common.json).await;
            manager.cleanup().await;
            result
        }
        Command::Logs {
            server,
            follow,
            common,
        } => {
            let manager = connected(&server, &common).await?;
            let result = logs(&manager, &server, follow).await;
            manager.cleanup().await;
            result
        }
        Command::Login { server, workdir } => login(&server, workdir).await,
        Command::Logout { server, workdir } => logout(&server, workdir).await,
        Command::Approve { server, workdir } => approve(&server, workdir).await,
        Command::Revoke { server, workdir } => revoke(&server, workdir).await,
        Command::Chat { workdir } => chat(workdir).await,
        Command::Add {
            name,
            scope,
            workdir,
            env,
            headers,
            transport,
            url,
            command,
            from_registry,
        } => {
            let places = crate::cli_config::Places::new(workdir)?;
            if let Some(reference) = from_registry {
                return crate::cli_registry::add(&places, scope, &name, &reference).await;
            }
            let entry = crate::cli_config::entry_from_flags(crate::cli_config::AddArgs {
                transport,
                env,
                headers,
                url,
                command,
            })?;
            crate::cli_config::add(&places, scope, &name, entry)
        }
        Command::AddJson {
            name,
            json,
            scope,
            workdir,
        } => {
            let places = crate::cli_config::Places::new(workdir)?;
            let entry = crate::cli_config::entry_from_json(&name, &json)?;
            crate::cli_config::add(&places, scope, &name, entry)
        }
        Command::Remove {
            name,
            scope,
            workdir,
        } => crate::cli_config::remove(&crate::cli_config::Places::new(workdir)?, scope, &name),
        Command::Get {
            name,
            scope,
            workdir,
        } => crate::cli_config::get(&crate::cli_config::Places::new(workdir)?, scope, &name),
        Command::Import {
            from,
            scope,
            dry_run,
            workdir,
        } => crate::cli_config::import(
            &crate::cli_config::Places::new(workdir)?,
            from,
            scope,
            dry_run,
        ),
        Command::Registry {
            command: RegistryCommand::Search { term, limit },
        } => crate::cli_registry::search(&term, limit).await,
        Command::Lsp { stdio: _ } => crate::lsp::run().await,
    }
}

fn manager(common: &Common) -> Result<McpManager> {
    let workdir = match &common.workdir {
        Some(dir) => dir.clone(),
        None => std::env::current_dir().context("cannot read the current directory")?,
    };
    if !workdir.is_dir() {
        bail!("--workdir {}: not a directory", workdir.display());
    }
    let workdir = std::path::absolute(&workdir)
        .with_context(|| format!("--workdir {}", workdir.display()))?;
    let manager = McpManager::new(ManagerOptions {
        workdir,
        ..ManagerOptions::default()
    });
    // A server's questions are asked on the terminal, or declined (LONG-5).
    manager.set_elicitor(crate::ask::terminal());
    Ok(manager)
}

fn servers(common: Common) -> Result<()> {
    let manager = manager(&common)?;
    let snapshot = manager.snapshot();
    if common.json {
        let views: Vec<_> = snapshot.servers.iter().map(server_view).collect();
        println!("{}", json_safe(&serde_json::to_string_pretty(&views)?));
        return Ok(());
    }
    if snapshot.servers.is_empty() {
        println!(
            "no MCP servers configured for {} (add them to .mcp.json there or to ~/.wave/mcp.json)",
            manager.workdir().display()
        );
    }
    for server in &snapshot.servers {
        print_server(server);
    }
    Ok(())
}

/// `println!` of a line that quotes the config (a project's `.mcp.json` is a repository's text,
/// as hostile as a server's: TRUST-7): no escape sequence of it reaches the terminal.
macro_rules! say {
    ($($arg:tt)*) => {
        println!("{}", safe(&format!($($arg)*)))
    };
}

fn print_server(server: &ServerSnapshot) {
    say!(
        "{}  [{}, {}]  {}",
        server.name,
        server.source.as_str(),
        server.transport,
        server.status.as_str()
    );
    if let Some(command) = &server.command {
        let args = server
            .args
            .iter()
            .map(|a| display_arg(a))
            .collect::<Vec<_>>()
            .join(" ");
        say!(
            "  command: {command}{}{args}",
            if args.is_empty() { "" } else { " " }
        );
    }
    if let Some(url) = &server.url {
        let signed_in = if server.signed_in {
            "  (signed in)"
        } else {
            ""
        };
        say!("  url:     {url}{signed_in}");
    }
    if let Some(path) = &server.config_path {
        say!("  config:  {}", path.display());
    }
    if let Some(version) = &server.protocol_version {
        // SPEC-1: the live revision, or the last one negotiated with the entry as written.
        let when = if server.status == wave_mcp_manager::Status::Connected {
            ""
        } else {
            "  (last negotiated)"
        };
        println!("  mcp:     {}{when}", safe(version));
    }
    if let Some(error) = &server.error {
        // A project server waiting for approval is not in error: its reason says what to do.
        let label = match server.status {
            wave_mcp_manager::Status::NeedsApproval => "approve:",
            _ => "error:  ",
        };
        say!("  {label} {error}");
    }
    let origin = match (server.tools_from_cache, server.last_connected_at) {
        (true, Some(at)) => format!(
            ", cached from the connection of {}",
            at.to_rfc3339_opts(chrono::SecondsFormat::Secs, true)
        ),
        (false, Some(at)) => format!(
            ", connected at {}",
            at.to_rfc3339_opts(chrono::SecondsFormat::Secs, true)
        ),
        _ => String::new(),
    };
    say!("  tools:   {}{origin}", server.tools.len());
    for tool in &server.tools {
        let off = if tool.enabled { "" } else { "  (switched off)" };
        say!("    {}{off}", tool.full_name);
    }
}

/// An argument as a shell user would read it: quoted when it has spaces, quotes or newlines.
pub(crate) fn display_arg(arg: &str) -> String {
    let plain = !arg.is_empty()
        && !arg
            .chars()
            .any(|c| c.is_whitespace() || c.is_control() || matches!(c, '"' | '\'' | '\\'));
    if plain {
        return arg.to_string();
    }
    format!("{arg:?}")
}

/// Connects one server (explicitly, LAZY-5) and hands back the manager for cleanup. A project
/// server the user has not approved is put to them on a terminal, else the error names the
/// command that approves it (TRUST-3).
async fn connected(server: &str, common: &Common) -> Result<McpManager> {
    let manager = manager(common)?;
    if let Err(e) = approved_on_terminal(&manager, server).await {
        manager.cleanup().await;
        return Err(e);
    }
    if let Err(e) = manager.connect(server).await {
        manager.cleanup().await;
        return Err(anyhow!(e));
    }
    Ok(manager)
}

/// Asks on a terminal to approve `server` when it waits for approval; `Ok` when it may run or
/// is not a project server waiting (the connect then says what is wrong).
async fn approved_on_terminal(manager: &McpManager, server: &str) -> Result<()> {
    use std::io::IsTerminal;

    let waiting = manager.awaiting_approval();
    let Some(approval) = waiting.into_iter().find(|a| a.name == server) else {
        return Ok(());
    };
    if !std::io::stdin().is_terminal() {
        return Err(anyhow!(wave_mcp_manager::Error::NeedsApproval(
            server.to_string()
        )));
    }
    let approved = tokio::task::spawn_blocking(move || {
        let (stdin, mut stderr) = (std::io::stdin(), std::io::stderr());
        crate::terminal_consent::ask_approval(&approval, &mut stdin.lock(), &mut stderr)
    })
    .await
    .unwrap_or(false);
    if !approved {
        bail!("MCP server \"{server}\" was not approved: nothing of it ran");
    }
    manager.approve(server).await?;
    Ok(())
}

/// The manager of `--workdir` (default: the current directory), for commands that start nothing.
fn workdir_manager(workdir: Option<PathBuf>) -> Result<McpManager> {
    manager(&Common {
        workdir,
        json: false,
    })
}

/// `wave-mcp approve NAME`: the entry as written now is approved (TRUST-1, TRUST-3).
async fn approve(server: &str, workdir: Option<PathBuf>) -> Result<()> {
    let manager = workdir_manager(workdir)?;
    let waiting = manager.awaiting_approval();
    let Some(approval) = waiting.iter().find(|a| a.name == server) else {
        manager.approve(server).await?;
        println!("MCP server \"{server}\" is already approved as written");
        return Ok(());
    };
    println!("{}", safe(&crate::terminal_consent::describe(approval)));
    manager.approve(server).await?;
    println!("approved: it runs from the next chat turn or connect, until its entry changes");
    Ok(())
}

/// `wave-mcp revoke NAME`: forgets the approval (TRUST-3).
async fn revoke(server: &str, workdir: Option<PathBuf>) -> Result<()> {
    let manager = workdir_manager(workdir)?;
    manager.revoke(server).await?;
    println!(
        "revoked the approval of MCP server \"{server}\": it does not run until approved again"
    );
    Ok(())
}

fn server_snapshot(manager: &McpManager, server: &str) -> Result<ServerSnapshot> {
    manager
        .snapshot()
        .servers
        .iter()
        .find(|s| s.name == server)
        .cloned()
        .ok_or_else(|| anyhow!("no MCP server named \"{server}\" is configured"))
}

fn server_tools(manager: &McpManager, server: &str) -> Vec<McpTool> {
    server_tools_switched(manager, server)
        .into_iter()
        .map(|(tool, _)| tool)
        .collect()
}

/// Every live tool of `server`, switched off ones included, with whether it is on (BUD-1).
fn server_tools_switched(manager: &McpManager, server: &str) -> Vec<(McpTool, bool)> {
    manager
        .all_tools()
        .into_iter()
        .filter(|(t, _)| t.server == server)
        .collect()
}

async fn tools(server: &str, common: Common) -> Result<()> {
    let manager = connected(server, &common).await?;
    let snapshot = server_snapshot(&manager, server);
    let tools = server_tools_switched(&manager, server);
    manager.cleanup().await;
    let snapshot = snapshot?;
    if common.json {
        let tools: Vec<Value> = tools
            .iter()
            .map(|(t, enabled)| {
                let mut tool = json!({
                    "name": t.name,
                    "fullName": t.full_name,
                    "description": t.description,
                    "inputSchema": *t.input_schema,
                    "enabled": enabled,
                });
                // SRV-4: the title, hints, output schema and icons the server declared.
                if let Some(annotations) =
                    annotations_view(t.title.as_deref(), t.annotations.as_ref())
                {
                    tool["annotations"] = json!(annotations);
                }
                if let Some(output) = &t.output_schema {
                    tool["outputSchema"] = Value::Object((**output.schema()).clone());
                }
                tool["icons"] = json!(crate::view::icons_view(&t.icons));
                // APPS-1: the tool's app and who may call it.
                if let Some(ui) = &t.ui {
                    tool["ui"] = json!(wave_mcp_protocol::ToolUiView {
                        resource_uri: ui.resource_uri.clone(),
                        visibility: ui.visibility.clone(),
                    });
                }
                tool
            })
            .collect();
        let out = json!({
            "server": server_view(&snapshot),
            "instructions": snapshot.instructions,
            "tools": tools,
        });
        println!("{}", json_safe(&serde_json::to_string_pretty(&out)?));
        return Ok(());
    }
    match &snapshot.instructions {
        Some(text) => println!("instructions of {server}:\n{}\n", safe(text)),
        None => println!("{server} gives no instructions\n"),
    }
    if let Some(version) = &snapshot.protocol_version {
        println!("{server} speaks MCP {}\n", safe(version));
    }
    println!("{} tools:", tools.len());
    for (tool, enabled) in &tools {
        let off = if *enabled { "" } else { "  (switched off)" };
        println!("\n{}{off}", tool.full_name);
        if let Some(about) = annotations_view(tool.title.as_deref(), tool.annotations.as_ref()) {
            println!("  {}", safe(&about_line(&about)));
        }
        if let Some(description) = &tool.description {
            println!("  {}", safe(description));
        }
        let input = Value::Object((*tool.input_schema).clone()).to_string();
        println!("  input: {}", safe(&input));
        if let Some(output) = &tool.output_schema {
            let output = Value::Object((**output.schema()).clone()).to_string();
            println!("  output: {}", safe(&output));
        }
    }
    Ok(())
}

/// A tool's title and hints on one line: `Drop a table [destructive, idempotent]` (SRV-4).
fn about_line(about: &wave_mcp_protocol::ToolAnnotationsView) -> String {
    let hints = [
        (about.read_only_hint, "read-only"),
        (about.destructive_hint, "destructive"),
        (about.idempotent_hint, "idempotent"),
        (about.open_world_hint, "open-world"),
    ];
    let hints: Vec<&str> = hints
        .iter()
        .filter(|(hint, _)| *hint == Some(true))
        .map(|(_, label)| *label)
        .collect();
    let title = about.title.as_deref().unwrap_or("");
    match hints.is_empty() {
        true => title.to_string(),
        false => format!("{title} [{}]", hints.join(", "))
            .trim_start()
            .to_string(),
    }
}

async fn login(server: &str, workdir: Option<PathBuf>) -> Result<()> {
    let manager = manager(&Common {
        workdir,
        json: false,
    })?;
    // The URL is always printed, so it can be opened by hand too (AUTH-2).
    let open: UrlOpener = Arc::new(|url: String| {
        eprintln!("open this URL in your browser to sign in:\n\n  {url}\n");
        Box::pin(async { false })
    });
    let timeout = wave_mcp_manager::login_timeout();
    let result = manager.login(server, open, timeout).await;
    manager.cleanup().await;
    result?;
    println!("signed in to {server}; it connected");
    Ok(())
}

async fn logout(server: &str, workdir: Option<PathBuf>) -> Result<()> {
    let manager = manager(&Common {
        workdir,
        json: false,
    })?;
    let result = manager.logout(server).await;
    manager.cleanup().await;
    result?;
    println!("signed out of {server}");
    Ok(())
}

async fn call(server: &str, tool: &str, arguments: Option<&str>, common: Common) -> Result<()> {
    let arguments = parse_arguments(arguments)?;
    let manager = connected(server, &common).await?;
    let result = call_connected(&manager, server, tool, arguments).await;
    manager.cleanup().await;
    let result = result?;
    if common.json {
        println!("{}", json_safe(&serde_json::to_string_pretty(&result)?));
    } else {
        println!("{}", safe(&result_text(&result)));
    }
    if result.is_error == Some(true) {
        bail!(
            "tool \"{tool}\" of \"{server}\" returned an error: {}",
            result_text(&result)
        );
    }
    Ok(())
}

async fn call_connected(
    manager: &McpManager,
    server: &str,
    tool: &str,
    arguments: Option<Map<String, Value>>,
) -> Result<wave_mcp_manager::CallToolResult> {
    let tools = server_tools(manager, server);
    let Some(found) = tools.iter().find(|t| t.name == tool || t.full_name == tool) else {
        let names: Vec<&str> = tools.iter().map(|t| t.name.as_str()).collect();
        bail!(
            "server \"{server}\" has no tool \"{tool}\" (it has: {})",
            names.join(", ")
        );
    };
    // Ctrl-C cancels the call: the server gets `notifications/cancelled` (LONG-3).
    let cancel = wave_mcp_manager::CancellationToken::new();
    let on_interrupt = cancel.clone();
    let listener = tokio::spawn(async move {
        if tokio::signal::ctrl_c().await.is_ok() {
            on_interrupt.cancel();
        }
    });
    let hooks = wave_mcp_manager::CallHooks {
        progress: Some(std::sync::Arc::new(|p: wave_mcp_manager::Progress| {
            let of = p.total.map(|t| format!("/{t}")).unwrap_or_default();
            let message = p.message.map(|m| format!(" {m}")).unwrap_or_default();
            eprintln!("progress: {}{of}{}", p.progress, safe(&message));
        })),
        cancel: Some(cancel),
    };
    let result = manager
        .call_tool_with(&found.full_name, arguments, &hooks)
        .await;
    listener.abort();
    Ok(result?)
}

fn parse_arguments(arguments: Option<&str>) -> Result<Option<Map<String, Value>>> {
    let Some(text) = arguments else {
        return Ok(None);
    };
    match serde_json::from_str(text) {
        Ok(Value::Object(map)) => Ok(Some(map)),
        Ok(_) => bail!("JSON_ARGS must be a JSON object, e.g. '{{\"text\": \"hi\"}}'"),
        Err(e) => bail!("JSON_ARGS is not valid JSON: {e}"),
    }
}

/// The `chat` subcommand: an [`Agent`](wave_mcp_agent::Agent) on stdin/stdout. The agent is
/// destroyed (every MCP process ended) at `/exit`, at the end of input and on Ctrl-C.
async fn chat(workdir: Option<PathBuf>) -> Result<()> {
    use std::io::IsTerminal;

    let workdir = match workdir {
        Some(dir) => dir,
        None => std::env::current_dir().context("cannot read the current directory")?,
    };
    if !workdir.is_dir() {
        bail!("--workdir {}: not a directory", workdir.display());
    }
    let mut agent = wave_mcp_agent::Agent::create(wave_mcp_agent::AgentOptions {
        workdir,
        ..wave_mcp_agent::AgentOptions::default()
    })?;
    agent.manager().set_elicitor(crate::ask::terminal());
    // SRV-3: on a terminal, lines are edited with Tab completion (rustyline shows the prompt);
    // otherwise stdin is read line by line as it comes.
    let input: Box<dyn tokio::io::AsyncRead + Unpin> = if std::io::stdin().is_terminal() {
        Box::new(crate::chat_input::terminal(agent.manager().clone())?)
    } else {
        Box::new(tokio::io::stdin())
    };
    let input = tokio::io::BufReader::new(input);
    let prompt = false;
    let mut stdout = std::io::stdout();
    // Ctrl-C stops the running turn; a second one (or one at the prompt) quits (LONG-3).
    let (interrupt, interrupts) = tokio::sync::mpsc::unbounded_channel();
    let listener = tokio::spawn(async move {
        while tokio::signal::ctrl_c().await.is_ok() {
            if interrupt.send(()).is_err() {
                return;
            }
        }
    });
    // Project servers are approved, and tool calls confirmed, on the terminal (TRUST-3, TRUST-5).
    let consent = Some(crate::terminal_consent::terminal());
    let result = wave_mcp_agent::chat_with_interrupts(
        &mut agent,
        input,
        &mut stdout,
        prompt,
        interrupts,
        consent,
    )
    .await;
    listener.abort();
    agent.destroy().await;
    Ok(result?)
}

/// `wave-mcp logs NAME [--follow]` (SRV-2): what the server logged so far, then (following)
/// each new entry until Ctrl-C or until its connection ends.
async fn logs(manager: &McpManager, server: &str, follow: bool) -> Result<()> {
    let mut appended = manager.subscribe_logs();
    let log = manager.logs(server);
    if log.dropped > 0 {
        println!("({} older entries dropped)", log.dropped);
    }
    let shown = log.entries.len();
    for entry in &log.entries {
        println!("{}", safe(&log_line(entry)));
    }
    if !follow {
        return Ok(());
    }
    // Entries appended between the subscription and the read are in both: skip those.
    let mut skip = shown;
    let mut snapshots = manager.subscribe();
    loop {
        tokio::select! {
            next = appended.recv() => match next {
                Ok((name, entry)) if name == server => {
                    if skip > 0 && log.entries.contains(&entry) {
                        skip -= 1;
                        continue;
                    }
                    skip = 0;
                    println!("{}", safe(&log_line(&entry)));
                }
                Ok(_) => {}
                Err(tokio::sync::broadcast::error::RecvError::Lagged(n)) => {
                    println!("({n} entries missed: the output was too slow)");
                }
                Err(_) => return Ok(()),
            },
            _ = snapshots.recv() => {
                let status = manager.snapshot().server(server).map(|s| s.status);
                if !matches!(
                    status,
                    Some(wave_mcp_manager::Status::Connected | wave_mcp_manager::Status::Reconnecting)
                ) {
                    return Ok(());
                }
            }
            _ = tokio::signal::ctrl_c() => return Ok(()),
        }
    }
}

/// One entry as a line: time, where it came from (its level for a message), logger, text.
fn log_line(entry: &wave_mcp_manager::logs::LogEntry) -> String {
    let time = entry
        .time
        .to_rfc3339_opts(chrono::SecondsFormat::Millis, true);
    let kind = match (&entry.source, &entry.level) {
        (wave_mcp_manager::logs::LogSource::Stderr, _) => "stderr",
        (_, Some(level)) => level.as_str(),
        (_, None) => "message",
    };
    let logger = entry
        .logger
        .as_deref()
        .map(|l| format!("[{l}] "))
        .unwrap_or_default();
    format!("{time} {kind:<9} {logger}{}", entry.text)
}
