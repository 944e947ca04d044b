//! One module per area; `support` holds the shared helpers.

mod cache;
mod cli;
mod config;
mod lifecycle;
mod support;
mod tools;
