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
//!
//! Milliseconds of loopback dials on a shared 2-core machine move by ±10 % between runs, more
//! than the credential path costs. So the row also counts it: the same dials in a child process
//! under callgrind (`--signin-callgrind`), instructions of the whole client process for 1 and
//! for 1 + `COUNTED_DIALS` dials of each kind; the difference over `COUNTED_DIALS` is one dial's
//! instructions, repeatable whatever else the machine does.

use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::Stdio;
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
    /// Instructions of one dial (callgrind) with the stored token and with the entry's header;
    /// `Err` says why they were not counted (no valgrind).
    pub counted: Result<(u64, u64), String>,
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
    let counted = match valgrind_available() {
        Ok(()) => Ok((
            per_dial_instructions(&scratch, &guarded.url, None).await?,
            per_dial_instructions(&scratch, &plain.url, Some(&header)).await?,
        )),
        Err(reason) => Err(reason),
    };
    Ok(SignInResult {
        signed_in: util::median(&with_token),
        plain: util::median(&without),
        counted,
        auth_server_requests: requests.load(Ordering::SeqCst),
    })
}

/// Dials counted by callgrind beyond the first (which pays for first-use setup).
const COUNTED_DIALS: u64 = 10;

fn valgrind_available() -> Result<(), String> {
    let started = std::process::Command::new("valgrind")
        .arg("--version")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status();
    match started {
        Ok(status) if status.success() => Ok(()),
        _ => Err("valgrind not found".into()),
    }
}

/// One dial's instructions: the child's total for 1 + `COUNTED_DIALS` dials minus its total
/// for 1, over `COUNTED_DIALS`.
async fn per_dial_instructions(scratch: &Scratch, url: &str, header: Option<&str>) -> Result<u64> {
    let one = child_instructions(scratch, url, header, 1).await?;
    let many = child_instructions(scratch, url, header, 1 + COUNTED_DIALS).await?;
    Ok(many.saturating_sub(one) / COUNTED_DIALS)
}

async fn child_instructions(
    scratch: &Scratch,
    url: &str,
    header: Option<&str>,
    dials: u64,
) -> Result<u64> {
    let out = scratch.root.join(format!("signin-{dials}.callgrind"));
    let mut command = tokio::process::Command::new("valgrind");
    command
        .arg("--tool=callgrind")
        .arg(format!("--callgrind-out-file={}", out.display()))
        .arg(std::env::current_exe()?)
        .args([
            "--signin-callgrind",
            "--url",
            url,
            "--dials",
            &dials.to_string(),
        ])
        .arg("--home")
        .arg(&scratch.home)
        .arg("--workdir")
        .arg(&scratch.workdir);
    if let Some(header) = header {
        command.args(["--header", header]);
    }
    let output = command.output().await.context("running valgrind")?;
    if !output.status.success() {
        bail!(
            "callgrind run of the sign-in dials failed: {}",
            String::from_utf8_lossy(&output.stderr)
        );
    }
    let text = std::fs::read_to_string(&out).context("reading the callgrind output")?;
    let total = text
        .lines()
        .find_map(|line| {
            line.strip_prefix("totals:")
                .or(line.strip_prefix("summary:"))
        })
        .and_then(|rest| rest.split_whitespace().next())
        .and_then(|n| n.parse().ok())
        .context("no totals in the callgrind output")?;
    Ok(total)
}

/// The child under callgrind: `--signin-callgrind --url URL --dials N --home DIR --workdir DIR
/// [--header NAME:VALUE]`: N dials, one after the other, as the row makes them.
pub fn child_main(
    url: &str,
    dials: u64,
    home: &Path,
    workdir: &Path,
    header: Option<&str>,
) -> Result<()> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    let place = Place {
        home: home.to_path_buf(),
        workdir: workdir.to_path_buf(),
    };
    runtime.block_on(async {
        for _ in 0..dials {
            connect_at(&place, url, header).await?;
        }
        Ok(())
    })
}

/// Where a dial's manager looks: its home (credentials) and project.
struct Place {
    home: PathBuf,
    workdir: PathBuf,
}

/// Seconds for one `connect` of a fresh manager whose only server is `url`, sending `header`
/// (`NAME:VALUE`) from the entry when given.
async fn connect_once(scratch: &Scratch, url: &str, header: Option<&str>) -> Result<f64> {
    let place = Place {
        home: scratch.home.clone(),
        workdir: scratch.workdir.clone(),
    };
    connect_at(&place, url, header).await
}

async fn connect_at(place: &Place, url: &str, header: Option<&str>) -> Result<f64> {
    let mut entry = json!({ "type": "http", "url": url });
    if let Some((name, value)) = header.and_then(|h| h.split_once(':')) {
        entry["headers"] = json!({ name: value });
    }
    let mut servers = Map::new();
    servers.insert("remote".into(), entry);
    let manager = McpManager::new(ManagerOptions {
        workdir: place.workdir.clone(),
        home: Some(place.home.clone()),
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
