//! Multi-round-trip requests of MCP 2026-07-28 (SPEC-3): a `tools/call`, `prompts/get` or
//! `resources/read` answered with `input_required` puts its questions to the user through the
//! elicitation hook (the same forms and terminal questions as LONG-5 … LONG-7), and the caller
//! retries the request with the answers and the server's `requestState`. A question the user
//! declined or cancelled is not put to them again in the same call: asked again, the call ends
//! saying so. A server that keeps asking is cut off after [`MAX_ROUNDS`] rounds.

use std::collections::BTreeMap;

use rmcp::model::{ElicitationAction, InputRequest, InputRequiredResult, InputResponses};
use serde_json::Value;

use crate::elicitation::ElicitationHook;

/// The most `input_required` replies one request may get before it is given up.
pub(crate) const MAX_ROUNDS: usize = 8;

/// What the next attempt of the request carries.
pub(crate) struct Retry {
    pub input_responses: Option<InputResponses>,
    pub request_state: Option<String>,
}

/// The rounds of one request.
pub(crate) struct Rounds<'a> {
    hook: Option<&'a ElicitationHook>,
    rounds: usize,
    /// Questions the user did not accept, by key and by the question itself.
    refused: BTreeMap<String, (Value, &'static str)>,
}

impl<'a> Rounds<'a> {
    pub(crate) fn new(hook: Option<&'a ElicitationHook>) -> Rounds<'a> {
        Rounds {
            hook,
            rounds: 0,
            refused: BTreeMap::new(),
        }
    }

    /// Answers one `input_required` reply, or says in words why the request ends here.
    pub(crate) async fn answer(&mut self, result: InputRequiredResult) -> Result<Retry, String> {
        self.rounds += 1;
        if self.rounds > MAX_ROUNDS {
            return Err(format!(
                "the server kept asking for more input ({MAX_ROUNDS} rounds answered without a \
                 result), so the request was given up"
            ));
        }
        let requests = result.input_requests.unwrap_or_default();
        if requests.is_empty() && result.request_state.is_none() {
            return Err("the server asked for input but named no question".into());
        }
        let mut responses = InputResponses::new();
        for (key, request) in requests {
            let InputRequest::Elicitation(elicit) = request else {
                return Err(match request {
                    InputRequest::CreateMessage(_) => {
                        "the server asked for a model completion (sampling), which this client \
                         does not offer"
                    }
                    _ => {
                        "the server asked for the workspace roots, which this client does not offer"
                    }
                }
                .into());
            };
            let question = serde_json::to_value(&elicit.params).unwrap_or(Value::Null);
            let earlier = self
                .refused
                .get(&key)
                .or_else(|| self.refused.values().find(|(q, _)| *q == question));
            if let Some((_, said)) = earlier {
                return Err(format!(
                    "the user {said} the server's question ({}) and it asked again",
                    message(&question)
                ));
            }
            let answer = match self.hook {
                Some(hook) => hook.create(elicit.params).await.map_err(|e| {
                    format!("the server's question could not be asked: {}", e.message)
                })?,
                None => rmcp::model::ElicitResult::new(ElicitationAction::Decline),
            };
            match answer.action {
                ElicitationAction::Accept => {}
                ElicitationAction::Cancel => {
                    self.refused.insert(key.clone(), (question, "cancelled"));
                }
                _ => {
                    self.refused.insert(key.clone(), (question, "declined"));
                }
            }
            let answer = serde_json::to_value(&answer)
                .map_err(|e| format!("the answer could not be sent: {e}"))?;
            responses.insert(key, answer);
        }
        Ok(Retry {
            input_responses: (!responses.is_empty()).then_some(responses),
            request_state: result.request_state,
        })
    }
}

/// The message of an `elicitation/create` question, quoted.
fn message(question: &Value) -> String {
    match question.get("message").and_then(Value::as_str) {
        Some(text) => format!("\"{}\"", crate::inert::strip_hidden(text).0),
        None => "without a message".into(),
    }
}
