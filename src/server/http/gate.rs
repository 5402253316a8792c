//! What an HTTP request must pass before rmcp's transport sees it: a bearer token (when
//! configured), the session's owner, the body's size, time and syntax, and the limits on
//! requests in flight and sessions per token.
//!
//! Tokens are compared in constant time (`subtle`), every configured token each time, so
//! the answer's timing says nothing about how much of a guess was right. A token never
//! reaches a log line or an error message. The token a request carries is its principal;
//! a session belongs to the principal that opened it and is 404 to every other (the spec:
//! session ids SHOULD be bound to the user).
//!
//! The body is read here, not by rmcp, so that a slow body is cut at `body_timeout_sec`,
//! a body that is not JSON gets the JSON-RPC parse error (-32700, HTTP 400) rather than
//! rmcp's 415, a lone surrogate escape becomes U+FFFD as on stdio, and a request reusing
//! the id of one still in flight in its session is refused instead of taking over the
//! first one's stream. `Host` and `Origin` are checked by rmcp behind this gate.

use std::collections::HashMap;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use std::time::Duration;

use axum::body::Body;
use axum::extract::{Request, State};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use bytes::Bytes;
use http::{HeaderValue, Method, StatusCode, header};
use http_body::{Frame, SizeHint};
use subtle::ConstantTimeEq;
use tokio::sync::{OwnedSemaphorePermit, Semaphore};

use super::expiry::{Admission, IdInFlight, Owner, Principal, Reservation, Sessions};
use super::thin::{Hosts, Sessionless};
use crate::config::{HttpSettings, TokenSource};
use crate::ingest::Registry;
use crate::protocol::{self, method};
use crate::server::error::HttpError;
use crate::server::reused_ids::http as reused_ids;
use crate::server::thin_calls::Opening;
use crate::sync::lock;

/// The accepted bearer tokens. `Debug` shows how many, never what.
///
/// Each token keeps its position (its [`Principal`]) for the life of the process: a token
/// removed from `token_file` leaves an empty place ([`Tokens::reread`]), so no other
/// token's sessions change owner.
pub(super) struct Tokens {
    accepted: std::sync::RwLock<Vec<Option<Vec<u8>>>>,
}

impl std::fmt::Debug for Tokens {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Tokens({} configured)", self.live())
    }
}

/// What re-reading `token_file` changed.
#[derive(Debug, Default, PartialEq)]
pub(super) struct TokenChange {
    /// The principals whose tokens are gone: refused from now on, their sessions closed.
    pub revoked: Vec<Principal>,
    /// How many tokens are new.
    pub added: usize,
}

impl Tokens {
    /// Reads the tokens `[settings.http]` names; `None` when it names none. Each is masked
    /// in every log line from now on (a client may put its token anywhere, its arguments
    /// too).
    ///
    /// # Errors
    /// An unset variable, an unreadable file, or either holding no token.
    pub(super) fn load(settings: &HttpSettings) -> Result<Option<Tokens>, HttpError> {
        let tokens = match &settings.tokens {
            None => return Ok(None),
            Some(TokenSource::Env(var)) => {
                let value = std::env::var(var).unwrap_or_default();
                let tokens = split(value.split(','));
                if tokens.is_empty() {
                    return Err(HttpError::NoTokenInEnv { var: var.clone() });
                }
                tokens
            }
            Some(TokenSource::File(path)) => read_token_file(path)?,
        };
        Ok(Some(Tokens::new(tokens)))
    }

    fn new(tokens: Vec<Vec<u8>>) -> Tokens {
        register(&tokens);
        Tokens {
            accepted: std::sync::RwLock::new(tokens.into_iter().map(Some).collect()),
        }
    }

    /// Takes `tokens` as the accepted ones (`token_file` as it reads now): a token no
    /// longer there is refused from now on, a new one accepted; the others keep their
    /// principals.
    pub(super) fn reread(&self, tokens: Vec<Vec<u8>>) -> TokenChange {
        register(&tokens);
        let mut accepted = crate::sync::write(&self.accepted);
        let mut change = TokenChange::default();
        for (position, place) in accepted.iter_mut().enumerate() {
            if place.as_ref().is_some_and(|token| !tokens.contains(token)) {
                *place = None;
                change.revoked.push(Principal(position));
            }
        }
        for token in tokens {
            if !accepted.iter().flatten().any(|t| *t == token) {
                accepted.push(Some(token));
                change.added += 1;
            }
        }
        change
    }

