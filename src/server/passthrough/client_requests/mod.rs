//! Requests downstream servers send to their client (sampling, elicitation, roots), carried
//! to mcp-defer's client and answered back: the server side of [`Upstream`].
//!
//! How a request reaches the client depends on the client's era (DESIGN.md section 7):
//! - **Handshake era** (`initialize`): sent to the client as a server→client request,
//!   tagged with the client's `tools/call` it came during; the answer goes back downstream.
//! - **2026-07-28**: a server may not send the client requests. A request that comes during
//!   a proxied `tools/call` becomes that call's `InputRequiredResult` (SEP-2322) with an
//!   opaque `requestState` naming the parked downstream call; the client's retry carries
//!   `inputResponses`, which answer the downstream request, and then waits for the call's
//!   next outcome. A request outside any call cannot be carried and gets an error.
//!
//! Either way a request the client cannot answer (a capability it did not declare) gets a
//! JSON-RPC error naming what is missing, never a hang. It also records the client's
//! capabilities as soon as they are known, which is when downstream servers may start.
//!
//! Here: the table of calls and where a request or log message goes; the 2026-07-28 half
//! (park, retry) is in `input_required.rs`, the handshake-era send in `to_client.rs`.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use rmcp::model::{
    ClientCapabilities, ClientResult, ErrorData, InputRequest, ProtocolVersion, RequestId,
};
#[expect(
    deprecated,
    reason = "MCP logging is deprecated by SEP-2577, yet handshake-era peers use it"
)]
use rmcp::model::{LoggingLevel, LoggingMessageNotificationParam};
use rmcp::service::RequestContext;
use rmcp::{Peer, RoleServer};
use tokio::sync::{mpsc, oneshot, watch};
use tokio_util::sync::CancellationToken;

use super::logging::{self, LogLevel};
use crate::downstream::{
    CallAnswer, CallOrigin, LogFuture, Upstream, UpstreamFuture, input_method,
};
use crate::server::call_reply::CallReply;
use crate::server::meta;
use crate::sync::lock;

mod input_required;
mod to_client;

use input_required::{Parked, Running};
use to_client::{lacking, send};

/// Cheap to clone; every clone is the same table.
#[derive(Clone, Default)]
pub(crate) struct ClientRequests {
    inner: Arc<Inner>,
}

#[derive(Default)]
struct Inner {
    /// The capabilities the client declared first (`initialize`, or the envelope of its
    /// first request): what downstream servers are told.
    declared: watch::Sender<Option<ClientCapabilities>>,
    /// Set by `initialize`: the client takes server→client requests; with the level that
    /// session set with `logging/setLevel` (`logging.rs`). One lock, so the two are set
    /// and read together.
    session: Mutex<Option<(Peer<RoleServer>, LogLevel)>>,
    /// The level servers are asked to log at: the most verbose any session set.
    #[expect(deprecated, reason = "MCP logging is deprecated by SEP-2577")]
    downstream_level: Mutex<Option<LoggingLevel>>,
    /// Proxied calls in flight, by the [`CallOrigin`] number downstream carries.
    calls: Mutex<HashMap<u64, Call>>,
    /// Calls waiting for a 2026-07-28 client's retry, by `requestState`.
    parked: Mutex<HashMap<String, Parked>>,
    next: AtomicU64,
    /// Random keys, so a `requestState` cannot be guessed from the counter.
    nonce: std::collections::hash_map::RandomState,
    /// `serve --http`: many clients share the downstream servers, so a request outside
    /// any call has no one client to go to, and no session is recorded for it.
    many_clients: bool,
}

/// One proxied call as the client made it.
struct Call {
    /// What the client declared in this request (its envelope, or its handshake).
    capabilities: Option<ClientCapabilities>,
    via: Via,
    /// Where the server's log messages during the call go, and at what level (`logging.rs`).
    log: Option<(Peer<RoleServer>, LogLevel)>,
}

enum Via {
    /// Handshake era: ask over the session, tagged with the client's request. `cancel`
    /// fires when the client cancels that request.
    Request {
        peer: Peer<RoleServer>,
        id: RequestId,
        cancel: CancellationToken,
    },
    /// 2026-07-28: hand the request to the task answering the client's `tools/call`.
    InputRequired(mpsc::UnboundedSender<Pending>),
}

/// A downstream request waiting for the client's answer.
struct Pending {
    request: InputRequest,
    reply: Reply,
}

