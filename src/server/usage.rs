//! What a session's choices teach search (`[settings.search] learn`): each search's query
//! and the tools it listed, then each tool selected or called, attributed to its query by
//! the session's [`Trail`] and recorded in the shared [`Usage`](crate::search::usage::Usage).
//! Nothing of a call but the tool's name is looked at: never its arguments or result.

use super::State;
use crate::search::usage::Kind;
use crate::sync::lock;

impl State {
    /// Notes a search and the qualified names its answer listed.
    pub(super) fn note_search(&self, query: &str, listed: Vec<String>) {
        if self.shared.registry.usage().is_some() {
            lock(&self.session.trail).searched(query, listed);
        }
    }

    /// Records that `tool` (a qualified name) was chosen; `meta`: through `select_tools`
    /// or `call_tool`, else a direct `tools/call`.
    pub(super) fn note_choice(&self, tool: &str, kind: Kind, meta: bool) {
        let Some(usage) = self.shared.registry.usage() else {
            return;
        };
        let event = lock(&self.session.trail).chose(tool, kind, meta);
        if let Some(event) = event {
            usage.record(event);
        }
    }
}
