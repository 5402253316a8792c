//! `tools/call` from the client's message straight to the handler: the thin call path of
//! issue 31, for a stdio session (`stdio/`), each session of a hub, and each handshake-era
//! session over Streamable HTTP (`http/thin.rs`).
//!
//! On the general path rmcp decodes each message into its untagged `ClientJsonRpcMessage`
//! (serde buffers the whole message to try each variant), hands it to its service loop
//! over a channel, spawns the handler's task, and sends the answer back through the loop
//! to the transport (over HTTP, through the session's worker and an SSE stream of its
//! own): three hand-offs between tasks and two full decodes per call. A plain `tools/call`
//! needs one typed read (`jsonrpc`, `id`, `method`, and the params rmcp would decode) and
//! one task: [`Calls::read`] does the read, [`Calls::start`] runs rmcp's own request
//! dispatch (`Service::handle_request`, which checks a 2026-07-28 request's `_meta` and
//! calls `ServerHandler::call_tool`) with the context rmcp would build (the request's
//! `_meta`, the session's peer, a cancellation token, the HTTP request's parts), and hands
//! over its answer.
//!
//! A handshake-era session's direct call of a downstream tool goes one step further
//! (`ThinCall`, in `handler.rs`): the downstream's answer is written under the client's id
//! as its server wrote it, when nothing on the way would change it
//! (`downstream/passed.rs`), so it is neither decoded nor encoded again.
//!
//! So everything on the call path stays where it was and unchanged: routing, the output
//! limit, redaction, progress, log messages and requests to the client during the call,
//! usage notes, both eras. What is here is what rmcp's loop did for such a request: a
//! `notifications/cancelled` cancels it ([`Calls::cancel`]), a cancelled request is not
//! answered, and the answer goes out as the JSON-RPC response or error rmcp would write.
//!
//! A message takes this path only when it is exactly such a request and the session is
//! past its handshake ([`Calls::open`]); anything else (a task-augmented call, a retry
//! with `inputResponses`, params rmcp does not know, an escape the borrowed read cannot
//! take, a lone surrogate, an id in use) goes the general way, whose answers to broken
//! lines are `stdio/judge.rs`'s.

use std::collections::HashMap;
use std::pin::Pin;
use std::sync::{Arc, Mutex, OnceLock};

use rmcp::model::{
    CallToolRequestParams, ErrorCode, Extensions, JsonObject, JsonRpcMessage, ProtocolVersion,
    RequestId, RequestMetaObject, ServerResult,
};
use rmcp::service::{RequestContext, TxJsonRpcMessage};
use rmcp::{ErrorData as McpError, Peer, RoleServer};
use serde::Deserialize;
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use crate::downstream::PassedAnswer;
use crate::lines::repair_surrogates;
use crate::sync::lock;

/// A call's answer as the session's server gives it ([`ThinCall`]).
type Answering = Pin<Box<dyn Future<Output = Answered> + Send>>;

/// The session's server taking one call.
type Dispatch =
    Arc<dyn Fn(CallToolRequestParams, RequestContext<RoleServer>) -> Answering + Send + Sync>;

/// What a session's server does with a call on this path (`handler.rs`): rmcp's own
/// request dispatch (`Service::handle_request`), or, where it can, the downstream's answer
/// as the server wrote it.
pub(super) trait ThinCall: Clone + Send + Sync + 'static {
    fn call_thin(
        &self,
        params: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> impl Future<Output = Answered> + Send;
}

/// A call's answer, to be written under the client's id.
#[expect(
    clippy::large_enum_variant,
    reason = "moved a few times a call; boxing would allocate for every typed answer"
)]
pub(super) enum Answered {
    /// What rmcp's dispatch returned.
    Typed(Result<ServerResult, McpError>),
    /// The downstream's `result`, as its server wrote it, for a client of that era.
    Passed(PassedAnswer, AnswerEra),
}

/// The era a passed answer is written for: a request whose answer needs nothing that
/// `Service::handle_request` would check of it or change in its result beyond what
/// [`Begun`] writes. Any other request goes through rmcp's dispatch.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum AnswerEra {
    /// A session that negotiated an era before 2026-07-28 with `initialize`, the request
    /// naming no version of its own: nothing to check, the result as it is.
    Handshake,
    /// A request of 2026-07-28 or later with the whole envelope, in a version served here:
    /// its result must say `"resultType": "complete"`.
    Inline,
}

