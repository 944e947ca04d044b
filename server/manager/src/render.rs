//! Tool results as text, the way a model or a terminal should see them (TOOL-8).

use rmcp::model::{CallToolResult, ContentBlock, ResourceContents};

/// Text parts joined with newlines; images and audio as `[Image: <mime>]` / `[Audio: <mime>]`;
/// resources as `[Resource: <uri>]`. Structured content is used when there is no content.
/// Hidden characters (Unicode tags, bidi controls, zero-width characters) are removed: this is
/// the text the model reads (TRUST-7).
pub fn result_text(result: &CallToolResult) -> String {
    let mut text = match (result.content.is_empty(), &result.structured_content) {
        (true, Some(structured)) => structured.to_string(),
        _ => {
            let parts: Vec<String> = result.content.iter().map(content_text).collect();
            parts.join("\n")
        }
    };
    crate::inert::strip_hidden_in_place(&mut text);
    text
}

fn content_text(block: &ContentBlock) -> String {
    match block {
        ContentBlock::Text(text) => text.text.clone(),
        ContentBlock::Image(image) => format!("[Image: {}]", image.mime_type),
        ContentBlock::Audio(audio) => format!("[Audio: {}]", audio.mime_type),
        ContentBlock::Resource(embedded) => match &embedded.resource {
            ResourceContents::TextResourceContents { uri, .. }
            | ResourceContents::BlobResourceContents { uri, .. } => format!("[Resource: {uri}]"),
            other => {
                let json = serde_json::to_value(other).unwrap_or_default();
                format!("[Resource: {}]", json["uri"].as_str().unwrap_or(""))
            }
        },
        ContentBlock::ResourceLink(link) => format!("[Resource: {}]", link.uri),
        // A kind newer than this build: its JSON, so nothing is lost.
        other => serde_json::to_string(other).unwrap_or_default(),
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

    // TRUST-7: a result's hidden characters never reach the model, text or structured.
    #[test]
    fn trust_7_results_lose_hidden_characters() {
        let result: CallToolResult = serde_json::from_value(serde_json::json!({
            "content": [{"type": "text", "text": "ok\u{200B}\u{E0041}\u{202E}!"}]
        }))
        .unwrap();
        assert_eq!(result_text(&result), "ok!");
        let structured: CallToolResult = serde_json::from_value(serde_json::json!({
            "content": [], "structuredContent": {"a": "b\u{2066}c"}
        }))
        .unwrap();
        assert_eq!(result_text(&structured), "{\"a\":\"bc\"}");
    }
}
