//! The official MCP Registry (USE-3): search (`GET /v0.1/servers`), one server's `server.json`
//! (`GET /v0.1/servers/{name}/versions/{version|latest}`), and the config entry a `server.json`
//! becomes. `WAVE_REGISTRY_URL` replaces the base URL (default: the official registry).
//!
//! The first `packages` entry wave-mcp can run (npm → `npx -y PKG@VER`, pypi → `uvx PKG==VER`,
//! oci → `docker run -i --rm IMAGE`, over stdio) becomes the entry, else the first `remotes`
//! entry (Streamable HTTP or SSE, with its headers). Every value the user must give (a required
//! environment variable, argument, header or URL variable) becomes a `${VAR}` placeholder named
//! after it and is listed in [`Installation::inputs`]; nothing is invented. Optional inputs are
//! left out and listed as optional.

use std::collections::BTreeMap;
use std::time::Duration;

use anyhow::{Context, Result, anyhow, bail};
use serde::Deserialize;
use serde_json::{Map, Value};

/// The official registry.
pub const OFFICIAL_REGISTRY_URL: &str = "https://registry.modelcontextprotocol.io";

/// How long one registry request may take (a stalled registry is an error, not a hang).
const REQUEST_TIMEOUT: Duration = Duration::from_secs(60);

/// One page of `GET /v0.1/servers`.
#[derive(Debug, Deserialize)]
struct ServerList {
    servers: Vec<ServerResponse>,
    #[serde(default)]
    metadata: Option<ListMetadata>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
struct ListMetadata {
    #[serde(default)]
    next_cursor: Option<String>,
}

/// One server of a list, or the answer of `GET .../versions/{version}`.
#[derive(Debug, Deserialize)]
struct ServerResponse {
    server: ServerJson,
}

/// A `server.json` document (the fields wave-mcp uses; others are ignored).
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ServerJson {
    pub name: String,
    #[serde(default)]
    pub title: Option<String>,
    #[serde(default)]
    pub description: String,
    #[serde(default)]
    pub version: Option<String>,
    #[serde(default)]
    pub website_url: Option<String>,
    #[serde(default)]
    pub repository: Option<Repository>,
    #[serde(default)]
    pub packages: Vec<Package>,
    #[serde(default)]
    pub remotes: Vec<Remote>,
}

#[derive(Debug, Clone, Deserialize)]
pub struct Repository {
    #[serde(default)]
    pub url: Option<String>,
}

/// One `packages` entry.
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Package {
    pub registry_type: String,
    pub identifier: String,
    #[serde(default)]
    pub version: Option<String>,
    #[serde(default)]
    pub transport: Option<PackageTransport>,
    #[serde(default)]
    pub runtime_arguments: Vec<Argument>,
    #[serde(default)]
    pub package_arguments: Vec<Argument>,
    #[serde(default)]
    pub environment_variables: Vec<KeyValueInput>,
}

#[derive(Debug, Clone, Deserialize)]
pub struct PackageTransport {
    #[serde(rename = "type")]
    pub kind: String,
}

/// A positional or named command-line argument.
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Argument {
    #[serde(rename = "type", default)]
    pub kind: String,
    #[serde(default)]
    pub name: Option<String>,
    #[serde(default)]
    pub value_hint: Option<String>,
    #[serde(flatten)]
    pub input: Input,
}

/// An environment variable or a header.
#[derive(Debug, Clone, Deserialize)]
pub struct KeyValueInput {
    pub name: String,
    #[serde(flatten)]
    pub input: Input,
}

/// What every input has: its fixed value (with `{variables}`), or what to ask for.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Input {
    #[serde(default)]
    pub value: Option<String>,
    #[serde(default)]
    pub description: Option<String>,
    #[serde(default)]
    pub is_required: bool,
    #[serde(default)]
    pub is_secret: bool,
    /// An argument that may be given more than once (`isRepeated`).
    #[serde(default)]
    pub is_repeated: bool,
    #[serde(default)]
    pub default: Option<String>,
    #[serde(default)]
    pub variables: BTreeMap<String, Input>,
}

