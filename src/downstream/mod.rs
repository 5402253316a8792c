//! Connections to the configured servers: one supervised task per enabled server.
//!
//! The supervisor owns its connection (child process group or HTTP session), restarts it
//! with backoff, and sends each complete tool, prompt and resource list as an [`Event`] to
//! the one catalog writer; everything else holds a cheap [`ServerHandle`] that sends calls,
//! `prompts/get`, `resources/read`, `completion/complete` and resource subscriptions. Calls
//! are never replayed (DESIGN.md invariant 4). Must not import `server`.

use std::collections::BTreeSet;
use std::fmt;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use rmcp::model::{
    CallToolRequest, CallToolRequestParams, CallToolResult, ClientRequest, CompleteRequest,
    CompleteRequestParams, CompleteResult, ErrorCode, GetPromptRequest, GetPromptRequestParams,
    GetPromptResult, ProgressNotificationParam, ProgressToken, Prompt, ReadResourceRequest,
    ReadResourceRequestParams, ReadResourceResult, Resource, ResourceTemplate, ServerCapabilities,
    ServerResult, SubscribeRequestParams, UnsubscribeRequestParams,
};
#[expect(
    deprecated,
    reason = "downstream connections use the handshake era's subscribe"
)]
use rmcp::model::{SubscribeRequest, UnsubscribeRequest};
use rmcp::service::{PeerRequestOptions, ServiceError};
use tokio::sync::{mpsc, watch};
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;
use tracing::Instrument;

use crate::config::{Config, ServerConfig};

mod backoff;
mod cause;
pub(crate) use cause::chain;
mod child_transport;
mod environment;
mod handler;
mod http_raw;
mod launcher;
mod listing;
mod logging;
mod process;
mod progress;
mod session_watch;
mod stderr_cause;
mod supervisor;
mod tap;
pub mod tasks;
pub mod tool_cache;
mod upstream;
pub mod watchdog;

pub use backoff::{Backoff, InvalidBackoff, Restarts, SplitMix};
pub use environment::{ChildEnv, DEFAULT_ENV_VARS, NETWORK_ENV_VARS};
pub use process::STDERR_CAP_BYTES;
pub use upstream::{CallOrigin, ClientLink, LogFuture, Upstream, UpstreamFuture, input_method};

use progress::ProgressRoutes;
use upstream::InFlight;

/// How long a call that saw its connection drop waits for the supervisor to learn why
/// (the exit status arrives a moment after the pipe closes).
const CAUSE_WAIT: Duration = Duration::from_secs(2);

/// What the supervisors tell the catalog writer.
#[derive(Debug, Clone)]
pub enum Event {
    /// A server connected, reconnected or re-listed: its complete current list, filtered by
    /// `enabled_tools`/`disabled_tools`, overrides applied, in the order it lists them.
    Tools {
        /// The server's position in `Config::servers`.
        server: usize,
        /// As JSON text, made as each page arrived (see `listing`).
        tools: Vec<crate::server_tool::ServerTool>,
        /// The `instructions` of its handshake.
        instructions: Option<String>,
    },
    /// A server that declares `prompts` connected or re-listed: its complete current list.
    /// Sent before the `Tools` of the same listing, so whoever sees the tools of a server
    /// finds its prompts and resources already applied.
    Prompts { server: usize, prompts: Vec<Prompt> },
    /// A server that declares `resources` connected or re-listed: its complete current
    /// lists of resources and templates.
    Resources {
        server: usize,
        resources: Vec<Resource>,
        templates: Vec<ResourceTemplate>,
    },
    /// The server says a resource we subscribed to changed.
    ResourceUpdated { server: usize, uri: String },
}

/// Where a server's connection stands. Each state carries its data.
#[derive(Debug, Clone, PartialEq)]
pub enum ServerState {
    Starting,
    Ready {
        tools: usize,
        /// From spawn to the end of the first `tools/list`.
        ready_after: Duration,
    },
    /// The connection failed or ended; the next attempt comes after a backoff delay.
    Restarting {
        attempt: u32,
        cause: String,
        /// The last lines the child wrote to stderr (redacted): for the user and the log,
        /// never for the model, which gets `cause` alone.
        stderr: Option<String>,
    },
    /// An HTTP server answered 401 and there is no usable OAuth login for it: `cause`
    /// names the command that fixes it. Tried again once a login is stored.
    NeedsLogin {
        cause: String,
    },
    /// Gave up for good: retrying cannot help (command not found, missing directory).
    Failed {
        cause: String,
        stderr: Option<String>,
    },
    Disabled,
    /// A reload found its table gone from the config file: stopped, its listed tools kept
    /// (append-only) and answering that the server was removed.
    Removed,
    /// Not running, by design: `start = "lazy"` before its first call, or stopped after
    /// `idle_stop_sec` without one. Its `tools` (from the tool cache or its last run) stay
    /// listed and searchable; the next call starts it and waits for it.
    Idle {
        tools: usize,
    },
}