    /// How many tokens are accepted now.
    fn live(&self) -> usize {
        let accepted = crate::sync::read(&self.accepted);
        accepted.iter().flatten().count()
    }

    /// Whether `offered` is one of the tokens, in time that depends only on the lengths.
    #[cfg(test)]
    fn accepts(&self, offered: &[u8]) -> bool {
        self.position(offered).is_some()
    }

    /// Whose use the holder of the token at `position` learns from (a hash of it).
    fn learner(&self, position: usize) -> crate::search::usage::Principal {
        let accepted = crate::sync::read(&self.accepted);
        (accepted.get(position))
            .and_then(Option::as_ref)
            .map(|token| crate::search::usage::Principal::of_token(token))
            .unwrap_or_default()
    }

    /// Which of the tokens `offered` is, comparing with every one of them in time that
    /// depends only on the lengths.
    fn position(&self, offered: &[u8]) -> Option<usize> {
        let accepted = crate::sync::read(&self.accepted);
        let mut found = None;
        for (position, token) in accepted.iter().enumerate() {
            if let Some(token) = token
                && bool::from(token.as_slice().ct_eq(offered))
            {
                found = Some(position);
            }
        }
        found
    }
}

/// The tokens of `token_file`: one a line, blank lines and `#` lines skipped.
///
/// # Errors
/// When the file cannot be read or holds no token.
pub(super) fn read_token_file(path: &std::path::Path) -> Result<Vec<Vec<u8>>, HttpError> {
    let shown = path.display().to_string();
    let text = std::fs::read_to_string(path).map_err(|cause| HttpError::TokenFile {
        path: shown.clone(),
        cause,
    })?;
    let tokens = split(text.lines().filter(|l| !l.trim_start().starts_with('#')));
    if tokens.is_empty() {
        return Err(HttpError::NoTokenInFile { path: shown });
    }
    Ok(tokens)
}

/// Masks each token in the log from now on.
fn register(tokens: &[Vec<u8>]) {
    for token in tokens {
        crate::redact::register_secret(&String::from_utf8_lossy(token));
    }
}

fn split<'a>(parts: impl Iterator<Item = &'a str>) -> Vec<Vec<u8>> {
    parts
        .map(str::trim)
        .filter(|t| !t.is_empty())
        .map(|t| t.as_bytes().to_vec())
        .collect()
}

/// The gate's state: cheap to clone per request.
#[derive(Clone)]
pub(super) struct Gate {
    tokens: Option<Arc<Tokens>>,
    sessions: Arc<Sessions>,
    limits: Limits,
    /// Stateless (2026-07-28) requests in flight, per principal: they have no session to
    /// count under, so each token gets `max_concurrent_requests` of them.
    stateless: Arc<Mutex<HashMap<Principal, Arc<Semaphore>>>>,
    /// The catalog names are looked up in, for the server a `tools/call` goes to in the
    /// metrics: a tool's name need not begin with its server's (`prefix = ""`, `prefix =
    /// "gh"`). None for the probes' gate, which sees no calls.
    registry: Option<Arc<Registry>>,
    /// The hosts a plain call may name to take the thin path (`thin.rs`); `None` for the
    /// probes' gate.
    hosts: Option<Hosts>,
    /// The thin path of calls without a session (`thin.rs`); `None` for the probes' gate.
    sessionless: Option<Sessionless>,
}

/// The numbers the gate enforces, from `[settings]` and `[settings.http]`.
#[derive(Clone, Copy)]
pub(super) struct Limits {
    pub max_body: usize,
    pub body_timeout: Duration,
    pub max_in_flight: usize,
}

impl Gate {
    pub(super) fn new(
        tokens: Option<Arc<Tokens>>,
        sessions: Arc<Sessions>,
        limits: Limits,
    ) -> Gate {
        Gate {
            tokens,
            sessions,
            limits,
            stateless: Arc::default(),
            registry: None,
            hosts: None,
            sessionless: None,
        }
    }

    /// This gate's calls are labelled with the server that owns the name in `registry`.
    pub(super) fn naming(self, registry: Arc<Registry>) -> Gate {
        Gate {
            registry: Some(registry),
            ..self
        }
    }

