//! `wave-mcp`: the command-line tool (list servers, list a server's tools, call a tool).

mod ask;
mod catalog_view;
mod cli;
mod cli_catalog;
mod lsp;
mod terminal_consent;
mod view;

use std::process::ExitCode;

use clap::Parser;

fn main() -> ExitCode {
    init_logging();
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
    let result = runtime.block_on(cli::run(args));
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
