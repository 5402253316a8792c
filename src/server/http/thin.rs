//! A plain `tools/call` served around rmcp's per-request machinery: the HTTP half of the
//! thin call path (`server/thin_calls.rs`), for a handshake-era session's call ([`Thin`])
//! and for a 2026-07-28 request without a session ([`Sessionless`]).
//!
//! rmcp serves a session's request through the session's worker: it opens a request-wise
//! channel (an SSE stream with a priming event, event ids and a cache kept for
//! resumption), hands the message to the service loop, which spawns the handler, and
//! brings the answer back through the loop and the worker to the stream. A request without
//! a session costs more: rmcp makes a server and a service loop of its own for each. Here a
//! plain call is read once and run by the thin path, and its answer is the response:
//! `application/json` when nothing else came first (the client has then read the whole
//! body and may keep the connection), else an SSE stream of what the call sent the client
//! first (progress, requests such as an elicitation) and then the answer. A server may
//! answer a POST either way; a client must take both.
//!
//! What a call sends the client through its peer still passes rmcp's service loop, which
//! keeps the ids of its requests so the client's answers (POSTed as usual) find them. The
//! transport under that loop ([`Diverting`]) then takes what belongs to a thin call off to
//! that call's response: its progress by token, a request tagged with the call's id. A
//! session's worker routes the same messages to the call's own stream. Requests without a
//! session share one peer per path, as each would have one made by rmcp: what they send
//! goes by a key of ours for the call, never the client's id or token, which another
//! client may use at the same moment.
//!
//! Only a request rmcp would take as it is goes this way ([`Hosts::admit`],
//! [`Sessionless::admit`]): no `Origin` (a browser's is checked by rmcp), a `Host` on the
//! allow list, `Accept` naming JSON and SSE without weights, JSON content, and for a
//! session a handshake-era version; for a request without one, the 2026-07-28 version in
//! its header and in its whole `_meta` envelope, with the standard `Mcp-Method` and
//! `Mcp-Name` headers matching the body. Any doubt sends it to rmcp, whose answer (403,
//! 406, 415, 400) is the spec's.

use std::collections::{HashMap, VecDeque};
use std::convert::Infallible;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::body::Body;
use axum::response::{IntoResponse, Response};
use bytes::Bytes;
use http::{HeaderValue, StatusCode, header, request::Parts};
use rmcp::RoleServer;
use rmcp::model::{
    ClientCapabilities, ErrorCode, Extensions, GetExtensions, Implementation,
    InitializeRequestParams, JsonRpcMessage, NumberOrString, ProgressToken, ProtocolVersion,
    RequestId, ServerNotification,
};
use rmcp::service::{OriginatingRequestId, RxJsonRpcMessage, Service, TxJsonRpcMessage};
use rmcp::transport::Transport;
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use crate::protocol::{self, method};
use crate::server::thin_calls::{Begun, Call, Calls, Line};
use crate::sync::lock;

/// What a message to the client is: rmcp's type, as the session's transport takes it.
type ToClient = TxJsonRpcMessage<RoleServer>;

/// The hosts a request may name to take this path: rmcp's allow list, as configured.
#[derive(Clone, Debug)]
pub(super) enum Hosts {
    /// These names with their port, if one is given, read once as rmcp reads them.
    Only(Arc<[(String, Option<u16>)]>),
    /// Any: the allow list is off (reachable under names we cannot know; tokens guard it).
    Any,
}

impl Hosts {
    /// rmcp's allow list (`host` or `host:port` entries); an empty one allows any host.
    pub(super) fn allowing(allowed: &[String]) -> Hosts {
        if allowed.is_empty() {
            return Hosts::Any;
        }
        // An entry that is no authority (`::1`) is a bare host name, as rmcp reads it.
        let entry = |allowed: &String| authority(allowed).unwrap_or_else(|| (bare(allowed), None));
        Hosts::Only(allowed.iter().map(entry).collect())
    }

