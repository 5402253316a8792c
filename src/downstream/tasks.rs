//! Requests whose answers must reach the client as the server wrote them: the 2025-11-25
//! tasks of SEP-1686 (a task-augmented `tools/call`, `tasks/get`, `tasks/result`,
//! `tasks/list`, `tasks/cancel`) and `tools/list`, whose tools carry `execution`.
//!
//! rmcp 3.11 decodes every answer into its untagged `ServerResult`, and for these that
//! loses fields: a 2025-11-25 `tasks/get` answer decodes as its 2026-07-28
//! `GetTaskResult` (`ttl` and `pollInterval` dropped, `resultType` added), and its `Tool`
//! has no `execution`. So such a request is sent as rmcp's `CustomRequest` with the
//! client's own method and params, and a stdio server's answer to it is read off the line
//! by [`super::child_transport`] into `CustomResult`, the raw JSON, before rmcp could
//! decode it ([`RawAnswers`]). An HTTP server's answer is decoded by rmcp's transport; a
//! tool of an HTTP server is therefore listed without `execution`, so no client asks it
//! for a task (docs/design.md section 12).

use std::collections::HashSet;

use rmcp::RoleClient;
use rmcp::model::{
    ClientNotification, ClientRequest, CustomRequest, CustomResult, JsonRpcMessage,
    JsonRpcResponse, RequestId, ServerJsonRpcMessage, ServerResult,
};
use rmcp::service::TxJsonRpcMessage;
use serde_json::Value;
use tokio_util::sync::CancellationToken;

use super::{CallOptions, DownstreamError, ServerHandle};
use crate::protocol::method;

/// The task methods of 2025-11-25 (SEP-1686), each forwarded as the client wrote it.
pub const TASK_METHODS: &[&str] = &[
    method::TASKS_GET,
    method::TASKS_RESULT,
    method::TASKS_LIST,
    method::TASKS_CANCEL,
];

/// The ids of requests whose answers are taken raw, on one stdio connection.
#[derive(Debug, Default)]
pub(super) struct RawAnswers(HashSet<RequestId>);

impl RawAnswers {
    /// Notes `item` when it is a request whose answer must be read raw: `tools/list` (its
    /// tools' `execution`) and the custom requests of [`ServerHandle::forward`].
    pub(super) fn note(&mut self, item: &TxJsonRpcMessage<RoleClient>) {
        // A request we cancel (the client did, or its time ran out) may never be answered.
        if let JsonRpcMessage::Notification(notification) = item
            && let ClientNotification::CancelledNotification(cancelled) = &notification.notification
            && let Some(id) = &cancelled.params.request_id
        {
            self.0.remove(id);
        }
        if let JsonRpcMessage::Request(request) = item {
            let raw = match &request.request {
                ClientRequest::ListToolsRequest(_) => true,
                ClientRequest::CustomRequest(custom) => {
                    custom.method == method::TOOLS_CALL
                        || TASK_METHODS.contains(&custom.method.as_str())
                }
                _ => false,
            };
            if raw {
                self.0.insert(request.id.clone());
            }
        }
    }

    /// The answer on `line` as `CustomResult` (its `result` as it is), when it answers a
    /// noted request; `None` for every other line, which rmcp decodes as usual. An error
    /// answer is left to rmcp: its shape is the same in every revision.
    pub(super) fn take(&mut self, line: &str) -> Option<ServerJsonRpcMessage> {
        if self.0.is_empty() {
            return None;
        }
        let id = crate::lines::scan_id(line.as_bytes())?;
        if !self.0.contains(&id) {
            return None;
        }
        let mut value: Value = serde_json::from_str(line).ok()?;
        let object = value.as_object_mut()?;
        // A request of the server's that happens to reuse the number is not an answer.
        if object.contains_key("method") {
            return None;
        }
        self.0.remove(&id);
        let result = object.remove("result")?;
        Some(JsonRpcMessage::Response(JsonRpcResponse {
            jsonrpc: Default::default(),
            id,
            result: ServerResult::CustomResult(CustomResult(result)),
        }))
    }
}

impl ServerHandle {
    /// Sends `method` with `params` as they are and returns the server's `result` as JSON,
    /// within the server's `tool_timeout` (a `tasks/result` waits for the task's end).
    ///
    /// # Errors
    /// As [`ServerHandle::call`]; the server's own JSON-RPC error comes back as
    /// [`DownstreamError::Service`] with its code.
    pub async fn forward(
        &self,
        method: &str,
        params: Option<Value>,
        cancel: CancellationToken,
    ) -> Result<Value, DownstreamError> {
        // A task-augmented `tools/call` meets the same guard as a plain one: only a tool
        // the running server lists (`ServerHandle::request`).
        let request = ClientRequest::CustomRequest(CustomRequest::new(method, params));
        let result = self
            .request(request, method, CallOptions::from(cancel))
            .await?;
        Ok(match result {
            ServerResult::CustomResult(raw) => raw.0,
            // Decoded by rmcp (an HTTP server): the closest we have.
            other => serde_json::to_value(other).unwrap_or(Value::Null),
        })
    }

    /// Whether the server is connected now: `tasks/list` asks only those (a stopped
    /// server's tasks are gone with it, and listing must not start one).
    pub fn is_connected(&self) -> bool {
        self.live().is_some()
    }
}