/// One `remotes` entry.
#[derive(Debug, Clone, Deserialize)]
pub struct Remote {
    #[serde(rename = "type")]
    pub kind: String,
    pub url: String,
    #[serde(default)]
    pub headers: Vec<KeyValueInput>,
    #[serde(default)]
    pub variables: BTreeMap<String, Input>,
}

/// One row of a search.
#[derive(Debug, Clone)]
pub struct Found {
    pub server: ServerJson,
}

/// One page of search results; `next_cursor` asks for the next.
#[derive(Debug, Clone)]
pub struct SearchPage {
    pub servers: Vec<Found>,
    pub next_cursor: Option<String>,
}

/// The registry at one base URL.
pub struct RegistryClient {
    base: url::Url,
    http: reqwest::Client,
}

impl RegistryClient {
    /// The registry of `WAVE_REGISTRY_URL`, else the official one.
    pub fn from_env() -> Result<RegistryClient> {
        let base = std::env::var("WAVE_REGISTRY_URL")
            .ok()
            .filter(|url| !url.trim().is_empty())
            .unwrap_or_else(|| OFFICIAL_REGISTRY_URL.to_string());
        RegistryClient::new(&base)
    }

    pub fn new(base: &str) -> Result<RegistryClient> {
        let base = url::Url::parse(base.trim())
            .map_err(|e| anyhow!("WAVE_REGISTRY_URL {base}: not a URL ({e})"))?;
        if !matches!(base.scheme(), "http" | "https") {
            bail!("WAVE_REGISTRY_URL {base}: not an http or https URL");
        }
        let http = reqwest::Client::builder()
            .timeout(REQUEST_TIMEOUT)
            .build()
            .context("cannot set up the HTTP client")?;
        Ok(RegistryClient { base, http })
    }

    /// The base URL as the user gave it, for messages.
    pub fn base(&self) -> &str {
        self.base.as_str().trim_end_matches('/')
    }

    fn endpoint(&self, segments: &[&str]) -> url::Url {
        let mut url = self.base.clone();
        if let Ok(mut path) = url.path_segments_mut() {
            path.pop_if_empty().extend(segments);
        }
        url
    }

    /// `GET /v0.1/servers?search=TERM&version=latest&limit=N[&cursor=C]`.
    pub async fn search(&self, term: &str, limit: u32, cursor: Option<&str>) -> Result<SearchPage> {
        let mut url = self.endpoint(&["v0.1", "servers"]);
        {
            let mut query = url.query_pairs_mut();
            query
                .append_pair("search", term)
                .append_pair("version", "latest")
                .append_pair("limit", &limit.to_string());
            if let Some(cursor) = cursor {
                query.append_pair("cursor", cursor);
            }
        }
        let body = self
            .get(&url, &format!("servers matching \"{term}\""))
            .await?;
        let list: ServerList = serde_json::from_slice(&body).map_err(|e| {
            anyhow!(
                "the MCP registry at {} sent a server list that is not the registry API's: {e}",
                self.base()
            )
        })?;
        Ok(SearchPage {
            servers: list
                .servers
                .into_iter()
                .map(|r| Found { server: r.server })
                .collect(),
            next_cursor: list
                .metadata
                .unwrap_or_default()
                .next_cursor
                .filter(|c| !c.is_empty()),
        })
    }

    /// `GET /v0.1/servers/{name}/versions/{version}`; no version means `latest`.
    pub async fn server(&self, name: &str, version: Option<&str>) -> Result<ServerJson> {
        let version = version.unwrap_or("latest");
        let url = self.endpoint(&["v0.1", "servers", name, "versions", version]);
        let what = format!("server \"{name}\" version {version}");
        let body = self.get(&url, &what).await?;
        let response: ServerResponse = serde_json::from_slice(&body).map_err(|e| {
            anyhow!(
                "the MCP registry at {} sent a server.json for \"{name}\" that is not the registry API's: {e}",
                self.base()
            )
        })?;
        Ok(response.server)
    }

