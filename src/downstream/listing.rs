//! A server's `tools/list` pages taken tool by tool: one malformed tool is skipped with a
//! warning naming it and why, and the server's other tools stay usable.
//!
//! rmcp decodes a page as a whole; a single tool without an `inputSchema` makes the whole
//! page fall through to its catch-all `CustomResult`, which we decode here one tool at a
//! time.

use rmcp::model::{ListToolsResult, Tool};
use serde_json::Value;

/// The tools of a page rmcp could not decode, each decoded alone; `None` when the value is
/// not a tools page at all.
pub(super) fn lenient_page(mut page: Value) -> Option<ListToolsResult> {
    let tools = match page.get_mut("tools")? {
        Value::Array(tools) => std::mem::take(tools),
        _ => return None,
    };
    let next_cursor = page
        .get("nextCursor")
        .and_then(Value::as_str)
        .map(str::to_owned);
    let tools = tools
        .into_iter()
        .enumerate()
        .filter_map(|(position, raw)| {
            let name = raw
                .get("name")
                .and_then(Value::as_str)
                .map_or_else(|| format!("#{}", position + 1), str::to_owned);
            match serde_json::from_value::<Tool>(raw) {
                Ok(tool) => Some(tool),
                Err(err) => {
                    tracing::warn!(tool = %name, cause = %err, "skipping a tool the server lists malformed");
                    None
                }
            }
        })
        .collect();
    let mut result = ListToolsResult::with_all_items(tools);
    result.next_cursor = next_cursor;
    Some(result)
}

/// Drops tools whose `inputSchema` declares a `type` other than `"object"` (MCP requires
/// an object schema; a call could never satisfy another), with a warning naming each.
pub(super) fn valid_tools(tools: Vec<Tool>) -> Vec<Tool> {
    tools
        .into_iter()
        .filter(|tool| match tool.input_schema.get("type") {
            None => true,
            Some(Value::String(kind)) if kind == "object" => true,
            Some(other) => {
                tracing::warn!(
                    tool = %tool.name,
                    cause = %format!("inputSchema has type {other}, not \"object\""),
                    "skipping a tool the server lists malformed"
                );
                false
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_bad_tool_is_skipped_and_the_rest_kept() {
        let page = json!({
            "tools": [
                {"name": "good", "inputSchema": {"type": "object"}},
                {"name": "no_schema"},
                {"name": "string_schema", "inputSchema": {"type": "string"}},
                {"name": "also_good", "inputSchema": {}}
            ],
            "nextCursor": "2"
        });
        let page = lenient_page(page).unwrap_or_else(|| panic!("a tools page"));
        assert_eq!(page.next_cursor.as_deref(), Some("2"));
        let names: Vec<String> = valid_tools(page.tools)
            .iter()
            .map(|t| t.name.to_string())
            .collect();
        assert_eq!(names, ["good", "also_good"]);
    }
}
