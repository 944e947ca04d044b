//! The model client: OpenAI-compatible Chat Completions (`POST {base_url}/chat/completions`,
//! function tools), which OpenAI, DeepSeek, Qwen, Ollama, vLLM and llama.cpp servers all
//! speak. Turns stream (`stream: true`, see [`stream`]); an endpoint that answers with plain
//! JSON still works.
//!
//! History → wire: the system prompt is the first message of every request and the only
//! `system` message (many servers reject a `system` message later in the conversation). `isMeta`
//! messages go as `user` messages; they carry their own `<system-reminder>` wrapper (see
//! [`crate::announce`]) so the model can tell them from what the user typed. Adjacent `user`
//! messages are joined into one (blank line between), which keeps strictly alternating chat
//! templates happy and never changes a message that was already sent (a request always ends
//! with the newest user-side message, and the answer is appended before anything else). Tool
//! results go as `tool` messages (text only); images returned by tools follow in one `user`
//! message of `image_url` parts when the model has vision ([`crate::ModelSettings::vision`]).

use std::sync::OnceLock;
use std::time::Duration;

use serde_json::{Map, Value, json};

use crate::error::AgentError;
use crate::message::{Message, Role, ToolCall};

mod stream;

/// A model endpoint, resolved from the options and the environment.
#[derive(Debug)]
pub(crate) struct ModelClient {
    pub endpoint: String,
    pub model: String,
    pub vision: bool,
    api_key: Option<String>,
    timeout: Duration,
    /// Built at the first request, so creating an agent does no TLS or network setup.
    http: OnceLock<reqwest::Client>,
}

/// What the model answered.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Reply {
    pub content: String,
    pub tool_calls: Vec<ToolCall>,
}

impl ModelClient {
    pub(crate) fn new(
        base_url: &str,
        api_key: Option<String>,
        model: String,
        vision: bool,
        timeout: Duration,
    ) -> ModelClient {
        ModelClient {
            endpoint: format!("{}/chat/completions", base_url.trim_end_matches('/')),
            model,
            vision,
            api_key,
            timeout,
            http: OnceLock::new(),
        }
    }

    fn http(&self) -> Result<&reqwest::Client, AgentError> {
        if let Some(http) = self.http.get() {
            return Ok(http);
        }
        let http = reqwest::Client::builder()
            .timeout(self.timeout)
            .build()
            .map_err(|e| AgentError::ModelRequest {
                url: self.endpoint.clone(),
                reason: e.to_string(),
            })?;
        Ok(self.http.get_or_init(|| http))
    }

    /// The request body for this history and these tool declarations.
    pub(crate) fn body(
        &self,
        system_prompt: &str,
        history: &[Message],
        tools: Vec<Value>,
    ) -> Value {
        let mut body = json!({
            "model": self.model,
            "messages": wire_messages(system_prompt, history, self.vision),
        });
        if !tools.is_empty() {
            body["tools"] = Value::Array(tools);
        }
        body
    }
}

/// The `messages` array: system prompt first, then the history as described in the module docs.
pub(crate) fn wire_messages(system_prompt: &str, history: &[Message], vision: bool) -> Vec<Value> {
    let mut wire = vec![json!({ "role": "system", "content": system_prompt })];
    let mut images: Vec<Value> = Vec::new();
    for message in history {
        if message.role != Role::Tool && !images.is_empty() {
            push_user(&mut wire, Value::Array(std::mem::take(&mut images)));
        }
        match message.role {
            Role::User => push_user(&mut wire, user_content(message, vision)),
            Role::Assistant => wire.push(assistant(message)),
            Role::Tool => {
                wire.push(json!({
                    "role": "tool",
                    "tool_call_id": message.tool_call_id.clone().unwrap_or_default(),
                    "content": message.content,
                }));
                if vision && !message.images.is_empty() {
                    images.push(json!({
                        "type": "text",
                        "text": format!(
                            "Images returned by {}:",
                            message.tool_name.as_deref().unwrap_or("a tool")
                        ),
                    }));
                    images.extend(message.images.iter().map(|image| {
                        json!({
                            "type": "image_url",
                            "image_url": { "url": format!("data:{};base64,{}", image.mime_type, image.data) },
                        })
                    }));
                }
            }
        }
    }
    if !images.is_empty() {
        push_user(&mut wire, Value::Array(images));
    }
    wire
}

fn assistant(message: &Message) -> Value {
    let mut out = json!({ "role": "assistant", "content": message.content });
    if message.tool_calls.is_empty() {
        return out;
    }
    if message.content.is_empty() {
        out["content"] = Value::Null;
    }
    out["tool_calls"] = message
        .tool_calls
        .iter()
        .map(|call| {
            json!({
                "id": call.id,
                "type": "function",
                "function": { "name": call.name, "arguments": call.arguments },
            })
        })
        .collect();
    out
}

/// A user message's content: its text, and with vision its images as `image_url` parts (a
/// prompt's or an attached resource's images, PRM-2, PRM-3).
fn user_content(message: &Message, vision: bool) -> Value {
    if !vision || message.images.is_empty() {
        return Value::String(message.content.clone());
    }
    let text = json!({ "type": "text", "text": message.content });
    let images = message.images.iter().map(|image| {
        json!({
            "type": "image_url",
            "image_url": { "url": format!("data:{};base64,{}", image.mime_type, image.data) },
        })
    });
    Value::Array(std::iter::once(text).chain(images).collect())
}

