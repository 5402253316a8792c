//! The MCP server the client talks to: a hand-written rmcp `ServerHandler`.
//!
//! It owns the meta tools, answers `tools/list` from the append-only [`ExposedList`], routes
//! every other call to its downstream server by qualified name, and tells the client when
//! the list grew. Prompts, resources, templates and completions pass through as they would
//! directly ([`prompts`], [`resources`], [`completions`]); requests downstream servers send
//! their client go through [`client_requests`]. It is the only writer of the exposed lists
//! (DESIGN.md section 2). Locks are std mutexes held for a few lines and never across
//! `.await`; the lock order is catalog, then index, then exposure; the prompt and resource
//! locks are never held with another.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, RwLock};
use std::time::Duration;

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, CompleteRequestParams, CompleteResult,
    DiscoverResult, ErrorCode, GetPromptRequestParams, GetPromptResponse, Implementation,
    InitializeRequestParams, InitializeResult, ListPromptsResult, ListResourceTemplatesResult,
    ListResourcesResult, ListToolsResult, PaginatedRequestParams, PromptsCapability,
    ReadResourceRequestParams, ReadResourceResponse, ResourcesCapability, ServerCapabilities,
    ServerConfig, SubscribeRequestParams, SubscriptionFilter, Tool, UnsubscribeRequestParams,
};
use rmcp::service::{NotificationContext, RequestContext, SubscriptionContext};
use rmcp::{ErrorData as McpError, RoleServer, ServerHandler};
use tokio::sync::mpsc;

use crate::catalog::{Catalog, CatalogEntry, EntryId, ServerKey};
use crate::config::{AlwaysLoad, Config, Exposure};
use crate::downstream::{
    CallOptions, DownstreamError, Event, ProgressRoute, ServerHandle, ServerState,
};
use crate::exposure::{ExposedList, listed_form};
use crate::search::{SearchIndex, ToolDoc};

mod client_requests;
mod completions;
mod envelope;
mod instructions;
pub mod meta;
mod notify;
mod prompts;
mod resources;
mod serve;

pub use serve::serve;

use client_requests::ClientRequests;
use meta::{MetaTool, call_tool::Validator};
use notify::{Change, Notifier};
use prompts::Prompts;
use resources::Resources;

/// How often a wait for starting servers re-checks them.
const SETTLE_POLL: Duration = Duration::from_millis(5);

/// The handler rmcp drives; cheap to clone.
#[derive(Clone)]
pub struct DeferServer {
    state: Arc<State>,
}

struct State {
    config: Config,
    /// Built once from the config: `get_info` is called often and must not vary.
    info: ServerConfig,
    handles: Vec<ServerHandle>,
    catalog: RwLock<Catalog>,
    index: RwLock<SearchIndex>,
    exposed: Mutex<Exposed>,
    /// Per server, the `instructions` of its last handshake, which the index uses.
    instructions: Mutex<Vec<Option<String>>>,
    notifier: Notifier,
    validators: Mutex<HashMap<EntryId, CachedValidator>>,
    prompts: Mutex<Prompts>,
    resources: Mutex<Resources>,
    /// Requests downstream servers send to the client, and the client's capabilities.
    client: ClientRequests,
}

/// A compiled `inputSchema`, with the definition it was compiled from: a changed tool has
/// a new `Arc`, which makes the entry stale.
type CachedValidator = (Arc<Tool>, Arc<Validator>);

struct Exposed {
    list: ExposedList,
    /// The client has listed once: core and `all`-mode tools are appended on arrival from
    /// now on. Before that they wait, so the first list has them in config order.
    listed: bool,
}