impl AnswerEra {
    /// The era of the request in `context`, when a passed answer may be written for it;
    /// `supported`: the versions the server serves.
    pub(super) fn of(
        context: &RequestContext<RoleServer>,
        supported: &[ProtocolVersion],
    ) -> Option<AnswerEra> {
        const INLINE: ProtocolVersion = ProtocolVersion::V_2026_07_28;
        match context.meta.protocol_version() {
            None => (context.peer.peer_info())
                .is_some_and(|info| info.protocol_version < INLINE)
                .then_some(AnswerEra::Handshake),
            Some(version) => (version >= INLINE
                && supported.contains(&version)
                && context.meta.missing_required_keys(&INLINE).is_empty())
            .then_some(AnswerEra::Inline),
        }
    }
}

/// The thin path of one session; cheap to clone, every clone the same.
#[derive(Clone)]
pub(crate) struct Calls {
    dispatch: Dispatch,
    /// The session's peer, set once rmcp has served the handshake: until then every line
    /// goes to rmcp.
    peer: Arc<OnceLock<Peer<RoleServer>>>,
    /// The calls on this path not answered yet, with the token that cancels each.
    running: Arc<Mutex<Running>>,
}

/// Where an HTTP session's thin path reaches the gate (`http/thin.rs`): the gate puts an
/// empty one on the session's `initialize` request, the handler fills it once it serves
/// the handshake ([`Opening::fill`]), and the gate files it under the session's id.
#[derive(Clone, Default)]
pub(crate) struct Opening(Arc<OnceLock<Calls>>);

impl Opening {
    /// Fills the opening on `context`'s request, if the gate put one there, with the thin
    /// path into `server` through the session's peer.
    pub(super) fn fill<S: ThinCall>(server: &S, context: &RequestContext<RoleServer>) {
        let opening = (context.extensions.get::<http::request::Parts>())
            .and_then(|parts| parts.extensions.get::<Opening>());
        if let Some(opening) = opening {
            let calls = Calls::of(server);
            calls.open(context.peer.clone());
            let _ = opening.0.set(calls);
        }
    }

    /// The session's thin path, once the handshake was served.
    pub(super) fn calls(&self) -> Option<Calls> {
        self.0.get().cloned()
    }
}

/// The calls not answered yet by id, each with a number of its own: a client may reuse
/// the id of a call it cancelled while that call is still winding down, and the cancelled
/// one must not take the new one's place.
#[derive(Default)]
struct Running {
    calls: HashMap<RequestId, (u64, CancellationToken)>,
    next: u64,
}

/// A `tools/call` read off a message, ready to run.
#[derive(Debug)]
pub(super) struct Call {
    pub(super) id: RequestId,
    params: CallToolRequestParams,
    pub(super) meta: RequestMetaObject,
}

/// The line as this path takes it: nothing but these keys, `jsonrpc` and `method` as
/// plain strings.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Message<'a> {
    jsonrpc: &'a str,
    id: RequestId,
    method: &'a str,
    params: Params,
}

/// The params of a plain call: what `CallToolRequestParams` holds before a retry
/// (`inputResponses`, `requestState`) or a task (`task`), which take the general path.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Params {
    name: String,
    #[serde(default)]
    arguments: Option<JsonObject>,
    #[serde(rename = "_meta", default)]
    meta: Option<RequestMetaObject>,
}

impl Call {
    /// The tool it calls, as the client named it.
    pub(super) fn name(&self) -> &str {
        &self.params.name
    }
}

impl Calls {
    /// The thin path into `server` (the session's `DeferServer`).
    pub(super) fn of<S: ThinCall>(server: &S) -> Calls {
        let server = server.clone();
        Calls::each(move || server.clone())
    }

    /// The thin path into a server `made` for each call: a request without a session gets
    /// a session of its own, as rmcp gives it (`http/thin.rs`).
    pub(super) fn each<S: ThinCall>(made: impl Fn() -> S + Send + Sync + 'static) -> Calls {
        Calls::new(Arc::new(move |params, context| {
            let server = made();
            Box::pin(async move { server.call_thin(params, context).await })
        }))
    }

    fn new(dispatch: Dispatch) -> Calls {
        Calls {
            dispatch,
            peer: Arc::default(),
            running: Arc::default(),
        }
    }

    /// Opens the path: the handshake is served and `peer` is the session's.
    pub(super) fn open(&self, peer: Peer<RoleServer>) {
        let _ = self.peer.set(peer);
    }

    /// The call in `line` (a stdio line or an HTTP body), when it is a plain `tools/call`
    /// this path takes (see the module doc); `None` sends it the general way.
    pub(super) fn read(&self, line: &[u8]) -> Option<Call> {
        self.peer.get()?;
        read(line)
    }

    /// Whether a call on this path has `id` and is not answered yet.
    pub(super) fn is_running(&self, id: &RequestId) -> bool {
        lock(&self.running).calls.contains_key(id)
    }

