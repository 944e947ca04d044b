//! Where MCP servers are configured, how the sources merge, and how one entry becomes a transport.
//!
//! Four sources (CFG-1), merged plugin → user → project → constructor (CFG-2). Entries are kept
//! exactly as written; `${VAR}` / `${VAR:-default}` are expanded only in [`resolve`], at connect
//! time, so secrets never reach lists, snapshots or the cache (SEC-1).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// The variable that names a plugin's own directory inside its `.mcp.json`.
pub const PLUGIN_ROOT_VAR: &str = "WAVE_PLUGIN_ROOT";

/// Where a server entry came from. Later sources win (CFG-2).
#[derive(
    Debug, Clone, Copy, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize,
)]
#[serde(rename_all = "lowercase")]
pub enum Source {
    Plugin,
    #[default]
    User,
    Project,
    Constructor,
}

impl Source {
    pub fn as_str(self) -> &'static str {
        match self {
            Source::Plugin => "plugin",
            Source::User => "user",
            Source::Project => "project",
            Source::Constructor => "constructor",
        }
    }

    /// Plugin and constructor servers cannot be edited or deleted from a settings page.
    pub fn is_read_only(self) -> bool {
        matches!(self, Source::Plugin | Source::Constructor)
    }
}

/// One server's config as written (before `${VAR}` expansion).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ServerConfig {
    /// The `type` field: `stdio`, `http`, `sse`, or anything else (an error at connect time, CFG-6).
    pub kind: Option<String>,
    pub command: Option<String>,
    pub args: Vec<String>,
    pub env: BTreeMap<String, String>,
    pub url: Option<String>,
    pub headers: BTreeMap<String, String>,
    /// `startupTimeoutSec` (or `connectTimeoutMs`): spawn/dial + `initialize` + first tool
    /// list (LONG-4).
    pub connect_timeout: Option<Duration>,
    /// `toolTimeoutSec` (or `toolTimeoutMs`): one `tools/call` without progress; each progress
    /// notification restarts it (LONG-4).
    pub tool_timeout: Option<Duration>,
    /// `oauth`: how to sign in to a remote server (AUTH-2); all optional.
    pub oauth: Option<OAuthConfig>,
    /// `enabledTools` / `disabledTools` (BUD-1).
    pub tool_switches: crate::switches::ToolSwitches,
    /// `alwaysLoad`: never deferred behind tool search (BUD-5).
    pub always_load: bool,
    /// `logLevel`: the least level of the server's log messages (`logging/setLevel`, SRV-2).
    pub log_level: Option<String>,
}

/// The `oauth` object of a remote entry, as written (`${VAR}` not expanded).
#[derive(Clone, Default, PartialEq, Eq)]
pub struct OAuthConfig {
    /// A pre-registered client; without it sign-in registers one (RFC 7591).
    pub client_id: Option<String>,
    pub client_secret: Option<String>,
    /// Replaces the scopes the server asks for.
    pub scopes: Vec<String>,
    /// The loopback port of the redirect URI; default: any free port.
    pub callback_port: Option<u16>,
    /// `clientMetadataUrl`: an https URL of this client's metadata document, used as client id
    /// where the authorization server advertises `client_id_metadata_document_supported`.
    pub client_metadata_url: Option<String>,
    /// `grant`: `authorization_code` (default, the browser), `client_credentials` or
    /// `jwt-bearer` (machine-to-machine: no browser, a dial gets the token itself).
    pub grant: Grant,
    /// `privateKeyPath`: a PEM private key for `private_key_jwt` (`client_credentials`).
    pub private_key_path: Option<String>,
    /// `signingAlgorithm`: the JWS algorithm of that key (default ES256).
    pub signing_algorithm: Option<String>,
    /// `idp`: the identity provider of the `jwt-bearer` grant (SEP-990).
    pub idp: Option<IdpConfig>,
}

/// The `grant` of an `oauth` object.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Grant {
    #[default]
    AuthorizationCode,
    ClientCredentials,
    JwtBearer,
}

/// The `oauth.idp` object (SEP-990), as written.
#[derive(Clone, Default, PartialEq, Eq)]
pub struct IdpConfig {
    pub issuer: String,
    pub token_endpoint: String,
    pub client_id: String,
    pub id_token: String,
}

// The client secret may be written in the file itself: never print it (AUTH-6).
impl std::fmt::Debug for OAuthConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OAuthConfig")
            .field("client_id", &self.client_id)
            .field("client_secret", &self.client_secret.as_ref().map(|_| "***"))
            .field("scopes", &self.scopes)
            .field("callback_port", &self.callback_port)
            .field("client_metadata_url", &self.client_metadata_url)
            .field("grant", &self.grant)
            .field("private_key_path", &self.private_key_path)
            .field("signing_algorithm", &self.signing_algorithm)
            .field("idp", &self.idp.as_ref().map(|idp| &idp.issuer))
            .finish()
    }
}

