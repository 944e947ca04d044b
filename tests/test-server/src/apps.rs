//! MCP Apps tools (APPS-1, APPS-4), each only when named in `--tools`: [`APP_TOOL`] has an app
//! (`_meta.ui.resourceUri` = [`APP_URI`], served by `resources/read` as
//! `text/html;profile=mcp-app` with a `_meta.ui.csp` declaring one connect domain) and answers
//! with whether the client declared the `io.modelcontextprotocol/ui` extension (the capability
//! of the call's request); [`APP_ONLY_TOOL`] (visibility `["app"]`) writes the file its `path`
//! argument names, so a test sees whether it ran; [`MODEL_ONLY_TOOL`] (visibility `["model"]`).

use std::sync::Arc;

use rmcp::model::{
    CallToolRequestParams, CallToolResult, ClientCapabilities, ContentBlock, JsonObject,
    MetaObject, ReadResourceResult, ResourceContents, Tool,
};
use serde_json::{Value, json};

pub const APP_TOOL: &str = "app_clock";
pub const APP_ONLY_TOOL: &str = "app_write";
pub const MODEL_ONLY_TOOL: &str = "model_only";
pub const APP_URI: &str = "ui://test/clock.html";
/// The one domain the app's resource declares for `connect-src`.
pub const APP_CONNECT_DOMAIN: &str = "https://api.clock.example";
pub const TOOLS: &[&str] = &[APP_TOOL, APP_ONLY_TOOL, MODEL_ONLY_TOOL];

const APP_HTML: &str = "<!doctype html><html><body><p id=\"time\">test clock app</p></body></html>";

fn object(value: Value) -> JsonObject {
    match value {
        Value::Object(map) => map,
        _ => JsonObject::new(),
    }
}

fn tool(name: &str, description: &str, schema: Value, ui: Value) -> Tool {
    let mut tool = Tool::new(
        name.to_string(),
        description.to_string(),
        Arc::new(object(schema)),
    );
    tool.meta = Some(MetaObject(object(json!({ "ui": ui }))));
    tool
}

/// The tools of this module that `exposes` lets through.
pub fn tools(exposes: impl Fn(&str) -> bool) -> Vec<Tool> {
    let empty = json!({"type": "object", "properties": {}});
    let all = [
        tool(
            APP_TOOL,
            "The time, shown by an app.",
            empty.clone(),
            json!({ "resourceUri": APP_URI }),
        ),
        tool(
            APP_ONLY_TOOL,
            "Writes a file (only the app may call it).",
            json!({"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]}),
            json!({ "visibility": ["app"] }),
        ),
        tool(
            MODEL_ONLY_TOOL,
            "Only the model may call it.",
            empty,
            json!({ "visibility": ["model"] }),
        ),
    ];
    all.into_iter().filter(|t| exposes(&t.name)).collect()
}

/// Answers a call of one of [`TOOLS`].
pub fn call(request: &CallToolRequestParams, client: Option<ClientCapabilities>) -> CallToolResult {
    match request.name.as_ref() {
        APP_TOOL => {
            let declared = client
                .as_ref()
                .and_then(|c| c.extensions.as_ref())
                .and_then(|e| e.get("io.modelcontextprotocol/ui"))
                .map(|settings| Value::Object(settings.clone()));
            let text = match &declared {
                Some(settings) => format!("ui extension declared: {settings}"),
                None => "ui extension not declared".to_string(),
            };
            let mut result = CallToolResult::success(vec![ContentBlock::text(text)]);
            result.structured_content = Some(json!({
                "time": "12:34:56",
                "uiExtension": declared,
            }));
            result.meta = Some(MetaObject(object(json!({ "clock/zone": "UTC" }))));
            result
        }
        APP_ONLY_TOOL => {
            let path = request
                .arguments
                .as_ref()
                .and_then(|a| a.get("path"))
                .and_then(Value::as_str)
                .unwrap_or_default();
            match std::fs::write(path, "ran") {
                Ok(()) => {
                    CallToolResult::success(vec![ContentBlock::text(format!("wrote {path}"))])
                }
                Err(e) => CallToolResult::error(vec![ContentBlock::text(format!(
                    "cannot write {path}: {e}"
                ))]),
            }
        }
        _ => CallToolResult::success(vec![ContentBlock::text("model only")]),
    }
}

/// `resources/read` of [`APP_URI`]; `None` for any other URI.
pub fn read(uri: &str) -> Option<ReadResourceResult> {
    if uri != APP_URI {
        return None;
    }
    let mut contents = ResourceContents::text(APP_HTML, APP_URI);
    if let ResourceContents::TextResourceContents {
        mime_type, meta, ..
    } = &mut contents
    {
        *mime_type = Some("text/html;profile=mcp-app".into());
        *meta = Some(MetaObject(object(json!({
            "ui": {
                "csp": { "connectDomains": [APP_CONNECT_DOMAIN] },
                "prefersBorder": false,
            }
        }))));
    }
    Some(ReadResourceResult::new(vec![contents]))
}
