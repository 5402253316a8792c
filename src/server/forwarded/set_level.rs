//! `logging/setLevel` (handshake era, docs/design.md section 12): the session's level, and
//! every connected server's at the most verbose level any live session set
//! (`logging.rs` says how messages then reach each session).
#![expect(
    deprecated,
    reason = "MCP logging is deprecated by SEP-2577, yet handshake-era clients and servers use it"
)]

use rmcp::ErrorData as McpError;
use rmcp::model::LoggingLevel;

use crate::server::passthrough::{LogLevel, rank};
use crate::server::shared::Shared;

/// `logging/setLevel` of the session whose level is `mine`: its level, and every
/// connected server's (the most verbose any live session set, so each session still gets
/// what it asked for). Answered once each server has answered or timed out, so what the
/// client reads next is logged at the new level.
pub(crate) async fn set_level(
    shared: &Shared,
    mine: &LogLevel,
    level: LoggingLevel,
) -> Result<(), McpError> {
    mine.set(level);
    let most_verbose = (shared.live_sessions().iter())
        .filter_map(|session| session.log_level().get())
        .min_by_key(|level| rank(*level));
    shared.client().set_downstream_level(most_verbose);
    let Some(downstream) = most_verbose else {
        return Ok(());
    };
    let mut asked = tokio::task::JoinSet::new();
    for handle in shared.handles().iter() {
        let handle = handle.clone();
        asked.spawn(async move { handle.set_log_level(downstream).await });
    }
    while asked.join_next().await.is_some() {}
    Ok(())
}
