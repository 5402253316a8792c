//! The MCP server the client talks to: a hand-written rmcp `ServerHandler`.
//!
//! It owns the meta tools, answers `tools/list` from the append-only [`ExposedList`], routes
//! every other call to its downstream server by qualified name, and tells the client when
//! the list grew. It is the only writer of the exposed list (DESIGN.md section 2). Locks are
//! std mutexes held for a few lines and never across `.await`; the lock order is catalog,
//! then index, then exposure.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, RwLock};
use std::time::Duration;

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, Implementation,
    InitializeRequestParams, InitializeResult, ListToolsResult, PaginatedRequestParams,
    ServerCapabilities, ServerConfig, SubscriptionFilter, Tool,
};
use rmcp::service::{RequestContext, SubscriptionContext};
use rmcp::{ErrorData as McpError, RoleServer, ServerHandler};
use tokio::sync::mpsc;

use crate::catalog::{Catalog, CatalogEntry, EntryId, ServerKey};
use crate::config::{AlwaysLoad, Config, Exposure};
use crate::downstream::{CallOptions, DownstreamError, Event, ServerHandle, ServerState};
use crate::exposure::{ExposedList, listed_form};
use crate::search::{SearchIndex, ToolDoc};

pub(crate) mod availability;
mod framing;
mod instructions;
pub mod meta;
mod notify;
mod serve;

pub use serve::serve;

use meta::{MetaTool, call_tool::Validator};
use notify::Notifier;

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
    ///
    /// # Errors
    /// When the search index cannot be created.
    pub fn new(
        config: Config,
        handles: Vec<ServerHandle>,
        events: mpsc::UnboundedReceiver<Event>,
    ) -> anyhow::Result<DeferServer> {
        let settings = &config.settings;
        let mut list = ExposedList::new();
        for meta in MetaTool::ALL {
            list.append(meta.definition(settings.exposure, settings.claude_always_load));
        }
        let info = ServerConfig::new(
            ServerCapabilities::builder()
                .enable_tools()
                .enable_tool_list_changed()
                .build(),
        )
        .with_server_info(Implementation::new(
            env!("CARGO_PKG_NAME"),
            env!("CARGO_PKG_VERSION"),
        ))
        .with_instructions(instructions::build(&config));
        let instructions = vec![None; config.servers.len()];
        let state = Arc::new(State {
            catalog: RwLock::new(Catalog::new(settings.max_name_length)),
            index: RwLock::new(SearchIndex::new()?),
            exposed: Mutex::new(Exposed {
                list,
                listed: false,
            }),
            instructions: Mutex::new(instructions),
            notifier: Notifier::new(),
            validators: Mutex::new(HashMap::new()),
            info,
            handles,
            config,
        });
        tokio::spawn(write_catalog(state.clone(), events));
        Ok(DeferServer { state })
    }
}

