//! The prompt and resource lists one session was shown: append-only as `tools/list` is
//! (DESIGN.md invariant 1), filled in config order by the first list and grown by what is
//! published after (`server/publish.rs`). `prompts.rs` and `resources.rs` answer the
//! requests that read them.

use std::sync::Mutex;

use rmcp::model::{Prompt, Resource, ResourceTemplate};

use crate::catalog::{PromptCatalog, ResourceCatalog};
use crate::exposure::ClientList;
use crate::sync::lock;

/// The prompt list one session was shown (the catalog is [`crate::ingest`]'s).
#[derive(Default)]
pub(crate) struct Prompts(Mutex<ClientList<Prompt>>);

impl Prompts {
    /// Appends the live prompts of `server` the client has not seen; returns how many
    /// (none before its first `prompts/list`).
    pub(crate) fn append_server(&self, catalog: &PromptCatalog, server: usize) -> usize {
        lock(&self.0).arrive(
            (catalog.server_entries(server))
                .filter(|entry| !entry.gone)
                .map(|entry| entry.listed_form()),
        )
    }

    /// `prompts/list`: the client's list; the first call fills it with every prompt known,
    /// in config order.
    pub(crate) fn list(&self, catalog: &PromptCatalog) -> Vec<Prompt> {
        lock(&self.0).list(|| {
            (catalog.iter())
                .filter(|e| !e.gone)
                .map(|e| e.listed_form())
        })
    }
}

/// The resource and template lists one session was shown (the catalog is
/// [`crate::ingest`]'s).
#[derive(Default)]
pub(crate) struct ResourceLists(Mutex<Shown>);

#[derive(Default)]
struct Shown {
    resources: ClientList<Resource>,
    templates: ClientList<ResourceTemplate>,
}

impl ResourceLists {
    /// Appends the resources and templates of `server` the client has not seen. Returns
    /// whether either list the client has seen grew.
    pub(crate) fn append_server(&self, catalog: &ResourceCatalog, server: usize) -> bool {
        let mut shown = lock(&self.0);
        let resources = (shown.resources).arrive(catalog.server_resources(server).cloned());
        let templates = (shown.templates).arrive(catalog.server_templates(server).cloned());
        resources + templates > 0
    }

    /// `resources/list`: the client's resource list; the first call fills it in config order.
    pub(crate) fn list(&self, catalog: &ResourceCatalog) -> Vec<Resource> {
        (lock(&self.0).resources).list(|| catalog.resources().cloned())
    }

    /// `resources/templates/list`: the client's template list; the first call fills it in
    /// config order.
    pub(crate) fn list_templates(&self, catalog: &ResourceCatalog) -> Vec<ResourceTemplate> {
        (lock(&self.0).templates).list(|| catalog.templates().cloned())
    }
}
