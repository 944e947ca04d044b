//! [`Agent`]: one conversation session. It owns one MCP manager, the history and its
//! transcript, and runs turns: on-demand dial, announcements, model requests, and every tool
//! call through one execution funnel (permission check → route → result).

use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use serde_json::{Map, Value};
use wave_mcp_manager::{
    CallHooks, CallToolResult, ContentBlock, Error as McpError, ManagerOptions, McpManager,
    McpTool, Progress, ProgressSink, ServerSnapshot, Status, apps::model_visible, result_text,
};

use crate::announce;
use crate::consent::SessionGrants;
use crate::error::AgentError;
use crate::exec::{self, ScriptResult};
use crate::gate::{Asker, ToolGate};
use crate::live::{TurnEvent, TurnHooks};
use crate::message::{Image, Message, Role, ToolCall};
use crate::model::{self, ModelClient};
use crate::options::{
    AgentOptions, DEFAULT_BASE_URL, DEFAULT_EXEC_TIME_LIMIT, DEFAULT_MAX_ROUNDS,
    DEFAULT_MODEL_TIMEOUT, ToolPoolMode,
};
use crate::permissions::PermissionRules;
use crate::pool::{EXEC_TOOL, Pool};
use crate::settings::{PermissionSource, RECHECK_AFTER};
use crate::tool_search::{self, SEARCH_TOOL, SearchPlan, SearchSettings, SearchState};
use crate::transcript::Transcript;

/// How long a model request waits for tool-list refreshes a server announced (BUD-6).
const TOOL_LIST_WAIT: Duration = Duration::from_secs(5);
mod input;

/// What one tool call gave back, as the model sees it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToolOutcome {
    /// The result text (TOOL-8), or why the call failed or was refused.
    pub text: String,
    /// Images of the result, with their MIME types.
    pub images: Vec<Image>,
    pub is_error: bool,
    /// The call's tool has an app: its full result, for the chat (APPS-5).
    pub app: Option<crate::message::AppResult>,
}

impl ToolOutcome {
    pub(crate) fn error(text: impl Into<String>) -> ToolOutcome {
        ToolOutcome {
            text: text.into(),
            images: Vec::new(),
            is_error: true,
            app: None,
        }
    }

    fn text(text: impl Into<String>) -> ToolOutcome {
        ToolOutcome {
            text: text.into(),
            images: Vec::new(),
            is_error: false,
            app: None,
        }
    }
}

/// One tool call of a turn and its outcome.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToolCallReport {
    pub call: ToolCall,
    pub outcome: ToolOutcome,
}

/// What a turn did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TurnReport {
    /// The model's final answer.
    pub text: String,
    /// Every tool call, in order.
    pub tool_calls: Vec<ToolCallReport>,
    /// Model requests made.
    pub rounds: usize,
    /// Servers dialed at the start of the turn (0: the turn had no MCP await, LAZY-9).
    pub dialed: usize,
    /// The `isMeta` messages appended (announcements and offline notices).
    pub meta_messages: Vec<String>,
    /// The turn was stopped ([`TurnHooks::cancel`], LONG-3); `text` is what the model had
    /// said until then.
    pub cancelled: bool,
}

/// What one turn reads once, before its first request.
struct TurnContext {
    rules: Arc<PermissionRules>,
    system_prompt: String,
    /// `toolSearch` / `contextWindow` as read at the start of the turn (BUD-3).
    search: SearchSettings,
}

/// One conversation session.
pub struct Agent {
    manager: McpManager,
    model: ModelClient,
    workdir: PathBuf,
    session_id: String,
    permissions: Arc<PermissionSource>,
    tool_pool: ToolPoolMode,
    extra_prompt: Option<String>,
    max_rounds: usize,
    exec_time_limit: Duration,
    history: Vec<Message>,
    transcript: Transcript,
    destroyed: bool,
    /// Tool search: whether `auto` switched it on, the tools found so far (BUD-3, BUD-4).
    search: SearchState,
    /// The running turn's hooks (default outside a turn).
    hooks: TurnHooks,
    /// The model's tool call being run now: progress of MCP calls is reported for it.
    running_call: Option<String>,
    /// Project servers (name and fingerprint) the user was asked about in this session: not
    /// asked again (TRUST-3).
    asked_approval: HashSet<(String, String)>,
    /// The funnel's permission check, shared with the session's apps (TRUST-5, APPS-4).
    gate: ToolGate,
}

