//! What the relay remembers of its session, so a new hub can take it over: the client's
//! handshake and log level, the tools it has been listed (in order), and its requests still
//! unanswered, with the text of those a new hub is simply sent again ([`RESENT`]).

use std::collections::{BTreeMap, HashSet};

use serde::Deserialize;
use serde_json::{Value, json};

/// The relay's own request ids: no client picks these, and their answers stay here.
pub(super) const RELAY_ID_PREFIX: &str = "mcp-defer-relay-";

/// The requests a new hub is sent again, as the client sent them, when the hub that had
/// them went away unanswered: they change nothing a retry could double. `initialize`: a
/// session that joined a hub on its way out (its grace ended, or it was killed, as the
/// session connected) starts on the next one; `tools/list`: the new hub lists the tools
/// the session had; `subscriptions/listen`: a stream that outlives any one hub.
const RESENT: &[&str] = &["initialize", "tools/list", "subscriptions/listen"];

/// A request of the client's the hub has not answered yet.
pub(super) struct Pending {
    pub id: Value,
    pub method: String,
    /// The request as sent, kept for the kinds sent again to a new hub ([`RESENT`]).
    pub resend: Option<Vec<u8>>,
}

#[derive(Default)]
pub(super) struct Memory {
    /// The client's `initialize` request, as sent, once a hub answered it: a new hub is
    /// given the handshake again only when the client has had its answer.
    pub initialize: Option<Value>,
    /// Its `notifications/initialized`.
    pub initialized: Option<Vec<u8>>,
    /// Its last `logging/setLevel`.
    pub set_level: Option<Value>,
    /// Every tool name the client has been listed, in the order it first saw them.
    pub seen: Vec<String>,
    seen_set: HashSet<String>,
    /// Unanswered requests, by id as JSON text.
    pub pending: BTreeMap<String, Pending>,
}

/// What the relay reads of every line both ways: its method, its id, and whether it is a
/// result. The rest (a tool's whole answer) is skipped by the parser, not built into a
/// tree; the few messages that need more (`tools/list` answers, `logging/setLevel`,
/// `notifications/cancelled`) are read again whole.
#[derive(Deserialize)]
struct Head<'a> {
    #[serde(borrow)]
    method: Option<std::borrow::Cow<'a, str>>,
    /// `None` for a missing or null id, as for a notification.
    id: Option<Value>,
    #[serde(default, deserialize_with = "present")]
    result: bool,
}

/// Whether the field is there, its value skipped unread.
fn present<'de, D: serde::Deserializer<'de>>(field: D) -> Result<bool, D::Error> {
    serde::de::IgnoredAny::deserialize(field).map(|_| true)
}

/// Which way a message goes after the relay looked at it.
#[derive(Debug, PartialEq, Eq)]
pub(super) enum Route {
    Forward,
    /// An answer to the relay's own request.
    Ours(String),
}

impl Memory {
    /// Notes a message of the client's on its way to the hub.
    pub(super) fn note_client(&mut self, line: &[u8]) {
        let Ok(head) = serde_json::from_slice::<Head>(line) else {
            return;
        };
        match (head.method.as_deref(), head.id.as_ref()) {
            (Some(method), Some(id)) => {
                if method == "logging/setLevel" {
                    self.set_level = serde_json::from_slice(line).ok();
                }
                let resend = RESENT.contains(&method).then(|| line.to_vec());
                self.pending.insert(
                    id.to_string(),
                    Pending {
                        id: id.clone(),
                        method: method.to_owned(),
                        resend,
                    },
                );
            }
            (Some("notifications/initialized"), None) => self.initialized = Some(line.to_vec()),
            (Some("notifications/cancelled"), None) => {
                let message: Value = serde_json::from_slice(line).unwrap_or_default();
                if let Some(id) = message.pointer("/params/requestId") {
                    self.pending.remove(&id.to_string());
                }
            }
            _ => {}
        }
    }

