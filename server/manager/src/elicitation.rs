//! Servers that ask the user mid-call (MCP elicitation: form mode 2025-06-18, URL mode
//! 2025-11-25; LONG-5 … LONG-7). The manager knows no UI: whoever hosts it (the sidecar per
//! session, the CLI on a terminal) gives it an [`Elicitor`], and every connection dialed after
//! that declares the `elicitation` client capability (`form`, and `url` when the elicitor can
//! open URLs) and hands the server's `elicitation/create` requests to it, one at a time per
//! manager (the others wait in order). Without an elicitor nothing is declared and a request is
//! declined. A request rmcp cannot read as an elicitation (a `requestedSchema` that is not an
//! object of primitive properties) is answered with a JSON-RPC error, and the call goes on
//! (LONG-7).

use std::sync::{Arc, Mutex};

use futures::future::BoxFuture;
use rmcp::ErrorData as McpError;
use rmcp::model::{
    CustomNotification, CustomRequest, CustomResult, ElicitRequestParams, ElicitResult,
    ElicitationAction as WireAction, ElicitationCapability, FormElicitationCapability,
    UrlElicitationCapability,
};
use serde_json::{Map, Value};

use crate::login::Browser;

/// The method of a server's elicitation request.
pub const ELICITATION_CREATE: &str = "elicitation/create";
/// The notification a server sends when a URL-mode elicitation finished out of band.
pub const ELICITATION_COMPLETE: &str = "notifications/elicitation/complete";

/// The JSON-RPC error code of `URLElicitationRequiredError` (MCP 2025-11-25): the request can be
/// retried once the user has finished the URL-mode elicitations the error's data lists.
pub const URL_ELICITATION_REQUIRED: i32 = -32042;

/// What a server asks.
#[derive(Debug, Clone, PartialEq)]
pub enum ElicitationKind {
    /// Fill a form: `requested_schema` is an object schema of primitive properties (rmcp checked
    /// it), as the server wrote it (property order kept).
    Form { requested_schema: Value },
    /// Open `url` (after the user agreed); `elicitation_id` names it in the completion
    /// notification (empty when the server gave none).
    Url { url: String, elicitation_id: String },
}

/// One `elicitation/create` of a server.
#[derive(Debug, Clone)]
pub struct Elicitation {
    /// The server's name as configured.
    pub server: String,
    pub message: String,
    pub kind: ElicitationKind,
    /// Opens an accepted URL when the host cannot (LONG-6).
    pub browser: Browser,
}

/// The user's decision.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ElicitationAction {
    Accept,
    Decline,
    Cancel,
}

/// The answer to an [`Elicitation`].
#[derive(Debug, Clone, PartialEq)]
pub struct ElicitationAnswer {
    pub action: ElicitationAction,
    /// For an accepted form: the values by property name.
    pub content: Option<Map<String, Value>>,
}

impl ElicitationAnswer {
    pub fn decline() -> ElicitationAnswer {
        ElicitationAnswer {
            action: ElicitationAction::Decline,
            content: None,
        }
    }

    pub fn cancel() -> ElicitationAnswer {
        ElicitationAnswer {
            action: ElicitationAction::Cancel,
            content: None,
        }
    }

    pub fn accept(content: Option<Map<String, Value>>) -> ElicitationAnswer {
        ElicitationAnswer {
            action: ElicitationAction::Accept,
            content,
        }
    }
}

/// Asks the user. Implemented by the host of a manager (the sidecar for a session, the CLI on a
/// terminal); set with [`crate::McpManager::set_elicitor`].
pub trait Elicitor: Send + Sync {
    /// Whether URL mode is declared: the host can open a URL for the user.
    fn url_mode(&self) -> bool;

    /// Asks and resolves with the answer. Never called for two requests of one manager at once.
    /// A URL-mode answer `accept` means the user agreed and the URL was opened.
    fn elicit(&self, request: Elicitation) -> BoxFuture<'static, ElicitationAnswer>;

