//! USE-1 and USE-2: the real `wave-mcp` binary's `add`, `add-json`, `remove`, `get` and
//! `import` verbs on config files in a temp HOME: one entry changes, every other byte stays.

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use super::support::wave_mcp;

/// A temp HOME (with its XDG config dir) and a project directory.
pub(super) struct Place {
    _root: tempfile::TempDir,
    pub(super) home: PathBuf,
    pub(super) project: PathBuf,
}

pub(super) fn place() -> Place {
    let root = tempfile::tempdir().unwrap();
    let home = root.path().join("home");
    let project = root.path().join("project");
    std::fs::create_dir_all(home.join(".config")).unwrap();
    std::fs::create_dir_all(&project).unwrap();
    Place {
        _root: root,
        home,
        project,
    }
}

fn run(place: &Place, args: &[&str]) -> Output {
    run_with_env(place, args, &[])
}

/// `wave-mcp ARGS` in the place, with these environment variables as well.
pub(super) fn run_with_env(place: &Place, args: &[&str], env: &[(&str, &str)]) -> Output {
    Command::new(wave_mcp())
        .args(args)
        .envs(env.iter().copied())
        .current_dir(&place.project)
        .env("HOME", &place.home)
        .env("XDG_CONFIG_HOME", place.home.join(".config"))
        .env_remove("WAVE_LOG")
        .stdin(Stdio::null())
        .output()
        .expect("run wave-mcp")
}

pub(super) fn ok(out: &Output, what: &str) -> String {
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        out.status.success(),
        "{what}: {:?}\nstdout:\n{stdout}\nstderr:\n{}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    stdout
}

/// The first stderr line of a failed run.
pub(super) fn error_line(out: &Output, what: &str) -> String {
    assert!(!out.status.success(), "{what}: succeeded");
    let stderr = String::from_utf8_lossy(&out.stderr);
    stderr.lines().next().unwrap_or_default().to_string()
}

pub(super) fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap()
}

pub(super) const PROJECT_FILE: &str = "{\n  \"mcpServers\": {\n    \"first\": {\"command\": \"one\", \"args\": [\"${HOME}\"]},\n\n    \"second\":   { \"url\": \"https://example.com/mcp\", \"type\": \"http\" }\n  },\n  \"zzz-unknown\": [1, 2,   3]\n}\n";

pub(super) fn status_line(place: &Place, name: &str) -> String {
    let out = run(place, &["servers"]);
    let text = ok(&out, "servers");
    text.lines()
        .find(|l| l.starts_with(&format!("{name}  ")))
        .unwrap_or_else(|| panic!("no line for {name} in:\n{text}"))
        .to_string()
}

// USE-1: `add` appends one entry and keeps every other byte; `${VAR}` is written as given; the
// added project entry is approved, and a later change to it asks again (TRUST-1).
#[test]
fn use_1_add_keeps_every_other_byte_and_counts_as_approved() {
    let p = place();
    let file = p.project.join(".mcp.json");
    std::fs::write(&file, PROJECT_FILE).unwrap();
    let out = run(
        &p,
        &[
            "add",
            "third",
            "--env",
            "TOKEN=${MY_TOKEN}",
            "--",
            "npx",
            "-y",
            "pkg",
        ],
    );
    ok(&out, "add");
    let after = read(&file);
    let head = "{\n  \"mcpServers\": {\n    \"first\": {\"command\": \"one\", \"args\": [\"${HOME}\"]},\n\n    \"second\":   { \"url\": \"https://example.com/mcp\", \"type\": \"http\" },\n";
    assert!(after.starts_with(head), "{after}");
    assert!(
        after.ends_with("  },\n  \"zzz-unknown\": [1, 2,   3]\n}\n"),
        "{after}"
    );
    let value: serde_json::Value = serde_json::from_str(&after).unwrap();
    assert_eq!(
        value["mcpServers"]["third"],
        serde_json::json!({"command": "npx", "args": ["-y", "pkg"], "env": {"TOKEN": "${MY_TOKEN}"}})
    );
    // Removing it gives back the file byte for byte.
    ok(&run(&p, &["remove", "third"]), "remove");
    assert_eq!(read(&file), PROJECT_FILE);

    // Approved as added: `servers` does not ask for it; the hand-written ones still wait.
    ok(
        &run(&p, &["add", "third", "--", "npx", "-y", "pkg"]),
        "add again",
    );
    assert!(
        !status_line(&p, "third").contains("needs-approval"),
        "{}",
        status_line(&p, "third")
    );
    assert!(status_line(&p, "first").contains("needs-approval"));
    // A change to the entry asks again.
    let changed = read(&file).replace("\"pkg\"", "\"other-pkg\"");
    std::fs::write(&file, changed).unwrap();
    assert!(
        status_line(&p, "third").contains("needs-approval"),
        "{}",
        status_line(&p, "third")
    );
}

