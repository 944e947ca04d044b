//! Streaming Chat Completions (LONG-1): the request asks for `stream: true`; a
//! `text/event-stream` answer is read chunk by chunk (`data: {...}` lines, `data: [DONE]`),
//! text deltas go to the caller as they arrive and tool-call deltas are assembled by `index`
//! (id and name from the first delta, arguments concatenated). An endpoint that answers with
//! plain JSON instead (no streaming support) is read as before. A cancel aborts the request and
//! keeps the text received so far (LONG-3).

use serde_json::Value;

use super::{ModelClient, Reply, parse_reply};
use crate::error::AgentError;
use crate::live::CancellationToken;
use crate::message::ToolCall;

/// How far past the calls seen so far a chunk's tool-call `index` may point: a model names
/// its calls 0, 1, 2, ..., and an index far beyond them is a broken stream, not a reason to
/// allocate.
const MAX_INDEX_GAP: usize = 64;

/// How often a request lost before any answer is sent again. An endpoint closes idle
/// keep-alive connections on its own clock (Node's default is 5 s), so a request can go out on
/// a connection the endpoint is closing that very moment; the official OpenAI SDKs send such a
/// request again too (twice by default).
const SEND_RETRIES: u32 = 2;

/// A streamed answer, complete or cut short by a cancel.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Streamed {
    pub reply: Reply,
    /// The request was aborted: `reply` has the text received until then and no tool calls.
    pub cancelled: bool,
}

impl ModelClient {
    /// Sends one streaming request; `on_delta` gets each piece of the answer's text.
    pub(crate) async fn stream(
        &self,
        mut body: Value,
        mut on_delta: impl FnMut(&str),
        cancel: &CancellationToken,
    ) -> Result<Streamed, AgentError> {
        body["stream"] = Value::Bool(true);
        let http = self.http()?;
        let send = || {
            let mut request = http.post(&self.endpoint).json(&body);
            if let Some(key) = &self.api_key {
                request = request.bearer_auth(key);
            }
            request.send()
        };
        let failed = |e: reqwest::Error| AgentError::ModelRequest {
            url: self.endpoint.clone(),
            reason: e.to_string(),
        };
        let mut assembly = Assembly::default();
        let cut = |assembly: Assembly| Streamed {
            reply: Reply {
                content: assembly.content,
                tool_calls: Vec::new(),
            },
            cancelled: true,
        };
        let mut retries = 0;
        let mut response = loop {
            let sent = tokio::select! {
                sent = send() => sent,
                () = cancel.cancelled() => return Ok(cut(assembly)),
            };
            match sent {
                Ok(response) => break response,
                Err(e) if retries < SEND_RETRIES && lost_before_an_answer(&e) => {
                    retries += 1;
                    tracing::info!(url = %self.endpoint, "model request lost before an answer ({e}); sending it again");
                }
                Err(e) => return Err(failed(e)),
            }
        };
        let status = response.status();
        let event_stream = response
            .headers()
            .get(reqwest::header::CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .is_some_and(|v| v.starts_with("text/event-stream"));
        if !status.is_success() || !event_stream {
            let text = tokio::select! {
                text = response.text() => text.map_err(failed)?,
                () = cancel.cancelled() => return Ok(cut(assembly)),
            };
            if !status.is_success() {
                return Err(AgentError::ModelStatus {
                    status: status.as_u16(),
                    body: text.chars().take(2000).collect(),
                });
            }
            let value: Value = serde_json::from_str(&text)
                .map_err(|e| AgentError::ModelReply(format!("not JSON ({e})")))?;
            let reply = parse_reply(&value)?;
            if !reply.content.is_empty() {
                on_delta(&reply.content);
            }
            return Ok(Streamed {
                reply,
                cancelled: false,
            });
        }
        let mut pending: Vec<u8> = Vec::new();
        loop {
            let chunk = tokio::select! {
                chunk = response.chunk() => chunk.map_err(failed)?,
                () = cancel.cancelled() => return Ok(cut(assembly)),
            };
            let Some(chunk) = chunk else {
                break;
            };
            pending.extend_from_slice(&chunk);
            while let Some(end) = pending.iter().position(|&b| b == b'\n') {
                let line: Vec<u8> = pending.drain(..=end).collect();
                let line = String::from_utf8_lossy(&line);
                if assembly.line(line.trim_end_matches(['\r', '\n']), &mut on_delta)? {
                    return Ok(assembly.finish());
                }
            }
        }
        let rest = String::from_utf8_lossy(&pending).into_owned();
        assembly.line(rest.trim(), &mut on_delta)?;
        Ok(assembly.finish())
    }
}

/// The request never got an answer because its connection failed or closed under it: nothing
/// of the answer was read, so sending it again cannot repeat a turn. A timeout is not retried
/// (the endpoint is slow, not gone).
fn lost_before_an_answer(e: &reqwest::Error) -> bool {
    !e.is_timeout() && (e.is_connect() || e.is_request())
}

/// The answer being put together from its chunks.
#[derive(Debug, Default)]
struct Assembly {
    content: String,
    /// By the delta's `index`: (id, name, arguments).
    calls: Vec<(String, String, String)>,
}

impl Assembly {
    /// Takes one line of the event stream; `true` at `data: [DONE]`.
    fn line(&mut self, line: &str, on_delta: &mut impl FnMut(&str)) -> Result<bool, AgentError> {
        let Some(data) = line.strip_prefix("data:") else {
            // Blank lines end events; `event:`, `id:` and `:` comments carry nothing here.
            return Ok(false);
        };
        let data = data.trim_start();
        if data == "[DONE]" {
            return Ok(true);
        }
        let chunk: Value = serde_json::from_str(data)
            .map_err(|e| AgentError::ModelReply(format!("a stream chunk is not JSON ({e})")))?;
        if let Some(error) = chunk.get("error") {
            return Err(AgentError::ModelReply(error.to_string()));
        }
        let Some(delta) = chunk.pointer("/choices/0/delta") else {
            return Ok(false);
        };
        if let Some(text) = delta.get("content").and_then(Value::as_str)
            && !text.is_empty()
        {
            self.content.push_str(text);
            on_delta(text);
        }
        let calls = delta.get("tool_calls").and_then(Value::as_array);
        for (position, call) in calls.into_iter().flatten().enumerate() {
            let index = call
                .get("index")
                .and_then(Value::as_u64)
                .map_or(position, |i| i as usize);
            if index >= self.calls.len() + MAX_INDEX_GAP {
                return Err(AgentError::ModelReply(format!(
                    "a stream chunk names tool call {index} after {} calls",
                    self.calls.len()
                )));
            }
            if self.calls.len() <= index {
                self.calls.resize(index + 1, Default::default());
            }
            let slot = &mut self.calls[index];
            if let Some(id) = call.get("id").and_then(Value::as_str) {
                slot.0 = id.to_string();
            }
            let function = call.get("function");
            if let Some(name) = function.and_then(|f| f.get("name")).and_then(Value::as_str) {
                slot.1.push_str(name);
            }
            match function.and_then(|f| f.get("arguments")) {
                Some(Value::String(part)) => slot.2.push_str(part),
                // Some servers send the arguments as an object, whole.
                Some(Value::Object(object)) => slot.2 = Value::Object(object.clone()).to_string(),
                _ => {}
            }
        }
        Ok(false)
    }

