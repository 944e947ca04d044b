//! TRUST-7 attacks on the command line: a server (our test server with `--hostile-text`) puts
//! terminal control sequences — a window title (OSC 0), a cleared screen (CSI 2J), a clipboard
//! write (OSC 52), a C1 CSI — and hidden characters (Unicode tags, zero-width, bidi) in its
//! instructions, a tool's description, title and schema, its prompts and a tool result. What
//! `wave-mcp` prints is checked as raw bytes.

use serde_json::{Value, json};

use super::support::*;

/// Bytes no server may get onto the terminal: ESC, BEL, and C1 CSI (U+009B, UTF-8 C2 9B).
const CONTROL: &[&[u8]] = &[b"\x1b", b"\x07", "\u{9b}".as_bytes()];

fn find(haystack: &[u8], needle: &[u8]) -> bool {
    haystack.windows(needle.len()).any(|w| w == needle)
}

/// `bytes` (one stream of a `wave-mcp` run) hold no control sequence and no hidden character.
fn assert_inert(bytes: &[u8], what: &str) {
    let shown = String::from_utf8_lossy(bytes);
    for control in CONTROL {
        assert!(!find(bytes, control), "{what} has {control:x?}: {shown:?}");
    }
    for hidden in HIDDEN_CHARS {
        assert!(!shown.contains(*hidden), "{what} has {hidden:?}: {shown:?}");
    }
}

fn hostile(sandbox: &Sandbox, extra: &[&str]) -> Value {
    let mut args = vec!["--hostile-text", "--tools", "echo"];
    args.extend(extra);
    sandbox.server(&args)
}

// TRUST-7: `wave-mcp tools NAME` prints the server's instructions, the tool's description and
// schema with every control character escaped and the hidden characters gone; the row marks
// the tool `hiddenText` (and not the plain one).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn trust_7_tools_prints_no_control_sequence_of_a_server() {
    let sandbox = Sandbox::new();
    sandbox.write_user(json!({ "h": hostile(&sandbox, &[]) }));
    let out = cli(&sandbox, &["tools", "h"], &[]);
    assert!(out.status.success(), "{}", text(&out));
    assert_inert(&out.stdout, "tools stdout");
    assert_inert(&out.stderr, "tools stderr");
    let shown = String::from_utf8(out.stdout).unwrap();
    // Shown, escaped, not dropped: the user sees that the server sent them.
    assert!(
        shown.contains("Hostile instructions.\\x1b]0;PWNED-TITLE\\x07\\x1b[2J"),
        "{shown}"
    );
    assert!(
        shown.contains("Hostile tool.\\x1b]0;PWNED-TITLE\\x07\\x1b[2J\\x1b]52;c;cHduZWQ=\\x07\\u{9b}31mREDDescribed."),
        "{shown}"
    );
    assert!(shown.contains("mcp__h__hostile"), "{shown}");

    let out = cli(&sandbox, &["tools", "h", "--json"], &[]);
    assert!(out.status.success(), "{}", text(&out));
    assert_inert(&out.stdout, "tools --json stdout");
    let listed: Value = serde_json::from_slice(&out.stdout).unwrap();
    let hidden: Vec<(&str, bool)> = listed["server"]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| (t["name"].as_str().unwrap(), t["hiddenText"] == true))
        .collect();
    assert_eq!(hidden, [("echo", false), ("hostile", true)]);
}

// TRUST-7: `wave-mcp call` prints a hostile tool result escaped; `prompts` prints hostile prompt
// and argument descriptions escaped; a server that fails with hostile stderr gets its reason
// onto the terminal escaped too.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn trust_7_call_prompts_and_errors_print_no_control_sequence_of_a_server() {
    let sandbox = Sandbox::new();
    let banner = "boom\u{1b}]0;PWNED-TITLE\u{7}\u{1b}[2J\u{9b}31m\u{200B}";
    sandbox.write_user(json!({
        "h": hostile(&sandbox, &["--prompts"]),
        "bad": sandbox.server(&["--fail-initialize", "--stderr-banner", banner]),
    }));
    let out = cli(
        &sandbox,
        &["call", "h", "hostile", "{\"text\": \"x\"}"],
        &[],
    );
    assert!(out.status.success(), "{}", text(&out));
    assert_inert(&out.stdout, "call stdout");
    let shown = String::from_utf8(out.stdout).unwrap();
    assert!(
        shown.contains("result\\x1b]0;PWNED-TITLE\\x07") && shown.contains("REDend"),
        "{shown}"
    );

    let out = cli(&sandbox, &["prompts", "h"], &[]);
    assert!(out.status.success(), "{}", text(&out));
    assert_inert(&out.stdout, "prompts stdout");
    let shown = String::from_utf8(out.stdout).unwrap();
    assert!(shown.contains("prompt\\x1b]0;PWNED-TITLE"), "{shown}");
    assert!(shown.contains("argument\\x1b]0;PWNED-TITLE"), "{shown}");

    let out = cli(&sandbox, &["tools", "bad"], &[]);
    assert!(!out.status.success(), "{}", text(&out));
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(stderr.contains("boom\\x1b]0;PWNED-TITLE"), "{stderr}");
    for control in CONTROL {
        assert!(
            !find(&out.stderr, control),
            "stderr has {control:x?}: {stderr:?}"
        );
    }
}

// TRUST-7: a cloned repository's `.mcp.json` is as hostile as a server: its names, command,
// arguments and URL reach the terminal escaped in `servers`, in `approve`'s account of what it
// approves, and in the line that says a server waits for approval.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn trust_7_a_projects_config_text_prints_no_control_sequence() {
    let sandbox = Sandbox::new();
    let title = "\u{1b}]0;PWNED-TITLE\u{7}";
    let wipe = "\u{1b}[2K\u{9b}1A";
    sandbox.write_project_unapproved(json!({
        format!("evil{title}"): {
            "command": format!("sh{wipe}"),
            "args": ["-c", format!("true{title}"), format!("x{wipe}y")],
        },
        "web": { "type": "http", "url": format!("http://127.0.0.1:9/mcp?{title}") },
    }));
    let out = cli(&sandbox, &["servers"], &[]);
    assert!(out.status.success(), "{}", text(&out));
    let shown = String::from_utf8_lossy(&out.stdout).into_owned();
    for control in CONTROL {
        assert!(
            !find(&out.stdout, control),
            "servers has {control:x?}: {shown:?}"
        );
    }
    assert!(shown.contains("evil\\x1b]0;PWNED-TITLE\\x07"), "{shown}");
    assert!(shown.contains("command: sh\\x1b[2K\\u{9b}1A"), "{shown}");

    let out = cli(&sandbox, &["approve", &format!("evil{title}")], &[]);
    assert!(out.status.success(), "{}", text(&out));
    for control in CONTROL {
        assert!(
            !find(&out.stdout, control),
            "approve stdout has {control:x?}"
        );
        assert!(
            !find(&out.stderr, control),
            "approve stderr has {control:x?}"
        );
    }
    let out = cli(&sandbox, &["call", "web", "x", "{}"], &[]);
    assert!(!out.status.success());
    for control in CONTROL {
        assert!(
            !find(&out.stderr, control),
            "call stderr has {control:x?}: {}",
            text(&out)
        );
    }
}
