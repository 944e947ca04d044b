//! Secrets (SEC-1, CACHE-8): env and header values, literal or expanded from `${VAR}`, reach the
//! servers but never the cache file, the sidecar's replies and snapshots, its log, or the CLI.

use serde_json::{Value, json};

use super::{initialize, spawn_logged};
use crate::suite::lsp_client::*;
use crate::suite::support::*;

/// Fails with the places where any of `secrets` shows up in `text`.
fn assert_secret_free(place: &str, text: &str, secrets: &[&str]) {
    let found: Vec<&&str> = secrets.iter().filter(|s| text.contains(**s)).collect();
    assert!(found.is_empty(), "{place} shows secrets {found:?}");
}

// SEC-1, CACHE-8: env values and header values — literal ones, and `${VAR}`s expanded from the
// sidecar's environment — reach the server (the stdio server's environment has them; the HTTP
// server requires the header) but never appear in the cache file, in any reply or
// `wave/mcp/serversChanged` snapshot of the sidecar (which is all the webview ever receives),
// in the sidecar's info-level log, in a failing connect's reason, or in the CLI's output and
// info-level log.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn secrets_never_reach_the_cache_snapshots_logs_or_cli() {
    let nonce = Rng::new(std::process::id() as u64 ^ 0xABCD).next_u64();
    let env_secret = format!("env-secret-{nonce:x}");
    let env_literal = format!("env-literal-{nonce:x}");
    let header_secret = format!("header-secret-{nonce:x}");
    let header_literal = format!("header-literal-{nonce:x}");
    let url_secret = format!("url-secret-{nonce:x}");
    let secrets = [
        env_secret.as_str(),
        env_literal.as_str(),
        header_secret.as_str(),
        header_literal.as_str(),
        url_secret.as_str(),
    ];
    let http = HttpServer::start(&["--require-header", &format!("X-Api-Key:{header_secret}")]);
    let sandbox = Sandbox::new();
    let mut stdio = sandbox.server_with_pids("stdio", &["--tools", "echo"]);
    stdio["env"] = json!({ "API_TOKEN": "${WAVE_TEST_ENV_SECRET}", "LITERAL": env_literal });
    let remote = |key: &str| {
        json!({
            "type": "http",
            "url": format!("{}?token=${{WAVE_TEST_URL_SECRET}}", http.url),
            "headers": { "X-Api-Key": key, "X-Literal": header_literal },
        })
    };
    sandbox.write_project(json!({
        "stdio": stdio,
        "remote": remote("${WAVE_TEST_HEADER_SECRET}"),
        "wrong": remote("${WAVE_TEST_URL_SECRET}"),
    }));
    let envs = [
        ("WAVE_TEST_ENV_SECRET", env_secret.as_str()),
        ("WAVE_TEST_HEADER_SECRET", header_secret.as_str()),
        ("WAVE_TEST_URL_SECRET", url_secret.as_str()),
    ];

    let log = sandbox.path("sidecar.log");
    let sidecar = spawn_logged(&sandbox, &log, "info", &envs);
    initialize(&sidecar, &sandbox).await;
    let connected = sidecar
        .ok("wave/mcp/connect", json!({ "name": "stdio" }))
        .await;
    assert_eq!(status_of(&connected, "stdio").as_deref(), Some("connected"));
    let connected = sidecar
        .ok("wave/mcp/connect", json!({ "name": "remote" }))
        .await;
    assert_eq!(
        status_of(&connected, "remote").as_deref(),
        Some("connected"),
        "{connected:#}"
    );
    let failed = sidecar
        .ok("wave/mcp/connect", json!({ "name": "wrong" }))
        .await;
    assert_eq!(
        status_of(&failed, "wrong").as_deref(),
        Some("error"),
        "{failed:#}"
    );
    // The values did reach the server.
    let pid = wait_for_pids(&sandbox.pid_file("stdio"), 1).await[0];
    let environ = std::fs::read(format!("/proc/{pid}/environ")).unwrap();
    let environ = String::from_utf8_lossy(&environ);
    assert!(environ.contains(&format!("API_TOKEN={env_secret}")));
    assert!(environ.contains(&format!("LITERAL={env_literal}")));
    // As written: `${VAR}` in the row's url, no env or headers at all.
    assert!(
        row(&connected, "remote")["url"]
            .as_str()
            .unwrap()
            .contains("${WAVE_TEST_URL_SECRET}")
    );
    sidecar
        .ok("wave/mcp/disconnect", json!({ "name": "stdio" }))
        .await;
    sidecar
        .ok("wave/mcp/connect", json!({ "name": "stdio" }))
        .await;
    sidecar.ok("wave/mcp/configPaths", json!({})).await;
    sidecar.ok("wave/mcp/servers", json!({})).await;
    let wire: Vec<String> = sidecar.messages().iter().map(Value::to_string).collect();
    sidecar.stop().await;

    assert!(wire.iter().any(|m| m.contains("wave/mcp/serversChanged")));
    assert_secret_free(
        "the sidecar's replies and notifications",
        &wire.join("\n"),
        &secrets,
    );
    let cache = std::fs::read_to_string(sandbox.home.join(".wave").join("mcp-tools-cache.json"))
        .expect("the cache file was written");
    assert!(
        cache.contains("\"stdio@") && cache.contains("\"remote@"),
        "{cache}"
    );
    assert_secret_free("the cache file", &cache, &secrets);
    let stderr = std::fs::read_to_string(&log).unwrap();
    assert!(
        stderr.contains("INFO"),
        "no info-level log was written:\n{stderr}"
    );
    assert_secret_free("the sidecar's info log", &stderr, &secrets);

    // The CLI: `servers`, `tools`, `call`, with info-level logs.
    for args in [
        vec!["servers", "--json"],
        vec!["tools", "stdio", "--json"],
        vec!["tools", "remote", "--json"],
        vec!["call", "remote", "echo", r#"{"text": "hi"}"#, "--json"],
        vec!["tools", "wrong"],
    ] {
        let output = std::process::Command::new(wave_mcp())
            .args(&args)
            .arg("--workdir")
            .arg(&sandbox.workdir)
            .env("HOME", &sandbox.home)
            .env("WAVE_LOG", "info")
            .envs(envs)
            .output()
            .unwrap();
        let text = format!(
            "{}\n{}",
            String::from_utf8_lossy(&output.stdout),
            String::from_utf8_lossy(&output.stderr)
        );
        assert_secret_free(&format!("wave-mcp {}", args.join(" ")), &text, &secrets);
    }
    let cache =
        std::fs::read_to_string(sandbox.home.join(".wave").join("mcp-tools-cache.json")).unwrap();
    assert_secret_free("the cache file after the CLI", &cache, &secrets);
}
