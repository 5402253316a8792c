//! The MCP server the client talks to: a hand-written rmcp `ServerHandler`.
//!
//! It answers `tools/list` from the append-only [`ExposedList`], runs the meta tools (one
//! file each under [`meta`], each owning its behaviour end to end), routes every other call
//! to its downstream server ([`route`]), and tells the client when a list grew
//! ([`arrivals`] turns what [`crate::ingest`] learnt into appends and notifications).
//! Prompts, resources, templates and completions pass through as they would directly
//! ([`prompts`], [`resources`], [`completions`]); requests downstream servers send their
//! client go through [`client_requests`]. It is the only writer of the exposed lists
//! (DESIGN.md section 2). Locks are std mutexes held for a few lines and never across
//! `.await`; the lock order is catalog, then index, then exposure; the prompt and resource
//! locks are never held with another.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex, Weak};
use std::time::Duration;

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CompleteRequestParams, CompleteResult,
    DiscoverRequestMethod, DiscoverResult, ErrorCode, GetPromptRequestParams, GetPromptResponse,
    Implementation, InitializeRequestParams, InitializeResult, ListPromptsResult,
    ListResourceTemplatesResult, ListResourcesResult, ListToolsResult, PaginatedRequestParams,
    PromptsCapability, ProtocolVersion, ReadResourceRequestParams, ReadResourceResponse,
    ResourcesCapability, ServerCapabilities, ServerConfig, SubscribeRequestParams,
    SubscriptionFilter, Tool, UnsubscribeRequestParams,
};
use rmcp::service::{NotificationContext, RequestContext, SubscriptionContext};
use rmcp::{ErrorData as McpError, RoleServer, ServerHandler};
use tokio::sync::mpsc;

use crate::config::{AlwaysLoad, ClientEra, Config};
use crate::downstream::{DownstreamError, Event, ServerHandle, ServerState};
use crate::ingest::Registry;
use crate::sync::lock;

mod arrivals;
pub(crate) mod availability;
mod client_requests;
mod completions;
mod envelope;
mod framing;
mod gate;
mod http;
mod instructions;
pub mod meta;
mod notify;
mod output_limit;
mod prompts;
mod reload;
mod resources;
mod route;
mod serve;
mod session;
mod sessions;

pub use http::{HttpError, MCP_PATH, serve_http};
pub use serve::serve;

use client_requests::ClientRequests;
use framing::ToolLists;
use meta::MetaTool;
use session::{Mode, Session};

/// How often a wait for starting servers re-checks them.
const WAIT_POLL: Duration = Duration::from_millis(5);
/// Longest a search waits for servers still starting: 70 Python servers took 70 s to list,
/// and a search is answered from what is indexed, naming the rest (warm starts list at once
/// from the tool cache). Calls and selections still wait for the server they need.
const SEARCH_WAIT: Duration = Duration::from_secs(5);

/// The handler rmcp drives: one client session over the shared state; cheap to clone.
#[derive(Clone)]
pub struct DeferServer {
    state: State,
}

/// What a request handler sees: the shared state (through `Deref`) and its own session.
#[derive(Clone)]
pub(crate) struct State {
    shared: Arc<Shared>,
    session: Arc<Session>,
}

impl std::ops::Deref for State {
    type Target = Shared;

    fn deref(&self) -> &Shared {
        &self.shared
    }
}

/// What every session shares: one config, one set of downstream connections, one
/// registry of what they listed. Built once per process.
pub(crate) struct Shared {
    /// The running servers by position, and their handles: one snapshot, swapped whole by
    /// a reload ([`Shared::set_running`]) so a reader never sees a config without its
    /// handle. Read through [`Shared::config`] and [`Shared::handles`].
    running: std::sync::RwLock<Running>,
    /// Built once from the config: `get_info` is called often and must not vary.
    info: ServerConfig,
    /// The catalog, the search index and what else the servers' lists told us.
    registry: Arc<Registry>,
    /// `call_tool`'s compiled input schemas.
    validators: meta::call_tool::Validators,
    /// Requests downstream servers send to their client, routed to the session whose
    /// call they came during, and the capabilities clients declared.
    client: ClientRequests,
    /// Downstream resource subscriptions, counted across every session's holds.
    subscriptions: Mutex<BTreeMap<String, resources::Subscription>>,
    /// Live sessions, for arrivals to append to and notify. A session that ended is
    /// pruned on the next walk.
    sessions: Mutex<Vec<Weak<Session>>>,
    /// Handed to each session to release its subscriptions when it is dropped.
    release: mpsc::UnboundedSender<String>,
    /// Why the config file on disk could not be reloaded, while it cannot: the model is
    /// told in each `search_tools` and `select_tools` answer (the log alone is not
    /// where a user who asked the agent looks).
    reload_problem: Mutex<Option<String>>,
}

