//! The client's stdio, framed by us: every line the client sends gets exactly one answer.
//!
//! rmcp's stdio transport drops a line it cannot decode (a lone surrogate, invalid UTF-8,
//! deep nesting, trailing junk, an over-long line) without answering, so the client waits
//! forever; and its `-32600` for invalid JSON-RPC carries no id. This transport reads the
//! lines itself ([`crate::lines`]), answers what is broken (`-32700` with the request's id
//! when it can be read, else `id: null`; `-32600` for valid JSON that is not JSON-RPC, with
//! its id; `-32602` for a known method with malformed params) and hands rmcp only valid
//! messages. It also ends the session when the client stops reading (stdout broken pipe)
//! instead of writing into the void, and refuses a request whose id is still in use by an
//! unanswered one (rmcp would run both and answer only one).
//!
//! A 2025-11-25 task request (a `tools/call` with `task`, `tasks/*`) is handed to rmcp as a
//! custom request with its params as written, and a 2025-11-25 `initialize` answer gets
//! the `tasks` capability: rmcp has neither shape (`tasks.rs`).
//!
//! A `tools/list` answer is written from the exposed list's bytes ([`ToolLists`]): each
//! listed tool was serialized once when it was appended, and here its text is copied into
//! the answer, never parsed or serialized again per request.

use std::collections::{HashMap, HashSet};
use std::io;
use std::sync::{Arc, Mutex};

use rmcp::RoleServer;
use rmcp::model::{
    ClientJsonRpcMessage, ClientNotification, ClientRequest, ErrorCode, JsonRpcMessage, RequestId,
    ServerResult,
};
use rmcp::service::{RxJsonRpcMessage, TxJsonRpcMessage};
use serde_json::{Value, json};
use tokio::io::{AsyncBufRead, AsyncWrite, AsyncWriteExt};
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use super::reused_ids::ReusedIds;
use crate::exposure::ListedTool;
use crate::lines::{Line, LineReader, id_of, repair_surrogates, scan_id};
use crate::sync::lock;

/// JSON nesting deeper than this is refused (serde_json's own recursion limit).
pub const MAX_DEPTH: usize = 128;

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

/// The tools of `tools/list` answers not written yet, by request id: the handler answers
/// rmcp with an empty typed list and leaves the listed tools here ([`ToolLists::put`]);
/// [`Framed`] writes the answer with their bytes in it. Shared by the one stdio session and
/// its transport; an entry lives from the handler's return to the write (or the client's
/// cancel).
#[derive(Debug, Clone, Default)]
pub struct ToolLists(Arc<Mutex<HashMap<RequestId, Vec<Arc<ListedTool>>>>>);

impl ToolLists {
    /// The tools of the answer to request `id`, whose typed result has an empty `tools`.
    pub fn put(&self, id: RequestId, tools: Vec<Arc<ListedTool>>) {
        lock(&self.0).insert(id, tools);
    }

    fn take(&self, id: &RequestId) -> Option<Vec<Arc<ListedTool>>> {
        lock(&self.0).remove(id)
    }
}

/// The rmcp transport over `reader` (the client's stdin) and `writer` (its stdout).
pub struct Framed<R> {
    reader: LineReader<R>,
    lists: ToolLists,
    out: mpsc::UnboundedSender<Vec<u8>>,
    /// Cancelled when stdout breaks: the session is over.
    gone: CancellationToken,
    /// Ids of the client's requests not answered yet (nor cancelled by the client).
    in_flight: HashSet<RequestId>,
    /// A request reusing a cancelled id goes to rmcp under an alias.
    reused: ReusedIds,
}

/// Why a message could not be sent to the client.
#[derive(Debug, thiserror::Error)]
pub enum FramedError {
    #[error("the client stopped reading")]
    Closed,
    #[error("cannot encode a message: {0}")]
    Encode(#[from] serde_json::Error),
}

impl<R: AsyncBufRead + Unpin + Send + 'static> Framed<R> {
    /// Frames `reader`/`writer` with lines of at most `max` bytes; `tools/list` answers
    /// take their tools from `lists`. The writer runs on its own task, so a slow client
    /// never blocks a handler.
    pub fn new<W: AsyncWrite + Unpin + Send + 'static>(
        reader: R,
        writer: W,
        max: usize,
        lists: ToolLists,
    ) -> Self {
        let (out, lines) = mpsc::unbounded_channel();
        let gone = CancellationToken::new();
        tokio::spawn(write_lines(writer, lines, gone.clone()));
        Framed {
            reader: LineReader::new(reader, max),
            lists,
            out,
            gone,
            in_flight: HashSet::new(),
            reused: ReusedIds::default(),
        }
    }

    /// Tracks the ids of requests in flight. Returns the message to pass on, or `None` when
    /// it reuses the id of a request still in flight, which this answers itself.
    fn admit(&mut self, message: ClientJsonRpcMessage) -> Option<ClientJsonRpcMessage> {
        match &message {
            JsonRpcMessage::Request(request) if !self.in_flight.insert(request.id.clone()) => {
                self.answer(error_reply(
                    Some(request.id.clone()),
                    ErrorCode::INVALID_REQUEST,
                    format!(
                        "Invalid request: the id {} is in use by a request that has not been \
                         answered yet; give each request in flight its own id",
                        request.id
                    ),
                ));
                return None;
            }
            // A request the client cancelled is not answered: its id is free again.
            JsonRpcMessage::Notification(notification) => {
                if let ClientNotification::CancelledNotification(cancelled) =
                    &notification.notification
                    && let Some(id) = &cancelled.params.request_id
                {
                    self.in_flight.remove(id);
                    self.lists.take(id);
                }
            }
            _ => {}
        }
        let mut message = message;
        self.reused.inbound(&mut message);
        Some(message)
    }

    fn answer(&self, reply: Value) {
        let mut bytes = reply.to_string().into_bytes();
        bytes.push(b'\n');
        let _ = self.out.send(bytes);
    }
}

