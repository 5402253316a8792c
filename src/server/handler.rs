//! The thin rmcp `ServerHandler`: one [`DeferServer`] per client session, each method handing
//! its request to the module that owns the behaviour (meta tools, routing, passthrough).

use std::sync::Arc;

use rmcp::model::JsonObject;
#[expect(deprecated, reason = "handshake-era clients set a log level")]
use rmcp::model::SetLevelRequestParams;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CompleteRequestParams, CompleteResult, CustomRequest,
    CustomResult, DiscoverRequestMethod, DiscoverResult, ErrorCode, GetPromptRequestParams,
    GetPromptResponse, InitializeRequestParams, InitializeResult, ListPromptsResult,
    ListResourceTemplatesResult, ListResourcesResult, ListToolsResult, PaginatedRequestParams,
    ProtocolVersion, ReadResourceRequestParams, ReadResourceResponse, ServerConfig,
    SubscribeRequestParams, SubscriptionFilter, Tool, UnsubscribeRequestParams,
};
use rmcp::service::{NotificationContext, RequestContext, SubscriptionContext};
use rmcp::{ErrorData as McpError, RoleServer, ServerHandler};
use tokio::sync::mpsc;

use super::meta::{self, MetaTool};
use super::passthrough::ClientRequests;
use super::session::{Mode, Session};
use super::shared::Shared;
use super::stdio::ToolLists;
use super::{ServeError, State};
use crate::config::Config;
use crate::downstream::{Event, ServerHandle};
use crate::sync::lock;

/// The handler rmcp drives: one client session over the shared state; cheap to clone.
#[derive(Clone)]
pub(crate) struct DeferServer {
    pub(super) state: State,
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
    ) -> Result<DeferServer, ServeError> {
        let shared = Shared::new(config, handles, events, client)?;
        Ok(DeferServer::session(
            &shared,
            Some(Mode::Connection),
            Some(tool_lists),
        ))
    }

    /// A new session over `shared`; `mode` `None` lets its first request decide
    /// ([`session::Mode`]). With `tool_lists`, its transport writes `tools/list` answers
    /// from the listed bytes (stdio, `stdio::Framed`).
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

impl ServerHandler for DeferServer {
    fn get_info(&self) -> ServerConfig {
        self.state.shared.info.clone()
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
            .session
            .notifier
            .client_named(&request.client_info.name);
        self.state.shared.client.initialized(
            context.peer.clone(),
            request.capabilities.clone(),
            self.state.session.log_level.clone(),
        );
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
        self.state.set_log_level(request.level).await
    }

    async fn discover(
        &self,
        context: RequestContext<RoleServer>,
    ) -> Result<DiscoverResult, McpError> {
        // Refused, a 2026-07-28 client falls back to `initialize` (Claude Code, Copilot CLI
        // and Qwen Code do, DESIGN.md 7c): where tools load on request (`client_era =
        // "auto"` and a deferred connection), or always (`"handshake"`), when servers may
        // then ask it for roots and the like outside a call too.
        let settings = &self.state.shared.config().settings;
        if settings.refuses_discover(self.state.session.is_connection()) {
            return Err(McpError::method_not_found::<DiscoverRequestMethod>());
        }
        self.state.session.fix_list();
        // A 2026-07-28 client declares its capabilities here first.
        self.state.shared.client.note(&context);
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
        for handle in self.state.shared.handles().iter() {
            handle.notify_roots_list_changed().await;
        }
    }

    fn accepted_subscription_filter(
        &self,
        requested: &SubscriptionFilter,
    ) -> Option<SubscriptionFilter> {
        Some(requested.supported_by(&self.state.shared.info.capabilities))
    }

    async fn listen(&self, context: SubscriptionContext) -> Result<(), McpError> {
        let state = &self.state;
        state.shared.client.note(context.request_context());
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
        self.state.shared.wait_for_first_list().await;
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
        self.state.shared.wait_for_first_list().await;
        let resources = self.state.list_resources();
        Ok(ListResourcesResult::with_all_items(resources))
    }

    async fn list_resource_templates(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListResourceTemplatesResult, McpError> {
        self.state.shared.wait_for_first_list().await;
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
        state.shared.client.note(&context);
        let first = !state.session.exposed().listed;
        if first {
            state.shared.wait_for_core().await;
        }
        let listed = {
            let catalog = state.shared.registry.catalog();
            let mut exposed = state.session.exposed();
            if !exposed.listed {
                exposed.listed = true;
                let exposure = state.session.exposure();
                state
                    .shared
                    .expose_pending(&catalog, &mut exposed.list, None, exposure);
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
        match self.state.task_request(&request, &context).await {
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
        let state = &self.state;
        state.shared.client.note(&context);
        state.learn_as(&context);
        super::arrivals::lift_approved(&state.shared).await;
        if let Some(request_state) = request.request_state.as_deref() {
            return state
                .shared
                .client
                .resume(&request, request_state, &context)
                .await;
        }
        match MetaTool::from_name(&request.name) {
            Some(tool) => Ok(meta::apply(state, tool, request, &context).await),
            None => state.call_direct(request, &context).await,
        }
    }
}