/// Where the client's answer to one downstream request goes.
type Reply = oneshot::Sender<Result<ClientResult, ErrorData>>;

impl ClientRequests {
    pub(crate) fn new() -> ClientRequests {
        ClientRequests::default()
    }

    /// The table for many clients at once (`serve --http`): each request a server sends
    /// during a call goes to the session that made the call; one outside any call is
    /// refused with an error saying why.
    pub(crate) fn for_many_clients() -> ClientRequests {
        ClientRequests {
            inner: Arc::new(Inner {
                many_clients: true,
                ..Inner::default()
            }),
        }
    }

    /// What servers shared by many clients (`serve --http`, the hub) are offered: sampling
    /// and elicitation, which reach the session whose call they come during, and not
    /// roots, which belong to one client.
    pub(crate) fn many_clients_link(&self) -> crate::downstream::ClientLink {
        let mut capabilities = ClientCapabilities::default();
        capabilities.sampling = Some(rmcp::model::SamplingCapability::default());
        capabilities.elicitation = Some(rmcp::model::ElicitationCapability::default());
        crate::downstream::ClientLink::new(&capabilities, Arc::new(self.clone()))
    }

    /// Records the capabilities of the client's `initialize` and its session, with the
    /// session's log level.
    pub(crate) fn initialized(
        &self,
        peer: Peer<RoleServer>,
        capabilities: ClientCapabilities,
        level: LogLevel,
    ) {
        if !self.inner.many_clients {
            *lock(&self.inner.session) = Some((peer, level));
        }
        self.declare(capabilities);
    }

    /// Records the capabilities in a request's envelope, the first time there are any
    /// (2026-07-28 clients send them on `server/discover` and every request after).
    pub(crate) fn note(&self, context: &RequestContext<RoleServer>) {
        if self.inner.declared.borrow().is_none()
            && let Some(capabilities) = context.meta.client_capabilities()
        {
            self.declare(capabilities);
        }
    }

    fn declare(&self, capabilities: ClientCapabilities) {
        self.inner.declared.send_if_modified(|declared| {
            if declared.is_some() {
                return false;
            }
            tracing::debug!(?capabilities, "client capabilities known");
            *declared = Some(capabilities);
            true
        });
    }

    /// Waits until the client has declared its capabilities.
    pub(crate) async fn declared(&self) -> ClientCapabilities {
        let mut declared = self.inner.declared.subscribe();
        match declared.wait_for(Option::is_some).await {
            Ok(capabilities) => capabilities.clone().unwrap_or_default(),
            // The sender lives in `self`; it cannot be dropped while we wait.
            Err(_) => ClientCapabilities::default(),
        }
    }

    /// Runs one proxied call for the client's `tools/call` of `tool` (`context`). `call`
    /// gets the origin to give the downstream call and the token that cancels it. Requests
    /// the server sends during the call reach the client as its era allows (module doc);
    /// so do its log messages, at the session's `level`. An answer passed as the server
    /// wrote it stays so, unless the call waited on its client (a 2026-07-28 call parked
    /// for a retry, or cancelled): that one's answer is decoded.
    pub(crate) async fn run<F, Fut>(
        &self,
        context: &RequestContext<RoleServer>,
        tool: &str,
        level: LogLevel,
        call: F,
    ) -> CallReply
    where
        F: FnOnce(CallOrigin, CancellationToken) -> Fut,
        Fut: Future<Output = CallAnswer> + Send + 'static,
    {
        let number = self.inner.next.fetch_add(1, Ordering::Relaxed);
        let origin = CallOrigin(number);
        let capabilities = context.client_capabilities();
        if !is_2026(context) {
            // rmcp cancels `context.ct` when the call is answered too, so requests tied to
            // the call are withdrawn on a token that fires only while the call is pending:
            // one the heuristic tied to it by mistake must outlive it.
            let client_cancelled = CancellationToken::new();
            let via = Via::Request {
                peer: context.peer.clone(),
                id: context.id.clone(),
                cancel: client_cancelled.clone(),
            };
            let log = Some((context.peer.clone(), level));
            let _registered = self.register(number, capabilities, via, log);
            let running = call(origin, context.ct.child_token());
            tokio::pin!(running);
            // The client's cancel first: a call that ends on it in the same poll still has
            // its requests to the client withdrawn.
            let result = tokio::select! {
                biased;
                () = context.ct.cancelled() => {
                    client_cancelled.cancel();
                    running.await
                }
                result = &mut running => result,
            };
            return result.into();
        }
        // A 2026-07-28 request opts in to the call's log messages with its `_meta` level.
        // They go out on that request's own stream: rmcp gives each stateless HTTP request
        // a connection of its own whose every message before the result goes on its SSE
        // response, and over stdio the one connection carries them.
        let log = requested_log(context);
        let (inputs_tx, mut inputs) = mpsc::unbounded_channel();
        let registered = self.register(number, capabilities, Via::InputRequired(inputs_tx), log);
        let cancel = CancellationToken::new();
        let mut running = Box::pin(call(origin, cancel.child_token()));
        // Most calls end without asking the client anything, and run here. One that must
        // outlive this request (it asked: the answer is an `InputRequiredResult` and the
        // call waits for the retry; or the client cancelled, and it winds down) moves to a
        // task of its own under its own token, since rmcp cancels the request's once it is
        // answered.
        let first = tokio::select! {
            biased;
            result = &mut running => {
                drop(registered);
                return result.into();
            }
            Some(pending) = inputs.recv() => Some(pending),
            () = context.ct.cancelled() => None,
        };
        let (done_tx, done) = oneshot::channel();
        tokio::spawn(async move {
            let result = running.await.into_result();
            drop(registered);
            let _ = done_tx.send(result);
        });
        let running = Running {
            number,
            inputs,
            done,
            cancel,
        };
        CallReply::Response(match first {
            Some(pending) => self.park(running, pending, tool),
            None => {
                running.cancel.cancel();
                meta::error_result("the call was cancelled").into()
            }
        })
    }

