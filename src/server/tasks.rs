//! 2025-11-25 tasks (SEP-1686) through mcp-defer: a task-augmented `tools/call` goes to the
//! tool's server with its `task`, and `tasks/get`, `tasks/result`, `tasks/cancel` go to the
//! server that made the task; `tasks/list` gathers every connected server's tasks.
//!
//! rmcp 3.11 knows none of these shapes (its tasks are the 2026-07-28 SEP-2663 ones, its
//! `CallToolRequestParams` has no `task`), so each request reaches the handler as rmcp's
//! `CustomRequest` with the client's method and params as written (`stdio/` frames them
//! so, [`as_custom`]; over HTTP the gate renames the method, `http/tasks.rs`), and each
//! answer leaves as `CustomResult`, the server's JSON with only task ids changed. The
//! `tasks` capability is added to a 2025-11-25 `initialize` answer on the same wire
//! ([`offer`], `http/tasks.rs`): rmcp's `ServerCapabilities` has no field for it.
//!
//! Over HTTP many clients share one connection to each server, so one task space on it: a
//! session reaches only the tasks it created (`Session::tasks`); over stdio the one client
//! reaches every task. Status notifications reach the stdio client only (they are
//! optional in SEP-1686; over HTTP a client polls `tasks/get`).
//!
//! A task id is `<server>:<the server's id>` ([`outward`]): the client's id names the server
//! that holds the task, so `tasks/get` after a reload, for a task listed by `tasks/list`
//! and never created through this session, or from another session routes without a
//! table to keep, expire or lose. Server names have no `:` (config validation), so the
//! first `:` splits it.

use rmcp::model::{
    ClientJsonRpcMessage, ClientRequest, CustomNotification, CustomRequest, CustomResult,
    ErrorCode, JsonRpcMessage, JsonRpcRequest, ProtocolVersion, ServerNotification, ServerResult,
};
use rmcp::service::{RequestContext, TxJsonRpcMessage};
use rmcp::{ErrorData as McpError, Peer, RoleServer};
use serde_json::{Value, json};

use super::passthrough::downstream_error;
use super::{State, meta};
use crate::downstream::tasks::TASK_METHODS;
use crate::downstream::{DownstreamError, ServerHandle};
use crate::sync::lock;

/// The method a task request has on its way through rmcp's HTTP transport, which would
/// decode `tools/call`, `tasks/get` and `tasks/cancel` into its own shapes
/// (`http/tasks.rs`): this prefix and the client's method.
pub(super) const TASK_METHOD_PREFIX: &str = "mcp-defer/task:";

/// The `tasks` capability mcp-defer offers a 2025-11-25 client, as JSON text.
pub(super) const TASKS_CAPABILITY: &str =
    r#"{"list":{},"cancel":{},"requests":{"tools":{"call":{}}}}"#;

/// The `_meta` key of a `tasks/result` answer naming its task (SEP-1686).
const RELATED_TASK: &str = "io.modelcontextprotocol/related-task";

/// How long a status notification may wait for a client that is not reading.
const FORWARD_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(5);

/// The most `tasks/list` pages read from one server for one client `tasks/list`.
const MAX_LIST_PAGES: usize = 100;

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
fn inward(id: &str) -> Option<(&str, &str)> {
    id.split_once(':')
}

impl State {
    /// Answers a task request ([`as_custom`]); `None` for any other custom method.
    pub(super) async fn task_request(
        &self,
        request: &CustomRequest,
        context: &RequestContext<RoleServer>,
    ) -> Option<Result<CustomResult, McpError>> {
        let method = request.method.as_str();
        let method = method.strip_prefix(TASK_METHOD_PREFIX).unwrap_or(method);
        let params = request.params.clone().unwrap_or_else(|| json!({}));
        let answer = match method {
            "tools/call" => self.task_call(params, context).await,
            "tasks/list" => Ok(self.task_list(context).await),
            method if TASK_METHODS.contains(&method) => {
                self.task_method(method, params, context).await
            }
            _ => return None,
        };
        Some(answer.map(CustomResult))
    }

    /// A task-augmented `tools/call`: the server's answer (its `CreateTaskResult`, or the
    /// plain result of a server that ignored `task`) with the task's id made ours.
    async fn task_call(
        &self,
        mut params: Value,
        context: &RequestContext<RoleServer>,
    ) -> Result<Value, McpError> {
        let name = params
            .get("name")
            .and_then(Value::as_str)
            .ok_or_else(|| McpError::invalid_params("tools/call needs a `name`", None))?;
        let name = meta::clean_name(name)
            .map_err(|err| McpError::invalid_params(err.to_string(), None))?
            .to_owned();
        if meta::MetaTool::from_name(&name).is_some() {
            // SEP-1686: a tool without `taskSupport` called as a task is -32601.
            return Err(McpError::new(
                ErrorCode::METHOD_NOT_FOUND,
                format!("{name} does not run as a task; call it without `task`"),
                None,
            ));
        }
        let entry = self.entry_waiting(&name).await.and_then(|id| {
            let catalog = self.shared.registry.catalog();
            let entry = catalog.get(id).filter(|e| !e.gone)?;
            Some((entry.server_index, entry.original_name().to_owned()))
        });
        let Some((server, original)) = entry else {
            let message = self.shared.unknown_message(&name).await;
            return Err(McpError::invalid_params(message, None));
        };
        let Some(handle) = self.shared.handle(server) else {
            return Err(McpError::invalid_params("Unknown server.", None));
        };
        set(&mut params, "name", original);
        let mut answer = match handle
            .forward("tools/call", Some(params), context.ct.clone())
            .await
        {
            Ok(answer) => answer,
            Err(err @ DownstreamError::Service { code: Some(_), .. }) => {
                return Err(downstream_error(err));
            }
            // What went wrong on the way is a result naming the server, as for any call
            // (DESIGN.md invariant 4).
            Err(err) => {
                let result =
                    meta::error_result(crate::redact::redact(&err.to_string()).into_owned());
                return Ok(serde_json::to_value(result).unwrap_or_default());
            }
        };
        if let Some(id) = answer.pointer_mut("/task/taskId") {
            rename(id, handle.name());
            if let Value::String(id) = id {
                lock(&self.session.tasks).insert(id.clone());
            }
        }
        Ok(answer)
    }