    /// `notifications/elicitation/complete` of `server` for `elicitation_id`: a URL-mode
    /// elicitation finished out of band (the waiting state may close). Awaited before the
    /// server's next message is handled, so what it tells the host stays in order.
    fn completed(&self, server: &str, elicitation_id: &str) -> BoxFuture<'static, ()> {
        let _ = (server, elicitation_id);
        Box::pin(async {})
    }
}

/// A manager's elicitor and its queue (one request at a time).
#[derive(Default)]
pub(crate) struct Elicitations {
    elicitor: Mutex<Option<Arc<dyn Elicitor>>>,
    one_at_a_time: Arc<tokio::sync::Mutex<()>>,
}

impl Elicitations {
    pub fn set(&self, elicitor: Arc<dyn Elicitor>) {
        *self.elicitor.lock().unwrap_or_else(|e| e.into_inner()) = Some(elicitor);
    }

    /// What a connection of `server` uses; `None` without an elicitor (nothing declared).
    pub fn hook(&self, server: &str, browser: Browser) -> Option<ElicitationHook> {
        let elicitor = self
            .elicitor
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone()?;
        Some(ElicitationHook {
            server: server.to_string(),
            elicitor,
            browser,
            one_at_a_time: self.one_at_a_time.clone(),
        })
    }
}

/// One connection's way to the elicitor.
#[derive(Clone)]
pub(crate) struct ElicitationHook {
    server: String,
    elicitor: Arc<dyn Elicitor>,
    browser: Browser,
    one_at_a_time: Arc<tokio::sync::Mutex<()>>,
}

impl ElicitationHook {
    /// `elicitation: { form: {}, url: {} }`, `url` only when the elicitor can open URLs.
    pub fn capability(&self) -> ElicitationCapability {
        let capability = ElicitationCapability::new().with_form(FormElicitationCapability::new());
        match self.elicitor.url_mode() {
            true => capability.with_url(UrlElicitationCapability::new()),
            false => capability,
        }
    }

    /// Answers a well-formed `elicitation/create`, after the ones before it.
    pub async fn create(&self, params: ElicitRequestParams) -> Result<ElicitResult, McpError> {
        let (message, kind) = match params {
            ElicitRequestParams::FormElicitationParams {
                message,
                requested_schema,
                ..
            } => {
                let requested_schema = serde_json::to_value(requested_schema)
                    .map_err(|e| McpError::internal_error(e.to_string(), None))?;
                (message, ElicitationKind::Form { requested_schema })
            }
            ElicitRequestParams::UrlElicitationParams {
                message,
                url,
                elicitation_id,
                ..
            } => {
                if !self.elicitor.url_mode() {
                    // Not declared: the spec's answer to an unsupported mode is an error.
                    return Err(McpError::invalid_params(
                        "this client does not support URL-mode elicitation",
                        None,
                    ));
                }
                (
                    message,
                    ElicitationKind::Url {
                        url,
                        elicitation_id,
                    },
                )
            }
            _ => return Ok(ElicitResult::new(WireAction::Decline)),
        };
        let request = Elicitation {
            server: self.server.clone(),
            message,
            kind,
            browser: self.browser.clone(),
        };
        let _turn = self.one_at_a_time.lock().await;
        tracing::info!(server = %self.server, "the server asks the user (elicitation)");
        let answer = self.elicitor.elicit(request).await;
        Ok(wire_result(answer))
    }

    /// A request rmcp could not read as one it knows. An `elicitation/create` that landed here
    /// is malformed (LONG-7): the server gets an InvalidParams error naming the problem.
    pub fn custom_request(
        &self,
        request: &CustomRequest,
    ) -> Option<Result<CustomResult, McpError>> {
        if request.method != ELICITATION_CREATE {
            return None;
        }
        let problem = malformed_reason(request.params.as_ref());
        tracing::warn!(server = %self.server, "malformed elicitation/create: {problem}");
        Some(Err(McpError::invalid_params(
            format!("invalid elicitation/create: {problem}"),
            None,
        )))
    }

