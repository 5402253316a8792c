//! A cheap, cloneable way to reach one server: requests go through the connection its
//! supervisor publishes, within the server's `tool_timeout`, never replayed.

use std::collections::BTreeSet;
use std::fmt;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use rmcp::model::{
    CallToolRequest, CallToolRequestParams, CallToolResult, ClientRequest, CompleteRequest,
    CompleteRequestParams, CompleteResult, GetPromptRequest, GetPromptRequestParams,
    GetPromptResult, ReadResourceRequest, ReadResourceRequestParams, ReadResourceResult,
    ServerCapabilities, ServerResult, SubscribeRequestParams, UnsubscribeRequestParams,
};
#[expect(
    deprecated,
    reason = "downstream connections use the handshake era's subscribe"
)]
use rmcp::model::{SubscribeRequest, UnsubscribeRequest};
use rmcp::service::{PeerRequestOptions, ServiceError};
use tokio::sync::watch;
use tokio_util::sync::CancellationToken;
use tracing::Instrument;

use super::demand::Demand;
use super::passed::{CallAnswer, Passing};
use super::progress::{ProgressRoute, ProgressRoutes};
use super::raw_call::{Answer, RawCall, RawLink};
use super::upstream::{CallOrigin, InFlight};
use super::{DownstreamError, ServerState};
use crate::protocol::method;
use crate::sync::lock;

/// How long a call that saw its connection drop waits for the supervisor to learn why
/// (the exit status arrives a moment after the pipe closes).
const CAUSE_WAIT: Duration = Duration::from_secs(2);

/// How one proxied call is run.
#[derive(Debug, Default)]
pub struct CallOptions {
    /// Fires when the client cancels; the downstream request is cancelled too.
    pub cancel: CancellationToken,
    /// Where downstream progress for this call goes, when the client asked for progress.
    pub progress: Option<ProgressRoute>,
    /// The client request this call serves: requests the server sends to its client
    /// during the call are tied to it (see [`Upstream::ask`](super::Upstream::ask)).
    pub origin: Option<CallOrigin>,
    /// Set for a `tools/call` whose answer the caller takes as the server wrote it, when
    /// it can be ([`passed`](super::passed)).
    pub passing: Option<Passing>,
}

impl From<CancellationToken> for CallOptions {
    fn from(cancel: CancellationToken) -> Self {
        CallOptions {
            cancel,
            ..CallOptions::default()
        }
    }
}

/// The connection a call goes through, cloned out of the handle so no lock is held
/// across `.await`.
#[derive(Clone)]
pub(crate) struct Live {
    pub(super) peer: rmcp::Peer<rmcp::RoleClient>,
    pub(super) progress: Arc<ProgressRoutes>,
    pub(super) calls: Arc<InFlight>,
    /// Set by the supervisor to the cause once the connection has ended.
    pub(super) ended: watch::Receiver<Option<String>>,
    /// The `tool_timeout` of the config this connection was made with (a reload may
    /// change it; the handle outlives the connection).
    pub(super) tool_timeout: Duration,
    /// The tools this connection's server listed (after the config's filters), replaced at
    /// each re-list: a call goes only to one of these, never to one that only the tool
    /// cache or an older list named.
    pub(super) listed: Listed,
    /// A stdio server's pipes for calls sent around rmcp's loop (`raw_call.rs`); `None`
    /// over HTTP and with a server that has no handshake.
    pub(super) raw: Option<RawLink>,
}

/// The names of the tools a running server listed last; shared by the supervisor (which
/// replaces them) and the connection's [`Live`] handles.
pub(crate) type Listed = Arc<Mutex<Arc<std::collections::HashSet<String>>>>;