/// The line for `item`; a `tools/list` answer with `tools` from [`ToolLists`] gets their
/// bytes spliced into its empty `tools` array: the same bytes rmcp would write for the
/// typed list (the tests hold them equal), without a `Tool` tree or a serialization per
/// tool.
fn encode(
    mut item: TxJsonRpcMessage<RoleServer>,
    tools: Option<Vec<Arc<ListedTool>>>,
) -> Result<Vec<u8>, serde_json::Error> {
    let Some(tools) = tools else {
        return serde_json::to_vec(&item);
    };
    let empty = matches!(&item, JsonRpcMessage::Response(response)
        if matches!(&response.result, ServerResult::ListToolsResult(list) if list.tools.is_empty()));
    if empty {
        let bytes = serde_json::to_vec(&item)?;
        if let Some(spliced) = splice_tools(&bytes, &tools) {
            return Ok(spliced);
        }
    }
    // Not the answer the handler left empty for these tools: write it typed, tools in.
    tracing::error!("a tools/list answer without its empty tools array; writing it typed");
    if let JsonRpcMessage::Response(response) = &mut item
        && let ServerResult::ListToolsResult(list) = &mut response.result
    {
        list.tools = tools.iter().map(|t| t.to_tool()).collect();
    }
    serde_json::to_vec(&item)
}

/// `"tools":[]` in `message` with the tools' bytes between the brackets; `None` when it is
/// not there. In JSON text these bytes occur only as a key `tools` with an empty array: a
/// `"` inside a string is escaped, so `s"` cannot occur in one. The answer rmcp serializes
/// has no other key `tools` (its `_meta` is ours and empty).
fn splice_tools(message: &[u8], tools: &[Arc<ListedTool>]) -> Option<Vec<u8>> {
    const EMPTY: &[u8] = br#""tools":[]"#;
    let at = message.windows(EMPTY.len()).position(|w| w == EMPTY)? + EMPTY.len() - 1;
    let size = tools.iter().map(|t| t.json().len() + 1).sum::<usize>();
    // One more byte for the newline the caller appends.
    let mut bytes = Vec::with_capacity(message.len() + size + 1);
    bytes.extend_from_slice(&message[..at]);
    for (i, tool) in tools.iter().enumerate() {
        if i > 0 {
            bytes.push(b',');
        }
        bytes.extend_from_slice(tool.json().as_bytes());
    }
    bytes.extend_from_slice(&message[at..]);
    Some(bytes)
}

async fn write_lines<W: AsyncWrite + Unpin>(
    mut writer: W,
    mut lines: mpsc::UnboundedReceiver<Vec<u8>>,
    gone: CancellationToken,
) {
    while let Some(line) = lines.recv().await {
        let written = async {
            writer.write_all(&line).await?;
            writer.flush().await
        };
        if let Err(err) = written.await {
            if err.kind() == io::ErrorKind::BrokenPipe {
                tracing::info!("the client closed its end of stdout; ending the session");
            } else {
                tracing::warn!(error = %err, "cannot write to the client; ending the session");
            }
            gone.cancel();
            return;
        }
    }
}