    /// Plain calls naming one of `hosts` take the thin path (`thin.rs`): a session's, or
    /// `sessionless` for a 2026-07-28 request without one.
    pub(super) fn thin(self, hosts: Hosts, sessionless: Sessionless) -> Gate {
        Gate {
            hosts: Some(hosts),
            sessionless: Some(sessionless),
            ..self
        }
    }

    /// The configured name of the server whose tool is listed as `tool`, if the catalog
    /// has it.
    fn owner(&self, tool: &str) -> Option<Arc<str>> {
        let registry = self.registry.as_ref()?;
        registry.catalog().by_name(tool).map(|e| e.server.clone())
    }

    /// Who sent `headers`: `Err` with the 401 when tokens are configured and none of
    /// them is offered. The scheme is matched without regard to case (RFC 7235).
    pub(super) fn principal(&self, headers: &http::HeaderMap) -> Result<Principal, Box<Response>> {
        let Some(tokens) = &self.tokens else {
            return Ok(Principal(0));
        };
        let offered = headers
            .get(header::AUTHORIZATION)
            .map(HeaderValue::as_bytes)
            .and_then(|v| {
                let (scheme, rest) = v.split_at_checked(7)?;
                scheme.eq_ignore_ascii_case(b"bearer ").then_some(rest)
            })
            .map(<[u8]>::trim_ascii);
        match offered.and_then(|t| tokens.position(t)) {
            Some(position) => Ok(Principal(position)),
            None => Err(Box::new(unauthorized())),
        }
    }

    fn stateless_permit(&self, principal: Principal) -> Option<OwnedSemaphorePermit> {
        let semaphore = lock(&self.stateless)
            .entry(principal)
            .or_insert_with(|| Arc::new(Semaphore::new(self.limits.max_in_flight)))
            .clone();
        semaphore.try_acquire_owned().ok()
    }
}

fn unauthorized() -> Response {
    let mut response = (
        StatusCode::UNAUTHORIZED,
        "Unauthorized: send `Authorization: Bearer <token>` with a token from \
         [settings.http] tokens_env or token_file",
    )
        .into_response();
    response.headers_mut().insert(
        header::WWW_AUTHENTICATE,
        HeaderValue::from_static("Bearer realm=\"mcp-defer\""),
    );
    response
}

/// What the gate reads of a JSON-RPC message: enough to count it, route its limits and
/// name it in the metrics; everything else is skipped unparsed.
#[derive(serde::Deserialize)]
struct Head {
    #[serde(default)]
    id: Option<serde_json::Value>,
    #[serde(default)]
    method: Option<String>,
    #[serde(default)]
    params: Option<HeadParams>,
}

#[derive(serde::Deserialize)]
struct HeadParams {
    #[serde(default)]
    name: Option<String>,
    #[serde(default)]
    arguments: Option<HeadArguments>,
    /// A `notifications/cancelled`'s target.
    #[serde(default, rename = "requestId")]
    request_id: Option<serde_json::Value>,
}

#[derive(serde::Deserialize)]
struct HeadArguments {
    #[serde(default)]
    name: Option<serde_json::Value>,
}

impl Head {
    /// The tool a `tools/call` runs: `call_tool`'s target, or the tool called directly.
    fn tool(&self) -> Option<&str> {
        let params = self.params.as_ref()?;
        let name = params.name.as_deref()?;
        if name == "call_tool"
            && let Some(serde_json::Value::String(target)) =
                params.arguments.as_ref().and_then(|a| a.name.as_ref())
        {
            return Some(target);
        }
        Some(name)
    }
}

/// A JSON-RPC error answer with HTTP status 400.
fn jsonrpc_error(code: i64, message: String) -> Response {
    let body = serde_json::json!({
        "jsonrpc": "2.0",
        "id": null,
        "error": {"code": code, "message": message},
    });
    (
        StatusCode::BAD_REQUEST,
        [(header::CONTENT_TYPE, "application/json")],
        body.to_string(),
    )
        .into_response()
}

/// Why a body could not be read.
enum BodyError {
    TooLarge,
    Slow,
    Broken(String),
}

