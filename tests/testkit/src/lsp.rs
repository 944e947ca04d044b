//! The one LSP test client, used by the sidecar suites (`server/tests`) and the bench: spawns
//! the real `wave-mcp lsp`, frames messages with `Content-Length`, matches responses to request
//! ids, and records every message from the sidecar in arrival order with its arrival time and
//! size (so tests can compare the versions of replies and notifications, and the bench can time
//! them).

use std::collections::HashMap;
use std::path::Path;
use std::process::{ExitStatus, Stdio};
use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use tokio::io::{AsyncWriteExt, BufReader};
use tokio::process::{Child, ChildStdin, ChildStdout, Command};
use tokio::sync::{Notify, oneshot};

use crate::{SandboxDirs, binary, read_lsp_frame};

/// Longest wait for a reply or a notification (a bound, not a speed assertion).
pub const LIMIT: Duration = Duration::from_secs(60);

/// A JSON-RPC error reply.
#[derive(Debug, Clone)]
pub struct RpcError {
    pub code: i64,
    pub message: String,
    pub data: Value,
}

impl RpcError {
    /// `data.kind` of a `RequestFailed` error.
    pub fn kind(&self) -> &str {
        self.data["kind"].as_str().unwrap_or_default()
    }
}

/// One message from the sidecar: when it arrived, its body's size in bytes, and the message.
#[derive(Debug, Clone)]
pub struct Arrival {
    pub at: Instant,
    pub size: usize,
    pub message: Value,
}

#[derive(Default)]
struct Shared {
    pending: Mutex<HashMap<i64, oneshot::Sender<Arrival>>>,
    /// Every message from the sidecar, in arrival order.
    log: Mutex<Vec<Arrival>>,
    arrived: Notify,
}

/// The sidecar process and our end of its stdio.
pub struct Sidecar {
    child: Child,
    stdin: tokio::sync::Mutex<Option<ChildStdin>>,
    next_id: AtomicI64,
    shared: Arc<Shared>,
}

impl Sidecar {
    /// Spawns `wave-mcp lsp` (of this test's target directory) in `cwd`; `configure` may add
    /// env vars or change the user.
    pub fn spawn(cwd: &Path, configure: impl FnOnce(&mut Command)) -> Sidecar {
        Sidecar::spawn_program(&binary("wave-mcp"), cwd, configure)
    }

    /// [`Sidecar::spawn`] with another copy of the binary (the bench's release build).
    pub fn spawn_program(
        program: &Path,
        cwd: &Path,
        configure: impl FnOnce(&mut Command),
    ) -> Sidecar {
        let mut command = Command::new(program);
        command
            .arg("lsp")
            .current_dir(cwd)
            .env("WAVE_LOG", "warn")
            // Sessions get an agent only when a test asks for a model.
            .env_remove("WAVE_MODEL")
            .env_remove("WAVE_BASE_URL")
            .env_remove("WAVE_API_KEY")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .kill_on_drop(true);
        configure(&mut command);
        let mut child = command.spawn().expect("spawn wave-mcp lsp");
        let stdin = child.stdin.take().expect("stdin");
        let stdout = child.stdout.take().expect("stdout");
        let shared = Arc::new(Shared::default());
        tokio::spawn(read_messages(stdout, shared.clone()));
        Sidecar {
            child,
            stdin: tokio::sync::Mutex::new(Some(stdin)),
            next_id: AtomicI64::new(1),
            shared,
        }
    }

    /// Spawns and initializes a sidecar for the sandbox (its home and workdir), with
    /// `constructor` as `initializationOptions.mcpServers`.
    pub async fn start(sandbox: &SandboxDirs, constructor: Value) -> Sidecar {
        let sidecar = Sidecar::spawn(&sandbox.root, |_| {});
        let mut options = json!({
            "home": sandbox.home,
            "workdir": sandbox.workdir,
        });
        if !constructor.is_null() {
            options["mcpServers"] = constructor;
        }
        sidecar
            .initialize(json!({ "initializationOptions": options }))
            .await
            .expect("initialize");
        sidecar
    }

