//! `--registry DIR`: a local MCP Registry on 127.0.0.1 with the official API's shape (USE-3
//! tests), serving recorded registry answers: each `*.json` file in DIR is one server version as
//! `GET /v0.1/servers/{name}/versions/{version}` returns it (`{ "server": <server.json>,
//! "_meta": { "io.modelcontextprotocol.registry/official": { "isLatest", ... } } }`).
//!
//! - `GET /v0.1/servers?search=&version=latest&limit=&cursor=`: name substring match (case
//!   insensitive), by name then file order, `{ servers, metadata: { nextCursor?, count } }`;
//!   the cursor is opaque (an offset here).
//! - `GET /v0.1/servers/{name}/versions/{version}` (`latest` too), 404 `{ "error" }` otherwise.
//! - `GET /control/requests`: the list requests seen, as `{ "searches": ["term", ...] }`.

use std::io::Write;
use std::path::Path;
use std::sync::{Arc, Mutex};

use anyhow::{Context, Result};
use axum::{
    Router,
    extract::{Path as UrlPath, RawQuery, State},
    http::{StatusCode, header},
    response::{IntoResponse, Response},
    routing::get,
};
use serde_json::{Value, json};

struct Registry {
    /// Every recorded answer, sorted by server name (file order within a name).
    versions: Vec<Value>,
    searches: Mutex<Vec<String>>,
}

fn name_of(answer: &Value) -> &str {
    answer["server"]["name"].as_str().unwrap_or_default()
}

fn version_of(answer: &Value) -> &str {
    answer["server"]["version"].as_str().unwrap_or_default()
}

fn is_latest(answer: &Value) -> bool {
    answer["_meta"]["io.modelcontextprotocol.registry/official"]["isLatest"]
        .as_bool()
        .unwrap_or(false)
}

fn load(dir: &Path) -> Result<Vec<Value>> {
    let mut files: Vec<_> = std::fs::read_dir(dir)
        .with_context(|| format!("reading {}", dir.display()))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "json"))
        .collect();
    files.sort();
    let mut versions = Vec::new();
    for file in files {
        let text = std::fs::read_to_string(&file)
            .with_context(|| format!("reading {}", file.display()))?;
        let value: Value = serde_json::from_str(&text)
            .with_context(|| format!("{} is not JSON", file.display()))?;
        versions.push(value);
    }
    versions.sort_by(|a, b| name_of(a).cmp(name_of(b)));
    Ok(versions)
}

/// A JSON answer.
fn json_answer(status: StatusCode, value: Value) -> Response {
    (
        status,
        [(header::CONTENT_TYPE, "application/json")],
        value.to_string(),
    )
        .into_response()
}

#[derive(Default)]
struct ListQuery {
    search: Option<String>,
    version: Option<String>,
    limit: Option<usize>,
    cursor: Option<String>,
}

fn list_query(raw: Option<String>) -> ListQuery {
    let mut query = ListQuery::default();
    let raw = raw.unwrap_or_default();
    for (key, value) in url::form_urlencoded::parse(raw.as_bytes()) {
        let value = value.into_owned();
        match key.as_ref() {
            "search" => query.search = Some(value),
            "version" => query.version = Some(value),
            "limit" => query.limit = value.parse().ok(),
            "cursor" => query.cursor = Some(value),
            _ => {}
        }
    }
    query
}

async fn list(State(registry): State<Arc<Registry>>, RawQuery(raw): RawQuery) -> Response {
    let query = list_query(raw);
    let term = query.search.unwrap_or_default().to_lowercase();
    registry
        .searches
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .push(term.clone());
    let matching: Vec<&Value> = registry
        .versions
        .iter()
        .filter(|v| name_of(v).to_lowercase().contains(&term))
        .filter(|v| match query.version.as_deref() {
            Some("latest") => is_latest(v),
            Some(version) => version_of(v) == version,
            None => true,
        })
        .collect();
    let start = match query.cursor.as_deref().map(str::parse::<usize>) {
        None => 0,
        Some(Ok(offset)) => offset,
        Some(Err(_)) => {
            return json_answer(StatusCode::BAD_REQUEST, json!({"error": "invalid cursor"}));
        }
    };
    let limit = query.limit.unwrap_or(30).clamp(1, 100);
    let page: Vec<&Value> = matching.iter().skip(start).take(limit).copied().collect();
    let mut metadata = json!({"count": page.len()});
    if start + page.len() < matching.len() {
        metadata["nextCursor"] = json!((start + page.len()).to_string());
    }
    json_answer(
        StatusCode::OK,
        json!({"servers": page, "metadata": metadata}),
    )
}

async fn one(
    State(registry): State<Arc<Registry>>,
    UrlPath((name, version)): UrlPath<(String, String)>,
) -> Response {
    let found = registry.versions.iter().find(|v| {
        name_of(v) == name
            && if version == "latest" {
                is_latest(v)
            } else {
                version_of(v) == version
            }
    });
    match found {
        Some(answer) => json_answer(StatusCode::OK, answer.clone()),
        None => json_answer(StatusCode::NOT_FOUND, json!({"error": "Server not found"})),
    }
}

async fn requests(State(registry): State<Arc<Registry>>) -> Response {
    let searches = registry
        .searches
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .clone();
    json_answer(StatusCode::OK, json!({"searches": searches}))
}

/// Serves the recorded registry in `dir` on 127.0.0.1:`port` until killed.
pub async fn serve(dir: &Path, port: u16) -> Result<()> {
    let registry = Arc::new(Registry {
        versions: load(dir)?,
        searches: Mutex::new(Vec::new()),
    });
    let router = Router::new()
        .route("/v0.1/servers", get(list))
        .route("/v0.1/servers/{name}/versions/{version}", get(one))
        .route("/control/requests", get(requests))
        .fallback(|| async { StatusCode::NOT_FOUND })
        .with_state(registry);
    let listener = tokio::net::TcpListener::bind(("127.0.0.1", port))
        .await
        .with_context(|| format!("binding 127.0.0.1:{port}"))?;
    let port = listener
        .local_addr()
        .context("reading the bound address")?
        .port();
    let mut stdout = std::io::stdout().lock();
    writeln!(stdout, "listening on http://127.0.0.1:{port}/v0.1")?;
    stdout.flush()?;
    drop(stdout);
    axum::serve(listener, router)
        .await
        .context("serving HTTP")?;
    Ok(())
}