impl<R: AsyncBufRead + Unpin + Send + 'static> rmcp::transport::Transport<RoleServer>
    for Framed<R>
{
    type Error = FramedError;

    fn send(
        &mut self,
        mut item: TxJsonRpcMessage<RoleServer>,
    ) -> impl Future<Output = Result<(), Self::Error>> + Send + 'static {
        let mut tools = None;
        match &item {
            JsonRpcMessage::Response(response) => tools = self.lists.take(&response.id),
            JsonRpcMessage::Error(error) => {
                if let Some(id) = &error.id {
                    self.lists.take(id);
                }
            }
            _ => {}
        }
        self.reused.outbound(&mut item);
        match &item {
            JsonRpcMessage::Response(response) => {
                self.in_flight.remove(&response.id);
            }
            JsonRpcMessage::Error(error) => {
                if let Some(id) = &error.id {
                    self.in_flight.remove(id);
                }
            }
            _ => {}
        }
        let encoded = match super::tasks::offer(&item) {
            Some(bytes) => Ok(bytes),
            None => encode(item, tools),
        };
        let sent = encoded.map_err(FramedError::from).and_then(|mut bytes| {
            bytes.push(b'\n');
            if self.gone.is_cancelled() {
                return Err(FramedError::Closed);
            }
            self.out.send(bytes).map_err(|_| FramedError::Closed)
        });
        std::future::ready(sent)
    }

    async fn receive(&mut self) -> Option<RxJsonRpcMessage<RoleServer>> {
        loop {
            let line = tokio::select! {
                () = self.gone.cancelled() => return None,
                line = self.reader.next() => line,
            };
            let line = match line {
                Ok(Some(line)) => line,
                Ok(None) => return None,
                Err(err) => {
                    tracing::warn!(error = %err, "cannot read from the client; ending the session");
                    return None;
                }
            };
            match judge(line, self.reader.max()) {
                Verdict::Pass(message) => {
                    if let Some(message) = self.admit(*message) {
                        return Some(message);
                    }
                }
                Verdict::Answer(reply) => self.answer(reply),
                Verdict::Skip => {}
            }
        }
    }

    async fn close(&mut self) -> Result<(), Self::Error> {
        Ok(())
    }
}

/// What to do with one line.
#[derive(Debug)]
enum Verdict {
    Pass(Box<ClientJsonRpcMessage>),
    Answer(Value),
    Skip,
}

fn error(id: Option<RequestId>, code: ErrorCode, message: String) -> Verdict {
    tracing::debug!(code = code.0, %message, "answering a malformed line");
    Verdict::Answer(error_reply(id, code, message))
}

fn error_reply(id: Option<RequestId>, code: ErrorCode, message: String) -> Value {
    json!({
        "jsonrpc": "2.0",
        "id": id,
        "error": {"code": code.0, "message": message},
    })
}

/// Decides what a line is, and what to answer when it is not a valid message.
fn judge(line: Line, max: usize) -> Verdict {
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
    if let Some(task) = super::tasks::as_custom(&value) {
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

    /// The answer written from the listed bytes is the very line rmcp writes for the typed
    /// list, in both eras (with and without `resultType`, with cache fields), for tools
    /// with `_meta`, unicode and escapes in them.
    #[test]
    fn a_tools_list_from_bytes_equals_the_typed_answer() {
        use rmcp::model::{JsonRpcResponse, JsonRpcVersion2_0, ListToolsResult, Tool};
        let tools: Vec<Tool> = [
            json!({"name": "a__x", "description": "q\"tools\":[] ü \u{2028}", "inputSchema": {"type": "object", "properties": {"tools": {"type": "array", "default": []}}}, "_meta": {"anthropic/alwaysLoad": true}}),
            json!({"name": "b", "inputSchema": {"type": "object"}, "annotations": {"readOnlyHint": true}}),
        ]
        .into_iter()
        .map(|v| serde_json::from_value(v).unwrap_or_else(|e| panic!("test tool: {e}")))
        .collect();
        let listed: Vec<Arc<ListedTool>> =
            tools.iter().map(|t| Arc::new(ListedTool::new(t))).collect();
        for (era, id) in [
            (true, RequestId::Number(7)),
            (false, RequestId::String("\"tools\":[]".into())),
        ] {
            for count in [0, 1, 2] {
                let answer = |tools: Vec<Tool>| {
                    let mut list = ListToolsResult::with_all_items(tools);
                    if era {
                        list.ttl_ms = Some(0);
                    } else {
                        list.result_type = None;
                    }
                    TxJsonRpcMessage::<RoleServer>::Response(JsonRpcResponse {
                        jsonrpc: JsonRpcVersion2_0,
                        id: id.clone(),
                        result: ServerResult::ListToolsResult(list),
                    })
                };
                let typed = serde_json::to_vec(&answer(tools[..count].to_vec()));
                let spliced = encode(answer(Vec::new()), Some(listed[..count].to_vec()));
                assert_eq!(
                    spliced.map(String::from_utf8).ok(),
                    typed.map(String::from_utf8).ok(),
                    "era {era}, {count} tools"
                );
            }
        }
    }

    /// A list handed over by the handler is written once and forgotten: a later answer
    /// with the same id (ids are reused once answered) is not given those tools.
    #[test]
    fn listed_tools_are_taken_once() {
        let lists = ToolLists::default();
        lists.put(RequestId::Number(1), Vec::new());
        assert!(lists.take(&RequestId::Number(1)).is_some());
        assert!(lists.take(&RequestId::Number(1)).is_none());
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