impl ServerState {
    /// Whether the first attempt has concluded: what `check` and `list` wait for.
    pub fn is_settled(&self) -> bool {
        !matches!(self, ServerState::Starting)
    }

    /// The cause of a failed or restarting connection.
    pub fn cause(&self) -> Option<&str> {
        match self {
            ServerState::Restarting { cause, .. }
            | ServerState::Failed { cause, .. }
            | ServerState::NeedsLogin { cause } => Some(cause),
            _ => None,
        }
    }

    /// The child's stderr tail of a failed or restarting connection.
    pub fn stderr(&self) -> Option<&str> {
        match self {
            ServerState::Restarting { stderr, .. } | ServerState::Failed { stderr, .. } => {
                stderr.as_deref()
            }
            _ => None,
        }
    }

    /// The state as the model may read it: the cause without the child's stderr, which can
    /// hold anything the server printed (its stderr is in mcp-defer's log).
    pub fn for_model(&self) -> String {
        match self {
            ServerState::Restarting { attempt, cause, .. } => {
                format!("restarting (attempt {attempt}) after: {cause}")
            }
            ServerState::Failed { cause, .. } => format!("failed: {cause}"),
            other => other.to_string(),
        }
    }
}

impl fmt::Display for ServerState {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ServerState::Starting => f.write_str("starting"),
            ServerState::Ready { tools, .. } => write!(f, "ready, {tools} tools"),
            ServerState::Restarting { .. } | ServerState::Failed { .. } => {
                f.write_str(&self.for_model())?;
                match self.stderr() {
                    Some(stderr) => write!(f, "; stderr: {stderr}"),
                    None => Ok(()),
                }
            }
            ServerState::Disabled => f.write_str("disabled in the config"),
            ServerState::Removed => f.write_str("removed from the config file"),
            ServerState::Idle { tools } => {
                write!(
                    f,
                    "not running, {tools} tools known; starts at the next call"
                )
            }
            ServerState::NeedsLogin { cause } => f.write_str(cause),
        }
    }
}

#[derive(Debug, thiserror::Error)]
pub enum DownstreamError {
    /// The model reads this: the state without the child's stderr.
    #[error("server '{server}' is not connected ({})", state.for_model())]
    NotReady { server: String, state: ServerState },
    #[error("server '{server}' did not answer {tool} within {after:?}")]
    Timeout {
        server: String,
        /// What was asked: the tool's name, or the method and its target.
        tool: String,
        after: Duration,
    },
    #[error("server '{server}' disconnected during the call: {cause}")]
    Disconnected { server: String, cause: String },
    #[error("the call was cancelled")]
    Cancelled,
    /// A tool known from the tool cache or an earlier list that the running server does not
    /// list: never forwarded (a cache file edited by hand must not reach a server).
    #[error(
        "server '{server}' does not list a tool '{tool}' now that it runs (it came from the \
         tool cache or an earlier list); search_tools shows the tools it has"
    )]
    NotListed { server: String, tool: String },
    #[error("server '{server}' answered with an error: {message}")]
    Service {
        server: String,
        message: String,
        /// The JSON-RPC error code when the server sent one, so a proxied request can answer
        /// with the same code (a resource not found stays one).
        code: Option<ErrorCode>,
    },
}

/// How one proxied call is run.
#[derive(Debug, Default)]
pub struct CallOptions {
    /// Fires when the client cancels; the downstream request is cancelled too.
    pub cancel: CancellationToken,
    /// Where downstream progress for this call goes, when the client asked for progress.
    pub progress: Option<ProgressRoute>,
    /// The client request this call serves: requests the server sends to its client
    /// during the call are tied to it (see [`Upstream::ask`]).
    pub origin: Option<CallOrigin>,
}

/// Where one call's downstream progress goes: each notification is re-tagged with the
/// client's own token (the downstream request carries a token of its connection's).
#[derive(Debug)]
pub struct ProgressRoute {
    pub tx: mpsc::UnboundedSender<ProgressNotificationParam>,
    pub client_token: ProgressToken,
}