    async fn get(&self, url: &url::Url, what: &str) -> Result<Vec<u8>> {
        let response = self
            .http
            .get(url.clone())
            .header("accept", "application/json")
            .send()
            .await
            .map_err(|e| {
                anyhow!(
                    "cannot reach the MCP registry at {}: {}",
                    self.base(),
                    reqwest_reason(&e)
                )
            })?;
        let status = response.status();
        let body = response.bytes().await.map_err(|e| {
            anyhow!(
                "the MCP registry at {} broke off its answer: {}",
                self.base(),
                reqwest_reason(&e)
            )
        })?;
        if status == reqwest::StatusCode::NOT_FOUND {
            bail!("the MCP registry at {} has no {what}", self.base());
        }
        if !status.is_success() {
            let said = serde_json::from_slice::<Value>(&body)
                .ok()
                .and_then(|v| v.get("error").and_then(Value::as_str).map(str::to_string))
                .map(|e| format!(": {e}"))
                .unwrap_or_default();
            bail!(
                "the MCP registry at {} answered HTTP {} for {what}{said}",
                self.base(),
                status.as_u16()
            );
        }
        Ok(body.to_vec())
    }
}

/// A reqwest error in words, with its cause (reqwest's own Display leaves it out).
fn reqwest_reason(error: &reqwest::Error) -> String {
    let mut reason = error.to_string();
    let mut source = std::error::Error::source(error);
    while let Some(cause) = source {
        reason.push_str(": ");
        reason.push_str(&cause.to_string());
        source = cause.source();
    }
    reason
}

/// `SERVER[@VERSION]` as given to `--from-registry`.
pub fn split_reference(reference: &str) -> (&str, Option<&str>) {
    match reference.rsplit_once('@') {
        Some((name, version)) if !name.is_empty() && !version.is_empty() => (name, Some(version)),
        _ => (reference, None),
    }
}

/// Where a value the user gives goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum InputKind {
    EnvironmentVariable,
    Argument,
    Header,
    UrlVariable,
}

impl InputKind {
    pub fn words(self) -> &'static str {
        match self {
            InputKind::EnvironmentVariable => "environment variable",
            InputKind::Argument => "argument",
            InputKind::Header => "header",
            InputKind::UrlVariable => "URL variable",
        }
    }
}

/// A value the server needs from the user.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NeededInput {
    /// The `${VAR}` written into the entry; `None` for an optional input left out.
    pub placeholder: Option<String>,
    pub kind: InputKind,
    /// Its name in the `server.json` (variable, header, flag or value hint).
    pub name: String,
    pub description: Option<String>,
    pub required: bool,
    pub secret: bool,
    /// An argument the server takes more than once (`isRepeated`): the entry has one, the user
    /// may add more after it.
    pub repeated: bool,
    pub default: Option<String>,
}

/// What a `server.json` becomes.
#[derive(Debug, Clone)]
pub struct Installation {
    /// The config entry (`${VAR}` placeholders unexpanded).
    pub entry: Value,
    /// How it runs, e.g. "npm package airtable-mcp-server@1.7.3".
    pub how: String,
    /// Required inputs first (each a placeholder in the entry), then optional ones left out.
    pub inputs: Vec<NeededInput>,
}

/// The package types wave-mcp runs: each has a runner that fetches the package by name
/// (`npx`, `uvx`, `docker`, `dnx` of the .NET 10 SDK). An `mcpb` package is a bundle file to
/// download, check and unpack, which no runner does.
const RUNNABLE: &[&str] = &["npm", "pypi", "oci", "nuget"];

