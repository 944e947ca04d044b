//! The MCP Registry from the command line (USE-3): `registry search TERM` and
//! `add NAME --from-registry SERVER[@VERSION]`. Registry text is server text: it is printed
//! through `terminal_safe` (TRUST-7).

use anyhow::{Result, anyhow};
use wave_mcp_manager::config::parse_server;
use wave_mcp_manager::inert::terminal_safe as safe;

use crate::cli_config::{Places, Scope, write_entry};
use crate::mcp_registry::{NeededInput, RegistryClient, installation, split_reference};

/// `registry search TERM`: the latest version of each matching server, one block each.
pub async fn search(term: &str, limit: u32) -> Result<()> {
    let client = RegistryClient::from_env()?;
    let page = client.search(term, limit, None).await?;
    if page.servers.is_empty() {
        println!(
            "no MCP server in the registry at {} matches \"{}\"",
            client.base(),
            safe(term)
        );
        return Ok(());
    }
    for found in &page.servers {
        let server = &found.server;
        let version = server.version.as_deref().unwrap_or("?");
        let how = match installation(server) {
            Ok(install) => install.how,
            Err(_) => "not installable by wave-mcp".to_string(),
        };
        println!(
            "{}  {}  ({})",
            safe(&server.name),
            safe(version),
            safe(&how)
        );
        if let Some(title) = server.title.as_deref().filter(|t| !t.is_empty()) {
            println!("    {}", safe(title));
        }
        if !server.description.is_empty() {
            println!("    {}", safe(&server.description));
        }
    }
    if page.next_cursor.is_some() {
        println!("more servers match; narrow the term or raise --limit (now {limit})");
    }
    println!("add one with: wave-mcp add NAME --from-registry SERVER[@VERSION]");
    Ok(())
}

/// `add NAME --from-registry SERVER[@VERSION]`: writes the entry the server's `server.json`
/// becomes, then lists what the user must set.
pub async fn add(places: &Places, scope: Scope, name: &str, reference: &str) -> Result<()> {
    let (server_name, version) = split_reference(reference);
    let client = RegistryClient::from_env()?;
    let server = client.server(server_name, version).await?;
    let install = installation(&server)?;
    parse_server(&install.entry, &format!("mcpServers.{name}"))
        .map_err(|reason| anyhow!("registry server \"{server_name}\": {reason}"))?;
    let path = places.path(scope);
    write_entry(places, scope, &path, name, &install.entry)?;
    println!("added MCP server \"{}\" to {}", safe(name), path.display());
    println!(
        "  from the MCP registry: {} {}, {}",
        safe(&server.name),
        safe(server.version.as_deref().unwrap_or("")),
        safe(&install.how)
    );
    print_inputs(&install.inputs);
    Ok(())
}

/// The `${VAR}`s to set, then the optional inputs left out.
fn print_inputs(inputs: &[NeededInput]) {
    let (required, optional): (Vec<_>, Vec<_>) =
        inputs.iter().partition(|i| i.placeholder.is_some());
    if !required.is_empty() {
        println!("set these environment variables before it starts:");
        for input in required {
            let placeholder = input.placeholder.as_deref().unwrap_or_default();
            println!("  {placeholder}  {}", describe(input));
        }
    }
    if !optional.is_empty() {
        println!("optional, left out (add them to the entry to use them):");
        for input in optional {
            println!("  {}  {}", safe(&input.name), describe(input));
        }
    }
}

fn describe(input: &NeededInput) -> String {
    let mut about = format!("{} {}", input.kind.words(), input.name);
    if input.secret {
        about.push_str(", secret");
    }
    if input.repeated {
        about.push_str(", may be given more than once (add more after it in args)");
    }
    if let Some(default) = &input.default {
        about.push_str(&format!(", default {default}"));
    }
    if let Some(description) = &input.description {
        about.push_str(": ");
        about.push_str(description);
    }
    safe(&about).into_owned()
}
