//! `tools/list` answers written from the listed bytes: the handler leaves the listed tools
//! in [`ToolLists`], and [`encode`] splices their bytes into the answer's empty `tools`
//! array, never parsing or serializing a tool again per request.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use rmcp::RoleServer;
use rmcp::model::{JsonRpcMessage, RequestId, ServerResult};
use rmcp::service::TxJsonRpcMessage;

use crate::exposure::ListedTool;
use crate::sync::lock;

/// The tools of `tools/list` answers not written yet, by request id: the handler answers
/// rmcp with an empty typed list and leaves the listed tools here ([`ToolLists::put`]);
/// [`Framed`] writes the answer with their bytes in it. Shared by the one stdio session and
/// its transport; an entry lives from the handler's return to the write (or the client's
/// cancel).
#[derive(Debug, Clone, Default)]
pub(crate) struct ToolLists(Arc<Mutex<HashMap<RequestId, Vec<Arc<ListedTool>>>>>);

impl ToolLists {
    /// The tools of the answer to request `id`, whose typed result has an empty `tools`.
    pub(crate) fn put(&self, id: RequestId, tools: Vec<Arc<ListedTool>>) {
        lock(&self.0).insert(id, tools);
    }

    pub(super) fn take(&self, id: &RequestId) -> Option<Vec<Arc<ListedTool>>> {
        lock(&self.0).remove(id)
    }
}

/// The line for `item`; a `tools/list` answer with `tools` from [`ToolLists`] gets their
/// bytes spliced into its empty `tools` array: the same bytes rmcp would write for the
/// typed list (the tests hold them equal), without a `Tool` tree or a serialization per
/// tool.
pub(super) fn encode(
    mut item: TxJsonRpcMessage<RoleServer>,
    tools: Option<Vec<Arc<ListedTool>>>,
) -> Result<Vec<u8>, serde_json::Error> {
    let Some(tools) = tools else {
        return serde_json::to_vec(&item);
    };
    let empty = matches!(&item, JsonRpcMessage::Response(response)
        if matches!(&response.result, ServerResult::ListToolsResult(list) if list.tools.is_empty()));
    if empty {
        let bytes = serde_json::to_vec(&item)?;
        if let Some(spliced) = splice_tools(&bytes, &tools) {
            return Ok(spliced);
        }
    }
    // Not the answer the handler left empty for these tools: write it typed, tools in.
    tracing::error!("a tools/list answer without its empty tools array; writing it typed");
    if let JsonRpcMessage::Response(response) = &mut item
        && let ServerResult::ListToolsResult(list) = &mut response.result
    {
        list.tools = tools.iter().map(|t| t.to_tool()).collect();
    }
    serde_json::to_vec(&item)
}

/// `"tools":[]` in `message` with the tools' bytes between the brackets; `None` when it is
/// not there. In JSON text these bytes occur only as a key `tools` with an empty array: a
/// `"` inside a string is escaped, so `s"` cannot occur in one. The answer rmcp serializes
/// has no other key `tools` (its `_meta` is ours and empty).
fn splice_tools(message: &[u8], tools: &[Arc<ListedTool>]) -> Option<Vec<u8>> {
    const EMPTY: &[u8] = br#""tools":[]"#;
    let at = message.windows(EMPTY.len()).position(|w| w == EMPTY)? + EMPTY.len() - 1;
    let size = tools.iter().map(|t| t.json().len() + 1).sum::<usize>();
    // One more byte for the newline the caller appends.
    let mut bytes = Vec::with_capacity(message.len() + size + 1);
    bytes.extend_from_slice(&message[..at]);
    for (i, tool) in tools.iter().enumerate() {
        if i > 0 {
            bytes.push(b',');
        }
        bytes.extend_from_slice(tool.json().as_bytes());
    }
    bytes.extend_from_slice(&message[at..]);
    Some(bytes)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// The answer written from the listed bytes is the very line rmcp writes for the typed
    /// list, in both eras (with and without `resultType`, with cache fields), for tools
    /// with `_meta`, unicode and escapes in them.
    #[test]
    fn a_tools_list_from_bytes_equals_the_typed_answer() {
        use rmcp::model::{JsonRpcResponse, JsonRpcVersion2_0, ListToolsResult, Tool};
        let tools: Vec<Tool> = [
            json!({"name": "a__x", "description": "q\"tools\":[] ü \u{2028}", "inputSchema": {"type": "object", "properties": {"tools": {"type": "array", "default": []}}}, "_meta": {"anthropic/alwaysLoad": true}}),
            json!({"name": "b", "inputSchema": {"type": "object"}, "annotations": {"readOnlyHint": true}}),
        ]
        .into_iter()
        .map(|v| serde_json::from_value(v).unwrap_or_else(|e| panic!("test tool: {e}")))
        .collect();
        let listed: Vec<Arc<ListedTool>> =
            tools.iter().map(|t| Arc::new(ListedTool::new(t))).collect();
        for (era, id) in [
            (true, RequestId::Number(7)),
            (false, RequestId::String("\"tools\":[]".into())),
        ] {
            for count in [0, 1, 2] {
                let answer = |tools: Vec<Tool>| {
                    let mut list = ListToolsResult::with_all_items(tools);
                    if era {
                        list.ttl_ms = Some(0);
                    } else {
                        list.result_type = None;
                    }
                    TxJsonRpcMessage::<RoleServer>::Response(JsonRpcResponse {
                        jsonrpc: JsonRpcVersion2_0,
                        id: id.clone(),
                        result: ServerResult::ListToolsResult(list),
                    })
                };
                let typed = serde_json::to_vec(&answer(tools[..count].to_vec()));
                let spliced = encode(answer(Vec::new()), Some(listed[..count].to_vec()));
                assert_eq!(
                    spliced.map(String::from_utf8).ok(),
                    typed.map(String::from_utf8).ok(),
                    "era {era}, {count} tools"
                );
            }
        }
    }

    /// A list handed over by the handler is written once and forgotten: a later answer
    /// with the same id (ids are reused once answered) is not given those tools.
    #[test]
    fn listed_tools_are_taken_once() {
        let lists = ToolLists::default();
        lists.put(RequestId::Number(1), Vec::new());
        assert!(lists.take(&RequestId::Number(1)).is_some());
        assert!(lists.take(&RequestId::Number(1)).is_none());
    }
}
