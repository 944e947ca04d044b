//! One module per area; `support` holds the shared helpers.

mod apps;
mod auth;
mod auth_faults;
mod budget;
mod cache;
mod cli;
mod config;
mod faults;
mod faults_reap;
mod hardening;
mod inert;
mod lifecycle;
mod lsp;
mod oauth_fixture;
mod peers;
mod prompts;
mod reap;
mod reconnect;
mod registry;
mod reload;
mod sse;
mod support;
mod tasks;
mod tools;
mod trust;
mod verbs;

/// The sidecar's LSP test client lives in the testkit (one client for every suite and the bench).
use wave_mcp_testkit::lsp as lsp_client;
