//! USE-3: `wave-mcp registry search` and `wave-mcp add NAME --from-registry SERVER[@VERSION]`
//! against a local MCP Registry on 127.0.0.1 (our test server's `--registry` mode, the official
//! API's shape) serving recorded real `server.json` documents: npm, PyPI, OCI, remote with a
//! header, NuGet (not installable).

use serde_json::{Value, json};
use wave_mcp_testkit::HttpServer;

use super::verbs::{PROJECT_FILE, Place, error_line, ok, place, read, run_with_env, status_line};

fn run(place: &Place, registry: &HttpServer, args: &[&str]) -> std::process::Output {
    run_with_env(place, args, &[("WAVE_REGISTRY_URL", &registry.base)])
}

fn entry(path: &std::path::Path, name: &str) -> Value {
    let value: Value = serde_json::from_str(&read(path)).unwrap();
    value["mcpServers"][name].clone()
}

/// The text between `start` and the next line that starts without indentation.
fn section<'a>(text: &'a str, start: &str) -> &'a str {
    let Some(at) = text.find(start) else {
        panic!("no {start:?} in:\n{text}");
    };
    let rest = &text[at + start.len()..];
    let end = rest
        .match_indices('\n')
        .find(|(i, _)| !rest[i + 1..].starts_with(' '))
        .map_or(rest.len(), |(i, _)| i);
    &rest[..end]
}

// USE-3: search asks the registry's API with the term and shows the latest version of each
// matching server, how wave-mcp would run it, and a server it cannot install as such.
#[test]
fn use_3_registry_search_shows_the_latest_version_of_each_match() {
    let registry = HttpServer::start_registry();
    let p = place();
    let text = ok(
        &run(&p, &registry, &["registry", "search", "DOMDOMEGG"]),
        "search",
    );
    assert!(
        text.contains(
            "io.github.domdomegg/airtable-mcp-server  1.7.3  (npm package airtable-mcp-server@1.7.3)"
        ),
        "{text}"
    );
    assert!(!text.contains("1.7.2"), "an old version listed:\n{text}");
    assert!(
        text.contains(
            "io.github.domdomegg/time-mcp-pypi  1.0.6  (PyPI package time-mcp-pypi==1.0.6)"
        ),
        "{text}"
    );
    assert!(
        text.contains(
            "io.github.domdomegg/time-mcp-nuget  1.0.8  (NuGet package TimeMcpServer@1.0.8)"
        ),
        "{text}"
    );
    assert!(
        text.contains(
            "    Read and write access to Airtable database schemas, tables, and records."
        ),
        "{text}"
    );
    assert!(!text.contains("github-mcp-server"), "{text}");
    let (_, requests) = registry.request("GET", "/control/requests");
    assert!(requests.contains("\"domdomegg\""), "{requests}");

    let text = ok(
        &run(
            &p,
            &registry,
            &["registry", "search", "domdomegg", "--limit", "1"],
        ),
        "search --limit 1",
    );
    assert!(text.contains("airtable-mcp-server"), "{text}");
    assert!(!text.contains("time-mcp"), "{text}");
    assert!(text.contains("more servers match"), "{text}");

    let text = ok(
        &run(&p, &registry, &["registry", "search", "nothing-like-it"]),
        "none",
    );
    assert!(text.contains("no MCP server in the registry at"), "{text}");
}

