//! A turn's consent (TRUST-3, TRUST-5): the agent's questions to the user become the
//! sidecar-to-client requests `wave/session/approveServers` and `wave/session/confirmTool`,
//! which the host's chat page answers. No answer (an error, no client, no chat page) approves
//! nothing and declines the call.

use futures::future::BoxFuture;
use tower_lsp_server::Client;
use wave_mcp_agent::{Consent, ServerApproval, ToolConfirmation, ToolDecision};
use wave_mcp_protocol::{
    SessionApproveServers, SessionApproveServersParams, SessionConfirmTool,
    SessionConfirmToolParams,
};

use crate::view::approval_view;

/// The consent of one turn of one session.
pub struct TurnConsent {
    pub client: Client,
    pub session_id: String,
    pub turn: u64,
}

impl Consent for TurnConsent {
    fn approve_servers(&self, servers: Vec<ServerApproval>) -> BoxFuture<'static, Vec<String>> {
        let client = self.client.clone();
        let params = SessionApproveServersParams {
            session_id: self.session_id.clone(),
            servers: servers.iter().map(approval_view).collect(),
        };
        Box::pin(async move {
            match client.send_request::<SessionApproveServers>(params).await {
                Ok(result) => result.approved,
                Err(e) => {
                    tracing::info!(
                        "no answer to the approval question, nothing approved: {}",
                        e.message
                    );
                    Vec::new()
                }
            }
        })
    }

    fn confirm_tool(&self, request: ToolConfirmation) -> BoxFuture<'static, ToolDecision> {
        let client = self.client.clone();
        let annotations =
            crate::view::annotations_view(request.title.as_deref(), request.annotations.as_ref());
        let params = SessionConfirmToolParams {
            session_id: self.session_id.clone(),
            turn: self.turn,
            tool_call_id: request.tool_call_id,
            server: request.server,
            tool: request.tool,
            full_name: request.full_name,
            arguments: request.arguments,
            annotations,
            definition_changed: request.definition_changed,
        };
        Box::pin(async move {
            use wave_mcp_protocol::ToolDecision as Wire;
            match client.send_request::<SessionConfirmTool>(params).await {
                Ok(result) => match result.decision {
                    Wire::Once => ToolDecision::Once,
                    Wire::Session => ToolDecision::Session,
                    Wire::Always => ToolDecision::Always,
                    Wire::Deny => ToolDecision::Deny,
                },
                Err(e) => {
                    tracing::info!(
                        "no answer to the tool confirmation, declined: {}",
                        e.message
                    );
                    ToolDecision::Deny
                }
            }
        })
    }
}
