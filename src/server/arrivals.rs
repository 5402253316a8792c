//! What the servers' lists change for the client: where an ingested tool becomes visible.
//!
//! The one task that takes downstream events hands each batch to [`crate::ingest`] (the
//! catalog, the index, the prompt and resource catalogs), then appends to the client's
//! lists what the exposure mode shows (core tools, every tool in `all` mode, every prompt,
//! resource and template once the client has listed them) and sends list-changed for each
//! list that grew. Appends are in config order; the first `tools/list` waits for them
//! ([`State::expose_pending`]), so its order does not depend on which server came first.

use std::sync::Arc;

use tokio::sync::mpsc;

use super::State;
use super::notify::Change;
use crate::catalog::Catalog;
use crate::config::ExposureMode;
use crate::downstream::Event;
use crate::exposure::{ExposedList, listed_form};
use crate::ingest::{Batch, Update};
use crate::sync::lock;

/// The one reader of the supervisors' events: everything already queued goes in as one
/// [`Batch`] (one index commit for many servers), on the blocking pool so proxied calls
/// keep flowing meanwhile; then what grew is shown and announced.
pub(super) async fn take_events(state: Arc<State>, mut events: mpsc::UnboundedReceiver<Event>) {
    while let Some(event) = events.recv().await {
        let mut batch = Batch::default();
        let mut next = Some(event);
        while let Some(event) = next.take() {
            if let Some(Event::ResourceUpdated { server, uri }) = batch.add(event) {
                tracing::debug!(server, %uri, "resource updated");
                state.notifier.resource_updated(&uri).await;
            }
            next = events.try_recv().ok();
        }
        if batch.is_empty() {
            continue;
        }
        let registry = state.registry.clone();
        let update = match tokio::task::spawn_blocking(move || registry.apply(batch)).await {
            Ok(update) => update,
            Err(err) => {
                tracing::error!(error = %err, "catalog update panicked");
                continue;
            }
        };
        let grew = state.show(&update);
        for change in [Change::Prompts, Change::Resources, Change::Tools] {
            if grew.contains(&change) {
                state.notifier.changed(change).await;
            }
        }
    }
}

impl State {
    /// Appends to the client's lists what `update` brought and the exposure mode shows;
    /// returns which lists grew.
    fn show(&self, update: &Update) -> Vec<Change> {
        let mut grew = Vec::new();
        if !update.prompts.is_empty() {
            let catalog = self.registry.prompts();
            let mut shown = lock(&self.prompts);
            let appended: usize = (update.prompts.iter())
                .map(|&server| shown.append_server(&catalog, server))
                .sum();
            if appended > 0 {
                grew.push(Change::Prompts);
            }
        }
        if !update.resources.is_empty() {
            let catalog = self.registry.resources();
            let mut shown = lock(&self.resources);
            let mut any = false;
            for &server in &update.resources {
                any |= shown.append_server(&catalog, server);
            }
            if any {
                grew.push(Change::Resources);
            }
        }
        if !update.tools.is_empty() {
            let catalog = self.registry.catalog();
            let mut exposed = lock(&self.exposed);
            self.warn_listed_changes(&catalog, &exposed.list, update);
            if exposed.listed {
                let appended: usize = (update.tools.iter())
                    .map(|(server, _)| {
                        self.expose_pending(&catalog, &mut exposed.list, Some(*server))
                    })
                    .sum();
                if appended > 0 {
                    grew.push(Change::Tools);
                }
            }
        }
        grew
    }

    /// A listed tool keeps the definition the client first saw (DESIGN.md invariant 1):
    /// when its server changes it, the log says so.
    fn warn_listed_changes(&self, catalog: &Catalog, exposed: &ExposedList, update: &Update) {
        for (server, changes) in &update.tools {
            for &id in &changes.changed {
                if let Some(entry) = catalog.get(id)
                    && exposed.contains(entry.name.as_str())
                {
                    tracing::warn!(
                        server = %self.config.servers[*server].name,
                        tool = %entry.original_name(),
                        "a listed tool changed its definition downstream; the client keeps the one it has"
                    );
                }
            }
        }
    }

    /// Appends, in config order, every tool the exposure mode shows that is not listed yet:
    /// core tools, and in `all` mode everything. `server` limits the walk to one server.
    pub(super) fn expose_pending(
        &self,
        catalog: &Catalog,
        exposed: &mut ExposedList,
        server: Option<usize>,
    ) -> usize {
        let settings = &self.config.settings;
        let entries: Box<dyn Iterator<Item = _>> = match server {
            Some(index) => Box::new(catalog.server_entries(index)),
            None => Box::new(catalog.iter()),
        };
        let mut appended = 0;
        for entry in entries {
            if entry.gone || exposed.contains(entry.name.as_str()) {
                continue;
            }
            let shown = settings.exposure == ExposureMode::All
                || self.config.servers[entry.server_index].is_core(entry.original_name());
            if shown && exposed.append(listed_form(entry, settings.claude_always_load)) {
                appended += 1;
            }
        }
        appended
    }
}