// USE-1: `add-json` and the remote form; the file is created when missing; a name that exists
// and bad flags or JSON are errors naming the flag or field; get/remove look in the project,
// then the user file.
#[test]
fn use_1_add_json_remote_get_remove_and_errors() {
    let p = place();
    let user = p.home.join(".wave").join("mcp.json");
    let out = run(
        &p,
        &[
            "add",
            "remote",
            "--scope",
            "user",
            "--transport",
            "http",
            "https://e.example/mcp",
            "--header",
            "Authorization: Bearer ${KEY}",
        ],
    );
    ok(&out, "add remote");
    let value: serde_json::Value = serde_json::from_str(&read(&user)).unwrap();
    assert_eq!(
        value["mcpServers"]["remote"],
        serde_json::json!({"type": "http", "url": "https://e.example/mcp", "headers": {"Authorization": "Bearer ${KEY}"}})
    );
    ok(
        &run(
            &p,
            &[
                "add-json",
                "both",
                r#"{"command": "user-one"}"#,
                "--scope",
                "user",
            ],
        ),
        "add-json user",
    );
    ok(
        &run(&p, &["add-json", "both", r#"{"command": "project-one"}"#]),
        "add-json project",
    );
    assert!(p.project.join(".mcp.json").exists());

    let got = ok(&run(&p, &["get", "both"]), "get");
    assert!(
        got.contains("project-one") && !got.contains("user-one"),
        "{got}"
    );
    let got = ok(&run(&p, &["get", "both", "--scope", "user"]), "get user");
    assert!(got.contains("user-one"), "{got}");
    ok(&run(&p, &["remove", "both"]), "remove project");
    let got = ok(&run(&p, &["get", "both"]), "get falls back to user");
    assert!(got.contains("user-one"), "{got}");

    let exists = error_line(
        &run(
            &p,
            &[
                "add-json",
                "remote",
                r#"{"command": "x"}"#,
                "--scope",
                "user",
            ],
        ),
        "exists",
    );
    assert!(
        exists.contains("already has a server named \"remote\""),
        "{exists}"
    );
    let bad_env = error_line(
        &run(&p, &["add", "x", "--env", "NOEQUALS", "--", "cmd"]),
        "bad env",
    );
    assert!(bad_env.starts_with("error: --env NOEQUALS"), "{bad_env}");
    let bad_header = error_line(
        &run(
            &p,
            &[
                "add",
                "x",
                "--transport",
                "sse",
                "https://e",
                "--header",
                "nocolon",
            ],
        ),
        "bad header",
    );
    assert!(
        bad_header.starts_with("error: --header nocolon"),
        "{bad_header}"
    );
    let bad_field = error_line(
        &run(&p, &["add-json", "x", r#"{"command": 1}"#]),
        "bad field",
    );
    assert_eq!(bad_field, "error: mcpServers.x.command: expected a string");
    let bad_json = error_line(&run(&p, &["add-json", "x", "{nope"]), "bad json");
    assert!(
        bad_json.starts_with("error: entry JSON of \"x\": not valid JSON"),
        "{bad_json}"
    );
    let missing = error_line(&run(&p, &["remove", "nobody"]), "remove missing");
    assert!(
        missing.contains("no MCP server named \"nobody\""),
        "{missing}"
    );
}

// USE-2: each host's file in its own format and documented place (under HOME / XDG config);
// what is added, skipped (with the reason) and existing is shown; nothing existing changes;
// --dry-run writes nothing; a project import counts as approved.
#[test]
fn use_2_import_from_each_host() {
    let p = place();
    let config = p.home.join(".config");
    let desktop = config.join("Claude").join("claude_desktop_config.json");
    let vscode = config.join("Code").join("User").join("mcp.json");
    let cursor = p.home.join(".cursor").join("mcp.json");
    let claude_code = p.home.join(".claude.json");
    for path in [&desktop, &vscode, &cursor] {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    }
    std::fs::write(&desktop, r#"{"mcpServers": {"fs": {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-filesystem", "/tmp"]}, "kept": {"command": "theirs"}}, "globalShortcut": ""}"#).unwrap();
    std::fs::write(&vscode, "// VS Code user MCP config\n{\n  \"inputs\": [{\"type\": \"promptString\", \"id\": \"key\", \"description\": \"API key\", \"password\": true}],\n  \"servers\": {\n    \"gh\": {\"type\": \"http\", \"url\": \"https://api.githubcopilot.com/mcp/\"},\n    \"secret\": {\"type\": \"stdio\", \"command\": \"srv\", \"env\": {\"KEY\": \"${input:key}\"}},\n    \"ws\": {\"type\": \"stdio\", \"command\": \"srv\", \"args\": [\"${workspaceFolder}\"]},\n    \"plain\": {\"type\": \"stdio\", \"command\": \"srv\", \"env\": {\"T\": \"${MY_T}\"}},\n  }\n}\n").unwrap();
    std::fs::write(
        &cursor,
        r#"{"mcpServers": {"cur": {"url": "https://cursor.example/mcp"}}}"#,
    )
    .unwrap();
    let project = std::path::absolute(&p.project).unwrap();
    let claude_json = serde_json::json!({
        "numStartups": 3,
        "mcpServers": {"cc-user": {"type": "stdio", "command": "ccu"}},
        "projects": {
            project.to_string_lossy(): {"mcpServers": {"cc-here": {"command": "cch"}}},
            "/somewhere/else": {"mcpServers": {"cc-other": {"command": "cco"}}}
        }
    });
    std::fs::write(&claude_code, claude_json.to_string()).unwrap();

    let user = p.home.join(".wave").join("mcp.json");
    std::fs::create_dir_all(user.parent().unwrap()).unwrap();
    let user_text = "{\n  \"mcpServers\": {\n    \"kept\": {\"command\": \"mine\"}\n  }\n}\n";
    std::fs::write(&user, user_text).unwrap();

    // --dry-run shows and writes nothing.
    let shown = ok(
        &run(&p, &["import", "--from", "claude-desktop", "--dry-run"]),
        "dry run",
    );
    assert!(shown.contains("would add: \"fs\""), "{shown}");
    assert!(shown.contains("exists: \"kept\""), "{shown}");
    assert_eq!(read(&user), user_text);

    let shown = ok(&run(&p, &["import", "--from", "claude-desktop"]), "desktop");
    assert!(shown.contains("added: \"fs\""), "{shown}");
    let after = read(&user);
    assert!(
        after.starts_with("{\n  \"mcpServers\": {\n    \"kept\": {\"command\": \"mine\"},\n"),
        "{after}"
    );
    let value: serde_json::Value = serde_json::from_str(&after).unwrap();
    assert_eq!(value["mcpServers"]["kept"]["command"], "mine");
    assert_eq!(
        value["mcpServers"]["fs"]["args"][1],
        "@modelcontextprotocol/server-filesystem"
    );

    let shown = ok(&run(&p, &["import", "--from", "vscode"]), "vscode");
    assert!(
        shown.contains("added: \"gh\"") && shown.contains("added: \"plain\""),
        "{shown}"
    );
    assert!(
        shown.contains("skipped: \"secret\" uses ${input:key}"),
        "{shown}"
    );
    assert!(
        shown.contains("skipped: \"ws\" uses ${workspaceFolder}"),
        "{shown}"
    );
    let value: serde_json::Value = serde_json::from_str(&read(&user)).unwrap();
    assert_eq!(
        value["mcpServers"]["plain"],
        serde_json::json!({"command": "srv", "env": {"T": "${MY_T}"}})
    );
    assert!(value["mcpServers"].get("secret").is_none() && value["mcpServers"].get("ws").is_none());

    ok(&run(&p, &["import", "--from", "cursor"]), "cursor");
    let shown = ok(
        &run(
            &p,
            &["import", "--from", "claude-code", "--scope", "project"],
        ),
        "claude code",
    );
    assert!(
        shown.contains("added: \"cc-user\"") && shown.contains("added: \"cc-here\""),
        "{shown}"
    );
    assert!(!shown.contains("cc-other"), "{shown}");
    let value: serde_json::Value = serde_json::from_str(&read(&user)).unwrap();
    assert_eq!(
        value["mcpServers"]["cur"]["url"],
        "https://cursor.example/mcp"
    );
    // Imported into the project: approved as written.
    assert!(
        !status_line(&p, "cc-here").contains("needs-approval"),
        "{}",
        status_line(&p, "cc-here")
    );
    // Importing again changes nothing and names each existing entry.
    let before = read(&user);
    let shown = ok(&run(&p, &["import", "--from", "claude-desktop"]), "again");
    assert!(shown.contains("exists: \"fs\""), "{shown}");
    assert_eq!(read(&user), before);
}