    /// Notes a message of the hub's on its way to the client: an answer ends its request,
    /// and the names of a `tools/list` answer are remembered.
    pub(super) fn note_hub(&mut self, line: &[u8]) -> Route {
        let Ok(head) = serde_json::from_slice::<Head>(line) else {
            return Route::Forward;
        };
        if head.method.is_some() {
            return Route::Forward;
        }
        let Some(id) = head.id else {
            return Route::Forward;
        };
        if let Some(ours) = id.as_str().filter(|id| id.starts_with(RELAY_ID_PREFIX)) {
            return Route::Ours(ours.to_owned());
        }
        let Some(pending) = self.pending.remove(&id.to_string()) else {
            return Route::Forward;
        };
        match pending.method.as_str() {
            "tools/list" => self.note_listed(&serde_json::from_slice(line).unwrap_or_default()),
            "initialize" if head.result => {
                self.initialize =
                    (pending.resend.as_deref()).and_then(|line| serde_json::from_slice(line).ok());
            }
            _ => {}
        }
        Route::Forward
    }

    /// Remembers the names of a `tools/list` answer not seen before, in order.
    pub(super) fn note_listed(&mut self, answer: &Value) {
        for name in listed_names(answer) {
            if self.seen_set.insert(name.clone()) {
                self.seen.push(name);
            }
        }
    }

    /// Takes every unanswered request: the hub that had them is gone.
    pub(super) fn take_pending(&mut self) -> Vec<Pending> {
        std::mem::take(&mut self.pending).into_values().collect()
    }
}

/// The tool names of a `tools/list` answer, in order.
pub(super) fn listed_names(answer: &Value) -> Vec<String> {
    (answer.pointer("/result/tools").and_then(Value::as_array))
        .map(|tools| {
            (tools.iter())
                .filter_map(|t| t.get("name").and_then(Value::as_str))
                .map(str::to_owned)
                .collect()
        })
        .unwrap_or_default()
}

/// What the client is told about a request the hub took with it: a tool call gets an error
/// result the model can read, anything else a JSON-RPC error; both name the cause.
pub(super) fn lost_answer(pending: &Pending, cause: &str) -> Value {
    let text = format!(
        "mcp-defer: the hub serving this session stopped before answering ({cause}); a new \
         hub is taking over the session: send the request again"
    );
    if pending.method == "tools/call" {
        json!({
            "jsonrpc": "2.0",
            "id": pending.id,
            "result": {"content": [{"type": "text", "text": text}], "isError": true},
        })
    } else {
        json!({
            "jsonrpc": "2.0",
            "id": pending.id,
            "error": {"code": -32603, "message": text},
        })
    }
}

#[cfg(test)]
mod tests {
    // A test panics on broken setup; the crate-wide denial is for the library.
    #![allow(clippy::unwrap_used)]

    use super::*;

    fn line(v: Value) -> Vec<u8> {
        v.to_string().into_bytes()
    }

    #[test]
    fn the_session_is_remembered_from_its_messages() {
        let mut memory = Memory::default();
        memory.note_client(&line(
            json!({"jsonrpc":"2.0","id":0,"method":"initialize","params":{}}),
        ));
        memory.note_client(&line(
            json!({"jsonrpc":"2.0","method":"notifications/initialized"}),
        ));
        memory.note_client(&line(json!({"jsonrpc":"2.0","id":1,"method":"tools/list"})));
        assert_eq!(
            memory.note_hub(&line(json!({"jsonrpc":"2.0","id":0,"result":{}}))),
            Route::Forward
        );
        let listed = json!({"jsonrpc":"2.0","id":1,"result":{"tools":[{"name":"a"},{"name":"b"}]}});
        memory.note_hub(&line(listed));
        memory.note_client(&line(json!({"jsonrpc":"2.0","id":2,"method":"tools/list"})));
        let listed = json!({"jsonrpc":"2.0","id":2,"result":{"tools":[{"name":"a"},{"name":"b"},{"name":"c"}]}});
        memory.note_hub(&line(listed));
        assert_eq!(memory.seen, ["a", "b", "c"]);
        assert!(memory.initialize.is_some() && memory.initialized.is_some());
        assert!(memory.pending.is_empty());
    }