    /// Keeps a call in the table while the guard lives.
    fn register(
        &self,
        number: u64,
        capabilities: Option<ClientCapabilities>,
        via: Via,
        log: Option<(Peer<RoleServer>, LogLevel)>,
    ) -> Registered {
        let call = Call {
            capabilities,
            via,
            log,
        };
        lock(&self.inner.calls).insert(number, call);
        Registered {
            requests: self.clone(),
            number,
        }
    }

    /// The session's capabilities and peer, for a request outside any call.
    fn session(&self) -> Option<(Peer<RoleServer>, Option<ClientCapabilities>)> {
        let (peer, _) = lock(&self.inner.session).clone()?;
        let capabilities = peer.peer_info().map(|info| info.capabilities.clone());
        Some((peer, capabilities))
    }

    /// Where a server's log message goes: the session of the call it came during (a
    /// handshake-era one, or a 2026-07-28 request that asked for logs), else the one
    /// handshake-era session over stdio. Over HTTP a log outside any call has no one client.
    fn log_route(&self, call: Option<CallOrigin>) -> Option<(Peer<RoleServer>, LogLevel)> {
        if let Some(CallOrigin(number)) = call
            && let Some(found) = lock(&self.inner.calls).get(&number)
        {
            // A 2026-07-28 call that did not ask gets none (the spec's MUST NOT).
            return found.log.clone();
        }
        lock(&self.inner.session).clone()
    }

    /// Whether one client is served (stdio): every task of the servers is then its own, and
    /// a task's status notifications have one place to go.
    pub(crate) fn one_client(&self) -> bool {
        !self.inner.many_clients
    }

    /// Sets the level servers are asked to log at (`None`: no session set one).
    #[expect(deprecated, reason = "MCP logging is deprecated by SEP-2577")]
    pub(crate) fn set_downstream_level(&self, level: Option<LoggingLevel>) {
        *lock(&self.inner.downstream_level) = level;
    }

