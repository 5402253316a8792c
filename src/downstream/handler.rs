//! The rmcp `ClientHandler` of one downstream connection: what the server tells us unasked.
//!
//! `notifications/tools/list_changed` becomes a re-list request to the supervisor (which
//! owns the connection); `notifications/progress` is routed to the call whose downstream
//! progress token it carries, under the client's own token; `notifications/message` goes to
//! our stderr log, tagged with the server. (MCP logging is deprecated as of 2026-07-28, which
//! tells stdio servers to log to stderr instead; forwarding it to the client as a protocol
//! message would adopt what the spec asks new implementations not to.)

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use rmcp::ClientHandler;
use rmcp::model::{
    ClientCapabilities, ClientConfig, Implementation, ProgressNotificationParam, ProgressToken,
    ProtocolVersion,
};
// Deprecated by SEP-2577, yet servers built on earlier revisions still send it.
#[expect(deprecated, reason = "reading what pre-2026-07-28 servers send")]
use rmcp::model::{LoggingLevel, LoggingMessageNotificationParam};
use rmcp::service::{NotificationContext, RoleClient};
use tokio::sync::mpsc;

use super::ProgressRoute;

/// In-flight calls by the progress token rmcp put on the downstream request.
#[derive(Debug, Default)]
pub struct ProgressRoutes(Mutex<HashMap<ProgressToken, ProgressRoute>>);

impl ProgressRoutes {
    pub fn insert(&self, token: ProgressToken, route: ProgressRoute) {
        if let Ok(mut map) = self.0.lock() {
            map.insert(token, route);
        }
    }

    pub fn remove(&self, token: &ProgressToken) {
        if let Ok(mut map) = self.0.lock() {
            map.remove(token);
        }
    }

    fn forward(&self, mut params: ProgressNotificationParam) -> bool {
        let Ok(map) = self.0.lock() else {
            return false;
        };
        let Some(route) = map.get(&params.progress_token) else {
            return false;
        };
        params.progress_token = route.client_token.clone();
        let _ = route.tx.send(params);
        true
    }
}

pub struct Handler {
    pub server: Arc<str>,
    /// Wakes the supervisor to re-list; a full channel means a re-list is already due.
    pub relist: mpsc::Sender<()>,
    pub progress: Arc<ProgressRoutes>,
}

impl ClientHandler for Handler {
    fn get_info(&self) -> ClientConfig {
        // `initialize` offers the newest version that has it (DESIGN.md 12): rmcp's default,
        // LATEST (2026-07-28), has no handshake and is not a version to offer in one.
        ClientConfig::new(
            ClientCapabilities::default(),
            Implementation::new("mcp-defer", env!("CARGO_PKG_VERSION")),
        )
        .with_protocol_version(ProtocolVersion::LATEST_WITH_INITIALIZE)
    }

    async fn on_tool_list_changed(&self, _context: NotificationContext<RoleClient>) {
        tracing::debug!(server = %self.server, "downstream tools changed; re-listing");
        let _ = self.relist.try_send(());
    }

    async fn on_progress(
        &self,
        params: ProgressNotificationParam,
        _context: NotificationContext<RoleClient>,
    ) {
        if !self.progress.forward(params) {
            tracing::trace!(server = %self.server, "progress for no call in flight");
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
