//! The rmcp `ClientHandler` of one downstream connection: what the server tells us unasked.
//!
//! `notifications/{tools,prompts,resources}/list_changed` becomes a re-list request to the
//! supervisor (which owns the connection); `notifications/resources/updated` goes to the
//! catalog writer as an [`Event`], which tells the client; `notifications/progress` was
//! routed to its call as it was read (`progress.rs`); `notifications/message` was handed
//! to the client as it was read (`logging.rs`) and goes to our stderr log here,
//! tagged with the server.
//!
//! Requests the server sends its client (sampling, elicitation, roots) go to mcp-defer's
//! client through the [`ClientLink`], tagged with the proxied call they came during; the
//! handshake declares exactly the client's capabilities for them.

use std::sync::Arc;

use rmcp::ClientHandler;
use rmcp::model::{
    ClientConfig, ClientResult, CustomNotification, ElicitRequest, ElicitRequestParams,
    ElicitResult, ErrorData, Implementation, InputRequest, ProgressNotificationParam,
    ProtocolVersion, ResourceUpdatedNotificationParam,
};
// Sampling and roots are deprecated by SEP-2577, yet handshake-era servers use them.
#[expect(deprecated, reason = "answering what pre-2026-07-28 servers ask")]
use rmcp::model::{
    CreateMessageRequest, CreateMessageRequestParams, CreateMessageResult, ListRootsRequest,
    ListRootsResult,
};
// Deprecated by SEP-2577, yet servers built on earlier revisions still send it.
#[expect(deprecated, reason = "reading what pre-2026-07-28 servers send")]
use rmcp::model::{LoggingLevel, LoggingMessageNotificationParam};
use rmcp::service::{InboundStreamOrigin, NotificationContext, RequestContext, RoleClient};
use tokio::sync::mpsc;

use super::Event;
use super::upstream::{ClientLink, InFlight, input_method};
use crate::protocol::method;

/// Which of a server's lists changed and must be fetched again.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(super) enum Relist {
    Tools,
    Prompts,
    Resources,
}

pub(super) struct Handler {
    pub server: Arc<str>,
    /// The server's position in the config, for the events it sends.
    pub index: usize,
    /// Wakes the supervisor to re-list; it takes every pending kind at once, so a burst of
    /// notifications costs one re-list per kind.
    pub relist: mpsc::UnboundedSender<Relist>,
    pub events: mpsc::UnboundedSender<Event>,
    /// The client's capabilities to declare and the way to ask it.
    pub link: ClientLink,
    /// The proxied calls in flight on this connection.
    pub calls: Arc<InFlight>,
    /// Counted before the re-list is asked for, so a call never misses a change.
    pub tool_changes: super::handle::ToolChanges,
}

impl Handler {
    /// Carries one request of the server to mcp-defer's client and returns its answer.
    async fn ask(
        &self,
        request: InputRequest,
        context: RequestContext<RoleClient>,
    ) -> Result<ClientResult, ErrorData> {
        let call = self
            .calls
            .origin(context.extensions.get::<InboundStreamOrigin>());
        let what = input_method(&request);
        tracing::debug!(server = %self.server, method = what, ?call, "server asks the client");
        self.link
            .upstream()
            .ask(request, call, context.ct.clone())
            .await
    }
}

/// The error for a client answer of the wrong kind (a broken client).
fn unexpected(what: &str) -> ErrorData {
    ErrorData::internal_error(
        format!("the client answered {what} with a result of another kind"),
        None,
    )
}

impl ClientHandler for Handler {
    fn get_info(&self) -> ClientConfig {
        // `initialize` offers the newest version that has it (docs/design.md section 12): rmcp's default,
        // LATEST (2026-07-28), has no handshake and is not a version to offer in one.
        ClientConfig::new(
            self.link.capabilities().clone(),
            Implementation::new("mcp-defer", env!("CARGO_PKG_VERSION")),
        )
        .with_protocol_version(ProtocolVersion::LATEST_WITH_INITIALIZE)
    }

