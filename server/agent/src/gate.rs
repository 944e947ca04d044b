//! The permission half of the agent's one execution funnel, cloneable out of the agent:
//! rules, the session's grants, the trust store's `always`, and the user's consent (TRUST-5,
//! TRUST-6). The model's calls (flat and from `Exec`) and an app's calls (APPS-4) both pass
//! [`ToolGate::permit`]; an app's call needs no lock on the agent, so it works while a turn runs
//! and after it ended.

use std::sync::Arc;

use serde_json::{Map, Value};
use wave_mcp_manager::apps::app_visible;
use wave_mcp_manager::{CallHooks, CallToolResult, CancellationToken, McpManager, McpTool};

use crate::ToolOutcome;
use crate::consent::{Consent, SessionGrants, ToolConfirmation, ToolDecision};
use crate::error::AgentError;
use crate::permissions::{PermissionRules, Verdict};
use crate::settings::{PermissionSource, RECHECK_AFTER};

/// What the funnel's permission check needs; clones share the session's grants and rules.
#[derive(Clone)]
pub struct ToolGate {
    pub(crate) manager: McpManager,
    pub(crate) permissions: Arc<PermissionSource>,
    pub(crate) grants: Arc<SessionGrants>,
}

/// Who asks for a call, for the consent question.
pub(crate) struct Asker<'a> {
    pub consent: Option<Arc<dyn Consent>>,
    /// The model's tool call (the app's, for an app's call) the question is about.
    pub call_id: String,
    pub cancel: &'a CancellationToken,
}

/// One call an app makes (`tools/call` from its view, APPS-4).
#[derive(Debug, Clone)]
pub struct AppCall {
    /// The app's own server: the only one it may call.
    pub server: String,
    /// The server's own name for the tool.
    pub name: String,
    pub arguments: Map<String, Value>,
    /// The model's tool call whose app asks.
    pub call_id: String,
}

impl ToolGate {
    /// Deny, ask and allow rules, then `defaultMode`; where they ask, the session's and the
    /// stored permissions pinned to the definition, else the user (TRUST-5, TRUST-6). `None`:
    /// the call may run; else what the caller gets instead.
    pub(crate) async fn permit(
        &self,
        rules: &PermissionRules,
        name: &str,
        tool: Option<McpTool>,
        arguments: &Map<String, Value>,
        asker: Asker<'_>,
    ) -> Option<ToolOutcome> {
        let source = tool
            .as_ref()
            .map_or(wave_mcp_manager::Source::User, |t| t.source);
        match rules.verdict(name, source) {
            Verdict::Allow => None,
            Verdict::Deny(why) => {
                tracing::info!(tool = %name, "tool call refused: {why}");
                Some(ToolOutcome::error(format!(
                    "permission denied: the tool \"{name}\" may not be used ({why}); do not call it again"
                )))
            }
            // An unknown tool is not asked about: the call fails as before (TOOL-3).
            Verdict::Ask { rule } => match tool {
                Some(tool) => self.consent(tool, arguments, rule.is_some(), asker).await,
                None => None,
            },
        }
    }

    /// The user's consent to one call: `None` to run it, else the result the caller gets
    /// instead. A permission given for the session or `always` applies while the tool's
    /// definition is the one it was given for, and never to a tool an `ask` rule names.
    async fn consent(
        &self,
        tool: McpTool,
        arguments: &Map<String, Value>,
        ask_rule: bool,
        asker: Asker<'_>,
    ) -> Option<ToolOutcome> {
        let name = tool.full_name.as_str();
        let session = self.grants.get(name);
        let trust = self.manager.trust();
        // Checked within the settings files' window: another process's edit of the trust file
        // reaches a call within it, a decision of this process at once.
        let view = trust.view_within(RECHECK_AFTER);
        let always = view.tool_permission(&tool.server, &tool.name);
        let pinned = [session.as_deref(), always];
        if !ask_rule && pinned.contains(&Some(&*tool.definition)) {
            return None;
        }
        let definition_changed = pinned.iter().any(Option::is_some);
        drop(view);
        let Some(consent) = asker.consent else {
            tracing::info!(tool = %name, "no one to ask: tool call declined");
            return Some(ToolOutcome::error(declined(name)));
        };
        let request = ToolConfirmation {
            tool_call_id: asker.call_id,
            server: tool.server.clone(),
            tool: tool.name.clone(),
            full_name: name.to_string(),
            arguments: arguments.clone(),
            title: tool.title.clone(),
            annotations: tool.annotations.clone(),
            definition_changed,
        };
        let decision = tokio::select! {
            decision = consent.confirm_tool(request) => decision,
            () = asker.cancel.cancelled() => return Some(ToolOutcome::error(crate::live::NOT_RUN)),
        };
        match decision {
            ToolDecision::Once => None,
            ToolDecision::Session => {
                self.grants.insert(name, tool.definition.clone());
                None
            }
            ToolDecision::Always => {
                if let Err(e) = trust.allow_tool(&tool.server, &tool.name, &tool.definition) {
                    tracing::warn!("cannot remember the permission for \"{name}\": {e}");
                }
                None
            }
            ToolDecision::Deny => Some(ToolOutcome::error(declined(name))),
        }
    }

    /// An app's `tools/call` (APPS-4): a switched-on tool of its own server whose visibility
    /// includes `"app"`, through [`ToolGate::permit`] with the rules now in force and `consent`
    /// where they ask. The server's result as it sent it.
    pub async fn call_for_app(
        &self,
        call: AppCall,
        consent: Option<Arc<dyn Consent>>,
    ) -> Result<CallToolResult, AgentError> {
        let AppCall {
            server,
            name,
            arguments,
            call_id,
        } = call;
        let Some(tool) = self
            .manager
            .tools()
            .into_iter()
            .find(|t| t.server == server && t.name == name)
        else {
            return Err(AgentError::AppRefused(format!(
                "MCP server \"{server}\" has no tool \"{name}\" its app may call (not connected, unknown or switched off)"
            )));
        };
        if !app_visible(tool.ui.as_ref()) {
            return Err(AgentError::AppRefused(format!(
                "the tool \"{name}\" of MCP server \"{server}\" is not visible to apps (its _meta.ui.visibility has no \"app\")"
            )));
        }
        let full_name = tool.full_name.clone();
        let rules = self.permissions.checked_within(RECHECK_AFTER);
        let cancel = CancellationToken::new();
        let asker = Asker {
            consent,
            call_id,
            cancel: &cancel,
        };
        if let Some(refused) = self
            .permit(&rules, &full_name, Some(tool), &arguments, asker)
            .await
        {
            return Err(AgentError::AppRefused(refused.text));
        }
        Ok(self
            .manager
            .call_tool_with(&full_name, Some(arguments), &CallHooks::default())
            .await?)
    }
}

/// What the model gets for a call the user declined (or no one could be asked about).
pub(crate) fn declined(name: &str) -> String {
    format!("the user declined this call of \"{name}\": it did not run")
}