impl Agent {
    /// Registers every configured MCP server as `disconnected` and loads the transcript of the
    /// session if it exists. Spawns and dials nothing (LAZY-1) and needs no async runtime.
    pub fn create(options: AgentOptions) -> Result<Agent, AgentError> {
        let workdir = match options.workdir.as_os_str().is_empty() {
            true => std::env::current_dir().map_err(|e| {
                AgentError::Options(format!("cannot read the current directory: {e}"))
            })?,
            false => options.workdir,
        };
        let workdir = std::path::absolute(&workdir).unwrap_or(workdir);
        let Some(home) = options.home.or_else(dirs::home_dir) else {
            return Err(AgentError::Options(
                "no home directory; set AgentOptions::home".into(),
            ));
        };
        let model = model_client(&options.model)?;
        let session_id = match options.session_id {
            Some(id) => checked_session_id(id)?,
            None => new_session_id(),
        };
        let manager = McpManager::new(ManagerOptions {
            workdir: workdir.clone(),
            home: Some(home.clone()),
            servers: options.mcp_servers,
            timeouts: options.mcp_timeouts,
            reconnect: options.mcp_reconnect,
            project_untrusted: options.project_untrusted,
            roots: None,
        });
        let transcript = Transcript::new(&home, &session_id);
        let history = transcript.load();
        let permissions = Arc::new(PermissionSource::new(options.permissions, &workdir, &home));
        let gate = ToolGate {
            manager: manager.clone(),
            permissions: permissions.clone(),
            grants: Arc::new(SessionGrants::default()),
        };
        Ok(Agent {
            manager,
            model,
            workdir,
            session_id,
            permissions,
            tool_pool: options.tool_pool,
            extra_prompt: options.system_prompt,
            max_rounds: options.max_rounds.unwrap_or(DEFAULT_MAX_ROUNDS).max(1),
            exec_time_limit: options.exec_time_limit.unwrap_or(DEFAULT_EXEC_TIME_LIMIT),
            history,
            transcript,
            destroyed: false,
            search: SearchState::default(),
            hooks: TurnHooks::default(),
            running_call: None,
            asked_approval: HashSet::new(),
            gate,
        })
    }

    pub fn session_id(&self) -> &str {
        &self.session_id
    }

    pub fn workdir(&self) -> &Path {
        &self.workdir
    }

    pub fn transcript_path(&self) -> &Path {
        self.transcript.path()
    }

    /// The conversation so far, `isMeta` messages included.
    pub fn history(&self) -> &[Message] {
        &self.history
    }

    /// The agent's MCP manager (for subscriptions and for hosts that act while a turn runs).
    pub fn manager(&self) -> &McpManager {
        &self.manager
    }

    /// The funnel's permission check with this session's rules and grants, for calls that do
    /// not go through a turn: an app's `tools/call` (APPS-4). Taken once, it needs no lock on
    /// the agent.
    pub fn tool_gate(&self) -> ToolGate {
        self.gate.clone()
    }

    /// The live tools the model may see: switched on, and visible to the model (an MCP App's
    /// app-only tools never are, APPS-1).
    fn model_tools(&self) -> Vec<McpTool> {
        let mut tools = self.manager.tools();
        tools.retain(|t| model_visible(t.ui.as_ref()));
        tools
    }

    /// Every configured server with its status (LIFE-1).
    pub fn get_mcp_servers(&self) -> Result<Vec<ServerSnapshot>, AgentError> {
        self.alive()?;
        Ok(self.manager.snapshot().servers.clone())
    }

    /// Connects a server now (LAZY-5, LIFE-2).
    pub async fn connect_mcp_server(&self, name: &str) -> Result<(), AgentError> {
        self.alive()?;
        Ok(self.manager.connect(name).await?)
    }

    /// Disconnects a server for the rest of the session (LAZY-6).
    pub async fn disconnect_mcp_server(&self, name: &str) -> Result<(), AgentError> {
        self.alive()?;
        Ok(self.manager.disconnect(name).await?)
    }

