//! A request id reused after `notifications/cancelled`, over HTTP as over stdio
//! (`server/reused_ids.rs`): rmcp keys a session's answers by request id, so the
//! cancelled call's late answer ("the call was cancelled") would be written to the new
//! request's stream under the shared id, and the new request's own answer dropped (seen
//! with `tests/http_ops.rs`). The gate hands such a request to rmcp under an alias of
//! ours, writes its answer back under the client's id ([`Unalias`]), and a cancel of it
//! names the alias. The session's ids are kept in `expiry::Live`; this is the rewriting.

use bytes::Bytes;
use serde_json::Value;

/// The alias prefix: a string id no client is expected to use.
const PREFIX: &str = "mcp-defer-reused-";

/// The `n`th alias of a session, as its JSON text (the form the gate keys ids by).
pub(super) fn alias(n: u64) -> String {
    Value::String(format!("{PREFIX}{n}")).to_string()
}

/// `body` (one JSON-RPC message) with its `id` (`pointer` `/id`) or a cancel's
/// `requestId` (`/params/requestId`) replaced by `with` (JSON text); `None` when the body
/// is not such a message.
pub(super) fn rewrite(body: &[u8], pointer: &str, with: &str) -> Option<Bytes> {
    let mut message: Value = serde_json::from_slice(body).ok()?;
    let replacement: Value = serde_json::from_str(with).ok()?;
    *message.pointer_mut(pointer)? = replacement;
    serde_json::to_vec(&message).ok().map(Bytes::from)
}

/// Writes an aliased request's answer back under the client's id: in each frame of its
/// response (one SSE event or the JSON answer), the first `"id":<alias>` becomes
/// `"id":<client id>`. An unescaped `"id":"mcp-defer-reused-N"` can only be a key and its
/// value (a quote inside a JSON string is escaped), so nothing else is touched.
#[derive(Debug, Clone)]
pub(super) struct Unalias {
    from: Vec<u8>,
    to: Vec<u8>,
}

impl Unalias {
    pub(super) fn new(alias: &str, client_id: &str) -> Unalias {
        Unalias {
            from: format!("\"id\":{alias}").into_bytes(),
            to: format!("\"id\":{client_id}").into_bytes(),
        }
    }

    pub(super) fn frame(&self, data: Bytes) -> Bytes {
        let Some(at) = data.windows(self.from.len()).position(|w| w == self.from) else {
            return data;
        };
        let mut out = Vec::with_capacity(data.len() + self.to.len());
        out.extend_from_slice(&data[..at]);
        out.extend_from_slice(&self.to);
        out.extend_from_slice(&data[at + self.from.len()..]);
        Bytes::from(out)
    }
}

#[cfg(test)]
mod tests {
    // A test fails loudly on broken setup; the crate-wide denial is for the library.
    #![allow(clippy::unwrap_used)]

    use super::*;

    #[test]
    fn an_aliased_answer_gets_the_client_id_back() {
        let alias = alias(3);
        let request = br#"{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{}}"#;
        let aliased = rewrite(request, "/id", &alias).unwrap();
        assert_eq!(
            &aliased[..],
            br#"{"jsonrpc":"2.0","id":"mcp-defer-reused-3","method":"tools/call","params":{}}"#
        );
        let unalias = Unalias::new(&alias, "7");
        let frame = Bytes::from_static(
            b"data: {\"jsonrpc\":\"2.0\",\"id\":\"mcp-defer-reused-3\",\"result\":{}}\n\n",
        );
        assert_eq!(
            &unalias.frame(frame)[..],
            b"data: {\"jsonrpc\":\"2.0\",\"id\":7,\"result\":{}}\n\n"
        );
        let other = Bytes::from_static(b"data: {\"id\":8}\n\n");
        assert_eq!(unalias.frame(other.clone()), other);
    }
}