/// The whole body, at most `max` bytes, within `timeout`.
async fn read_body(body: Body, max: usize, timeout: Duration) -> Result<Bytes, BodyError> {
    use http_body_util::BodyExt;
    let read = async move {
        let mut body = body;
        let mut collected = bytes::BytesMut::new();
        while let Some(frame) = body.frame().await {
            let frame = frame.map_err(|e| BodyError::Broken(e.to_string()))?;
            if let Ok(data) = frame.into_data() {
                if data.len() > max.saturating_sub(collected.len()) {
                    return Err(BodyError::TooLarge);
                }
                collected.extend_from_slice(&data);
            }
        }
        Ok(collected.freeze())
    };
    tokio::time::timeout(timeout, read)
        .await
        .unwrap_or(Err(BodyError::Slow))
}

/// The body as rmcp should see it: UTF-8 JSON with every lone surrogate escape replaced
/// by U+FFFD (as stdio does, `lines::repair_surrogates`), and what the gate reads of it;
/// or the 400 with the JSON-RPC parse error.
fn parse(bytes: Bytes) -> Result<(Bytes, Option<Head>), Box<Response>> {
    let Ok(text) = std::str::from_utf8(&bytes) else {
        return Err(Box::new(jsonrpc_error(
            -32700,
            "Parse error: the request body is not UTF-8; send JSON-RPC as UTF-8 JSON".into(),
        )));
    };
    let bytes = match crate::lines::repair_surrogates(text) {
        std::borrow::Cow::Borrowed(_) => bytes,
        std::borrow::Cow::Owned(repaired) => Bytes::from(repaired),
    };
    match serde_json::from_slice::<Head>(&bytes) {
        Ok(head) => Ok((bytes, Some(head))),
        // Valid JSON of another shape (an array, a string): rmcp answers it.
        Err(_) if serde_json::from_slice::<serde::de::IgnoredAny>(&bytes).is_ok() => {
            Ok((bytes, None))
        }
        Err(err) => Err(Box::new(jsonrpc_error(
            -32700,
            format!("Parse error: the request body is not valid JSON: {err}"),
        ))),
    }
}

/// An answer the gate gives instead of passing the request on (boxed: a `Response` is
/// large, and most requests pass).
type Refused = Box<Response>;

/// The middleware: 401 without a valid token (when tokens are configured); 404 for a
/// session another principal opened; the body read under its size and time limits and
/// checked as JSON; 429 past a limit (requests in flight, sessions per token); then on
/// to rmcp, holding the request's places until the response body (an SSE stream for
/// most requests) ends.
pub(super) async fn admit(State(gate): State<Gate>, request: Request, next: Next) -> Response {
    match gate.pass(request, next).await {
        Ok(response) => response,
        Err(refused) => *refused,
    }
}

/// What the gate read of a POST's body: the bytes rmcp gets (repaired, renamed, aliased)
/// and what they say.
struct Message {
    bytes: Bytes,
    method: Option<String>,
    /// The tool a `tools/call` runs, for the metrics.
    tool: Option<String>,
    /// The id of a request (a message with a method and an id; responses carry ids too),
    /// as JSON text.
    request_id: Option<String>,
    /// The id the session counts the request under: its own, or its alias.
    admitted_id: Option<String>,
    /// The rewrite its answer gets on the way out (`tasks.rs`).
    outbound: Option<super::tasks::Outbound>,
    /// A `notifications/cancelled`'s target, as JSON text.
    cancels: Option<String>,
}