    /// Runs one turn: the user's message, then model requests and tool calls until the model
    /// answers without calling a tool.
    pub async fn send_message(&mut self, text: &str) -> Result<TurnReport, AgentError> {
        self.alive()?;
        // TRUST-3: project servers the user has not approved are put to them before anything
        // dials; with none waiting this is a synchronous check (LAZY-9).
        if self.ask_approvals().await.is_none() {
            return Ok(self.stopped(TurnReport::default(), String::new()));
        }
        // A prompt command or a resource mention is expanded first (PRM-2, PRM-3).
        if self.asks_mcp(text) {
            return self.send_with_mcp(text).await;
        }
        // Decided synchronously: with nothing to dial there is no await here at all (LAZY-9).
        let dials = self.manager.start_turn_dials();
        let dialed = dials.as_ref().map_or(0, |d| d.len());
        let context = match dials {
            // The dials run while the turn is prepared, and settle before the tool
            // declarations are built (LAZY-2).
            Some(pending) => {
                let hooks = self.hooks.clone();
                let (context, settled) = tokio::join!(
                    async { self.prepare_turn(text) },
                    hooks.unless_stopped(pending.settled())
                );
                if settled.is_none() {
                    let report = TurnReport {
                        dialed,
                        ..TurnReport::default()
                    };
                    return Ok(self.stopped(report, String::new()));
                }
                context
            }
            None => self.prepare_turn(text),
        };
        self.run_turn(context, dialed).await
    }

    /// [`Agent::send_message`] with a host watching and able to stop it: every message goes
    /// to `hooks.events` as soon as it is complete, assistant text as it streams, MCP progress
    /// as it arrives (LONG-1, LONG-2); cancelling `hooks.cancel` stops the turn (LONG-3).
    pub async fn send_message_live(
        &mut self,
        text: &str,
        hooks: TurnHooks,
    ) -> Result<TurnReport, AgentError> {
        self.hooks = hooks;
        let result = self.send_message(text).await;
        self.hooks = TurnHooks::default();
        self.running_call = None;
        result
    }

    /// Puts the project servers waiting for approval that were not asked about in this session
    /// to the turn's [`crate::Consent`], and approves what the user approved. `None`: the turn
    /// was stopped while asking (nothing approved).
    async fn ask_approvals(&mut self) -> Option<()> {
        let waiting: Vec<_> = self
            .manager
            .awaiting_approval()
            .into_iter()
            .filter(|a| {
                !self
                    .asked_approval
                    .contains(&(a.name.clone(), a.fingerprint.clone()))
            })
            .collect();
        if waiting.is_empty() {
            return Some(());
        }
        for approval in &waiting {
            self.asked_approval
                .insert((approval.name.clone(), approval.fingerprint.clone()));
        }
        let Some(consent) = self.hooks.consent.clone() else {
            let names: Vec<&str> = waiting.iter().map(|a| a.name.as_str()).collect();
            tracing::info!(servers = ?names, "project MCP servers not approved: skipped");
            return Some(());
        };
        let asked: Vec<String> = waiting.iter().map(|a| a.name.clone()).collect();
        let approved = self
            .hooks
            .clone()
            .unless_stopped(consent.approve_servers(waiting))
            .await?;
        for name in approved.iter().filter(|name| asked.contains(name)) {
            if let Err(e) = self.manager.approve(name).await {
                tracing::warn!("cannot approve MCP server \"{name}\": {e}");
            }
        }
        Some(())
    }

    /// Calls one tool through the execution funnel, as the model would (outside a turn). The
    /// permission rules are those of a check of the settings files at most a second old.
    pub async fn execute_tool(
        &self,
        full_name: &str,
        arguments: Map<String, Value>,
    ) -> Result<ToolOutcome, AgentError> {
        self.alive()?;
        let rules = self.permissions.checked_within(RECHECK_AFTER);
        if full_name != EXEC_TOOL {
            return Ok(self.call_mcp(&rules, full_name, arguments).await);
        }
        let pool = Pool::new(self.model_tools(), &rules, self.tool_pool);
        Ok(self.funnel(&rules, &pool, full_name, arguments).await)
    }

    /// Keeps the last `keep_last` messages (never starting with orphaned tool results) behind a
    /// short meta note, and rewrites the transcript. Returns how many messages were removed.
    pub fn compact(&mut self, keep_last: usize) -> Result<usize, AgentError> {
        self.alive()?;
        let len = self.history.len();
        if keep_last >= len {
            return Ok(0);
        }
        let mut start = len - keep_last;
        while start < len && self.history[start].role == Role::Tool {
            start += 1;
        }
        self.history.drain(..start);
        self.history.insert(
            0,
            Message::meta(format!(
                "<system-reminder>\nThe earlier part of this conversation ({start} messages) was removed to save space.\n</system-reminder>"
            )),
        );
        self.save_all();
        Ok(start)
    }

