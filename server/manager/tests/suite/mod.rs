//! One module per promise; `support` holds the shared helpers.

mod cache;
mod generations;
mod lazy;
mod support;
mod tasks;
mod teardown;
