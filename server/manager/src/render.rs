//! Tool results as text, the way a model or a terminal should see them (TOOL-8).

use rmcp::model::CallToolResult;
use serde_json::Value;

/// Text parts joined with newlines; images and audio as `[Image: <mime>]` / `[Audio: <mime>]`;
/// resources as `[Resource: <uri>]`. Structured content is used when there is no content.
pub fn result_text(result: &CallToolResult) -> String {
    let parts: Vec<String> = result
        .content
        .iter()
        .filter_map(|block| serde_json::to_value(block).ok())
        .map(|block| content_text(&block))
        .collect();
    if let (true, Some(structured)) = (parts.is_empty(), &result.structured_content) {
        return structured.to_string();
    }
    parts.join("\n")
}

fn content_text(block: &Value) -> String {
    let field = |v: &Value, key: &str| v.get(key).and_then(Value::as_str).unwrap_or("").to_string();
    match block.get("type").and_then(Value::as_str) {
        Some("text") => field(block, "text"),
        Some("image") => format!("[Image: {}]", field(block, "mimeType")),
        Some("audio") => format!("[Audio: {}]", field(block, "mimeType")),
        Some("resource") => {
            let resource = block.get("resource").cloned().unwrap_or_default();
            format!("[Resource: {}]", field(&resource, "uri"))
        }
        Some("resource_link") => format!("[Resource: {}]", field(block, "uri")),
        _ => block.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    // TOOL-8
    #[test]
    fn every_content_kind_is_rendered() {
        let result: CallToolResult = serde_json::from_value(serde_json::json!({
            "content": [
                {"type": "text", "text": "first\nline"},
                {"type": "image", "data": "AAAA", "mimeType": "image/png"},
                {"type": "resource", "resource": {"uri": "file:///a.txt", "text": "x"}},
                {"type": "resource_link", "uri": "file:///b.txt", "name": "b"},
                {"type": "text", "text": "last"}
            ]
        }))
        .unwrap();
        assert_eq!(
            result_text(&result),
            "first\nline\n[Image: image/png]\n[Resource: file:///a.txt]\n[Resource: file:///b.txt]\nlast"
        );
    }
}
