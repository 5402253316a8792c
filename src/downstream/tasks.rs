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
//! decode it (`raw_answers.rs`). An HTTP server's answer is decoded by rmcp's transport; a
//! tool of an HTTP server is therefore listed without `execution`, so no client asks it
//! for a task (docs/design.md section 12).

use rmcp::model::{ClientRequest, CustomRequest, ServerResult};
use serde_json::Value;
use tokio_util::sync::CancellationToken;

use super::{CallOptions, DownstreamError, ServerHandle};

pub use super::raw_answers::TASK_METHODS;

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