/// A cheap, cloneable way to reach one server.
#[derive(Clone)]
pub struct ServerHandle {
    pub(super) name: Arc<str>,
    pub(super) index: usize,
    pub(super) state: watch::Receiver<ServerState>,
    pub(super) live: Arc<Mutex<Option<Live>>>,
    /// Resource URIs we subscribed to on this server; the supervisor subscribes again after
    /// a restart, so a subscription outlives the connection it was made on.
    pub(super) subscriptions: Subscriptions,
    /// Calls in flight and when the last one ended (idle stop), and the wake-up of a
    /// server that is [`ServerState::Idle`].
    pub(super) demand: Arc<Demand>,
    /// The tool changes the server announced ([`ToolChanges`]).
    pub(super) tool_changes: ToolChanges,
    /// Cancelled when the whole pool stops.
    pub(super) stopping: CancellationToken,
}

/// The URIs subscribed on one server, shared by its handle and its supervisor.
pub(crate) type Subscriptions = Arc<Mutex<BTreeSet<String>>>;

/// How many times a server has said its tools changed (`notifications/tools/list_changed`),
/// over all its connections: shared by its handle, its supervisor and each connection's
/// handler. A list published with [`super::Event::Tools`] says how many it answers, so the
/// call path can tell a change announced but not yet listed (and screened) from one taken in.
pub(crate) type ToolChanges = Arc<std::sync::atomic::AtomicU64>;

/// The states of some servers, to wait for the next change of any of them: what a wait
/// for servers re-checks on instead of polling.
pub(crate) struct StateChanges(Vec<watch::Receiver<ServerState>>);

impl StateChanges {
    /// Watches `handles`; the states they have now count as seen.
    pub(crate) fn of<'a>(handles: impl IntoIterator<Item = &'a ServerHandle>) -> StateChanges {
        let mut states: Vec<_> = handles.into_iter().map(ServerHandle::watch).collect();
        for state in &mut states {
            state.mark_unchanged();
        }
        StateChanges(states)
    }

    /// Resolves at the next change of state of any of the servers since the last one this
    /// saw (or since [`StateChanges::of`]). A server whose supervisor and pool are gone
    /// changes no more; with all gone, this never resolves (the caller's deadline ends it).
    pub(crate) async fn next(&mut self) {
        use futures::StreamExt;
        let mut changes: futures::stream::FuturesUnordered<_> =
            self.0.iter_mut().map(watch::Receiver::changed).collect();
        while let Some(changed) = changes.next().await {
            if changed.is_ok() {
                return;
            }
        }
        std::future::pending::<()>().await;
    }
}

impl fmt::Debug for ServerHandle {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ServerHandle")
            .field("name", &self.name)
            .field("index", &self.index)
            .field("state", &*self.state.borrow())
            .finish()
    }
}

impl ServerHandle {
    pub fn name(&self) -> &str {
        &self.name
    }

    pub fn index(&self) -> usize {
        self.index
    }

    pub fn state(&self) -> ServerState {
        self.state.borrow().clone()
    }

    /// How many tool changes the server has announced so far ([`ToolChanges`]).
    pub fn tool_changes(&self) -> u64 {
        self.tool_changes.load(std::sync::atomic::Ordering::SeqCst)
    }

    pub fn watch(&self) -> watch::Receiver<ServerState> {
        self.state.clone()
    }

    /// Waits until the first attempt has concluded; see [`ServerState::is_settled`].
    pub async fn settled(&self) -> ServerState {
        let mut rx = self.state.clone();
        tokio::select! {
            settled = rx.wait_for(ServerState::is_settled) => {
                if let Ok(state) = settled {
                    return state.clone();
                }
            }
            // The pool keeps a sender of the state (a reload sets it), so a supervisor
            // that stopped before it settled does not end the wait: the pool's stop does.
            () = self.stopping.cancelled() => {}
        }
        // Stopping, or the supervisor is gone: its last word stands.
        self.state.borrow().clone()
    }

    pub(super) fn live(&self) -> Option<Live> {
        lock(&self.live).clone()
    }

    /// The capabilities the server declared in its handshake, while it is connected.
    pub fn capabilities(&self) -> Option<ServerCapabilities> {
        let live = self.live()?;
        live.peer.peer_info().map(|info| info.capabilities.clone())
    }

