//! `wave-mcp`: the command-line tool (list servers, list a server's tools, call a tool).

mod ask;
mod catalog_view;
mod chat_input;
mod cli;
mod cli_catalog;
mod cli_config;
mod cli_registry;
mod lsp;
mod mcp_registry;
mod terminal_consent;
mod view;

use std::process::ExitCode;

use clap::Parser;

fn main() -> ExitCode {
    init_logging();
    quiet_when_the_reader_leaves();
    let args = cli::Cli::parse();
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime,
        Err(e) => {
            eprintln!("error: cannot start the async runtime: {e}");
            return ExitCode::FAILURE;
        }
    };
    // A reader that went away (`wave-mcp servers | head`) ends the command by a print that
    // fails; unwinding drops what it started (each server's process group is killed), then the
    // command ends quietly, as the shell's other tools do.
    let run = std::panic::AssertUnwindSafe(|| runtime.block_on(cli::run(args)));
    let result = match std::panic::catch_unwind(run) {
        Ok(result) => result,
        Err(panic) if stdout_closed(panic.as_ref()) => {
            runtime.shutdown_background();
            return ExitCode::from(141);
        }
        Err(panic) => std::panic::resume_unwind(panic),
    };
    // A blocking stdin read (`chat` quit by Ctrl-C at the prompt) must not hold the exit: every
    // teardown was awaited inside `run`.
    runtime.shutdown_background();
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            // The reason may quote a server (its error, its stderr): no escape sequence of its
            // reaches the terminal (TRUST-7).
            let message = one_line(&format!("{e:#}"));
            eprintln!(
                "error: {}",
                wave_mcp_manager::inert::terminal_safe(&message)
            );
            ExitCode::FAILURE
        }
    }
}

/// Whether a panic is `println!`'s on a stdout whose reader has gone (EPIPE).
fn stdout_closed(payload: &(dyn std::any::Any + Send)) -> bool {
    let text = payload
        .downcast_ref::<String>()
        .map(String::as_str)
        .or_else(|| payload.downcast_ref::<&str>().copied())
        .unwrap_or_default();
    text.starts_with("failed printing to stdout") && text.contains("Broken pipe")
}

/// The panic message of a print to a closed stdout is not shown; every other panic is.
fn quiet_when_the_reader_leaves() {
    let default_hook = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        if !stdout_closed(info.payload()) {
            default_hook(info);
        }
    }));
}

/// Logs go to stderr (stdout carries results or, for the sidecar, the protocol). `WAVE_LOG`
/// takes an `EnvFilter` directive; by default only errors are shown, less rmcp's transport worker,
/// whose fatal errors (a 401 asking for sign-in, a refused connection) reach the user as the
/// server's own `error` or `needs-auth` reason anyway. Colours only on a terminal
/// and without `NO_COLOR`: IDEs show the sidecar's stderr as plain text.
fn init_logging() {
    use std::io::IsTerminal;
    let ansi = std::io::stderr().is_terminal() && std::env::var_os("NO_COLOR").is_none();
    let filter = tracing_subscriber::EnvFilter::try_from_env("WAVE_LOG").unwrap_or_else(|_| {
        tracing_subscriber::EnvFilter::new("error,rmcp::transport::worker=off")
    });
    tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .with_ansi(ansi)
        .init();
}

fn one_line(message: &str) -> String {
    message.split_whitespace().collect::<Vec<_>>().join(" ")
}