    async fn ask_client(
        &self,
        request: InputRequest,
        call: Option<CallOrigin>,
        cancel: CancellationToken,
    ) -> Result<ClientResult, ErrorData> {
        let what = input_method(&request);
        enum Route {
            Request {
                peer: Peer<RoleServer>,
                id: Option<RequestId>,
                cancel: Option<CancellationToken>,
            },
            InputRequired(mpsc::UnboundedSender<Pending>),
        }
        let found = call.and_then(|CallOrigin(number)| {
            let calls = lock(&self.inner.calls);
            let call = calls.get(&number)?;
            let route = match &call.via {
                Via::Request { peer, id, cancel } => Route::Request {
                    peer: peer.clone(),
                    id: Some(id.clone()),
                    cancel: Some(cancel.clone()),
                },
                Via::InputRequired(tx) => Route::InputRequired(tx.clone()),
            };
            Some((route, call.capabilities.clone()))
        });
        let (route, capabilities) = match found {
            Some(found) => found,
            None => match self.session() {
                None if self.inner.many_clients => {
                    return Err(ErrorData::invalid_request(
                        format!(
                            "mcp-defer serves several clients over HTTP, so a {what} outside a \
                             tools/call has no one client to go to; servers can ask during a call"
                        ),
                        None,
                    ));
                }
                Some((peer, capabilities)) => (
                    Route::Request {
                        peer,
                        id: None,
                        cancel: None,
                    },
                    capabilities,
                ),
                None if self.inner.declared.borrow().is_some() => {
                    return Err(ErrorData::invalid_request(
                        format!(
                            "the client speaks MCP 2026-07-28, where a server request can reach \
                             it only as the input_required result of a tools/call; this \
                             {what} came outside any call"
                        ),
                        None,
                    ));
                }
                None => {
                    return Err(ErrorData::invalid_request(
                        format!("no MCP client is connected to mcp-defer to answer {what}"),
                        None,
                    ));
                }
            },
        };
        if let Some(missing) = lacking(capabilities.as_ref(), &request) {
            return Err(ErrorData::invalid_request(
                format!("the client did not declare {missing}, so it cannot answer {what}"),
                None,
            ));
        }
        match route {
            Route::Request {
                peer,
                id,
                cancel: call,
            } => send(peer, request, id, cancel, call.unwrap_or_default()).await,
            Route::InputRequired(tx) => {
                let (reply, answer) = oneshot::channel();
                if tx.send(Pending { request, reply }).is_err() {
                    return Err(ErrorData::invalid_request(
                        format!("the call this {what} came during has ended"),
                        None,
                    ));
                }
                tokio::select! {
                    answer = answer => answer.unwrap_or_else(|_| Err(ErrorData::invalid_request(
                        format!("the client did not answer {what}: its call ended or was not retried in time"),
                        None,
                    ))),
                    () = cancel.cancelled() => Err(ErrorData::invalid_request("withdrawn", None)),
                }
            }
        }
    }
}

impl Upstream for ClientRequests {
    fn ask(
        &self,
        request: InputRequest,
        call: Option<CallOrigin>,
        cancel: CancellationToken,
    ) -> UpstreamFuture {
        let requests = self.clone();
        Box::pin(async move { requests.ask_client(request, call, cancel).await })
    }

    #[expect(deprecated, reason = "MCP logging is deprecated by SEP-2577")]
    fn log(
        &self,
        server: &str,
        message: LoggingMessageNotificationParam,
        call: Option<CallOrigin>,
    ) -> LogFuture {
        match self.log_route(call) {
            Some((peer, level)) => Box::pin(logging::forward(peer, level, server.into(), message)),
            None => Box::pin(std::future::ready(())),
        }
    }

    /// Over stdio only: that one client is the one offered tasks (`server/tasks.rs`).
    fn task_status(&self, server: &str, task: serde_json::Value) -> LogFuture {
        match lock(&self.inner.session).clone() {
            Some((peer, _)) if self.one_client() => Box::pin(
                crate::server::task_wire::forward_status(peer, server.into(), task),
            ),
            _ => Box::pin(std::future::ready(())),
        }
    }

    #[expect(deprecated, reason = "MCP logging is deprecated by SEP-2577")]
    fn log_level(&self) -> Option<LoggingLevel> {
        *lock(&self.inner.downstream_level)
    }
}

/// Where a 2026-07-28 request's call sends its log messages: to that request, at the level
/// its `_meta` names; nowhere when it names none (the spec's MUST NOT).
fn requested_log(context: &RequestContext<RoleServer>) -> Option<(Peer<RoleServer>, LogLevel)> {
    (context.meta.log_level()).map(|least| (context.peer.clone(), LogLevel::fixed(least)))
}

/// Removes a call from the table when it ends.
struct Registered {
    requests: ClientRequests,
    number: u64,
}

impl Drop for Registered {
    fn drop(&mut self) {
        lock(&self.requests.inner.calls).remove(&self.number);
    }
}

/// Whether the request uses the 2026-07-28 lifecycle (no server→client requests).
fn is_2026(context: &RequestContext<RoleServer>) -> bool {
    context
        .protocol_version()
        .is_some_and(|version| version >= ProtocolVersion::V_2026_07_28)
}