/// A consistent view of the running servers: `handles[i]` runs `config.servers[i]`.
#[derive(Clone)]
pub(crate) struct Running {
    pub(crate) config: Arc<Config>,
    pub(crate) handles: Arc<[ServerHandle]>,
}

impl DeferServer {
    /// Builds the shared state and the one stdio session over it (see [`Shared::new`]).
    ///
    /// # Errors
    /// When the search index cannot be created.
    pub(crate) fn new(
        config: Config,
        handles: Vec<ServerHandle>,
        events: mpsc::UnboundedReceiver<Event>,
        client: ClientRequests,
        tool_lists: ToolLists,
    ) -> anyhow::Result<DeferServer> {
        let shared = Shared::new(config, handles, events, client)?;
        Ok(DeferServer::session(
            &shared,
            Some(Mode::Connection),
            Some(tool_lists),
        ))
    }

    /// A new session over `shared`; `mode` `None` lets its first request decide
    /// ([`session::Mode`]). With `tool_lists`, its transport writes `tools/list` answers
    /// from the listed bytes (stdio, [`framing::Framed`]).
    pub(crate) fn session(
        shared: &Arc<Shared>,
        mode: Option<Mode>,
        tool_lists: Option<ToolLists>,
    ) -> DeferServer {
        let session = Arc::new(Session::new(
            &shared.config().settings,
            mode,
            tool_lists,
            shared.release.clone(),
        ));
        let mut sessions = lock(&shared.sessions);
        sessions.retain(|s| s.strong_count() > 0);
        sessions.push(Arc::downgrade(&session));
        drop(sessions);
        DeferServer {
            state: State {
                shared: shared.clone(),
                session,
            },
        }
    }
}

impl Shared {
    /// Builds the shared state and starts the one task that takes `events` in
    /// ([`arrivals::take_events`]) and the one that releases ended sessions'
    /// subscriptions. `client` is the table the downstream connections ask clients through.
    ///
    /// # Errors
    /// When the search index cannot be created.
    pub(crate) fn new(
        config: Config,
        handles: Vec<ServerHandle>,
        events: mpsc::UnboundedReceiver<Event>,
        client: ClientRequests,
    ) -> anyhow::Result<Arc<Shared>> {
        let config = Arc::new(config);
        let mut capabilities = ServerCapabilities::builder()
            .enable_tools()
            .enable_tool_list_changed()
            .build();
        // Whether a server offers prompts or resources is known only once it connects, and
        // capabilities must not wait for that nor change during the session (DESIGN.md
        // invariant 3): any enabled server may, and an empty list is a correct answer.
        if config.enabled_servers().next().is_some() {
            let mut prompts = PromptsCapability::default();
            prompts.list_changed = Some(true);
            let mut resources = ResourcesCapability::default();
            resources.list_changed = Some(true);
            resources.subscribe = Some(true);
            capabilities.prompts = Some(prompts);
            capabilities.resources = Some(resources);
            capabilities.completions = Some(Default::default());
        }
        let info = ServerConfig::new(capabilities)
            .with_server_info(Implementation::new(
                env!("CARGO_PKG_NAME"),
                env!("CARGO_PKG_VERSION"),
            ))
            .with_instructions(instructions::build(&config));
        let (release, released) = mpsc::unbounded_channel();
        let shared = Arc::new(Shared {
            registry: Arc::new(Registry::new(config.clone())?),
            validators: meta::call_tool::Validators::default(),
            subscriptions: Mutex::new(BTreeMap::new()),
            sessions: Mutex::new(Vec::new()),
            release,
            client,
            info,
            running: std::sync::RwLock::new(Running {
                config,
                handles: handles.into(),
            }),
            reload_problem: Mutex::new(None),
        });
        tokio::spawn(arrivals::take_events(shared.clone(), events));
        tokio::spawn(resources::release_ended(Arc::downgrade(&shared), released));
        Ok(shared)
    }

