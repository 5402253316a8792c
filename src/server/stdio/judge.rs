//! What a line from the client is ([`judge`]): a message to hand rmcp, or the one answer
//! a broken line gets (`-32700` with the request's id when it can be read, else
//! `id: null`; `-32600` for valid JSON that is not JSON-RPC; `-32602` for a known method
//! with malformed params).

use rmcp::model::{ClientJsonRpcMessage, ClientRequest, ErrorCode, JsonRpcMessage, RequestId};
use serde_json::{Value, json};

use crate::lines::{Line, id_of, repair_surrogates, scan_id};

/// JSON nesting deeper than this is refused (serde_json's own recursion limit).
const MAX_DEPTH: usize = 128;

/// Methods rmcp decodes into typed requests: a request for one of them that rmcp can only
/// take as a custom request has malformed params.
const TYPED_METHODS: &[&str] = &[
    "ping",
    "initialize",
    "server/discover",
    "completion/complete",
    "logging/setLevel",
    "prompts/get",
    "prompts/list",
    "resources/list",
    "resources/templates/list",
    "resources/read",
    "subscriptions/listen",
    "resources/subscribe",
    "resources/unsubscribe",
    "tools/call",
    "tools/list",
    "tasks/get",
    "tasks/update",
    "tasks/cancel",
    "skills/list",
    "skills/get",
    "resources/directory/read",
];

/// What to do with one line.
#[derive(Debug)]
pub(super) enum Verdict {
    Pass(Box<ClientJsonRpcMessage>),
    Answer(Value),
    Skip,
}

fn error(id: Option<RequestId>, code: ErrorCode, message: String) -> Verdict {
    tracing::debug!(code = code.0, %message, "answering a malformed line");
    Verdict::Answer(error_reply(id, code, message))
}

pub(super) fn error_reply(id: Option<RequestId>, code: ErrorCode, message: String) -> Value {
    json!({
        "jsonrpc": "2.0",
        "id": id,
        "error": {"code": code.0, "message": message},
    })
}

/// Decides what a line is, and what to answer when it is not a valid message.
pub(super) fn judge(line: Line, max: usize) -> Verdict {
    let bytes = match line {
        Line::TooLong { size, head } => {
            return error(
                scan_id(&head),
                ErrorCode::PARSE_ERROR,
                format!("Parse error: the message is {size} bytes, over the limit of {max} bytes"),
            );
        }
        Line::Text(bytes) => bytes,
    };
    if bytes.iter().all(u8::is_ascii_whitespace) {
        return Verdict::Skip;
    }
    let text = match std::str::from_utf8(&bytes) {
        Ok(text) => text,
        Err(err) => {
            return error(
                scan_id(&bytes),
                ErrorCode::PARSE_ERROR,
                format!("Parse error: the message is not valid UTF-8 ({err})"),
            );
        }
    };
    let text = repair_surrogates(text);
    let mut values = serde_json::Deserializer::from_str(&text).into_iter::<Value>();
    let value = match values.next() {
        Some(Ok(value)) => value,
        Some(Err(err)) => {
            let why = if err.to_string().contains("recursion limit") {
                format!("nesting deeper than {MAX_DEPTH} levels")
            } else {
                err.to_string()
            };
            return error(
                scan_id(text.as_bytes()),
                ErrorCode::PARSE_ERROR,
                format!("Parse error: {why}"),
            );
        }
        None => return Verdict::Skip,
    };
    let id = value.get("id").and_then(id_of);
    if !text[values.byte_offset()..].trim().is_empty() {
        return error(
            id,
            ErrorCode::PARSE_ERROR,
            "Parse error: more than one JSON value on the line (one message per line)".to_owned(),
        );
    }
    let Value::Object(object) = &value else {
        let what = if value.is_array() {
            "a batch (an array), which MCP does not use"
        } else {
            "not a JSON object"
        };
        return error(
            None,
            ErrorCode::INVALID_REQUEST,
            format!("Invalid request: {what}"),
        );
    };
    if let Some(why) = not_json_rpc(object) {
        return error(
            id,
            ErrorCode::INVALID_REQUEST,
            format!("Invalid request: {why}"),
        );
    }
    let method = object
        .get("method")
        .and_then(Value::as_str)
        .map(str::to_owned);
    if let Some(task) = crate::server::task_wire::as_custom(&value) {
        return Verdict::Pass(Box::new(task));
    }
    match serde_json::from_value::<ClientJsonRpcMessage>(value) {
        Ok(JsonRpcMessage::Request(request))
            if matches!(request.request, ClientRequest::CustomRequest(_))
                && method
                    .as_deref()
                    .is_some_and(|m| TYPED_METHODS.contains(&m)) =>
        {
            let method = method.unwrap_or_default();
            error(
                id,
                ErrorCode::INVALID_PARAMS,
                invalid_params(&method, object_params(&request)),
            )
        }
        Ok(message) => Verdict::Pass(Box::new(message)),
        Err(err) => match (&method, id) {
            (Some(method), Some(id)) => error(
                Some(id),
                ErrorCode::INVALID_PARAMS,
                format!("Invalid params for {method}: {err}"),
            ),
            // A notification or response we cannot read: nothing to answer.
            (_, None) => {
                tracing::debug!(error = %err, "ignoring an unreadable notification or response");
                Verdict::Skip
            }
            (None, Some(id)) => error(
                Some(id),
                ErrorCode::INVALID_REQUEST,
                format!("Invalid request: {err}"),
            ),
        },
    }
}

