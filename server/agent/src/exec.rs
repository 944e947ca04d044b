//! The `Exec` tool's script runner: JavaScript in an embedded QuickJS (rquickjs), with MCP tools
//! reachable as `await tools["mcp__<server>__<tool>"](args)` (TOOL-2, TOOL-4).
//!
//! QuickJS is single-threaded and not `Send`, so every script gets its own runtime on a blocking
//! thread (`spawn_blocking`). A tool call from the script is a synchronous native function that
//! sends the request over a channel to the async side and blocks on a std channel for the reply;
//! the async side ([`run`]) serves those requests through the agent's execution funnel, so a
//! nested call gets exactly the permission check and routing of a flat call. The native call is
//! wrapped in a `Promise`, so scripts `await` it like any async API (calls run one at a time).
//!
//! The time limit holds everywhere: an interrupt handler stops running JavaScript at the
//! deadline, a script waiting for a tool reply stops waiting at the deadline, and the async side
//! abandons (drops) a tool call still running at the deadline.

use std::sync::mpsc::{self, RecvTimeoutError};
use std::time::Duration;

use rquickjs::{Context, Ctx, Function, Promise, Runtime, Value as JsValue};
use serde_json::{Value, json};
use tokio::sync::mpsc::{UnboundedSender, unbounded_channel};
use tokio::time::Instant;

/// Memory one script may allocate.
const MEMORY_LIMIT: usize = 128 * 1024 * 1024;
/// JavaScript stack size of one script.
const STACK_LIMIT: usize = 1024 * 1024;
/// Characters of console output kept.
const LOG_LIMIT: usize = 50_000;

/// What a script sees of one tool in `search()`.
#[derive(Debug, Clone, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct ToolDoc {
    pub name: String,
    pub description: String,
    pub input_schema: Value,
}

/// How a script ended.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct ScriptResult {
    /// `console.log` lines.
    pub logs: Vec<String>,
    /// The returned value (strings as is, anything else as JSON; `None` for `undefined`), or
    /// why the script failed.
    pub outcome: Result<Option<String>, String>,
}

/// A tool call made by a script, waiting for its reply.
struct ScriptCall {
    name: String,
    arguments: Value,
    reply: mpsc::Sender<Result<String, String>>,
}

/// Runs `script` with at most `limit` of wall time. `call(full_name, arguments)` performs one tool
/// call for the script: `Ok(text)` resolves the script's promise, `Err(message)` rejects it.
pub(crate) async fn run<F, Fut>(
    script: String,
    docs: Vec<ToolDoc>,
    limit: Duration,
    mut call: F,
) -> ScriptResult
where
    F: FnMut(String, Value) -> Fut,
    Fut: Future<Output = Result<String, String>>,
{
    let deadline = Instant::now() + limit;
    let (calls, mut requests) = unbounded_channel::<ScriptCall>();
    let catalog = serde_json::to_string(&docs).unwrap_or_else(|_| "[]".into());
    let std_deadline = deadline.into_std();
    let thread =
        tokio::task::spawn_blocking(move || run_js(&script, catalog, std_deadline, limit, calls));
    // Serve the script's calls until its thread drops the sender (the script ended) or the
    // deadline passes; dropping a call in flight abandons it.
    let serve = async {
        while let Some(request) = requests.recv().await {
            let reply = call(request.name, request.arguments).await;
            let _ = request.reply.send(reply);
        }
    };
    let _ = tokio::time::timeout_at(deadline, serve).await;
    drop(requests);
    match thread.await {
        Ok(result) => result,
        Err(e) => ScriptResult {
            logs: Vec::new(),
            outcome: Err(format!("the script runner failed: {e}")),
        },
    }
}

/// The `tools` proxy, `search()` and `console`, built from the native helpers, which are then
/// removed from the global scope.
const PRELUDE: &str = r#"(() => {
  const catalog = JSON.parse(__wave_catalog);
  const names = catalog.map((t) => t.name);
  const nativeCall = __wave_call;
  const nativeLog = __wave_log;
  const show = (v) => (typeof v === "string" ? v : v === undefined ? "undefined" : JSON.stringify(v));
  const log = (...items) => nativeLog(items.map(show).join(" "));
  globalThis.console = { log, info: log, warn: log, error: log, debug: log };
  const invoke = (name, args) =>
    new Promise((resolve, reject) => {
      const reply = JSON.parse(nativeCall(String(name), JSON.stringify(args === undefined ? {} : args)));
      if (reply.ok) resolve(reply.value);
      else reject(new Error(reply.error));
    });
  const callable = (name) => (args) => invoke(name, args);
  globalThis.tools = new Proxy({}, {
    get: (_, name) => (typeof name === "string" && name !== "then" ? callable(name) : undefined),
    has: (_, name) => names.includes(name),
    ownKeys: () => names.slice(),
    getOwnPropertyDescriptor: (_, name) =>
      names.includes(name)
        ? { value: callable(name), enumerable: true, configurable: true, writable: false }
        : undefined,
  });
  globalThis.search = (query) => {
    const words = String(query ?? "").toLowerCase().split(/\s+/).filter(Boolean);
    return catalog.filter((t) =>
      words.every((w) => (t.name + " " + t.description).toLowerCase().includes(w)),
    );
  };
  delete globalThis.__wave_call;
  delete globalThis.__wave_log;
  delete globalThis.__wave_catalog;
})();"#;

