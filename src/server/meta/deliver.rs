//! How a grown list reaches the client: the notification, and the hold its kind of client
//! needs (`relists.rs`), shared by `search_tools` and `select_tools`.

use std::time::Duration;

use super::{Context, Relists};

/// Tells the client its list grew by `appended` tools (after `seen` re-lists) and holds as
/// this client needs; returns whether it will have every tool of its list in its next
/// model request, so a result need not carry their schemas. `hold_unknown`: hold a client
/// not measured yet (`select_tools`, whose result a client waits for anyway), else take it
/// as one that does not re-list (`search_tools`, which answers at once).
pub(super) async fn deliver(
    state: &impl Context,
    appended: usize,
    seen: u64,
    max: Duration,
    hold_unknown: bool,
) -> bool {
    if appended > 0 && !state.tools_changed().await {
        return false;
    }
    match state.relists() {
        Relists::Never => false,
        Relists::WhileHeld if appended == 0 => true,
        Relists::WhileHeld => state.hold_until_relist(seen, max).await,
        Relists::Unknown if hold_unknown && appended > 0 => {
            state.hold_until_relist(seen, max).await
        }
        Relists::Unknown => false,
    }
}