    /// The plain call in `body`, when `parts` and the call are a request rmcp would take as
    /// they are (see the module doc) and `calls` is open.
    pub(super) fn admit(&self, parts: &Parts, calls: &Calls, body: &[u8]) -> Option<Call> {
        let headers = &parts.headers;
        if !self.plain(headers)
            || !handshake_era(headers.get(protocol::header::MCP_PROTOCOL_VERSION))
        {
            return None;
        }
        let call = calls.read(body)?;
        // A version in `_meta` makes it a 2026-07-28 request, which rmcp serves apart.
        let enveloped = (call.meta.0.0.keys()).any(|k| k.starts_with("io.modelcontextprotocol/"));
        (!enveloped).then_some(call)
    }

    /// Whether `headers` are a POST's that rmcp's transport checks would pass as they are,
    /// whatever the era: no `Origin`, an allowed `Host`, both media types accepted, JSON sent.
    fn plain(&self, headers: &http::HeaderMap) -> bool {
        !headers.contains_key(header::ORIGIN)
            && headers
                .get(header::HOST)
                .is_some_and(|host| self.allows(host))
            && accepts_json_and_sse(headers)
            && headers.get(header::CONTENT_TYPE).is_some_and(is_json)
    }

    fn allows(&self, host: &HeaderValue) -> bool {
        let Hosts::Only(allowed) = self else {
            return true;
        };
        let Some(host) = host.to_str().ok().and_then(authority) else {
            return false;
        };
        (allowed.iter())
            .any(|(name, port)| *name == host.0 && port.is_none_or(|port| host.1 == Some(port)))
    }
}

/// A `host[:port]` as rmcp compares it: brackets off, lower case.
fn authority(text: &str) -> Option<(String, Option<u16>)> {
    let authority = http::uri::Authority::try_from(text.trim()).ok()?;
    Some((bare(authority.host()), authority.port_u16()))
}

fn bare(host: &str) -> String {
    host.trim().trim_matches(['[', ']']).to_ascii_lowercase()
}

/// Whether `Accept` names both media types a POST's answer may have, plainly: a weight or
/// a wildcard is left to rmcp's reading.
fn accepts_json_and_sse(headers: &http::HeaderMap) -> bool {
    let (mut json, mut sse) = (false, false);
    for value in headers.get_all(header::ACCEPT) {
        let Ok(value) = value.to_str() else {
            return false;
        };
        for item in value.split(',').map(str::trim) {
            if item.contains(';') {
                return false;
            }
            json |= item.eq_ignore_ascii_case(JSON);
            sse |= item.eq_ignore_ascii_case(SSE);
        }
    }
    json && sse
}

fn is_json(content_type: &HeaderValue) -> bool {
    let Ok(value) = content_type.to_str() else {
        return false;
    };
    let essence = value.split_once(';').map_or(value, |(essence, _)| essence);
    essence.trim().eq_ignore_ascii_case(JSON)
}

/// No version header (rmcp assumes 2025-03-26), or a known version before 2026-07-28,
/// whose standard headers rmcp checks against the body.
fn handshake_era(version: Option<&HeaderValue>) -> bool {
    let Some(version) = version else {
        return true;
    };
    let Ok(version) = version.to_str() else {
        return false;
    };
    version < ProtocolVersion::STANDARD_HEADERS.as_str()
        && ProtocolVersion::KNOWN_VERSIONS
            .iter()
            .any(|known| known.as_str() == version)
}

const JSON: &str = "application/json";
const SSE: &str = "text/event-stream";

/// The thin calls of one session in flight, each with where its messages to the client
/// go; shared by the session's transport ([`Diverting`]) and the gate.
#[derive(Clone, Default)]
pub(super) struct Diversions(Arc<Mutex<Table>>);

#[derive(Default)]
struct Table {
    calls: HashMap<RequestId, mpsc::UnboundedSender<ToClient>>,
    tokens: HashMap<ProgressToken, RequestId>,
}

/// A call's place in [`Diversions`], given up on drop.
struct Diversion {
    diversions: Diversions,
    id: RequestId,
    token: Option<ProgressToken>,
}

impl Drop for Diversion {
    fn drop(&mut self) {
        let mut table = lock(&self.diversions.0);
        table.calls.remove(&self.id);
        if let Some(token) = &self.token {
            table.tokens.remove(token);
        }
    }
}

impl Diversions {
    fn register(
        &self,
        id: RequestId,
        token: Option<ProgressToken>,
    ) -> (Diversion, mpsc::UnboundedReceiver<ToClient>) {
        let (tx, rx) = mpsc::unbounded_channel();
        let mut table = lock(&self.0);
        table.calls.insert(id.clone(), tx);
        if let Some(token) = &token {
            table.tokens.insert(token.clone(), id.clone());
        }
        let diversion = Diversion {
            diversions: self.clone(),
            id,
            token,
        };
        (diversion, rx)
    }