    /// Spawns and initializes a sidecar for the sandbox whose sessions talk to the fake model at
    /// `model_url`; `configure` may add env vars to its command.
    pub async fn with_model(
        sandbox: &SandboxDirs,
        model_url: &str,
        configure: impl FnOnce(&mut Command),
    ) -> Sidecar {
        let sidecar = Sidecar::spawn(&sandbox.root, configure);
        sidecar
            .initialize(json!({ "initializationOptions": {
                "home": sandbox.home,
                "workdir": sandbox.workdir,
                "model": { "baseUrl": model_url, "model": "fake" },
            }}))
            .await
            .expect("initialize");
        sidecar
    }

    /// Sends `text` to the `default` session; returns the number of the turn it started.
    pub async fn send_text(&self, text: &str) -> u64 {
        let accepted = self
            .ok(
                "wave/session/send",
                json!({ "sessionId": "default", "text": text }),
            )
            .await;
        accepted["turn"].as_u64().expect("turn")
    }

    /// `initialize` with `params` (plus empty capabilities), then `initialized`.
    pub async fn initialize(&self, mut params: Value) -> Result<Value, RpcError> {
        params["capabilities"] = json!({});
        params["processId"] = Value::Null;
        let result = self.request("initialize", params).await?;
        self.notify("initialized", json!({})).await;
        Ok(result)
    }

    async fn write(&self, message: &Value) {
        let body = serde_json::to_vec(message).unwrap();
        self.write_raw(&body).await;
    }

    /// Sends `body` as one framed message, whatever it holds.
    pub async fn write_raw(&self, body: &[u8]) {
        let mut stdin = self.stdin.lock().await;
        let stdin = stdin.as_mut().expect("stdin is open");
        let header = format!("Content-Length: {}\r\n\r\n", body.len());
        stdin.write_all(header.as_bytes()).await.unwrap();
        stdin.write_all(body).await.unwrap();
        stdin.flush().await.unwrap();
    }

    /// Sends a request and waits for its reply (panics after [`LIMIT`]).
    pub async fn request(&self, method: &str, params: Value) -> Result<Value, RpcError> {
        let reply = self.call(method, params).await.message;
        match reply.get("error") {
            Some(error) => Err(RpcError {
                code: error["code"].as_i64().unwrap_or_default(),
                message: error["message"].as_str().unwrap_or_default().to_string(),
                data: error.get("data").cloned().unwrap_or(Value::Null),
            }),
            None => Ok(reply.get("result").cloned().unwrap_or(Value::Null)),
        }
    }

    /// Sends a request and returns its whole reply as it arrived (panics after [`LIMIT`]).
    pub async fn call(&self, method: &str, params: Value) -> Arrival {
        let id = self.next_id.fetch_add(1, Ordering::SeqCst);
        let (tx, rx) = oneshot::channel();
        self.shared.pending.lock().unwrap().insert(id, tx);
        let mut message = json!({ "jsonrpc": "2.0", "id": id, "method": method });
        if !params.is_null() {
            message["params"] = params;
        }
        self.write(&message).await;
        tokio::time::timeout(LIMIT, rx)
            .await
            .unwrap_or_else(|_| panic!("no reply to {method} within {LIMIT:?}"))
            .expect("the sidecar closed stdout before replying")
    }

    /// A request that must succeed.
    pub async fn ok(&self, method: &str, params: Value) -> Value {
        match self.request(method, params).await {
            Ok(result) => result,
            Err(e) => panic!("{method} failed: {e:?}"),
        }
    }

    /// A request that must fail.
    pub async fn err(&self, method: &str, params: Value) -> RpcError {
        match self.request(method, params).await {
            Ok(result) => panic!("{method} succeeded: {result}"),
            Err(e) => e,
        }
    }

    pub async fn notify(&self, method: &str, params: Value) {
        self.write(&json!({ "jsonrpc": "2.0", "method": method, "params": params }))
            .await;
    }