impl From<CancellationToken> for CallOptions {
    fn from(cancel: CancellationToken) -> Self {
        CallOptions {
            cancel,
            ..CallOptions::default()
        }
    }
}

/// All servers of a config, by their position in `Config::servers`. A position is stable
/// for the life of the pool: a server removed by a reload keeps its slot (its handle says
/// [`ServerState::Removed`]), an added one gets the next, so the catalog's server indexes
/// never shift.
pub struct Pool {
    slots: Vec<Slot>,
    stop: CancellationToken,
    events: mpsc::UnboundedSender<Event>,
    link: watch::Receiver<Option<ClientLink>>,
    max_message_bytes: usize,
}

/// One position of the pool: the handle everyone holds (the same object across restarts,
/// so clones held elsewhere stay valid), the state's sender the supervisor writes through,
/// and the running supervisor, if any.
struct Slot {
    handle: ServerHandle,
    state: watch::Sender<ServerState>,
    running: Option<(JoinHandle<()>, CancellationToken)>,
    /// Why [`Pool::stop_one`] stopped it: what its calls in flight are told.
    stopped_because: StopCause,
}

/// Why a supervisor was stopped other than by the pool's shutdown; read once by it.
pub(crate) type StopCause = Arc<Mutex<Option<&'static str>>>;

/// What a call cut by a reload that restarts its server is told. Not repeated for it:
/// the server may have done part of it (DESIGN.md invariant 4).
pub const RESTARTED_BY_RELOAD: &str = "restarted because its entry in the config file \
     changed (reload); the call was not repeated, call it again";
/// What a call cut by a reload that removes its server is told.
pub const REMOVED_BY_RELOAD: &str = "removed from the config file (reload)";

impl Pool {
    /// Starts one supervisor per enabled server, concurrently, and returns at once, with
    /// no client behind it ([`ClientLink::none`]). Cancelling `shutdown` (or calling
    /// [`Pool::shutdown`]) closes every connection.
    pub fn start(
        config: &Config,
        shutdown: CancellationToken,
    ) -> (Pool, mpsc::UnboundedReceiver<Event>) {
        let (_, link) = watch::channel(Some(ClientLink::none()));
        Pool::start_after(config, shutdown, link)
    }

    /// Like [`Pool::start`], but the supervisors spawn nothing until `link` holds the
    /// client's link: each handshake declares the client's capabilities, so they must be
    /// known first. `serve` also holds them back while it answers the handshake: spawning
    /// 20 processes takes tens of milliseconds of the thread that would answer it. A
    /// sender dropped before it sent anything starts them with [`ClientLink::none`].
    pub fn start_after(
        config: &Config,
        shutdown: CancellationToken,
        link: watch::Receiver<Option<ClientLink>>,
    ) -> (Pool, mpsc::UnboundedReceiver<Event>) {
        let (events, rx) = mpsc::unbounded_channel();
        let mut pool = Pool {
            slots: Vec::with_capacity(config.servers.len()),
            stop: shutdown.child_token(),
            events,
            link,
            max_message_bytes: config.settings.max_message_bytes,
        };
        for server in &config.servers {
            let index = pool.add(server);
            pool.launch(index, server);
        }
        (pool, rx)
    }

    /// A new position for `server` at the end, its handle `Starting` (or `Disabled`), no
    /// supervisor yet: [`Pool::launch`] starts it. Returns the position.
    pub fn add(&mut self, server: &ServerConfig) -> usize {
        let index = self.slots.len();
        let (state, receiver) = watch::channel(if server.enabled {
            ServerState::Starting
        } else {
            ServerState::Disabled
        });
        self.slots.push(Slot {
            handle: ServerHandle {
                name: server.name.as_str().into(),
                index,
                state: receiver,
                live: Arc::new(Mutex::new(None)),
                subscriptions: Arc::new(Mutex::new(BTreeSet::new())),
                demand: Arc::new(Demand::new()),
                stopping: self.stop.clone(),
            },
            state,
            running: None,
            stopped_because: Arc::new(Mutex::new(None)),
        });
        index
    }

