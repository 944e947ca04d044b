//! MCP Apps in the sidecar (APPS-1, APPS-2, APPS-4): `wave/app/resource` reads a tool's UI
//! resource and registers it with the sandbox origin (started on first use, once per sidecar);
//! `wave/app/callTool` runs an app's call through the session's [`ToolGate`] — the agent's own
//! permission rules, grants and consent, without waiting for the agent's lock, so an app calls
//! while a turn runs and after it ended; `wave/app/readResource` reads only the app's server.

use std::sync::Arc;

use serde_json::{Map, Value};
use wave_mcp_agent::{AgentError, AppCall};
use wave_mcp_protocol::{
    AppCallToolParams, AppCallToolResult, AppReadResourceResult, AppResourceParams,
    AppResourceResult, ErrorKind, UiCspView,
};

use super::Failure;
use super::app_sandbox::{LazySandbox, UiCsp, UiPermissions};
use super::consent::TurnConsent;
use super::sessions::Session;

fn no_app(server: &str, uri: &str, why: &str) -> Failure {
    Failure::new(
        ErrorKind::NoApp,
        format!("MCP server \"{server}\" has no app \"{uri}\": {why}"),
    )
}

fn as_object(value: Value) -> Map<String, Value> {
    match value {
        Value::Object(map) => map,
        _ => Map::new(),
    }
}

impl Session {
    /// Whether one of `server`'s connected tools has an app: only such a server's app can ask.
    fn has_app(&self, server: &str) -> bool {
        self.manager.tools().iter().any(|t| {
            t.server == server && t.ui.as_ref().is_some_and(|ui| ui.resource_uri.is_some())
        })
    }

    fn apps_allowed(&self, server: &str, uri: &str) -> Result<(), Failure> {
        match self.apps {
            true => Ok(()),
            false => Err(no_app(
                server,
                uri,
                "this client did not say it can show apps (initializationOptions.apps)",
            )),
        }
    }

    /// `wave/app/resource`: the app's HTML and `_meta.ui`, and its sandbox URL (APPS-1, APPS-2).
    pub async fn app_resource(
        &self,
        params: AppResourceParams,
        sandbox: &LazySandbox,
    ) -> Result<AppResourceResult, Failure> {
        let AppResourceParams { server, uri, .. } = params;
        self.apps_allowed(&server, &uri)?;
        // Only a URI one of the server's tools names is an app of it.
        let named = self.manager.tools().iter().any(|t| {
            t.server == server
                && t.ui
                    .as_ref()
                    .and_then(|ui| ui.resource_uri.as_deref())
                    .is_some_and(|u| u == uri)
        });
        if !named {
            return Err(no_app(
                &server,
                &uri,
                "none of its connected tools names it in _meta.ui.resourceUri",
            ));
        }
        let resource = self
            .manager
            .read_app(&server, &uri)
            .await
            .map_err(|e| no_app(&server, &uri, &e.to_string()))?;
        let csp: UiCsp = resource
            .csp
            .clone()
            .and_then(|v| serde_json::from_value(v).ok())
            .unwrap_or_default();
        let permissions: UiPermissions = resource
            .permissions
            .clone()
            .and_then(|v| serde_json::from_value(v).ok())
            .unwrap_or_default();
        let sandbox = sandbox.get().await.map_err(|e| {
            Failure::new(
                ErrorKind::Io,
                format!("cannot start the MCP Apps sandbox server on 127.0.0.1: {e}"),
            )
        })?;
        let sandbox_url = sandbox.register(&server, &csp, &permissions);
        Ok(AppResourceResult {
            uri: resource.uri,
            html: resource.html,
            mime_type: resource.mime_type,
            csp: resource
                .csp
                .and_then(|v| serde_json::from_value::<UiCspView>(v).ok()),
            permissions: resource.permissions.map(as_object),
            domain: resource.domain,
            prefers_border: resource.prefers_border,
            sandbox_url,
        })
    }

    /// `wave/app/callTool` (APPS-4): through the agent's funnel; where the rules ask, the chat
    /// page is asked with `wave/session/confirmTool`.
    pub async fn app_call_tool(
        &self,
        params: AppCallToolParams,
    ) -> Result<AppCallToolResult, Failure> {
        let AppCallToolParams {
            server,
            name,
            arguments,
            tool_call_id,
            ..
        } = params;
        if !self.apps {
            return Err(Failure::new(
                ErrorKind::NoApp,
                format!(
                    "no app may call tool \"{name}\" of MCP server \"{server}\": this client did not say it can show apps (initializationOptions.apps)"
                ),
            ));
        }
        if !self.has_app(&server) {
            return Err(Failure::new(
                ErrorKind::AppRefused,
                format!(
                    "MCP server \"{server}\" has no app (no connected tool with _meta.ui.resourceUri): no app may call its tool \"{name}\""
                ),
            ));
        }
        let Some(gate) = &self.gate else {
            let reason = self.no_agent.as_deref().unwrap_or("no agent");
            return Err(Failure::new(
                ErrorKind::ChatUnavailable,
                format!(
                    "session \"{}\" cannot run an app's calls: {reason}",
                    self.id
                ),
            ));
        };
        let turn = self.last_turn().await;
        let consent = Arc::new(TurnConsent {
            client: self.publisher_client(),
            session_id: self.id.clone(),
            turn,
        });
        let call = AppCall {
            server,
            name,
            arguments: arguments.unwrap_or_default(),
            call_id: tool_call_id.unwrap_or_default(),
        };
        match gate.call_for_app(call, Some(consent)).await {
            Ok(result) => Ok(AppCallToolResult(as_object(
                serde_json::to_value(&result).unwrap_or_default(),
            ))),
            Err(AgentError::AppRefused(why)) => Err(Failure::new(ErrorKind::AppRefused, why)),
            Err(e) => Err(Failure::new(ErrorKind::Io, e.to_string())),
        }
    }

    /// `wave/app/readResource` (APPS-4): `resources/read` of the app's own server.
    pub async fn app_read_resource(
        &self,
        params: AppResourceParams,
    ) -> Result<AppReadResourceResult, Failure> {
        let AppResourceParams { server, uri, .. } = params;
        self.apps_allowed(&server, &uri)?;
        if !self.has_app(&server) {
            return Err(no_app(
                &server,
                &uri,
                "the server has no app (no connected tool with _meta.ui.resourceUri), so no app may read its resources",
            ));
        }
        let result = self
            .manager
            .read_resource(&server, &uri)
            .await
            .map_err(|e| match e {
                wave_mcp_manager::Error::UnknownServer(_) => {
                    Failure::new(ErrorKind::UnknownServer, e.to_string())
                }
                e => Failure::new(ErrorKind::Io, e.to_string()),
            })?;
        Ok(AppReadResourceResult(as_object(
            serde_json::to_value(&result).unwrap_or_default(),
        )))
    }
}
