//! 2025-11-25 tasks over `serve --http` (`server/tasks.rs` has the idea): what the gate
//! changes on the wire around rmcp's transport, which decodes and encodes bodies itself.
//!
//! In: a `tools/call` with `task`, a `tasks/get` and a `tasks/cancel` would be decoded by
//! rmcp into its own shapes (the `task` dropped, the 2026-07-28 task methods), so their
//! method is renamed [`TASK_METHOD_PREFIX`]`<method>` and rmcp hands them to the handler
//! as custom requests with the params as written ([`inbound`]); `tasks/result` and
//! `tasks/list` are custom to rmcp already.
//! Out ([`Outbound`]): a 2025-11-25 `initialize` answer gets the `tasks` capability, and a
//! `tools/list` answer gets each tool's fields rmcp's `Tool` does not carry (`execution`)
//! back at the top level, from the `_meta` key [`crate::exposure::EXTRA_KEY`] the handler
//! put them under. Each frame is one SSE event or the JSON answer, as `server/reused_ids/http.rs` relies on.

use bytes::Bytes;
use serde_json::Value;

use crate::exposure::EXTRA_KEY;
use crate::protocol::method;
use crate::server::tasks::{TASK_METHOD_PREFIX, TASKS_CAPABILITY};

/// The body with its method renamed, when it is a task request rmcp would decode as
/// something else; `None` otherwise.
pub(super) fn inbound(bytes: &[u8], method: Option<&str>) -> Option<Bytes> {
    let method = method?;
    let renamed = match method {
        method::TASKS_GET | method::TASKS_CANCEL => true,
        // Only a call whose body names `task` can be one; the rest is not parsed again.
        method::TOOLS_CALL => bytes.windows(6).any(|w| w == b"\"task\""),
        _ => false,
    };
    if !renamed {
        return None;
    }
    let mut message: Value = serde_json::from_slice(bytes).ok()?;
    if method == method::TOOLS_CALL && message.pointer("/params/task").is_none() {
        return None;
    }
    message.as_object_mut()?.insert(
        "method".to_owned(),
        Value::String(format!("{TASK_METHOD_PREFIX}{method}")),
    );
    serde_json::to_vec(&message).ok().map(Bytes::from)
}

/// What a response's frames get on their way out.
#[derive(Debug, Clone, Copy)]
pub(super) enum Outbound {
    Initialize,
    ToolsList,
}

impl Outbound {
    /// The rewrite for the answer to `method`, if it has one.
    pub(super) fn for_method(method: Option<&str>) -> Option<Outbound> {
        match method? {
            method::INITIALIZE => Some(Outbound::Initialize),
            method::TOOLS_LIST => Some(Outbound::ToolsList),
            _ => None,
        }
    }

    pub(super) fn frame(self, data: Bytes) -> Bytes {
        match self {
            Outbound::Initialize => offer(data),
            Outbound::ToolsList if contains(&data, EXTRA_KEY.as_bytes()) => {
                map_messages(&data, unmark_tools).unwrap_or(data)
            }
            Outbound::ToolsList => data,
        }
    }
}

fn contains(data: &[u8], needle: &[u8]) -> bool {
    data.windows(needle.len()).any(|w| w == needle)
}

/// A 2025-11-25 `initialize` answer with `tasks` first in its capabilities. In JSON text
/// `"capabilities":{` occurs only as that key (a quote inside a string is escaped), and
/// the answer's only such key is the result's.
fn offer(data: Bytes) -> Bytes {
    const KEY: &[u8] = br#""capabilities":{"#;
    if !contains(&data, br#""protocolVersion":"2025-11-25""#) {
        return data;
    }
    let Some(at) = data.windows(KEY.len()).position(|w| w == KEY) else {
        return data;
    };
    let at = at + KEY.len();
    let insert = format!("\"tasks\":{TASKS_CAPABILITY},");
    let mut out = Vec::with_capacity(data.len() + insert.len());
    out.extend_from_slice(&data[..at]);
    out.extend_from_slice(insert.as_bytes());
    // An empty capabilities object gets no trailing comma.
    if data.get(at) == Some(&b'}') {
        out.pop();
    }
    out.extend_from_slice(&data[at..]);
    Bytes::from(out)
}

/// `data` (an SSE event's lines, or a JSON answer) with `change` applied to each message.
fn map_messages(data: &[u8], change: fn(&mut Value)) -> Option<Bytes> {
    let text = std::str::from_utf8(data).ok()?;
    if text.trim_start().starts_with('{') {
        let mut message: Value = serde_json::from_str(text).ok()?;
        change(&mut message);
        return serde_json::to_vec(&message).ok().map(Bytes::from);
    }
    let mut out = String::with_capacity(text.len());
    for line in text.split_inclusive('\n') {
        let (body, end) = match line.strip_suffix('\n') {
            Some(body) => (body, "\n"),
            None => (line, ""),
        };
        match body
            .strip_prefix("data: ")
            .or_else(|| body.strip_prefix("data:"))
        {
            Some(json) => {
                let mut message: Value = serde_json::from_str(json).ok()?;
                change(&mut message);
                out.push_str("data: ");
                out.push_str(&message.to_string());
                out.push_str(end);
            }
            None => out.push_str(line),
        }
    }
    Some(Bytes::from(out))
}

/// Each listed tool's fields from its `_meta` [`EXTRA_KEY`] back at the top level.
fn unmark_tools(message: &mut Value) {
    let Some(Value::Array(tools)) = message.pointer_mut("/result/tools") else {
        return;
    };
    for tool in tools {
        crate::exposure::unmark_extra(tool);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_task_request_is_renamed_and_others_are_not() {
        let call = br#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x","task":{"ttl":1}}}"#;
        let renamed = inbound(call, Some("tools/call")).map(|b| b.to_vec());
        let renamed: Value =
            serde_json::from_slice(&renamed.unwrap_or_default()).unwrap_or_default();
        assert_eq!(renamed["method"], json!("mcp-defer/task:tools/call"));
        let plain = br#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"task"}}"#;
        assert!(inbound(plain, Some("tools/call")).is_none());
        let list = br#"{"jsonrpc":"2.0","id":1,"method":"tasks/list"}"#;
        assert!(inbound(list, Some("tasks/list")).is_none());
    }

    #[test]
    fn a_2025_11_25_initialize_answer_is_offered_tasks() {
        let frame = Bytes::from_static(
            b"data: {\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"protocolVersion\":\"2025-11-25\",\"capabilities\":{\"tools\":{}}}}\n\n",
        );
        let out = Outbound::Initialize.frame(frame);
        let text = String::from_utf8_lossy(&out);
        let message: Value =
            serde_json::from_str(text.trim().strip_prefix("data: ").unwrap_or_default())
                .unwrap_or_default();
        assert_eq!(
            message["result"]["capabilities"]["tasks"]["requests"]["tools"]["call"],
            json!({})
        );
        let older = Bytes::from_static(
            b"data: {\"result\":{\"protocolVersion\":\"2025-06-18\",\"capabilities\":{}}}\n\n",
        );
        assert_eq!(Outbound::Initialize.frame(older.clone()), older);
    }
}
