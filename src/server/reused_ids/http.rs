//! A reused id over HTTP: the gate reads a request's body as bytes, so the alias is
//! written into the body ([`rewrite`]) and its answer's frames get the client's id back
//! ([`Unalias`]). The session's ids (cancelled, aliased) are kept in `http/expiry.rs`.

use bytes::Bytes;
use serde_json::Value;

/// The `n`th alias of a session, as its JSON text (the form the gate keys ids by).
pub(in crate::server) fn alias(n: u64) -> String {
    Value::String(super::alias(n)).to_string()
}

/// `body` (one JSON-RPC message) with its `id` (`pointer` `/id`) or a cancel's
/// `requestId` (`/params/requestId`) replaced by `with` (JSON text); `None` when the body
/// is not such a message.
pub(in crate::server) fn rewrite(body: &[u8], pointer: &str, with: &str) -> Option<Bytes> {
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
pub(in crate::server) struct Unalias {
    from: Vec<u8>,
    to: Vec<u8>,
}

impl Unalias {
    pub(in crate::server) fn new(alias: &str, client_id: &str) -> Unalias {
        Unalias {
            from: format!("\"id\":{alias}").into_bytes(),
            to: format!("\"id\":{client_id}").into_bytes(),
        }
    }

    pub(in crate::server) fn frame(&self, data: Bytes) -> Bytes {
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