    /// Every message received so far, in arrival order.
    pub fn messages(&self) -> Vec<Value> {
        let log = self.shared.log.lock().unwrap();
        log.iter().map(|arrival| arrival.message.clone()).collect()
    }

    /// The messages received from position `since` on, in arrival order (a cursor that a
    /// caller advances, so a long log is not copied again and again).
    pub fn messages_since(&self, since: usize) -> Vec<Value> {
        let log = self.shared.log.lock().unwrap();
        log[since.min(log.len())..]
            .iter()
            .map(|arrival| arrival.message.clone())
            .collect()
    }

    /// The sidecar's process id (`None` once it was reaped).
    pub fn pid(&self) -> Option<u32> {
        self.child.id()
    }

    /// Every message received so far with its arrival time and size, in arrival order.
    pub fn arrivals(&self) -> Vec<Arrival> {
        self.shared.log.lock().unwrap().clone()
    }

    /// The messages received from position `since` on, with their arrival times and sizes.
    pub fn arrivals_since(&self, since: usize) -> Vec<Arrival> {
        let log = self.shared.log.lock().unwrap();
        log[since.min(log.len())..].to_vec()
    }

    /// How many messages have arrived: a cursor for [`Sidecar::wait_notification`].
    pub fn received(&self) -> usize {
        self.shared.log.lock().unwrap().len()
    }

    /// Params of every `method` notification received so far.
    pub fn notifications(&self, method: &str) -> Vec<Value> {
        self.messages()
            .into_iter()
            .filter(|m| m["method"] == method)
            .map(|m| m["params"].clone())
            .collect()
    }

    /// Waits for a `method` notification at or after message `since` whose params satisfy
    /// `check`; returns its params.
    pub async fn wait_notification(
        &self,
        since: usize,
        method: &str,
        check: impl Fn(&Value) -> bool,
    ) -> Value {
        let found = self
            .wait_for(since, |m| m["method"] == method && check(&m["params"]))
            .await;
        match found {
            Some(message) => message["params"].clone(),
            None => panic!(
                "no matching {method} within {LIMIT:?}; received: {:#?}",
                self.notifications(method)
            ),
        }
    }

    /// Waits for a `method` *request* of the sidecar at or after message `since`; returns the
    /// whole message (`id`, `params`) for [`Sidecar::answer`].
    pub async fn wait_request(&self, since: usize, method: &str) -> Value {
        let found = self
            .wait_for(since, |m| m["method"] == method && m.get("id").is_some())
            .await;
        found.unwrap_or_else(|| panic!("no {method} request within {LIMIT:?}"))
    }

    /// The first message at or after `since` that `wanted` accepts, waiting up to [`LIMIT`] for
    /// it; `None` when none came.
    async fn wait_for(&self, since: usize, wanted: impl Fn(&Value) -> bool) -> Option<Value> {
        let deadline = tokio::time::Instant::now() + LIMIT;
        loop {
            let arrived = self.shared.arrived.notified();
            let found = {
                let log = self.shared.log.lock().unwrap();
                log[since.min(log.len())..]
                    .iter()
                    .map(|arrival| &arrival.message)
                    .find(|m| wanted(m))
                    .cloned()
            };
            if found.is_some() {
                return found;
            }
            if tokio::time::timeout_at(deadline, arrived).await.is_err() {
                return None;
            }
        }
    }

    /// The `method` requests of the sidecar received so far.
    pub fn requests_of(&self, method: &str) -> Vec<Value> {
        self.messages()
            .into_iter()
            .filter(|m| m["method"] == method && m.get("id").is_some())
            .collect()
    }

    /// Answers a request of the sidecar with `result`.
    pub async fn answer(&self, request: &Value, result: Value) {
        let id = request["id"].clone();
        self.write(&json!({ "jsonrpc": "2.0", "id": id, "result": result }))
            .await;
    }

    /// Answers a request of the sidecar with a JSON-RPC error.
    pub async fn answer_error(&self, request: &Value, code: i64, message: &str) {
        let id = request["id"].clone();
        let error = json!({ "code": code, "message": message });
        self.write(&json!({ "jsonrpc": "2.0", "id": id, "error": error }))
            .await;
    }

