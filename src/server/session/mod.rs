//! One client session's state: what this client has been shown and how to tell it.
//!
//! Everything the servers told us (catalog, index, prompt and resource catalogs) and the
//! downstream connections are shared by every session ([`Shared`](super::shared::Shared)); each session
//! owns its append-only tool, prompt and resource lists (DESIGN.md invariant 1 holds per
//! session), its [`Notifier`] (a list_changed reaches only the session whose list grew),
//! its `select_tools` hold and its resource subscriptions. Over stdio there is one session
//! for the life of the process; over HTTP one per `Mcp-Session-Id`, dropped when it ends or
//! expires, and one per 2026-07-28 stateless request ([`Mode::Stateless`]).

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Mutex, MutexGuard, OnceLock};

use tokio::sync::mpsc;

use super::meta::MetaTool;
use super::passthrough::{Holds, LogLevel, Prompts, ResourceLists};
use super::stdio::ToolLists;
use super::task_wire::Tasks;
use super::usage::SessionUsage;
use crate::config::{ExposureMode, Settings};
use crate::exposure::{ExposedList, ListedTool};
use crate::sync::lock;

mod notify;

pub(crate) use notify::{Change, Notifier};

/// What kind of client connection a session serves.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Mode {
    /// A connection that lives across requests: stdio, or an HTTP session opened by
    /// `initialize` (`Mcp-Session-Id`). Its list grows as `select_tools` and what is published say.
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

/// One client session: its lists, its notifier and each feature's part of it, every
/// field private to this file; a feature reaches its part through the accessor of the
/// same name and owns the behaviour in its own file. Opened by
/// [`Shared::open_session`](super::shared::Shared::open_session), closed when the last
/// handle of it drops.
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
    /// `stdio::ToolLists`); `None` over HTTP, where rmcp writes typed results.
    tool_lists: Option<ToolLists>,
    notifier: Notifier,
    /// The level this session set with `logging/setLevel` (`passthrough/logging.rs`).
    log_level: LogLevel,
    /// The prompt list this session was shown (`forwarded/prompts.rs`).
    prompts: Prompts,
    /// The resource lists this session was shown (`forwarded/resources.rs`).
    resources: ResourceLists,
    /// The resource subscriptions this session holds (`passthrough/subscriptions.rs`).
    holds: Holds,
    /// The 2025-11-25 tasks this session created (`server/tasks.rs`).
    tasks: Tasks,
    /// This session's searches and choices, and the store they teach (`server/usage.rs`).
    usage: SessionUsage,
}

impl Session {
    /// A session served with `settings`; `mode` `None` lets its first request decide.
    /// `release` takes the resource subscriptions it still holds when it drops.
    pub(super) fn new(
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
            prompts: Prompts::default(),
            resources: ResourceLists::default(),
            holds: Holds::new(release),
            tasks: Tasks::default(),
            usage: SessionUsage::default(),
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

    /// Over stdio, where this session's `tools/list` answers are written from the listed
    /// bytes; `None` over HTTP.
    pub(crate) fn tool_lists(&self) -> Option<&ToolLists> {
        self.tool_lists.as_ref()
    }

    /// How this session's client is told that a list grew.
    pub(crate) fn notifier(&self) -> &Notifier {
        &self.notifier
    }

    /// The MCP logging level this session set.
    pub(crate) fn log_level(&self) -> &LogLevel {
        &self.log_level
    }

    /// The prompts this session was shown.
    pub(crate) fn prompts(&self) -> &Prompts {
        &self.prompts
    }

    /// The resources and templates this session was shown.
    pub(crate) fn resources(&self) -> &ResourceLists {
        &self.resources
    }

    /// The resource subscriptions this session holds.
    pub(crate) fn holds(&self) -> &Holds {
        &self.holds
    }

    /// The tasks this session created.
    pub(crate) fn tasks(&self) -> &Tasks {
        &self.tasks
    }

    /// What this session's searches and choices teach search.
    pub(crate) fn usage(&self) -> &SessionUsage {
        &self.usage
    }
}

impl Drop for Session {
    fn drop(&mut self) {
        tracing::debug!(mode = ?self.mode.get(), "session state dropped");
    }
}
