//! A `tools/call` to a stdio server sent around rmcp's client loop: the downstream half
//! of the thin call path (issue 31).
//!
//! Through rmcp a call goes from its task to rmcp's client loop, from there to the
//! child's writer task, and its answer from the child's reader (rmcp's loop again, which
//! decodes every answer into its untagged `ServerResult`, trying one variant after
//! another) back to the task over a oneshot. Here the call's task writes its request line
//! to the writer itself, under an id of ours, and the reader hands the answer line,
//! matched by that id, straight back to the task ([`RawAnswers`](super::raw_answers::RawAnswers),
//! the table that already hands task answers on raw). The task decodes it once, into the
//! `CallToolResult` the handler works on (output limit, redaction, structured content,
//! `isError`), or passes it on as written where its caller can take it
//! (`passed.rs`): one hand-off and one decode fewer a call, and with a passed answer
//! no decode or encode at all.
//!
//! Ids and progress tokens are strings, `mcp-defer-N`: rmcp numbers its own from 0, so
//! the two never meet on a connection. Everything else stays rmcp's: progress is routed by
//! the progress tap as it is read (the call's route is installed before its line goes),
//! log messages and the server's requests during the call reach the handler, task
//! requests are forwarded. A call cancelled or out of time sends `notifications/cancelled`
//! with its id, as rmcp does, and its answer, should it come, is dropped by rmcp as one to
//! a request it does not know. A connection ending drops the table, which fails the calls
//! waiting on it as rmcp's closed transport did.
//!
//! Only a connection made with the `initialize` handshake takes this path: to a server
//! speaking 2026-07-28 rmcp adds per-request `_meta` and ties the server's requests to the
//! requests in flight it knows of.

use std::sync::atomic::{AtomicU64, Ordering};

use rmcp::RoleClient;
use rmcp::model::{
    CallToolResult, CancelledNotification, CancelledNotificationParam, ClientNotification,
    ClientRequest, CustomResult, ErrorData, GetMeta, JsonRpcMessage, NumberOrString, ProgressToken,
    RequestId, ServerResult,
};
use rmcp::service::{ServiceError, TxJsonRpcMessage};
use serde::Deserialize;
use serde_json::Value;
use tokio::sync::{mpsc, oneshot};

use super::passed::{PassedAnswer, Passing};
use super::raw_answers::{RawAnswer, RawCalls};
use crate::sync::lock;

/// The way from calls' tasks to one stdio server: its writer, and the table its reader
/// hands answers back through.
#[derive(Clone)]
pub(crate) struct RawLink {
    calls: RawCalls,
    /// Weak: rmcp closing the transport closes the server's stdin, calls in flight or not.
    out: mpsc::WeakUnboundedSender<Vec<u8>>,
}

impl std::fmt::Debug for RawLink {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RawLink").finish_non_exhaustive()
    }
}

/// One call sent raw: its id and progress token, and its answer to come. Dropping it
/// forgets the answer.
pub(super) struct RawCall {
    pub(super) id: RequestId,
    pub(super) progress_token: ProgressToken,
    answer: oneshot::Receiver<RawAnswer>,
    link: RawLink,
}

/// A call's answer as the connection gives it.
#[derive(Debug)]
#[expect(
    clippy::large_enum_variant,
    reason = "moved a few times a call; boxing would allocate for every typed answer"
)]
pub(super) enum Answer {
    Decoded(ServerResult),
    Passed(PassedAnswer),
}

/// The answer line as far as the call needs it; other keys (`jsonrpc`, `id`) are skipped.
#[derive(Deserialize)]
struct Decoded {
    result: Option<CallToolResult>,
    error: Option<ErrorData>,
}

impl RawLink {
    pub(super) fn new(calls: RawCalls, out: mpsc::WeakUnboundedSender<Vec<u8>>) -> RawLink {
        RawLink { calls, out }
    }

    /// A call with an id and progress token of its own, waiting for its answer; nothing is
    /// sent yet ([`RawCall::send`]), so its progress route can be installed first.
    pub(super) fn start(&self) -> RawCall {
        static NEXT: AtomicU64 = AtomicU64::new(1);
        let n = NEXT.fetch_add(1, Ordering::Relaxed);
        let name: std::sync::Arc<str> = format!("mcp-defer-{n}").into();
        let id = RequestId::String(name.clone());
        let (tx, answer) = oneshot::channel();
        lock(&self.calls).insert(id.clone(), tx);
        RawCall {
            id,
            progress_token: ProgressToken(NumberOrString::String(name)),
            answer,
            link: self.clone(),
        }
    }

