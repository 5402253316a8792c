//! The thin rmcp `ServerHandler`: one [`DeferServer`] per client session, each method handing
//! its request to the module that owns the behaviour (meta tools, routing, passthrough).

use std::sync::Arc;
use std::time::Duration;

use rmcp::model::JsonObject;
#[expect(deprecated, reason = "handshake-era clients set a log level")]
use rmcp::model::SetLevelRequestParams;
use rmcp::model::{
    CallToolRequest, CallToolRequestParams, CallToolResponse, ClientRequest, CompleteRequestParams,
    CompleteResult, CustomRequest, CustomResult, DiscoverRequestMethod, DiscoverResult, ErrorCode,
    GetPromptRequestParams, GetPromptResponse, InitializeRequestParams, InitializeResult,
    ListPromptsResult, ListResourceTemplatesResult, ListResourcesResult, ListToolsResult,
    PaginatedRequestParams, ProtocolVersion, ReadResourceRequestParams, ReadResourceResponse,
    ServerConfig, ServerResult, SubscribeRequestParams, SubscriptionFilter, Tool,
    UnsubscribeRequestParams,
};
use rmcp::service::{NotificationContext, RequestContext, SubscriptionContext};
use rmcp::{ErrorData as McpError, RoleServer, ServerHandler};
use tokio::sync::mpsc;

use super::call_reply::CallReply;
use super::error::ServeError;
use super::forwarded::{completions, prompts, resources, set_level};
use super::meta::Relists;
use super::meta::validate::Validators;
use super::meta::{self, MetaTool};
use super::passthrough::ClientRequests;
use super::route::Pass;
use super::session::{Mode, Session};
use super::shared::Shared;
use super::stdio::ToolLists;
use super::thin_calls::{AnswerEra, Answered, ThinCall};
use super::view::{Servers, Unknown};
use super::{latency, publish, route, tasks};
use crate::catalog::EntryId;
use crate::config::{Config, ExposureMode};
use crate::downstream::{Event, ServerHandle};
use crate::exposure::ExposedList;
use crate::ingest::Registry;
use crate::search::usage::{Kind, Usage};

/// The handler rmcp drives: one client session over the shared state; cheap to clone.
/// Each request sees both, named where they are used (`self.shared`, `self.session`), so a
/// reader sees which one a line reads.
#[derive(Clone)]
pub(crate) struct DeferServer {
    shared: Arc<Shared>,
    session: Arc<Session>,
}

impl DeferServer {
    /// Builds the shared state and the one stdio session over it (see [`publish::start`]).
    ///
    /// # Errors
    /// When the search index cannot be created.
    pub(crate) fn new(
        config: Config,
        handles: Vec<ServerHandle>,
        events: mpsc::UnboundedReceiver<Event>,
        client: ClientRequests,
        tool_lists: ToolLists,
    ) -> Result<DeferServer, ServeError> {
        let shared = publish::start(config, handles, events, client)?;
        Ok(DeferServer::session(
            &shared,
            Some(Mode::Connection),
            Some(tool_lists),
        ))
    }

    /// A new session over `shared` ([`Shared::open_session`]); `mode` `None` lets its
    /// first request decide ([`Mode`]). With `tool_lists`, its transport writes
    /// `tools/list` answers from the listed bytes (stdio, [`super::stdio::Framed`]).
    pub(crate) fn session(
        shared: &Arc<Shared>,
        mode: Option<Mode>,
        tool_lists: Option<ToolLists>,
    ) -> DeferServer {
        DeferServer {
            shared: shared.clone(),
            session: shared.open_session(mode, tool_lists),
        }
    }

    /// The state every session of this one's shares.
    pub(crate) fn shared(&self) -> &Arc<Shared> {
        &self.shared
    }
}

impl ServerHandler for DeferServer {
    fn get_info(&self) -> ServerConfig {
        self.shared.info().clone()
    }