/// The params of a custom request, as JSON.
fn object_params(request: &rmcp::model::JsonRpcRequest<ClientRequest>) -> Option<Value> {
    match &request.request {
        ClientRequest::CustomRequest(custom) => custom.params.clone(),
        _ => None,
    }
}

/// Why the params of `method` do not decode, in words the client can act on.
fn invalid_params(method: &str, params: Option<Value>) -> String {
    let params = params.unwrap_or(Value::Null);
    let why = match method {
        "tools/call" => serde_json::from_value::<rmcp::model::CallToolRequestParams>(params)
            .err()
            .map(|e| e.to_string()),
        _ => None,
    };
    match why {
        Some(why) => format!("Invalid params for {method}: {why}"),
        None => format!("Invalid params for {method}"),
    }
}

/// Why a JSON object is not a JSON-RPC 2.0 message, if it is not.
fn not_json_rpc(object: &serde_json::Map<String, Value>) -> Option<String> {
    if object.get("jsonrpc").and_then(Value::as_str) != Some("2.0") {
        return Some("`jsonrpc` must be \"2.0\"".to_owned());
    }
    if let Some(id) = object.get("id")
        && !id.is_null()
        && id_of(id).is_none()
    {
        return Some("`id` must be a string or an integer".to_owned());
    }
    match object.get("method") {
        Some(Value::String(_)) => {}
        Some(_) => return Some("`method` must be a string".to_owned()),
        None if object.contains_key("result") || object.contains_key("error") => {
            if object.get("id").is_none() {
                return Some("a response needs an `id`".to_owned());
            }
        }
        None => return Some("no `method` (and not a response)".to_owned()),
    }
    match object.get("params") {
        None | Some(Value::Object(_)) => None,
        Some(_) => Some("`params` must be an object".to_owned()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn answer(line: &str) -> Value {
        match judge(Line::Text(line.as_bytes().to_vec()), 1 << 20) {
            Verdict::Answer(reply) => reply,
            other => panic!("{line}: expected an answer, got {other:?}"),
        }
    }

    fn code(reply: &Value) -> i64 {
        reply["error"]["code"].as_i64().unwrap_or_default()
    }

    #[test]
    fn broken_lines_get_parse_errors_with_the_id_when_readable() {
        let reply = answer(r#"{"jsonrpc":"2.0","id":4,"method":"ping"} {"x":1}"#);
        assert_eq!((code(&reply), reply["id"].clone()), (-32700, json!(4)));
        let reply = answer(r#"{"jsonrpc":"2.0","id":5,"method":"#);
        assert_eq!((code(&reply), reply["id"].clone()), (-32700, json!(5)));
        let deep = format!("{}{}", "[".repeat(200), "]".repeat(200));
        let reply = answer(&deep);
        assert_eq!((code(&reply), reply["id"].clone()), (-32700, Value::Null));
        assert!(
            reply.as_object().is_some_and(|o| o.contains_key("id")),
            "id: null is present"
        );
    }

    #[test]
    fn invalid_json_rpc_gets_invalid_request_with_its_id() {
        for line in [
            r#"{"jsonrpc":"1.0","id":9,"method":"ping"}"#,
            r#"{"jsonrpc":"2.0","id":9}"#,
            r#"{"jsonrpc":"2.0","id":9,"method":"ping","params":"x"}"#,
        ] {
            let reply = answer(line);
            assert_eq!(
                (code(&reply), reply["id"].clone()),
                (-32600, json!(9)),
                "{line}"
            );
        }
    }

    #[test]
    fn malformed_params_of_a_known_method_get_invalid_params() {
        for line in [
            r#"{"jsonrpc":"2.0","id":"a","method":"tools/call","params":{}}"#,
            r#"{"jsonrpc":"2.0","id":"a","method":"tools/call","params":{"name":"x","arguments":[1]}}"#,
        ] {
            let reply = answer(line);
            assert_eq!(
                (code(&reply), reply["id"].clone()),
                (-32602, json!("a")),
                "{line}"
            );
        }
    }

    #[test]
    fn a_lone_surrogate_is_accepted() {
        let line = r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x","arguments":{"q":"tokyo \ud83d"}}}"#;
        assert!(matches!(
            judge(Line::Text(line.as_bytes().to_vec()), 1 << 20),
            Verdict::Pass(_)
        ));
    }
}