    /// The running config: every server position, removed ones included.
    pub(crate) fn config(&self) -> Arc<Config> {
        crate::sync::read(&self.running).config.clone()
    }

    /// The handles of the running servers, by position.
    pub(crate) fn handles(&self) -> Arc<[ServerHandle]> {
        crate::sync::read(&self.running).handles.clone()
    }

    /// The handle of the server at `index`.
    pub(crate) fn handle(&self, index: usize) -> Option<ServerHandle> {
        crate::sync::read(&self.running).handles.get(index).cloned()
    }

    /// Takes the running servers after a reload; the registry first, so the lists of the
    /// servers about to start are taken.
    pub(crate) fn set_running(&self, running: Running) {
        self.registry.set_config(running.config.clone());
        *crate::sync::write(&self.running) = running;
    }

    /// Notes why the file could not be reloaded (`None`: it was, the note goes).
    pub(crate) fn set_reload_problem(&self, problem: Option<String>) {
        *lock(&self.reload_problem) = problem;
    }

    /// Why the file on disk could not be reloaded, while it cannot.
    pub(crate) fn reload_problem(&self) -> Option<String> {
        lock(&self.reload_problem).clone()
    }

    /// The sessions alive now.
    fn live_sessions(&self) -> Vec<Arc<Session>> {
        let mut sessions = lock(&self.sessions);
        sessions.retain(|s| s.strong_count() > 0);
        sessions.iter().filter_map(Weak::upgrade).collect()
    }
}

impl Shared {
    /// Waits, at most `core_wait`, until every server with core tools has listed them or
    /// failed: Codex drops tools that arrive after its first list (DESIGN.md 7a).
    async fn wait_for_core(&self) {
        let deadline = deadline_after(self.config().settings.core_wait);
        self.wait_for(|s| s.always_load != AlwaysLoad::None, deadline)
            .await;
    }

    /// Waits, at most `core_wait`, until every server has listed or failed: a client's first
    /// `prompts/list` or `resources/list` comes right after the handshake, and is best in
    /// config order; servers that come later are appended, with list-changed.
    async fn wait_for_first_list(&self) {
        let deadline = tokio::time::Instant::now() + self.config().settings.core_wait;
        self.wait_for(|_| true, deadline).await;
    }

    /// Waits until every server has listed its tools or failed, at most the longest
    /// `startup_timeout`: a search or call that comes early should see what is coming.
    async fn wait_for_servers(&self) {
        let longest = self
            .config()
            .enabled_servers()
            .map(|s| s.startup_timeout)
            .max()
            .unwrap_or_default();
        self.wait_for(|_| true, deadline_after(longest)).await;
    }

    /// [`Shared::wait_for_servers`] for a search: at most [`SEARCH_WAIT`], after which it
    /// answers with what is indexed and names the servers still starting (issue 21).
    async fn wait_for_search(&self) {
        let longest = self
            .config()
            .enabled_servers()
            .map(|s| s.startup_timeout)
            .max()
            .unwrap_or_default();
        self.wait_for(|_| true, deadline_after(longest.min(SEARCH_WAIT)))
            .await;
    }

    /// The enabled servers still starting whose tools are not searchable yet.
    pub(crate) fn starting_servers(&self) -> Vec<String> {
        let Running { config, handles } = crate::sync::read(&self.running).clone();
        (config.servers.iter().enumerate())
            .filter(|(i, s)| {
                s.enabled
                    && !self.registry.is_searchable(*i)
                    && handles
                        .get(*i)
                        .is_some_and(|h| matches!(h.state(), ServerState::Starting))
            })
            .map(|(_, s)| s.name.clone())
            .collect()
    }

    /// Waits until each enabled server that `which` picks has listed its tools once, or is
    /// not coming (failed, restarting, disabled), or `deadline` passes.
    async fn wait_for(
        &self,
        which: impl Fn(&crate::config::ServerConfig) -> bool,
        deadline: tokio::time::Instant,
    ) {
        let Running { config, handles } = crate::sync::read(&self.running).clone();
        let awaited: Vec<usize> = (config.servers.iter().enumerate())
            .filter(|(_, s)| s.enabled && which(s))
            .map(|(i, _)| i)
            .collect();
        loop {
            let pending = awaited.iter().any(|&i| {
                !self.registry.is_searchable(i)
                    && handles.get(i).is_some_and(|h| {
                        matches!(
                            h.state(),
                            ServerState::Starting
                                | ServerState::Ready { .. }
                                | ServerState::Idle { .. }
                        )
                    })
            });
            if !pending || tokio::time::Instant::now() >= deadline {
                return;
            }
            tokio::time::sleep(WAIT_POLL).await;
        }
    }

