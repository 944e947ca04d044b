//! A session's answers to its servers' questions (MCP elicitation, LONG-5, LONG-6): the
//! manager's [`Elicitor`] for the sidecar. A server's `elicitation/create` becomes the request
//! `wave/session/elicit` to the client, which has its chat page show it; no answer (an error,
//! no client) counts as `decline`. A URL is opened only after the user accepted: through the
//! client (`wave/mcp/openUrl`), else with `$BROWSER` or the platform's opener. The server's
//! `notifications/elicitation/complete` becomes `wave/session/elicitationComplete`. The
//! manager asks one question at a time per session; the others wait.

use futures::future::BoxFuture;
use tower_lsp_server::Client;
use wave_mcp_manager::elicitation::check_content;
use wave_mcp_manager::{Browser, Elicitation, ElicitationAnswer, ElicitationKind, Elicitor};
use wave_mcp_protocol::{
    ElicitAction, ElicitMode, McpOpenUrl, OpenUrlParams, OpenUrlPurpose, SessionElicit,
    SessionElicitParams, SessionElicitationComplete, SessionElicitationCompleteParams,
};

/// The elicitor of one session.
pub struct SessionElicitor {
    pub client: Client,
    pub session_id: String,
}

impl Elicitor for SessionElicitor {
    fn url_mode(&self) -> bool {
        true
    }

    fn elicit(&self, request: Elicitation) -> BoxFuture<'static, ElicitationAnswer> {
        let client = self.client.clone();
        let session_id = self.session_id.clone();
        Box::pin(async move { ask(client, session_id, request).await })
    }

    fn completed(&self, server: &str, elicitation_id: &str) -> BoxFuture<'static, ()> {
        let client = self.client.clone();
        let params = SessionElicitationCompleteParams {
            session_id: self.session_id.clone(),
            server: server.to_string(),
            elicitation_id: elicitation_id.to_string(),
        };
        Box::pin(async move {
            client
                .send_notification::<SessionElicitationComplete>(params)
                .await;
        })
    }
}

async fn ask(client: Client, session_id: String, request: Elicitation) -> ElicitationAnswer {
    let Elicitation {
        server,
        message,
        kind,
        browser,
    } = request;
    let mut params = SessionElicitParams {
        session_id: session_id.clone(),
        server: server.clone(),
        mode: ElicitMode::Form,
        message,
        requested_schema: None,
        url: None,
        elicitation_id: None,
    };
    let (schema, url) = match kind {
        ElicitationKind::Form { requested_schema } => {
            params.requested_schema = requested_schema.as_object().cloned();
            (Some(requested_schema), None)
        }
        ElicitationKind::Url {
            url,
            elicitation_id,
        } => {
            params.mode = ElicitMode::Url;
            params.url = Some(url.clone());
            params.elicitation_id = Some(elicitation_id).filter(|id| !id.is_empty());
            (None, Some(url))
        }
    };
    let result = match client.send_request::<SessionElicit>(params).await {
        Ok(result) => result,
        Err(e) => {
            tracing::info!(%server, "no answer to the elicitation, declined: {}", e.message);
            return ElicitationAnswer::decline();
        }
    };
    match result.action {
        ElicitAction::Decline => ElicitationAnswer::decline(),
        ElicitAction::Cancel => ElicitationAnswer::cancel(),
        ElicitAction::Accept => match (schema, url) {
            (Some(schema), _) => {
                let content = result.content.unwrap_or_default();
                // The page checks the form; a client that did not is declined, not passed on.
                if let Err(problem) = check_content(&schema, &content) {
                    tracing::warn!(%server, "the client's answer does not fit the schema, declined: {problem}");
                    return ElicitationAnswer::decline();
                }
                ElicitationAnswer::accept(Some(content))
            }
            (None, Some(url)) => {
                open_url(&client, &session_id, &server, url, &browser).await;
                ElicitationAnswer::accept(None)
            }
            (None, None) => ElicitationAnswer::decline(),
        },
    }
}

/// Opens an accepted URL: through the client, else here (`$BROWSER`, the platform's opener).
async fn open_url(client: &Client, session_id: &str, server: &str, url: String, browser: &Browser) {
    let params = OpenUrlParams {
        session_id: session_id.to_string(),
        name: server.to_string(),
        url: url.clone(),
        purpose: Some(OpenUrlPurpose::Elicitation),
    };
    let opened = match client.send_request::<McpOpenUrl>(params).await {
        Ok(result) => result.opened,
        Err(e) => {
            tracing::info!("the client did not open the elicitation URL: {}", e.message);
            false
        }
    };
    if !opened && is_web_url(&url) {
        browser.open(&url);
    }
}

fn is_web_url(url: &str) -> bool {
    let lower = url.to_ascii_lowercase();
    lower.starts_with("https://") || lower.starts_with("http://")
}