    /// `notifications/elicitation/complete`.
    pub async fn custom_notification(&self, notification: &CustomNotification) {
        if notification.method != ELICITATION_COMPLETE {
            return;
        }
        let id = notification
            .params
            .as_ref()
            .and_then(|p| p.get("elicitationId"))
            .and_then(Value::as_str)
            .unwrap_or_default();
        self.elicitor.completed(&self.server, id).await;
    }
}

/// Puts the pages a `URLElicitationRequiredError` lists (`data.elicitations`, URL mode) to the
/// user one after another, as if the server had sent each as `elicitation/create`: the same
/// dialog, opened only when accepted (LONG-6). Returns what became of them, the reason the call
/// failed, for the model (which may call again; the URLs themselves stay out of its context).
pub(crate) async fn ask_required_pages(hook: Option<&ElicitationHook>, error: &McpError) -> String {
    let pages: Vec<ElicitRequestParams> = error
        .data
        .as_ref()
        .and_then(|data| data.get("elicitations"))
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(|page| serde_json::from_value(page.clone()).ok())
        .filter(|page| matches!(page, ElicitRequestParams::UrlElicitationParams { .. }))
        .collect();
    let messages: Vec<&str> = pages
        .iter()
        .filter_map(|page| match page {
            ElicitRequestParams::UrlElicitationParams { message, .. } => Some(message.as_str()),
            _ => None,
        })
        .collect();
    let needs = match messages.is_empty() {
        true => format!(
            "the server needs the user to finish a step in a browser first ({})",
            error.message
        ),
        false => format!(
            "the server needs the user to finish a step in a browser first: {}",
            messages.join("; ")
        ),
    };
    if pages.is_empty() {
        return format!("{needs}; it named no page to open");
    }
    let Some(hook) = hook.filter(|hook| hook.elicitor.url_mode()) else {
        return format!("{needs}; this client cannot open pages for the user");
    };
    let asked = pages.len();
    let mut opened = 0;
    for page in pages {
        if let Ok(answer) = hook.create(page).await
            && answer.action == WireAction::Accept
        {
            opened += 1;
        }
    }
    match opened {
        0 => format!("{needs}; the user declined to open it"),
        n if n == asked => format!(
            "{needs}; the user agreed and it was opened: call the tool again once the user has finished there"
        ),
        n => format!("{needs}; the user opened {n} of the {asked} pages and declined the others"),
    }
}

/// Checks an accepted form's `content` against its `requested_schema`: every required property
/// present, each value of its property's type, within its bounds, one of its enum values; no
/// property the schema does not have. The error names the property.
pub fn check_content(schema: &Value, content: &Map<String, Value>) -> Result<(), String> {
    let properties = schema
        .get("properties")
        .and_then(Value::as_object)
        .cloned()
        .unwrap_or_default();
    let required = schema
        .get("required")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    for name in required.iter().filter_map(Value::as_str) {
        if !content.contains_key(name) {
            return Err(format!("`{name}` is required"));
        }
    }
    for (name, value) in content {
        let Some(property) = properties.get(name) else {
            return Err(format!("`{name}` is not in the schema"));
        };
        check_property(property, value).map_err(|problem| format!("`{name}`: {problem}"))?;
    }
    Ok(())
}

/// The allowed values of an enum property (`enum`, or the `const`s of `oneOf`/`anyOf`).
pub fn enum_values(property: &Value) -> Option<Vec<Value>> {
    if let Some(values) = property.get("enum").and_then(Value::as_array) {
        return Some(values.clone());
    }
    let options = property
        .get("oneOf")
        .or_else(|| property.get("anyOf"))
        .and_then(Value::as_array)?;
    Some(
        options
            .iter()
            .filter_map(|o| o.get("const").cloned())
            .collect(),
    )
}