impl DeferServer {
    /// Builds the handler and starts the one task that writes the catalog from `events`.
    /// `client` is the table the downstream connections ask the client through.
    ///
    /// # Errors
    /// When the search index cannot be created.
    pub(crate) fn new(
        config: Config,
        handles: Vec<ServerHandle>,
        events: mpsc::UnboundedReceiver<Event>,
        client: ClientRequests,
    ) -> anyhow::Result<DeferServer> {
        let settings = &config.settings;
        let mut list = ExposedList::new();
        for meta in MetaTool::ALL {
            list.append(meta.definition(settings.exposure, settings.claude_always_load));
        }
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
        let instructions = vec![None; config.servers.len()];
        let state = Arc::new(State {
            catalog: RwLock::new(Catalog::new(settings.max_name_length)),
            index: RwLock::new(SearchIndex::with_semantic(settings.semantic)?),
            exposed: Mutex::new(Exposed {
                list,
                listed: false,
            }),
            instructions: Mutex::new(instructions),
            notifier: Notifier::new(),
            validators: Mutex::new(HashMap::new()),
            prompts: Mutex::new(Prompts::new(settings.max_name_length)),
            resources: Mutex::new(Resources::new()),
            client,
            info,
            handles,
            config,
        });
        tokio::spawn(write_catalog(state.clone(), events));
        Ok(DeferServer { state })
    }
}

/// The one catalog writer: applies each server's lists, then tells the client if a list
/// grew; passes resource updates on.
async fn write_catalog(state: Arc<State>, mut events: mpsc::UnboundedReceiver<Event>) {
    while let Some(event) = events.recv().await {
        let (server, tools, instructions) = match event {
            Event::Tools {
                server,
                tools,
                instructions,
            } => (server, tools, instructions),
            Event::Prompts { server, prompts } => {
                if state.apply_prompts(server, prompts) > 0 {
                    state.notifier.changed(Change::Prompts).await;
                }
                continue;
            }
            Event::Resources {
                server,
                resources,
                templates,
            } => {
                let grew = lock(&state.resources).apply(server, resources, templates);
                if grew {
                    state.notifier.changed(Change::Resources).await;
                }
                continue;
            }
            Event::ResourceUpdated { server, uri } => {
                tracing::debug!(server, %uri, "resource updated");
                state.notifier.resource_updated(&uri).await;
                continue;
            }
        };
        // Indexing is CPU work (a tantivy commit, ~20 ms for a server joining a 10k catalog):
        // off the runtime's one thread, so calls keep flowing meanwhile.
        let applying = state.clone();
        let appended =
            tokio::task::spawn_blocking(move || applying.apply(server, tools, instructions)).await;
        match appended {
            Ok(0) => {}
            Ok(_) => {
                state.notifier.tools_changed().await;
            }
            Err(err) => tracing::error!(error = %err, "catalog update panicked"),
        }
    }
}

impl State {
    /// Takes one server's prompts; returns how many were appended to the client's list.
    fn apply_prompts(&self, server: usize, prompts: Vec<rmcp::model::Prompt>) -> usize {
        let Some(config) = self.config.servers.get(server) else {
            tracing::error!(server, "event for a server that is not configured");
            return 0;
        };
        let key = ServerKey {
            name: &config.name,
            prefix: &config.prefix,
            index: server,
        };
        lock(&self.prompts).apply(key, prompts)
    }

    /// Takes one server's current list into the catalog and the index; appends what the
    /// exposure mode shows. Returns how many tools were appended to the client's list.
    fn apply(&self, server: usize, tools: Vec<Tool>, instructions: Option<String>) -> usize {
        let Some(config) = self.config.servers.get(server) else {
            tracing::error!(server, "event for a server that is not configured");
            return 0;
        };
        let (server_text, new_instructions) = {
            let mut known = lock(&self.instructions);
            let changed = known[server] != instructions;
            known[server] = instructions;
            (config.search_text(known[server].as_deref()), changed)
        };
        // The catalog lock covers the update only; indexing (a tantivy commit) runs on copies
        // so searches and `tools/list` never wait for it.
        let (update, reindex) = {
            let mut catalog = write(&self.catalog);
            let update = catalog.update_server(
                ServerKey {
                    name: &config.name,
                    prefix: &config.prefix,
                    index: server,
                },
                tools,
            );
            // New handshake instructions change the text of every tool of the server.
            let reindex: Vec<CatalogEntry> = if new_instructions {
                catalog.server_entries(server).cloned().collect()
            } else {
                (update.added.iter().chain(&update.changed))
                    .filter_map(|&id| catalog.get(id).cloned())
                    .collect()
            };
            (update, reindex)
        };
        tracing::info!(
            server = %config.name,
            added = update.added.len(),
            changed = update.changed.len(),
            removed = update.removed.len(),
            "tools listed"
        );
        let docs = reindex.iter().map(|entry| search_doc(entry, &server_text));
        if let Err(err) = write(&self.index).upsert(docs) {
            tracing::error!(server = %config.name, error = %err, "search index update failed");
        }
        let catalog = read(&self.catalog);
        let mut exposed = lock(&self.exposed);
        for id in &update.changed {
            if let Some(entry) = catalog.get(*id)
                && exposed.list.contains(entry.name.as_str())
            {
                tracing::warn!(
                    server = %config.name,
                    tool = %entry.original_name(),
                    "a listed tool changed its definition downstream; the client keeps the one it has"
                );
            }
        }
        if !exposed.listed {
            return 0;
        }
        self.expose_pending(&catalog, &mut exposed.list, Some(server))
    }