    /// Removes message `index` and everything after it, and rewrites the transcript. A cut
    /// inside a tool call's results moves back to before the call.
    pub fn rewind(&mut self, index: usize) -> Result<(), AgentError> {
        self.alive()?;
        let len = self.history.len();
        if index > len {
            return Err(AgentError::NoSuchMessage { index, len });
        }
        let mut cut = index;
        while cut > 0 && cut < len && self.history[cut].role == Role::Tool {
            cut -= 1;
        }
        self.history.truncate(cut);
        self.save_all();
        Ok(())
    }

    /// Saves the transcript (a failure is only a warning), then ends every MCP connection and
    /// process tree. Idempotent; afterwards every operation fails with
    /// [`AgentError::Destroyed`] and nothing is dialed again (LIFE-8, LIFE-10).
    pub async fn destroy(&mut self) {
        if self.destroyed {
            return;
        }
        self.destroyed = true;
        // LIFE-8: saving may fail (directory gone, file locked); teardown runs regardless.
        if !self.history.is_empty()
            && let Err(e) = self.transcript.rewrite(&self.history)
        {
            tracing::warn!(
                session = %self.session_id,
                "cannot save the transcript {}: {e}; tearing down anyway",
                self.transcript.path().display()
            );
        }
        self.manager.cleanup().await;
    }

    pub fn is_destroyed(&self) -> bool {
        self.destroyed
    }

    /// Destroyed here, or its manager cleaned up by a host: either way there is no revival.
    fn alive(&self) -> Result<(), AgentError> {
        match self.destroyed || self.manager.is_destroyed() {
            true => Err(AgentError::Destroyed),
            false => Ok(()),
        }
    }

    /// The synchronous part of turn preparation: settings, system prompt, the user's message.
    fn prepare_turn(&mut self, text: &str) -> TurnContext {
        let context = self.turn_context();
        self.push(Message::user(text));
        context
    }

    fn turn_context(&self) -> TurnContext {
        let (rules, search) = self.permissions.current_with_search();
        TurnContext {
            rules,
            system_prompt: self.system_prompt(),
            search,
        }
    }

    /// Fixed for the session: it never names a server, so it does not change when servers or
    /// their instructions come and go (INS-11).
    fn system_prompt(&self) -> String {
        let mut prompt = format!(
            "You are a coding agent working in the directory {}.\n\
             Use the available tools when they help with the user's request, then answer in plain text.\n\
             Tools named mcp__<server>__<tool> belong to external MCP servers.\n\
             Messages wrapped in <system-reminder> come from the agent runtime, not from the user: they carry an MCP server's instructions when the server becomes available, and say when a server goes offline.",
            self.workdir.display()
        );
        if let Some(extra) = &self.extra_prompt {
            prompt.push_str("\n\n");
            prompt.push_str(extra);
        }
        prompt
    }

