//! 2025-11-25 tasks (SEP-1686) on the wire: the requests and the capability rmcp 3.11 does
//! not know, taken and offered as they are ([`as_custom`], [`offer`]); our task ids, which
//! name the server that holds the task ([`outward`]); status notifications on their way to
//! the client; and which tasks a session created ([`Tasks`]). `tasks.rs` answers the
//! requests.

use std::collections::HashSet;
use std::sync::Mutex;

use rmcp::model::{
    ClientJsonRpcMessage, ClientRequest, CustomNotification, CustomRequest, JsonRpcMessage,
    JsonRpcRequest, ProtocolVersion, ServerNotification, ServerResult,
};
use rmcp::service::TxJsonRpcMessage;
use rmcp::{Peer, RoleServer};
use serde_json::Value;

use crate::downstream::tasks::TASK_METHODS;
use crate::sync::lock;

/// The method a task request has on its way through rmcp's HTTP transport, which would
/// decode `tools/call`, `tasks/get` and `tasks/cancel` into its own shapes
/// (`http/tasks.rs`): this prefix and the client's method.
pub(super) const TASK_METHOD_PREFIX: &str = "mcp-defer/task:";

/// The `tasks` capability mcp-defer offers a 2025-11-25 client, as JSON text.
pub(super) const TASKS_CAPABILITY: &str =
    r#"{"list":{},"cancel":{},"requests":{"tools":{"call":{}}}}"#;

/// The `_meta` key of a `tasks/result` answer naming its task (SEP-1686).
pub(super) const RELATED_TASK: &str = "io.modelcontextprotocol/related-task";

/// How long a status notification may wait for a client that is not reading.
const FORWARD_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(5);

/// `message` as a request rmcp hands on as it is, when it is one of the task requests:
/// a `tools/call` with `task`, or a `tasks/*` method of 2025-11-25.
pub(super) fn as_custom(message: &Value) -> Option<ClientJsonRpcMessage> {
    let method = message.get("method")?.as_str()?;
    let params = message.get("params");
    let task_call = method == "tools/call" && params.and_then(|p| p.get("task")).is_some();
    if !task_call && !TASK_METHODS.contains(&method) {
        return None;
    }
    let id = message.get("id").and_then(crate::lines::id_of)?;
    Some(JsonRpcMessage::Request(JsonRpcRequest::new(
        id,
        ClientRequest::CustomRequest(CustomRequest::new(method, params.cloned())),
    )))
}

/// The `initialize` answer of a 2025-11-25 session with the `tasks` capability in it;
/// `None` for every other message.
pub(super) fn offer(item: &TxJsonRpcMessage<RoleServer>) -> Option<Vec<u8>> {
    let JsonRpcMessage::Response(response) = item else {
        return None;
    };
    let ServerResult::InitializeResult(init) = &response.result else {
        return None;
    };
    if init.protocol_version != ProtocolVersion::V_2025_11_25 {
        return None;
    }
    let mut value = serde_json::to_value(item).ok()?;
    let capabilities = value.pointer_mut("/result/capabilities")?.as_object_mut()?;
    capabilities.insert(
        "tasks".to_owned(),
        serde_json::from_str(TASKS_CAPABILITY).ok()?,
    );
    serde_json::to_vec(&value).ok()
}

/// The client's id of the task `id` of `server`.
pub(super) fn outward(server: &str, id: &str) -> String {
    format!("{server}:{id}")
}

/// The server and the server's own id of the client's task id.
pub(super) fn inward(id: &str) -> Option<(&str, &str)> {
    id.split_once(':')
}

/// The 2025-11-25 tasks one session created, by our id: over HTTP a session reaches only
/// its own.
#[derive(Default)]
pub(crate) struct Tasks(Mutex<HashSet<String>>);

impl Tasks {
    /// Notes a task this session created, by our id.
    pub(crate) fn insert(&self, ours: String) {
        lock(&self.0).insert(ours);
    }

    /// Whether this session created the task `ours`.
    pub(crate) fn contains(&self, ours: &str) -> bool {
        lock(&self.0).contains(ours)
    }
}

/// Sends a server's `notifications/tasks/status` to a 2025-11-25 client, the task named
/// as the client knows it.
pub(super) async fn forward_status(peer: Peer<RoleServer>, server: String, mut task: Value) {
    let era = peer.peer_info().map(|info| info.protocol_version.clone());
    if era != Some(ProtocolVersion::V_2025_11_25) {
        return;
    }
    if let Some(id) = task.get_mut("taskId") {
        rename(id, &server);
    }
    let notification = ServerNotification::CustomNotification(CustomNotification::new(
        "notifications/tasks/status",
        Some(task),
    ));
    match tokio::time::timeout(FORWARD_TIMEOUT, peer.send_notification(notification)).await {
        Ok(Ok(())) => {}
        Ok(Err(err)) => tracing::debug!(%server, error = %err, "task status not delivered"),
        Err(_) => tracing::debug!(%server, "task status dropped: the client is not reading"),
    }
}

/// Makes the server's task id `id` ours ([`outward`]).
pub(super) fn rename(id: &mut Value, server: &str) {
    if let Value::String(theirs) = id {
        *theirs = outward(server, theirs);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_task_id_names_its_server_and_splits_at_the_first_colon() {
        let ours = outward("everything", "a:b-1");
        assert_eq!(ours, "everything:a:b-1");
        assert_eq!(inward(&ours), Some(("everything", "a:b-1")));
        assert_eq!(inward("no-server"), None);
    }

    #[test]
    fn only_task_requests_are_taken_as_they_are() {
        let call = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
                          "params": {"name": "x", "task": {"ttl": 1000}}});
        assert!(as_custom(&call).is_some());
        let plain = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
                           "params": {"name": "x"}});
        assert!(as_custom(&plain).is_none());
        for method in TASK_METHODS {
            let request = json!({"jsonrpc": "2.0", "id": "a", "method": method,
                                 "params": {"taskId": "s:1"}});
            assert!(as_custom(&request).is_some(), "{method}");
        }
    }
}