    /// Tells the server the client's roots changed, when it is connected. A server that
    /// connects later asks for the roots anyway.
    pub async fn notify_roots_list_changed(&self) {
        let Some(live) = self.live() else { return };
        if let Err(err) = live.peer.notify_roots_list_changed().await {
            tracing::debug!(server = %self.name, error = %err, "roots list_changed not delivered");
        }
    }

    /// Calls `request.name` (the tool's original name) on this server within its
    /// `tool_timeout`, and returns the downstream result unchanged. Never replayed: a call
    /// whose connection drops fails with [`DownstreamError::Disconnected`].
    ///
    /// # Errors
    /// A [`DownstreamError`] naming the server and the cause.
    pub async fn call(
        &self,
        request: CallToolRequestParams,
        options: CallOptions,
    ) -> Result<CallToolResult, DownstreamError> {
        let options = CallOptions {
            passing: None,
            ..options
        };
        self.call_answer(request, options)
            .await
            .map(CallAnswer::into_result)
    }

    /// [`ServerHandle::call`], its answer as the server wrote it where `options.passing`
    /// allows ([`passed`](super::passed)).
    ///
    /// # Errors
    /// As [`ServerHandle::call`].
    pub async fn call_answer(
        &self,
        request: CallToolRequestParams,
        options: CallOptions,
    ) -> Result<CallAnswer, DownstreamError> {
        let tool = request.name.to_string();
        let span = tracing::debug_span!("call", tool = %tool);
        let request = ClientRequest::CallToolRequest(CallToolRequest::new(request));
        match self.send(request, &tool, options).instrument(span).await? {
            Answer::Passed(answer) => Ok(CallAnswer::Passed(answer)),
            Answer::Decoded(ServerResult::CallToolResult(result)) => Ok(CallAnswer::Result(result)),
            Answer::Decoded(_) => Err(self.unexpected(format!("tools/call {tool}"))),
        }
    }

    /// `prompts/get` for `request.name` (the prompt's original name), within the server's
    /// `tool_timeout`; the result comes back unchanged.
    ///
    /// # Errors
    /// As [`ServerHandle::call`].
    pub async fn get_prompt(
        &self,
        request: GetPromptRequestParams,
        cancel: CancellationToken,
    ) -> Result<GetPromptResult, DownstreamError> {
        let what = format!("prompts/get {}", request.name);
        let request = ClientRequest::GetPromptRequest(GetPromptRequest::new(request));
        match self.request(request, &what, cancel.into()).await? {
            ServerResult::GetPromptResult(result) => Ok(result),
            _ => Err(self.unexpected(what)),
        }
    }

