//! Manager snapshots → the wire view shared by the CLI's `--json` and the sidecar.

use wave_mcp_manager::icons::Icon;
use wave_mcp_manager::{ServerApproval, ServerSnapshot, Source, Status, ToolAnnotations};
use wave_mcp_protocol::{
    IconView, McpServerView, McpSource, McpStatus, McpToolView, ToolAnnotationsView,
};

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
        workspace_untrusted: approval.workspace_untrusted,
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
                annotations: annotations_view(t.title.as_deref(), t.annotations.as_ref()),
                icons: icons_view(&t.icons),
                ui: t.ui.as_ref().map(|ui| wave_mcp_protocol::ToolUiView {
                    resource_uri: ui.resource_uri.clone(),
                    visibility: ui.visibility.clone(),
                }),
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
        icons: icons_view(&server.icons),
        protocol_version: server.protocol_version.clone(),
    }
}

/// One entry of a server's log as the wire shows it (SRV-2).
pub fn log_entry_view(entry: &wave_mcp_manager::logs::LogEntry) -> wave_mcp_protocol::LogEntryView {
    wave_mcp_protocol::LogEntryView {
        time: entry
            .time
            .to_rfc3339_opts(chrono::SecondsFormat::Millis, true),
        source: match entry.source {
            wave_mcp_manager::logs::LogSource::Message => wave_mcp_protocol::LogSourceView::Message,
            wave_mcp_manager::logs::LogSource::Stderr => wave_mcp_protocol::LogSourceView::Stderr,
        },
        level: entry.level.clone(),
        logger: entry.logger.clone(),
        text: entry.text.clone(),
    }
}

/// A tool's title (its `title`, else its annotations' `title`) and hints; `None` when it has
/// neither (TRUST-5, SRV-4).
pub fn annotations_view(
    title: Option<&str>,
    annotations: Option<&ToolAnnotations>,
) -> Option<ToolAnnotationsView> {
    let title = title
        .or_else(|| annotations.and_then(|a| a.title.as_deref()))
        .map(str::to_string);
    let Some(hints) = annotations else {
        return title.map(|title| ToolAnnotationsView {
            title: Some(title),
            ..ToolAnnotationsView::default()
        });
    };
    Some(ToolAnnotationsView {
        title,
        read_only_hint: hints.read_only_hint,
        destructive_hint: hints.destructive_hint,
        idempotent_hint: hints.idempotent_hint,
        open_world_hint: hints.open_world_hint,
    })
}

pub fn icons_view(icons: &[Icon]) -> Vec<IconView> {
    icons
        .iter()
        .map(|icon| IconView {
            src: icon.src.clone(),
            mime_type: icon.mime_type.clone(),
            sizes: icon.sizes.clone(),
        })
        .collect()
}
