//! A request id the client reuses after cancelling the request that had it, kept apart
//! from that request inside rmcp: over stdio here ([`ReusedIds`], typed messages), over
//! HTTP in [`http`] (the body's bytes; the session's ids are kept in `http/expiry.rs`).
//!
//! rmcp keys a request's answer slot by its id, and a cancel frees that slot: when the
//! client then sends a new request with the same id while the cancelled call is still
//! winding down, the cancelled call's answer ("the call was cancelled") takes the new
//! request's slot and is written under its id, and the new request's own answer is dropped
//! as if it were the cancelled one's (seen with `tests/framing.rs` and `tests/http_ops.rs`).
//! So a request reusing a cancelled id is handed to rmcp under an alias of our own
//! ([`alias`]) and its answer is written back under the client's id; a cancel of it is
//! aliased the same way. The client sees one answer per request, the right one, and none
//! for the cancelled call (MCP: a cancelled request is not answered).

use std::collections::{HashMap, HashSet, VecDeque};

use rmcp::model::{ClientJsonRpcMessage, ClientNotification, JsonRpcMessage, RequestId};
use rmcp::service::TxJsonRpcMessage;

pub(in crate::server) mod http;

/// The alias prefix: a string id no client is expected to use.
const PREFIX: &str = "mcp-defer-reused-";

/// The `n`th alias given in a session.
pub(in crate::server) fn alias(n: u64) -> String {
    format!("{PREFIX}{n}")
}

/// Cancelled ids remembered, at most: a client reuses an id right after cancelling it, if
/// at all, and ids are otherwise unique in a session (MCP), so old ones can go.
const REMEMBERED: usize = 1024;

#[derive(Debug, Default)]
pub(in crate::server) struct ReusedIds {
    /// Ids the client cancelled, oldest first (and as a set, to look up).
    cancelled: VecDeque<RequestId>,
    cancelled_set: HashSet<RequestId>,
    /// Alias given to rmcp -> the client's id, while the aliased request is unanswered.
    aliases: HashMap<RequestId, RequestId>,
    /// The client's id -> its alias, for a cancel of the aliased request.
    by_client: HashMap<RequestId, RequestId>,
    next: u64,
}

impl ReusedIds {
    /// Rewrites a message from the client on its way to rmcp: a request reusing a cancelled
    /// id gets an alias; a cancel names the alias of the request it cancels.
    pub(in crate::server) fn inbound(&mut self, message: &mut ClientJsonRpcMessage) {
        match message {
            JsonRpcMessage::Request(request) if self.cancelled_set.contains(&request.id) => {
                self.next += 1;
                let alias = RequestId::String(alias(self.next).into());
                self.aliases.insert(alias.clone(), request.id.clone());
                self.by_client.insert(request.id.clone(), alias.clone());
                request.id = alias;
            }
            JsonRpcMessage::Notification(notification) => {
                if let ClientNotification::CancelledNotification(cancelled) =
                    &mut notification.notification
                    && let Some(id) = cancelled.params.request_id.clone()
                {
                    self.remember(id.clone());
                    if let Some(alias) = self.by_client.remove(&id) {
                        self.aliases.remove(&alias);
                        cancelled.params.request_id = Some(alias);
                    }
                }
            }
            _ => {}
        }
    }

    /// Rewrites an answer from rmcp on its way to the client: an alias back to the
    /// client's id.
    pub(in crate::server) fn outbound(&mut self, message: &mut TxJsonRpcMessage<rmcp::RoleServer>) {
        let id = match message {
            JsonRpcMessage::Response(response) => &mut response.id,
            JsonRpcMessage::Error(error) => match &mut error.id {
                Some(id) => id,
                None => return,
            },
            _ => return,
        };
        if let Some(client) = self.aliases.remove(id) {
            self.by_client.remove(&client);
            *id = client;
        }
    }

    fn remember(&mut self, id: RequestId) {
        if self.cancelled_set.insert(id.clone()) {
            self.cancelled.push_back(id);
            if self.cancelled.len() > REMEMBERED
                && let Some(old) = self.cancelled.pop_front()
            {
                self.cancelled_set.remove(&old);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn message(value: serde_json::Value) -> ClientJsonRpcMessage {
        serde_json::from_value(value).unwrap_or_else(|e| panic!("{e}"))
    }

    fn id_of(message: &ClientJsonRpcMessage) -> Option<RequestId> {
        match message {
            JsonRpcMessage::Request(request) => Some(request.id.clone()),
            _ => None,
        }
    }

    #[test]
    fn only_a_request_reusing_a_cancelled_id_is_aliased_and_its_answer_comes_back() {
        let mut ids = ReusedIds::default();
        let ping =
            |id: i64| message(serde_json::json!({"jsonrpc": "2.0", "id": id, "method": "ping"}));
        let mut first = ping(7);
        ids.inbound(&mut first);
        assert_eq!(id_of(&first), Some(RequestId::Number(7)));
        let mut cancel = message(serde_json::json!({"jsonrpc": "2.0",
            "method": "notifications/cancelled", "params": {"requestId": 7}}));
        ids.inbound(&mut cancel);
        let mut again = ping(7);
        ids.inbound(&mut again);
        let alias = id_of(&again).unwrap_or_else(|| panic!("a request"));
        assert_ne!(alias, RequestId::Number(7));
        let mut answer: TxJsonRpcMessage<rmcp::RoleServer> = serde_json::from_value(
            serde_json::json!({"jsonrpc": "2.0", "id": serde_json::to_value(&alias).unwrap_or_default(), "result": {}}),
        )
        .unwrap_or_else(|e| panic!("{e}"));
        ids.outbound(&mut answer);
        match answer {
            JsonRpcMessage::Response(response) => assert_eq!(response.id, RequestId::Number(7)),
            other => panic!("{other:?}"),
        }
        let mut other = ping(8);
        ids.inbound(&mut other);
        assert_eq!(id_of(&other), Some(RequestId::Number(8)));
    }
}