impl ServerConfig {
    /// The transport name shown in lists: the `type` as written, else what the fields imply.
    pub fn transport_label(&self) -> String {
        if let Some(kind) = &self.kind {
            return kind.clone();
        }
        if self.command.is_some() {
            return "stdio".into();
        }
        if self.url.is_some() {
            return "http".into();
        }
        "unknown".into()
    }
}

/// A merged server entry: its config (or why the entry could not be read) and its origin.
#[derive(Debug, Clone, PartialEq)]
pub struct ServerEntry {
    pub name: String,
    pub source: Source,
    /// The file the entry was read from; `None` for constructor servers.
    pub config_path: Option<PathBuf>,
    /// The plugin directory, for plugin sources (`${WAVE_PLUGIN_ROOT}`).
    pub plugin_root: Option<PathBuf>,
    /// Directory that relative command paths are resolved against.
    pub base_dir: PathBuf,
    /// `Err` holds a message naming the file and the field that is wrong.
    pub config: Result<ServerConfig, String>,
    /// The entry's JSON exactly as written: what a project approval pins (TRUST-2).
    pub raw: Value,
    /// For a project entry: the user or plugin entry of the same name it replaces. Until the
    /// project entry is approved, the name keeps resolving to that one (TRUST-1).
    pub replaced: Option<Box<ServerEntry>>,
}

/// A config file that could not be used; its whole source was skipped (CFG-4).
#[derive(Debug, Clone, PartialEq)]
pub struct ConfigProblem {
    pub path: PathBuf,
    pub message: String,
}

impl std::fmt::Display for ConfigProblem {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.path.display(), self.message)
    }
}

/// The merged configuration of one workdir.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct LoadedConfig {
    /// In order of first appearance across sources; a later source replaces the entry in place.
    pub servers: Vec<ServerEntry>,
    pub problems: Vec<ConfigProblem>,
}

/// `~/.wave/mcp.json`.
pub fn user_config_path(home: &Path) -> PathBuf {
    home.join(".wave").join("mcp.json")
}

/// `<workdir>/.mcp.json`.
pub fn project_config_path(workdir: &Path) -> PathBuf {
    workdir.join(".mcp.json")
}

/// `~/.wave/plugins`: every `<plugin>/.mcp.json` under it is a plugin source.
pub fn plugins_dir(home: &Path) -> PathBuf {
    home.join(".wave").join("plugins")
}

/// Reads and merges every source. Never fails: unusable files are reported in `problems`.
pub fn load(workdir: &Path, home: &Path, constructor: &Map<String, Value>) -> LoadedConfig {
    let mut loaded = LoadedConfig::default();
    for plugin_root in plugin_roots(home) {
        let path = plugin_root.join(".mcp.json");
        let file = FileSource {
            path: &path,
            source: Source::Plugin,
            base_dir: &plugin_root,
            plugin_root: Some(&plugin_root),
        };
        load_file(&mut loaded, file);
    }
    let user_path = user_config_path(home);
    let user_dir = home.join(".wave");
    load_file(
        &mut loaded,
        FileSource {
            path: &user_path,
            source: Source::User,
            base_dir: &user_dir,
            plugin_root: None,
        },
    );
    let project_path = project_config_path(workdir);
    load_file(
        &mut loaded,
        FileSource {
            path: &project_path,
            source: Source::Project,
            base_dir: workdir,
            plugin_root: None,
        },
    );
    for (name, value) in constructor {
        let config = parse_server(value, &format!("mcpServers.{name}"))
            .map_err(|e| format!("constructor option {e}"));
        merge(
            &mut loaded.servers,
            ServerEntry {
                name: name.clone(),
                source: Source::Constructor,
                config_path: None,
                plugin_root: None,
                base_dir: workdir.to_path_buf(),
                config,
                raw: value.clone(),
                replaced: None,
            },
        );
    }
    loaded
}

/// Plugin directories that hold a `.mcp.json`, sorted by name so the merge is deterministic.
fn plugin_roots(home: &Path) -> Vec<PathBuf> {
    let Ok(dir) = std::fs::read_dir(plugins_dir(home)) else {
        return Vec::new();
    };
    let mut roots: Vec<PathBuf> = dir
        .filter_map(|entry| entry.ok().map(|e| e.path()))
        .filter(|path| path.join(".mcp.json").is_file())
        .collect();
    roots.sort();
    roots
}

struct FileSource<'a> {
    path: &'a Path,
    source: Source,
    base_dir: &'a Path,
    plugin_root: Option<&'a Path>,
}

