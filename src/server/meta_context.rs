//! The request state as a meta tool's [`Context`]: each method hands over to the shared
//! state, the session or the route, so `meta/` needs nothing of them but this trait.

use std::sync::Arc;
use std::time::Duration;

use rmcp::RoleServer;
use rmcp::model::{CallToolRequestParams, CallToolResponse};
use rmcp::service::RequestContext;

use super::State;
use super::meta::validate::Validators;
use super::meta::{Context, Relists};
use super::view::{Servers, Unknown};
use crate::catalog::EntryId;
use crate::config::ExposureMode;
use crate::exposure::ExposedList;
use crate::ingest::Registry;
use crate::search::usage::Kind;

impl Context for State {
    fn registry(&self) -> &Arc<Registry> {
        &self.shared.registry
    }

    fn view(&self) -> Servers {
        self.shared.view()
    }

    fn validators(&self) -> &Validators {
        &self.shared.validators
    }

    fn exposure(&self) -> ExposureMode {
        self.session.exposure()
    }

    fn with_exposed<R>(&self, f: impl FnOnce(&mut ExposedList) -> R) -> R {
        f(&mut self.session.exposed().list)
    }

    fn reload_problem(&self) -> Option<String> {
        self.shared.reload_problem()
    }

    fn starting_servers(&self) -> Vec<String> {
        self.shared.starting_servers()
    }

    fn time_search(&self) -> impl Sized {
        super::latency::SEARCH.start()
    }

    fn search_deadlines(&self) -> super::shared::SearchDeadlines {
        self.shared.search_deadlines()
    }

    async fn wait_for_arrival(&self, before: &[String], deadline: tokio::time::Instant) {
        self.shared.wait_for_arrival(before, deadline).await;
    }

    async fn wait_for_servers_unless(&self, found: impl Fn() -> bool) {
        self.shared.wait_for_servers_unless(found).await;
    }

    async fn explain_unknown(&self, names: Vec<String>) -> Vec<Unknown> {
        self.shared.explain_unknown(names).await
    }

    async fn unknown_message(&self, name: &str) -> String {
        self.shared.unknown_message(name).await
    }

    async fn route(
        &self,
        id: EntryId,
        request: CallToolRequestParams,
        client_tool: &str,
        context: &RequestContext<RoleServer>,
    ) -> CallToolResponse {
        State::route(self, id, request, client_tool, context).await
    }

    fn relist_count(&self) -> u64 {
        self.session.notifier.relist_count()
    }

    async fn tools_changed(&self) -> bool {
        self.session.notifier.tools_changed().await
    }

    async fn hold_until_relist(&self, seen: u64, max: Duration) -> bool {
        self.session.notifier.hold_until_relist(seen, max).await
    }

    fn relists(&self) -> Relists {
        self.session.notifier.relists()
    }

    fn note_search(&self, query: &str, listed: Vec<String>) {
        State::note_search(self, query, listed);
    }

    fn note_choice(&self, name: &str, kind: Kind) {
        State::note_choice(self, name, kind, true);
    }

    fn usage(&self) -> Option<Arc<crate::search::usage::Usage>> {
        State::usage(self)
    }
}
