//! MCP Apps (the `io.modelcontextprotocol/ui` extension, ext-apps 2026-01-26, APPS-1): the
//! client capability a session declares when its host can show apps, each tool's `_meta.ui`
//! (its `ui://` resource and who may call it), and the UI resource read with `resources/read`
//! (only `text/html;profile=mcp-app`, text or base64 blob) with its `_meta.ui`.

use base64::Engine;
use rmcp::model::{ExtensionCapabilities, JsonObject};
use serde_json::{Map, Value};

use crate::error::Error;

/// The extension's identifier in `capabilities.extensions`.
pub const UI_EXTENSION_ID: &str = "io.modelcontextprotocol/ui";
/// The one MIME type of an app's HTML.
pub const APP_MIME_TYPE: &str = "text/html;profile=mcp-app";

/// Adds the extension, with the MIME types this client renders, to `extensions`.
pub(crate) fn declare(extensions: &mut ExtensionCapabilities) {
    let mut settings = JsonObject::new();
    settings.insert("mimeTypes".into(), Value::from(vec![APP_MIME_TYPE]));
    extensions.insert(UI_EXTENSION_ID.to_string(), settings);
}

/// A tool's `_meta.ui`: its app and who may call it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ToolUi {
    /// `_meta.ui.resourceUri`, or the deprecated flat `_meta["ui/resourceUri"]`: a `ui://` URI.
    pub resource_uri: Option<String>,
    /// `_meta.ui.visibility` as written (`"model"`, `"app"`); `None`: both.
    pub visibility: Option<Vec<String>>,
}

impl ToolUi {
    /// The tool's UI metadata, `None` when its `_meta` has none.
    pub fn from_meta(meta: Option<&JsonObject>) -> Option<ToolUi> {
        let meta = meta?;
        let nested = meta.get("ui").and_then(Value::as_object);
        let resource_uri = nested
            .and_then(|ui| ui.get("resourceUri"))
            .or_else(|| meta.get("ui/resourceUri"))
            .and_then(Value::as_str)
            .filter(|uri| uri.starts_with("ui://"))
            .map(str::to_string);
        let visibility = nested
            .and_then(|ui| ui.get("visibility"))
            .and_then(Value::as_array)
            .map(|list| {
                list.iter()
                    .filter_map(Value::as_str)
                    .map(str::to_string)
                    .collect()
            });
        (resource_uri.is_some() || visibility.is_some()).then_some(ToolUi {
            resource_uri,
            visibility,
        })
    }

    fn visible_to(&self, who: &str) -> bool {
        self.visibility
            .as_ref()
            .is_none_or(|list| list.iter().any(|v| v == who))
    }
}

/// Whether the model may see and call a tool with this UI metadata (no metadata: yes).
pub fn model_visible(ui: Option<&ToolUi>) -> bool {
    ui.is_none_or(|ui| ui.visible_to("model"))
}

/// Whether an app may call a tool with this UI metadata (no visibility: `["model", "app"]`).
pub fn app_visible(ui: Option<&ToolUi>) -> bool {
    ui.is_none_or(|ui| ui.visible_to("app"))
}

/// An app's UI resource as read from its server.
#[derive(Debug, Clone, PartialEq)]
pub struct AppResource {
    pub uri: String,
    pub html: String,
    pub mime_type: String,
    /// `_meta.ui.csp` as the server wrote it.
    pub csp: Option<Value>,
    /// `_meta.ui.permissions` as the server wrote it.
    pub permissions: Option<Value>,
    pub domain: Option<String>,
    pub prefers_border: Option<bool>,
}

/// The app in `result`, the answer of `server` to `resources/read` of `uri`: the content of that
/// URI whose MIME type is `text/html;profile=mcp-app`, as text or base64 blob, with its `_meta.ui`
/// (the content's, else the result's). `McpManager::read_app` asks and hands the answer here.
pub(crate) fn app_resource(server: &str, uri: &str, result: &Value) -> Result<AppResource, Error> {
    let failed = |reason: String| resource_error(server, uri, reason);
    let contents = result
        .get("contents")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    let Some(content) = contents.iter().find(|c| {
        c.get("mimeType").and_then(Value::as_str) == Some(APP_MIME_TYPE)
            && c.get("uri")
                .and_then(Value::as_str)
                .is_none_or(|u| u == uri)
    }) else {
        return Err(failed(format!(
            "it has no content of type {APP_MIME_TYPE} (an app's HTML)"
        )));
    };
    let html = match (content.get("text"), content.get("blob")) {
        (Some(Value::String(text)), _) => text.clone(),
        (_, Some(Value::String(blob))) => {
            let bytes = base64::engine::general_purpose::STANDARD
                .decode(blob.trim())
                .map_err(|e| failed(format!("its blob is not base64: {e}")))?;
            String::from_utf8(bytes).map_err(|_| failed("its blob is not UTF-8 text".into()))?
        }
        _ => return Err(failed("it has neither text nor blob".into())),
    };
    let empty = Map::new();
    let ui = ui_meta(content)
        .or_else(|| ui_meta(result))
        .unwrap_or(&empty);
    Ok(AppResource {
        uri: uri.to_string(),
        html,
        mime_type: APP_MIME_TYPE.to_string(),
        csp: ui.get("csp").filter(|v| v.is_object()).cloned(),
        permissions: ui.get("permissions").filter(|v| v.is_object()).cloned(),
        domain: ui.get("domain").and_then(Value::as_str).map(str::to_string),
        prefers_border: ui.get("prefersBorder").and_then(Value::as_bool),
    })
}

/// An app resource that cannot be read, in words naming the server and the URI.
pub(crate) fn resource_error(server: &str, uri: &str, reason: String) -> Error {
    Error::Resource {
        server: server.to_string(),
        uri: uri.to_string(),
        reason,
    }
}

fn ui_meta(value: &Value) -> Option<&Map<String, Value>> {
    value.get("_meta")?.get("ui")?.as_object()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn meta(value: Value) -> JsonObject {
        value.as_object().cloned().unwrap_or_default()
    }

    #[test]
    fn apps_1_nested_flat_and_visibility() {
        let nested = ToolUi::from_meta(Some(&meta(
            json!({"ui": {"resourceUri": "ui://a/b.html", "visibility": ["app"]}}),
        )));
        let nested = nested.expect("ui");
        assert_eq!(nested.resource_uri.as_deref(), Some("ui://a/b.html"));
        assert!(!model_visible(Some(&nested)));
        assert!(app_visible(Some(&nested)));
        let flat =
            ToolUi::from_meta(Some(&meta(json!({"ui/resourceUri": "ui://flat"})))).expect("ui");
        assert_eq!(flat.resource_uri.as_deref(), Some("ui://flat"));
        assert!(model_visible(Some(&flat)) && app_visible(Some(&flat)));
        assert_eq!(ToolUi::from_meta(Some(&meta(json!({"other": 1})))), None);
        let model_only = ToolUi::from_meta(Some(&meta(json!({"ui": {"visibility": ["model"]}}))));
        assert!(!app_visible(model_only.as_ref()));
        assert!(model_visible(None) && app_visible(None));
        // Not a ui:// URI: no app.
        let web = ToolUi::from_meta(Some(&meta(json!({"ui": {"resourceUri": "https://x"}}))));
        assert_eq!(web, None);
    }
}