    /// Starts a supervisor for `server` at `index`, which must have none running (a new
    /// position, or one [`Pool::stop_one`] stopped); a disabled server only says so. The
    /// handle stays the same object, so its clones see the new connection.
    pub fn launch(&mut self, index: usize, server: &ServerConfig) {
        let Some(slot) = self.slots.get_mut(index) else {
            tracing::error!(index, server = %server.name, "no such pool position");
            return;
        };
        if slot.running.is_some() {
            tracing::error!(server = %server.name, "a supervisor is already running here");
            return;
        }
        if !server.enabled {
            slot.state.send_replace(ServerState::Disabled);
            return;
        }
        slot.state.send_replace(ServerState::Starting);
        let stop = self.stop.child_token();
        let supervisor = supervisor::Supervisor {
            name: slot.handle.name.clone(),
            index,
            config: server.clone(),
            state: slot.state.clone(),
            live: slot.handle.live.clone(),
            events: self.events.clone(),
            stop: stop.clone(),
            link: self.link.clone(),
            subscriptions: slot.handle.subscriptions.clone(),
            max_message_bytes: self.max_message_bytes,
            demand: slot.handle.demand.clone(),
            stopped_because: slot.stopped_because.clone(),
        };
        let span = tracing::info_span!("downstream", server = %server.name);
        let task = tokio::spawn(supervisor.run().instrument(span));
        slot.running = Some((task, stop));
    }

    /// Stops the server at `index` (graceful close, then its process group is gone) and
    /// leaves its handle in `state`; its position stays taken. Calls in flight end with
    /// [`DownstreamError::Disconnected`], saying the server was removed (`state` is
    /// [`ServerState::Removed`]) or restarted by a reload (any other).
    pub async fn stop_one(&mut self, index: usize, state: ServerState) {
        let Some(slot) = self.slots.get_mut(index) else {
            return;
        };
        if let Ok(mut because) = slot.stopped_because.lock() {
            *because = Some(if state == ServerState::Removed {
                REMOVED_BY_RELOAD
            } else {
                RESTARTED_BY_RELOAD
            });
        }
        if let Some((task, stop)) = slot.running.take() {
            stop.cancel();
            if let Err(err) = task.await {
                tracing::warn!(error = %err, "a supervisor task failed");
            }
        }
        slot.state.send_replace(state);
    }

    pub fn get(&self, index: usize) -> Option<&ServerHandle> {
        self.slots.get(index).map(|slot| &slot.handle)
    }

    pub fn iter(&self) -> impl Iterator<Item = &ServerHandle> {
        self.slots.iter().map(|slot| &slot.handle)
    }

    /// Waits until every server's first attempt has concluded (ready, failed, restarting
    /// or disabled). Bounded by the servers' startup timeouts.
    pub async fn settled(&self) {
        for handle in self.iter() {
            handle.settled().await;
        }
    }

    /// Closes every connection and waits until each child and its process group is gone
    /// (graceful close, a bounded wait, then SIGKILL to the group).
    pub async fn shutdown(mut self) {
        self.stop_all().await;
    }

    /// [`Pool::shutdown`] for a pool that is shared (`serve` shares it with the reloader).
    pub async fn stop_all(&mut self) {
        self.stop.cancel();
        for slot in &mut self.slots {
            if let Some((task, _)) = slot.running.take()
                && let Err(err) = task.await
            {
                tracing::warn!(error = %err, "a supervisor task failed");
            }
        }
    }
}

/// The connection a call goes through, cloned out of the handle so no lock is held
/// across `.await`.
#[derive(Clone)]
pub(crate) struct Live {
    peer: rmcp::Peer<rmcp::RoleClient>,
    progress: Arc<ProgressRoutes>,
    calls: Arc<InFlight>,
    /// Set by the supervisor to the cause once the connection has ended.
    ended: watch::Receiver<Option<String>>,
    /// The `tool_timeout` of the config this connection was made with (a reload may
    /// change it; the handle outlives the connection).
    tool_timeout: Duration,
    /// The tools this connection's server listed (after the config's filters), replaced at
    /// each re-list: a call goes only to one of these, never to one that only the tool
    /// cache or an older list named.
    listed: Listed,
}

/// The names of the tools a running server listed last; shared by the supervisor (which
/// replaces them) and the connection's [`Live`] handles.
pub(crate) type Listed = Arc<Mutex<Arc<std::collections::HashSet<String>>>>;

/// A cheap, cloneable way to reach one server.
#[derive(Clone)]
pub struct ServerHandle {
    name: Arc<str>,
    index: usize,
    state: watch::Receiver<ServerState>,
    live: Arc<Mutex<Option<Live>>>,
    /// Resource URIs we subscribed to on this server; the supervisor subscribes again after
    /// a restart, so a subscription outlives the connection it was made on.
    subscriptions: Subscriptions,
    /// Calls in flight and when the last one ended (idle stop), and the wake-up of a
    /// server that is [`ServerState::Idle`].
    demand: Arc<Demand>,
    /// Cancelled when the whole pool stops.
    stopping: CancellationToken,
}

