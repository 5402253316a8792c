//! One client session's state: what this client has been shown and how to tell it.
//!
//! Everything the servers told us (catalog, index, prompt and resource catalogs) and the
//! downstream connections are shared by every session ([`super::Shared`]); each session
//! owns its append-only tool, prompt and resource lists (DESIGN.md invariant 1 holds per
//! session), its [`Notifier`] (a list_changed reaches only the session whose list grew),
//! its `select_tools` hold and its resource subscriptions. Over stdio there is one session
//! for the life of the process; over HTTP one per `Mcp-Session-Id`, dropped when it ends or
//! expires, and one per 2026-07-28 stateless request ([`Mode::Stateless`]).

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Mutex, MutexGuard, OnceLock};

use tokio::sync::mpsc;

use super::meta::MetaTool;
use super::stdio::ToolLists;
mod notify;

use super::passthrough::{LogLevel, Prompts, Resources};
use crate::config::{ExposureMode, Settings};
use crate::exposure::{ExposedList, ListedTool};
use crate::sync::lock;
pub(crate) use notify::{Change, Notifier};

/// What kind of client connection a session serves.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Mode {
    /// A connection that lives across requests: stdio, or an HTTP session opened by
    /// `initialize` (`Mcp-Session-Id`). Its list grows as `select_tools` and arrivals say.
    Connection,
    /// A 2026-07-28 HTTP request without a session: nothing of it outlives the request, so
    /// an append would be lost. It gets the `proxy` behaviour: the fixed list (meta tools
    /// and core tools), `select_tools` returns schemas only, `call_tool` calls anything.
    Stateless,
}

/// The tool list this session has been shown.
pub(crate) struct Exposed {
    pub list: ExposedList,
    /// The client has listed once: core and `all`-mode tools are appended on arrival from
    /// now on. Before that they wait, so the first list has them in config order.
    pub listed: bool,
}

pub(crate) struct Session {
    /// Set at construction over stdio, by `initialize` over HTTP; a session whose first
    /// request is anything else is [`Mode::Stateless`].
    mode: OnceLock<Mode>,
    /// The configured exposure mode, for a [`Mode::Connection`] session.
    exposure: ExposureMode,
    /// A connection in the 2026-07-28 era, whose tool list "MUST NOT vary ... as a side
    /// effect of other requests on the connection" (DESIGN.md 7c): nothing a request does
    /// appends to it.
    list_fixed: AtomicBool,
    claude_always_load: bool,
    search_loads: usize,
    exposed: Mutex<Exposed>,
    /// Over stdio, where `tools/list` answers are written from the listed bytes (see
    /// `stdio::tool_lists::ToolLists`); `None` over HTTP, where rmcp writes typed results.
    pub tool_lists: Option<ToolLists>,
    pub notifier: Notifier,
    /// The level this session set with `logging/setLevel` (`passthrough/logging.rs`).
    pub log_level: LogLevel,
    pub prompts: Mutex<Prompts>,
    pub resources: Mutex<Resources>,
    /// URIs this session holds subscriptions to, counted across its channels (legacy
    /// `resources/subscribe` and 2026-07-28 listen streams). `resources/updated` goes only
    /// to sessions that hold the URI, and a session that ends gives its counts back.
    subscribed: Mutex<BTreeMap<String, usize>>,
    /// Where the subscriptions of a dropped session go to be released downstream.
    release: mpsc::UnboundedSender<String>,
    /// The 2025-11-25 tasks this session created, by our id: over HTTP a session reaches
    /// only its own (`server/tasks.rs`).
    pub tasks: Mutex<std::collections::HashSet<String>>,
    /// This session's searches and choices, which say what search learns (`server/usage.rs`).
    pub trail: Mutex<crate::search::usage::Trail>,
    /// The store this session's searches are lifted by and its choices recorded in: its
    /// principal's, fixed by its first call (`server/usage.rs`); `None` with `learn = false`.
    pub usage: OnceLock<Option<std::sync::Arc<crate::search::usage::Usage>>>,
}

