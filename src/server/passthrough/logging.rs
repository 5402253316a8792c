//! MCP logging through mcp-defer, the client half (docs/design.md section 12).
//!
//! A handshake-era client is offered the `logging` capability, as each server offers it
//! directly. Its `logging/setLevel` (`set_level.rs`) is the session's level ([`LogLevel`])
//! and goes on to every connected server that declares `logging`; a server that connects later is asked
//! in its handshake, at the most verbose level any session set (`downstream/logging.rs`).
//! Each server's `notifications/message` comes back to the session of the call it came
//! during (over stdio, the one session) with its `logger` tagged by the server's name:
//! `<server>` alone, or `<server>/<logger>` when the server named one. A session drops
//! what is below its level, since over HTTP the servers log at the most verbose level of
//! all sessions.
//!
//! 2026-07-28 deprecates logging (SEP-2577) and drops `logging/setLevel`: a request asks
//! for its own messages with `io.modelcontextprotocol/logLevel` in its `_meta`, and gets
//! none without it. Such a call's messages reach it at that level ([`LogLevel::fixed`]),
//! over stdio on the one connection, over HTTP on the request's own SSE response (rmcp
//! serves each stateless request on a connection of its own, whose every message before
//! the result goes on that response); after an `InputRequiredResult`, on the retry's.
#![expect(
    deprecated,
    reason = "MCP logging is deprecated by SEP-2577, yet handshake-era clients and servers use it"
)]

use std::sync::{Arc, Mutex};
use std::time::Duration;

use rmcp::model::{
    LoggingLevel, LoggingMessageNotification, LoggingMessageNotificationParam, ServerNotification,
};
use rmcp::{Peer, RoleServer};

use crate::sync::lock;

/// Longest a forwarded log message waits for the client's transport: the downstream
/// connection reads nothing else meanwhile (it keeps read order), so a client that stops
/// reading must not stall the server's calls for longer.
const FORWARD_TIMEOUT: Duration = Duration::from_secs(5);

/// The level one session set with `logging/setLevel`; `None` until it does, when every
/// message a server sends goes on (servers choose what to send, as they do directly).
/// Cheap to clone; every clone is the same level.
#[derive(Debug, Clone, Default)]
pub(crate) struct LogLevel(Arc<Mutex<Option<LoggingLevel>>>);

impl LogLevel {
    pub(crate) fn get(&self) -> Option<LoggingLevel> {
        *lock(&self.0)
    }

    /// A level that is set from the start: a 2026-07-28 request's `_meta` level.
    pub(crate) fn fixed(level: LoggingLevel) -> LogLevel {
        LogLevel(Arc::new(Mutex::new(Some(level))))
    }

    pub(in crate::server) fn set(&self, level: LoggingLevel) {
        *lock(&self.0) = Some(level);
    }

    /// Whether a message at `level` reaches this session.
    fn admits(&self, level: LoggingLevel) -> bool {
        self.get().is_none_or(|least| rank(level) >= rank(least))
    }
}

/// Severity order, RFC 5424's as the spec says: debug is the least severe.
pub(in crate::server) fn rank(level: LoggingLevel) -> u8 {
    match level {
        LoggingLevel::Debug => 0,
        LoggingLevel::Info => 1,
        LoggingLevel::Notice => 2,
        LoggingLevel::Warning => 3,
        LoggingLevel::Error => 4,
        LoggingLevel::Critical => 5,
        LoggingLevel::Alert => 6,
        LoggingLevel::Emergency => 7,
    }
}

/// The server's name as the message's logger: `<server>`, or `<server>/<logger>`.
fn tagged(server: &str, logger: Option<&str>) -> String {
    match logger {
        Some(logger) if !logger.is_empty() => format!("{server}/{logger}"),
        _ => server.to_owned(),
    }
}

/// Sends a server's message to a session, tagged with the server, when its level admits it.
pub(super) async fn forward(
    peer: Peer<RoleServer>,
    level: LogLevel,
    server: String,
    mut message: LoggingMessageNotificationParam,
) {
    if !level.admits(message.level) {
        return;
    }
    message.logger = Some(tagged(&server, message.logger.as_deref()));
    let notification =
        ServerNotification::LoggingMessageNotification(LoggingMessageNotification::new(message));
    match tokio::time::timeout(FORWARD_TIMEOUT, peer.send_notification(notification)).await {
        Ok(Ok(())) => {}
        Ok(Err(err)) => tracing::debug!(%server, error = %err, "log message not delivered"),
        Err(_) => tracing::debug!(%server, "log message dropped: the client is not reading"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_level_admits_itself_and_what_is_more_severe() {
        let level = LogLevel::default();
        assert!(
            level.admits(LoggingLevel::Debug),
            "no level set: all goes on"
        );
        level.set(LoggingLevel::Warning);
        assert!(!level.admits(LoggingLevel::Info));
        assert!(level.admits(LoggingLevel::Warning));
        assert!(level.admits(LoggingLevel::Emergency));
    }

    #[test]
    fn the_logger_names_the_server() {
        assert_eq!(tagged("time", None), "time");
        assert_eq!(tagged("time", Some("")), "time");
        assert_eq!(tagged("time", Some("tz")), "time/tz");
    }
}