    /// `message` handed to the thin call it belongs to, or back when it is no thin call's
    /// (or that call's response is gone: rmcp's worker then routes it as it would).
    fn divert(&self, message: ToClient) -> Option<ToClient> {
        let table = lock(&self.0);
        if table.calls.is_empty() {
            return Some(message);
        }
        let call = match &message {
            JsonRpcMessage::Notification(notification) => match &notification.notification {
                ServerNotification::ProgressNotification(progress) => {
                    table.tokens.get(&progress.params.progress_token)
                }
                _ => None,
            },
            JsonRpcMessage::Request(request) => (request.request.extensions())
                .get::<OriginatingRequestId>()
                .map(|origin| &origin.0),
            _ => None,
        };
        match call.and_then(|id| table.calls.get(id)) {
            Some(tx) => tx.send(message).err().map(|returned| returned.0),
            None => Some(message),
        }
    }
}

/// A session's transport: rmcp's, with what belongs to a thin call taken off to it.
pub(super) struct Diverting<T> {
    pub(super) inner: T,
    pub(super) diversions: Diversions,
}

impl<T: Transport<RoleServer>> Transport<RoleServer> for Diverting<T> {
    type Error = T::Error;

    fn send(
        &mut self,
        item: ToClient,
    ) -> impl Future<Output = Result<(), Self::Error>> + Send + 'static {
        let passed = (self.diversions.divert(item)).map(|item| self.inner.send(item));
        async move {
            match passed {
                Some(sent) => sent.await,
                None => Ok(()),
            }
        }
    }

    fn receive(&mut self) -> impl Future<Output = Option<RxJsonRpcMessage<RoleServer>>> + Send {
        self.inner.receive()
    }

    fn close(&mut self) -> impl Future<Output = Result<(), Self::Error>> + Send {
        self.inner.close()
    }
}

/// One session's thin path and its calls in flight.
#[derive(Clone)]
pub(super) struct Thin {
    pub(super) calls: Calls,
    pub(super) diversions: Diversions,
}

impl Thin {
    /// Runs `call` with the request's `parts` (as rmcp gives a handler) and answers it.
    pub(super) async fn respond(&self, call: Call, parts: Parts) -> Response {
        let (id, token) = (call.id.clone(), call.meta.get_progress_token());
        let (diversion, sent) = (self.diversions).register(id.clone(), token);
        let Some(call) = self.calls.begin(call, with(parts)) else {
            // `Hosts::admit` read the call through an open path: not reached.
            return StatusCode::INTERNAL_SERVER_ERROR.into_response();
        };
        tracing::debug!(%id, "tools/call over HTTP on the thin path");
        Answer::new(call, sent, diversion)
            .respond(Era::Session)
            .await
    }
}

/// The thin path of the requests without a session at one path: 2026-07-28 requests, each
/// carrying its whole envelope. They share one peer, made once as rmcp makes one for each
/// such request, and each call gets a server of its own as rmcp's path gives it.
#[derive(Clone)]
pub(super) struct Sessionless {
    hosts: Hosts,
    calls: Calls,
    diversions: Diversions,
    /// The keys calls are known by on the shared peer.
    next: Arc<AtomicU64>,
}

/// The era requests without a session are served in here: the one that has no sessions.
const SESSIONLESS: ProtocolVersion = ProtocolVersion::V_2026_07_28;

impl Sessionless {
    /// The path into `calls`, with the peer a service over `server` gives them, running
    /// until `stop`. `hosts`: as for sessions.
    pub(super) fn start<S: Service<RoleServer>>(
        hosts: Hosts,
        calls: Calls,
        server: S,
        stop: CancellationToken,
    ) -> Sessionless {
        let diversions = Diversions::default();
        let transport = Diverting {
            inner: Nowhere,
            diversions: diversions.clone(),
        };
        // What rmcp knows of the client of such a request: its version, nothing more
        // (its capabilities and its name come in each request's envelope).
        let client =
            InitializeRequestParams::new(ClientCapabilities::default(), Implementation::default())
                .with_protocol_version(SESSIONLESS);
        let running = rmcp::service::serve_directly_with_ct(server, transport, Some(client), stop);
        calls.open(running.peer().clone());
        tokio::spawn(async move {
            let _ = running.waiting().await;
        });
        Sessionless {
            hosts,
            calls,
            diversions,
            next: Arc::default(),
        }
    }