impl Session {
    pub(crate) fn new(
        settings: &Settings,
        mode: Option<Mode>,
        tool_lists: Option<ToolLists>,
        release: mpsc::UnboundedSender<String>,
    ) -> Session {
        let session = Session {
            mode: OnceLock::new(),
            exposure: settings.exposure,
            list_fixed: AtomicBool::new(false),
            claude_always_load: settings.claude_always_load,
            search_loads: settings.search_loads,
            exposed: Mutex::new(Exposed {
                list: ExposedList::new(),
                listed: false,
            }),
            tool_lists,
            notifier: Notifier::new(),
            log_level: LogLevel::default(),
            prompts: Mutex::new(Prompts::new()),
            resources: Mutex::new(Resources::new()),
            subscribed: Mutex::new(BTreeMap::new()),
            release,
            tasks: Mutex::default(),
            trail: Mutex::default(),
            usage: OnceLock::new(),
        };
        if let Some(mode) = mode {
            let _ = session.mode.set(mode);
        }
        session
    }

    /// `initialize` makes an HTTP session a connection; over stdio it already is one.
    pub(crate) fn bind_connection(&self) {
        let _ = self.mode.set(Mode::Connection);
    }

    /// Whether this session is a connection, without fixing the mode of one that is not
    /// yet known (an HTTP request before any `initialize`).
    pub(crate) fn is_connection(&self) -> bool {
        self.mode.get() == Some(&Mode::Connection)
    }

    /// The client speaks 2026-07-28 on this connection (`server/discover` was answered):
    /// from now on no request grows its tool list; servers' own changes still do.
    pub(crate) fn fix_list(&self) {
        self.list_fixed.store(true, Ordering::Relaxed);
    }

    /// The session's mode, fixed by its first request (see [`Session::mode`] field).
    pub(crate) fn mode(&self) -> Mode {
        *self.mode.get_or_init(|| Mode::Stateless)
    }

    /// The exposure mode this session is served in: the configured one, or `proxy` where
    /// no request may grow the list (a stateless request, a 2026-07-28 connection).
    pub(crate) fn exposure(&self) -> ExposureMode {
        match self.mode() {
            Mode::Connection
                if self.exposure == ExposureMode::Deferred
                    && self.list_fixed.load(Ordering::Relaxed) =>
            {
                ExposureMode::Proxy
            }
            Mode::Connection => self.exposure,
            Mode::Stateless => ExposureMode::Proxy,
        }
    }

    /// The session's tool list, which starts with the meta tools: their definitions depend
    /// on the session's exposure mode, known only once its first request came.
    pub(crate) fn exposed(&self) -> MutexGuard<'_, Exposed> {
        let mut exposed = lock(&self.exposed);
        if exposed.list.is_empty() {
            let exposure = self.exposure();
            for meta in MetaTool::ALL {
                let definition =
                    meta.definition(exposure, self.claude_always_load, self.search_loads);
                exposed.list.append(ListedTool::new(&definition));
            }
        }
        exposed
    }

    /// Whether the client has listed tools yet, without fixing the session's mode.
    pub(crate) fn has_listed(&self) -> bool {
        lock(&self.exposed).listed
    }

    /// Counts one more channel of this session holding `uri`.
    pub(crate) fn hold(&self, uri: &str) {
        *lock(&self.subscribed).entry(uri.to_owned()).or_default() += 1;
    }

    /// Gives back one of this session's holds on `uri`; false when it held none.
    pub(crate) fn unhold(&self, uri: &str) -> bool {
        let mut subscribed = lock(&self.subscribed);
        let Some(count) = subscribed.get_mut(uri) else {
            return false;
        };
        *count -= 1;
        if *count == 0 {
            subscribed.remove(uri);
        }
        true
    }

    /// Whether this session holds a subscription to `uri`.
    pub(crate) fn holds(&self, uri: &str) -> bool {
        lock(&self.subscribed).contains_key(uri)
    }
}

impl Drop for Session {
    /// Nothing of a session outlives it: its resource subscriptions are released (the
    /// downstream unsubscribe is async, so it goes to the shared state's release task).
    fn drop(&mut self) {
        let subscribed = std::mem::take(
            self.subscribed
                .get_mut()
                .unwrap_or_else(|poisoned| poisoned.into_inner()),
        );
        for (uri, count) in subscribed {
            for _ in 0..count {
                let _ = self.release.send(uri.clone());
            }
        }
        tracing::debug!(mode = ?self.mode.get(), "session state dropped");
    }
}