fn load_file(loaded: &mut LoadedConfig, file: FileSource<'_>) {
    let text = match std::fs::read_to_string(file.path) {
        Ok(text) => text,
        // CFG-3: a missing file is normal.
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return,
        Err(e) => {
            return report(loaded, file.path, format!("cannot read file: {e}"));
        }
    };
    let servers = match parse_file(&text) {
        Ok(servers) => servers,
        Err(message) => return report(loaded, file.path, message),
    };
    for (name, value) in servers {
        let config = parse_server(&value, &format!("mcpServers.{name}"))
            .map_err(|e| format!("{}: {e}", file.path.display()));
        merge(
            &mut loaded.servers,
            ServerEntry {
                name,
                source: file.source,
                config_path: Some(file.path.to_path_buf()),
                plugin_root: file.plugin_root.map(Path::to_path_buf),
                base_dir: file.base_dir.to_path_buf(),
                config,
                raw: value,
                replaced: None,
            },
        );
    }
}

fn report(loaded: &mut LoadedConfig, path: &Path, message: String) {
    let problem = ConfigProblem {
        path: path.to_path_buf(),
        message,
    };
    tracing::error!("skipping MCP config source: {problem}");
    loaded.problems.push(problem);
}

/// The `mcpServers` object of a config file's text, in file order.
pub fn parse_file(text: &str) -> Result<Map<String, Value>, String> {
    let root: Value = serde_json::from_str(text).map_err(|e| format!("invalid JSON: {e}"))?;
    let Value::Object(mut root) = root else {
        return Err("expected a JSON object at the top level".into());
    };
    match root.remove("mcpServers") {
        None => Ok(Map::new()),
        Some(Value::Object(servers)) => Ok(servers),
        Some(_) => Err("`mcpServers` must be an object keyed by server name".into()),
    }
}

/// A later source replaces an entry of the same name in place. A project entry keeps the user or
/// plugin entry it replaces beside it: it needs approval first (TRUST-1).
fn merge(servers: &mut Vec<ServerEntry>, mut entry: ServerEntry) {
    let Some(existing) = servers.iter_mut().find(|s| s.name == entry.name) else {
        return servers.push(entry);
    };
    if entry.source == Source::Project && existing.source < Source::Project {
        let mut replaced = existing.clone();
        replaced.replaced = None;
        entry.replaced = Some(Box::new(replaced));
    }
    *existing = entry;
}

/// Parses one server object; errors name the field (`mcpServers.<name>.<field>`).
pub fn parse_server(value: &Value, at: &str) -> Result<ServerConfig, String> {
    let Value::Object(obj) = value else {
        return Err(format!("{at}: expected an object"));
    };
    let config = ServerConfig {
        kind: opt_string(obj, "type", at)?,
        command: opt_string(obj, "command", at)?,
        args: string_array(obj, "args", at)?,
        env: string_map(obj, "env", at)?,
        url: opt_string(obj, "url", at)?,
        headers: string_map(obj, "headers", at)?,
        connect_timeout: opt_seconds(obj, "startupTimeoutSec", at)?.or(opt_millis(
            obj,
            "connectTimeoutMs",
            at,
        )?),
        tool_timeout: opt_seconds(obj, "toolTimeoutSec", at)?.or(opt_millis(
            obj,
            "toolTimeoutMs",
            at,
        )?),
        oauth: opt_oauth(obj, at)?,
        tool_switches: crate::switches::parse_switches(obj, at)?,
        always_load: crate::switches::parse_always_load(obj, at)?,
        log_level: opt_log_level(obj, at)?,
    };
    if config.command.is_none() && config.url.is_none() {
        return Err(format!(
            "{at}: needs either `command` (stdio) or `url` (http, sse)"
        ));
    }
    Ok(config)
}

/// MCP's log levels, least severe first.
pub const LOG_LEVELS: &[&str] = &[
    "debug",
    "info",
    "notice",
    "warning",
    "error",
    "critical",
    "alert",
    "emergency",
];

fn opt_log_level(obj: &Map<String, Value>, at: &str) -> Result<Option<String>, String> {
    let Some(level) = opt_string(obj, "logLevel", at)? else {
        return Ok(None);
    };
    if !LOG_LEVELS.contains(&level.as_str()) {
        return Err(format!(
            "{at}.logLevel: \"{level}\" is not a log level (one of {})",
            LOG_LEVELS.join(", ")
        ));
    }
    Ok(Some(level))
}