/// The one catalog writer: applies each server's list, then tells the client if its list
/// grew.
async fn write_catalog(state: Arc<State>, mut events: mpsc::UnboundedReceiver<Event>) {
    while let Some(event) = events.recv().await {
        // Everything already queued goes in one batch: one index commit for many servers
        // (200 servers joining at once were ingested one by one, ~60 ms each).
        let mut batch = vec![event];
        while let Ok(event) = events.try_recv() {
            batch.push(event);
        }
        // Indexing is CPU work (a tantivy commit, ~20 ms for a server joining a 10k catalog):
        // off the runtime's one thread, so calls keep flowing meanwhile.
        let applying = state.clone();
        let appended = tokio::task::spawn_blocking(move || applying.apply(batch)).await;
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
    /// Takes servers' current lists into the catalog and the index (one commit for the
    /// batch); appends what the exposure mode shows. Returns how many tools were appended to
    /// the client's list.
    fn apply(&self, batch: Vec<Event>) -> usize {
        let mut reindexed: Vec<(Vec<CatalogEntry>, String)> = Vec::with_capacity(batch.len());
        let mut servers = Vec::with_capacity(batch.len());
        for Event::Tools {
            server,
            tools,
            instructions,
        } in batch
        {
            if let Some((entries, text)) = self.update(server, tools, instructions) {
                reindexed.push((entries, text));
                servers.push(server);
            }
        }
        let docs = reindexed
            .iter()
            .flat_map(|(entries, text)| entries.iter().map(move |entry| search_doc(entry, text)));
        if let Err(err) = write(&self.index).upsert(docs) {
            tracing::error!(error = %err, "search index update failed");
        }
        let catalog = read(&self.catalog);
        let mut exposed = lock(&self.exposed);
        if !exposed.listed {
            return 0;
        }
        servers
            .into_iter()
            .map(|server| self.expose_pending(&catalog, &mut exposed.list, Some(server)))
            .sum()
    }

    /// Takes one server's list into the catalog; returns the entries to re-index and the
    /// server's search text, or `None` for a server that is not configured.
    fn update(
        &self,
        server: usize,
        tools: Vec<Tool>,
        instructions: Option<String>,
    ) -> Option<(Vec<CatalogEntry>, String)> {
        let Some(config) = self.config.servers.get(server) else {
            tracing::error!(server, "event for a server that is not configured");
            return None;
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
        let catalog = read(&self.catalog);
        let exposed = lock(&self.exposed);
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
        Some((reindex, server_text))
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
        let deadline = deadline_after(self.config.settings.core_wait);
        self.wait_for(|s| s.always_load != AlwaysLoad::None, deadline)
            .await;
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
        self.wait_for(|_| true, deadline_after(longest)).await;
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
    /// the server becomes an error result naming it (DESIGN.md invariant 4).
    async fn route(
        &self,
        id: EntryId,
        mut request: CallToolRequestParams,
        context: &RequestContext<RoleServer>,
    ) -> CallToolResult {
        let Some((server, original, gone)) = read(&self.catalog)
            .get(id)
            .map(|e| (e.server_index, e.original_name().to_owned(), e.gone))
        else {
            return meta::error_result("Unknown tool.");
        };
        let Some(handle) = self.handles.get(server).cloned() else {
            return meta::error_result("Unknown server.");
        };
        if gone {
            return meta::error_result(format!(
                "Server '{}' no longer offers the tool '{original}'. Use search_tools to find another.",
                handle.name()
            ));
        }
        request.name = original.into();
        if request.meta.is_none() && !context.meta.0.is_empty() {
            request.meta = Some(context.meta.clone());
        }
        let progress = context.meta.get_progress_token().map(|_| {
            let (tx, mut rx) = mpsc::unbounded_channel();
            let peer = context.peer.clone();
            tokio::spawn(async move {
                while let Some(param) = rx.recv().await {
                    if peer.notify_progress(param).await.is_err() {
                        break;
                    }
                }
            });
            tx
        });
        let options = CallOptions {
            cancel: context.ct.child_token(),
            progress,
        };
        match handle.call(request, options).await {
            Ok(result) => result,
            Err(err @ DownstreamError::Cancelled) => meta::error_result(err.to_string()),
            // A server's error message may quote a URL or a token back at us.
            Err(err) => meta::error_result(crate::redact::redact(&err.to_string())),
        }
    }

    async fn call_meta(
        &self,
        tool: MetaTool,
        request: CallToolRequestParams,
        context: &RequestContext<RoleServer>,
    ) -> CallToolResult {
        self.wait_for_servers().await;
        let arguments = request.arguments;
        let result = match tool {
            MetaTool::SearchTools => {
                meta::parse_arguments(tool, arguments).map(|a| self.search(&a))
            }
            MetaTool::SelectTools => match meta::parse_arguments(tool, arguments) {
                Ok(args) => Ok(self.select(&args).await),
                Err(result) => Err(result),
            },
            MetaTool::CallTool => match meta::parse_arguments(tool, arguments) {
                Ok(args) => Ok(self.call_by_name(args, context).await),
                Err(result) => Err(result),
            },
        };
        result.unwrap_or_else(|invalid| *invalid)
    }

    fn search(&self, args: &meta::search_tools::Args) -> CallToolResult {
        let catalog = read(&self.catalog);
        let index = read(&self.index);
        let exposed = lock(&self.exposed);
        let mut result = meta::search_tools::run(
            &catalog,
            &index,
            &exposed.list,
            args,
            self.config.settings.search_limit,
        );
        availability::annotate_search(
            &mut result,
            &availability::unavailable(&self.config, &self.handles),
        );
        result
    }

    /// Why `name` resolved to nothing (see [`availability::Unknown`]).
    fn unknown(&self, catalog: &Catalog, name: &str) -> availability::Unknown {
        availability::Unknown::of(&self.config, &self.handles, catalog, name)
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
                &|name| self.unknown(&catalog, name),
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
    ) -> CallToolResult {
        let resolved = {
            let catalog = read(&self.catalog);
            meta::call_tool::resolve(&catalog, &args.name, &|name| self.unknown(&catalog, name))
        };
        let (id, definition) = match resolved {
            Ok(found) => found,
            Err(message) => return meta::error_result(message),
        };
        let arguments = args.arguments.unwrap_or_default();
        if let Some(validator) = self.validator(id, &definition)
            && let Err(errors) = validator.check(&arguments)
        {
            return meta::error_result(meta::call_tool::mismatch(&args.name, &errors));
        }
        let mut inner = CallToolRequestParams::new(definition.name.clone());
        inner.arguments = Some(arguments);
        self.route(id, inner, context).await
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
        self.negotiate_initialize(&request)
    }

    fn accepted_subscription_filter(
        &self,
        requested: &SubscriptionFilter,
    ) -> Option<SubscriptionFilter> {
        Some(requested.supported_by(&self.state.info.capabilities))
    }

    async fn listen(&self, context: SubscriptionContext) -> Result<(), McpError> {
        let id = context.sink().id().clone();
        self.state.notifier.subscribe(context.sink().clone());
        context.cancelled().await;
        self.state.notifier.unsubscribe(&id);
        Ok(())
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, McpError> {
        let state = &self.state;
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
        if let Some(tool) = MetaTool::from_name(&request.name) {
            return Ok(state.call_meta(tool, request, &context).await.into());
        }
        let name = meta::clean_name(&request.name)
            .map_err(|message| McpError::invalid_params(message, None))?
            .to_owned();
        let mut id = read(&state.catalog).by_name(&name).map(|e| e.id);
        if id.is_none() {
            state.wait_for_servers().await;
            id = read(&state.catalog).by_name(&name).map(|e| e.id);
        }
        match id {
            Some(id) => Ok(state.route(id, request, &context).await.into()),
            None => {
                let message = state.unknown(&read(&state.catalog), &name).message(&name);
                Err(McpError::invalid_params(
                    format!("{message} Then select_tools or call_tool."),
                    None,
                ))
            }
        }
    }
}

/// `now + after`, saturating: config bounds keep `after` small, and a deadline must never
/// be the reason a request panics (`startup_timeout_sec = 1.7e19` once did).
fn deadline_after(after: Duration) -> tokio::time::Instant {
    let now = tokio::time::Instant::now();
    now.checked_add(after)
        .unwrap_or_else(|| now + Duration::from_secs(86_400))
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