    /// Appends, in config order, every tool the exposure mode shows that is not listed yet:
    /// core tools, and in `all` mode everything. `server` limits the walk to one server.
    fn expose_pending(
        &self,
        catalog: &Catalog,
        exposed: &mut ExposedList,
        server: Option<usize>,
    ) -> usize {
        let settings = &self.config.settings;
        let entries: Box<dyn Iterator<Item = _>> = match server {
            Some(index) => Box::new(catalog.server_entries(index)),
            None => Box::new(catalog.iter()),
        };
        let mut appended = 0;
        for entry in entries {
            if entry.gone || exposed.contains(entry.name.as_str()) {
                continue;
            }
            let shown = settings.exposure == Exposure::All
                || self.config.servers[entry.server_index].is_core(entry.original_name());
            if shown && exposed.append(listed_form(entry, settings.claude_always_load)) {
                appended += 1;
            }
        }
        appended
    }

    /// Waits, at most `core_wait`, until every server with core tools has listed them or
    /// failed: Codex drops tools that arrive after its first list (DESIGN.md 7a).
    async fn wait_for_core(&self) {
        let deadline = tokio::time::Instant::now() + self.config.settings.core_wait;
        self.wait_for(|s| s.always_load != AlwaysLoad::None, deadline)
            .await;
    }

    /// Waits, at most `core_wait`, until every server has listed or failed: a client's first
    /// `prompts/list` or `resources/list` comes right after the handshake, and is best in
    /// config order; servers that come later are appended, with list-changed.
    async fn wait_for_first_list(&self) {
        let deadline = tokio::time::Instant::now() + self.config.settings.core_wait;
        self.wait_for(|_| true, deadline).await;
    }

    /// Waits until every server has listed its tools or failed, at most the longest
    /// `startup_timeout`: a search or call that comes early should see what is coming.
    async fn wait_for_servers(&self) {
        let longest = self
            .config
            .enabled_servers()
            .map(|s| s.startup_timeout)
            .max()
            .unwrap_or_default();
        self.wait_for(|_| true, tokio::time::Instant::now() + longest)
            .await;
    }

    /// Waits until each enabled server that `which` picks has listed its tools once, or is
    /// not coming (failed, restarting, disabled), or `deadline` passes.
    async fn wait_for(
        &self,
        which: impl Fn(&crate::config::ServerConfig) -> bool,
        deadline: tokio::time::Instant,
    ) {
        let awaited: Vec<usize> = (self.config.servers.iter().enumerate())
            .filter(|(_, s)| s.enabled && which(s))
            .map(|(i, _)| i)
            .collect();
        loop {
            let pending = {
                let catalog = read(&self.catalog);
                awaited.iter().any(|&i| {
                    !catalog.has_listed(i)
                        && self.handles.get(i).is_some_and(|h| {
                            matches!(h.state(), ServerState::Starting | ServerState::Ready { .. })
                        })
                })
            };
            if !pending || tokio::time::Instant::now() >= deadline {
                return;
            }
            tokio::time::sleep(SETTLE_POLL).await;
        }
    }

    /// A compiled validator for the entry's current `inputSchema`, cached until it changes.
    fn validator(&self, id: EntryId, tool: &Arc<Tool>) -> Option<Arc<Validator>> {
        if let Some((cached_tool, validator)) = lock(&self.validators).get(&id)
            && Arc::ptr_eq(cached_tool, tool)
        {
            return Some(validator.clone());
        }
        match Validator::new(&tool.input_schema) {
            Ok(validator) => {
                let validator = Arc::new(validator);
                lock(&self.validators).insert(id, (tool.clone(), validator.clone()));
                Some(validator)
            }
            Err(err) => {
                tracing::warn!(tool = %tool.name, error = %err, "inputSchema does not compile; not validating");
                None
            }
        }
    }

