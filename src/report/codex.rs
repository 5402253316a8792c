//! Codex rollouts (`~/.codex/sessions/YYYY/MM/DD/rollout-*.jsonl`): one JSON object per
//! line, `{timestamp, type, payload}`. What is read:
//! - usage per model response: `token_usage_record` lines (Codex 0.17x: `payload.usage`
//!   with `input_tokens` including `cached_input_tokens`, and `cache_write_input_tokens`);
//!   in older rollouts `event_msg` `token_count` events, whose `info.last_token_usage` is
//!   taken once per change of `info.total_token_usage` (the same event repeats).
//! - what changes the tools: `function_call`s of mcp-defer's `select_tools` (answered by a
//!   `function_call_output`) and `tool_search_output` items with tools (Codex's own tool
//!   search loading schemas).
//!
//! Rollouts do not record the tools sent with a request: tool-schema tokens are unknown,
//! and the report says so.

use std::collections::HashMap;

use serde_json::Value;

use super::{
    Client, Request, Session, ToolChange, each_json_line, each_json_line_where, is_meta_tool, num,
};

/// Parses one rollout, read twice line by line from what `open` gives (whether it has
/// `token_usage_record` lines decides which usage lines count); lines that are not JSON are
/// skipped and counted in the notes.
///
/// # Errors
/// When `open` or a read fails.
pub(crate) fn parse<R: std::io::BufRead>(
    path: &str,
    open: impl Fn() -> std::io::Result<R>,
) -> std::io::Result<Session> {
    let mut records = false;
    let wanted = |text: &str| text.contains("token_usage_record");
    each_json_line_where(open()?, wanted, |line| {
        records |= line["type"].as_str() == Some("token_usage_record");
    })?;

    let mut session = Session {
        client: Client::Codex,
        id: String::new(),
        path: path.to_owned(),
        mcp_defer: false,
        requests: Vec::new(),
        notes: Vec::new(),
    };
    let mut select_calls: HashMap<String, Vec<String>> = HashMap::new();
    let mut pending: Vec<ToolChange> = Vec::new();
    let mut last_total: Option<Value> = None;
    let bad_lines = each_json_line(open()?, |line| {
        let payload = &line["payload"];
        let usage = match (line["type"].as_str(), payload["type"].as_str()) {
            (Some("session_meta"), _) => {
                if let Some(id) = payload["id"].as_str() {
                    session.id = id.to_owned();
                }
                None
            }
            (Some("token_usage_record"), _) => Some(&payload["usage"]),
            (Some("event_msg"), Some("token_count")) if !records => {
                let info = &payload["info"];
                let total = &info["total_token_usage"];
                if !total.is_object() || last_total.as_ref() == Some(total) {
                    None
                } else {
                    last_total = Some(total.clone());
                    Some(&info["last_token_usage"])
                }
            }
            (Some("response_item"), Some("function_call")) => {
                let name = payload["name"].as_str().unwrap_or_default();
                let namespace = payload["namespace"].as_str().unwrap_or_default();
                let mcp = namespace.starts_with("mcp__") || name.starts_with("mcp__");
                if mcp && is_meta_tool(name) {
                    session.mcp_defer = true;
                    if name.ends_with("select_tools")
                        && let Some(id) = payload["call_id"].as_str()
                    {
                        let args: Value = (payload["arguments"].as_str())
                            .and_then(|a| serde_json::from_str(a).ok())
                            .unwrap_or_default();
                        let names = (args["names"].as_array().into_iter().flatten())
                            .filter_map(|n| n.as_str().map(str::to_owned))
                            .collect();
                        select_calls.insert(id.to_owned(), names);
                    }
                }
                None
            }
            (Some("response_item"), Some("function_call_output")) => {
                if let Some(names) =
                    (payload["call_id"].as_str()).and_then(|id| select_calls.get(id))
                {
                    pending.push(ToolChange::SelectTools {
                        names: names.clone(),
                    });
                }
                None
            }
            (Some("response_item"), Some("tool_search_output")) => {
                let names = loaded_names(&payload["tools"]);
                if names.iter().any(|n| is_meta_tool(n)) {
                    session.mcp_defer = true;
                }
                if !names.is_empty() {
                    pending.push(ToolChange::NativeLoad { names });
                }
                None
            }
            _ => None,
        };
        let Some(usage) = usage.filter(|u| u.is_object()) else {
            return;
        };
        let prompt = num(usage, "input_tokens");
        let cache_read = num(usage, "cached_input_tokens");
        let cache_write = num(usage, "cache_write_input_tokens");
        session.requests.push(Request {
            timestamp: line["timestamp"].as_str().map(str::to_owned),
            input: prompt.saturating_sub(cache_read + cache_write),
            cache_read,
            cache_write,
            output: num(usage, "output_tokens"),
            tool_tokens: None,
            changes: std::mem::take(&mut pending),
            cache_ttl_secs: None,
        });
    })?;
    if session.id.is_empty() {
        session.id = super::claude::file_stem(path);
    }
    if !session.requests.is_empty() {
        session.notes.push(
            "Codex rollouts do not record the tools sent with a request: tool-schema tokens \
             unknown"
                .into(),
        );
    }
    if bad_lines > 0 {
        session
            .notes
            .push(format!("{bad_lines} lines were not JSON and were skipped"));
    }
    Ok(session)
}

/// `mcp__server__tool` names of the tools a `tool_search_output` loaded (namespaces
/// flattened).
fn loaded_names(tools: &Value) -> Vec<String> {
    let mut names = Vec::new();
    for tool in tools.as_array().into_iter().flatten() {
        let outer = tool["name"].as_str().unwrap_or_default();
        match tool["tools"].as_array() {
            Some(inner) => names.extend(
                inner
                    .iter()
                    .filter_map(|t| t["name"].as_str())
                    .map(|n| format!("{outer}__{n}")),
            ),
            None if !outer.is_empty() => names.push(outer.to_owned()),
            None => {}
        }
    }
    names
}

/// Is this a Codex rollout (by its first line or its file name)?
pub(crate) fn looks_like(path: &str, first_line: &str) -> bool {
    let name = std::path::Path::new(path)
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    name.starts_with("rollout-")
        || serde_json::from_str::<Value>(first_line)
            .is_ok_and(|v| v["type"].as_str() == Some("session_meta") && v["payload"].is_object())
}