impl Gate {
    /// The request through each check in turn, or the answer of the first that refuses it.
    async fn pass(&self, mut request: Request, next: Next) -> Result<Response, Refused> {
        let started = std::time::Instant::now();
        let principal = self.identify(&mut request)?;
        let session = (request.headers().get(protocol::header::MCP_SESSION_ID))
            .and_then(|v| v.to_str().ok())
            .map(str::to_owned);
        if let Some(id) = &session {
            self.check_owner(id, principal, request.method())?;
        }
        if request.method() != Method::POST {
            return Ok(next.run(request).await);
        }
        let (mut parts, body) = request.into_parts();
        let bytes = read_body(body, self.limits.max_body, self.limits.body_timeout)
            .await
            .map_err(|error| Box::new(error.response(&self.limits)))?;
        let mut message = Message::parse(bytes)?;
        let mut guard = Guard::new(super::metrics::Timing::new(
            message.method.as_deref(),
            (message.tool.as_deref()).map(|t| (t, self.owner(t))),
            started,
        ));
        let unalias = match &session {
            Some(id) => self.alias_reused(id, &mut message, &mut guard),
            None => None,
        };
        let reservation = self.take_places(session.as_deref(), principal, &message, &mut guard)?;
        if let Some(id) = &session {
            if let Some(target) = &message.cancels {
                self.sessions.cancel_thin(id, target);
            }
            if unalias.is_none()
                && message.method.as_deref() == Some(method::TOOLS_CALL)
                && let Some(hosts) = &self.hosts
                && let Some(thin) = self.sessions.thin(id)
                && let Some(call) = hosts.admit(&parts, &thin.calls, &message.bytes)
            {
                let response = thin.respond(call, parts).await;
                return Ok(hold(response, None, message.outbound, guard));
            }
        } else if message.method.as_deref() == Some(method::TOOLS_CALL)
            && let Some(sessionless) = &self.sessionless
            && let Some(call) = sessionless.admit(&parts, &message.bytes)
        {
            let response = sessionless.respond(call, parts).await;
            return Ok(hold(response, None, message.outbound, guard));
        }
        // The handler hands the session's thin path back through the `initialize` request.
        let opening = reservation.as_ref().map(|_| Opening::default());
        if let Some(opening) = &opening {
            parts.extensions.insert(opening.clone());
        }
        let response = next
            .run(Request::from_parts(parts, Body::from(message.bytes)))
            .await;
        if let (Some(reservation), Some(opening)) = (reservation, opening)
            && let Some(id) = (response.headers().get(protocol::header::MCP_SESSION_ID))
                .and_then(|v| v.to_str().ok())
        {
            self.sessions.bind(id, reservation, opening);
        }
        Ok(hold(response, unalias, message.outbound, guard))
    }

    /// The request's principal (the 401 without a valid token); its connection counts as
    /// authorized from now on, and what search learns from it is its token holder's alone
    /// (`server/usage.rs`).
    fn identify(&self, request: &mut Request) -> Result<Principal, Refused> {
        let principal = self.principal(request.headers())?;
        // No longer a connection that may be closed for room (`connections.rs`).
        if let Some(connection) = request.extensions().get::<super::connections::Connection>() {
            connection.authenticated();
        }
        if let Some(tokens) = &self.tokens {
            request.extensions_mut().insert(tokens.learner(principal.0));
        }
        Ok(principal)
    }

    /// 404 for a session another principal opened: to it, the session does not exist.
    fn check_owner(&self, id: &str, principal: Principal, method: &Method) -> Result<(), Refused> {
        match self.sessions.owner(id) {
            Owner::Is(owner) if owner == principal => Ok(()),
            // Unknown here: rmcp answers 404, except to DELETE, which it would accept.
            Owner::Unknown if method != Method::DELETE => Ok(()),
            Owner::Is(_) | Owner::Unknown => Err(Box::new(session_not_found())),
        }
    }

    /// An id reused after its cancel runs under an alias, and a cancel of an aliased
    /// request names the alias (`server/reused_ids/`); the rewrite of its answer back to
    /// the client's id, when it was aliased.
    fn alias_reused(
        &self,
        session: &str,
        message: &mut Message,
        guard: &mut Guard,
    ) -> Option<reused_ids::Unalias> {
        if let Some(target) = &message.cancels
            && let Some(alias) = self.sessions.cancelled(session, target)
            && let Some(rewritten) =
                reused_ids::rewrite(&message.bytes, "/params/requestId", &alias)
        {
            message.bytes = rewritten;
        }
        let client_id = message.request_id.clone()?;
        let alias = self.sessions.alias_for(session, &client_id)?;
        message.bytes = reused_ids::rewrite(&message.bytes, "/id", &alias)?;
        let unalias = reused_ids::Unalias::new(&alias, &client_id);
        guard.alias = Some(Aliased {
            sessions: self.sessions.clone(),
            session: session.to_owned(),
            client_id,
            alias: alias.clone(),
        });
        message.admitted_id = Some(alias);
        Some(unalias)
    }