pub fn check_property(property: &Value, value: &Value) -> Result<(), String> {
    let number = |key: &str| property.get(key).and_then(Value::as_f64);
    let count = |key: &str| property.get(key).and_then(Value::as_u64);
    match property
        .get("type")
        .and_then(Value::as_str)
        .unwrap_or_default()
    {
        "string" => {
            let Some(text) = value.as_str() else {
                return Err("must be a string".into());
            };
            if let Some(values) = enum_values(property)
                && !values.contains(value)
            {
                return Err("is not one of the choices".into());
            }
            let length = text.chars().count() as u64;
            if count("minLength").is_some_and(|min| length < min) {
                return Err(format!(
                    "must be at least {} characters",
                    count("minLength").unwrap_or(0)
                ));
            }
            if count("maxLength").is_some_and(|max| length > max) {
                return Err(format!(
                    "must be at most {} characters",
                    count("maxLength").unwrap_or(0)
                ));
            }
            check_format(property.get("format").and_then(Value::as_str), text)
        }
        kind @ ("number" | "integer") => {
            let Some(n) = value.as_f64() else {
                return Err(format!("must be a {kind}"));
            };
            if kind == "integer" && n.fract() != 0.0 {
                return Err("must be an integer".into());
            }
            if number("minimum").is_some_and(|min| n < min) {
                return Err(format!("must be at least {}", property["minimum"]));
            }
            if number("maximum").is_some_and(|max| n > max) {
                return Err(format!("must be at most {}", property["maximum"]));
            }
            Ok(())
        }
        "boolean" => match value.is_boolean() {
            true => Ok(()),
            false => Err("must be true or false".into()),
        },
        "array" => {
            let Some(items) = value.as_array() else {
                return Err("must be a list".into());
            };
            let allowed = property
                .get("items")
                .and_then(enum_values)
                .unwrap_or_default();
            if let Some(item) = items.iter().find(|item| !allowed.contains(item)) {
                return Err(format!("{item} is not one of the choices"));
            }
            let length = items.len() as u64;
            if count("minItems").is_some_and(|min| length < min) {
                return Err(format!("pick at least {}", count("minItems").unwrap_or(0)));
            }
            if count("maxItems").is_some_and(|max| length > max) {
                return Err(format!("pick at most {}", count("maxItems").unwrap_or(0)));
            }
            Ok(())
        }
        other => Err(format!("type \"{other}\" is not a primitive")),
    }
}

/// The string formats of the spec: email, uri, date, date-time (loosely, as a form would).
fn check_format(format: Option<&str>, text: &str) -> Result<(), String> {
    let ok = match format {
        Some("email") => {
            let (local, domain) = text.split_once('@').unwrap_or_default();
            !local.is_empty() && domain.contains('.') && !text.contains(char::is_whitespace)
        }
        Some("uri") => url::Url::parse(text).is_ok(),
        Some("date") => chrono::NaiveDate::parse_from_str(text, "%Y-%m-%d").is_ok(),
        Some("date-time") => chrono::DateTime::parse_from_rfc3339(text).is_ok(),
        _ => true,
    };
    match ok {
        true => Ok(()),
        false => Err(format!("must be a valid {}", format.unwrap_or_default())),
    }
}

/// The host of `url` as a user should see it before opening it (LONG-6); the text itself when
/// it is not a URL with a host.
pub fn url_host(url: &str) -> String {
    url::Url::parse(url)
        .ok()
        .and_then(|u| u.host_str().map(str::to_string))
        .unwrap_or_else(|| url.to_string())
}

fn wire_result(answer: ElicitationAnswer) -> ElicitResult {
    match answer.action {
        ElicitationAction::Accept => {
            let result = ElicitResult::new(WireAction::Accept);
            match answer.content {
                Some(content) => result.with_content(Value::Object(content)),
                None => result,
            }
        }
        ElicitationAction::Decline => ElicitResult::new(WireAction::Decline),
        ElicitationAction::Cancel => ElicitResult::new(WireAction::Cancel),
    }
}

