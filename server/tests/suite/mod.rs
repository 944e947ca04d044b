//! One module per area; `support` holds the shared helpers.

mod auth;
mod auth_faults;
mod cache;
mod cli;
mod config;
mod faults;
mod faults_reap;
mod lifecycle;
mod lsp;
mod lsp_client;
mod peers;
mod prompts;
mod reap;
mod reconnect;
mod reload;
mod sse;
mod support;
mod tools;
