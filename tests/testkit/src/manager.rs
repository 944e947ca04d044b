//! What a manager lists, for the suites that drive `McpManager` itself (the manager's and the
//! `wave-mcp` package's).

use wave_mcp_manager::{McpManager, ServerSnapshot, Status};

/// The server `name` as listed now (panics when it is not listed).
pub fn row(manager: &McpManager, name: &str) -> ServerSnapshot {
    let snapshot = manager.snapshot();
    let server = snapshot.server(name);
    server
        .cloned()
        .unwrap_or_else(|| panic!("server {name} not listed"))
}

/// The status of server `name` as listed now.
pub fn status(manager: &McpManager, name: &str) -> Status {
    row(manager, name).status
}
