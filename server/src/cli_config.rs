//! Editing MCP config files from the command line (USE-1, USE-2): `add`, `add-json`, `remove`,
//! `get` and `import`. Every write goes through the byte-preserving editor of the settings page
//! (`lsp::config_edit`): one entry changes, every other byte stays. Values are written as given
//! (`${VAR}` is never expanded). An entry added to a project counts as approved (TRUST-1).

use std::path::{Path, PathBuf};

use anyhow::{Context, Result, anyhow, bail};
use serde_json::{Map, Value};
use wave_mcp_manager::TrustStore;
use wave_mcp_manager::config::{parse_file, parse_server, project_config_path, user_config_path};
use wave_mcp_manager::inert::terminal_safe as safe;
use wave_mcp_manager::trust::entry_fingerprint;

use crate::lsp::config_edit::{add_server, remove_server};

/// Which config file a verb works on.
#[derive(Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Scope {
    /// The workdir's `.mcp.json`.
    Project,
    /// `~/.wave/mcp.json`.
    User,
}

/// How a remote server added with `add --transport` is reached.
#[derive(Clone, Copy, clap::ValueEnum)]
pub enum Transport {
    Stdio,
    Http,
    Sse,
}

/// The host whose config `import` reads.
#[derive(Clone, Copy, clap::ValueEnum)]
pub enum Host {
    ClaudeDesktop,
    ClaudeCode,
    Vscode,
    Cursor,
}

/// The directories a verb works in: the project (absolute) and the home directory.
pub struct Places {
    workdir: PathBuf,
    home: PathBuf,
}

impl Places {
    pub fn new(workdir: Option<PathBuf>) -> Result<Places> {
        let workdir = match workdir {
            Some(dir) => dir,
            None => std::env::current_dir().context("cannot read the current directory")?,
        };
        if !workdir.is_dir() {
            bail!("--workdir {}: not a directory", workdir.display());
        }
        let workdir = std::path::absolute(&workdir)
            .with_context(|| format!("--workdir {}", workdir.display()))?;
        let home = dirs::home_dir().ok_or_else(|| anyhow!("cannot find the home directory"))?;
        let home = std::path::absolute(&home).unwrap_or(home);
        Ok(Places { workdir, home })
    }

    pub(crate) fn path(&self, scope: Scope) -> PathBuf {
        match scope {
            Scope::Project => project_config_path(&self.workdir),
            Scope::User => user_config_path(&self.home),
        }
    }
}

/// What `add` was given.
pub struct AddArgs {
    pub transport: Option<Transport>,
    pub env: Vec<String>,
    pub headers: Vec<String>,
    pub url: Option<String>,
    pub command: Vec<String>,
}

/// The entry `add` writes, from its flags. Errors name the flag.
pub fn entry_from_flags(args: AddArgs) -> Result<Value> {
    let mut entry = Map::new();
    let remote = match args.transport {
        Some(Transport::Http) => Some("http"),
        Some(Transport::Sse) => Some("sse"),
        Some(Transport::Stdio) | None => None,
    };
    match remote {
        Some(kind) => {
            let (Some(url), true) = (&args.url, args.command.is_empty()) else {
                bail!(
                    "--transport {kind}: expected one URL and no command, e.g. --transport {kind} https://example.com/mcp"
                );
            };
            entry.insert("type".into(), kind.into());
            entry.insert("url".into(), url.clone().into());
        }
        None => {
            if let Some(url) = &args.url {
                bail!(
                    "{url}: a URL needs --transport http or --transport sse; a command goes after `--`"
                );
            }
            let Some((command, rest)) = args.command.split_first() else {
                bail!(
                    "COMMAND: missing; give it after `--`, e.g. wave-mcp add NAME -- npx -y some-server"
                );
            };
            entry.insert("command".into(), command.clone().into());
            if !rest.is_empty() {
                entry.insert("args".into(), rest.to_vec().into());
            }
        }
    }
    if !args.env.is_empty() {
        let mut env = Map::new();
        for pair in &args.env {
            let Some((key, value)) = pair.split_once('=').filter(|(k, _)| !k.is_empty()) else {
                bail!("--env {pair}: expected KEY=VALUE");
            };
            env.insert(key.into(), value.into());
        }
        entry.insert("env".into(), env.into());
    }
    if !args.headers.is_empty() {
        let mut headers = Map::new();
        for line in &args.headers {
            let Some((key, value)) = line.split_once(':').filter(|(k, _)| !k.trim().is_empty())
            else {
                bail!("--header {line}: expected \"Name: value\"");
            };
            headers.insert(key.trim().into(), value.trim().into());
        }
        entry.insert("headers".into(), headers.into());
    }
    Ok(Value::Object(entry))
}

