//! The test server's own check, over real stdio: it answers `initialize` with the name it was
//! given, lists exactly the tools of `--tools`, runs `echo`, and exits when its stdin closes.
//! Also why Cargo builds the binary whenever the workspace's tests are built: an integration
//! test makes its package's binaries part of the build, so the other crates' tests find
//! `target/<profile>/wave-mcp-test-server` (through `wave_mcp_testkit::binary`).

use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{Receiver, RecvTimeoutError};
use std::time::Duration;

use serde_json::{Value, json};

/// Longest wait for one reply (a bound, not a speed assertion).
const LIMIT: Duration = Duration::from_secs(30);

/// Kills the server if the test fails half-way (no orphan either way).
struct Server(Child);

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn send(stdin: &mut ChildStdin, message: Value) {
    let mut line = serde_json::to_vec(&message).unwrap();
    line.push(b'\n');
    stdin.write_all(&line).unwrap();
    stdin.flush().unwrap();
}

/// The next message with this `id` (notifications and logs in between are skipped).
fn reply(lines: &Receiver<String>, id: u64) -> Value {
    loop {
        let line = match lines.recv_timeout(LIMIT) {
            Ok(line) => line,
            Err(RecvTimeoutError::Timeout) => panic!("no reply {id} within {LIMIT:?}"),
            Err(RecvTimeoutError::Disconnected) => panic!("stdout closed before reply {id}"),
        };
        let message: Value = serde_json::from_str(&line)
            .unwrap_or_else(|e| panic!("stdout line is not JSON ({e}): {line:?}"));
        if message["id"] == id {
            return message;
        }
    }
}

#[test]
fn answers_initialize_lists_its_tools_calls_echo_and_exits_at_end_of_stdin() {
    let mut server = Server(
        Command::new(env!("CARGO_BIN_EXE_wave-mcp-test-server"))
            .args(["--name", "self-check", "--tools", "echo,add"])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("spawn wave-mcp-test-server"),
    );
    let mut stdin = server.0.stdin.take().unwrap();
    let stdout = server.0.stdout.take().unwrap();
    let (tx, lines) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines().map_while(Result::ok) {
            if tx.send(line).is_err() {
                return;
            }
        }
    });

    send(
        &mut stdin,
        json!({ "jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18",
            "capabilities": {},
            "clientInfo": { "name": "self-check-client", "version": "0" },
        }}),
    );
    let initialized = reply(&lines, 1);
    assert_eq!(
        initialized["result"]["serverInfo"]["name"], "self-check",
        "{initialized}"
    );
    assert!(
        initialized["result"]["capabilities"]["tools"].is_object(),
        "{initialized}"
    );
    send(
        &mut stdin,
        json!({ "jsonrpc": "2.0", "method": "notifications/initialized" }),
    );

    send(
        &mut stdin,
        json!({ "jsonrpc": "2.0", "id": 2, "method": "tools/list", "params": {} }),
    );
    let listed = reply(&lines, 2);
    let mut names: Vec<&str> = listed["result"]["tools"]
        .as_array()
        .unwrap_or_else(|| panic!("no tools in {listed}"))
        .iter()
        .map(|tool| tool["name"].as_str().unwrap())
        .collect();
    names.sort_unstable();
    assert_eq!(names, ["add", "echo"]);

    send(
        &mut stdin,
        json!({ "jsonrpc": "2.0", "id": 3, "method": "tools/call",
                "params": { "name": "echo", "arguments": { "text": "hello" } } }),
    );
    let called = reply(&lines, 3);
    assert_ne!(called["result"]["isError"], true, "{called}");
    let text = called["result"]["content"][0]["text"]
        .as_str()
        .unwrap_or_default();
    assert!(text.contains("hello"), "{called}");

    drop(stdin);
    let deadline = std::time::Instant::now() + LIMIT;
    let status = loop {
        if let Some(status) = server.0.try_wait().unwrap() {
            break status;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "the server did not exit within {LIMIT:?} after its stdin closed"
        );
        std::thread::sleep(Duration::from_millis(25));
    };
    assert!(status.success(), "exit status: {status}");
}