// USE-3: an npm server becomes `npx -y PKG@VER` with its required variable as a `${VAR}`
// placeholder, listed; every other byte of the project file stays, and the user's own add
// counts as approval (TRUST-1).
#[test]
fn use_3_add_from_registry_npm_keeps_every_other_byte_and_lists_the_variable() {
    let registry = HttpServer::start_registry();
    let p = place();
    let file = p.project.join(".mcp.json");
    std::fs::write(&file, PROJECT_FILE).unwrap();
    let out = run(
        &p,
        &registry,
        &[
            "add",
            "airtable",
            "--from-registry",
            "io.github.domdomegg/airtable-mcp-server",
        ],
    );
    let text = ok(&out, "add --from-registry");
    let after = read(&file);
    let head = "{\n  \"mcpServers\": {\n    \"first\": {\"command\": \"one\", \"args\": [\"${HOME}\"]},\n\n    \"second\":   { \"url\": \"https://example.com/mcp\", \"type\": \"http\" },\n";
    assert!(after.starts_with(head), "{after}");
    assert!(
        after.ends_with("  },\n  \"zzz-unknown\": [1, 2,   3]\n}\n"),
        "{after}"
    );
    assert_eq!(
        entry(&file, "airtable"),
        json!({"command": "npx", "args": ["-y", "airtable-mcp-server@1.7.3"],
               "env": {"AIRTABLE_API_KEY": "${AIRTABLE_API_KEY}"}})
    );
    assert!(
        text.contains(
            "io.github.domdomegg/airtable-mcp-server 1.7.3, npm package airtable-mcp-server@1.7.3"
        ),
        "{text}"
    );
    let set = section(&text, "set these environment variables before it starts:");
    assert!(
        set.contains("  AIRTABLE_API_KEY  environment variable AIRTABLE_API_KEY, secret: Airtable personal access token"),
        "{text}"
    );
    // Removing it gives the file back byte for byte.
    ok(&run(&p, &registry, &["remove", "airtable"]), "remove");
    assert_eq!(read(&file), PROJECT_FILE);
    ok(
        &run(
            &p,
            &registry,
            &[
                "add",
                "airtable",
                "--from-registry",
                "io.github.domdomegg/airtable-mcp-server",
            ],
        ),
        "add again",
    );
    let line = status_line(&p, "airtable");
    assert!(!line.contains("needs-approval"), "{line}");
    assert!(status_line(&p, "first").contains("needs-approval"));
}

// USE-3: `@VERSION` picks that version; the user file is created when missing.
#[test]
fn use_3_add_from_registry_pinned_version_to_a_new_user_file() {
    let registry = HttpServer::start_registry();
    let p = place();
    let user = p.home.join(".wave").join("mcp.json");
    ok(
        &run(
            &p,
            &registry,
            &[
                "add",
                "airtable-old",
                "--scope",
                "user",
                "--from-registry",
                "io.github.domdomegg/airtable-mcp-server@1.7.2",
            ],
        ),
        "add @1.7.2",
    );
    assert_eq!(
        read(&user),
        "{\n  \"mcpServers\": {\n    \"airtable-old\": {\n      \"command\": \"npx\",\n      \"args\": [\n        \"-y\",\n        \"airtable-mcp-server@1.7.2\"\n      ],\n      \"env\": {\n        \"AIRTABLE_API_KEY\": \"${AIRTABLE_API_KEY}\"\n      }\n    }\n  }\n}\n"
    );
    assert!(!p.project.join(".mcp.json").exists());
}

// USE-3: PyPI → `uvx PKG==VER`; OCI → `docker run -i --rm` with the document's fixed runtime
// arguments and the optional token left out and listed; a remote → its URL with the required
// header as a placeholder.
#[test]
fn use_3_add_from_registry_pypi_oci_and_remote() {
    let registry = HttpServer::start_registry();
    let p = place();
    let file = p.project.join(".mcp.json");
    let text = ok(
        &run(
            &p,
            &registry,
            &[
                "add",
                "time",
                "--from-registry",
                "io.github.domdomegg/time-mcp-pypi@1.0.6",
            ],
        ),
        "pypi",
    );
    assert_eq!(
        entry(&file, "time"),
        json!({"command": "uvx", "args": ["time-mcp-pypi==1.0.6"]})
    );
    assert!(!text.contains("set these"), "{text}");

    let text = ok(
        &run(
            &p,
            &registry,
            &[
                "add",
                "github",
                "--from-registry",
                "io.github.github/github-mcp-server",
            ],
        ),
        "oci",
    );
    assert_eq!(
        entry(&file, "github"),
        json!({"command": "docker", "args": ["run", "-i", "--rm",
            "-p", "127.0.0.1:8085:8085", "-e", "GITHUB_OAUTH_CALLBACK_PORT=8085",
            "ghcr.io/github/github-mcp-server:1.12.2"]})
    );
    let optional = section(
        &text,
        "optional, left out (add them to the entry to use them):",
    );
    assert!(
        optional
            .contains("  token  argument token, secret: Optional GitHub Personal Access Token."),
        "{text}"
    );
    assert!(!text.contains("set these"), "{text}");

    let text = ok(
        &run(
            &p,
            &registry,
            &[
                "add",
                "apify",
                "--from-registry",
                "com.apify/apify-mcp-server",
            ],
        ),
        "remote",
    );
    assert_eq!(
        entry(&file, "apify"),
        json!({"type": "http", "url": "https://mcp.apify.com/",
               "headers": {"Authorization": "${AUTHORIZATION}"}})
    );
    let set = section(&text, "set these environment variables before it starts:");
    assert!(
        set.contains("  AUTHORIZATION  header Authorization, secret: Apify API token"),
        "{text}"
    );
}