    fn finish(self) -> Streamed {
        let tool_calls = self
            .calls
            .into_iter()
            .enumerate()
            .filter(|(_, (_, name, _))| !name.is_empty())
            .map(|(index, (id, name, arguments))| ToolCall {
                id: match id.is_empty() {
                    true => format!("call_{index}"),
                    false => id,
                },
                name,
                arguments: match arguments.trim().is_empty() {
                    true => "{}".into(),
                    false => arguments,
                },
            })
            .collect();
        Streamed {
            reply: Reply {
                content: self.content,
                tool_calls,
            },
            cancelled: false,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    // LONG-1: a tool-call index far past the calls seen is a broken stream, refused before
    // anything is allocated for it.
    #[test]
    fn long_1_a_tool_call_index_far_out_of_range_is_an_error() {
        let mut assembly = Assembly::default();
        let line = r#"data: {"choices":[{"delta":{"tool_calls":[{"index":4000000000,"function":{"name":"x"}}]}}]}"#;
        let error = assembly.line(line, &mut |_| {}).unwrap_err();
        assert!(
            error.to_string().contains("tool call 4000000000"),
            "{error}"
        );
        assert!(assembly.calls.is_empty());
    }

    // LONG-1: tool-call deltas are assembled by index; text deltas reach the caller in order.
    #[test]
    fn long_1_tool_call_deltas_are_assembled() {
        let mut assembly = Assembly::default();
        let mut seen = Vec::new();
        let lines = [
            r#"data: {"choices":[{"delta":{"role":"assistant","content":"Hel"}}]}"#,
            "",
            r#"data: {"choices":[{"delta":{"content":"lo"}}]}"#,
            r#"data: {"choices":[{"delta":{"tool_calls":[{"index":0,"id":"c0","type":"function","function":{"name":"mcp__a__echo","arguments":"{\"te"}}]}}]}"#,
            r#"data: {"choices":[{"delta":{"tool_calls":[{"index":1,"id":"c1","function":{"name":"g","arguments":""}}]}}]}"#,
            r#"data: {"choices":[{"delta":{"tool_calls":[{"index":0,"function":{"arguments":"xt\":1}"}}]}}]}"#,
            ": keep-alive",
        ];
        for line in lines {
            assert!(
                !assembly
                    .line(line, &mut |t| seen.push(t.to_string()))
                    .unwrap()
            );
        }
        assert!(assembly.line("data: [DONE]", &mut |_| {}).unwrap());
        let streamed = assembly.finish();
        assert_eq!(seen, ["Hel", "lo"]);
        assert_eq!(streamed.reply.content, "Hello");
        assert_eq!(
            streamed.reply.tool_calls,
            vec![
                ToolCall {
                    id: "c0".into(),
                    name: "mcp__a__echo".into(),
                    arguments: "{\"text\":1}".into()
                },
                ToolCall {
                    id: "c1".into(),
                    name: "g".into(),
                    arguments: "{}".into()
                },
            ]
        );
        let mut bad = Assembly::default();
        assert!(
            bad.line(r#"data: {"error":{"message":"x"}}"#, &mut |_| {})
                .is_err()
        );
    }
}
