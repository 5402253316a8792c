//! Publishing what the servers' lists brought to every live session: where an ingested
//! tool becomes visible to a client.
//!
//! The one task that takes downstream events hands each batch to [`crate::ingest`] (the
//! catalog, the index, the prompt and resource catalogs), then appends to *every live
//! session's* lists what its exposure mode shows (core tools, every tool in `all` mode,
//! every prompt, resource and template once that client has listed them) and sends
//! list-changed for each list that grew, to that session only. Appends are in config order;
//! a session's first `tools/list` waits for them ([`expose_pending`]), so its order
//! does not depend on which server came first.

use std::sync::Arc;

use tokio::sync::mpsc;

use super::error::ServeError;
use super::forwarded::resources;
use super::passthrough::ClientRequests;
use super::session::{Change, Session};
use super::shared::Shared;
use crate::catalog::Catalog;
use crate::config::{Config, ExposureMode};
use crate::downstream::{Event, ServerHandle};
use crate::exposure::{ExposedList, listed_tool};
use crate::ingest::{Batch, Update};

/// Builds the shared state of `config` over `handles` and starts what keeps it current:
/// the one task that takes `events` in ([`take_events`]) and the one that releases the
/// subscriptions of sessions that ended ([`resources::release_ended`]). `client` is the
/// table the downstream connections ask clients through.
///
/// # Errors
/// When the search index cannot be created.
pub(crate) fn start(
    config: Config,
    handles: Vec<ServerHandle>,
    events: mpsc::UnboundedReceiver<Event>,
    client: ClientRequests,
) -> Result<Arc<Shared>, ServeError> {
    let (release, released) = mpsc::unbounded_channel();
    let shared = Shared::new(config, handles, client, release)?;
    tokio::spawn(take_events(shared.clone(), events));
    tokio::spawn(resources::release_ended(Arc::downgrade(&shared), released));
    Ok(shared)
}

/// The one reader of the supervisors' events: everything already queued goes in as one
/// [`Batch`] (one index commit for many servers), on the blocking pool so proxied calls
/// keep flowing meanwhile; then what grew is shown and announced.
async fn take_events(shared: Arc<Shared>, mut events: mpsc::UnboundedReceiver<Event>) {
    while let Some(event) = events.recv().await {
        let mut batch = Batch::default();
        let mut next = Some(event);
        while let Some(event) = next.take() {
            if let Some(Event::ResourceUpdated { server, uri }) = batch.add(event) {
                tracing::debug!(server, %uri, "resource updated");
                for session in shared.live_sessions() {
                    if session.holds().holds(&uri) {
                        session.notifier().resource_updated(&uri).await;
                    }
                }
            }
            next = events.try_recv().ok();
        }
        if batch.is_empty() {
            continue;
        }
        let registry = shared.registry().clone();
        let config = shared.config();
        let update = match tokio::task::spawn_blocking(move || {
            let update = registry.apply(&config, batch);
            // The code and word table an update reads are not what calls and searches read.
            crate::platform::trim_resident_set();
            update
        })
        .await
        {
            Ok(update) => update,
            Err(err) => {
                tracing::error!(error = %err, "catalog update panicked");
                continue;
            }
        };
        announce(&shared, &update);
    }
}

/// Shows every live session what `update` brought and tells each whose lists grew.
fn announce(shared: &Shared, update: &Update) {
    warn_listed_changes(shared, update);
    for session in shared.live_sessions() {
        let grew = show(shared, &session, update);
        if grew.is_empty() {
            continue;
        }
        // Each session is told on its own task: one slow client delays no other.
        tokio::spawn(async move {
            for change in [Change::Prompts, Change::Resources, Change::Tools] {
                if grew.contains(&change) {
                    session.notifier().changed(change).await;
                }
            }
        });
    }
}

/// Before a request that may meet a held tool (a search, a selection, a call): when
/// anything is held and the lock file changed on disk (`mcp-defer trust` approved), the
/// held servers' lists are taken in again, so what was approved is searchable and callable
/// in this very request, and the sessions that show it are told.
pub(super) async fn lift_approved(shared: &Shared) {
    if !shared.registry().holds_any() {
        return;
    }
    let registry = shared.registry().clone();
    let config = shared.config();
    match tokio::task::spawn_blocking(move || registry.lift(&config)).await {
        Ok(Some(update)) => announce(shared, &update),
        Ok(None) => {}
        Err(err) => tracing::error!(error = %err, "taking approved tools in panicked"),
    }
}

/// A listed tool keeps the definition each client first saw (DESIGN.md invariant 1): when
/// its server changes it, the log says so, once for all sessions.
fn warn_listed_changes(shared: &Shared, update: &Update) {
    if update
        .tools
        .iter()
        .all(|(_, changes)| changes.changed.is_empty())
    {
        return;
    }
    let sessions = shared.live_sessions();
    let config = shared.config();
    let catalog = shared.registry().catalog();
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

/// Appends to `session`'s lists what `update` brought and its exposure mode shows;
/// returns which lists grew.
fn show(shared: &Shared, session: &Session, update: &Update) -> Vec<Change> {
    let mut grew = Vec::new();
    if !update.prompts.is_empty() {
        let catalog = shared.registry().prompts();
        let appended: usize = (update.prompts.iter())
            .map(|&server| session.prompts().append_server(&catalog, server))
            .sum();
        if appended > 0 {
            grew.push(Change::Prompts);
        }
    }
    if !update.resources.is_empty() {
        let catalog = shared.registry().resources();
        let mut any = false;
        for &server in &update.resources {
            any |= session.resources().append_server(&catalog, server);
        }
        if any {
            grew.push(Change::Resources);
        }
    }
    // Before its first list a session is not shown anything (nor is its mode fixed).
    if !update.tools.is_empty() && session.has_listed() {
        let exposure = session.exposure();
        let config = shared.config();
        let catalog = shared.registry().catalog();
        let mut exposed = session.exposed();
        let appended: usize = (update.tools.iter())
            .map(|(server, _)| {
                expose_pending(
                    &config,
                    &catalog,
                    &mut exposed.list,
                    Some(*server),
                    exposure,
                )
            })
            .sum();
        if appended > 0 {
            grew.push(Change::Tools);
        }
    }
    grew
}

/// Appends, in config order, every tool the exposure mode shows that is not listed yet:
/// core tools, and in `all` mode everything. `server` limits the walk to one server.
pub(super) fn expose_pending(
    config: &Config,
    catalog: &Catalog,
    exposed: &mut ExposedList,
    server: Option<usize>,
    exposure: ExposureMode,
) -> usize {
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