    /// `resources/read` for `request.uri`, within the server's `tool_timeout`.
    ///
    /// # Errors
    /// As [`ServerHandle::call`].
    pub async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        cancel: CancellationToken,
    ) -> Result<ReadResourceResult, DownstreamError> {
        let what = format!("resources/read {}", request.uri);
        let request = ClientRequest::ReadResourceRequest(ReadResourceRequest::new(request));
        match self.request(request, &what, cancel.into()).await? {
            ServerResult::ReadResourceResult(result) => Ok(result),
            _ => Err(self.unexpected(what)),
        }
    }

    /// `completion/complete`, its reference already in the server's own terms.
    ///
    /// # Errors
    /// As [`ServerHandle::call`].
    pub async fn complete(
        &self,
        request: CompleteRequestParams,
        cancel: CancellationToken,
    ) -> Result<CompleteResult, DownstreamError> {
        let what = method::COMPLETION_COMPLETE.to_owned();
        let request = ClientRequest::CompleteRequest(CompleteRequest::new(request));
        match self.request(request, &what, cancel.into()).await? {
            ServerResult::CompleteResult(result) => Ok(result),
            _ => Err(self.unexpected(what)),
        }
    }

    /// `resources/subscribe` to `uri`; remembered, so it is made again after a restart.
    ///
    /// # Errors
    /// As [`ServerHandle::call`]; the URI is then not remembered.
    #[expect(
        deprecated,
        reason = "downstream connections use the handshake era's subscribe"
    )]
    pub async fn subscribe(&self, uri: &str) -> Result<(), DownstreamError> {
        let what = format!("resources/subscribe {uri}");
        let request = ClientRequest::SubscribeRequest(SubscribeRequest::new(
            SubscribeRequestParams::new(uri),
        ));
        self.request(request, &what, CallOptions::default()).await?;
        lock(&self.subscriptions).insert(uri.to_owned());
        Ok(())
    }

    /// `resources/unsubscribe` from `uri`. Forgotten first: even if the server does not
    /// answer, it is not subscribed again after a restart.
    ///
    /// # Errors
    /// As [`ServerHandle::call`].
    #[expect(
        deprecated,
        reason = "downstream connections use the handshake era's subscribe"
    )]
    pub async fn unsubscribe(&self, uri: &str) -> Result<(), DownstreamError> {
        lock(&self.subscriptions).remove(uri);
        let what = format!("resources/unsubscribe {uri}");
        let request = ClientRequest::UnsubscribeRequest(UnsubscribeRequest::new(
            UnsubscribeRequestParams::new(uri),
        ));
        self.request(request, &what, CallOptions::default())
            .await
            .map(drop)
    }

    fn unexpected(&self, what: String) -> DownstreamError {
        DownstreamError::Service {
            server: self.name.to_string(),
            message: format!("unexpected answer to {what}"),
            code: None,
        }
    }

    /// Sends one request within the server's `tool_timeout`, cancelled downstream when
    /// `options.cancel` fires or the time is up. `what` names it in errors.
    pub(super) async fn request(
        &self,
        request: ClientRequest,
        what: &str,
        options: CallOptions,
    ) -> Result<ServerResult, DownstreamError> {
        match self.send(request, what, options).await? {
            Answer::Decoded(result) => Ok(result),
            Answer::Passed(answer) => Ok(ServerResult::CallToolResult(answer.into_result())),
        }
    }

    /// [`ServerHandle::request`], its answer passed as written where `options.passing`
    /// allows it.
    async fn send(
        &self,
        request: ClientRequest,
        what: &str,
        options: CallOptions,
    ) -> Result<Answer, DownstreamError> {
        let _busy = self.demand.begin();
        let live = match self.live() {
            Some(live) => live,
            None => {
                self.demand
                    .start(
                        &self.name,
                        self.state.clone(),
                        || self.live(),
                        &options.cancel,
                        &self.stopping,
                    )
                    .await?
            }
        };
        // A call goes only to a tool the running server lists, plain or task-augmented
        // (`tasks.rs`): a name from the tool cache or a stale catalog is refused here.
        if let Some(tool) = called_tool(&request) {
            let listed = lock(&live.listed).contains(tool);
            if !listed {
                return Err(DownstreamError::NotListed {
                    server: self.name.to_string(),
                    tool: tool.to_owned(),
                });
            }
        }
        let in_flight = options.origin.map(|origin| live.calls.begin(origin));
        let mut sent = match Sent::send(request, &live, options.progress).await {
            Ok(sent) => sent,
            Err(err) => return Err(self.service_error(err, &live).await),
        };
        if let Some(in_flight) = &in_flight {
            in_flight.sent(sent.id().clone());
        }
        enum Outcome {
            Answer(Box<Result<Answer, ServiceError>>),
            Cancelled,
            TimedOut,
        }
        let outcome = tokio::select! {
            answer = sent.answer(options.passing) => Outcome::Answer(Box::new(answer)),
            () = options.cancel.cancelled() => Outcome::Cancelled,
            () = tokio::time::sleep(live.tool_timeout) => Outcome::TimedOut,
        };
        // Progress is routed as it is read (`progress.rs`): what the server sent before its
        // answer is in the route's channel by now, so the route may go.
        live.progress.remove(sent.progress_token());
        drop(in_flight);
        match outcome {
            Outcome::Answer(answer) => match *answer {
                Ok(result) => Ok(result),
                Err(err) => Err(self.service_error(err, &live).await),
            },
            Outcome::Cancelled => {
                sent.cancel("cancelled by the client").await;
                Err(DownstreamError::Cancelled)
            }
            Outcome::TimedOut => {
                sent.cancel("timed out").await;
                Err(DownstreamError::Timeout {
                    server: self.name.to_string(),
                    tool: what.to_owned(),
                    after: live.tool_timeout,
                })
            }
        }
    }

    async fn service_error(&self, err: ServiceError, live: &Live) -> DownstreamError {
        let server = self.name.to_string();
        match err {
            ServiceError::McpError(data) => DownstreamError::Service {
                server,
                message: data.message.to_string(),
                code: Some(data.code),
            },
            ServiceError::TransportClosed | ServiceError::TransportSend(_) => {
                let mut ended = live.ended.clone();
                let cause = tokio::time::timeout(CAUSE_WAIT, ended.wait_for(Option::is_some))
                    .await
                    .ok()
                    .and_then(|r| r.ok().and_then(|c| c.clone()))
                    .unwrap_or_else(|| "the connection closed".to_owned());
                DownstreamError::Disconnected { server, cause }
            }
            other => DownstreamError::Service {
                server,
                message: other.to_string(),
                code: None,
            },
        }
    }
}