/// Why `params` is not a valid elicitation, in one line.
pub(crate) fn malformed_reason(params: Option<&Value>) -> String {
    let Some(params) = params.and_then(Value::as_object) else {
        return "params must be an object".into();
    };
    if params.get("mode").and_then(Value::as_str) == Some("url") {
        return "a URL-mode elicitation needs a string `message` and `url`".into();
    }
    let Some(schema) = params.get("requestedSchema") else {
        return "`requestedSchema` is missing".into();
    };
    let Some(schema) = schema.as_object() else {
        return "`requestedSchema` must be an object schema".into();
    };
    if schema.get("type").and_then(Value::as_str) != Some("object") {
        return "`requestedSchema.type` must be \"object\"".into();
    }
    let Some(properties) = schema.get("properties").and_then(Value::as_object) else {
        return "`requestedSchema.properties` must be an object".into();
    };
    for (name, property) in properties {
        let kind = property.get("type").and_then(Value::as_str);
        match kind {
            Some("string" | "number" | "integer" | "boolean" | "array") => {}
            Some(other) => {
                return format!(
                    "`requestedSchema.properties.{name}` has type \"{other}\"; only string, \
                     number, integer, boolean and enum properties are allowed"
                );
            }
            None => {
                return format!("`requestedSchema.properties.{name}` has no primitive `type`");
            }
        }
    }
    "`requestedSchema` is not an object of primitive properties".into()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn long_7_names_the_property_that_is_not_primitive() {
        let params = json!({
            "message": "m",
            "requestedSchema": {"type": "object", "properties": {"address": {"type": "object"}}},
        });
        let reason = malformed_reason(Some(&params));
        assert!(reason.contains("properties.address"), "{reason}");
        assert!(reason.contains("\"object\""), "{reason}");
    }

    #[test]
    fn long_5_content_is_checked_against_the_schema() {
        let schema = json!({
            "type": "object",
            "properties": {
                "email": {"type": "string", "format": "email"},
                "age": {"type": "integer", "minimum": 0, "maximum": 150},
                "name": {"type": "string", "minLength": 2, "maxLength": 4},
                "role": {"type": "string", "oneOf": [{"const": "a", "title": "A"}]},
                "when": {"type": "string", "format": "date"},
                "tags": {"type": "array", "items": {"enum": ["x", "y"]}, "maxItems": 1},
                "ok": {"type": "boolean"},
            },
            "required": ["email"],
        });
        let check = |content: Value| check_content(&schema, content.as_object().unwrap());
        assert_eq!(
            check(json!({"email": "a@b.c", "age": 3, "ok": true})),
            Ok(())
        );
        assert!(
            check(json!({}))
                .unwrap_err()
                .contains("`email` is required")
        );
        assert!(
            check(json!({"email": "nope"}))
                .unwrap_err()
                .contains("valid email")
        );
        assert!(
            check(json!({"email": "a@b.c", "age": 1.5}))
                .unwrap_err()
                .contains("integer")
        );
        assert!(
            check(json!({"email": "a@b.c", "age": 200}))
                .unwrap_err()
                .contains("at most 150")
        );
        assert!(
            check(json!({"email": "a@b.c", "name": "x"}))
                .unwrap_err()
                .contains("at least 2")
        );
        assert!(
            check(json!({"email": "a@b.c", "role": "b"}))
                .unwrap_err()
                .contains("choices")
        );
        assert!(
            check(json!({"email": "a@b.c", "when": "2024-13-01"}))
                .unwrap_err()
                .contains("date")
        );
        assert!(
            check(json!({"email": "a@b.c", "tags": ["x", "y"]}))
                .unwrap_err()
                .contains("at most 1")
        );
        assert!(
            check(json!({"email": "a@b.c", "extra": 1}))
                .unwrap_err()
                .contains("not in the schema")
        );
    }

    #[test]
    fn long_7_a_schema_that_is_not_an_object() {
        let params = json!({"message": "m", "requestedSchema": {"type": "array"}});
        assert!(malformed_reason(Some(&params)).contains("requestedSchema.type"));
    }
}
