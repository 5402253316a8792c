//! MCP logging through mcp-defer, the downstream half (docs/design.md section 12).
//!
//! A handshake-era client sets one level with `logging/setLevel` and reads each server's
//! `notifications/message`. Behind mcp-defer the servers are many, so:
//! - [`ServerHandle::set_log_level`] asks one connected server that declares `logging`
//!   to log at the client's level; a server that connects later is asked in its handshake
//!   ([`apply_level`]), so the level holds across lazy starts and restarts;
//! - [`LogTap`] (a [`Tap`](super::tap::Tap) hook) hands every `notifications/message` a
//!   server sends to the [`Upstream`]
//!   as it is read off the connection, with the proxied call it came during. Read order
//!   is kept: rmcp handles notifications on tasks of their own, while the answer to a
//!   call goes straight to its caller, so a log sent right before a result could reach
//!   the client after it (the same race `progress.rs` closes for progress). The tap waits
//!   until the client's transport took the message before it reads the next one.
//!
//! The message also still reaches the connection's handler, which writes it to our own
//! stderr log under the server's span, as it did before logging was forwarded.
//!
//! [`Upstream`]: super::Upstream
#![expect(
    deprecated,
    reason = "MCP logging is deprecated by SEP-2577, yet handshake-era servers and clients use it"
)]

use std::sync::Arc;
use std::time::Duration;

use rmcp::RoleClient;
use rmcp::model::{
    JsonRpcMessage, JsonRpcNotification, LoggingLevel, ServerNotification, SetLevelRequestParams,
};
use rmcp::service::{InboundStreamOrigin, RxJsonRpcMessage};

use super::ServerHandle;
use super::tap::Hook;
use super::upstream::{ClientLink, InFlight};

/// Longest a `logging/setLevel` waits for one server: the client's own `setLevel` waits
/// for every server, and a hung one must not hold it.
const SET_LEVEL_TIMEOUT: Duration = Duration::from_secs(5);

impl ServerHandle {
    /// Asks the server to log at `level`, when it is connected and declared `logging`
    /// (a 2026-07-28-only server has no `logging/setLevel`). A failure is logged, not
    /// returned: the client's level is set either way, and the server keeps its own.
    pub async fn set_log_level(&self, level: LoggingLevel) {
        let Some(live) = self.live() else { return };
        set_level(&live.peer, &self.name, level).await;
    }
}

/// Asks a server that just connected to log at the client's level, when the client set one.
pub(super) async fn apply_level(peer: &rmcp::Peer<RoleClient>, server: &str, link: &ClientLink) {
    if let Some(level) = link.upstream().log_level() {
        set_level(peer, server, level).await;
    }
}

async fn set_level(peer: &rmcp::Peer<RoleClient>, server: &str, level: LoggingLevel) {
    let declares_logging = peer
        .peer_info()
        .is_some_and(|info| info.capabilities.logging.is_some());
    if !declares_logging {
        return;
    }
    let asked = peer.set_level(SetLevelRequestParams::new(level));
    match tokio::time::timeout(SET_LEVEL_TIMEOUT, asked).await {
        Ok(Ok(())) => tracing::debug!(server, ?level, "server log level set"),
        Ok(Err(err)) => tracing::warn!(server, error = %err, "logging/setLevel refused"),
        Err(_) => tracing::warn!(
            server,
            "logging/setLevel unanswered after {}s",
            SET_LEVEL_TIMEOUT.as_secs()
        ),
    }
}

/// The hook that hands each `notifications/message` to the client as it is read (see the
/// module doc); every message still goes on to rmcp.
pub(super) struct LogTap {
    server: Arc<str>,
    link: ClientLink,
    calls: Arc<InFlight>,
}

impl LogTap {
    pub(super) fn new(server: Arc<str>, link: ClientLink, calls: Arc<InFlight>) -> LogTap {
        LogTap {
            server,
            link,
            calls,
        }
    }
}

impl Hook for LogTap {
    async fn received(
        &mut self,
        message: RxJsonRpcMessage<RoleClient>,
    ) -> Option<RxJsonRpcMessage<RoleClient>> {
        if let JsonRpcMessage::Notification(JsonRpcNotification {
            notification: ServerNotification::LoggingMessageNotification(log),
            ..
        }) = &message
        {
            // Over Streamable HTTP the stream it came on names the call; over stdio
            // nothing does, and the newest call in flight is taken (`InFlight::origin`).
            let call = self
                .calls
                .origin(log.extensions.get::<InboundStreamOrigin>());
            self.link
                .upstream()
                .log(&self.server, log.params.clone(), call)
                .await;
        }
        Some(message)
    }
}
