//! One module per area; `support` holds the shared helpers.

mod cache;
mod cli;
mod config;
mod lifecycle;
mod sse;
mod support;
mod tools;