    /// The plain call in `body`, when `parts` and the call are a request without a session
    /// that rmcp would serve as they are (see the module doc).
    pub(super) fn admit(&self, parts: &Parts, body: &[u8]) -> Option<Call> {
        let headers = &parts.headers;
        if !self.hosts.plain(headers) {
            return None;
        }
        let call = self.calls.read(body)?;
        sessionless_call(headers, &call).then_some(call)
    }

    /// Runs `call` with the request's `parts` and answers it; its progress goes to the
    /// shared peer under a token of ours and reaches the client under its own.
    pub(super) async fn respond(&self, mut call: Call, parts: Parts) -> Response {
        let key: Arc<str> =
            format!("mcp-defer/{}", self.next.fetch_add(1, Ordering::Relaxed)).into();
        let client_token = call.meta.get_progress_token();
        let token = client_token
            .as_ref()
            .map(|_| ProgressToken(NumberOrString::String(key.clone())));
        if let Some(token) = &token {
            call.meta.set_progress_token(token.clone());
        }
        let key = RequestId::String(key);
        tracing::debug!(id = %call.id, %key, "tools/call without a session on the thin path");
        let (diversion, sent) = (self.diversions).register(key.clone(), token.clone());
        let Some(call) = self.calls.begin_as(key, call, with(parts)) else {
            // The peer is set when the path is made: not reached.
            return StatusCode::INTERNAL_SERVER_ERROR.into_response();
        };
        let mut answer = Answer::new(call, sent, diversion);
        answer.restore = token.zip(client_token);
        answer.respond(Era::Sessionless).await
    }
}

/// Whether `call`, with `headers` (past [`Hosts::plain`]), is a 2026-07-28 request that
/// rmcp would serve as it is: its version in the header and with the whole envelope in
/// `_meta`, and the standard headers (SEP-2243) one each and matching the body.
fn sessionless_call(headers: &http::HeaderMap, call: &Call) -> bool {
    let version = sole(headers, protocol::header::MCP_PROTOCOL_VERSION);
    let method = sole(headers, protocol::header::MCP_METHOD);
    let meta = &call.meta;
    version == Some(SESSIONLESS.as_str().as_bytes())
        && method == Some(method::TOOLS_CALL.as_bytes())
        // rmcp compares the name after decoding a Base64 form (`=?base64?...?=`), which a
        // name that needs it takes: such a call goes to rmcp.
        && sole(headers, protocol::header::MCP_NAME)
            .is_some_and(|name| name == call.name().as_bytes() && !name.starts_with(b"=?"))
        && meta.protocol_version().as_ref() == Some(&SESSIONLESS)
        && meta.missing_required_keys(&SESSIONLESS).is_empty()
        // Its log messages would have no call to go with on the shared peer.
        && meta.log_level().is_none()
}

/// The one value of the header `name`, as bytes; `None` when absent or given twice.
fn sole<'h>(headers: &'h http::HeaderMap, name: &str) -> Option<&'h [u8]> {
    let mut values = headers.get_all(name).iter();
    let value = values.next()?;
    values.next().is_none().then_some(value.as_bytes())
}

/// The request's parts as the handler's context carries them (rmcp puts them there).
fn with(parts: Parts) -> Extensions {
    let mut extensions = Extensions::new();
    extensions.insert(parts);
    extensions
}

/// The transport under the peer that requests without a session share: nothing comes in
/// (each request is served on its own), and what goes out is their calls' ([`Diverting`]
/// takes it to the call). What belongs to no call has no stream to go to, as it would have
/// none on rmcp's path once the request is answered.
struct Nowhere;

impl Transport<RoleServer> for Nowhere {
    type Error = Infallible;