    async fn initialize(
        &self,
        request: InitializeRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<InitializeResult, McpError> {
        context.peer.set_peer_info(request.clone());
        self.session.bind_connection();
        let notifier = self.session.notifier();
        notifier.set_legacy_peer(context.peer.clone());
        notifier.client_named(&request.client_info.name);
        self.shared.client().initialized(
            context.peer.clone(),
            request.capabilities.clone(),
            self.session.log_level().clone(),
        );
        // Over Streamable HTTP, the session's plain calls skip rmcp's session worker.
        super::thin_calls::Opening::fill(self, &context);
        let mut result = self.negotiate_initialize(&request)?;
        // Handshake-era clients have MCP logging; servers' messages reach them
        // (`passthrough/logging.rs`).
        result.capabilities.logging = Some(JsonObject::default());
        Ok(result)
    }

    #[expect(deprecated, reason = "handshake-era clients set a log level")]
    async fn set_level(
        &self,
        request: SetLevelRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<(), McpError> {
        set_level::set_level(&self.shared, self.session.log_level(), request.level).await
    }

    async fn discover(
        &self,
        context: RequestContext<RoleServer>,
    ) -> Result<DiscoverResult, McpError> {
        // Refused, a 2026-07-28 client falls back to `initialize` (Claude Code, Copilot CLI
        // and Qwen Code do, DESIGN.md 7c): where tools load on request (`client_era =
        // "auto"` and a deferred connection), or always (`"handshake"`), when servers may
        // then ask it for roots and the like outside a call too.
        let settings = &self.shared.config().settings;
        if settings.refuses_discover(self.session.is_connection()) {
            return Err(McpError::method_not_found::<DiscoverRequestMethod>());
        }
        self.session.fix_list();
        // A 2026-07-28 client declares its capabilities here first.
        self.shared.client().note(&context);
        let mut info = self.get_info();
        // Deprecated in 2026-07-28 yet there: a request's `_meta` level asks for the log
        // messages of that request, which reach it on its own stream, over stdio and HTTP
        // alike (`passthrough/logging.rs`).
        info.capabilities.logging = Some(JsonObject::default());
        Ok(DiscoverResult::from_server_info(
            self.supported_protocol_versions().into_owned(),
            info,
        ))
    }

    /// Passed on to every connected server: the client's roots are theirs. Filesystem
    /// servers decide what they may touch from them, so a stale list is a safety matter.
    async fn on_roots_list_changed(&self, _context: NotificationContext<RoleServer>) {
        tracing::debug!("client roots changed; telling every server");
        for handle in self.shared.handles().iter() {
            handle.notify_roots_list_changed().await;
        }
    }

    fn accepted_subscription_filter(
        &self,
        requested: &SubscriptionFilter,
    ) -> Option<SubscriptionFilter> {
        Some(requested.supported_by(&self.shared.info().capabilities))
    }

    async fn listen(&self, context: SubscriptionContext) -> Result<(), McpError> {
        self.shared.client().note(context.request_context());
        let id = context.sink().id().clone();
        let notifier = self.session.notifier();
        notifier.subscribe(context.sink().clone());
        // The stream's resource subscriptions hold downstream subscriptions while it is open.
        let uris = context
            .accepted()
            .resource_subscriptions
            .clone()
            .unwrap_or_default();
        let mut held = Vec::with_capacity(uris.len());
        for uri in uris {
            match resources::subscribe(&self.shared, self.session.holds(), &uri).await {
                Ok(()) => held.push(uri),
                Err(err) => {
                    tracing::warn!(%uri, error = %err.message, "cannot subscribe downstream")
                }
            }
        }
        context.cancelled().await;
        notifier.unsubscribe(&id);
        for uri in held {
            if let Err(err) = resources::unsubscribe(&self.shared, self.session.holds(), &uri).await
            {
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
        self.shared.wait_for_first_list().await;
        let prompts = (self.session.prompts()).list(&self.shared.registry().prompts());
        Ok(ListPromptsResult::with_all_items(prompts))
    }

    async fn get_prompt(
        &self,
        request: GetPromptRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<GetPromptResponse, McpError> {
        let result = prompts::get(&self.shared, request, &context).await?;
        Ok(result.into())
    }

    async fn list_resources(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, McpError> {
        self.shared.wait_for_first_list().await;
        let resources = (self.session.resources()).list(&self.shared.registry().resources());
        Ok(ListResourcesResult::with_all_items(resources))
    }

    async fn list_resource_templates(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListResourceTemplatesResult, McpError> {
        self.shared.wait_for_first_list().await;
        let catalog = self.shared.registry().resources();
        let templates = self.session.resources().list_templates(&catalog);
        Ok(ListResourceTemplatesResult::with_all_items(templates))
    }

    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, McpError> {
        let result = resources::read(&self.shared, request, &context).await?;
        Ok(result.into())
    }

    /// Handshake-era clients subscribe here; 2026-07-28 ones through `listen`.
    async fn subscribe(
        &self,
        request: SubscribeRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<(), McpError> {
        resources::subscribe(&self.shared, self.session.holds(), &request.uri).await
    }

    async fn unsubscribe(
        &self,
        request: UnsubscribeRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<(), McpError> {
        resources::unsubscribe(&self.shared, self.session.holds(), &request.uri).await
    }

    async fn complete(
        &self,
        request: CompleteRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CompleteResult, McpError> {
        completions::complete(&self.shared, request, &context).await
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, McpError> {
        let (shared, session) = (&self.shared, &self.session);
        shared.client().note(&context);
        let first = !session.exposed().listed;
        if first {
            shared.wait_for_core().await;
        }
        let listed = {
            let config = shared.config();
            let catalog = shared.registry().catalog();
            let mut exposed = session.exposed();
            if !exposed.listed {
                exposed.listed = true;
                let exposure = session.exposure();
                publish::expose_pending(&config, &catalog, &mut exposed.list, None, exposure);
            }
            exposed.list.snapshot()
        };
        session.notifier().listed();
        // Over stdio the transport writes the listed bytes into the answer; over HTTP rmcp
        // serializes typed tools, parsed back from those bytes. A handshake-era client is not
        // shown a non-object output schema (rmcp strips it from typed tools), so a list
        // holding one goes typed for it.
        let handshake_era = context
            .protocol_version()
            .is_none_or(|v| v.as_str() < ProtocolVersion::V_2026_07_28.as_str());
        let as_is = !handshake_era || listed.iter().all(|t| t.same_for_handshake_era());
        let tools: Vec<Tool> = match session.tool_lists() {
            Some(lists) if as_is => {
                lists.put(context.id.clone(), listed);
                Vec::new()
            }
            Some(_) => listed.iter().map(|t| t.to_tool()).collect(),
            // Streamable HTTP: `http/tasks.rs` moves the marked fields back.
            None => listed.iter().map(|t| t.to_tool_marked()).collect(),
        };
        Ok(ListToolsResult::with_all_items(tools))
    }

    /// 2025-11-25 tasks (`tasks.rs`); any other method is unknown.
    async fn on_custom_request(
        &self,
        request: CustomRequest,
        context: RequestContext<RoleServer>,
    ) -> Result<CustomResult, McpError> {
        match tasks::answer(&self.shared, self.session.tasks(), &request, &context).await {
            Some(answer) => answer,
            None => Err(McpError::new(
                ErrorCode::METHOD_NOT_FOUND,
                request.method,
                None,
            )),
        }
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, McpError> {
        let (shared, session) = (&self.shared, &self.session);
        self.begin_call(&context).await;
        if let Some(request_state) = request.request_state.as_deref() {
            return shared
                .client()
                .resume(&request, request_state, &context)
                .await;
        }
        match MetaTool::from_name(&request.name) {
            Some(tool) => {
                let _timer = (tool == MetaTool::SearchTools).then(|| latency::SEARCH.start());
                Ok(meta::apply(self, tool, request, &context).await)
            }
            None => route::call_direct(shared, session, request, &context, Pass::Typed)
                .await
                .map(CallReply::into_response),
        }
    }
}

impl DeferServer {
    /// What every `tools/call` notes first: the client's capabilities in its envelope, the
    /// session's searches to learn from, tools approved since.
    async fn begin_call(&self, context: &RequestContext<RoleServer>) {
        self.shared.client().note(context);
        (self.session.usage()).learn_as(self.shared.learning(), context);
        publish::lift_approved(&self.shared).await;
    }
}

/// A call on the thin path: a direct call of a downstream tool has its answer passed on as
/// the server wrote it where it can be, with what `Service::handle_request` checks and
/// changes for such a call done here ([`AnswerEra`]). Meta tools, and requests whose
/// envelope rmcp must judge, go through rmcp's dispatch.
impl ThinCall for DeferServer {
    async fn call_thin(
        &self,
        params: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Answered {
        let era = AnswerEra::of(&context, &ServerHandler::supported_protocol_versions(self));
        let Some(era) = era.filter(|_| MetaTool::from_name(&params.name).is_none()) else {
            let request = ClientRequest::CallToolRequest(CallToolRequest::new(params));
            let answer = rmcp::service::Service::handle_request(self, request, context).await;
            return Answered::Typed(answer);
        };
        self.begin_call(&context).await;
        let (shared, session) = (&self.shared, &self.session);
        match route::call_direct(shared, session, params, &context, Pass::Bytes).await {
            Ok(CallReply::Passed(answer)) => Answered::Passed(answer, era),
            Ok(CallReply::Response(response)) => {
                let mut result = ServerResult::from(response);
                if era == AnswerEra::Handshake {
                    result.strip_result_type_for_legacy_peer();
                    result.strip_non_object_output_for_legacy_peer();
                }
                Answered::Typed(Ok(result))
            }
            Err(error) => Answered::Typed(Err(error)),
        }
    }
}

/// What a meta tool sees of a request ([`meta::Context`]): each method hands over to the
/// shared state, the session or the route.
impl meta::Context for DeferServer {
    fn registry(&self) -> &Arc<Registry> {
        self.shared.registry()
    }

    fn view(&self) -> Servers {
        self.shared.view()
    }

    fn validators(&self) -> &Validators {
        self.shared.validators()
    }

    fn exposure(&self) -> ExposureMode {
        self.session.exposure()
    }

    fn with_exposed<R>(&self, f: impl FnOnce(&mut ExposedList) -> R) -> R {
        f(&mut self.session.exposed().list)
    }

    fn reload_problem(&self) -> Option<String> {
        self.shared.reload_problem()
    }

    fn starting_servers(&self) -> Vec<String> {
        self.shared.starting_servers()
    }

    fn search_deadlines(&self) -> meta::SearchDeadlines {
        self.shared.search_deadlines()
    }

    async fn wait_for_arrival(&self, before: &[String], deadline: tokio::time::Instant) {
        self.shared.wait_for_arrival(before, deadline).await;
    }

    async fn wait_for_servers_unless(&self, found: impl Fn() -> bool) {
        self.shared.wait_for_servers_unless(found).await;
    }

    async fn explain_unknown(&self, names: Vec<String>) -> Vec<Unknown> {
        self.shared.explain_unknown(names).await
    }

    async fn route(
        &self,
        id: EntryId,
        request: CallToolRequestParams,
        client_tool: &str,
        context: &RequestContext<RoleServer>,
    ) -> CallToolResponse {
        let level = self.session.log_level();
        route::route(
            &self.shared,
            level,
            id,
            request,
            client_tool,
            context,
            Pass::Typed,
        )
        .await
        .into_response()
    }

    fn relist_count(&self) -> u64 {
        self.session.notifier().relist_count()
    }

    async fn tools_changed(&self) -> bool {
        self.session.notifier().tools_changed().await
    }

    async fn hold_until_relist(&self, seen: u64, max: Duration) -> bool {
        self.session.notifier().hold_until_relist(seen, max).await
    }

    fn relists(&self) -> Relists {
        self.session.notifier().relists()
    }

    fn note_search(&self, query: &str, listed: Vec<String>) {
        (self.session.usage()).note_search(self.shared.learning(), query, listed);
    }

    fn note_choice(&self, name: &str, kind: Kind) {
        (self.session.usage()).note_choice(self.shared.learning(), name, kind, true);
    }

    fn usage(&self) -> Option<Arc<Usage>> {
        self.session.usage().store(self.shared.learning())
    }
}
