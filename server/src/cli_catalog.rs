//! `wave-mcp prompts NAME` and `wave-mcp resources NAME`: connect one server, list its prompts
//! (with their arguments) or its resources and resource templates, then shut it down. A server
//! the permission rules of the settings files deny is refused, as in the chat (PRM-1, PRM-3).
//! What the server wrote is printed through `terminal_safe` (TRUST-7).

use anyhow::{Result, anyhow, bail};
use wave_mcp_manager::inert::{json_safe, terminal_safe as safe};
use wave_mcp_manager::{McpManager, Snapshot};

use crate::catalog_view::{prompt_views, resource_views};

/// The live catalog of `server` as a one-server snapshot, for the wire views.
async fn listed(manager: &McpManager, server: &str) -> Result<Snapshot> {
    let home = dirs::home_dir().unwrap_or_else(|| manager.workdir().to_path_buf());
    let rules = wave_mcp_agent::settings::settings_rules(manager.workdir(), &home);
    if let Some(why) = rules.server_denial(server) {
        bail!("permission denied: MCP server \"{server}\" may not be used ({why})");
    }
    let catalog = manager.live_catalog(server).await?;
    let mut snapshot = (*manager.snapshot()).clone();
    snapshot.servers.retain(|s| s.name == server);
    let row = snapshot
        .servers
        .first_mut()
        .ok_or_else(|| anyhow!("no MCP server named \"{server}\" is configured"))?;
    row.catalog = catalog;
    Ok(snapshot)
}

pub async fn prompts(manager: &McpManager, server: &str, json: bool) -> Result<()> {
    let snapshot = listed(manager, server).await?;
    let prompts = prompt_views(&snapshot, &Default::default());
    if json {
        println!("{}", json_safe(&serde_json::to_string_pretty(&prompts)?));
        return Ok(());
    }
    println!("{} prompts:", prompts.len());
    for prompt in &prompts {
        let mut usage = format!("/{}", prompt.full_name);
        for argument in &prompt.arguments {
            match argument.required {
                true => usage.push_str(&format!(" <{}>", argument.name)),
                false => usage.push_str(&format!(" [{}]", argument.name)),
            }
        }
        println!("\n{}", safe(&usage));
        if let Some(description) = &prompt.description {
            println!("  {}", safe(description));
        }
        for argument in &prompt.arguments {
            let required = if argument.required { ", required" } else { "" };
            let description = argument.description.as_deref().unwrap_or("");
            let line = format!("{}{required}: {description}", argument.name);
            println!("  {}", safe(&line));
        }
    }
    Ok(())
}

pub async fn resources(manager: &McpManager, server: &str, json: bool) -> Result<()> {
    let snapshot = listed(manager, server).await?;
    let (resources, templates) = resource_views(&snapshot, &Default::default());
    if json {
        let value = serde_json::json!({ "resources": resources, "templates": templates });
        println!("{}", json_safe(&serde_json::to_string_pretty(&value)?));
        return Ok(());
    }
    println!("{} resources:", resources.len());
    for resource in &resources {
        let mime = resource
            .mime_type
            .as_deref()
            .map(|m| format!("  ({m})"))
            .unwrap_or_default();
        let line = format!(
            "@{}:{}  {}{mime}",
            resource.server, resource.uri, resource.name
        );
        println!("  {}", safe(&line));
    }
    println!("{} resource templates:", templates.len());
    for template in &templates {
        let line = format!("{}  {}", template.uri_template, template.name);
        println!("  {}", safe(&line));
    }
    Ok(())
}
