//! One module per area; `support` holds the fake model server and the shared helpers.

mod announce;
mod budget;
mod chat;
mod consent;
mod exec;
mod faults;
mod hardening;
mod lifecycle;
mod long;
mod structured;
mod support;
mod turns;