    /// Why each of `names` resolved to nothing (see [`availability::Unknown`]), worked out
    /// on the blocking pool: "did you mean" takes an edit distance against every tool's name
    /// (milliseconds at 10k tools), which must not hold up the requests behind it.
    async fn explain_unknown(&self, names: Vec<String>) -> Vec<availability::Unknown> {
        if names.is_empty() {
            return Vec::new();
        }
        let Running { config, handles } = crate::sync::read(&self.running).clone();
        let registry = self.registry.clone();
        let count = names.len();
        let explained = tokio::task::spawn_blocking(move || {
            let catalog = registry.catalog();
            (names.iter())
                .map(|name| availability::Unknown::of(&config, &handles, &catalog, name))
                .collect::<Vec<_>>()
        })
        .await;
        explained.unwrap_or_else(|err| {
            tracing::error!(error = %err, "working out an unknown name failed");
            vec![availability::Unknown::Tool { suggestion: None }; count]
        })
    }

    /// The error text for a call of `name`, which resolved to nothing.
    async fn unknown_message(&self, name: &str) -> String {
        let explained = self.explain_unknown(vec![name.to_owned()]).await;
        (explained.first()).map_or_else(|| format!("Unknown tool '{name}'."), |u| u.message(name))
    }
}

impl ServerHandler for DeferServer {
    fn get_info(&self) -> ServerConfig {
        self.state.info.clone()
    }