fn opt_oauth(obj: &Map<String, Value>, at: &str) -> Result<Option<OAuthConfig>, String> {
    let oauth = match obj.get("oauth") {
        None | Some(Value::Null) => return Ok(None),
        Some(Value::Object(oauth)) => oauth,
        Some(_) => return Err(format!("{at}.oauth: expected an object")),
    };
    let at = format!("{at}.oauth");
    let callback_port = match oauth.get("callbackPort") {
        None | Some(Value::Null) => None,
        Some(Value::Number(n)) => match n.as_u64().and_then(|p| u16::try_from(p).ok()) {
            Some(port) if port > 0 => Some(port),
            _ => {
                return Err(format!(
                    "{at}.callbackPort: expected a port number (1-65535)"
                ));
            }
        },
        Some(_) => {
            return Err(format!(
                "{at}.callbackPort: expected a port number (1-65535)"
            ));
        }
    };
    let grant = match opt_string(oauth, "grant", &at)?.as_deref() {
        None | Some("authorization_code") => Grant::AuthorizationCode,
        Some("client_credentials") => Grant::ClientCredentials,
        Some("jwt-bearer") => Grant::JwtBearer,
        Some(other) => {
            return Err(format!(
                "{at}.grant: unknown grant \"{other}\" (expected \"authorization_code\", \"client_credentials\" or \"jwt-bearer\")"
            ));
        }
    };
    let idp = match oauth.get("idp") {
        None | Some(Value::Null) => None,
        Some(Value::Object(idp)) => {
            let at = format!("{at}.idp");
            let need = |key: &str| {
                opt_string(idp, key, &at)?
                    .ok_or_else(|| format!("{at}.{key}: missing (the identity provider needs it)"))
            };
            Some(IdpConfig {
                issuer: need("issuer")?,
                token_endpoint: need("tokenEndpoint")?,
                client_id: need("clientId")?,
                id_token: need("idToken")?,
            })
        }
        Some(_) => return Err(format!("{at}.idp: expected an object")),
    };
    let config = OAuthConfig {
        client_id: opt_string(oauth, "clientId", &at)?,
        client_secret: opt_string(oauth, "clientSecret", &at)?,
        scopes: string_array(oauth, "scopes", &at)?,
        callback_port,
        client_metadata_url: opt_string(oauth, "clientMetadataUrl", &at)?,
        grant,
        private_key_path: opt_string(oauth, "privateKeyPath", &at)?,
        signing_algorithm: opt_string(oauth, "signingAlgorithm", &at)?,
        idp,
    };
    check_grant(&config, &at)?;
    Ok(Some(config))
}

/// The fields a machine-to-machine grant cannot do without, each missing one named.
fn check_grant(config: &OAuthConfig, at: &str) -> Result<(), String> {
    let name = match config.grant {
        Grant::AuthorizationCode => return Ok(()),
        Grant::ClientCredentials => "client_credentials",
        Grant::JwtBearer => "jwt-bearer",
    };
    if config.client_id.is_none() {
        return Err(format!(
            "{at}.clientId: missing (grant \"{name}\" needs it)"
        ));
    }
    match config.grant {
        Grant::ClientCredentials => {
            match (&config.client_secret, &config.private_key_path) {
                (None, None) => {
                    return Err(format!(
                        "{at}: grant \"client_credentials\" needs `clientSecret` or `privateKeyPath`"
                    ));
                }
                (Some(_), Some(_)) => {
                    return Err(format!(
                        "{at}: `clientSecret` and `privateKeyPath` both set; grant \"client_credentials\" takes one"
                    ));
                }
                _ => {}
            }
            if let Some(alg) = &config.signing_algorithm
                && crate::grant::algorithm(alg).is_none()
            {
                return Err(format!(
                    "{at}.signingAlgorithm: unknown algorithm \"{alg}\" (expected one of {})",
                    crate::grant::ALGORITHMS.join(", ")
                ));
            }
        }
        Grant::JwtBearer => {
            if config.client_secret.is_none() {
                return Err(format!(
                    "{at}.clientSecret: missing (grant \"jwt-bearer\" needs it)"
                ));
            }
            if config.idp.is_none() {
                return Err(format!("{at}.idp: missing (grant \"jwt-bearer\" needs it)"));
            }
        }
        Grant::AuthorizationCode => {}
    }
    Ok(())
}

fn opt_string(obj: &Map<String, Value>, key: &str, at: &str) -> Result<Option<String>, String> {
    match obj.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) => Ok(Some(s.clone())),
        Some(_) => Err(format!("{at}.{key}: expected a string")),
    }
}

fn string_array(obj: &Map<String, Value>, key: &str, at: &str) -> Result<Vec<String>, String> {
    let items = match obj.get(key) {
        None | Some(Value::Null) => return Ok(Vec::new()),
        Some(Value::Array(items)) => items,
        Some(_) => return Err(format!("{at}.{key}: expected an array of strings")),
    };
    items
        .iter()
        .enumerate()
        .map(|(i, item)| match item {
            Value::String(s) => Ok(s.clone()),
            _ => Err(format!("{at}.{key}[{i}]: expected a string")),
        })
        .collect()
}

fn string_map(
    obj: &Map<String, Value>,
    key: &str,
    at: &str,
) -> Result<BTreeMap<String, String>, String> {
    let map = match obj.get(key) {
        None | Some(Value::Null) => return Ok(BTreeMap::new()),
        Some(Value::Object(map)) => map,
        Some(_) => return Err(format!("{at}.{key}: expected an object of strings")),
    };
    map.iter()
        .map(|(k, v)| match v {
            Value::String(s) => Ok((k.clone(), s.clone())),
            _ => Err(format!("{at}.{key}.{k}: expected a string")),
        })
        .collect()
}