    fn write(&self, message: &TxJsonRpcMessage<RoleClient>) -> Result<(), ServiceError> {
        let mut line = serde_json::to_vec(message).map_err(|err| {
            ServiceError::McpError(ErrorData::internal_error(
                format!("cannot encode the request: {err}"),
                None,
            ))
        })?;
        line.push(b'\n');
        let out = self.out.upgrade().ok_or(ServiceError::TransportClosed)?;
        out.send(line).map_err(|_| ServiceError::TransportClosed)
    }
}

impl RawCall {
    /// Writes `request` (a `tools/call`) to the server under this call's id, with its
    /// progress token in `_meta` as rmcp would put it.
    ///
    /// # Errors
    /// [`ServiceError::TransportClosed`] when the server's stdin is closed.
    pub(super) fn send(&self, mut request: ClientRequest) -> Result<(), ServiceError> {
        (request.get_meta_mut()).set_progress_token(self.progress_token.clone());
        tracing::debug!(id = %self.id, "tools/call sent around rmcp's loop");
        self.link
            .write(&JsonRpcMessage::request(request, self.id.clone()))
    }

    /// The server's answer: passed as written where `passing` allows it, else a
    /// `CallToolResult` as rmcp would decode it; the server's JSON-RPC error, or
    /// [`ServiceError::TransportClosed`] when the connection ended first.
    pub(super) async fn answer(
        &mut self,
        passing: Option<Passing>,
    ) -> Result<Answer, ServiceError> {
        let line = match (&mut self.answer).await {
            Err(_) => return Err(ServiceError::TransportClosed),
            Ok(RawAnswer::TooLong(error)) => return Err(ServiceError::McpError(error)),
            Ok(RawAnswer::Line(line)) => line,
        };
        let line = match passing {
            Some(passing) => match PassedAnswer::read(line, passing) {
                Ok(passed) => return Ok(Answer::Passed(passed)),
                Err(line) => line,
            },
            None => line,
        };
        decode(&line).map(Answer::Decoded)
    }

    /// Tells the server the call is cancelled, with `reason`, as rmcp's request handle does.
    pub(super) fn cancel(self, reason: &str) {
        let notification = ClientNotification::CancelledNotification(CancelledNotification::new(
            CancelledNotificationParam::new(Some(self.id.clone()), Some(reason.to_owned())),
        ));
        let _ = self.link.write(&JsonRpcMessage::notification(notification));
    }
}

impl Drop for RawCall {
    fn drop(&mut self) {
        lock(&self.link.calls).remove(&self.id);
    }
}

/// The answer on `line`. A result that is no `CallToolResult` comes back as rmcp's
/// untagged decoding leaves it for the caller to refuse (`CustomResult`), and so does a
/// line that is no answer at all.
fn decode(line: &str) -> Result<ServerResult, ServiceError> {
    match serde_json::from_str::<Decoded>(line) {
        Ok(Decoded {
            error: Some(error), ..
        }) => Err(ServiceError::McpError(error)),
        Ok(Decoded {
            result: Some(result),
            ..
        }) => Ok(ServerResult::CallToolResult(result)),
        Ok(_) | Err(_) => {
            let value: Value = serde_json::from_str(line).unwrap_or_default();
            let result = value.get("result").cloned().unwrap_or_default();
            Ok(ServerResult::CustomResult(CustomResult(result)))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An answer decodes to what rmcp's loop would have given the call: the result, the
    /// server's error with its code, or something the caller refuses as unexpected.
    #[test]
    fn an_answer_line_decodes_as_rmcp_would() {
        let ok = decode(
            r#"{"jsonrpc":"2.0","id":"mcp-defer-1","result":{"content":[{"type":"text","text":"3"}],"structuredContent":{"sum":3},"isError":false}}"#,
        );
        let Ok(ServerResult::CallToolResult(result)) = ok else {
            panic!("a result: {ok:?}");
        };
        assert_eq!(
            result.structured_content,
            Some(serde_json::json!({"sum": 3}))
        );
        assert_eq!(result.is_error, Some(false));
        assert_eq!(result.content.len(), 1);
        let err = decode(
            r#"{"jsonrpc":"2.0","id":"mcp-defer-1","error":{"code":-32602,"message":"unknown tool"}}"#,
        );
        let Err(ServiceError::McpError(error)) = err else {
            panic!("an error: {err:?}");
        };
        assert_eq!(error.code.0, -32602);
        assert_eq!(error.message, "unknown tool");
        for line in [
            r#"{"jsonrpc":"2.0","id":"mcp-defer-1","result":{}}"#,
            r#"{"jsonrpc":"2.0","id":"mcp-defer-1","result":{"resultType":"input_required"}}"#,
            r#"{"jsonrpc":"2.0","id":"mcp-defer-1"}"#,
            r#"{"jsonrpc":"2.0","id":"mcp-defer-1","result":{"content":"x"}}"#,
        ] {
            assert!(
                matches!(decode(line), Ok(ServerResult::CustomResult(_))),
                "{line}"
            );
        }
    }
}