    /// `tasks/get`, `tasks/result` or `tasks/cancel`, sent to the task's server under its
    /// own id; the answer names the task by our id again.
    async fn task_method(
        &self,
        method: &str,
        mut params: Value,
        context: &RequestContext<RoleServer>,
    ) -> Result<Value, McpError> {
        let ours = params
            .get("taskId")
            .and_then(Value::as_str)
            .ok_or_else(|| McpError::invalid_params(format!("{method} needs a `taskId`"), None))?
            .to_owned();
        // What the errors echo of the id: a caller's id may be any length.
        let shown = crate::printable::excerpt(&ours);
        let unknown = || {
            McpError::invalid_params(
                format!(
                    "Unknown task {shown:?}: mcp-defer names each task `<server>:<id>`; \
                     take the id from the task's CreateTaskResult or tasks/list"
                ),
                None,
            )
        };
        if !self.sees_task(&ours) {
            return Err(unknown());
        }
        let (server, theirs) = inward(&ours).ok_or_else(unknown)?;
        let handle = self.handle_named(server).ok_or_else(unknown)?;
        if !handle.is_connected() {
            return Err(McpError::invalid_params(
                format!(
                    "Unknown task {shown:?}: server '{server}' is not running now, and its \
                     tasks ended with it"
                ),
                None,
            ));
        }
        set(&mut params, "taskId", theirs.to_owned());
        let mut answer = handle
            .forward(method, Some(params), context.ct.clone())
            .await
            .map_err(downstream_error)?;
        if let Some(id) = answer.get_mut("taskId") {
            rename(id, server);
        }
        if let Some(id) = answer
            .get_mut("_meta")
            .and_then(|m| m.get_mut(RELATED_TASK))
            .and_then(|t| t.get_mut("taskId"))
        {
            rename(id, server);
        }
        Ok(answer)
    }

    /// Every connected server's tasks, each server's pages read to the end, in server
    /// order. A server without `tasks/list` (it answers an error) has none to show.
    async fn task_list(&self, context: &RequestContext<RoleServer>) -> Value {
        let mut tasks = Vec::new();
        for handle in self.shared.handles().iter().filter(|h| h.is_connected()) {
            let mut cursor: Option<Value> = None;
            for _ in 0..MAX_LIST_PAGES {
                let params = match &cursor {
                    Some(cursor) => json!({"cursor": cursor}),
                    None => json!({}),
                };
                let page = match handle
                    .forward("tasks/list", Some(params), context.ct.clone())
                    .await
                {
                    Ok(page) => page,
                    Err(err) => {
                        tracing::debug!(server = handle.name(), error = %err, "no tasks/list");
                        break;
                    }
                };
                if let Some(Value::Array(page_tasks)) = page.get("tasks") {
                    for task in page_tasks {
                        let mut task = task.clone();
                        if let Some(id) = task.get_mut("taskId") {
                            rename(id, handle.name());
                        }
                        if task["taskId"].as_str().is_some_and(|id| self.sees_task(id)) {
                            tasks.push(task);
                        }
                    }
                }
                cursor = page.get("nextCursor").filter(|c| !c.is_null()).cloned();
                if cursor.is_none() {
                    break;
                }
            }
        }
        json!({"tasks": tasks})
    }

    /// Whether this session may reach the task `ours`: over stdio, every task (one
    /// client); over HTTP, where many clients share one connection to each server (and so
    /// one task space on it), only the tasks this session created.
    fn sees_task(&self, ours: &str) -> bool {
        self.shared.client.one_client() || lock(&self.session.tasks).contains(ours)
    }

    fn handle_named(&self, name: &str) -> Option<ServerHandle> {
        self.shared
            .handles()
            .iter()
            .find(|h| h.name() == name)
            .cloned()
    }
}

/// Sets `key` of the params object `params` (checked to be one by the caller's `get`).
fn set(params: &mut Value, key: &str, value: String) {
    if let Some(object) = params.as_object_mut() {
        object.insert(key.to_owned(), Value::String(value));
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
fn rename(id: &mut Value, server: &str) {
    if let Value::String(theirs) = id {
        *theirs = outward(server, theirs);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