    /// The client cancelled `id`: a call of this path with it stops and is not answered.
    pub(super) fn cancel(&self, id: &RequestId) {
        if let Some((_, cancel)) = lock(&self.running).calls.remove(id) {
            cancel.cancel();
        }
    }

    /// Runs `call` on a task of its own and sends its answer line to `out` (stdio).
    pub(super) fn start(&self, call: Call, out: mpsc::UnboundedSender<Vec<u8>>) {
        if let Some(begun) = self.begin(call, Extensions::new()) {
            tokio::spawn(async move {
                if let Some(line) = begun.await {
                    let _ = out.send(line.bytes);
                }
            });
        }
    }

    /// `call` begun with the context rmcp would build; `extensions` are the request's (over
    /// HTTP, its `http::request::Parts`, as rmcp puts them). The caller runs it to its answer
    /// line ([`Begun`]); `None` before the handshake.
    pub(super) fn begin(&self, call: Call, extensions: Extensions) -> Option<Begun> {
        let key = call.id.clone();
        self.begin_as(key, call, extensions)
    }

    /// `call` begun as [`Calls::begin`] does, known on this path and to the server's peer by
    /// `key` and answered under its own id: requests without a session share one peer, and
    /// two clients may use one id at once.
    pub(super) fn begin_as(
        &self,
        key: RequestId,
        call: Call,
        extensions: Extensions,
    ) -> Option<Begun> {
        let peer = self.peer.get().cloned()?;
        let Call { id, params, meta } = call;
        let cancel = CancellationToken::new();
        let number = {
            let mut running = lock(&self.running);
            running.next += 1;
            let number = running.next;
            running.calls.insert(key.clone(), (number, cancel.clone()));
            number
        };
        let mut context = RequestContext::new(key.clone(), peer);
        context.ct = cancel.child_token();
        context.meta = meta;
        context.extensions = extensions;
        tracing::debug!(%id, "tools/call on the thin path");
        Some(Begun {
            answer: Some((self.dispatch)(params, context)),
            id,
            key,
            number,
            cancel,
            running: self.running.clone(),
        })
    }
}

/// A call begun on the thin path: a future of its answer line, `None` when the client
/// cancelled it (a cancelled request is not answered). Dropped before its answer (an HTTP
/// client hung up), it is cancelled and winds down on a task of its own, so the server is
/// told as on a cancel.
pub(super) struct Begun {
    answer: Option<Answering>,
    /// The client's id, which the answer goes under.
    id: RequestId,
    /// The call's place in the table of calls running: its id, unless begun as another.
    key: RequestId,
    /// Its number in the table of calls running, which its key may be given to next.
    number: u64,
    cancel: CancellationToken,
    running: Arc<Mutex<Running>>,
}

impl Begun {
    /// Whether this call still holds its id in the table, taking it out: not when the
    /// client cancelled it (or a new call took the id after a cancel).
    fn leave(&self) -> bool {
        let mut running = lock(&self.running);
        let ours = (running.calls.get(&self.key)).is_some_and(|(n, _)| *n == self.number);
        ours && running.calls.remove(&self.key).is_some()
    }

    /// The JSON-RPC line rmcp would write for `answer`; a passed one as the server wrote
    /// it, under the client's id.
    fn line(&self, answer: Answered) -> Option<Line> {
        let id = self.id.clone();
        let (message, error): (TxJsonRpcMessage<RoleServer>, _) = match answer {
            Answered::Passed(answer, era) => {
                let bytes = self.passed(answer.result(), era)?;
                return Some(Line { bytes, error: None });
            }
            Answered::Typed(Ok(result)) => (JsonRpcMessage::response(result, id), None),
            Answered::Typed(Err(error)) => {
                let code = error.code;
                (JsonRpcMessage::error(error, Some(id)), Some(code))
            }
        };
        match serde_json::to_vec(&message) {
            Ok(mut bytes) => {
                bytes.push(b'\n');
                Some(Line { bytes, error })
            }
            Err(err) => {
                tracing::error!(error = %err, "cannot encode a call's answer");
                None
            }
        }
    }

