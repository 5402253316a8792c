//! The rmcp `ClientHandler` of one downstream connection: what the server tells us unasked.
//!
//! `notifications/tools/list_changed` becomes a re-list request to the supervisor (which
//! owns the connection); `notifications/progress` is routed to the call whose downstream
//! progress token it carries, under the client's own token.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use rmcp::ClientHandler;
use rmcp::model::{
    ClientCapabilities, ClientConfig, Implementation, ProgressNotificationParam, ProgressToken,
};
use rmcp::service::{NotificationContext, RoleClient};
use tokio::sync::mpsc;

/// Where one in-flight call's progress goes.
#[derive(Debug)]
pub struct ProgressRoute {
    pub tx: mpsc::UnboundedSender<ProgressNotificationParam>,
    /// The token the client gave us; forwarded params carry it instead of ours.
    pub client_token: Option<ProgressToken>,
}

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
        if let Some(token) = &route.client_token {
            params.progress_token = token.clone();
        }
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
        ClientConfig::new(
            ClientCapabilities::default(),
            Implementation::new("mcp-defer", env!("CARGO_PKG_VERSION")),
        )
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
}