    async fn run_turn(
        &mut self,
        context: TurnContext,
        dialed: usize,
    ) -> Result<TurnReport, AgentError> {
        let mut report = TurnReport {
            dialed,
            ..TurnReport::default()
        };
        for round in 1..=self.max_rounds {
            // BUD-6: a tool list a server just announced as changed is declared from this
            // request on; the declarations of one request never change while it runs.
            if let Some(settled) = self.manager.tool_lists_settled() {
                let waited = tokio::time::timeout(TOOL_LIST_WAIT, settled);
                if self.hooks.clone().unless_stopped(waited).await.is_none() {
                    return Ok(self.stopped(report, String::new()));
                }
            }
            let live = self.model_tools();
            let snapshot = self.manager.snapshot();
            for note in announce::plan(&self.history, &snapshot.servers, &live, &context.rules) {
                self.push(Message::meta(note.clone()));
                report.meta_messages.push(note);
            }
            let plan = self.search_plan(&context, live);
            if let Some(note) = plan.announcement.clone() {
                self.push(Message::meta(note.clone()));
                report.meta_messages.push(note);
            }
            let pool = Pool::new(plan.declared.clone(), &context.rules, self.tool_pool);
            let mut declarations = pool.declarations(self.exec_time_limit);
            if plan.active() {
                declarations.push(tool_search::declaration(plan.searchable.len()));
            }
            let body = self
                .model
                .body(&context.system_prompt, &self.history, declarations);
            let hooks = self.hooks.clone();
            let delta = |text: &str| hooks.emit(TurnEvent::Delta(text.to_string()));
            let streamed = self.model.stream(body, delta, &hooks.cancel).await?;
            let reply = streamed.reply;
            report.rounds = round;
            if streamed.cancelled {
                return Ok(self.stopped(report, reply.content));
            }
            self.push(Message::assistant(
                reply.content.clone(),
                reply.tool_calls.clone(),
            ));
            if reply.tool_calls.is_empty() {
                report.text = reply.content;
                return Ok(report);
            }
            for call in reply.tool_calls {
                if hooks.cancel.is_cancelled() {
                    // Every call gets a result, so the next turn's history stays valid.
                    let outcome = ToolOutcome::error(crate::live::NOT_RUN);
                    self.push(Message::tool(&call, &outcome));
                    report.tool_calls.push(ToolCallReport { call, outcome });
                    continue;
                }
                self.running_call = Some(call.id.clone());
                let outcome = match model::arguments_object(&call.arguments) {
                    Ok(arguments) => {
                        self.dispatch(&context.rules, &pool, &plan, &call.name, arguments)
                            .await
                    }
                    Err(e) => ToolOutcome::error(format!("cannot call \"{}\": {e}", call.name)),
                };
                self.running_call = None;
                self.push(Message::tool(&call, &outcome));
                report.tool_calls.push(ToolCallReport { call, outcome });
            }
            if hooks.cancel.is_cancelled() {
                return Ok(self.stopped(report, String::new()));
            }
        }
        Err(AgentError::RoundLimit(self.max_rounds))
    }

    /// How this request declares the MCP tools: in full, or behind `search_mcp_tools` (BUD-3).
    /// Exec pools are compact already and see every enabled tool.
    fn search_plan(&self, context: &TurnContext, live: Vec<McpTool>) -> SearchPlan {
        let mut settings = context.search;
        if self.tool_pool == ToolPoolMode::Exec {
            settings.mode = tool_search::ToolSearchMode::Off;
        }
        let always = self.manager.always_loaded();
        self.search
            .plan(settings, live, &always, &context.rules, &self.history)
    }

    /// A call of the model: `search_mcp_tools`, a refused call of a deferred tool, or the funnel.
    async fn dispatch(
        &self,
        rules: &PermissionRules,
        pool: &Pool,
        plan: &SearchPlan,
        name: &str,
        arguments: Map<String, Value>,
    ) -> ToolOutcome {
        if name == SEARCH_TOOL && plan.active() {
            return match self.search.search(plan, &arguments) {
                Ok(text) => ToolOutcome::text(text),
                Err(e) => ToolOutcome::error(format!("error: {e}")),
            };
        }
        if plan.is_deferred(name, &self.search) {
            return ToolOutcome::error(format!(
                "error: the tool \"{name}\" is not declared yet: call {SEARCH_TOOL} with the query \"{name}\" first, then call it in your next request"
            ));
        }
        self.funnel(rules, pool, name, arguments).await
    }

    /// Ends a stopped turn: the text produced so far is kept as the assistant's message (LONG-3).
    fn stopped(&mut self, mut report: TurnReport, text: String) -> TurnReport {
        if !text.is_empty() {
            self.push(Message::assistant(text.clone(), Vec::new()));
        }
        report.text = text;
        report.cancelled = true;
        report
    }

    /// The one execution funnel for every tool call of the model.
    async fn funnel(
        &self,
        rules: &PermissionRules,
        pool: &Pool,
        name: &str,
        arguments: Map<String, Value>,
    ) -> ToolOutcome {
        if name == EXEC_TOOL && pool.exec {
            return self.run_exec(rules, pool, arguments).await;
        }
        self.call_mcp(rules, name, arguments).await
    }