/// The entry for `server`: its first runnable stdio package, else its first remote.
pub fn installation(server: &ServerJson) -> Result<Installation> {
    let runnable = server.packages.iter().find(|p| {
        RUNNABLE.contains(&p.registry_type.as_str())
            && p.transport.as_ref().is_none_or(|t| t.kind == "stdio")
    });
    if let Some(package) = runnable {
        return Ok(package_installation(package));
    }
    let remote = server
        .remotes
        .iter()
        .find(|r| matches!(r.kind.as_str(), "streamable-http" | "sse"));
    if let Some(remote) = remote {
        return Ok(remote_installation(remote));
    }
    let offered: Vec<String> = server
        .packages
        .iter()
        .map(|p| {
            let transport = p.transport.as_ref().map_or("stdio", |t| t.kind.as_str());
            if transport == "stdio" {
                format!("a {} package", p.registry_type)
            } else {
                format!("a {} package over {transport}", p.registry_type)
            }
        })
        .chain(
            server
                .remotes
                .iter()
                .map(|r| format!("a remote of type {}", r.kind)),
        )
        .collect();
    if offered.is_empty() {
        bail!(
            "registry server \"{}\" lists no package and no remote to install",
            server.name
        );
    }
    bail!(
        "registry server \"{}\" offers only {}; wave-mcp installs npm, pypi, oci and nuget packages over stdio and streamable-http or sse remotes (an mcpb bundle is a file to download and unpack by hand)",
        server.name,
        offered.join(", ")
    )
}

/// Collects the entry's `${VAR}`s and the inputs left out.
#[derive(Default)]
struct Inputs {
    needed: Vec<NeededInput>,
}

impl Inputs {
    /// The text of an input with a fixed `value`: its `{variables}` become `${VARS}`. `None`
    /// when it needs a variable the user may leave out (the input is then left out).
    fn resolve(&mut self, kind: InputKind, name: &str, input: &Input) -> Option<String> {
        match &input.value {
            Some(value) => self.fill(kind, value, input),
            None if input.is_required => {
                let placeholder = placeholder_name(name);
                self.note(kind, name, input, Some(placeholder.clone()));
                Some(format!("${{{placeholder}}}"))
            }
            None => {
                self.note(kind, name, input, None);
                None
            }
        }
    }

    /// `value` with each `{variable}` of `input` as `${VARIABLE}`; `None` when one is optional
    /// and the input is not required. A variable without a description has its input's.
    fn fill(&mut self, kind: InputKind, value: &str, input: &Input) -> Option<String> {
        let required = input.is_required;
        let described = |variable: &Input| {
            let mut variable = variable.clone();
            if variable.description.is_none() {
                variable.description = input.description.clone();
            }
            variable
        };
        let used: Vec<(&String, &Input)> = input
            .variables
            .iter()
            .filter(|(name, _)| value.contains(&format!("{{{name}}}")))
            .collect();
        let needed = required || used.iter().all(|(_, v)| v.is_required);
        if !needed {
            for (name, variable) in &used {
                self.note(kind, name, &described(variable), None);
            }
            return None;
        }
        let mut text = value.to_string();
        for (name, variable) in used {
            let placeholder = placeholder_name(name);
            text = text.replace(&format!("{{{name}}}"), &format!("${{{placeholder}}}"));
            let mut variable = described(variable);
            variable.is_required = true;
            self.note(kind, name, &variable, Some(placeholder));
        }
        Some(text)
    }

    fn note(&mut self, kind: InputKind, name: &str, input: &Input, placeholder: Option<String>) {
        let duplicate = self
            .needed
            .iter()
            .any(|n| n.name == name && n.placeholder == placeholder);
        if duplicate {
            return;
        }
        self.needed.push(NeededInput {
            placeholder,
            kind,
            name: name.to_string(),
            description: input.description.clone().filter(|d| !d.trim().is_empty()),
            required: input.is_required,
            secret: input.is_secret,
            repeated: input.is_repeated,
            default: input.default.clone(),
        });
    }