/// Appends a user message, joining it to a user message right before it.
fn push_user(wire: &mut Vec<Value>, content: Value) {
    let Some(last) = wire.last_mut().filter(|m| m["role"] == "user") else {
        wire.push(json!({ "role": "user", "content": content }));
        return;
    };
    let joined = match (last["content"].take(), content) {
        (Value::String(a), Value::String(b)) => Value::String(format!("{a}\n\n{b}")),
        (a, b) => Value::Array(parts(a).into_iter().chain(parts(b)).collect()),
    };
    last["content"] = joined;
}

fn parts(content: Value) -> Vec<Value> {
    match content {
        Value::Array(parts) => parts,
        Value::String(text) => vec![json!({ "type": "text", "text": text })],
        _ => Vec::new(),
    }
}

/// Reads `choices[0].message` of a Chat Completions response.
pub(crate) fn parse_reply(value: &Value) -> Result<Reply, AgentError> {
    let Some(message) = value.pointer("/choices/0/message") else {
        let error = value.get("error").map(Value::to_string);
        return Err(AgentError::ModelReply(
            error.unwrap_or_else(|| "no choices[0].message in the response".into()),
        ));
    };
    let content = match message.get("content") {
        Some(Value::String(text)) => text.clone(),
        Some(Value::Array(parts)) => parts
            .iter()
            .filter_map(|p| p.get("text").and_then(Value::as_str))
            .collect::<Vec<_>>()
            .join(""),
        _ => String::new(),
    };
    let calls = message
        .get("tool_calls")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    let tool_calls = calls
        .iter()
        .enumerate()
        .map(|(index, call)| {
            let function = call.get("function").cloned().unwrap_or_default();
            let name = function.get("name").and_then(Value::as_str).unwrap_or("");
            let arguments = match function.get("arguments") {
                Some(Value::String(text)) => text.clone(),
                Some(Value::Null) | None => "{}".into(),
                // Some servers (older Ollama) send the arguments as an object.
                Some(other) => other.to_string(),
            };
            let id = call
                .get("id")
                .and_then(Value::as_str)
                .filter(|id| !id.is_empty())
                .map(str::to_string)
                .unwrap_or_else(|| format!("call_{index}"));
            ToolCall {
                id,
                name: name.to_string(),
                arguments,
            }
        })
        .collect();
    Ok(Reply {
        content,
        tool_calls,
    })
}

/// A tool call's arguments as an object; empty text is `{}`.
pub(crate) fn arguments_object(text: &str) -> Result<Map<String, Value>, String> {
    if text.trim().is_empty() {
        return Ok(Map::new());
    }
    match serde_json::from_str(text) {
        Ok(Value::Object(map)) => Ok(map),
        Ok(_) => Err("the arguments are not a JSON object".into()),
        Err(e) => Err(format!("the arguments are not valid JSON: {e}")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::message::Image;

    #[test]
    fn adjacent_user_messages_join_and_images_follow_tool_results() {
        let call = ToolCall {
            id: "c1".into(),
            name: "mcp__a__mixed".into(),
            arguments: "{}".into(),
        };
        let mut tool = Message::tool(
            &call,
            &crate::ToolOutcome {
                text: "[Image: image/png]".into(),
                images: vec![Image {
                    mime_type: "image/png".into(),
                    data: "AAAA".into(),
                }],
                is_error: false,
                app: None,
            },
        );
        tool.images[0].data = "AAAA".into();
        let history = vec![
            Message::user("hi"),
            Message::meta("note"),
            Message::assistant("", vec![call]),
            tool,
            Message::meta("later"),
        ];
        let wire = wire_messages("sys", &history, true);
        assert_eq!(
            Value::Array(wire),
            json!([
                {"role": "system", "content": "sys"},
                {"role": "user", "content": "hi\n\nnote"},
                {"role": "assistant", "content": null, "tool_calls": [
                    {"id": "c1", "type": "function", "function": {"name": "mcp__a__mixed", "arguments": "{}"}}
                ]},
                {"role": "tool", "tool_call_id": "c1", "content": "[Image: image/png]"},
                {"role": "user", "content": [
                    {"type": "text", "text": "Images returned by mcp__a__mixed:"},
                    {"type": "image_url", "image_url": {"url": "data:image/png;base64,AAAA"}},
                    {"type": "text", "text": "later"}
                ]}
            ])
        );
        let text_only = wire_messages("sys", &history, false);
        assert_eq!(text_only.last().unwrap()["content"], "later");
    }

    #[test]
    fn replies_with_tool_calls_parse() {
        let reply = parse_reply(&json!({"choices": [{"message": {
            "content": null,
            "tool_calls": [
                {"id": "x", "type": "function", "function": {"name": "f", "arguments": "{\"a\":1}"}},
                {"function": {"name": "g", "arguments": {"b": 2}}}
            ]
        }}]}))
        .unwrap();
        assert_eq!(reply.content, "");
        assert_eq!(reply.tool_calls[0].arguments, "{\"a\":1}");
        assert_eq!(reply.tool_calls[1].id, "call_1");
        assert_eq!(reply.tool_calls[1].arguments, "{\"b\":2}");
        assert!(parse_reply(&json!({"error": {"message": "bad"}})).is_err());
    }
}
