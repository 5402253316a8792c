//! What of a client request's `_meta` goes downstream with it.
//!
//! The protocol envelope belongs to a connection (DESIGN.md section 7): the client's
//! `io.modelcontextprotocol/*` keys (protocol version, client info and capabilities, log
//! level) describe *its* connection to us, and rmcp adds the downstream connection's own
//! envelope when that connection needs one. Its `progressToken` names a progress stream on
//! the client's connection; rmcp puts a fresh one on the downstream request. Everything else
//! (trace context, vendor keys) is the client's to pass on.
//!
//! The other way, a result from a handshake-era server has no `resultType`, which a
//! 2026-07-28 client requires: [`mark_complete`] adds it (rmcp strips it again for
//! handshake-era clients).

use rmcp::model::{MetaObject, RequestMetaObject, ResultType};

/// `_meta` keys reserved by the protocol for the connection's envelope.
const RESERVED_PREFIX: &str = "io.modelcontextprotocol/";
/// The progress token of the client's request.
const PROGRESS_TOKEN: &str = "progressToken";

/// The client's `_meta` as it should travel downstream: every key but the reserved
/// `io.modelcontextprotocol/*` ones and `progressToken`; `None` when nothing is left.
pub fn forwarded_meta(meta: &RequestMetaObject) -> Option<RequestMetaObject> {
    let kept: serde_json::Map<String, serde_json::Value> = meta
        .0
        .0
        .iter()
        .filter(|(key, _)| !key.starts_with(RESERVED_PREFIX) && key.as_str() != PROGRESS_TOKEN)
        .map(|(key, value)| (key.clone(), value.clone()))
        .collect();
    (!kept.is_empty()).then(|| RequestMetaObject(MetaObject(kept)))
}

/// Gives a proxied result the `resultType: "complete"` it lacks when it came from a
/// handshake-era server; an explicit type (`input_required`, `task`) is kept.
pub fn mark_complete(result_type: &mut Option<ResultType>) {
    result_type.get_or_insert(ResultType::COMPLETE);
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn meta(value: serde_json::Value) -> RequestMetaObject {
        serde_json::from_value(value).unwrap_or_else(|e| panic!("meta: {e}"))
    }

    #[test]
    fn the_envelope_and_progress_token_stay_behind() {
        let client = meta(json!({
            "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientInfo": {"name": "claude-code", "version": "2"},
            "io.modelcontextprotocol/clientCapabilities": {},
            "io.modelcontextprotocol/logLevel": "info",
            "progressToken": 7,
            "traceparent": "00-abc-def-01",
            "vendor.example/key": {"a": 1}
        }));
        let forwarded = forwarded_meta(&client).map(|m| serde_json::to_value(m).ok());
        assert_eq!(
            forwarded,
            Some(Some(json!({
                "traceparent": "00-abc-def-01",
                "vendor.example/key": {"a": 1}
            })))
        );
    }

    #[test]
    fn nothing_left_is_no_meta_at_all() {
        let client = meta(json!({
            "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "progressToken": "t"
        }));
        assert!(forwarded_meta(&client).is_none());
        assert!(forwarded_meta(&RequestMetaObject::default()).is_none());
    }

    #[test]
    fn keys_that_only_look_reserved_are_kept() {
        let client = meta(json!({"io.modelcontextprotocol": 1, "progressTokens": 2}));
        assert_eq!(
            forwarded_meta(&client).map(|m| m.0.0.len()),
            Some(2),
            "only the exact prefix and key are reserved"
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
