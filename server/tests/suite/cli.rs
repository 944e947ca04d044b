//! The real `wave-mcp` binary: the bundled demo as a new user runs it, `--json` field names,
//! and every bad-input path. HOME is always a sandbox home, so the developer's `~/.wave` is never
//! read or written.

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};

use serde_json::{Value, json};

use super::support::{Sandbox, alive, test_server, wave_mcp, write_config};

/// Runs `wave-mcp args...` with HOME = `home`, in `cwd`, with no inherited knobs that change
/// its output.
fn run_in(home: &Path, cwd: &Path, args: &[&str], envs: &[(&str, &str)]) -> Output {
    let mut command = Command::new(wave_mcp());
    command
        .args(args)
        .current_dir(cwd)
        .env("HOME", home)
        .env_remove("WAVE_LOG")
        .env_remove("DEMO_HTTP_PORT")
        .stdin(Stdio::null());
    for (k, v) in envs {
        command.env(k, v);
    }
    wave_mcp_testkit::output_within(&mut command, wave_mcp_testkit::COMMAND_LIMIT)
}

/// Runs `wave-mcp <args> --workdir <sandbox workdir>`.
fn run(sb: &Sandbox, args: &[&str]) -> Output {
    let workdir = sb.workdir.display().to_string();
    let mut all = args.to_vec();
    all.extend(["--workdir", &workdir]);
    run_in(&sb.home, &sb.root, &all, &[])
}

fn stdout(out: &Output) -> String {
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

fn assert_ok(out: &Output, what: &str) {
    assert!(
        out.status.success(),
        "{what}: {:?}\nstdout:\n{}\nstderr:\n{}",
        out.status,
        stdout(out),
        stderr(out)
    );
}

/// A failure: non-zero exit and exactly one stderr line, `error: ...`. Returns that line.
fn assert_one_line_error(out: &Output, what: &str) -> String {
    assert!(
        !out.status.success(),
        "{what}: succeeded\nstdout:\n{}",
        stdout(out)
    );
    let err = stderr(out);
    let lines: Vec<&str> = err.lines().collect();
    assert_eq!(lines.len(), 1, "{what}: stderr is not one line:\n{err}");
    assert!(lines[0].starts_with("error:"), "{what}: {err}");
    lines[0].to_string()
}

fn assert_no_sandbox_process(sb: &Sandbox, what: &str) {
    let left = sb.live_processes();
    assert!(left.is_empty(), "{what}: processes left: {left:?}");
}

fn demo_dir() -> PathBuf {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../examples/demo");
    dir.canonicalize()
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
}

/// Live test-server processes working in `dir` (the demo's servers carry no sandbox marker).
fn test_servers_in(dir: &Path) -> Vec<u32> {
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    entries
        .filter_map(|e| e.ok()?.file_name().to_str()?.parse::<u32>().ok())
        .filter(|pid| {
            let cmdline = std::fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default();
            String::from_utf8_lossy(&cmdline).contains("wave-mcp-test-server")
                && std::fs::read_link(format!("/proc/{pid}/cwd")).is_ok_and(|cwd| cwd == dir)
        })
        .filter(|&pid| alive(pid))
        .collect()
}

/// Kills and reaps a child when dropped, also when the test fails half-way.
struct KillOnDrop(Child);

impl Drop for KillOnDrop {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn dir_listing(dir: &Path) -> Vec<std::ffi::OsString> {
    let mut names: Vec<_> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.expect("directory entry").file_name())
        .collect();
    names.sort();
    names
}

fn server_json<'a>(list: &'a Value, name: &str) -> &'a Value {
    list.as_array()
        .expect("servers --json prints an array")
        .iter()
        .find(|s| s["name"] == name)
        .unwrap_or_else(|| panic!("{name} not in {list:#}"))
}

fn keys(value: &Value) -> Vec<String> {
    value
        .as_object()
        .unwrap_or_else(|| panic!("not an object: {value}"))
        .keys()
        .cloned()
        .collect()
}