fn opt_millis(obj: &Map<String, Value>, key: &str, at: &str) -> Result<Option<Duration>, String> {
    match obj.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::Number(n)) if n.as_u64().is_some_and(|ms| ms > 0) => {
            Ok(n.as_u64().map(Duration::from_millis))
        }
        Some(_) => Err(format!(
            "{at}.{key}: expected a positive number of milliseconds"
        )),
    }
}

/// A positive number of seconds, fractions allowed (LONG-4); anything else names the key.
fn opt_seconds(obj: &Map<String, Value>, key: &str, at: &str) -> Result<Option<Duration>, String> {
    match obj.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::Number(n)) => {
            match n.as_f64().and_then(|s| Duration::try_from_secs_f64(s).ok()) {
                Some(duration) if !duration.is_zero() => Ok(Some(duration)),
                _ => Err(format!("{at}.{key}: expected a positive number of seconds")),
            }
        }
        Some(_) => Err(format!("{at}.{key}: expected a positive number of seconds")),
    }
}

/// A server entry resolved for connecting: variables expanded, transport chosen.
#[derive(Clone, PartialEq, Eq)]
pub enum Transport {
    Stdio {
        command: PathBuf,
        args: Vec<String>,
        env: Vec<(String, String)>,
        cwd: PathBuf,
    },
    Http {
        url: String,
        headers: Vec<(String, String)>,
        oauth: Option<OAuthSettings>,
    },
    Sse {
        url: String,
        headers: Vec<(String, String)>,
        oauth: Option<OAuthSettings>,
    },
}

/// How a remote server signs in, with `${VAR}` expanded. A transport has none when its entry
/// sets its own `Authorization` header: that server never starts OAuth (AUTH-7).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct OAuthSettings {
    pub client_id: Option<String>,
    pub client_secret: Option<crate::auth::Secret>,
    pub scopes: Vec<String>,
    pub callback_port: Option<u16>,
    pub client_metadata_url: Option<String>,
    /// A machine-to-machine grant: the dial gets its token itself, no browser.
    pub machine: Option<MachineGrant>,
}

/// A machine-to-machine grant with `${VAR}` expanded (SPEC-2).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum MachineGrant {
    /// `client_credentials` with `client_secret_basic` (or `_post` where only that is offered).
    ClientSecret {
        client_id: String,
        client_secret: crate::auth::Secret,
    },
    /// `client_credentials` with `private_key_jwt` (SEP-1046).
    PrivateKeyJwt {
        client_id: String,
        private_key_path: PathBuf,
        signing_algorithm: String,
    },
    /// SEP-990: the ID token exchanged for an ID-JAG at the identity provider (RFC 8693), then
    /// the RFC 7523 JWT bearer grant at the authorization server.
    JwtBearer {
        client_id: String,
        client_secret: crate::auth::Secret,
        idp_issuer: String,
        idp_token_endpoint: String,
        idp_client_id: String,
        id_token: crate::auth::Secret,
    },
}

impl Transport {
    /// The remote URL and sign-in settings of an `http` or `sse` transport.
    pub fn remote(&self) -> Option<(&str, Option<&OAuthSettings>)> {
        match self {
            Transport::Stdio { .. } => None,
            Transport::Http { url, oauth, .. } | Transport::Sse { url, oauth, .. } => {
                Some((url, oauth.as_ref()))
            }
        }
    }
}

// Expanded values may hold secrets: never print them.
impl std::fmt::Debug for Transport {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Transport::Stdio { .. } => f.write_str("Transport::Stdio"),
            Transport::Http { .. } => f.write_str("Transport::Http"),
            Transport::Sse { .. } => f.write_str("Transport::Sse"),
        }
    }
}