fn wrap(script: &str) -> String {
    format!(
        "(async () => {{\n{script}\n}})().then(\n  (v) => JSON.stringify({{ ok: true, value: v === undefined ? null : typeof v === \"string\" ? v : JSON.stringify(v, null, 2) }}),\n  (e) => JSON.stringify({{ ok: false, error: String(e) }}),\n)"
    )
}

/// The body of the script thread.
fn run_js(
    script: &str,
    catalog: String,
    deadline: std::time::Instant,
    limit: Duration,
    calls: UnboundedSender<ScriptCall>,
) -> ScriptResult {
    let logs = std::rc::Rc::new(std::cell::RefCell::new(Logs::default()));
    let outcome = evaluate(script, catalog, deadline, calls, logs.clone());
    let timed_out = std::time::Instant::now() >= deadline;
    let outcome = match outcome {
        Err(_) | Ok(None) if timed_out => Err(format!(
            "the script was stopped: it ran longer than the time limit of {}",
            human(limit)
        )),
        Ok(None) => Err(
            "the script awaited something that never settles (only tools[...] calls can be awaited)"
                .into(),
        ),
        Ok(Some(outcome)) => outcome,
        Err(e) => Err(e),
    };
    let logs = std::mem::take(&mut logs.borrow_mut().lines);
    ScriptResult { logs, outcome }
}

#[derive(Default)]
struct Logs {
    lines: Vec<String>,
    chars: usize,
}

/// `Ok(None)`: the script's promise never settled.
fn evaluate(
    script: &str,
    catalog: String,
    deadline: std::time::Instant,
    calls: UnboundedSender<ScriptCall>,
    logs: std::rc::Rc<std::cell::RefCell<Logs>>,
) -> Result<Option<Result<Option<String>, String>>, String> {
    let runtime = Runtime::new().map_err(|e| format!("cannot start the script engine: {e}"))?;
    runtime.set_memory_limit(MEMORY_LIMIT);
    runtime.set_max_stack_size(STACK_LIMIT);
    runtime.set_interrupt_handler(Some(Box::new(move || {
        std::time::Instant::now() >= deadline
    })));
    let context =
        Context::full(&runtime).map_err(|e| format!("cannot start the script engine: {e}"))?;
    context.with(|ctx| {
        install(&ctx, catalog, deadline, calls, logs).map_err(|e| exception(&ctx, e))?;
        let promise: Promise = ctx.eval(wrap(script)).map_err(|e| exception(&ctx, e))?;
        match promise.finish::<String>() {
            Ok(reply) => Ok(Some(parse_reply(&reply))),
            Err(rquickjs::Error::WouldBlock) => Ok(None),
            Err(e) => Err(exception(&ctx, e)),
        }
    })
}

fn install<'js>(
    ctx: &Ctx<'js>,
    catalog: String,
    deadline: std::time::Instant,
    calls: UnboundedSender<ScriptCall>,
    logs: std::rc::Rc<std::cell::RefCell<Logs>>,
) -> rquickjs::Result<()> {
    let globals = ctx.globals();
    let call = Function::new(ctx.clone(), move |name: String, args: String| -> String {
        native_call(&calls, deadline, name, &args).to_string()
    })?;
    let log = Function::new(ctx.clone(), move |line: String| {
        let mut logs = logs.borrow_mut();
        if logs.chars > LOG_LIMIT {
            return;
        }
        logs.chars += line.chars().count() + 1;
        if logs.chars > LOG_LIMIT {
            logs.lines.push("…(further output dropped)".into());
            return;
        }
        logs.lines.push(line);
    })?;
    globals.set("__wave_call", call)?;
    globals.set("__wave_log", log)?;
    globals.set("__wave_catalog", catalog)?;
    ctx.eval::<(), _>(PRELUDE)
}