// USE-3: a NuGet package runs with the .NET SDK's `dnx` (fetched by name, as npx and uvx do);
// a required argument the server takes more than once (`isRepeated`) gets one placeholder and
// is listed as repeatable.
#[test]
fn use_3_add_from_registry_nuget_and_a_repeated_argument() {
    let registry = HttpServer::start_registry();
    let p = place();
    let file = p.project.join(".mcp.json");
    let text = ok(
        &run(
            &p,
            &registry,
            &[
                "add",
                "time",
                "--from-registry",
                "io.github.domdomegg/time-mcp-nuget",
            ],
        ),
        "nuget",
    );
    assert_eq!(
        entry(&file, "time"),
        json!({"command": "dnx", "args": ["TimeMcpServer@1.0.8", "--yes"]})
    );
    assert!(text.contains("NuGet package TimeMcpServer@1.0.8"), "{text}");

    let text = ok(
        &run(
            &p,
            &registry,
            &[
                "add",
                "files",
                "--from-registry",
                "io.github.modelcontextprotocol/filesystem",
            ],
        ),
        "repeated",
    );
    assert_eq!(
        entry(&file, "files"),
        json!({"command": "npx", "args": ["-y", "@modelcontextprotocol/server-filesystem@1.0.2", "${TARGET_DIR}"]})
    );
    let set = section(&text, "set these environment variables before it starts:");
    assert!(
        set.contains("  TARGET_DIR  argument target_dir, may be given more than once (add more after it in args), default /Users/username/Desktop: Path to access"),
        "{text}"
    );
}

// USE-3: a server with only a package type wave-mcp does not run, an unknown server or version,
// and an unreachable registry are errors naming them; the file keeps every byte.
#[test]
fn use_3_add_from_registry_errors_name_the_server_and_the_cause() {
    let registry = HttpServer::start_registry();
    let p = place();
    let file = p.project.join(".mcp.json");
    std::fs::write(&file, PROJECT_FILE).unwrap();
    let line = error_line(
        &run(
            &p,
            &registry,
            &["add", "t", "--from-registry", "io.example/bundle-only"],
        ),
        "mcpb",
    );
    assert!(
        line.contains("registry server \"io.example/bundle-only\" offers only a mcpb package"),
        "{line}"
    );
    assert!(
        line.contains("an mcpb bundle is a file to download"),
        "{line}"
    );
    let line = error_line(
        &run(
            &p,
            &registry,
            &["add", "t", "--from-registry", "io.example/none"],
        ),
        "unknown",
    );
    assert!(
        line.contains("has no server \"io.example/none\" version latest"),
        "{line}"
    );
    let line = error_line(
        &run(
            &p,
            &registry,
            &[
                "add",
                "t",
                "--from-registry",
                "io.github.domdomegg/airtable-mcp-server@9.9.9",
            ],
        ),
        "unknown version",
    );
    assert!(line.contains("version 9.9.9"), "{line}");
    let line = error_line(
        &run(
            &p,
            &registry,
            &[
                "add",
                "first",
                "--from-registry",
                "io.github.domdomegg/time-mcp-pypi",
            ],
        ),
        "name taken",
    );
    assert!(
        line.contains("already has a server named \"first\""),
        "{line}"
    );
    assert_eq!(read(&file), PROJECT_FILE);

    let closed = format!("http://127.0.0.1:{}", wave_mcp_testkit::free_port());
    let line = error_line(
        &run_with_env(
            &p,
            &["registry", "search", "x"],
            &[("WAVE_REGISTRY_URL", &closed)],
        ),
        "unreachable",
    );
    assert!(
        line.contains(&format!("cannot reach the MCP registry at {closed}")),
        "{line}"
    );
}