    #[expect(
        deprecated,
        reason = "sampling is deprecated by SEP-2577, yet servers use it"
    )]
    async fn create_message(
        &self,
        params: CreateMessageRequestParams,
        context: RequestContext<RoleClient>,
    ) -> Result<CreateMessageResult, ErrorData> {
        let request = InputRequest::CreateMessage(CreateMessageRequest::new(params));
        match self.ask(request, context).await? {
            ClientResult::CreateMessageResult(result) => Ok(*result),
            _ => Err(unexpected(method::SAMPLING_CREATE_MESSAGE)),
        }
    }

    async fn create_elicitation(
        &self,
        params: ElicitRequestParams,
        context: RequestContext<RoleClient>,
    ) -> Result<ElicitResult, ErrorData> {
        let request = InputRequest::Elicitation(ElicitRequest::new(params));
        match self.ask(request, context).await? {
            ClientResult::ElicitResult(result) => Ok(result),
            _ => Err(unexpected(method::ELICITATION_CREATE)),
        }
    }

    #[expect(
        deprecated,
        reason = "roots are deprecated by SEP-2577, yet servers use them"
    )]
    async fn list_roots(
        &self,
        context: RequestContext<RoleClient>,
    ) -> Result<ListRootsResult, ErrorData> {
        let request = InputRequest::ListRoots(ListRootsRequest::default());
        match self.ask(request, context).await? {
            ClientResult::ListRootsResult(result) => Ok(result),
            _ => Err(unexpected(method::ROOTS_LIST)),
        }
    }

    async fn on_tool_list_changed(&self, _context: NotificationContext<RoleClient>) {
        tracing::debug!(server = %self.server, "downstream tools changed; re-listing");
        (self.tool_changes).fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        let _ = self.relist.send(Relist::Tools);
    }

    async fn on_prompt_list_changed(&self, _context: NotificationContext<RoleClient>) {
        tracing::debug!(server = %self.server, "downstream prompts changed; re-listing");
        let _ = self.relist.send(Relist::Prompts);
    }

    async fn on_resource_list_changed(&self, _context: NotificationContext<RoleClient>) {
        tracing::debug!(server = %self.server, "downstream resources changed; re-listing");
        let _ = self.relist.send(Relist::Resources);
    }

    async fn on_resource_updated(
        &self,
        params: ResourceUpdatedNotificationParam,
        _context: NotificationContext<RoleClient>,
    ) {
        let _ = self.events.send(Event::ResourceUpdated {
            server: self.index,
            uri: params.uri,
        });
    }

    /// Progress for a call in flight was routed as it was read (`progress.rs`); what
    /// reaches here belongs to no call.
    async fn on_progress(
        &self,
        _params: ProgressNotificationParam,
        _context: NotificationContext<RoleClient>,
    ) {
        tracing::trace!(server = %self.server, "progress for no call in flight");
    }

    /// A 2025-11-25 task's status (SEP-1686; rmcp knows only 2026-07-28's
    /// `notifications/tasks`) goes to the client; other unknown notifications are dropped.
    async fn on_custom_notification(
        &self,
        notification: CustomNotification,
        _context: NotificationContext<RoleClient>,
    ) {
        if notification.method == method::TASKS_STATUS
            && let Some(task) = notification.params
        {
            self.link.upstream().task_status(&self.server, task).await;
        }
    }

    #[expect(deprecated, reason = "reading what pre-2026-07-28 servers send")]
    async fn on_logging_message(
        &self,
        params: LoggingMessageNotificationParam,
        _context: NotificationContext<RoleClient>,
    ) {
        let message = match &params.data {
            serde_json::Value::String(text) => text.clone(),
            other => other.to_string(),
        };
        // The supervisor's `downstream{server=...}` span already names the server.
        let logger = params.logger.as_deref().unwrap_or("");
        match params.level {
            LoggingLevel::Debug => tracing::debug!(logger, "{message}"),
            LoggingLevel::Info | LoggingLevel::Notice => {
                tracing::info!(logger, "{message}");
            }
            LoggingLevel::Warning => tracing::warn!(logger, "{message}"),
            LoggingLevel::Error
            | LoggingLevel::Critical
            | LoggingLevel::Alert
            | LoggingLevel::Emergency => tracing::error!(logger, "{message}"),
        }
    }
}