/// The entry `add-json` writes. Errors name the field.
pub fn entry_from_json(name: &str, json: &str) -> Result<Value> {
    let value: Value = serde_json::from_str(json)
        .map_err(|e| anyhow!("entry JSON of \"{name}\": not valid JSON ({e})"))?;
    Ok(value)
}

/// `add` / `add-json`: writes `entry` as `mcpServers.<name>` of the scope's file.
pub fn add(places: &Places, scope: Scope, name: &str, entry: Value) -> Result<()> {
    parse_server(&entry, &format!("mcpServers.{name}")).map_err(|reason| anyhow!("{reason}"))?;
    let path = places.path(scope);
    write_entry(places, scope, &path, name, &entry)?;
    println!("added MCP server \"{}\" to {}", safe(name), path.display());
    Ok(())
}

/// Writes one new entry (the file is created when missing); a project entry is approved as
/// written.
pub(crate) fn write_entry(
    places: &Places,
    scope: Scope,
    path: &Path,
    name: &str,
    entry: &Value,
) -> Result<()> {
    add_server(path, name, entry)?;
    if scope == Scope::Project {
        let trust = TrustStore::new(&places.home, &places.workdir);
        trust
            .approve(name, &entry_fingerprint(entry))
            .map_err(|reason| {
                anyhow!("added \"{name}\" but cannot record its approval: {reason}")
            })?;
    }
    Ok(())
}

/// The scope whose file holds `name`: the given one, else the project's, then the user's.
fn find(places: &Places, scope: Option<Scope>, name: &str) -> Result<(PathBuf, Value)> {
    let scopes = match scope {
        Some(scope) => vec![scope],
        None => vec![Scope::Project, Scope::User],
    };
    for scope in &scopes {
        let path = places.path(*scope);
        let Some(servers) = read_servers(&path)? else {
            continue;
        };
        if let Some(entry) = servers.get(name) {
            return Ok((path, entry.clone()));
        }
    }
    let looked: Vec<String> = scopes
        .iter()
        .map(|s| places.path(*s).display().to_string())
        .collect();
    bail!("no MCP server named \"{name}\" in {}", looked.join(" or "))
}

fn read_servers(path: &Path) -> Result<Option<Map<String, Value>>> {
    let text = match std::fs::read_to_string(path) {
        Ok(text) => text,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => bail!("cannot read {}: {e}", path.display()),
    };
    parse_file(&text)
        .map(Some)
        .map_err(|reason| anyhow!("{}: {reason}", path.display()))
}

/// `get NAME`: prints the entry as written and the file it is in.
pub fn get(places: &Places, scope: Option<Scope>, name: &str) -> Result<()> {
    let (path, entry) = find(places, scope, name)?;
    println!("{} (in {}):", safe(name), path.display());
    println!("{}", safe(&serde_json::to_string_pretty(&entry)?));
    Ok(())
}

/// `remove NAME`: deletes the entry from the file it is in.
pub fn remove(places: &Places, scope: Option<Scope>, name: &str) -> Result<()> {
    let (path, _) = find(places, scope, name)?;
    remove_server(&path, name)?;
    println!(
        "removed MCP server \"{}\" from {}",
        safe(name),
        path.display()
    );
    Ok(())
}

/// One server found in a host's config file.
struct Found {
    name: String,
    entry: Value,
    from: PathBuf,
}

/// `import --from HOST`: adds the host's servers to the scope's file; names there already are
/// reported and left alone; entries with another host's variables are skipped.
pub fn import(places: &Places, host: Host, scope: Scope, dry_run: bool) -> Result<()> {
    let found = host_servers(places, host)?;
    let path = places.path(scope);
    let existing = read_servers(&path)?.unwrap_or_default();
    let mut taken: Vec<String> = existing.keys().cloned().collect();
    let verb = if dry_run { "would add" } else { "added" };
    if found.is_empty() {
        println!(
            "no MCP servers found in {}",
            host_paths(places, host)
                .iter()
                .map(|p| p.display().to_string())
                .collect::<Vec<_>>()
                .join(" or ")
        );
    }
    for Found { name, entry, from } in found {
        let shown = safe(&name);
        if taken.contains(&name) {
            println!(
                "exists: \"{shown}\" is already in {}; left as it is",
                path.display()
            );
            continue;
        }
        if let Some(reason) = foreign_variable(&entry) {
            println!("skipped: \"{shown}\" {reason}");
            continue;
        }
        let entry = host_entry(host, entry);
        if let Err(reason) = parse_server(&entry, &format!("mcpServers.{name}")) {
            println!("skipped: \"{shown}\": {}", safe(&reason));
            continue;
        }
        if !dry_run {
            write_entry(places, scope, &path, &name, &entry)?;
        }
        println!(
            "{verb}: \"{shown}\" from {} to {}",
            from.display(),
            path.display()
        );
        taken.push(name);
    }
    Ok(())
}

