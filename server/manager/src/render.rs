//! Tool results as text, the way a model or a terminal should see them (TOOL-8).

use rmcp::model::{CallToolResult, ContentBlock, ResourceContents};

/// Text parts joined with newlines; images and audio as `[Image: <mime>]` / `[Audio: <mime>]`;
/// resources as `[Resource: <uri>]`. Structured content is used when there is no content.
pub fn result_text(result: &CallToolResult) -> String {
    if let (true, Some(structured)) = (result.content.is_empty(), &result.structured_content) {
        return structured.to_string();
    }
    let parts: Vec<String> = result.content.iter().map(content_text).collect();
    parts.join("\n")
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
}