    fn send(
        &mut self,
        item: ToClient,
    ) -> impl Future<Output = Result<(), Self::Error>> + Send + 'static {
        // Its kind only: a message's text (a server's log line, its progress message) may
        // quote what no log should hold.
        let kind = match item {
            JsonRpcMessage::Request(_) => "request",
            JsonRpcMessage::Notification(_) => "notification",
            _ => "answer",
        };
        tracing::debug!(
            kind,
            "dropped a message to a client without a session: it belongs to no call in flight"
        );
        std::future::ready(Ok(()))
    }

    fn receive(&mut self) -> impl Future<Output = Option<RxJsonRpcMessage<RoleServer>>> + Send {
        std::future::pending()
    }

    fn close(&mut self) -> impl Future<Output = Result<(), Self::Error>> + Send {
        std::future::ready(Ok(()))
    }
}

/// How a call's answer is told over HTTP.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Era {
    /// In a handshake-era session: an error is a JSON-RPC error, HTTP 200.
    Session,
    /// Without a session (2026-07-28): an error that rmcp answers with another status
    /// (a version or capability the request lacks: 400) gets it when answered as JSON.
    Sessionless,
}

impl Era {
    fn status(self, error: Option<ErrorCode>) -> StatusCode {
        let Some(code) = error.filter(|_| self == Era::Sessionless) else {
            return StatusCode::OK;
        };
        if code == ErrorCode::UNSUPPORTED_PROTOCOL_VERSION
            || code == ErrorCode::MISSING_REQUIRED_CLIENT_CAPABILITY
            || code == ErrorCode::HEADER_MISMATCH
        {
            StatusCode::BAD_REQUEST
        } else if code == ErrorCode::METHOD_NOT_FOUND {
            StatusCode::NOT_FOUND
        } else {
            StatusCode::OK
        }
    }
}

/// A call on the thin path as its HTTP response takes it: the call itself, run by whoever
/// polls the response (dropped before its answer, it is cancelled: [`Begun`]), what it sent
/// the client meanwhile, and the frames ready to go.
struct Answer {
    call: Begun,
    sent: mpsc::UnboundedReceiver<ToClient>,
    _diversion: Diversion,
    /// The progress token the call's progress is sent under, and the client's.
    restore: Option<(ProgressToken, ProgressToken)>,
    frames: VecDeque<Bytes>,
    /// The call has ended: its answer, if any, is among the frames.
    done: bool,
}

/// What woke the response.
enum Next {
    /// A message to the client, as its event.
    Sent(Bytes),
    Answered(Option<Line>),
    Quiet,
}

impl Answer {
    fn new(call: Begun, sent: mpsc::UnboundedReceiver<ToClient>, diversion: Diversion) -> Answer {
        Answer {
            call,
            sent,
            _diversion: diversion,
            restore: None,
            frames: VecDeque::new(),
            done: false,
        }
    }

    /// The response: the answer as JSON when it comes first and soon, else a stream.
    async fn respond(mut self, era: Era) -> Response {
        match self.next(JSON_WITHIN).await {
            Next::Sent(event) => self.frames.push_back(event),
            Next::Answered(Some(line)) if self.sent.is_empty() => {
                return json(line.bytes, era.status(line.error));
            }
            Next::Answered(line) => self.end(line),
            Next::Quiet => {}
        }
        stream(self)
    }

    /// Runs the call until it sends the client something, ends, or is quiet for `quiet`.
    /// What it sent goes first: it was sent before the answer.
    async fn next(&mut self, quiet: Duration) -> Next {
        tokio::select! {
            biased;
            Some(message) = self.sent.recv() => Next::Sent(self.event(message)),
            line = &mut self.call => Next::Answered(line),
            () = tokio::time::sleep(quiet) => Next::Quiet,
        }
    }

    /// The call ended with `line` (`None`: cancelled, not answered): what it sent the client
    /// before goes first, the answer last.
    fn end(&mut self, line: Option<Line>) {
        while let Ok(message) = self.sent.try_recv() {
            let event = self.event(message);
            self.frames.push_back(event);
        }
        if let Some(line) = line {
            self.frames.push_back(frame(line.bytes.trim_ascii_end()));
        }
        self.done = true;
    }

    /// `message` as the client's event: its progress under the client's own token.
    fn event(&self, mut message: ToClient) -> Bytes {
        if let (Some((ours, client)), JsonRpcMessage::Notification(notification)) =
            (&self.restore, &mut message)
            && let ServerNotification::ProgressNotification(progress) =
                &mut notification.notification
            && progress.params.progress_token == *ours
        {
            progress.params.progress_token = client.clone();
        }
        event(&message)
    }
}