    /// Permission check → route to the server by full name → result (TOOL-3, TOOL-8, TOOL-9).
    /// Flat calls and calls from `Exec` scripts both come through here (TOOL-4). A tool that
    /// only an app may call is refused (APPS-1).
    async fn call_mcp(
        &self,
        rules: &PermissionRules,
        name: &str,
        arguments: Map<String, Value>,
    ) -> ToolOutcome {
        // Looked up once: its source for the rules, its definition for a permission.
        let tool = self.manager.tool(name);
        if let Some(tool) = tool.as_ref().filter(|t| !model_visible(t.ui.as_ref())) {
            tracing::info!(tool = %name, "model call of an app-only tool refused");
            return ToolOutcome::error(format!(
                "error: the tool \"{}\" of MCP server \"{}\" is only for its app, not for the model; do not call it again",
                tool.name, tool.server
            ));
        }
        let app = tool.as_ref().and_then(|t| {
            let uri = t.ui.as_ref()?.resource_uri.clone()?;
            Some((t.server.clone(), t.name.clone(), uri))
        });
        let asker = Asker {
            consent: self.hooks.consent.clone(),
            call_id: self.running_call.clone().unwrap_or_default(),
            cancel: &self.hooks.cancel,
        };
        if let Some(refused) = self.gate.permit(rules, name, tool, &arguments, asker).await {
            return refused;
        }
        let hooks = self.call_hooks();
        match self
            .manager
            .call_tool_with(name, Some(arguments), &hooks)
            .await
        {
            // The owner is named only in an error result; a success pays no lookup.
            Ok(result) => {
                let mut outcome = render(&result, name, || self.manager.tool_owner(name));
                // APPS-5: the app's result in full, for the chat (never for the model).
                outcome.app = app.map(|(server, tool, resource_uri)| crate::message::AppResult {
                    server,
                    tool,
                    resource_uri,
                    result: serde_json::to_value(&result).unwrap_or_default(),
                });
                outcome
            }
            Err(e) => ToolOutcome::error(self.call_error(name, e)),
        }
    }

    /// Progress of an MCP call goes out as the running tool call's (LONG-2); the turn's cancel
    /// stops it (LONG-3).
    fn call_hooks(&self) -> CallHooks {
        let progress: Option<ProgressSink> = match (&self.hooks.events, &self.running_call) {
            (Some(events), Some(call_id)) => {
                let (events, call_id) = (events.clone(), call_id.clone());
                Some(Arc::new(move |p: Progress| {
                    let _ = events.send(TurnEvent::Progress {
                        tool_call_id: call_id.clone(),
                        progress: p.progress,
                        total: p.total,
                        message: p.message,
                    });
                }))
            }
            _ => None,
        };
        CallHooks {
            progress,
            cancel: Some(self.hooks.cancel.clone()),
        }
    }

    /// The manager's reason, made specific when the tool belongs to a server that is not
    /// connected (TOOL-7: a reconnecting server's error text is passed on as is).
    fn call_error(&self, name: &str, error: McpError) -> String {
        if !matches!(error, McpError::UnknownTool(_)) {
            return format!("error: {error}");
        }
        let snapshot = self.manager.snapshot();
        let owner = snapshot.owner_of(name);
        if let Some(server) = owner.filter(|s| s.status == Status::Connected) {
            // BUD-6: the server's tool list changed since the tool was declared.
            return format!(
                "error: the tool \"{name}\" is no longer offered by MCP server \"{}\" (its tool list changed); do not call it again",
                server.name
            );
        }
        match owner {
            Some(server) => format!(
                "error: the tool \"{name}\" is not available: MCP server \"{}\" is {}",
                server.name,
                server.status.as_str()
            ),
            None => format!("error: {error}"),
        }
    }

    async fn run_exec(
        &self,
        rules: &PermissionRules,
        pool: &Pool,
        arguments: Map<String, Value>,
    ) -> ToolOutcome {
        let Some(script) = arguments.get("script").and_then(Value::as_str) else {
            return ToolOutcome::error("Exec needs a \"script\" string argument");
        };
        let result = exec::run(
            script.to_string(),
            pool.docs(),
            self.exec_time_limit,
            |name, arguments| async move {
                let arguments = match arguments {
                    Value::Object(map) => map,
                    Value::Null => Map::new(),
                    _ => return Err(format!("the arguments of \"{name}\" must be an object")),
                };
                let outcome = self.call_mcp(rules, &name, arguments).await;
                match outcome.is_error {
                    true => Err(outcome.text),
                    false => Ok(outcome.text),
                }
            },
        )
        .await;
        script_outcome(result)
    }

    /// Adds a message to the history and the transcript (a write failure is a warning).
    fn push(&mut self, message: Message) {
        if let Err(e) = self.transcript.append(std::slice::from_ref(&message)) {
            tracing::warn!(
                "cannot append to the transcript {}: {e}",
                self.transcript.path().display()
            );
        }
        if self.hooks.listening() {
            self.hooks.emit(TurnEvent::Message(message.clone()));
        }
        self.history.push(message);
    }

