//! Conversation history entries: what the transcript stores, one JSON object per line.

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

/// Who a history message comes from. The system prompt is not part of the history: it is built
/// for every turn and sent as the first message of every request.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    User,
    Assistant,
    Tool,
}

impl Role {
    pub fn as_str(self) -> &'static str {
        match self {
            Role::User => "user",
            Role::Assistant => "assistant",
            Role::Tool => "tool",
        }
    }
}

/// A tool call the model made.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolCall {
    /// The id the model gave the call; the tool message answering it carries the same id.
    pub id: String,
    pub name: String,
    /// The arguments as the model wrote them (a JSON text).
    pub arguments: String,
}

/// An image returned by a tool, kept with its MIME type (TOOL-8).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Image {
    pub mime_type: String,
    /// Base64, as the MCP server sent it.
    pub data: String,
}

/// The full result of a call of a tool that has an app (MCP Apps), kept so a reopened chat
/// shows the app again without calling the tool (APPS-5). Never sent to the model.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AppResult {
    pub server: String,
    /// The server's own name for the tool.
    pub tool: String,
    /// The app's `ui://` resource.
    pub resource_uri: String,
    /// The MCP `CallToolResult` as the server sent it.
    pub result: serde_json::Value,
}

/// One message of the conversation history (one line of the JSONL transcript).
///
/// `is_meta` messages are written by the agent runtime, not typed by the user: they are hidden
/// from the UI but sent to the model. They have role `user` (see [`crate`] docs for why).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Message {
    pub role: Role,
    pub content: String,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tool_calls: Vec<ToolCall>,
    /// For role `tool`: the call this message answers.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_call_id: Option<String>,
    /// For role `tool`: the tool's full name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_name: Option<String>,
    /// For role `tool`: the call failed or was refused.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub is_error: bool,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub images: Vec<Image>,
    #[serde(default)]
    pub is_meta: bool,
    /// For role `tool`, when the tool has an app: its full result (APPS-5).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub app: Option<Box<AppResult>>,
    pub timestamp: DateTime<Utc>,
}

impl Message {
    fn new(role: Role, content: String) -> Message {
        Message {
            role,
            content,
            tool_calls: Vec::new(),
            tool_call_id: None,
            tool_name: None,
            is_error: false,
            images: Vec::new(),
            is_meta: false,
            app: None,
            timestamp: Utc::now(),
        }
    }

    /// A message the user typed.
    pub fn user(content: impl Into<String>) -> Message {
        Message::new(Role::User, content.into())
    }

    /// A message of the agent runtime: role `user`, hidden from the UI, sent to the model.
    pub fn meta(content: impl Into<String>) -> Message {
        Message {
            is_meta: true,
            ..Message::new(Role::User, content.into())
        }
    }

    /// A model answer, possibly with tool calls.
    pub fn assistant(content: impl Into<String>, tool_calls: Vec<ToolCall>) -> Message {
        Message {
            tool_calls,
            ..Message::new(Role::Assistant, content.into())
        }
    }

    /// The result of one tool call. Every tool message passes here, results, errors and Exec
    /// output alike: hidden characters a server put in them never reach the model (TRUST-7).
    pub fn tool(call: &ToolCall, outcome: &crate::ToolOutcome) -> Message {
        let (text, _) = wave_mcp_manager::inert::strip_hidden(&outcome.text);
        Message {
            tool_call_id: Some(call.id.clone()),
            tool_name: Some(call.name.clone()),
            is_error: outcome.is_error,
            images: outcome.images.clone(),
            app: outcome.app.clone().map(Box::new),
            ..Message::new(Role::Tool, text.into_owned())
        }
    }
}
