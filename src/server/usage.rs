//! What a session's choices teach search (`[settings.search] learn`): each search's query
//! and the tools it listed, then each tool selected or called, attributed to its query by
//! the session's [`Trail`](crate::search::usage::Trail) and recorded in the store of the
//! session's principal ([`Stores`](crate::search::usage::Stores)): over HTTP the token it
//! authenticated with (the gate puts a [`Principal`] on the request), else the local user.
//! Nothing of a call but the tool's name is looked at: never its arguments or result.

use std::sync::Arc;

use rmcp::RoleServer;
use rmcp::service::RequestContext;

use super::State;
use crate::search::usage::{Kind, Principal, Usage};
use crate::sync::lock;

impl State {
    /// Fixes this session's store by the principal of `context`'s request, when no
    /// earlier request fixed it. A session is one principal's: the gate refuses a session
    /// id to every other (`http/gate.rs`).
    pub(super) fn learn_as(&self, context: &RequestContext<RoleServer>) {
        let principal = (context.extensions.get::<http::request::Parts>())
            .and_then(|parts| parts.extensions.get::<Principal>())
            .cloned()
            .unwrap_or_default();
        self.session
            .usage
            .get_or_init(|| self.shared.learning.for_principal(&principal));
    }

    /// The store this session learns from and teaches (the local user's when no request
    /// named a principal: stdio).
    pub(super) fn usage(&self) -> Option<Arc<Usage>> {
        (self.session.usage)
            .get_or_init(|| self.shared.learning.for_principal(&Principal::Local))
            .clone()
    }

    /// Notes a search and the qualified names its answer listed.
    pub(super) fn note_search(&self, query: &str, listed: Vec<String>) {
        if self.usage().is_some() {
            lock(&self.session.trail).searched(query, listed);
        }
    }

    /// Records that `tool` (a qualified name) was chosen; `meta`: through `select_tools`
    /// or `call_tool`, else a direct `tools/call`.
    pub(super) fn note_choice(&self, tool: &str, kind: Kind, meta: bool) {
        let Some(usage) = self.usage() else {
            return;
        };
        let event = lock(&self.session.trail).chose(tool, kind, meta);
        if let Some(event) = event {
            usage.record(event);
        }
    }
}