// USE-3: the sidecar's `wave/registry/search`, `get` and `add` (the settings page's "Browse
// registry") against the same local registry: details with the entry and the inputs, an add to
// the project that keeps every other byte and counts as approval, and errors in words.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn use_3_sidecar_searches_details_and_adds_from_the_registry() {
    use super::lsp_client::{Sidecar, row};
    use super::support::Sandbox;

    let registry = HttpServer::start_registry();
    let sandbox = Sandbox::new();
    let file = sandbox.workdir.join(".mcp.json");
    std::fs::write(&file, PROJECT_FILE).unwrap();
    let sidecar = Sidecar::spawn(&sandbox.root, |command| {
        command.env("WAVE_REGISTRY_URL", &registry.base);
    });
    sidecar
        .initialize(json!({ "initializationOptions": {
            "home": sandbox.home, "workdir": sandbox.workdir } }))
        .await
        .expect("initialize");

    let found = sidecar
        .ok("wave/registry/search", json!({ "query": "AirTable" }))
        .await;
    assert_eq!(found["registryUrl"], json!(registry.base));
    assert_eq!(
        found["servers"],
        json!([{ "name": "io.github.domdomegg/airtable-mcp-server", "version": "1.7.3",
            "description": "Read and write access to Airtable database schemas, tables, and records.",
            "install": "npm package airtable-mcp-server@1.7.3" }])
    );
    let page = sidecar
        .ok("wave/registry/search", json!({ "query": "" }))
        .await;
    assert_eq!(page["servers"].as_array().unwrap().len(), 7, "{page:#}");
    assert!(page.get("nextCursor").is_none(), "{page:#}");

    let details = sidecar
        .ok(
            "wave/registry/get",
            json!({ "name": "com.apify/apify-mcp-server" }),
        )
        .await;
    assert_eq!(
        details["install"]["entry"],
        json!({"type": "http", "url": "https://mcp.apify.com/",
               "headers": {"Authorization": "${AUTHORIZATION}"}})
    );
    assert_eq!(
        details["install"]["inputs"][0]["placeholder"], "AUTHORIZATION",
        "{details:#}"
    );
    assert_eq!(details["install"]["inputs"][0]["kind"], "header");
    assert_eq!(
        details["repositoryUrl"],
        "https://github.com/apify/apify-mcp-server"
    );
    let bundle = sidecar
        .ok(
            "wave/registry/get",
            json!({ "name": "io.example/bundle-only" }),
        )
        .await;
    assert!(bundle.get("install").is_none(), "{bundle:#}");
    assert!(
        bundle["unsupported"]
            .as_str()
            .unwrap()
            .contains("offers only a mcpb package"),
        "{bundle:#}"
    );
    let files = sidecar
        .ok(
            "wave/registry/get",
            json!({ "name": "io.github.modelcontextprotocol/filesystem" }),
        )
        .await;
    assert_eq!(files["install"]["inputs"][0]["repeated"], true, "{files:#}");
    assert_eq!(
        files["install"]["inputs"][0]["name"], "target_dir",
        "{files:#}"
    );

    let added = sidecar
        .ok(
            "wave/registry/add",
            json!({ "name": "airtable", "server": "io.github.domdomegg/airtable-mcp-server",
                    "version": "1.7.2", "scope": "project" }),
        )
        .await;
    assert_eq!(
        std::fs::canonicalize(added["path"].as_str().unwrap()).unwrap(),
        std::fs::canonicalize(&file).unwrap()
    );
    assert_eq!(
        added["install"]["inputs"][0]["placeholder"],
        "AIRTABLE_API_KEY"
    );
    let after = read(&file);
    assert!(
        after.ends_with("  },\n  \"zzz-unknown\": [1, 2,   3]\n}\n"),
        "{after}"
    );
    assert_eq!(
        entry(&file, "airtable"),
        json!({"command": "npx", "args": ["-y", "airtable-mcp-server@1.7.2"],
               "env": {"AIRTABLE_API_KEY": "${AIRTABLE_API_KEY}"}})
    );
    let listed = row(&added["servers"], "airtable");
    assert_eq!(listed["source"], "project");
    assert_eq!(listed["status"], "disconnected", "{listed:#}");
    assert_eq!(row(&added["servers"], "first")["status"], "needs-approval");

    let taken = sidecar
        .err(
            "wave/registry/add",
            json!({ "name": "airtable", "server": "io.github.domdomegg/time-mcp-pypi",
                    "scope": "project" }),
        )
        .await;
    assert_eq!(taken.kind(), "invalidFile");
    assert!(
        taken
            .message
            .contains("already has a server named \"airtable\""),
        "{taken:?}"
    );
    let unsupported = sidecar
        .err(
            "wave/registry/add",
            json!({ "name": "t", "server": "io.example/bundle-only", "scope": "user" }),
        )
        .await;
    assert_eq!(unsupported.kind(), "registry");
    assert!(
        unsupported.message.contains("offers only a mcpb package"),
        "{unsupported:?}"
    );
    let missing = sidecar
        .err("wave/registry/get", json!({ "name": "io.example/none" }))
        .await;
    assert_eq!(missing.kind(), "registry");
    assert!(
        missing
            .message
            .contains("has no server \"io.example/none\""),
        "{missing:?}"
    );
    assert!(!sandbox.home.join(".wave").join("mcp.json").exists());
    sidecar.stop().await;
}