/// How long a call's answer may keep its response waiting to go as JSON. A longer call
/// gets its SSE stream at once, kept alive, as rmcp's would: a client or a proxy between
/// may give up on a response that says nothing for minutes.
const JSON_WITHIN: Duration = Duration::from_millis(100);

/// How often a quiet stream says it is alive (rmcp's default).
const KEEP_ALIVE: Duration = Duration::from_secs(15);

/// The answer alone, as `application/json` (without the line's newline).
fn json(mut line: Vec<u8>, status: StatusCode) -> Response {
    if line.last() == Some(&b'\n') {
        line.pop();
    }
    let mut response = Response::new(Body::from(line));
    *response.status_mut() = status;
    (response.headers_mut()).insert(header::CONTENT_TYPE, HeaderValue::from_static(JSON));
    response
}

/// An SSE stream of what the call sends the client, then its answer; a comment when it
/// has said nothing for [`KEEP_ALIVE`].
fn stream(answer: Answer) -> Response {
    let events = futures::stream::unfold(answer, |mut answer| async move {
        loop {
            if let Some(frame) = answer.frames.pop_front() {
                return Some((Ok::<_, Infallible>(frame), answer));
            }
            if answer.done {
                return None;
            }
            match answer.next(KEEP_ALIVE).await {
                Next::Sent(event) => answer.frames.push_back(event),
                Next::Answered(line) => answer.end(line),
                // An SSE comment, which a client skips.
                Next::Quiet => return Some((Ok(Bytes::from_static(b":\n\n")), answer)),
            }
        }
    });
    let mut response = Response::new(Body::from_stream(events));
    *response.status_mut() = StatusCode::OK;
    let headers = response.headers_mut();
    headers.insert(header::CONTENT_TYPE, HeaderValue::from_static(SSE));
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-cache"));
    response
}

/// `message` as one SSE event.
fn event(message: &ToClient) -> Bytes {
    match serde_json::to_vec(message) {
        Ok(json) => frame(&json),
        Err(err) => {
            tracing::error!(error = %err, "cannot encode a message to the client");
            Bytes::new()
        }
    }
}