/// Expands variables and picks the transport. `workdir` is the stdio server's working directory.
/// Errors are one line naming the field (CFG-6 unknown type, unset variables).
pub fn resolve(
    entry: &ServerEntry,
    workdir: &Path,
    lookup: &dyn Fn(&str) -> Option<String>,
) -> Result<Transport, String> {
    let config = entry.config.as_ref().map_err(Clone::clone)?;
    let plugin_root = entry
        .plugin_root
        .as_ref()
        .map(|root| root.to_string_lossy().into_owned());
    let vars = |name: &str| match (name, &plugin_root) {
        (PLUGIN_ROOT_VAR, Some(root)) => Some(root.clone()),
        _ => lookup(name),
    };
    let at = format!("mcpServers.{}", entry.name);
    let field =
        |value: &str, key: &str| expand(value, &vars).map_err(|e| format!("{at}.{key}: {e}"));
    let kind = config
        .kind
        .as_deref()
        .unwrap_or(if config.command.is_some() {
            "stdio"
        } else {
            "http"
        });
    match kind {
        "stdio" => {
            let Some(command) = &config.command else {
                return Err(format!("{at}: type \"stdio\" needs a `command`"));
            };
            let command = field(command, "command")?;
            let args = config
                .args
                .iter()
                .enumerate()
                .map(|(i, arg)| field(arg, &format!("args[{i}]")))
                .collect::<Result<_, _>>()?;
            let env = config
                .env
                .iter()
                .map(|(k, v)| Ok((k.clone(), field(v, &format!("env.{k}"))?)))
                .collect::<Result<_, String>>()?;
            Ok(Transport::Stdio {
                command: resolve_command(&command, &entry.base_dir),
                args,
                env,
                cwd: workdir.to_path_buf(),
            })
        }
        "http" | "sse" => {
            let Some(url) = &config.url else {
                return Err(format!("{at}: type \"{kind}\" needs a `url`"));
            };
            let url = field(url, "url")?;
            let headers = config
                .headers
                .iter()
                .map(|(k, v)| Ok((k.clone(), field(v, &format!("headers.{k}"))?)))
                .collect::<Result<_, String>>()?;
            let own_authorization = config
                .headers
                .keys()
                .any(|k| k.eq_ignore_ascii_case("authorization"));
            let oauth = if own_authorization {
                None
            } else {
                let written = config.oauth.clone().unwrap_or_default();
                let opt = |value: &Option<String>, key: &str| {
                    value.as_deref().map(|v| field(v, key)).transpose()
                };
                let client_id = opt(&written.client_id, "oauth.clientId")?;
                let client_secret = opt(&written.client_secret, "oauth.clientSecret")?
                    .map(crate::auth::Secret::new);
                let machine = match written.grant {
                    Grant::AuthorizationCode => None,
                    Grant::ClientCredentials => {
                        let client_id = client_id.clone().unwrap_or_default();
                        match (&client_secret, &written.private_key_path) {
                            (Some(secret), _) => Some(MachineGrant::ClientSecret {
                                client_id,
                                client_secret: secret.clone(),
                            }),
                            (None, Some(key)) => Some(MachineGrant::PrivateKeyJwt {
                                client_id,
                                private_key_path: entry
                                    .base_dir
                                    .join(field(key, "oauth.privateKeyPath")?),
                                signing_algorithm: written
                                    .signing_algorithm
                                    .clone()
                                    .unwrap_or_else(|| "ES256".into()),
                            }),
                            (None, None) => None,
                        }
                    }
                    Grant::JwtBearer => match (&client_secret, &written.idp) {
                        (Some(secret), Some(idp)) => Some(MachineGrant::JwtBearer {
                            client_id: client_id.clone().unwrap_or_default(),
                            client_secret: secret.clone(),
                            idp_issuer: field(&idp.issuer, "oauth.idp.issuer")?,
                            idp_token_endpoint: field(
                                &idp.token_endpoint,
                                "oauth.idp.tokenEndpoint",
                            )?,
                            idp_client_id: field(&idp.client_id, "oauth.idp.clientId")?,
                            id_token: crate::auth::Secret::new(field(
                                &idp.id_token,
                                "oauth.idp.idToken",
                            )?),
                        }),
                        _ => None,
                    },
                };
                Some(OAuthSettings {
                    client_id,
                    client_secret,
                    scopes: written.scopes,
                    callback_port: written.callback_port,
                    client_metadata_url: opt(
                        &written.client_metadata_url,
                        "oauth.clientMetadataUrl",
                    )?,
                    machine,
                })
            };
            Ok(if kind == "sse" {
                Transport::Sse {
                    url,
                    headers,
                    oauth,
                }
            } else {
                Transport::Http {
                    url,
                    headers,
                    oauth,
                }
            })
        }
        other => Err(format!(
            "{at}.type: unknown transport type \"{other}\" (expected \"stdio\", \"http\" or \"sse\")"
        )),
    }
}

/// A command with a path separator that is relative is taken relative to its config's directory;
/// a bare name is looked up on `PATH` by the OS.
fn resolve_command(command: &str, base_dir: &Path) -> PathBuf {
    let path = Path::new(command);
    let has_separator = command.contains('/') || (cfg!(windows) && command.contains('\\'));
    if has_separator && path.is_relative() {
        return base_dir.join(path);
    }
    path.to_path_buf()
}