/// The demo directory to walk through: the repository's own when its `command`
/// (`../../target/debug/wave-mcp-test-server`) is the test server this run built; otherwise (a
/// `CARGO_TARGET_DIR` or another profile) a copy of it in `scratch`, laid out so that the same
/// relative command reaches the built binary through a symlink. The `.mcp.json` is used
/// byte for byte either way, so the walkthrough never needs to skip.
fn demo_for_this_build(scratch: &Path) -> PathBuf {
    let demo = demo_dir();
    let built = test_server()
        .canonicalize()
        .expect("the test server this run built");
    let demo_server = demo.join("../../target/debug/wave-mcp-test-server");
    if demo_server.canonicalize().ok().as_ref() == Some(&built) {
        return demo;
    }
    let copy = scratch.join("repo/examples/demo");
    std::fs::create_dir_all(&copy).unwrap();
    for name in dir_listing(&demo) {
        std::fs::copy(demo.join(&name), copy.join(&name)).unwrap();
    }
    let bin_dir = scratch.join("repo/target/debug");
    std::fs::create_dir_all(&bin_dir).unwrap();
    std::os::unix::fs::symlink(&built, bin_dir.join("wave-mcp-test-server")).unwrap();
    copy.canonicalize().unwrap()
}

// CFG-8, LAZY-1, INS-1, TOOL-3, CACHE-2, SEC-1, EDIT-2: the bundled demo, as the README runs it.
#[test]
fn cli_demo_walkthrough_as_a_new_user() {
    let scratch = tempfile::tempdir().unwrap();
    let demo = demo_for_this_build(scratch.path());
    let sb = Sandbox::new();
    let demo_str = demo.display().to_string();
    let in_demo = |args: &[&str], envs: &[(&str, &str)]| {
        let mut all = args.to_vec();
        all.extend(["--workdir", &demo_str]);
        run_in(&sb.home, &sb.root, &all, envs)
    };
    let no_demo_servers = |what: &str| {
        let left = test_servers_in(&demo);
        assert!(left.is_empty(), "{what}: demo servers left: {left:?}");
    };
    no_demo_servers("before the test");
    let files_before = dir_listing(&demo);

    // `servers` from inside the demo directory: both listed, waiting for the user's approval
    // (TRUST-1), nothing spawned.
    let out = run_in(&sb.home, &demo, &["servers"], &[]);
    assert_ok(&out, "servers");
    let text = stdout(&out);
    assert!(
        text.lines()
            .any(|l| l == "demo  [project, stdio]  needs-approval"),
        "{text}"
    );
    assert!(
        text.lines()
            .any(|l| l == "demo-http  [project, http]  needs-approval"),
        "{text}"
    );
    assert!(text.contains("wave-mcp approve demo"), "{text}");
    assert!(stderr(&out).is_empty(), "{}", stderr(&out));
    no_demo_servers("servers");

    // TRUST-3: without a terminal to ask on, `tools` refuses in one line naming the command.
    let out = in_demo(&["tools", "demo"], &[]);
    assert!(!out.status.success(), "tools of an unapproved server ran");
    assert!(
        stderr(&out).contains("wave-mcp approve demo"),
        "{}",
        stderr(&out)
    );
    no_demo_servers("tools demo before approval");

    // The README's approval step.
    for name in ["demo", "demo-http"] {
        let out = in_demo(&["approve", name], &[]);
        assert_ok(&out, "approve");
        assert!(stdout(&out).contains("approved"), "{}", stdout(&out));
    }
    let out = run_in(&sb.home, &demo, &["servers"], &[]);
    assert_ok(&out, "servers");
    let text = stdout(&out);
    assert!(
        text.lines()
            .any(|l| l == "demo  [project, stdio]  disconnected"),
        "{text}"
    );
    assert!(
        text.lines()
            .any(|l| l == "demo-http  [project, http]  disconnected"),
        "{text}"
    );
    assert!(
        text.contains("url:     http://127.0.0.1:${DEMO_HTTP_PORT:-8765}/mcp"),
        "{text}"
    );
    assert!(stderr(&out).is_empty(), "{}", stderr(&out));
    no_demo_servers("servers");

    // `tools demo`: the instructions verbatim and the tools.
    let out = in_demo(&["tools", "demo"], &[]);
    assert_ok(&out, "tools demo");
    let text = stdout(&out);
    assert!(
        text.contains(
            "instructions of demo:\nDemo server bundled with wave-mcp.\nCall echo to get your text back, add to sum two numbers.\n"
        ),
        "{text}"
    );
    assert!(text.contains("3 tools:"), "{text}");
    for tool in ["mcp__demo__echo", "mcp__demo__add", "mcp__demo__mixed"] {
        assert!(text.lines().any(|l| l == tool), "{tool} missing:\n{text}");
    }
    assert!(text.contains("Echo the given text back."), "{text}");
    no_demo_servers("tools demo");

    // `call demo echo ...`.
    let out = in_demo(
        &[
            "call",
            "demo",
            "echo",
            r#"{"text":"hello from the readme"}"#,
        ],
        &[],
    );
    assert_ok(&out, "call demo echo");
    assert_eq!(stdout(&out), "hello from the readme\n");
    no_demo_servers("call demo echo");

    // A tool by its full name.
    let out = in_demo(
        &["call", "demo", "mcp__demo__add", r#"{"a": 2, "b": 3}"#],
        &[],
    );
    assert_ok(&out, "call demo mcp__demo__add");
    assert_eq!(stdout(&out), "5\n");
    no_demo_servers("call demo mcp__demo__add");

    // `servers --json` afterwards: the cache shows; config as written even with the variable set.
    let out = in_demo(&["servers", "--json"], &[("DEMO_HTTP_PORT", "9911")]);
    assert_ok(&out, "servers --json");
    let list: Value = serde_json::from_slice(&out.stdout).expect("servers --json is JSON");
    let config_path = demo.join(".mcp.json").display().to_string();

    let d = server_json(&list, "demo");
    for key in [
        "name",
        "source",
        "transport",
        "command",
        "args",
        "status",
        "toolCount",
        "tools",
        "toolsFromCache",
        "lastConnectedAt",
        "configPath",
    ] {
        assert!(d.get(key).is_some(), "demo has no {key}: {d:#}");
    }
    for key in keys(d) {
        assert!(!key.contains('_'), "snake_case field {key} in {d:#}");
    }
    assert_eq!(d["source"], "project");
    assert_eq!(d["transport"], "stdio");
    assert_eq!(d["command"], "../../target/debug/wave-mcp-test-server");
    assert_eq!(
        d["args"],
        json!([
            "--name",
            "demo",
            "--tools",
            "echo,add,mixed",
            "--instructions",
            "Demo server bundled with wave-mcp.\nCall echo to get your text back, add to sum two numbers."
        ])
    );
    assert_eq!(d["status"], "disconnected");
    assert_eq!(d["toolCount"], 3);
    assert_eq!(d["toolsFromCache"], true);
    let at = d["lastConnectedAt"]
        .as_str()
        .expect("lastConnectedAt is a string");
    chrono::DateTime::parse_from_rfc3339(at)
        .unwrap_or_else(|e| panic!("{at:?} is not RFC 3339: {e}"));
    assert_eq!(d["configPath"], config_path.as_str());
    assert!(Path::new(d["configPath"].as_str().unwrap()).is_absolute());
    let tools = d["tools"].as_array().unwrap();
    let names: Vec<(&str, &str)> = tools
        .iter()
        .map(|t| (t["name"].as_str().unwrap(), t["fullName"].as_str().unwrap()))
        .collect();
    assert_eq!(
        names,
        [
            ("add", "mcp__demo__add"),
            ("echo", "mcp__demo__echo"),
            ("mixed", "mcp__demo__mixed")
        ]
    );
    assert_eq!(tools[1]["description"], "Echo the given text back.");
    for tool in tools {
        assert_eq!(
            keys(tool),
            [
                "name",
                "fullName",
                "description",
                "enabled",
                "definitionChanged",
                "hiddenText",
                "icons"
            ],
            "{tool}"
        );
    }

    let h = server_json(&list, "demo-http");
    assert_eq!(h["transport"], "http");
    assert_eq!(h["url"], "http://127.0.0.1:${DEMO_HTTP_PORT:-8765}/mcp");
    assert!(h.get("command").is_none(), "{h:#}");
    assert_eq!(h["status"], "disconnected");
    assert_eq!(h["toolCount"], 0);
    assert_eq!(h["tools"], json!([]));
    assert_eq!(h["toolsFromCache"], false);
    assert!(h.get("lastConnectedAt").is_none(), "{h:#}");
    assert_eq!(h["configPath"], config_path.as_str());
    assert!(
        !stdout(&out).contains("9911"),
        "an expanded value is listed"
    );
    no_demo_servers("servers --json");

    // The README's HTTP step: our server on an ephemeral port, DEMO_HTTP_PORT pointing at it.
    let mut http = KillOnDrop(
        Command::new(test_server())
            .args(["--transport", "http", "--port", "0", "--name", "demo-http"])
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("start the HTTP test server"),
    );
    let mut listening = String::new();
    let mut reader = BufReader::new(http.0.stdout.take().expect("piped stdout"));
    reader
        .read_line(&mut listening)
        .expect("read the listening line");
    let port = listening
        .trim()
        .strip_prefix("listening on http://127.0.0.1:")
        .and_then(|rest| rest.strip_suffix("/mcp"))
        .unwrap_or_else(|| panic!("unexpected first line: {listening:?}"))
        .to_string();
    let port_env = [("DEMO_HTTP_PORT", port.as_str())];
    let out = in_demo(
        &["call", "demo-http", "add", r#"{"a": 2, "b": 40}"#],
        &port_env,
    );
    assert_ok(&out, "call demo-http add");
    assert_eq!(stdout(&out), "42\n");
    let out = in_demo(&["servers", "--json"], &port_env);
    assert_ok(&out, "servers --json after the HTTP call");
    let list: Value = serde_json::from_slice(&out.stdout).expect("servers --json is JSON");
    let h = server_json(&list, "demo-http");
    assert_eq!(h["url"], "http://127.0.0.1:${DEMO_HTTP_PORT:-8765}/mcp");
    assert_eq!(h["status"], "disconnected");
    assert_eq!(h["toolsFromCache"], true);
    assert!(h["toolCount"].as_u64().unwrap_or_default() > 0, "{h:#}");
    assert!(h["lastConnectedAt"].is_string(), "{h:#}");
    assert_eq!(server_json(&list, "demo")["toolsFromCache"], true);
    let expanded = format!("127.0.0.1:{port}");
    assert!(
        !stdout(&out).contains(&expanded),
        "the expanded URL is listed"
    );
    drop(reader);
    drop(http);
    no_demo_servers("the HTTP step");

    // Nothing was written into the repository's demo directory.
    assert_eq!(
        dir_listing(&demo),
        files_before,
        "the demo directory was written to"
    );
}

// `tools` on a sandbox server, text and --json; nothing survives the run.
#[test]
fn cli_tools_text_and_json() {
    let sb = Sandbox::new();
    sb.write_project(json!({ "s": sb.server(&["--tools", "echo,schema"]) }));
    let out = run(&sb, &["tools", "s"]);
    assert_ok(&out, "tools s");
    let text = stdout(&out);
    assert!(text.starts_with("s gives no instructions\n"), "{text}");
    assert!(text.contains("2 tools:"), "{text}");
    assert!(text.lines().any(|l| l == "mcp__s__schema"), "{text}");
    assert_no_sandbox_process(&sb, "tools s");

    let out = run(&sb, &["tools", "s", "--json"]);
    assert_ok(&out, "tools s --json");
    let v: Value = serde_json::from_slice(&out.stdout).expect("JSON");
    assert_eq!(v["server"]["name"], "s");
    assert_eq!(v["server"]["status"], "connected");
    assert_eq!(v["server"]["toolsFromCache"], false);
    assert_eq!(v["instructions"], Value::Null);
    let tools = v["tools"].as_array().unwrap();
    assert_eq!(tools.len(), 2);
    assert_eq!(tools[1]["fullName"], "mcp__s__schema");
    // TOOL-5: the schema as the model would see it.
    let schema = tools[1]["inputSchema"].to_string();
    for dirty in ["$schema", "exclusiveMinimum", "exclusiveMaximum"] {
        assert!(!schema.contains(dirty), "{dirty} in {schema}");
    }
    assert_no_sandbox_process(&sb, "tools s --json");
}

// JSON_ARGS that is not JSON, or not an object: one error line, nothing spawned.
#[test]
fn cli_bad_json_args_is_one_error_line() {
    let sb = Sandbox::new();
    sb.write_project(json!({ "s": sb.server(&["--tools", "echo"]) }));
    for (args, expected) in [
        ("not json", "JSON_ARGS is not valid JSON"),
        ("{\"text\": ", "JSON_ARGS is not valid JSON"),
        ("[1, 2]", "JSON_ARGS must be a JSON object"),
        ("\"text\"", "JSON_ARGS must be a JSON object"),
        ("42", "JSON_ARGS must be a JSON object"),
    ] {
        let out = run(&sb, &["call", "s", "echo", args]);
        let line = assert_one_line_error(&out, args);
        assert!(line.contains(expected), "{args}: {line}");
    }
    assert_eq!(
        sb.count_events("start"),
        0,
        "bad arguments still spawned the server"
    );
    assert_no_sandbox_process(&sb, "bad JSON_ARGS");
}

#[test]
fn cli_unknown_server_names_it() {
    let sb = Sandbox::new();
    sb.write_project(json!({ "s": sb.server(&["--tools", "echo"]) }));
    for args in [
        &["tools", "nosuch-server"][..],
        &["call", "nosuch-server", "echo", "{}"][..],
    ] {
        let out = run(&sb, args);
        let line = assert_one_line_error(&out, &format!("{args:?}"));
        assert!(line.contains("\"nosuch-server\""), "{line}");
    }
    assert_eq!(sb.count_events("start"), 0);
    assert_no_sandbox_process(&sb, "unknown server");
}

#[test]
fn cli_unknown_tool_lists_the_available_ones() {
    let sb = Sandbox::new();
    sb.write_project(json!({ "s": sb.server(&["--tools", "echo,add"]) }));
    let out = run(&sb, &["call", "s", "nope", "{}"]);
    let line = assert_one_line_error(&out, "unknown tool");
    assert!(line.contains("\"nope\""), "{line}");
    assert!(
        line.contains("echo") && line.contains("add"),
        "available tools not listed: {line}"
    );
    assert_no_sandbox_process(&sb, "unknown tool");
    // The full name of a tool of another server is not a tool of this one.
    let out = run(&sb, &["call", "s", "mcp__other__echo", "{}"]);
    assert_one_line_error(&out, "other server's full name");
    assert_eq!(sb.count_events("call"), 0);
    assert_no_sandbox_process(&sb, "other server's full name");
}

#[test]
fn cli_missing_workdir_is_named() {
    let sb = Sandbox::new();
    let missing = sb.path("no-such-dir").display().to_string();
    for args in [
        &["servers", "--workdir", &missing][..],
        &["tools", "s", "--workdir", &missing][..],
        &["call", "s", "echo", "{}", "--workdir", &missing][..],
    ] {
        let out = run_in(&sb.home, &sb.root, args, &[]);
        let line = assert_one_line_error(&out, &format!("{args:?}"));
        assert!(line.contains(&missing), "{line}");
    }
}

// CFG-4: a malformed project file is reported naming the file and line; the rest still loads.
#[test]
fn cli_malformed_project_file_is_reported_and_skipped() {
    let sb = Sandbox::new();
    let project_file = sb.workdir.join(".mcp.json");
    std::fs::write(&project_file, "{\n  \"mcpServers\": {,\n}\n").unwrap();
    sb.write_user(json!({ "u": sb.server(&["--tools", "echo"]) }));
    let out = run(&sb, &["servers"]);
    assert_ok(&out, "servers with a malformed project file");
    let err = stderr(&out);
    assert!(
        err.contains(&project_file.display().to_string()),
        "file not named:\n{err}"
    );
    assert!(err.contains("line 2"), "line not named:\n{err}");
    let text = stdout(&out);
    assert!(
        text.lines().any(|l| l == "u  [user, stdio]  disconnected"),
        "{text}"
    );

    // The user server still works.
    let out = run(&sb, &["call", "u", "echo", r#"{"text": "still here"}"#]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(stdout(&out), "still here\n");
    assert_no_sandbox_process(&sb, "call u echo");

    // A bad entry inside a well-formed file is listed as an error naming the field.
    write_config(
        &project_file,
        json!({ "bad": { "command": "x", "args": ["ok", 1] } }),
    );
    let out = run(&sb, &["servers", "--json"]);
    assert_ok(&out, "servers with a bad entry");
    let list: Value = serde_json::from_slice(&out.stdout).unwrap();
    let bad = server_json(&list, "bad");
    assert_eq!(bad["status"], "error");
    assert!(
        bad["error"]
            .as_str()
            .unwrap_or_default()
            .contains("mcpServers.bad.args[1]"),
        "{bad}"
    );
}

// TOOL-8: a tool result with isError is a failed command.
#[test]
fn cli_tool_error_result_exits_non_zero() {
    let sb = Sandbox::new();
    sb.write_project(json!({ "s": sb.server(&["--tools", "echo,fail"]) }));
    let out = run(&sb, &["call", "s", "fail"]);
    let line = assert_one_line_error(&out, "call s fail");
    assert!(line.contains("this tool always fails"), "{line}");
    assert!(
        line.contains("\"fail\"") && line.contains("\"s\""),
        "{line}"
    );
    assert!(
        stdout(&out).contains("this tool always fails"),
        "{}",
        stdout(&out)
    );
    assert_no_sandbox_process(&sb, "call s fail");
}

// A server that fails to start: a non-zero exit with the reason, and no process left behind.
#[test]
fn cli_failing_server_reports_why() {
    let sb = Sandbox::new();
    sb.write_project(json!({ "s": sb.server(&["--fail-initialize"]) }));
    let out = run(&sb, &["tools", "s"]);
    let line = assert_one_line_error(&out, "tools s");
    assert!(line.contains("\"s\""), "{line}");
    assert_no_sandbox_process(&sb, "failing server");
}

// USE: a reader that goes away (`wave-mcp tools s | head -1`) ends the command quietly, as
// other shell tools end (status 141, SIGPIPE's), with no panic on stderr and no server left.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cli_a_closed_stdout_ends_the_command_quietly() {
    let sandbox = Sandbox::new();
    write_config(
        &sandbox.home.join(".wave").join("mcp.json"),
        json!({ "s": { "command": test_server(), "args": ["--tools", "echo,add,mixed"] } }),
    );
    // A pipe whose reading end is already closed: the first print fails with EPIPE.
    let (read, write) = nix::unistd::pipe().unwrap();
    drop(read);
    let out = Command::new(wave_mcp())
        .args(["tools", "s", "--workdir"])
        .arg(&sandbox.workdir)
        .env("HOME", &sandbox.home)
        .stdin(Stdio::null())
        .stdout(Stdio::from(write))
        .stderr(Stdio::piped())
        .output()
        .expect("run wave-mcp");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(141), "{stderr}");
    assert!(!stderr.contains("panicked"), "{stderr}");
    assert!(stderr.trim().is_empty(), "{stderr}");
    sandbox.assert_no_process_left().await;
}

// SPEC-1: the negotiated revision per server: `tools` text and JSON while connected, then
// `servers` (text and JSON) in a later process shows the last one negotiated with the entry;
// a server limited to the 2025 revisions shows 2025-11-25.
#[test]
fn spec_1_cli_shows_the_negotiated_revision_and_the_last_one_when_not_connected() {
    let sb = Sandbox::new();
    sb.write_project(json!({
        "new": sb.server(&["--tools", "echo"]),
        "old": sb.server(&["--tools", "echo", "--era", "legacy"]),
    }));
    let out = run(&sb, &["servers", "--json"]);
    assert_ok(&out, "servers --json before any connection");
    let v: Value = serde_json::from_slice(&out.stdout).expect("JSON");
    let rows = v.as_array().or_else(|| v["servers"].as_array()).unwrap();
    assert!(
        rows.iter().all(|r| r.get("protocolVersion").is_none()),
        "{v:#}"
    );

    for (name, revision) in [("new", "2026-07-28"), ("old", "2025-11-25")] {
        let out = run(&sb, &["tools", name]);
        assert_ok(&out, "tools");
        let text = stdout(&out);
        assert!(
            text.contains(&format!("{name} speaks MCP {revision}\n")),
            "{text}"
        );
        let out = run(&sb, &["tools", name, "--json"]);
        let v: Value = serde_json::from_slice(&out.stdout).expect("JSON");
        assert_eq!(v["server"]["protocolVersion"], revision, "{v:#}");
    }

    let out = run(&sb, &["servers"]);
    assert_ok(&out, "servers");
    let text = stdout(&out);
    assert!(
        text.contains("  mcp:     2026-07-28  (last negotiated)\n"),
        "{text}"
    );
    assert!(
        text.contains("  mcp:     2025-11-25  (last negotiated)\n"),
        "{text}"
    );
    let out = run(&sb, &["servers", "--json"]);
    let v: Value = serde_json::from_slice(&out.stdout).expect("JSON");
    let rows = v.as_array().or_else(|| v["servers"].as_array()).unwrap();
    let revision = |name: &str| {
        rows.iter()
            .find(|r| r["name"] == name)
            .map(|r| r["protocolVersion"].clone())
    };
    assert_eq!(revision("new"), Some(json!("2026-07-28")), "{v:#}");
    assert_eq!(revision("old"), Some(json!("2025-11-25")), "{v:#}");
    assert_no_sandbox_process(&sb, "servers");
}
