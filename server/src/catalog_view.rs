//! Manager snapshots → the wire lists of prompts and resources (`wave/mcp/prompts`,
//! `wave/mcp/resources`, `wave-mcp prompts|resources --json`), without the servers the
//! permission rules deny (PRM-1, PRM-3).

use wave_mcp_agent::PermissionRules;
use wave_mcp_manager::{ServerSnapshot, Snapshot};
use wave_mcp_protocol::{
    McpPromptArgument, McpPromptView, McpResourceTemplateView, McpResourceView,
};

/// The servers whose prompts and resources may be offered.
fn offered<'a>(
    snapshot: &'a Snapshot,
    rules: &'a PermissionRules,
) -> impl Iterator<Item = &'a ServerSnapshot> + 'a {
    snapshot
        .servers
        .iter()
        .filter(|s| rules.server_denial(&s.name).is_none())
}

pub fn prompt_views(snapshot: &Snapshot, rules: &PermissionRules) -> Vec<McpPromptView> {
    offered(snapshot, rules)
        .flat_map(|server| {
            server.catalog.prompts.iter().map(|p| McpPromptView {
                server: server.name.clone(),
                name: p.name.clone(),
                full_name: p.full_name.clone(),
                description: p.description.clone(),
                arguments: p
                    .arguments
                    .iter()
                    .map(|a| McpPromptArgument {
                        name: a.name.clone(),
                        description: a.description.clone(),
                        required: a.required,
                    })
                    .collect(),
                from_cache: server.catalog.from_cache,
            })
        })
        .collect()
}

pub fn resource_views(
    snapshot: &Snapshot,
    rules: &PermissionRules,
) -> (Vec<McpResourceView>, Vec<McpResourceTemplateView>) {
    let mut resources = Vec::new();
    let mut templates = Vec::new();
    for server in offered(snapshot, rules) {
        let from_cache = server.catalog.from_cache;
        resources.extend(server.catalog.resources.iter().map(|r| McpResourceView {
            server: server.name.clone(),
            uri: r.uri.clone(),
            name: r.name.clone(),
            mime_type: r.mime_type.clone(),
            description: r.description.clone(),
            from_cache,
        }));
        templates.extend(
            server
                .catalog
                .templates
                .iter()
                .map(|t| McpResourceTemplateView {
                    server: server.name.clone(),
                    uri_template: t.uri.clone(),
                    name: t.name.clone(),
                    mime_type: t.mime_type.clone(),
                    description: t.description.clone(),
                    from_cache,
                }),
        );
    }
    (resources, templates)
}