    /// Writes `bytes` to the sidecar's stdin as they are (broken frames included); a sidecar
    /// that already hung up is an outcome, not a test failure.
    pub async fn write_bytes(&self, bytes: &[u8]) {
        let mut stdin = self.stdin.lock().await;
        if let Some(stdin) = stdin.as_mut() {
            let _ = stdin.write_all(bytes).await;
            let _ = stdin.flush().await;
        }
    }

    /// The exit status once the sidecar has exited, or `None` after `limit`.
    pub async fn exited_within(&mut self, limit: Duration) -> Option<ExitStatus> {
        tokio::time::timeout(limit, self.child.wait())
            .await
            .ok()
            .map(|status| status.expect("wait for the sidecar"))
    }

    /// Closes our end of the sidecar's stdin (end of input).
    pub async fn close_stdin(&self) {
        self.stdin.lock().await.take();
    }

    /// Waits for the sidecar to exit.
    pub async fn wait_exit(&mut self, limit: Duration) -> ExitStatus {
        tokio::time::timeout(limit, self.child.wait())
            .await
            .unwrap_or_else(|_| panic!("the sidecar did not exit within {limit:?}"))
            .expect("wait for the sidecar")
    }

    /// Whether the sidecar process is still running.
    pub fn running(&mut self) -> bool {
        matches!(self.child.try_wait(), Ok(None))
    }

    /// `shutdown` then `exit`; the process must end with status 0.
    pub async fn stop(mut self) {
        self.ok("shutdown", Value::Null).await;
        self.notify("exit", Value::Null).await;
        let status = self.wait_exit(Duration::from_secs(20)).await;
        assert!(status.success(), "sidecar exit status: {status}");
    }
}

async fn read_messages(stdout: ChildStdout, shared: Arc<Shared>) {
    let mut reader = BufReader::new(stdout);
    while let Some(arrival) = read_message(&mut reader).await {
        let message = &arrival.message;
        let id = message.get("id").and_then(Value::as_i64);
        let is_reply = message.get("method").is_none();
        shared.log.lock().unwrap().push(arrival.clone());
        let waiting = id.filter(|_| is_reply);
        if let Some(tx) = waiting.and_then(|id| shared.pending.lock().unwrap().remove(&id)) {
            let _ = tx.send(arrival);
        }
        shared.arrived.notify_waiters();
    }
    shared.pending.lock().unwrap().clear();
    shared.arrived.notify_waiters();
}

/// The next message; `None` at the end of stdout or at a frame that is not JSON.
async fn read_message(reader: &mut BufReader<ChildStdout>) -> Option<Arrival> {
    let body = read_lsp_frame(reader).await?;
    let at = Instant::now();
    let message = serde_json::from_slice(&body).ok()?;
    Some(Arrival {
        at,
        size: body.len(),
        message,
    })
}

/// The server named `name` in a snapshot (panics when absent).
pub fn row<'a>(snapshot: &'a Value, name: &str) -> &'a Value {
    snapshot["servers"]
        .as_array()
        .and_then(|servers| servers.iter().find(|s| s["name"] == name))
        .unwrap_or_else(|| panic!("no server {name} in {snapshot:#}"))
}

/// Whether a snapshot lists `name`.
pub fn lists(snapshot: &Value, name: &str) -> bool {
    snapshot["servers"]
        .as_array()
        .is_some_and(|servers| servers.iter().any(|s| s["name"] == name))
}

/// The status of `name` in a snapshot, if listed.
pub fn status_of(snapshot: &Value, name: &str) -> Option<String> {
    snapshot["servers"]
        .as_array()?
        .iter()
        .find(|s| s["name"] == name)
        .and_then(|s| s["status"].as_str())
        .map(str::to_string)
}

pub fn version(snapshot: &Value) -> u64 {
    snapshot["version"].as_u64().expect("snapshot version")
}