    async fn initialize(
        &self,
        request: InitializeRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<InitializeResult, McpError> {
        context.peer.set_peer_info(request.clone());
        self.state.session.bind_connection();
        self.state
            .session
            .notifier
            .set_legacy_peer(context.peer.clone());
        self.state
            .client
            .initialized(context.peer.clone(), request.capabilities.clone());
        self.negotiate_initialize(&request)
    }

    async fn discover(
        &self,
        context: RequestContext<RoleServer>,
    ) -> Result<DiscoverResult, McpError> {
        // Refused, a 2026-07-28 client falls back to `initialize` (Claude Code does, DESIGN.md
        // 7a), and servers may then ask it for roots and the like outside a call too.
        if self.state.config().settings.client_era == ClientEra::Handshake {
            return Err(McpError::method_not_found::<DiscoverRequestMethod>());
        }
        // A 2026-07-28 client declares its capabilities here first.
        self.state.client.note(&context);
        Ok(DiscoverResult::from_server_info(
            self.supported_protocol_versions().into_owned(),
            self.get_info(),
        ))
    }

    /// Passed on to every connected server: the client's roots are theirs. Filesystem
    /// servers decide what they may touch from them, so a stale list is a safety matter.
    async fn on_roots_list_changed(&self, _context: NotificationContext<RoleServer>) {
        tracing::debug!("client roots changed; telling every server");
        for handle in self.state.handles().iter() {
            handle.notify_roots_list_changed().await;
        }
    }

    fn accepted_subscription_filter(
        &self,
        requested: &SubscriptionFilter,
    ) -> Option<SubscriptionFilter> {
        Some(requested.supported_by(&self.state.info.capabilities))
    }

    async fn listen(&self, context: SubscriptionContext) -> Result<(), McpError> {
        let state = &self.state;
        state.client.note(context.request_context());
        let id = context.sink().id().clone();
        state.session.notifier.subscribe(context.sink().clone());
        // The stream's resource subscriptions hold downstream subscriptions while it is open.
        let uris = context
            .accepted()
            .resource_subscriptions
            .clone()
            .unwrap_or_default();
        let mut held = Vec::with_capacity(uris.len());
        for uri in uris {
            match state.subscribe(&uri).await {
                Ok(()) => held.push(uri),
                Err(err) => {
                    tracing::warn!(%uri, error = %err.message, "cannot subscribe downstream")
                }
            }
        }
        context.cancelled().await;
        state.session.notifier.unsubscribe(&id);
        for uri in held {
            if let Err(err) = state.unsubscribe(&uri).await {
                tracing::debug!(%uri, error = %err.message, "unsubscribing downstream failed");
            }
        }
        Ok(())
    }

    async fn list_prompts(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListPromptsResult, McpError> {
        self.state.wait_for_first_list().await;
        let prompts = self.state.list_prompts();
        Ok(ListPromptsResult::with_all_items(prompts))
    }

    async fn get_prompt(
        &self,
        request: GetPromptRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<GetPromptResponse, McpError> {
        let result = self.state.get_prompt(request, &context).await?;
        Ok(result.into())
    }

    async fn list_resources(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, McpError> {
        self.state.wait_for_first_list().await;
        let resources = self.state.list_resources();
        Ok(ListResourcesResult::with_all_items(resources))
    }

    async fn list_resource_templates(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListResourceTemplatesResult, McpError> {
        self.state.wait_for_first_list().await;
        let templates = self.state.list_resource_templates();
        Ok(ListResourceTemplatesResult::with_all_items(templates))
    }

    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, McpError> {
        let result = self.state.read_resource(request, &context).await?;
        Ok(result.into())
    }

    /// Handshake-era clients subscribe here; 2026-07-28 ones through `listen`.
    async fn subscribe(
        &self,
        request: SubscribeRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<(), McpError> {
        self.state.subscribe(&request.uri).await
    }

    async fn unsubscribe(
        &self,
        request: UnsubscribeRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<(), McpError> {
        self.state.unsubscribe(&request.uri).await
    }

    async fn complete(
        &self,
        request: CompleteRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CompleteResult, McpError> {
        self.state.complete(request, &context).await
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, McpError> {
        let state = &self.state;
        state.client.note(&context);
        let first = !state.session.exposed().listed;
        if first {
            state.wait_for_core().await;
        }
        let listed = {
            let catalog = state.registry.catalog();
            let mut exposed = state.session.exposed();
            if !exposed.listed {
                exposed.listed = true;
                let exposure = state.session.exposure();
                state.expose_pending(&catalog, &mut exposed.list, None, exposure);
            }
            exposed.list.snapshot()
        };
        state.session.notifier.listed();
        // Over stdio the transport writes the listed bytes into the answer; over HTTP rmcp
        // serializes typed tools, parsed back from those bytes. A handshake-era client is not
        // shown a non-object output schema (rmcp strips it from typed tools), so a list
        // holding one goes typed for it.
        let handshake_era = context
            .protocol_version()
            .is_none_or(|v| v.as_str() < ProtocolVersion::V_2026_07_28.as_str());
        let as_is = !handshake_era || listed.iter().all(|t| t.same_for_handshake_era());
        let tools: Vec<Tool> = match &state.session.tool_lists {
            Some(lists) if as_is => {
                lists.put(context.id.clone(), listed);
                Vec::new()
            }
            _ => listed.iter().map(|t| t.to_tool()).collect(),
        };
        Ok(ListToolsResult::with_all_items(tools))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, McpError> {
        let state = &self.state;
        state.client.note(&context);
        if let Some(request_state) = request.request_state.as_deref() {
            return state.client.resume(&request, request_state, &context).await;
        }
        match MetaTool::from_name(&request.name) {
            Some(tool) => Ok(meta::apply(state, tool, request, &context).await),
            None => state.call_direct(request, &context).await,
        }
    }
}

/// A downstream failure as the answer to a proxied request: the server's own error code and
/// message when it refused, so the client sees what it would directly; otherwise an
/// internal error naming the server and the cause.
fn downstream_error(err: DownstreamError) -> McpError {
    match err {
        DownstreamError::Service {
            message,
            code: Some(code),
            ..
        } => McpError::new(code, message, None),
        other => McpError::new(ErrorCode::INTERNAL_ERROR, other.to_string(), None),
    }
}

/// `now + after`, saturating: config bounds keep `after` small, and a deadline must never
/// be the reason a request panics (`startup_timeout_sec = 1.7e19` once did).
fn deadline_after(after: Duration) -> tokio::time::Instant {
    let now = tokio::time::Instant::now();
    now.checked_add(after)
        .unwrap_or_else(|| now + Duration::from_secs(86_400))
}
