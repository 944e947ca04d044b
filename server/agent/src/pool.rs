//! The tools declared to the model: flat `mcp__server__tool` declarations (TOOL-1), or one `Exec`
//! tool whose description is a compact catalog (TOOL-2). Only live, permitted tools take part
//! (CACHE-7, permissions).

use std::time::Duration;

use serde_json::{Map, Value, json};
use wave_mcp_manager::McpTool;

use crate::exec::ToolDoc;
use crate::options::ToolPoolMode;
use crate::permissions::PermissionRules;

/// The name of the converged pool's one tool.
pub const EXEC_TOOL: &str = "Exec";
/// Characters of the Exec description given to the tool catalog.
const CATALOG_BUDGET: usize = 6000;
/// Characters of one tool's description in the catalog.
const CATALOG_LINE_DESCRIPTION: usize = 120;

/// The permitted live tools of one request and how they are declared.
#[derive(Debug, Clone)]
pub(crate) struct Pool {
    pub tools: Vec<McpTool>,
    /// Declared as one `Exec` tool.
    pub exec: bool,
}

impl Pool {
    pub(crate) fn new(live: Vec<McpTool>, rules: &PermissionRules, mode: ToolPoolMode) -> Pool {
        let tools: Vec<McpTool> = live
            .into_iter()
            .filter(|t| rules.is_usable(&t.full_name))
            .collect();
        let exec = mode == ToolPoolMode::Exec && !tools.is_empty();
        Pool { tools, exec }
    }

    /// The `tools` array of a Chat Completions request (empty: no tools).
    pub(crate) fn declarations(&self, time_limit: Duration) -> Vec<Value> {
        if self.exec {
            return vec![function(
                EXEC_TOOL,
                &exec_description(&self.tools, time_limit),
                json!({
                    "type": "object",
                    "properties": {
                        "script": {
                            "type": "string",
                            "description": "The body of an async JavaScript function."
                        }
                    },
                    "required": ["script"]
                }),
            )];
        }
        self.tools
            .iter()
            .map(|tool| {
                function(
                    &tool.full_name,
                    tool.description.as_deref().unwrap_or(""),
                    parameters(&tool.input_schema),
                )
            })
            .collect()
    }

    /// What `search()` inside a script can find: the full description and schema.
    pub(crate) fn docs(&self) -> Vec<ToolDoc> {
        self.tools
            .iter()
            .map(|tool| ToolDoc {
                name: tool.full_name.clone(),
                description: tool.description.clone().unwrap_or_default(),
                input_schema: parameters(&tool.input_schema),
            })
            .collect()
    }
}

fn function(name: &str, description: &str, parameters: Value) -> Value {
    json!({
        "type": "function",
        "function": { "name": name, "description": description, "parameters": parameters }
    })
}

/// The cleaned schema (TOOL-5); an empty one becomes an object without properties.
fn parameters(schema: &Map<String, Value>) -> Value {
    if schema.is_empty() {
        return json!({ "type": "object", "properties": {} });
    }
    Value::Object(schema.clone())
}

fn exec_description(tools: &[McpTool], time_limit: Duration) -> String {
    let mut text = format!(
        "Run JavaScript (the body of an async function, QuickJS) that calls MCP tools, and get back what it logs and returns.\n\
         - `await tools[\"<full name>\"](args)` calls a tool with an arguments object and returns its result as text; it throws an Error when the call fails or is refused.\n\
         - `search(query)` returns the tools whose name or description contains every word of the query, as {{name, description, inputSchema}}: read a tool's full description and input schema there before calling it.\n\
         - `console.log(...)` output and the value you `return` (strings as is, anything else as JSON) are the result.\n\
         - A script is stopped after {} seconds.\n\
         Tools (full name: start of the description):\n",
        time_limit.as_secs().max(1)
    );
    let mut used = 0;
    for (index, tool) in tools.iter().enumerate() {
        let line = catalog_line(tool);
        if used + line.len() > CATALOG_BUDGET {
            text.push_str(&format!(
                "- … and {} more tools: find them with search()\n",
                tools.len() - index
            ));
            break;
        }
        used += line.len();
        text.push_str(&line);
    }
    text
}

fn catalog_line(tool: &McpTool) -> String {
    let first = tool
        .description
        .as_deref()
        .unwrap_or("")
        .lines()
        .find(|l| !l.trim().is_empty())
        .unwrap_or("")
        .trim();
    let short: String = first.chars().take(CATALOG_LINE_DESCRIPTION).collect();
    let more = if short.len() < first.len() { "…" } else { "" };
    if short.is_empty() {
        return format!("- {}\n", tool.full_name);
    }
    format!("- {}: {short}{more}\n", tool.full_name)
}