    /// The request's places in the limits, kept in `guard` until its response ends: its
    /// session's requests in flight and ids, a new session's place under its token's cap
    /// (returned, to be bound to the session `initialize` opens), or a stateless
    /// request's place under its token's limit; 429 (or -32600 for an id in flight) past
    /// one.
    fn take_places(
        &self,
        session: Option<&str>,
        principal: Principal,
        message: &Message,
        guard: &mut Guard,
    ) -> Result<Option<Reservation>, Refused> {
        match session {
            Some(id) => match self.sessions.admit(id, message.admitted_id.clone()) {
                // Unknown sessions go on to rmcp, which answers 404 as the spec says.
                Admission::Unknown => Ok(None),
                Admission::Admitted(permit, id) => {
                    guard.permit = Some(permit);
                    guard.id = id;
                    Ok(None)
                }
                Admission::Busy { limit } => Err(Box::new(too_many(format!(
                    "Too Many Requests: this session already has {limit} requests in flight \
                     ([settings.http] max_concurrent_requests); retry when one has finished"
                )))),
                Admission::DuplicateId => Err(Box::new(jsonrpc_error(
                    -32600,
                    format!(
                        "Invalid Request: a request with id {} is already in flight in this \
                         session; give each request its own id",
                        message.request_id.as_deref().unwrap_or_default()
                    ),
                ))),
            },
            None if message.method.as_deref() == Some(method::INITIALIZE) => {
                match self.sessions.reserve(principal) {
                    Ok(reserved) => Ok(Some(reserved)),
                    Err(cap) => {
                        super::metrics::session_refused();
                        Err(Box::new(too_many(format!(
                            "Too Many Requests: this token already holds {cap} open sessions \
                             ([settings.http] max_sessions_per_token); close one (HTTP DELETE \
                             with its {}) or wait for idle ones to expire (session_idle_sec)",
                            protocol::header::MCP_SESSION_ID
                        ))))
                    }
                }
            }
            // A stateless (2026-07-28) request: counted under the token's own limit.
            None if message.request_id.is_some() => match self.stateless_permit(principal) {
                Some(permit) => {
                    guard.permit = Some(permit);
                    Ok(None)
                }
                None => Err(Box::new(too_many(format!(
                    "Too Many Requests: this token already has {} stateless requests in \
                     flight ([settings.http] max_concurrent_requests); retry when one has \
                     finished",
                    self.limits.max_in_flight
                )))),
            },
            None => Ok(None),
        }
    }
}

impl Message {
    /// The body as rmcp should see it ([`parse`]), a task request renamed so rmcp routes
    /// it (`tasks.rs`), and what the gate needs of it.
    fn parse(bytes: Bytes) -> Result<Message, Refused> {
        let (mut bytes, head) = parse(bytes)?;
        let method = head.as_ref().and_then(|h| h.method.clone());
        if let Some(renamed) = super::tasks::inbound(&bytes, method.as_deref()) {
            bytes = renamed;
        }
        let request = head.as_ref().filter(|h| h.method.is_some());
        let request_id = (request.and_then(|h| h.id.as_ref())).map(serde_json::Value::to_string);
        let cancels = (head.as_ref())
            .filter(|h| h.method.as_deref() == Some(method::CANCELLED))
            .and_then(|h| h.params.as_ref()?.request_id.as_ref())
            .map(serde_json::Value::to_string);
        Ok(Message {
            bytes,
            tool: head.as_ref().and_then(Head::tool).map(str::to_owned),
            outbound: super::tasks::Outbound::for_method(method.as_deref()),
            method,
            admitted_id: request_id.clone(),
            request_id,
            cancels,
        })
    }
}

impl BodyError {
    /// The answer to a body that could not be read, naming the setting that bounds it.
    fn response(self, limits: &Limits) -> Response {
        match self {
            BodyError::TooLarge => (
                StatusCode::PAYLOAD_TOO_LARGE,
                format!(
                    "Payload Too Large: request body exceeds {} bytes ([settings] \
                     max_message_bytes)",
                    limits.max_body
                ),
            ),
            BodyError::Slow => (
                StatusCode::REQUEST_TIMEOUT,
                format!(
                    "Request Timeout: the body did not arrive within {} s ([settings.http] \
                     body_timeout_sec)",
                    limits.body_timeout.as_secs()
                ),
            ),
            BodyError::Broken(cause) => (
                StatusCode::BAD_REQUEST,
                format!("Bad Request: the body could not be read: {cause}"),
            ),
        }
        .into_response()
    }
}