    #[test]
    fn unanswered_requests_are_told_the_cause_and_listens_kept_to_resend() {
        let mut memory = Memory::default();
        memory.note_client(&line(
            json!({"jsonrpc":"2.0","id":"c","method":"tools/call","params":{}}),
        ));
        memory.note_client(&line(
            json!({"jsonrpc":"2.0","id":4,"method":"prompts/list"}),
        ));
        memory.note_client(&line(
            json!({"jsonrpc":"2.0","id":5,"method":"subscriptions/listen"}),
        ));
        memory.note_client(&line(json!({"jsonrpc":"2.0","id":6,"method":"ping"})));
        memory.note_client(&line(
            json!({"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":6}}),
        ));
        let pending = memory.take_pending();
        assert_eq!(pending.len(), 3);
        let call = pending.iter().find(|p| p.method == "tools/call").unwrap();
        let answer = lost_answer(call, "connection closed");
        assert_eq!(answer["result"]["isError"], true);
        assert!(
            answer["result"]["content"][0]["text"]
                .as_str()
                .unwrap()
                .contains("connection closed")
        );
        let list = pending.iter().find(|p| p.method == "prompts/list").unwrap();
        assert_eq!(lost_answer(list, "x")["error"]["code"], -32603);
        let resent: Vec<&str> = (pending.iter())
            .filter(|p| p.resend.is_some())
            .map(|p| p.method.as_str())
            .collect();
        assert_eq!(resent, ["subscriptions/listen"]);
    }

    #[test]
    fn an_unanswered_initialize_is_sent_again_not_replayed() {
        let mut memory = Memory::default();
        let initialize = json!({"jsonrpc":"2.0","id":0,"method":"initialize","params":{}});
        memory.note_client(&line(initialize.clone()));
        // Not answered yet: a new hub gets the client's own request, no handshake of ours.
        assert!(memory.initialize.is_none());
        let pending = memory.take_pending();
        assert_eq!(pending.len(), 1);
        assert_eq!(
            pending[0].resend.as_deref(),
            Some(&line(initialize.clone())[..])
        );
        // Sent again and answered: from now on a new hub is given the handshake.
        memory.note_client(&line(initialize.clone()));
        memory.note_hub(&line(json!({"jsonrpc":"2.0","id":0,"result":{}})));
        assert_eq!(memory.initialize, Some(initialize));
        // A failed initialize leaves nothing to replay.
        let mut failed = Memory::default();
        failed.note_client(&line(
            json!({"jsonrpc":"2.0","id":0,"method":"initialize","params":{}}),
        ));
        failed.note_hub(&line(
            json!({"jsonrpc":"2.0","id":0,"error":{"code":-32602,"message":"no"}}),
        ));
        assert!(failed.initialize.is_none());
    }

    /// The relay reads only a line's head: what it reads must not depend on how the line
    /// is spelled (escaped method names, the fields' order, a null id, a null result).
    #[test]
    fn the_head_is_read_however_the_line_is_spelled() {
        let mut memory = Memory::default();
        memory.note_client(br#"{"params":{},"method":"tools\/list","jsonrpc":"2.0","id":"x"}"#);
        memory.note_client(br#"{"jsonrpc":"2.0","id":null,"method":"ping"}"#);
        memory.note_client(
            br#"{"jsonrpc":"2.0","method":"logging/setLevel","params":{"level":"debug"},"id":2}"#,
        );
        assert_eq!(memory.pending.len(), 2, "the null id is no request");
        assert_eq!(memory.pending[r#""x""#].method, "tools/list");
        assert_eq!(
            memory
                .set_level
                .as_ref()
                .and_then(|m| m.pointer("/params/level")),
            Some(&json!("debug"))
        );
        let answer = br#"{"result":{"tools":[{"name":"a","inputSchema":{"type":"object"}}]},"id":"x","jsonrpc":"2.0"}"#;
        assert_eq!(memory.note_hub(answer), Route::Forward);
        assert_eq!(memory.seen, ["a"]);
        memory.note_client(br#"{"jsonrpc":"2.0","id":3,"method":"initialize","params":{}}"#);
        memory.note_hub(br#"{"jsonrpc":"2.0","id":3,"result":null}"#);
        assert!(
            memory.initialize.is_some(),
            "a result, even null, answers initialize"
        );
        assert_eq!(memory.pending.len(), 1);
    }

    #[test]
    fn answers_to_the_relay_stay_with_the_relay() {
        let mut memory = Memory::default();
        let ours = json!({"jsonrpc":"2.0","id":format!("{RELAY_ID_PREFIX}3"),"result":{}});
        assert_eq!(
            memory.note_hub(&line(ours)),
            Route::Ours(format!("{RELAY_ID_PREFIX}3"))
        );
        let request = json!({"jsonrpc":"2.0","id":1,"method":"sampling/createMessage"});
        assert_eq!(memory.note_hub(&line(request)), Route::Forward);
    }
}