    /// Arguments as command-line words.
    fn arguments(&mut self, arguments: &[Argument]) -> Vec<String> {
        let mut words = Vec::new();
        for argument in arguments {
            let named = argument.kind == "named";
            let label = match (&argument.name, &argument.value_hint) {
                (Some(name), _) if named => name.trim_start_matches('-').to_string(),
                (_, Some(hint)) => hint.clone(),
                (Some(name), None) => name.trim_start_matches('-').to_string(),
                (None, None) => "argument".to_string(),
            };
            let flag = argument.name.clone().filter(|_| named);
            if named && argument.input.value.is_none() && !argument.input.is_required {
                self.note(InputKind::Argument, &label, &argument.input, None);
                continue;
            }
            let Some(value) = self.resolve(InputKind::Argument, &label, &argument.input) else {
                continue;
            };
            words.extend(flag);
            words.push(value);
        }
        words
    }

    /// Environment variables as the entry's `env` (only those with a value or a placeholder).
    fn environment(&mut self, variables: &[KeyValueInput]) -> Map<String, Value> {
        let mut env = Map::new();
        for variable in variables {
            if variable.input.value.is_none() && variable.input.is_required {
                // The placeholder is the variable's own name, when it is a usable one.
                let placeholder = placeholder_name(&variable.name);
                self.note(
                    InputKind::EnvironmentVariable,
                    &variable.name,
                    &variable.input,
                    Some(placeholder.clone()),
                );
                env.insert(variable.name.clone(), format!("${{{placeholder}}}").into());
                continue;
            }
            let resolved = self.resolve(
                InputKind::EnvironmentVariable,
                &variable.name,
                &variable.input,
            );
            if let Some(value) = resolved {
                env.insert(variable.name.clone(), value.into());
            }
        }
        env
    }

    /// Required inputs first, in the order met.
    fn into_list(self) -> Vec<NeededInput> {
        let (mut required, optional): (Vec<_>, Vec<_>) = self
            .needed
            .into_iter()
            .partition(|n| n.placeholder.is_some());
        required.extend(optional);
        required
    }
}

/// A `${VAR}` name: letters, digits and `_` (what config expansion accepts); names that are not
/// an environment variable's already are upper-cased.
fn placeholder_name(name: &str) -> String {
    let usable = !name.is_empty() && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
    if usable && !name.chars().any(|c| c.is_ascii_lowercase()) {
        return name.to_string();
    }
    let mut out = String::new();
    for c in name.trim_start_matches('-').chars() {
        if c.is_ascii_alphanumeric() {
            out.push(c.to_ascii_uppercase());
        } else if !out.ends_with('_') {
            out.push('_');
        }
    }
    let out = out.trim_matches('_').to_string();
    if out.is_empty() { "VALUE".into() } else { out }
}

