//! Row 6, a warm dial of a signed-in server: `McpManager::connect` of a Streamable HTTP server
//! that requires a bearer token, with a valid token in the credential file, against the same
//! connect of the same kind of server without auth. The stored authorization-server metadata
//! points at a counting listener on 127.0.0.1: a warm dial must send it nothing (AUTH-3).
//!
//! Both servers check the same `Authorization` header, and the plain dial sends the same bytes
//! as a configured `headers` entry: the two dials differ only in where the token comes from
//! (the credential file through rmcp's `AuthClient`, or the entry), so the ratio is the
//! credential path's cost and nothing of the server's. The two are interleaved in ABBA order,
//! `repeats` times each, a fresh manager every time; medians kept.

use std::net::TcpListener;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Instant;

use anyhow::{Context, Result, bail};
use serde_json::{Map, json};
use wave_mcp_manager::{ManagerOptions, McpManager, Status, auth};

use crate::roundtrip::HttpServer;
use crate::util::{self, Scratch};

const TOKEN: &str = "bench-access-token";

pub struct SignInResult {
    pub signed_in: f64,
    pub plain: f64,
    /// Connections the authorization server received during every signed-in dial.
    pub auth_server_requests: u64,
}

pub async fn run(repeats: usize) -> Result<SignInResult> {
    let scratch = Scratch::new()?;
    let header = format!("Authorization:Bearer {TOKEN}");
    let guarded = HttpServer::start(&["--require-header", &header])?;
    let plain = HttpServer::start(&["--require-header", &header])?;
    let (auth_server, requests) = counting_listener()?;
    store_token(&scratch, &guarded.url, &auth_server)?;

    let (mut with_token, mut without) = (Vec::new(), Vec::new());
    for round in 0..repeats {
        // ABBA: neither kind always runs right after the other's teardown.
        if round % 2 == 0 {
            with_token.push(connect_once(&scratch, &guarded.url, None).await?);
            without.push(connect_once(&scratch, &plain.url, Some(&header)).await?);
        } else {
            without.push(connect_once(&scratch, &plain.url, Some(&header)).await?);
            with_token.push(connect_once(&scratch, &guarded.url, None).await?);
        }
    }
    Ok(SignInResult {
        signed_in: util::median(&with_token),
        plain: util::median(&without),
        auth_server_requests: requests.load(Ordering::SeqCst),
    })
}

/// Seconds for one `connect` of a fresh manager whose only server is `url`, sending `header`
/// (`NAME:VALUE`) from the entry when given.
async fn connect_once(scratch: &Scratch, url: &str, header: Option<&str>) -> Result<f64> {
    let mut entry = json!({ "type": "http", "url": url });
    if let Some((name, value)) = header.and_then(|h| h.split_once(':')) {
        entry["headers"] = json!({ name: value });
    }
    let mut servers = Map::new();
    servers.insert("remote".into(), entry);
    let manager = McpManager::new(ManagerOptions {
        workdir: scratch.workdir.clone(),
        home: Some(scratch.home.clone()),
        servers,
        ..ManagerOptions::default()
    });
    let start = Instant::now();
    let connected = manager.connect("remote").await;
    let took = start.elapsed();
    let status = manager.snapshot().servers[0].status;
    manager.cleanup().await;
    connected.context("bench dial")?;
    if status != Status::Connected {
        bail!("the bench server is {}", status.as_str());
    }
    Ok(util::secs(took))
}

/// A valid, unexpired token for `url`, as `wave-mcp login` stores it.
fn store_token(scratch: &Scratch, url: &str, auth_server: &str) -> Result<()> {
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)?
        .as_secs();
    let key = auth::canonical_url(url).map_err(anyhow::Error::msg)?;
    let file = json!({
        "version": 1,
        "servers": { key: {
            "credentials": {
                "client_id": "bench-client",
                "token_response": {
                    "access_token": TOKEN, "token_type": "bearer", "expires_in": 3600,
                    "refresh_token": "bench-refresh"
                },
                "granted_scopes": [], "token_received_at": now
            },
            "metadata": {
                "issuer": auth_server,
                "authorization_endpoint": format!("{auth_server}/authorize"),
                "token_endpoint": format!("{auth_server}/token"),
                "code_challenge_methods_supported": ["S256"]
            },
            "redirectUri": "http://127.0.0.1:1/callback"
        }}
    });
    let path = auth::credentials_path(&scratch.home);
    std::fs::create_dir_all(path.parent().context("credential dir")?)?;
    std::fs::write(&path, serde_json::to_vec_pretty(&file)?)?;
    Ok(())
}

/// A listener on 127.0.0.1 that only counts the connections it gets; its URL.
fn counting_listener() -> Result<(String, Arc<AtomicU64>)> {
    let listener = TcpListener::bind("127.0.0.1:0")?;
    let url = format!("http://{}", listener.local_addr()?);
    let count = Arc::new(AtomicU64::new(0));
    let counted = count.clone();
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            counted.fetch_add(1, Ordering::SeqCst);
            drop(stream);
        }
    });
    Ok((url, count))
}
