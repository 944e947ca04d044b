//! A tool's `outputSchema` (SRV-4): a successful result of a tool that declares one must carry
//! `structuredContent` that the schema accepts; anything else becomes an error result naming
//! the tool, on every call path (the model's, `Exec`, `wave-mcp call`).

use std::sync::{Arc, OnceLock};

use rmcp::model::{CallToolResult, ContentBlock};
use serde_json::{Map, Value};

/// The output schema of one tool, compiled on its first use.
pub struct OutputSchema {
    schema: Arc<Map<String, Value>>,
    compiled: OnceLock<Result<jsonschema::Validator, String>>,
}

impl std::fmt::Debug for OutputSchema {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_tuple("OutputSchema").field(&self.schema).finish()
    }
}

impl PartialEq for OutputSchema {
    fn eq(&self, other: &Self) -> bool {
        self.schema == other.schema
    }
}

impl OutputSchema {
    pub fn new(schema: Arc<Map<String, Value>>) -> OutputSchema {
        OutputSchema {
            schema,
            compiled: OnceLock::new(),
        }
    }

    pub fn schema(&self) -> &Arc<Map<String, Value>> {
        &self.schema
    }

    /// Why `structured` breaks the schema (the first problem and where), or `None` when it fits.
    fn problem(&self, structured: &Value) -> Option<String> {
        let compiled = self.compiled.get_or_init(|| {
            jsonschema::validator_for(&Value::Object((*self.schema).clone()))
                .map_err(|e| format!("its output schema is not a valid JSON Schema ({e})"))
        });
        let validator = match compiled {
            Ok(validator) => validator,
            Err(why) => return Some(why.clone()),
        };
        let error = validator.iter_errors(structured).next()?;
        let at = error.instance_path().to_string();
        let place = if at.is_empty() {
            String::new()
        } else {
            format!("at {at}, ")
        };
        Some(format!(
            "its result does not fit its output schema: {place}{error}"
        ))
    }
}

/// `result` as the caller should get it: unchanged when the tool has no output schema, when it
/// is an error result, or when its structured content fits the schema; else an error result
/// that names the tool of `server` and says what is wrong.
pub(crate) fn checked(
    output: Option<&OutputSchema>,
    server: &str,
    tool: &str,
    result: CallToolResult,
) -> CallToolResult {
    let Some(output) = output else {
        return result;
    };
    if result.is_error == Some(true) {
        return result;
    }
    let problem = match &result.structured_content {
        None => {
            Some("its result has no structured content, which its output schema requires".into())
        }
        Some(structured) => output.problem(structured),
    };
    let Some(problem) = problem else {
        return result;
    };
    // The caller names the tool and the server with the error (the model's funnel, `call`).
    tracing::warn!(server, tool, "tool result refused: {problem}");
    CallToolResult::error(vec![ContentBlock::text(problem)])
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn schema() -> OutputSchema {
        let Value::Object(map) = json!({
            "type": "object",
            "properties": { "celsius": { "type": "number" } },
            "required": ["celsius"]
        }) else {
            unreachable!()
        };
        OutputSchema::new(Arc::new(map))
    }

    fn result(value: Value) -> CallToolResult {
        serde_json::from_value(value).unwrap()
    }

    fn text(result: &CallToolResult) -> String {
        crate::render::result_text(result)
    }

    // SRV-4: fitting structured content passes; a mismatch, or none at all, is an error result
    // naming the tool, the server and the place; an error result is left alone.
    #[test]
    fn srv_4_structured_content_is_checked_against_the_output_schema() {
        let schema = schema();
        let fits = result(json!({"content": [], "structuredContent": {"celsius": 21.5}}));
        assert_eq!(checked(Some(&schema), "w", "temp", fits.clone()), fits);

        let wrong = result(json!({"content": [], "structuredContent": {"celsius": "warm"}}));
        let refused = checked(Some(&schema), "w", "temp", wrong);
        assert_eq!(refused.is_error, Some(true));
        let said = text(&refused);
        assert!(
            said.starts_with("its result does not fit its output schema: at /celsius, "),
            "{said}"
        );
        assert!(
            said.contains("\"warm\" is not of type \"number\""),
            "{said}"
        );

        let missing = result(json!({"content": [{"type": "text", "text": "21.5"}]}));
        let refused = checked(Some(&schema), "w", "temp", missing);
        assert_eq!(refused.is_error, Some(true));
        assert!(text(&refused).contains("no structured content"));

        let failed =
            result(json!({"content": [{"type": "text", "text": "no sensor"}], "isError": true}));
        assert_eq!(checked(Some(&schema), "w", "temp", failed.clone()), failed);
        let plain = result(json!({"content": [{"type": "text", "text": "x"}]}));
        assert_eq!(checked(None, "w", "temp", plain.clone()), plain);
    }

    #[test]
    fn srv_4_a_broken_output_schema_is_named() {
        let Value::Object(map) = json!({"type": 7}) else {
            unreachable!()
        };
        let schema = OutputSchema::new(Arc::new(map));
        let any = result(json!({"content": [], "structuredContent": {}}));
        let said = text(&checked(Some(&schema), "w", "temp", any));
        assert!(said.contains("not a valid JSON Schema"), "{said}");
    }
}