    /// Sends one call to the tool's server and returns its result unchanged; a failure of
    /// the server becomes an error result naming it (DESIGN.md invariant 4). `client_tool`
    /// is the name the client called (a retry after `InputRequiredResult` must repeat it).
    async fn route(
        &self,
        id: EntryId,
        mut request: CallToolRequestParams,
        client_tool: &str,
        context: &RequestContext<RoleServer>,
    ) -> CallToolResponse {
        let Some((server, original, gone)) = read(&self.catalog)
            .get(id)
            .map(|e| (e.server_index, e.original_name().to_owned(), e.gone))
        else {
            return meta::error_result("Unknown tool.").into();
        };
        let Some(handle) = self.handles.get(server).cloned() else {
            return meta::error_result("Unknown server.").into();
        };
        if gone {
            return meta::error_result(format!(
                "Server '{}' no longer offers the tool '{original}'. Use search_tools to find another.",
                handle.name()
            ))
            .into();
        }
        request.name = original.into();
        // The client's `_meta` reaches rmcp in the context, not in the params.
        let client_meta = request.meta.take().unwrap_or_else(|| context.meta.clone());
        request.meta = envelope::forwarded_meta(&client_meta);
        let mut forwarding = None;
        let progress = client_meta.get_progress_token().map(|client_token| {
            let (tx, mut rx) = mpsc::unbounded_channel();
            let peer = context.peer.clone();
            forwarding = Some(tokio::spawn(async move {
                while let Some(param) = rx.recv().await {
                    if peer.notify_progress(param).await.is_err() {
                        break;
                    }
                }
            }));
            ProgressRoute { tx, client_token }
        });
        // The next round of a 2026-07-28 retry is not the downstream's business.
        request.input_responses = None;
        request.request_state = None;
        self.client
            .run(context, client_tool, move |origin, cancel| async move {
                let options = CallOptions {
                    cancel,
                    progress,
                    origin: Some(origin),
                };
                let mut result = match handle.call(request, options).await {
                    Ok(result) => result,
                    Err(err) => meta::error_result(err.to_string()),
                };
                envelope::mark_complete(&mut result.result_type);
                // The call has dropped its end of the channel: once the forwarder has
                // written the last progress, the result may follow. A client drops progress
                // that arrives after the result of its request (the Python SDK does).
                if let Some(forwarding) = forwarding
                    && let Err(err) = forwarding.await
                {
                    tracing::warn!(error = %err, "progress forwarding failed");
                }
                result
            })
            .await
    }

    async fn call_meta(
        &self,
        tool: MetaTool,
        request: CallToolRequestParams,
        context: &RequestContext<RoleServer>,
    ) -> CallToolResponse {
        self.wait_for_servers().await;
        let arguments = request.arguments;
        let result = match tool {
            MetaTool::SearchTools => {
                meta::parse_arguments(tool, arguments).map(|a| self.search(&a).into())
            }
            MetaTool::SelectTools => match meta::parse_arguments(tool, arguments) {
                Ok(args) => Ok(self.select(&args).await.into()),
                Err(result) => Err(result),
            },
            MetaTool::CallTool => match meta::parse_arguments(tool, arguments) {
                Ok(args) => Ok(self.call_by_name(args, context).await),
                Err(result) => Err(result),
            },
        };
        result.unwrap_or_else(|invalid| (*invalid).into())
    }

    fn search(&self, args: &meta::search_tools::Args) -> CallToolResult {
        let catalog = read(&self.catalog);
        let index = read(&self.index);
        let exposed = lock(&self.exposed);
        meta::search_tools::run(
            &catalog,
            &index,
            &exposed.list,
            args,
            self.config.settings.search_limit,
        )
    }