    fn save_all(&self) {
        if let Err(e) = self.transcript.rewrite(&self.history) {
            tracing::warn!(
                "cannot rewrite the transcript {}: {e}",
                self.transcript.path().display()
            );
        }
    }
}

/// A tool result for the model: text as rendered by the manager, images kept with their MIME
/// type, and an error result naming the server and the tool (TOOL-8).
fn render(
    result: &CallToolResult,
    full_name: &str,
    owner: impl FnOnce() -> Option<(String, String)>,
) -> ToolOutcome {
    let text = result_text(result);
    let images = result
        .content
        .iter()
        .filter_map(|block| match block {
            ContentBlock::Image(image) => Some(Image {
                mime_type: image.mime_type.clone(),
                data: image.data.clone(),
            }),
            _ => None,
        })
        .collect();
    if result.is_error != Some(true) {
        return ToolOutcome {
            text,
            images,
            is_error: false,
            app: None,
        };
    }
    let text = match owner() {
        Some((server, tool)) => {
            format!("error: tool \"{tool}\" of MCP server \"{server}\" returned an error:\n{text}")
        }
        // The server went away during the call.
        None => format!("error: the MCP tool \"{full_name}\" returned an error:\n{text}"),
    };
    ToolOutcome {
        text,
        images,
        is_error: true,
        app: None,
    }
}

fn script_outcome(result: ScriptResult) -> ToolOutcome {
    let mut sections = Vec::new();
    if !result.logs.is_empty() {
        sections.push(format!("console output:\n{}", result.logs.join("\n")));
    }
    match result.outcome {
        Ok(Some(value)) => sections.push(format!("returned:\n{value}")),
        Ok(None) if sections.is_empty() => sections.push("the script returned nothing".into()),
        Ok(None) => {}
        Err(error) => {
            sections.push(format!("error: {error}"));
            return ToolOutcome::error(sections.join("\n\n"));
        }
    }
    ToolOutcome::text(sections.join("\n\n"))
}

fn model_client(settings: &crate::ModelSettings) -> Result<ModelClient, AgentError> {
    let env = |name: &str| std::env::var(name).ok().filter(|v| !v.trim().is_empty());
    let base_url = settings
        .base_url
        .clone()
        .or_else(|| env("WAVE_BASE_URL"))
        .unwrap_or_else(|| DEFAULT_BASE_URL.to_string());
    let Some(model) = settings.model.clone().or_else(|| env("WAVE_MODEL")) else {
        return Err(AgentError::Options(
            "no model given: set the model in the options or WAVE_MODEL".into(),
        ));
    };
    let api_key = settings.api_key.clone().or_else(|| env("WAVE_API_KEY"));
    Ok(ModelClient::new(
        &base_url,
        api_key,
        model,
        settings.vision,
        settings.timeout.unwrap_or(DEFAULT_MODEL_TIMEOUT),
    ))
}

/// A session id names a file: no path separators, no leading dot.
fn checked_session_id(id: String) -> Result<String, AgentError> {
    let bad = id.is_empty() || id.starts_with('.') || id.contains(['/', '\\', '\0']);
    match bad {
        true => Err(AgentError::Options(format!(
            "session id {id:?} cannot name a transcript file"
        ))),
        false => Ok(id),
    }
}

fn new_session_id() -> String {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    format!(
        "{}-{}-{}",
        chrono::Utc::now().format("%Y%m%dT%H%M%S%.6f"),
        std::process::id(),
        COUNTER.fetch_add(1, Ordering::Relaxed)
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    // TOOL-7: the manager's "reconnecting" reason reaches the model as is.
    #[test]
    fn tool_7_reconnecting_errors_keep_the_managers_text() {
        let agent = Agent::create(AgentOptions {
            workdir: std::env::temp_dir(),
            home: Some(std::env::temp_dir().join("wave-agent-unit-home")),
            model: crate::ModelSettings {
                model: Some("m".into()),
                ..Default::default()
            },
            ..AgentOptions::default()
        })
        .unwrap();
        let text = agent.call_error(
            "mcp__s__echo",
            McpError::Reconnecting {
                server: "s".into(),
                tool: "echo".into(),
            },
        );
        assert_eq!(
            text,
            "error: MCP server \"s\" is reconnecting; try \"echo\" again shortly"
        );
    }
}