/// Expands `${VAR}` and `${VAR:-default}`. An unset variable without default is an error naming it.
pub fn expand(value: &str, lookup: &dyn Fn(&str) -> Option<String>) -> Result<String, String> {
    let mut out = String::with_capacity(value.len());
    let mut rest = value;
    while let Some(start) = rest.find("${") {
        out.push_str(&rest[..start]);
        let after = &rest[start + 2..];
        let Some(end) = after.find('}') else {
            return Err(format!("unterminated `${{` in \"{value}\""));
        };
        let inner = &after[..end];
        let (name, default) = match inner.split_once(":-") {
            Some((name, default)) => (name, Some(default)),
            None => (inner, None),
        };
        let valid_name =
            !name.is_empty() && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
        if !valid_name {
            return Err(format!("invalid variable reference `${{{inner}}}`"));
        }
        match (lookup(name), default) {
            (Some(v), _) => out.push_str(&v),
            (None, Some(default)) => out.push_str(default),
            (None, None) => {
                return Err(format!(
                    "environment variable {name} is not set (write ${{{name}:-default}} to give a default)"
                ));
            }
        }
        rest = &after[end + 1..];
    }
    out.push_str(rest);
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env(pairs: &[(&str, &str)]) -> impl Fn(&str) -> Option<String> {
        let pairs: Vec<(String, String)> = pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        move |name| {
            pairs
                .iter()
                .find(|(k, _)| k == name)
                .map(|(_, v)| v.clone())
        }
    }

    #[test]
    fn expand_plain_default_and_unset() {
        let lookup = env(&[("A", "1"), ("EMPTY", "")]);
        assert_eq!(expand("x${A}y", &lookup).unwrap(), "x1y");
        assert_eq!(expand("${B:-two}", &lookup).unwrap(), "two");
        assert_eq!(expand("${EMPTY:-d}", &lookup).unwrap(), "");
        assert_eq!(expand("no vars $A", &lookup).unwrap(), "no vars $A");
        let err = expand("k=${TOKEN}", &lookup).unwrap_err();
        assert!(err.contains("TOKEN is not set"), "{err}");
        assert!(expand("${A", &lookup).unwrap_err().contains("unterminated"));
        assert!(expand("${A B}", &lookup).unwrap_err().contains("invalid"));
    }

    #[test]
    fn parse_server_names_the_bad_field() {
        let v = serde_json::json!({"command": "x", "args": ["a", 1]});
        assert_eq!(
            parse_server(&v, "mcpServers.s").unwrap_err(),
            "mcpServers.s.args[1]: expected a string"
        );
        let v = serde_json::json!({"type": "stdio"});
        assert!(
            parse_server(&v, "mcpServers.s")
                .unwrap_err()
                .contains("needs either")
        );
        let v = serde_json::json!({"url": "http://x", "headers": {"A": 2}});
        assert_eq!(
            parse_server(&v, "mcpServers.s").unwrap_err(),
            "mcpServers.s.headers.A: expected a string"
        );
    }

    #[test]
    fn parse_file_reports_line_and_column() {
        let err = parse_file("{\n  \"mcpServers\": {,\n}").unwrap_err();
        assert!(err.contains("line 2"), "{err}");
        assert!(parse_file("[]").unwrap_err().contains("top level"));
        assert!(
            parse_file("{\"mcpServers\": []}")
                .unwrap_err()
                .contains("object")
        );
        assert!(parse_file("{}").unwrap().is_empty());
    }

    fn entry(config: Value) -> ServerEntry {
        ServerEntry {
            name: "s".into(),
            source: Source::Project,
            config_path: None,
            plugin_root: Some(PathBuf::from("/plugins/p")),
            base_dir: PathBuf::from("/base"),
            config: parse_server(&config, "mcpServers.s"),
            raw: config,
            replaced: None,
        }
    }

    // SPEC-2: the machine-to-machine grants and CIMD parse; each missing or bad field is named.
    #[test]
    fn spec_2_grant_keys_parse_and_bad_ones_name_the_field() {
        let parse = |oauth: serde_json::Value| {
            let v = serde_json::json!({"url": "http://x", "oauth": oauth});
            parse_server(&v, "mcpServers.s").map(|c| c.oauth.unwrap())
        };
        let cimd = parse(serde_json::json!({"clientMetadataUrl": "https://c.example/m.json"}));
        assert_eq!(
            cimd.unwrap().client_metadata_url.as_deref(),
            Some("https://c.example/m.json")
        );
        let jwt = parse(
            serde_json::json!({"grant": "client_credentials", "clientId": "m",
            "privateKeyPath": "k.pem", "signingAlgorithm": "RS256"}),
        )
        .unwrap();
        assert_eq!(jwt.grant, Grant::ClientCredentials);
        let bearer = parse(serde_json::json!({"grant": "jwt-bearer", "clientId": "m",
            "clientSecret": "${S}", "idp": {"issuer": "https://i", "tokenEndpoint": "https://i/t",
            "clientId": "c", "idToken": "${T}"}}))
        .unwrap();
        assert_eq!(bearer.grant, Grant::JwtBearer);
        assert!(!format!("{bearer:?}").contains("${T}"), "id token in Debug");
        for (oauth, error) in [
            (
                serde_json::json!({"grant": "password"}),
                "mcpServers.s.oauth.grant: unknown grant \"password\" (expected \"authorization_code\", \"client_credentials\" or \"jwt-bearer\")",
            ),
            (
                serde_json::json!({"grant": "client_credentials", "clientSecret": "x"}),
                "mcpServers.s.oauth.clientId: missing (grant \"client_credentials\" needs it)",
            ),
            (
                serde_json::json!({"grant": "client_credentials", "clientId": "m",
                    "privateKeyPath": "k", "signingAlgorithm": "HS256"}),
                "mcpServers.s.oauth.signingAlgorithm: unknown algorithm \"HS256\" (expected one of ES256, ES384, RS256, RS384, RS512, PS256, PS384, PS512, EdDSA)",
            ),
            (
                serde_json::json!({"grant": "jwt-bearer", "clientId": "m", "clientSecret": "x"}),
                "mcpServers.s.oauth.idp: missing (grant \"jwt-bearer\" needs it)",
            ),
            (
                serde_json::json!({"grant": "jwt-bearer", "clientId": "m", "clientSecret": "x",
                    "idp": {"issuer": "https://i"}}),
                "mcpServers.s.oauth.idp.tokenEndpoint: missing (the identity provider needs it)",
            ),
        ] {
            assert_eq!(parse(oauth).unwrap_err(), error);
        }
    }

    // AUTH-2: the `oauth` object, each bad field named.
    #[test]
    fn oauth_keys_parse_and_bad_ones_name_the_field() {
        let v = serde_json::json!({"url": "http://x", "oauth": {
            "clientId": "id", "clientSecret": "${S}", "scopes": ["a", "b"], "callbackPort": 33418
        }});
        let oauth = parse_server(&v, "mcpServers.s").unwrap().oauth.unwrap();
        assert_eq!(oauth.client_id.as_deref(), Some("id"));
        assert_eq!(oauth.scopes, ["a", "b"]);
        assert_eq!(oauth.callback_port, Some(33418));
        assert!(!format!("{oauth:?}").contains("${S}"), "secret in Debug");
        for (oauth, error) in [
            (
                serde_json::json!("x"),
                "mcpServers.s.oauth: expected an object",
            ),
            (
                serde_json::json!({"callbackPort": 70000}),
                "mcpServers.s.oauth.callbackPort: expected a port number (1-65535)",
            ),
            (
                serde_json::json!({"callbackPort": "1"}),
                "mcpServers.s.oauth.callbackPort: expected a port number (1-65535)",
            ),
            (
                serde_json::json!({"scopes": "a"}),
                "mcpServers.s.oauth.scopes: expected an array of strings",
            ),
            (
                serde_json::json!({"clientId": 5}),
                "mcpServers.s.oauth.clientId: expected a string",
            ),
        ] {
            let v = serde_json::json!({"url": "http://x", "oauth": oauth});
            assert_eq!(parse_server(&v, "mcpServers.s").unwrap_err(), error);
        }
    }

    // AUTH-7: an own `Authorization` header (any case) turns OAuth off; otherwise it is on, with
    // the secret expanded and never printed.
    #[test]
    fn own_authorization_header_means_no_oauth() {
        let vars = env(&[("S", "hunter2")]);
        let header =
            entry(serde_json::json!({"url": "http://x", "headers": {"authorization": "Bearer t"}}));
        let transport = resolve(&header, Path::new("/w"), &vars).unwrap();
        assert_eq!(transport.remote(), Some(("http://x", None)));
        let oauth = entry(serde_json::json!({"type": "sse", "url": "http://x",
            "oauth": {"clientSecret": "${S}"}}));
        let transport = resolve(&oauth, Path::new("/w"), &vars).unwrap();
        let settings = transport.remote().unwrap().1.unwrap();
        assert_eq!(settings.client_secret.as_ref().unwrap().expose(), "hunter2");
        assert!(!format!("{:?}", settings.client_secret).contains("hunter2"));
    }

    // CFG-5, CFG-6
    #[test]
    fn resolve_picks_transport_and_rejects_unknown_type() {
        let lookup = env(&[("TOKEN", "secret")]);
        let stdio = resolve(
            &entry(serde_json::json!({"command": "./bin/srv", "args": ["${WAVE_PLUGIN_ROOT}/x"]})),
            Path::new("/work"),
            &lookup,
        )
        .unwrap();
        assert_eq!(
            stdio,
            Transport::Stdio {
                command: PathBuf::from("/base/./bin/srv"),
                args: vec!["/plugins/p/x".into()],
                env: vec![],
                cwd: PathBuf::from("/work"),
            }
        );
        let http = resolve(
            &entry(serde_json::json!({"url": "http://h/?k=${TOKEN}"})),
            Path::new("/work"),
            &lookup,
        )
        .unwrap();
        assert!(matches!(http, Transport::Http { url, .. } if url == "http://h/?k=secret"));
        let err = resolve(
            &entry(serde_json::json!({"type": "websocket", "url": "ws://h"})),
            Path::new("/work"),
            &lookup,
        )
        .unwrap_err();
        assert!(
            err.contains("unknown transport type \"websocket\""),
            "{err}"
        );
        let err = resolve(
            &entry(serde_json::json!({"command": "x", "env": {"K": "${NOPE}"}})),
            Path::new("/work"),
            &lookup,
        )
        .unwrap_err();
        assert!(
            err.starts_with("mcpServers.s.env.K: environment variable NOPE"),
            "{err}"
        );
    }
}