/// What a server is asked for: shared by its handle (which counts calls and wakes it) and
/// its supervisor (which stops it when idle and waits for the wake-up).
///
/// A request counts from before it looks for the connection, and the idle stop is decided
/// under the same lock ([`Demand::stop_if_idle`]): a request either counts before the
/// decision (no stop) or finds the connection already gone and the server `Idle` (and
/// wakes it). None is sent on a connection that is being stopped for idleness.
#[derive(Debug)]
pub(crate) struct Demand {
    wake: tokio::sync::Notify,
    counts: Mutex<Counts>,
}

/// Requests in flight and when the last one ended.
#[derive(Debug)]
struct Counts {
    busy: usize,
    last: tokio::time::Instant,
}

impl Demand {
    fn new() -> Demand {
        Demand {
            wake: tokio::sync::Notify::new(),
            counts: Mutex::new(Counts {
                busy: 0,
                last: tokio::time::Instant::now(),
            }),
        }
    }

    /// A request starts; it counts until the guard drops.
    fn begin(self: &Arc<Self>) -> Busy {
        if let Ok(mut counts) = self.counts.lock() {
            counts.busy += 1;
            counts.last = tokio::time::Instant::now();
        }
        Busy(self.clone())
    }

    /// Now counts as the last activity (a connection that just came up is not idle).
    pub(crate) fn touch(&self) {
        if let Ok(mut counts) = self.counts.lock() {
            counts.last = tokio::time::Instant::now();
        }
    }

    /// How long no request has been in flight; `None` while one is.
    pub(crate) fn idle_for(&self) -> Option<Duration> {
        let counts = self.counts.lock().ok()?;
        (counts.busy == 0).then(|| counts.last.elapsed())
    }

    /// Resolves once no request has been in flight for `idle` (as seen then: confirm with
    /// [`Demand::stop_if_idle`]).
    pub(crate) async fn idle(&self, idle: Duration) {
        loop {
            match self.idle_for() {
                Some(elapsed) if elapsed >= idle => return,
                Some(elapsed) => tokio::time::sleep(idle - elapsed).await,
                None => tokio::time::sleep(idle.max(Duration::from_millis(100))).await,
            }
        }
    }

    /// Runs `stop` (which takes the connection away and says `Idle`) when no request has
    /// been in flight for `idle`, under the lock every request counts itself with; `true`
    /// when it ran.
    pub(crate) fn stop_if_idle(&self, idle: Duration, stop: impl FnOnce()) -> bool {
        let Ok(counts) = self.counts.lock() else {
            return false;
        };
        if counts.busy > 0 || counts.last.elapsed() < idle {
            return false;
        }
        stop();
        true
    }

    /// Resolves at the next wake-up (a call to a server that is not running).
    pub(crate) async fn woken(&self) {
        self.wake.notified().await;
    }
}

/// One request in flight; its drop is the request's end.
struct Busy(Arc<Demand>);

impl Drop for Busy {
    fn drop(&mut self) {
        if let Ok(mut counts) = self.0.counts.lock() {
            counts.busy = counts.busy.saturating_sub(1);
            counts.last = tokio::time::Instant::now();
        }
    }
}