/// One tool call from the script: hand it to the async side and wait for the reply.
fn native_call(
    calls: &UnboundedSender<ScriptCall>,
    deadline: std::time::Instant,
    name: String,
    args: &str,
) -> Value {
    let failed = |error: &str| json!({ "ok": false, "error": error });
    let arguments = serde_json::from_str(args).unwrap_or(Value::Null);
    let (reply, replied) = mpsc::channel();
    let request = ScriptCall {
        name,
        arguments,
        reply,
    };
    if calls.send(request).is_err() {
        return failed("the script's time limit is over");
    }
    let wait = deadline.saturating_duration_since(std::time::Instant::now());
    match replied.recv_timeout(wait) {
        Ok(Ok(text)) => json!({ "ok": true, "value": text }),
        Ok(Err(error)) => failed(&error),
        Err(RecvTimeoutError::Timeout | RecvTimeoutError::Disconnected) => {
            failed("the script's time limit is over")
        }
    }
}

fn parse_reply(reply: &str) -> Result<Option<String>, String> {
    let value: Value = serde_json::from_str(reply).unwrap_or(Value::Null);
    if value.get("ok") == Some(&Value::Bool(true)) {
        return Ok(value
            .get("value")
            .and_then(Value::as_str)
            .map(str::to_string));
    }
    Err(value
        .get("error")
        .and_then(Value::as_str)
        .unwrap_or("the script failed")
        .to_string())
}

/// The pending JavaScript exception (or the engine error) as one message.
fn exception(ctx: &Ctx<'_>, error: rquickjs::Error) -> String {
    if !matches!(error, rquickjs::Error::Exception) {
        return error.to_string();
    }
    let thrown: JsValue = ctx.catch();
    let text = ctx
        .eval::<Function, _>("(e) => String(e)")
        .and_then(|to_string| to_string.call::<_, String>((thrown,)));
    match text {
        Ok(text) => text,
        Err(_) => "the script threw an exception".into(),
    }
}

fn human(limit: Duration) -> String {
    if limit.as_millis().is_multiple_of(1000) {
        return format!("{} s", limit.as_secs());
    }
    format!("{} ms", limit.as_millis())
}

#[cfg(test)]
mod tests {
    use super::*;

    async fn echo_run(script: &str, limit: Duration) -> ScriptResult {
        let docs = vec![ToolDoc {
            name: "mcp__a__echo".into(),
            description: "Echo the given text back.".into(),
            input_schema: json!({"type": "object"}),
        }];
        run(script.into(), docs, limit, |name, args| async move {
            match name.as_str() {
                "mcp__a__echo" => Ok(args["text"].as_str().unwrap_or("").to_string()),
                _ => Err(format!("no tool {name}")),
            }
        })
        .await
    }

    #[tokio::test]
    async fn scripts_await_tools_log_and_return() {
        let result = echo_run(
            r#"const a = await tools["mcp__a__echo"]({text: "hi"});
               console.log("got", a, {n: 1});
               return {a, keys: Object.keys(tools), found: search("ECHO text").map((t) => t.name)};"#,
            Duration::from_secs(10),
        )
        .await;
        assert_eq!(result.logs, vec![r#"got hi {"n":1}"#.to_string()]);
        let value: Value = serde_json::from_str(&result.outcome.unwrap().unwrap()).unwrap();
        assert_eq!(
            value,
            json!({"a": "hi", "keys": ["mcp__a__echo"], "found": ["mcp__a__echo"]})
        );
    }

    #[tokio::test]
    async fn failures_reject_and_errors_surface() {
        let result = echo_run(
            r#"try { await tools["mcp__x__y"]({}); } catch (e) { return "caught: " + e.message; }"#,
            Duration::from_secs(10),
        )
        .await;
        assert_eq!(result.outcome, Ok(Some("caught: no tool mcp__x__y".into())));
        let result = echo_run(r#"await tools["mcp__x__y"]({});"#, Duration::from_secs(10)).await;
        assert_eq!(result.outcome, Err("Error: no tool mcp__x__y".into()));
        let result = echo_run("this is not javascript", Duration::from_secs(10)).await;
        assert!(result.outcome.unwrap_err().contains("SyntaxError"));
        let result = echo_run("await new Promise(() => {});", Duration::from_secs(10)).await;
        assert!(result.outcome.unwrap_err().contains("never settles"));
        let result = echo_run("return undefined", Duration::from_secs(10)).await;
        assert_eq!(result.outcome, Ok(None));
    }

    #[tokio::test]
    async fn endless_scripts_are_stopped_at_the_time_limit() {
        for script in [
            "while (true) {}",
            "await tools.mcp__a__echo({}); for (;;) {}",
        ] {
            let result = echo_run(script, Duration::from_millis(300)).await;
            let error = result.outcome.unwrap_err();
            assert!(error.contains("time limit of 300 ms"), "{error}");
        }
    }
}