/// One SSE event carrying `json` (compact JSON holds no line break).
fn frame(json: &[u8]) -> Bytes {
    let mut event = Vec::with_capacity(json.len() + 8);
    event.extend_from_slice(b"data: ");
    event.extend_from_slice(json);
    event.extend_from_slice(b"\n\n");
    Bytes::from(event)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn headers(pairs: &[(&'static str, &str)]) -> http::HeaderMap {
        let mut headers = http::HeaderMap::new();
        for (name, value) in pairs {
            headers.append(
                *name,
                HeaderValue::from_str(value).unwrap_or_else(|e| panic!("{value}: {e}")),
            );
        }
        headers
    }

    #[test]
    fn accept_must_name_both_plainly() {
        let both = headers(&[("accept", "application/json, text/event-stream")]);
        assert!(accepts_json_and_sse(&both));
        let split = headers(&[
            ("accept", "application/json"),
            ("accept", "TEXT/event-stream"),
        ]);
        assert!(accepts_json_and_sse(&split));
        for value in [
            "application/json",
            "*/*",
            "application/json, text/event-stream;q=0",
        ] {
            assert!(
                !accepts_json_and_sse(&headers(&[("accept", value)])),
                "{value}"
            );
        }
    }

    #[test]
    fn only_known_handshake_era_versions_pass() {
        assert!(handshake_era(None));
        for version in ["2025-06-18", "2025-11-25", "2025-03-26"] {
            assert!(
                handshake_era(Some(&HeaderValue::from_static(version))),
                "{version}"
            );
        }
        for version in ["2026-07-28", "2099-01-01", "junk", "2025-06-19"] {
            assert!(
                !handshake_era(Some(&HeaderValue::from_static(version))),
                "{version}"
            );
        }
    }

    #[test]
    fn hosts_match_as_rmcp_matches_them() {
        let loopback = Hosts::allowing(&[
            "localhost".to_owned(),
            "127.0.0.1".to_owned(),
            "::1".to_owned(),
            "example.com:8080".to_owned(),
        ]);
        for host in [
            "127.0.0.1:8765",
            "LOCALHOST",
            "[::1]:80",
            "example.com:8080",
        ] {
            assert!(loopback.allows(&HeaderValue::from_static(host)), "{host}");
        }
        for host in [
            "evil.example:8765",
            "example.com:9090",
            "example.com",
            "127.0.0.2",
        ] {
            assert!(!loopback.allows(&HeaderValue::from_static(host)), "{host}");
        }
        assert!(Hosts::allowing(&[]).allows(&HeaderValue::from_static("anything:1")));
    }

    #[test]
    fn only_a_2026_request_rmcp_would_take_as_it_is_goes_without_a_session() {
        let envelope = r#""io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{"name":"c","version":"1"},"io.modelcontextprotocol/clientCapabilities":{}"#;
        let body = |meta: &str| {
            format!(
                r#"{{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{{"name":"s__t","_meta":{{{meta}}}}}}}"#
            )
        };
        let read = |meta: &str| {
            crate::server::thin_calls::read(body(meta).as_bytes())
                .unwrap_or_else(|| panic!("a plain call: {meta}"))
        };
        let plain = [
            ("mcp-protocol-version", "2026-07-28"),
            ("mcp-method", "tools/call"),
            ("mcp-name", "s__t"),
        ];
        assert!(sessionless_call(&headers(&plain), &read(envelope)));
        let with = |extra: (&'static str, &'static str)| {
            let mut pairs = plain.to_vec();
            pairs.retain(|(name, _)| *name != extra.0);
            pairs.push(extra);
            headers(&pairs)
        };
        for changed in [
            with(("mcp-protocol-version", "2025-11-25")),
            with(("mcp-method", "tools/list")),
            with(("mcp-name", "s__other")),
            with(("mcp-name", "=?base64?c19fdA==?=")),
        ] {
            assert!(!sessionless_call(&changed, &read(envelope)), "{changed:?}");
        }
        let mut twice = headers(&plain);
        twice.append("mcp-name", HeaderValue::from_static("s__t"));
        assert!(!sessionless_call(&twice, &read(envelope)), "a header twice");
        let mut missing = headers(&plain);
        missing.remove("mcp-method");
        assert!(
            !sessionless_call(&missing, &read(envelope)),
            "no Mcp-Method"
        );
        let no_capabilities =
            envelope.replace(r#","io.modelcontextprotocol/clientCapabilities":{}"#, "");
        let logs = format!(r#"{envelope},"io.modelcontextprotocol/logLevel":"info""#);
        let older = envelope.replace("2026-07-28", "2025-11-25");
        for meta in [no_capabilities.as_str(), &logs, &older, ""] {
            assert!(!sessionless_call(&headers(&plain), &read(meta)), "{meta}");
        }
    }

    #[test]
    fn a_call_gets_its_progress_and_its_requests_others_pass_on() {
        use rmcp::model::{
            PingRequest, ProgressNotification, ProgressNotificationParam, ServerRequest,
        };
        let diversions = Diversions::default();
        let token = ProgressToken(rmcp::model::NumberOrString::String("t".into()));
        let id = RequestId::Number(7);
        let (diversion, mut rx) = diversions.register(id.clone(), Some(token.clone()));
        let progress = |token: ProgressToken| -> ToClient {
            JsonRpcMessage::notification(ServerNotification::ProgressNotification(
                ProgressNotification::new(ProgressNotificationParam::new(token, 1.0)),
            ))
        };
        assert!(diversions.divert(progress(token.clone())).is_none());
        let other = ProgressToken(rmcp::model::NumberOrString::Number(1));
        assert!(diversions.divert(progress(other)).is_some());
        let mut ask = ServerRequest::PingRequest(PingRequest::default());
        ask.extensions_mut()
            .insert(OriginatingRequestId(id.clone()));
        assert!(
            diversions
                .divert(JsonRpcMessage::request(ask, RequestId::Number(0)))
                .is_none()
        );
        assert_eq!(rx.try_recv().map(|_| ()).ok(), Some(()));
        assert_eq!(rx.try_recv().map(|_| ()).ok(), Some(()));
        drop(diversion);
        assert!(
            diversions.divert(progress(token)).is_some(),
            "given up on drop"
        );
    }
}
