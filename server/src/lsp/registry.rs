//! The settings page's "Browse registry" (USE-3): `wave/registry/search`, `wave/registry/get`
//! and `wave/registry/add` on the MCP Registry client of `mcp_registry`, its results as the
//! protocol's views, its failures as `registry` errors.

use std::sync::OnceLock;

use wave_mcp_protocol::{
    ErrorKind, RegistryAdded, RegistryInputKind, RegistryInputView, RegistryInstallView,
    RegistrySearchResult, RegistryServerDetails, RegistryServerView,
};

use super::Failure;
use crate::mcp_registry::{
    InputKind, Installation, NeededInput, RegistryClient, ServerJson, installation,
};

/// Servers per search page.
const PAGE: u32 = 30;

fn failure(error: anyhow::Error) -> Failure {
    Failure::new(ErrorKind::Registry, format!("{error:#}"))
}

/// The one client of this process (`WAVE_REGISTRY_URL` is read once).
fn client() -> Result<&'static RegistryClient, Failure> {
    static CLIENT: OnceLock<Result<RegistryClient, String>> = OnceLock::new();
    CLIENT
        .get_or_init(|| RegistryClient::from_env().map_err(|e| format!("{e:#}")))
        .as_ref()
        .map_err(|reason| Failure::new(ErrorKind::Registry, reason.clone()))
}

pub async fn search(query: &str, cursor: Option<&str>) -> Result<RegistrySearchResult, Failure> {
    let client = client()?;
    let page = client
        .search(query.trim(), PAGE, cursor)
        .await
        .map_err(failure)?;
    Ok(RegistrySearchResult {
        registry_url: client.base().to_string(),
        servers: page
            .servers
            .into_iter()
            .map(|found| {
                let install = installation(&found.server).ok().map(|i| i.how);
                let server = found.server;
                RegistryServerView {
                    name: server.name,
                    title: server.title,
                    description: server.description,
                    version: server.version,
                    install,
                }
            })
            .collect(),
        next_cursor: page.next_cursor,
    })
}

pub async fn get(name: &str, version: Option<&str>) -> Result<RegistryServerDetails, Failure> {
    let server = client()?.server(name, version).await.map_err(failure)?;
    Ok(details(server))
}

/// The entry the server's `server.json` becomes, for `wave/registry/add`.
pub async fn install(name: &str, version: Option<&str>) -> Result<Installation, Failure> {
    let server = client()?.server(name, version).await.map_err(failure)?;
    installation(&server).map_err(failure)
}

pub fn added(
    path: &std::path::Path,
    install: &Installation,
    servers: wave_mcp_protocol::ServersSnapshot,
) -> RegistryAdded {
    RegistryAdded {
        path: path.to_string_lossy().into_owned(),
        install: install_view(install),
        servers,
    }
}

fn details(server: ServerJson) -> RegistryServerDetails {
    let (install, unsupported) = match installation(&server) {
        Ok(install) => (Some(install_view(&install)), None),
        Err(e) => (None, Some(format!("{e:#}"))),
    };
    RegistryServerDetails {
        name: server.name,
        title: server.title,
        description: server.description,
        version: server.version,
        website_url: server.website_url,
        repository_url: server.repository.and_then(|r| r.url),
        install,
        unsupported,
    }
}

fn install_view(install: &Installation) -> RegistryInstallView {
    RegistryInstallView {
        how: install.how.clone(),
        entry: install.entry.clone(),
        inputs: install.inputs.iter().map(input_view).collect(),
    }
}

fn input_view(input: &NeededInput) -> RegistryInputView {
    RegistryInputView {
        name: input.name.clone(),
        kind: match input.kind {
            InputKind::EnvironmentVariable => RegistryInputKind::EnvironmentVariable,
            InputKind::Argument => RegistryInputKind::Argument,
            InputKind::Header => RegistryInputKind::Header,
            InputKind::UrlVariable => RegistryInputKind::UrlVariable,
        },
        placeholder: input.placeholder.clone(),
        required: input.required,
        secret: input.secret,
        repeated: input.repeated,
        description: input.description.clone(),
        default: input.default.clone(),
    }
}