/// The response with its body holding the request's places ([`Held`]), its status
/// noted for the metrics.
fn hold(
    response: Response,
    unalias: Option<reused_ids::Unalias>,
    outbound: Option<super::tasks::Outbound>,
    mut guard: Guard,
) -> Response {
    if let Some(timing) = &mut guard.timing {
        timing.status(response.status().as_u16());
    }
    let (parts, body) = response.into_parts();
    Response::from_parts(
        parts,
        Body::new(Held {
            body,
            unalias,
            outbound,
            _guard: guard,
        }),
    )
}

fn session_not_found() -> Response {
    (StatusCode::NOT_FOUND, "Not Found: Session not found").into_response()
}

fn too_many(message: String) -> Response {
    (StatusCode::TOO_MANY_REQUESTS, message).into_response()
}

/// What a request holds until its response ends: its place in a limit, its id's place
/// among the session's ids in flight, and its latency measurement.
struct Guard {
    permit: Option<OwnedSemaphorePermit>,
    id: Option<IdInFlight>,
    timing: Option<super::metrics::Timing>,
    alias: Option<Aliased>,
}

impl Guard {
    fn new(timing: super::metrics::Timing) -> Guard {
        Guard {
            permit: None,
            id: None,
            timing: Some(timing),
            alias: None,
        }
    }
}

/// A request running under an alias (`server/reused_ids/`): the alias is forgotten when it ends.
struct Aliased {
    sessions: Arc<Sessions>,
    session: String,
    client_id: String,
    alias: String,
}

impl Drop for Aliased {
    fn drop(&mut self) {
        self.sessions
            .unalias(&self.session, &self.client_id, &self.alias);
    }
}

/// A response body that holds its request's [`Guard`] until it ends or is dropped, and
/// writes an aliased request's answer back under the client's id.
struct Held {
    body: Body,
    unalias: Option<reused_ids::Unalias>,
    /// Task fields the answer gets back on its way out (`tasks.rs`).
    outbound: Option<super::tasks::Outbound>,
    _guard: Guard,
}

impl http_body::Body for Held {
    type Data = Bytes;
    type Error = axum::Error;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, axum::Error>>> {
        let this = &mut *self;
        let mut polled = Pin::new(&mut this.body).poll_frame(cx);
        if let Some(outbound) = this.outbound {
            polled = polled.map(|frame| {
                frame.map(|frame| frame.map(|frame| frame.map_data(|data| outbound.frame(data))))
            });
        }
        match &this.unalias {
            None => polled,
            Some(unalias) => polled.map(|frame| {
                frame.map(|frame| frame.map(|frame| frame.map_data(|data| unalias.frame(data))))
            }),
        }
    }

    fn is_end_stream(&self) -> bool {
        self.body.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.body.size_hint()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_accept_each_configured_one_and_nothing_else() {
        let tokens = Tokens::new(split("alpha, beta ,,".split(',')));
        assert!(tokens.accepts(b"alpha"));
        assert!(tokens.accepts(b"beta"));
        assert!(!tokens.accepts(b"alph"));
        assert!(!tokens.accepts(b"alphaa"));
        assert!(!tokens.accepts(b""));
        assert_eq!(format!("{tokens:?}"), "Tokens(2 configured)");
    }

    #[test]
    fn a_reread_revokes_removed_tokens_and_keeps_every_other_principal() {
        let tokens = Tokens::new(split("alpha,beta,gamma".split(',')));
        let change = tokens.reread(split("gamma,delta".split(',')));
        assert_eq!(
            change,
            TokenChange {
                revoked: vec![Principal(0), Principal(1)],
                added: 1
            }
        );
        assert!(!tokens.accepts(b"alpha") && !tokens.accepts(b"beta"));
        assert_eq!(
            tokens.position(b"gamma"),
            Some(2),
            "gamma keeps its principal"
        );
        assert_eq!(tokens.position(b"delta"), Some(3));
        // A token that comes back is a new principal: the old one's sessions are gone.
        tokens.reread(split("alpha,gamma,delta".split(',')));
        assert_eq!(tokens.position(b"alpha"), Some(4));
        assert_eq!(format!("{tokens:?}"), "Tokens(3 configured)");
    }
}