    /// The response line carrying `result`, the bytes of a downstream's result (an
    /// object without `resultType`, `downstream/passed.rs`), for a client of `era`.
    fn passed(&self, result: &str, era: AnswerEra) -> Option<Vec<u8>> {
        const HEAD: &[u8] = br#"{"jsonrpc":"2.0","id":"#;
        const COMPLETE: &[u8] = br#""resultType":"complete""#;
        let mut line = Vec::with_capacity(HEAD.len() + result.len() + 64);
        line.extend_from_slice(HEAD);
        if let Err(err) = serde_json::to_writer(&mut line, &self.id) {
            tracing::error!(error = %err, "cannot encode a call's id");
            return None;
        }
        line.extend_from_slice(br#","result":"#);
        match (era, result.strip_prefix('{')) {
            (AnswerEra::Inline, Some(rest)) => {
                line.push(b'{');
                line.extend_from_slice(COMPLETE);
                if !rest.trim_start().starts_with('}') {
                    line.push(b',');
                }
                line.extend_from_slice(rest.as_bytes());
            }
            _ => line.extend_from_slice(result.as_bytes()),
        }
        line.extend_from_slice(b"}\n");
        tracing::debug!(id = %self.id, "answer passed on as its server wrote it");
        Some(line)
    }
}

/// A call's answer as the client gets it: the JSON-RPC line, and the error's code when it
/// is an error (an HTTP answer's status may depend on it).
pub(super) struct Line {
    pub(super) bytes: Vec<u8>,
    pub(super) error: Option<ErrorCode>,
}

impl Future for Begun {
    type Output = Option<Line>;

    fn poll(
        mut self: Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Option<Line>> {
        let Some(answer) = self.answer.as_mut() else {
            return std::task::Poll::Ready(None);
        };
        let answer = std::task::ready!(answer.as_mut().poll(cx));
        self.answer = None;
        // rmcp cancels a request's token once it is answered; tasks tied to it end.
        self.cancel.cancel();
        if !self.leave() {
            tracing::debug!(id = %self.id, "not answering a cancelled call");
            return std::task::Poll::Ready(None);
        }
        std::task::Poll::Ready(self.line(answer))
    }
}

impl Drop for Begun {
    fn drop(&mut self) {
        let Some(rest) = self.answer.take() else {
            return;
        };
        self.leave();
        self.cancel.cancel();
        tracing::debug!(id = %self.id, "a call's answer is no longer awaited; cancelled");
        // Spawning needs a runtime; without one (the process is ending) it just goes.
        if let Ok(runtime) = tokio::runtime::Handle::try_current() {
            runtime.spawn(async move {
                let _ = rest.await;
            });
        }
    }
}

/// The call on `line`, when it is a plain `tools/call` this path takes (see the module doc).
pub(super) fn read(line: &[u8]) -> Option<Call> {
    let text = std::str::from_utf8(line).ok()?;
    // A lone surrogate is repaired on the general path; paired ones are rare enough.
    if matches!(repair_surrogates(text), std::borrow::Cow::Owned(_)) {
        return None;
    }
    let message: Message = serde_json::from_str(text).ok()?;
    if message.jsonrpc != "2.0" || message.method != "tools/call" {
        return None;
    }
    let mut params = CallToolRequestParams::new(message.params.name);
    params.arguments = message.params.arguments;
    Some(Call {
        id: message.id,
        params,
        meta: message.params.meta.unwrap_or_default(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A plain call is read with its id, name, arguments and `_meta`; everything else the
    /// general path answers as it always did.
    #[test]
    fn only_a_plain_tools_call_takes_the_thin_path() {
        let call = read(br#"{"jsonrpc":"2.0","id":"a","method":"tools/call","params":{"name":"s__t","arguments":{"x":1},"_meta":{"progressToken":7}}}"#)
            .unwrap_or_else(|| panic!("a plain call"));
        assert_eq!(call.id, RequestId::String("a".into()));
        assert_eq!(call.params.name, "s__t");
        assert_eq!(
            call.params.arguments.and_then(|a| a.get("x").cloned()),
            Some(serde_json::json!(1))
        );
        assert!(call.meta.get_progress_token().is_some());
        for line in [
            // Not a call, or not JSON-RPC 2.0.
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#,
            r#"{"jsonrpc":"1.0","id":1,"method":"tools/call","params":{"name":"t"}}"#,
            // A task, a retry, a field rmcp does not know, a top-level extra.
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"t","task":{}}}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"t","requestState":"x"}}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"t","other":1}}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"t"},"x":1}"#,
            // Broken: bad params, a null id, trailing junk, a lone surrogate, an escape.
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{}}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"t","arguments":[1]}}"#,
            r#"{"jsonrpc":"2.0","id":null,"method":"tools/call","params":{"name":"t"}}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"t"}} {}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"t \ud83d"}}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"tools\/call","params":{"name":"t"}}"#,
        ] {
            assert!(read(line.as_bytes()).is_none(), "{line}");
        }
    }

    /// Before the handshake is served, every line goes to rmcp.
    #[test]
    fn nothing_takes_the_thin_path_before_the_handshake() {
        let calls = Calls::new(Arc::new(|_, _| {
            Box::pin(async { Answered::Typed(Ok(ServerResult::empty(()))) })
        }));
        let line = br#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"t"}}"#;
        assert!(calls.read(line).is_none());
    }
}