/// The host's config files, in the order they are read.
fn host_paths(places: &Places, host: Host) -> Vec<PathBuf> {
    let config = dirs::config_dir().unwrap_or_else(|| places.home.join(".config"));
    match host {
        Host::ClaudeDesktop => vec![config.join("Claude").join("claude_desktop_config.json")],
        Host::ClaudeCode => vec![places.home.join(".claude.json")],
        Host::Vscode => vec![config.join("Code").join("User").join("mcp.json")],
        Host::Cursor => vec![places.home.join(".cursor").join("mcp.json")],
    }
}

fn host_servers(places: &Places, host: Host) -> Result<Vec<Found>> {
    let mut found = Vec::new();
    for path in host_paths(places, host) {
        let text = match std::fs::read_to_string(&path) {
            Ok(text) => text,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => continue,
            Err(e) => bail!("cannot read {}: {e}", path.display()),
        };
        let root = jsonc_parser::cst::CstRootNode::parse(&text, &Default::default())
            .map_err(|e| anyhow!("{} is not valid JSON: {e}", path.display()))?
            .to_serde_value()
            .unwrap_or_default();
        let mut tables: Vec<&Value> = Vec::new();
        match host {
            Host::Vscode => tables.extend(root.get("servers")),
            Host::ClaudeCode => {
                tables.extend(root.get("mcpServers"));
                let project = places.workdir.to_string_lossy();
                tables.extend(
                    root.get("projects")
                        .and_then(|p| p.get(project.as_ref()))
                        .and_then(|p| p.get("mcpServers")),
                );
            }
            Host::ClaudeDesktop | Host::Cursor => tables.extend(root.get("mcpServers")),
        }
        for table in tables {
            let Some(table) = table.as_object() else {
                bail!(
                    "{}: the servers are not an object keyed by name",
                    path.display()
                );
            };
            for (name, entry) in table {
                found.push(Found {
                    name: name.clone(),
                    entry: entry.clone(),
                    from: path.clone(),
                });
            }
        }
    }
    Ok(found)
}

/// The entry in our format: VS Code's `"type": "stdio"` is our default and is dropped.
fn host_entry(host: Host, mut entry: Value) -> Value {
    if let (Host::Vscode, Some(obj)) = (host, entry.as_object_mut())
        && obj.get("type").and_then(Value::as_str) == Some("stdio")
    {
        obj.remove("type");
    }
    entry
}

/// VS Code's and Cursor's predefined variables: they mean nothing outside that host.
const HOST_VARIABLES: &[&str] = &[
    "workspaceFolder",
    "workspaceFolderBasename",
    "workspaceRoot",
    "userHome",
    "file",
    "fileBasename",
    "fileBasenameNoExtension",
    "fileDirname",
    "fileDirnameBasename",
    "fileExtname",
    "fileWorkspaceFolder",
    "relativeFile",
    "relativeFileDirname",
    "cwd",
    "execPath",
    "pathSeparator",
    "lineNumber",
    "selectedText",
    "defaultBuildTask",
];

/// Why the entry cannot be imported as it is: a `${input:…}` prompt or another host's variable.
fn foreign_variable(entry: &Value) -> Option<String> {
    match entry {
        Value::String(text) => variables(text).find_map(|inner| {
            if inner.starts_with("input:") {
                return Some(format!(
                    "uses ${{{inner}}}, a VS Code input prompt wave-mcp cannot ask"
                ));
            }
            let name = inner.split(":-").next().unwrap_or(inner);
            let foreign = HOST_VARIABLES.contains(&name)
                || ["env:", "config:", "command:"]
                    .iter()
                    .any(|p| inner.starts_with(p));
            foreign.then(|| {
                format!("uses ${{{inner}}}, another host's variable wave-mcp does not expand")
            })
        }),
        Value::Array(items) => items.iter().find_map(foreign_variable),
        Value::Object(map) => map.values().find_map(foreign_variable),
        _ => None,
    }
}

/// The insides of each `${…}` in `text`.
fn variables(text: &str) -> impl Iterator<Item = &str> {
    text.split("${")
        .skip(1)
        .filter_map(|rest| rest.split_once('}').map(|(inner, _)| inner))
}