/// A request sent: through rmcp's loop, or a plain `tools/call` to a stdio server around
/// it (`raw_call.rs`).
enum Sent {
    Rmcp(rmcp::service::RequestHandle<rmcp::RoleClient>),
    Raw(RawCall),
}

impl Sent {
    /// Sends `request` on `live`'s connection, with `progress` routed from the server's
    /// first progress notification on.
    async fn send(
        request: ClientRequest,
        live: &Live,
        progress: Option<ProgressRoute>,
    ) -> Result<Sent, ServiceError> {
        if let (Some(raw), ClientRequest::CallToolRequest(_)) = (&live.raw, &request) {
            let call = raw.start();
            if let Some(route) = progress {
                live.progress.insert(call.progress_token.clone(), route);
            }
            if let Err(err) = call.send(request) {
                live.progress.remove(&call.progress_token);
                return Err(err);
            }
            return Ok(Sent::Raw(call));
        }
        let handle = (live.peer)
            .send_cancellable_request(request, PeerRequestOptions::no_options())
            .await?;
        if let Some(route) = progress {
            live.progress.insert(handle.progress_token.clone(), route);
        }
        Ok(Sent::Rmcp(handle))
    }

    fn id(&self) -> &rmcp::model::RequestId {
        match self {
            Sent::Rmcp(handle) => &handle.id,
            Sent::Raw(call) => &call.id,
        }
    }

    fn progress_token(&self) -> &rmcp::model::ProgressToken {
        match self {
            Sent::Rmcp(handle) => &handle.progress_token,
            Sent::Raw(call) => &call.progress_token,
        }
    }

    /// The answer, passed as written where `passing` allows it (only a raw call's can
    /// be); a connection that ended first is [`ServiceError::TransportClosed`].
    async fn answer(&mut self, passing: Option<Passing>) -> Result<Answer, ServiceError> {
        match self {
            Sent::Rmcp(handle) => (&mut handle.rx)
                .await
                .unwrap_or(Err(ServiceError::TransportClosed))
                .map(Answer::Decoded),
            Sent::Raw(call) => call.answer(passing).await,
        }
    }

    /// Tells the server the request is cancelled, with `reason`.
    async fn cancel(self, reason: &str) {
        match self {
            Sent::Rmcp(handle) => {
                let _ = handle.cancel(Some(reason.to_owned())).await;
            }
            Sent::Raw(call) => call.cancel(reason),
        }
    }
}

/// The tool `request` calls: a `tools/call`, typed or forwarded as the client wrote it
/// (a task-augmented one, [`ServerHandle::forward`]).
fn called_tool(request: &ClientRequest) -> Option<&str> {
    match request {
        ClientRequest::CallToolRequest(call) => Some(call.params.name.as_ref()),
        // No name: none the server lists either.
        ClientRequest::CustomRequest(custom) if custom.method == method::TOOLS_CALL => Some(
            (custom.params.as_ref())
                .and_then(|p| p.get("name"))
                .and_then(serde_json::Value::as_str)
                .unwrap_or_default(),
        ),
        _ => None,
    }
}