    /// Appends, notifies, then holds the result until the client has re-listed.
    async fn select(&self, args: &meta::select_tools::Args) -> CallToolResult {
        let settings = &self.config.settings;
        let seen = self.notifier.relist_count();
        let outcome = {
            let catalog = read(&self.catalog);
            let mut exposed = lock(&self.exposed);
            meta::select_tools::run(
                &catalog,
                &mut exposed.list,
                args,
                settings.exposure,
                settings.claude_always_load,
            )
        };
        if outcome.appended > 0 && self.notifier.tools_changed().await {
            self.notifier
                .hold_until_relist(seen, settings.relist_wait)
                .await;
        }
        outcome.result
    }

    /// `call_tool`: resolves the name, validates the arguments, routes the call.
    async fn call_by_name(
        &self,
        args: meta::call_tool::Args,
        context: &RequestContext<RoleServer>,
    ) -> CallToolResponse {
        let resolved = meta::call_tool::resolve(&read(&self.catalog), &args.name);
        let (id, definition) = match resolved {
            Ok(found) => found,
            Err(message) => return meta::error_result(message).into(),
        };
        let arguments = args.arguments.unwrap_or_default();
        if let Some(validator) = self.validator(id, &definition)
            && let Err(errors) = validator.check(&arguments)
        {
            return meta::error_result(meta::call_tool::mismatch(&args.name, &errors)).into();
        }
        let mut inner = CallToolRequestParams::new(definition.name.clone());
        inner.arguments = Some(arguments);
        self.route(id, inner, MetaTool::CallTool.name(), context)
            .await
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
        self.state.notifier.set_legacy_peer(context.peer.clone());
        self.state
            .client
            .initialized(context.peer.clone(), request.capabilities.clone());
        self.negotiate_initialize(&request)
    }

    async fn discover(
        &self,
        context: RequestContext<RoleServer>,
    ) -> Result<DiscoverResult, McpError> {
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
        for handle in &self.state.handles {
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
        state.notifier.subscribe(context.sink().clone());
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
        state.notifier.unsubscribe(&id);
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
        let prompts = lock(&self.state.prompts).list();
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
        let resources = lock(&self.state.resources).list();
        Ok(ListResourcesResult::with_all_items(resources))
    }

    async fn list_resource_templates(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListResourceTemplatesResult, McpError> {
        self.state.wait_for_first_list().await;
        let templates = lock(&self.state.resources).list_templates();
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
        let first = !lock(&state.exposed).listed;
        if first {
            state.wait_for_core().await;
        }
        let tools: Vec<Tool> = {
            let catalog = read(&state.catalog);
            let mut exposed = lock(&state.exposed);
            if !exposed.listed {
                exposed.listed = true;
                state.expose_pending(&catalog, &mut exposed.list, None);
            }
            exposed
                .list
                .snapshot()
                .iter()
                .map(|t| Tool::clone(t))
                .collect()
        };
        state.notifier.listed();
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
        if let Some(tool) = MetaTool::from_name(&request.name) {
            return Ok(state.call_meta(tool, request, &context).await);
        }
        let mut id = read(&state.catalog).by_name(&request.name).map(|e| e.id);
        if id.is_none() {
            state.wait_for_servers().await;
            id = read(&state.catalog).by_name(&request.name).map(|e| e.id);
        }
        match id {
            Some(id) => {
                let name = request.name.to_string();
                Ok(state.route(id, request, &name, &context).await)
            }
            None => Err(McpError::invalid_params(
                format!(
                    "Unknown tool '{}'. Use search_tools to find tools, then select_tools or call_tool.",
                    request.name
                ),
                None,
            )),
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

/// The search document of a catalog entry.
pub(crate) fn search_doc<'a>(entry: &'a CatalogEntry, server_text: &'a str) -> ToolDoc<'a> {
    ToolDoc {
        id: entry.id,
        server_index: entry.server_index,
        qualified_name: entry.name.as_str(),
        server: &entry.server,
        server_text,
        tool: &entry.tool,
    }
}

/// A panic while one of these locks is held is a bug, but serving the data as it stands
/// beats taking the whole session down with it.
pub(crate) fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

fn read<T>(lock: &RwLock<T>) -> std::sync::RwLockReadGuard<'_, T> {
    lock.read().unwrap_or_else(|poisoned| poisoned.into_inner())
}

fn write<T>(lock: &RwLock<T>) -> std::sync::RwLockWriteGuard<'_, T> {
    lock.write()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}