/// The URIs subscribed on one server, shared by its handle and its supervisor.
pub(crate) type Subscriptions = Arc<Mutex<BTreeSet<String>>>;

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

    fn live(&self) -> Option<Live> {
        self.live.lock().ok().and_then(|live| live.clone())
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
        let tool = request.name.to_string();
        let span = tracing::debug_span!("call", tool = %tool);
        let request = ClientRequest::CallToolRequest(CallToolRequest::new(request));
        match self
            .request(request, &tool, options)
            .instrument(span)
            .await?
        {
            ServerResult::CallToolResult(result) => Ok(result),
            _ => Err(self.unexpected(format!("tools/call {tool}"))),
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
        let what = "completion/complete".to_owned();
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
        if let Ok(mut subscribed) = self.subscriptions.lock() {
            subscribed.insert(uri.to_owned());
        }
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
        if let Ok(mut subscribed) = self.subscriptions.lock() {
            subscribed.remove(uri);
        }
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
    async fn request(
        &self,
        request: ClientRequest,
        what: &str,
        options: CallOptions,
    ) -> Result<ServerResult, DownstreamError> {
        let _busy = self.demand.begin();
        let live = match self.live() {
            Some(live) => live,
            None => self.start_on_demand(&options.cancel).await?,
        };
        if let ClientRequest::CallToolRequest(call) = &request {
            let listed = live
                .listed
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner)
                .clone();
            if !listed.contains(call.params.name.as_ref()) {
                return Err(DownstreamError::NotListed {
                    server: self.name.to_string(),
                    tool: call.params.name.to_string(),
                });
            }
        }
        let in_flight = options.origin.map(|origin| live.calls.begin(origin));
        let mut handle = match live
            .peer
            .send_cancellable_request(request, PeerRequestOptions::no_options())
            .await
        {
            Ok(handle) => handle,
            Err(err) => return Err(self.service_error(err, &live).await),
        };
        if let Some(in_flight) = &in_flight {
            in_flight.sent(handle.id.clone());
        }
        let token = handle.progress_token.clone();
        if let Some(route) = options.progress {
            live.progress.insert(token.clone(), route);
        }
        enum Outcome {
            Answer(
                Box<
                    Result<
                        Result<ServerResult, ServiceError>,
                        tokio::sync::oneshot::error::RecvError,
                    >,
                >,
            ),
            Cancelled,
            TimedOut,
        }
        let outcome = tokio::select! {
            answer = &mut handle.rx => Outcome::Answer(Box::new(answer)),
            () = options.cancel.cancelled() => Outcome::Cancelled,
            () = tokio::time::sleep(live.tool_timeout) => Outcome::TimedOut,
        };
        // Progress is routed as it is read (`progress.rs`): what the server sent before its
        // answer is in the route's channel by now, so the route may go.
        live.progress.remove(&token);
        drop(in_flight);
        match outcome {
            Outcome::Answer(answer) => match *answer {
                Ok(Ok(result)) => Ok(result),
                Ok(Err(err)) => Err(self.service_error(err, &live).await),
                Err(_) => Err(self
                    .service_error(ServiceError::TransportClosed, &live)
                    .await),
            },
            Outcome::Cancelled => {
                let _ = handle.cancel(Some("cancelled by the client".into())).await;
                Err(DownstreamError::Cancelled)
            }
            Outcome::TimedOut => {
                let _ = handle.cancel(Some("timed out".into())).await;
                Err(DownstreamError::Timeout {
                    server: self.name.to_string(),
                    tool: what.to_owned(),
                    after: live.tool_timeout,
                })
            }
        }
    }

    /// The connection of a server that is not running. One that is [`ServerState::Idle`]
    /// is woken; a request to a server that is `Starting` (woken by another request, started
    /// eagerly, or restarted by a reload) joins that start; each waits until the server is
    /// ready or has failed (its supervisor bounds that by `startup_timeout`). A connection
    /// that is closing (stopped by a reload) is waited out until the state says what comes
    /// next. Any other state (restarting after a crash, failed, disabled, removed) answers at
    /// once with the state.
    async fn start_on_demand(&self, cancel: &CancellationToken) -> Result<Live, DownstreamError> {
        let mut state = self.state.clone();
        // Each round waits for a change of state; a few are the most a start takes
        // (idle -> starting -> ready), more means it keeps failing.
        for _ in 0..4 {
            if let Some(live) = self.live() {
                return Ok(live);
            }
            let now = state.borrow_and_update().clone();
            match now {
                ServerState::Idle { .. } => {
                    tracing::info!(server = %self.name, "starting on demand");
                    self.demand.wake.notify_one();
                }
                ServerState::Starting => {
                    tracing::debug!(server = %self.name, "waiting for the start under way");
                }
                // Ready without a connection: it is closing (a reload stops it); the next
                // state says whether it starts again.
                ServerState::Ready { .. } => {}
                _ => break,
            }
            let waiting = |s: &ServerState| match s {
                ServerState::Idle { .. } | ServerState::Starting => true,
                ServerState::Ready { .. } => self.live().is_none() && *s == now,
                _ => false,
            };
            tokio::select! {
                changed = state.wait_for(|s| !waiting(s)) => {
                    if changed.is_err() {
                        break;
                    }
                }
                () = cancel.cancelled() => return Err(DownstreamError::Cancelled),
                () = self.stopping.cancelled() => break,
            }
        }
        self.live().ok_or_else(|| DownstreamError::NotReady {
            server: self.name.to_string(),
            state: self.state(),
        })
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
