//! What the servers' lists change for the client: where an ingested tool becomes visible.
//!
//! The one task that takes downstream events hands each batch to [`crate::ingest`] (the
//! catalog, the index, the prompt and resource catalogs), then appends to *every live
//! session's* lists what its exposure mode shows (core tools, every tool in `all` mode,
//! every prompt, resource and template once that client has listed them) and sends
//! list-changed for each list that grew, to that session only. Appends are in config order;
//! a session's first `tools/list` waits for them ([`Shared::expose_pending`]), so its order
//! does not depend on which server came first.

use std::sync::Arc;

use tokio::sync::mpsc;

use super::Shared;
use super::session::Change;
use super::session::Session;
use crate::catalog::Catalog;
use crate::config::ExposureMode;
use crate::downstream::Event;
use crate::exposure::{ExposedList, listed_tool};
use crate::ingest::{Batch, Update};
use crate::sync::lock;

/// The one reader of the supervisors' events: everything already queued goes in as one
/// [`Batch`] (one index commit for many servers), on the blocking pool so proxied calls
/// keep flowing meanwhile; then what grew is shown and announced.
pub(super) async fn take_events(state: Arc<Shared>, mut events: mpsc::UnboundedReceiver<Event>) {
    while let Some(event) = events.recv().await {
        let mut batch = Batch::default();
        let mut next = Some(event);
        while let Some(event) = next.take() {
            if let Some(Event::ResourceUpdated { server, uri }) = batch.add(event) {
                tracing::debug!(server, %uri, "resource updated");
                for session in state.live_sessions() {
                    if session.holds(&uri) {
                        session.notifier.resource_updated(&uri).await;
                    }
                }
            }
            next = events.try_recv().ok();
        }
        if batch.is_empty() {
            continue;
        }
        let registry = state.registry.clone();
        let config = state.config();
        let update = match tokio::task::spawn_blocking(move || registry.apply(&config, batch)).await
        {
            Ok(update) => update,
            Err(err) => {
                tracing::error!(error = %err, "catalog update panicked");
                continue;
            }
        };
        announce(&state, &update);
    }
}

/// Shows every live session what `update` brought and tells each whose lists grew.
fn announce(state: &Shared, update: &Update) {
    warn_listed_changes(state, update);
    for session in state.live_sessions() {
        let grew = state.show(&session, update);
        if grew.is_empty() {
            continue;
        }
        // Each session is told on its own task: one slow client delays no other.
        tokio::spawn(async move {
            for change in [Change::Prompts, Change::Resources, Change::Tools] {
                if grew.contains(&change) {
                    session.notifier.changed(change).await;
                }
            }
        });
    }
}

/// Before a request that may meet a held tool (a search, a selection, a call): when
/// anything is held and the lock file changed on disk (`mcp-defer trust` approved), the
/// held servers' lists are taken in again, so what was approved is searchable and callable
/// in this very request, and the sessions that show it are told.
pub(super) async fn lift_approved(state: &Arc<Shared>) {
    if !state.registry.holds_any() {
        return;
    }
    let registry = state.registry.clone();
    let config = state.config();
    match tokio::task::spawn_blocking(move || registry.lift(&config)).await {
        Ok(Some(update)) => announce(state, &update),
        Ok(None) => {}
        Err(err) => tracing::error!(error = %err, "taking approved tools in panicked"),
    }
}

/// A listed tool keeps the definition each client first saw (DESIGN.md invariant 1): when
/// its server changes it, the log says so, once for all sessions.
fn warn_listed_changes(state: &Shared, update: &Update) {
    if update
        .tools
        .iter()
        .all(|(_, changes)| changes.changed.is_empty())
    {
        return;
    }
    let sessions = state.live_sessions();
    let config = state.config();
    let catalog = state.registry.catalog();
    for (server, changes) in &update.tools {
        for &id in &changes.changed {
            if let Some(entry) = catalog.get(id)
                && (sessions.iter())
                    .any(|s| s.has_listed() && s.exposed().list.contains(entry.name.as_str()))
            {
                tracing::warn!(
                    server = %config.servers[*server].name,
                    tool = %entry.original_name(),
                    "a listed tool changed its definition downstream; clients keep the one they have"
                );
            }
        }
    }
}

impl Shared {
    /// Appends to `session`'s lists what `update` brought and its exposure mode shows;
    /// returns which lists grew.
    fn show(&self, session: &Session, update: &Update) -> Vec<Change> {
        let mut grew = Vec::new();
        if !update.prompts.is_empty() {
            let catalog = self.registry.prompts();
            let mut shown = lock(&session.prompts);
            let appended: usize = (update.prompts.iter())
                .map(|&server| shown.append_server(&catalog, server))
                .sum();
            if appended > 0 {
                grew.push(Change::Prompts);
            }
        }
        if !update.resources.is_empty() {
            let catalog = self.registry.resources();
            let mut shown = lock(&session.resources);
            let mut any = false;
            for &server in &update.resources {
                any |= shown.append_server(&catalog, server);
            }
            if any {
                grew.push(Change::Resources);
            }
        }
        // Before its first list a session is not shown anything (nor is its mode fixed).
        if !update.tools.is_empty() && session.has_listed() {
            let exposure = session.exposure();
            let catalog = self.registry.catalog();
            let mut exposed = session.exposed();
            {
                let appended: usize = (update.tools.iter())
                    .map(|(server, _)| {
                        self.expose_pending(&catalog, &mut exposed.list, Some(*server), exposure)
                    })
                    .sum();
                if appended > 0 {
                    grew.push(Change::Tools);
                }
            }
        }
        grew
    }

    /// Appends, in config order, every tool the exposure mode shows that is not listed yet:
    /// core tools, and in `all` mode everything. `server` limits the walk to one server.
    pub(super) fn expose_pending(
        &self,
        catalog: &Catalog,
        exposed: &mut ExposedList,
        server: Option<usize>,
        exposure: ExposureMode,
    ) -> usize {
        let config = self.config();
        let settings = &config.settings;
        let entries: Box<dyn Iterator<Item = _>> = match server {
            Some(index) => Box::new(catalog.server_entries(index)),
            None => Box::new(catalog.iter()),
        };
        let mut appended = 0;
        for entry in entries {
            if entry.gone || exposed.contains(entry.name.as_str()) {
                continue;
            }
            let shown = exposure == ExposureMode::All
                || (config.servers.get(entry.server_index))
                    .is_some_and(|server| server.is_core(entry.original_name()));
            if shown && exposed.append(listed_tool(entry, settings.claude_always_load)) {
                appended += 1;
            }
        }
        appended
    }
}
