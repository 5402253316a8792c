//! The `_meta` a forwarded request carries downstream.
//!
//! The protocol envelope belongs to a connection (DESIGN.md section 7): a 2026-07-28 client
//! puts `io.modelcontextprotocol/protocolVersion`, `/clientInfo`, `/clientCapabilities` and
//! `/logLevel` in the `_meta` of every request, and those describe *its* connection to us.
//! A downstream connection has its own era: a handshake-era server built on the Python SDK
//! refuses every request that carries a 2026-07-28 envelope, and a 2026-07-28 one gets the
//! envelope rmcp writes for that connection. The progress token is per connection too: rmcp
//! puts its own on each downstream request and the call maps progress back to the client's.
//! Every other key (`claudecode/toolUseId`, trace context) is the client's to pass on.
//!
//! The other way, a result from a handshake-era server has no `resultType`, which a
//! 2026-07-28 client requires: [`mark_complete`] adds it (rmcp strips it again for
//! handshake-era clients).

use rmcp::model::{RequestMetaObject, ResultType};

/// The prefix the specification reserves for its own `_meta` keys.
const RESERVED_PREFIX: &str = "io.modelcontextprotocol/";
/// The request `_meta` key of the progress token.
const PROGRESS_TOKEN: &str = "progressToken";

/// The client's `_meta` without what belongs to its connection: every reserved
/// `io.modelcontextprotocol/*` key and the progress token. `None` when nothing is left, so
/// a request without extension keys goes downstream without `_meta` at all.
pub(crate) fn forwarded_meta(client: &RequestMetaObject) -> Option<RequestMetaObject> {
    let kept: serde_json::Map<String, serde_json::Value> = (client.0.0.iter())
        .filter(|(key, _)| !is_connection_key(key))
        .map(|(key, value)| (key.clone(), value.clone()))
        .collect();
    (!kept.is_empty()).then(|| RequestMetaObject::from(kept))
}

fn is_connection_key(key: &str) -> bool {
    key == PROGRESS_TOKEN || key.starts_with(RESERVED_PREFIX)
}

/// Gives a proxied result the `resultType: "complete"` it lacks when it came from a
/// handshake-era server; an explicit type (`input_required`, `task`) is kept.
pub(crate) fn mark_complete(result_type: &mut Option<ResultType>) {
    result_type.get_or_insert(ResultType::COMPLETE);
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn meta(value: serde_json::Value) -> RequestMetaObject {
        serde_json::from_value(value).unwrap_or_else(|e| panic!("meta: {e}"))
    }

    #[test]
    fn the_clients_envelope_and_progress_token_stay_behind() {
        let client = meta(json!({
            "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientInfo": {"name": "claude-code", "version": "2.1.332"},
            "io.modelcontextprotocol/clientCapabilities": {"elicitation": {}},
            "io.modelcontextprotocol/logLevel": "info",
            "io.modelcontextprotocol/someFutureKey": true,
            "progressToken": 7,
            "claudecode/toolUseId": "toolu_01",
            "traceparent": "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01",
        }));
        let forwarded = forwarded_meta(&client).unwrap_or_default();
        assert_eq!(
            serde_json::to_value(&forwarded).unwrap_or_default(),
            json!({
                "claudecode/toolUseId": "toolu_01",
                "traceparent": "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01",
            })
        );
    }

    #[test]
    fn nothing_left_means_no_meta() {
        let client = meta(json!({
            "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "progressToken": "p1",
        }));
        assert_eq!(forwarded_meta(&client), None);
        assert_eq!(forwarded_meta(&RequestMetaObject::new()), None);
    }

    #[test]
    fn a_key_that_only_looks_reserved_is_kept() {
        let client = meta(json!({"io.modelcontextprotocol.example/x": 1, "progress": 2}));
        assert_eq!(
            serde_json::to_value(forwarded_meta(&client)).unwrap_or_default(),
            json!({"io.modelcontextprotocol.example/x": 1, "progress": 2})
        );
    }

    #[test]
    fn a_result_without_a_type_is_complete_and_others_keep_theirs() {
        let mut missing = None;
        mark_complete(&mut missing);
        assert_eq!(missing, Some(ResultType::COMPLETE));
        let mut task = Some(ResultType::TASK);
        mark_complete(&mut task);
        assert_eq!(task, Some(ResultType::TASK));
    }
}
