//! Manager snapshots → the wire view shared by the CLI's `--json` and the sidecar.

use wave_mcp_manager::{ServerApproval, ServerSnapshot, Source, Status};
use wave_mcp_protocol::{McpServerView, McpSource, McpStatus, McpToolView};

pub fn source_view(source: Source) -> McpSource {
    match source {
        Source::User => McpSource::User,
        Source::Project => McpSource::Project,
        Source::Plugin => McpSource::Plugin,
        Source::Constructor => McpSource::Constructor,
    }
}

/// A project entry waiting for approval, as the wire shows it (TRUST-3).
pub fn approval_view(approval: &ServerApproval) -> wave_mcp_protocol::ServerApproval {
    wave_mcp_protocol::ServerApproval {
        name: approval.name.clone(),
        config_path: approval.config_path.to_string_lossy().into_owned(),
        transport: approval.transport.clone(),
        command: approval.command.clone(),
        args: approval.args.clone(),
        url: approval.url.clone(),
        env_keys: approval.env_keys.clone(),
        variables: approval.variables.clone(),
        changed: approval.changed,
        shadows: approval.shadows.map(source_view),
    }
}

pub fn server_view(server: &ServerSnapshot) -> McpServerView {
    McpServerView {
        name: server.name.clone(),
        source: source_view(server.source),
        transport: server.transport.clone(),
        command: server.command.clone(),
        args: server.args.clone(),
        url: server.url.clone(),
        status: match server.status {
            Status::Connected => McpStatus::Connected,
            Status::Connecting => McpStatus::Connecting,
            Status::Reconnecting => McpStatus::Reconnecting,
            Status::Error => McpStatus::Error,
            Status::Disconnected => McpStatus::Disconnected,
            Status::NeedsAuth => McpStatus::NeedsAuth,
            Status::NeedsApproval => McpStatus::NeedsApproval,
        },
        error: server.error.clone(),
        tool_count: server.tools.len(),
        tools: server
            .tools
            .iter()
            .map(|t| McpToolView {
                name: t.name.clone(),
                full_name: t.full_name.clone(),
                description: t.description.clone(),
                enabled: t.enabled,
                definition_changed: t.definition_changed,
                hidden_text: t.hidden_text,
            })
            .collect(),
        tools_from_cache: server.tools_from_cache,
        last_connected_at: server
            .last_connected_at
            .map(|t| t.to_rfc3339_opts(chrono::SecondsFormat::Secs, true)),
        config_path: server
            .config_path
            .as_ref()
            .map(|p| p.to_string_lossy().into_owned()),
        read_only: server.source.is_read_only(),
        signed_in: server.signed_in,
        approval: server.approval.as_ref().map(approval_view),
        protocol_version: server.protocol_version.clone(),
    }
}