fn package_installation(package: &Package) -> Installation {
    let mut inputs = Inputs::default();
    let env = inputs.environment(&package.environment_variables);
    let runtime = inputs.arguments(&package.runtime_arguments);
    let package_args = inputs.arguments(&package.package_arguments);
    let id = &package.identifier;
    let (command, mut args, how) = match package.registry_type.as_str() {
        "npm" => {
            let spec = match &package.version {
                Some(version) => format!("{id}@{version}"),
                None => id.clone(),
            };
            let mut args = runtime;
            args.extend(["-y".to_string(), spec.clone()]);
            ("npx", args, format!("npm package {spec}"))
        }
        "pypi" => {
            let spec = match &package.version {
                Some(version) => format!("{id}=={version}"),
                None => id.clone(),
            };
            let mut args = runtime;
            args.push(spec.clone());
            ("uvx", args, format!("PyPI package {spec}"))
        }
        "nuget" => {
            let spec = match &package.version {
                Some(version) => format!("{id}@{version}"),
                None => id.clone(),
            };
            let mut args = runtime;
            args.extend([spec.clone(), "--yes".to_string()]);
            // dnx passes what follows `--` to the tool.
            if !package_args.is_empty() {
                args.push("--".to_string());
            }
            ("dnx", args, format!("NuGet package {spec}"))
        }
        _ => {
            let image = oci_image(id, package.version.as_deref());
            let mut args: Vec<String> = ["run", "-i", "--rm"].map(String::from).to_vec();
            // The container sees only the variables docker is told to pass on.
            for name in env.keys() {
                args.extend(["-e".to_string(), name.clone()]);
            }
            args.extend(runtime);
            args.push(image.clone());
            ("docker", args, format!("OCI image {image}"))
        }
    };
    args.extend(package_args);
    let mut entry = Map::new();
    entry.insert("command".into(), command.into());
    entry.insert("args".into(), args.into());
    if !env.is_empty() {
        entry.insert("env".into(), env.into());
    }
    Installation {
        entry: Value::Object(entry),
        how,
        inputs: inputs.into_list(),
    }
}

/// `IMAGE:TAG` (or `@digest`) as given, else the image with the package version as its tag.
fn oci_image(identifier: &str, version: Option<&str>) -> String {
    let last = identifier.rsplit('/').next().unwrap_or(identifier);
    let tagged = last.contains(':') || last.contains('@');
    match version {
        Some(version) if !tagged => format!("{identifier}:{version}"),
        _ => identifier.to_string(),
    }
}

fn remote_installation(remote: &Remote) -> Installation {
    let mut inputs = Inputs::default();
    let template = Input {
        value: Some(remote.url.clone()),
        is_required: true,
        variables: remote.variables.clone(),
        ..Input::default()
    };
    let url = inputs
        .fill(InputKind::UrlVariable, &remote.url, &template)
        .unwrap_or_else(|| remote.url.clone());
    let mut headers = Map::new();
    for header in &remote.headers {
        if let Some(value) = inputs.resolve(InputKind::Header, &header.name, &header.input) {
            headers.insert(header.name.clone(), value.into());
        }
    }
    let kind = if remote.kind == "sse" { "sse" } else { "http" };
    let mut entry = Map::new();
    entry.insert("type".into(), kind.into());
    entry.insert("url".into(), url.into());
    if !headers.is_empty() {
        entry.insert("headers".into(), headers.into());
    }
    let transport = if kind == "sse" {
        "SSE"
    } else {
        "Streamable HTTP"
    };
    Installation {
        entry: Value::Object(entry),
        how: format!("remote server {} ({transport})", remote.url),
        inputs: inputs.into_list(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn placeholder_names() {
        assert_eq!(placeholder_name("AIRTABLE_API_KEY"), "AIRTABLE_API_KEY");
        assert_eq!(placeholder_name("X-API-Key"), "X_API_KEY");
        assert_eq!(placeholder_name("Authorization"), "AUTHORIZATION");
        assert_eq!(placeholder_name("--db-path"), "DB_PATH");
        assert_eq!(placeholder_name("target_dir"), "TARGET_DIR");
    }

    #[test]
    fn references() {
        assert_eq!(split_reference("io.x/y"), ("io.x/y", None));
        assert_eq!(split_reference("io.x/y@1.2.3"), ("io.x/y", Some("1.2.3")));
        assert_eq!(split_reference("io.x/y@"), ("io.x/y@", None));
    }

    #[test]
    fn oci_images() {
        assert_eq!(oci_image("ghcr.io/a/b:1.0", Some("2")), "ghcr.io/a/b:1.0");
        assert_eq!(oci_image("ghcr.io/a/b", Some("2")), "ghcr.io/a/b:2");
        assert_eq!(oci_image("localhost:5000/a/b", None), "localhost:5000/a/b");
    }
}
