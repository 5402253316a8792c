//! The answers read off a connection's line before rmcp decodes them, by the id of the
//! request they answer.
//!
//! Two kinds: the answers to requests rmcp sent whose 2025-11-25 fields its decoding would
//! drop (`tools/list`, the task requests of `tasks.rs`), handed to rmcp as `CustomResult`,
//! the raw JSON (on stdio by [`super::child_transport`], over HTTP by `http_raw.rs`); and,
//! on a stdio connection, the answers to calls sent around rmcp's loop (`raw_call.rs`),
//! handed back to the call's own task as the line read.

use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex};

use rmcp::RoleClient;
use rmcp::model::{
    ClientNotification, ClientRequest, CustomResult, ErrorData, JsonRpcMessage, JsonRpcResponse,
    RequestId, ServerJsonRpcMessage, ServerResult,
};
use rmcp::service::TxJsonRpcMessage;
use serde_json::Value;
use tokio::sync::oneshot;

use crate::protocol::method;
use crate::sync::lock;

/// The task methods of 2025-11-25 (SEP-1686), each forwarded as the client wrote it.
pub const TASK_METHODS: &[&str] = &[
    method::TASKS_GET,
    method::TASKS_RESULT,
    method::TASKS_LIST,
    method::TASKS_CANCEL,
];

/// The ids of requests whose answers are taken raw, on one connection: requests rmcp sent
/// whose answers it gets as `CustomResult` ([`RawAnswers::take`]), and, on a stdio
/// connection, the calls sent around rmcp's loop whose answer lines go back to their own
/// task (`raw_call.rs`, [`RawAnswers::take_line`]).
#[derive(Debug, Default)]
pub(super) struct RawAnswers {
    noted: HashSet<RequestId>,
    calls: RawCalls,
}

/// The calls sent raw on one stdio connection and not answered yet, each with the way
/// back to its task; shared by the connection's reader and the calls' tasks.
pub(super) type RawCalls = Arc<Mutex<HashMap<RequestId, oneshot::Sender<RawAnswer>>>>;

/// What the reader hands a raw call's task.
#[derive(Debug)]
pub(super) enum RawAnswer {
    /// The answer's line, as read (lone surrogates repaired).
    Line(String),
    /// An answer over `max_message_bytes`: the error rmcp would have been given for it.
    TooLong(ErrorData),
}

/// The connection is gone (its transport owns this): calls still waiting fail as closed,
/// and one sent after finds the server's stdin closed (`raw_call.rs`).
impl Drop for RawAnswers {
    fn drop(&mut self) {
        lock(&self.calls).clear();
    }
}

/// Where a line read from a stdio server goes ([`RawAnswers::take_line`]).
pub(super) enum Taken {
    /// The raw answer to a request rmcp sent, for rmcp.
    Rmcp(Box<ServerJsonRpcMessage>),
    /// The answer to a raw call: the line goes to its task.
    Call(oneshot::Sender<RawAnswer>),
    /// Any other line, which rmcp decodes as usual.
    No,
}

impl RawAnswers {
    /// The table of raw calls this connection's reader hands answers to.
    pub(super) fn calls(&self) -> RawCalls {
        self.calls.clone()
    }

