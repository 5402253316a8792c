//! What a session's choices teach search (`[settings.search] learn`): each search's query
//! and the tools it listed, then each tool selected or called, attributed to its query by
//! the session's [`Trail`](crate::search::usage::Trail) and recorded in the store of the
//! session's principal ([`Stores`](crate::search::usage::Stores)): over HTTP the token it
//! authenticated with (the gate puts a [`Principal`] on the request), else the local user.
//! Nothing of a call but the tool's name is looked at: never its arguments or result.

use std::sync::{Arc, Mutex, OnceLock};

use rmcp::RoleServer;
use rmcp::service::RequestContext;

use crate::search::usage::{Kind, Principal, Stores, Trail, Usage};
use crate::sync::lock;

/// One session's part: its searches and choices, and the store they are recorded in.
#[derive(Default)]
pub(crate) struct SessionUsage {
    /// This session's searches and choices, which say what search learns.
    trail: Mutex<Trail>,
    /// The store this session's searches are lifted by and its choices recorded in: its
    /// principal's, fixed by its first call; `None` with `learn = false`.
    store: OnceLock<Option<Arc<Usage>>>,
}

impl SessionUsage {
    /// Fixes this session's store in `stores` by the principal of `context`'s request,
    /// when no earlier request fixed it. A session is one principal's: the gate refuses a
    /// session id to every other (`http/gate.rs`).
    pub(crate) fn learn_as(&self, stores: &Stores, context: &RequestContext<RoleServer>) {
        let principal = (context.extensions.get::<http::request::Parts>())
            .and_then(|parts| parts.extensions.get::<Principal>())
            .cloned()
            .unwrap_or_default();
        self.store.get_or_init(|| stores.for_principal(&principal));
    }

    /// The store this session learns from and teaches (the local user's when no request
    /// named a principal: stdio).
    pub(crate) fn store(&self, stores: &Stores) -> Option<Arc<Usage>> {
        (self.store)
            .get_or_init(|| stores.for_principal(&Principal::Local))
            .clone()
    }

    /// Notes a search and the qualified names its answer listed.
    pub(crate) fn note_search(&self, stores: &Stores, query: &str, listed: Vec<String>) {
        if self.store(stores).is_some() {
            lock(&self.trail).searched(query, listed);
        }
    }

    /// Records that `tool` (a qualified name) was chosen; `meta`: through `select_tools`
    /// or `call_tool`, else a direct `tools/call`.
    pub(crate) fn note_choice(&self, stores: &Stores, tool: &str, kind: Kind, meta: bool) {
        let Some(usage) = self.store(stores) else {
            return;
        };
        let event = lock(&self.trail).chose(tool, kind, meta);
        if let Some(event) = event {
            usage.record(event);
        }
    }
}
