//! [`Context`]: everything a meta tool may read or do, and nothing else.
//!
//! The meta tools are the part of the server a contributor changes most, and they need a
//! dozen things from it (the registry, the session's list and notifier, the waits for
//! starting servers, the route a call takes). Naming them here, as a trait the request
//! state implements (`server/meta_context.rs`), keeps `meta/` free of the handler and its
//! state: `.ci/check-imports` fails when a file of `meta/` imports the rest of `server/`.
//! A meta tool is generic over its context, so a test or a new transport can drive one
//! without building a whole session.

use std::sync::Arc;
use std::time::Duration;

use rmcp::RoleServer;
use rmcp::model::{CallToolRequestParams, CallToolResponse};
use rmcp::service::RequestContext;

use super::Relists;
use super::validate::Validators;
use crate::catalog::EntryId;
use crate::config::ExposureMode;
use crate::exposure::ExposedList;
use crate::ingest::Registry;
use crate::search::usage::Kind;
use crate::server::view::{Servers, Unknown};

/// What a meta tool sees of one request: the shared registry and servers, its session's
/// tool list and notifier, and the waits and the route of the server.
pub(in crate::server) trait Context {
    /// The catalog, the search index and what else the servers' lists told us.
    fn registry(&self) -> &Arc<Registry>;

    /// The running servers, every position (removed ones included), and which serve.
    fn view(&self) -> Servers;

    /// `call_tool`'s compiled input schemas, shared by every session.
    fn validators(&self) -> &Validators;

    /// The exposure mode this session is served in.
    fn exposure(&self) -> ExposureMode;

    /// Runs `f` over the session's tool list, its lock held for `f` only. The catalog and
    /// the index, when needed, are taken before this (`sync/order.rs`).
    fn with_exposed<R>(&self, f: impl FnOnce(&mut ExposedList) -> R) -> R;

    /// Why the file on disk could not be reloaded, while it cannot.
    fn reload_problem(&self) -> Option<String>;

    /// The enabled servers still starting whose tools are not searchable yet.
    fn starting_servers(&self) -> Vec<String>;

    /// Times a search for `/metrics` until the returned guard drops.
    fn time_search(&self) -> impl Sized;

    /// When a search stops waiting for servers still starting.
    fn search_deadlines(&self) -> SearchDeadlines;

    /// Waits until the servers still starting are no longer `before`, or `deadline`.
    async fn wait_for_arrival(&self, before: &[String], deadline: tokio::time::Instant);

    /// Waits until every server has listed its tools or failed (at most the longest
    /// `startup_timeout`), ending as soon as `found` holds.
    async fn wait_for_servers_unless(&self, found: impl Fn() -> bool);

    /// Why each of `names` resolved to nothing, worked out off the runtime thread.
    async fn explain_unknown(&self, names: Vec<String>) -> Vec<Unknown>;

    /// The error text for a call of `name`, which resolved to nothing.
    async fn unknown_message(&self, name: &str) -> String;

    /// Sends a call of the catalog entry `id` to its server, the one path a direct
    /// `tools/call` takes too; `client_tool` is the name the client called.
    async fn route(
        &self,
        id: EntryId,
        request: CallToolRequestParams,
        client_tool: &str,
        context: &RequestContext<RoleServer>,
    ) -> CallToolResponse;

    /// How many times this session's client has listed tools.
    fn relist_count(&self) -> u64;

    /// Tells the session's client its tool list changed; false when it could not be told.
    async fn tools_changed(&self) -> bool;

    /// Holds until the client lists again after `seen` lists, at most `max`; returns
    /// whether it did.
    async fn hold_until_relist(&self, seen: u64, max: Duration) -> bool;

    /// How this session's client takes a grown tool list.
    fn relists(&self) -> Relists;

    /// Notes a search and the qualified names its answer listed, for search to learn
    /// which tool follows which query (`[settings.search] learn`).
    fn note_search(&self, query: &str, listed: Vec<String>);

    /// Notes that the tool `name` (qualified) was selected or called through a meta tool.
    fn note_choice(&self, name: &str, kind: Kind);

    /// What this session's principal learnt from use, which lifts its searches (`None`:
    /// `learn = false`).
    fn usage(&self) -> Option<Arc<crate::search::usage::Usage>>;
}

/// When a search answers with servers still starting ([`Context::search_deadlines`]).
#[derive(Debug, Clone, Copy)]
pub(crate) struct SearchDeadlines {
    /// Until here it waits for every server still starting.
    pub grace: tokio::time::Instant,
    /// Until here it waits while nothing it found fits.
    pub nothing_fits: tokio::time::Instant,
}