    /// Notes `item` when it is a request whose answer must be read raw: `tools/list` (its
    /// tools' `execution`) and the custom requests of `ServerHandle::forward` (`tasks.rs`).
    pub(super) fn note(&mut self, item: &TxJsonRpcMessage<RoleClient>) {
        // A request we cancel (the client did, or its time ran out) may never be answered.
        if let JsonRpcMessage::Notification(notification) = item
            && let ClientNotification::CancelledNotification(cancelled) = &notification.notification
            && let Some(id) = &cancelled.params.request_id
        {
            self.noted.remove(id);
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
                self.noted.insert(request.id.clone());
            }
        }
    }

    /// The answer on `line` as `CustomResult` (its `result` as it is), when it answers a
    /// noted request; `None` for every other line, which rmcp decodes as usual. An error
    /// answer is left to rmcp: its shape is the same in every revision.
    pub(super) fn take(&mut self, line: &str) -> Option<ServerJsonRpcMessage> {
        if self.noted.is_empty() {
            return None;
        }
        let id = crate::lines::scan_id(line.as_bytes())?;
        self.take_noted(id, line)
    }

    /// Where `line`, read from a stdio server, goes: to a raw call's task, to rmcp as a
    /// noted request's raw answer, or to rmcp's decoding. The id is read once, from the
    /// line's text; only a noted answer is parsed here.
    pub(super) fn take_line(&mut self, line: &str) -> Taken {
        let calls = !lock(&self.calls).is_empty();
        if !calls && self.noted.is_empty() {
            return Taken::No;
        }
        let Some(id) = crate::lines::scan_id(line.as_bytes()) else {
            return Taken::No;
        };
        // Our ids are strings no server request uses (`raw_call.rs`): the line is its answer.
        if calls && let Some(call) = lock(&self.calls).remove(&id) {
            return Taken::Call(call);
        }
        self.take_noted(id, line)
            .map_or(Taken::No, |message| Taken::Rmcp(Box::new(message)))
    }

    /// The task of the raw call `id`, which an over-long line answered.
    pub(super) fn take_call(&mut self, id: &RequestId) -> Option<oneshot::Sender<RawAnswer>> {
        lock(&self.calls).remove(id)
    }

    fn take_noted(&mut self, id: RequestId, line: &str) -> Option<ServerJsonRpcMessage> {
        if !self.noted.contains(&id) {
            return None;
        }
        let mut value: Value = serde_json::from_str(line).ok()?;
        let object = value.as_object_mut()?;
        // A request of the server's that happens to reuse the number is not an answer.
        if object.contains_key("method") {
            return None;
        }
        self.noted.remove(&id);
        let result = object.remove("result")?;
        Some(JsonRpcMessage::Response(JsonRpcResponse {
            jsonrpc: Default::default(),
            id,
            result: ServerResult::CustomResult(CustomResult(result)),
        }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A raw call's answer goes to its task, once; a noted request's answer to rmcp as
    /// `CustomResult`; a server's request, a notification and an unknown id to rmcp's
    /// decoding.
    #[test]
    fn each_line_goes_where_its_id_says() {
        let mut answers = RawAnswers::default();
        let call = RequestId::String("mcp-defer-7".into());
        let (tx, _rx) = oneshot::channel();
        lock(&answers.calls()).insert(call.clone(), tx);
        let listed: TxJsonRpcMessage<RoleClient> = JsonRpcMessage::request(
            ClientRequest::ListToolsRequest(Default::default()),
            RequestId::Number(3),
        );
        answers.note(&listed);
        let answer = r#"{"jsonrpc":"2.0","id":"mcp-defer-7","result":{"content":[]}}"#;
        assert!(matches!(answers.take_line(answer), Taken::Call(_)));
        assert!(matches!(answers.take_line(answer), Taken::No), "once");
        for line in [
            r#"{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"mcp-defer-7","progress":1}}"#,
            r#"{"jsonrpc":"2.0","id":3,"method":"sampling/createMessage","params":{}}"#,
            r#"{"jsonrpc":"2.0","id":4,"result":{}}"#,
        ] {
            assert!(matches!(answers.take_line(line), Taken::No), "{line}");
        }
        let Taken::Rmcp(message) =
            answers.take_line(r#"{"jsonrpc":"2.0","id":3,"result":{"tools":[]}}"#)
        else {
            panic!("the list's answer, raw");
        };
        assert!(matches!(
            *message,
            JsonRpcMessage::Response(JsonRpcResponse {
                result: ServerResult::CustomResult(_),
                ..
            })
        ));
    }

    /// Calls still waiting when the connection's table goes fail as closed.
    #[test]
    fn a_dropped_connection_fails_its_waiting_calls() {
        let answers = RawAnswers::default();
        let calls = answers.calls();
        let (tx, mut rx) = oneshot::channel();
        lock(&calls).insert(RequestId::String("mcp-defer-1".into()), tx);
        drop(answers);
        assert!(matches!(
            rx.try_recv(),
            Err(oneshot::error::TryRecvError::Closed)
        ));
        assert!(lock(&calls).is_empty());
    }
}
