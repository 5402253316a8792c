//! What every session shares ([`Shared`]): one config, one set of downstream handles, one
//! registry; and the waits a request makes for servers that are still starting.

use std::sync::{Arc, Mutex, Weak};
use std::time::Duration;

use rmcp::model::{
    Implementation, PromptsCapability, ResourcesCapability, ServerCapabilities, ServerConfig,
};
use tokio::sync::mpsc;

use super::error::ServeError;
use super::instructions;
use super::meta::SearchDeadlines;
use super::meta::validate::Validators;
use super::passthrough::{ClientRequests, Subscriptions};
use super::session::{Mode, Session};
use super::stdio::ToolLists;
use super::view::{Servers, Unknown};
use crate::config::{AlwaysLoad, Config};
use crate::downstream::{ServerHandle, ServerState, StateChanges};
use crate::ingest::Registry;
use crate::search::usage::Stores;
use crate::sync::lock;

/// How long a search waits for every server still starting: a tool about to arrive may
/// be the best hit, and warm starts list at once from the tool cache.
const SEARCH_GRACE: Duration = Duration::from_secs(5);
/// Longest a search that has found nothing fitting waits for servers still starting. Its
/// "nothing yet" costs the model a request and often the task (a new user's first search,
/// while `uvx` started the time server, found nothing and the model gave up). Bounded well
/// under the clients' tool-call timeouts (Codex: 60 s): 70 Python servers once took 70 s
/// to list. Calls and selections wait for the server they need.
const SEARCH_WAIT: Duration = Duration::from_secs(15);

/// What every session shares: one config, one set of downstream connections, one
/// registry of what they listed. Built once per process.
pub(crate) struct Shared {
    /// The running servers by position, and their handles: one snapshot, swapped whole by
    /// a reload ([`Shared::set_running`]) so a reader never sees a config without its
    /// handle. Read through [`Shared::view`], [`Shared::config`] and [`Shared::handles`].
    running: std::sync::RwLock<Servers>,
    /// Built once from the config: `get_info` is called often and must not vary.
    info: ServerConfig,
    /// The catalog, the search index and what else the servers' lists told us.
    registry: Arc<Registry>,
    /// `call_tool`'s compiled input schemas.
    validators: Validators,
    /// Requests downstream servers send to their client, routed to the session whose
    /// call they came during, and the capabilities clients declared.
    client: ClientRequests,
    /// Downstream resource subscriptions, counted across every session's holds
    /// (`forwarded/resources.rs`).
    subscriptions: Subscriptions,
    /// Live sessions, for what is published to reach each ([`Shared::open_session`],
    /// [`Shared::live_sessions`]). A session that ended is pruned on the next walk.
    sessions: Mutex<Vec<Weak<Session>>>,
    /// Handed to each session to release its subscriptions when it is dropped.
    release: mpsc::UnboundedSender<String>,
    /// Why the config file on disk could not be reloaded, while it cannot: the model is
    /// told in each `search_tools` and `select_tools` answer (the log alone is not
    /// where a user who asked the agent looks).
    reload_problem: Mutex<Option<String>>,
    /// What search learnt from use, one store per principal unless shared
    /// (`server/usage.rs`).
    learning: Stores,
}

impl Shared {
    /// Builds the shared state; `client` is the table the downstream connections ask
    /// clients through, `release` where ended sessions' subscriptions go. What keeps it
    /// current is started by [`publish::start`](super::publish::start), its one builder.
    ///
    /// # Errors
    /// When the search index cannot be created.
    pub(super) fn new(
        config: Config,
        handles: Vec<ServerHandle>,
        client: ClientRequests,
        release: mpsc::UnboundedSender<String>,
    ) -> Result<Arc<Shared>, ServeError> {
        let config = Arc::new(config);
        let mut capabilities = ServerCapabilities::builder()
            .enable_tools()
            .enable_tool_list_changed()
            .build();
        // Whether a server offers prompts or resources is known only once it connects, and
        // capabilities must not wait for that nor change during the session (DESIGN.md
        // invariant 3): any enabled server may, and an empty list is a correct answer.
        if config.enabled_servers().next().is_some() {
            let mut prompts = PromptsCapability::default();
            prompts.list_changed = Some(true);
            let mut resources = ResourcesCapability::default();
            resources.list_changed = Some(true);
            resources.subscribe = Some(true);
            capabilities.prompts = Some(prompts);
            capabilities.resources = Some(resources);
            capabilities.completions = Some(Default::default());
        }
        let info = ServerConfig::new(capabilities)
            .with_server_info(Implementation::new(
                env!("CARGO_PKG_NAME"),
                env!("CARGO_PKG_VERSION"),
            ))
            .with_instructions(instructions::build(&config));
        let registry = Registry::new(&config)?;
        let learning = Stores::new(config.settings.learn);
        Ok(Arc::new(Shared {
            registry: Arc::new(registry),
            validators: Validators::default(),
            subscriptions: Subscriptions::default(),
            sessions: Mutex::new(Vec::new()),
            release,
            client,
            info,
            running: std::sync::RwLock::new(Servers {
                config,
                handles: handles.into(),
            }),
            reload_problem: Mutex::new(None),
            learning,
        }))
    }

    /// Opens a session over this state; `mode` `None` lets its first request decide
    /// ([`Mode`]). With `tool_lists`, its transport writes `tools/list` answers from the
    /// listed bytes (stdio). The session is live, and reached by what is published, until
    /// its last handle drops: that closes it, and the next walk prunes it.
    pub(crate) fn open_session(
        &self,
        mode: Option<Mode>,
        tool_lists: Option<ToolLists>,
    ) -> Arc<Session> {
        let session = Arc::new(Session::new(
            &self.config().settings,
            mode,
            tool_lists,
            self.release.clone(),
        ));
        let mut sessions = lock(&self.sessions);
        sessions.retain(|s| s.strong_count() > 0);
        sessions.push(Arc::downgrade(&session));
        session
    }

    /// The catalog, the search index and what else the servers' lists told us.
    pub(crate) fn registry(&self) -> &Arc<Registry> {
        &self.registry
    }

    /// What `initialize` and `server/discover` answer with: built once, never varies.
    pub(crate) fn info(&self) -> &ServerConfig {
        &self.info
    }

    /// `call_tool`'s compiled input schemas.
    pub(crate) fn validators(&self) -> &Validators {
        &self.validators
    }

    /// The requests servers send their client, and the capabilities clients declared.
    pub(crate) fn client(&self) -> &ClientRequests {
        &self.client
    }

    /// The downstream resource subscriptions of every session.
    pub(crate) fn subscriptions(&self) -> &Subscriptions {
        &self.subscriptions
    }

    /// What search learnt from use, by principal.
    pub(crate) fn learning(&self) -> &Stores {
        &self.learning
    }

    /// The running servers as one snapshot: the config and the handles that run it, and
    /// which servers serve ([`Servers::availability`]).
    pub(crate) fn view(&self) -> Servers {
        crate::sync::read(&self.running).clone()
    }

    /// The running config: every server position, removed ones included.
    pub(crate) fn config(&self) -> Arc<Config> {
        crate::sync::read(&self.running).config.clone()
    }

    /// The handles of the running servers, by position.
    pub(crate) fn handles(&self) -> Arc<[ServerHandle]> {
        crate::sync::read(&self.running).handles.clone()
    }

    /// The handle of the server at `index`.
    pub(crate) fn handle(&self, index: usize) -> Option<ServerHandle> {
        crate::sync::read(&self.running).handles.get(index).cloned()
    }

    /// Takes the running servers after a reload, before the servers it adds start: their
    /// first lists are applied under the config that has them.
    pub(crate) fn set_running(&self, running: Servers) {
        *crate::sync::write(&self.running) = running;
    }

    /// Notes why the file could not be reloaded (`None`: it was, the note goes).
    pub(crate) fn set_reload_problem(&self, problem: Option<String>) {
        *lock(&self.reload_problem) = problem;
    }

    /// Why the file on disk could not be reloaded, while it cannot.
    pub(crate) fn reload_problem(&self) -> Option<String> {
        lock(&self.reload_problem).clone()
    }

    /// The sessions alive now.
    pub(super) fn live_sessions(&self) -> Vec<Arc<Session>> {
        let mut sessions = lock(&self.sessions);
        sessions.retain(|s| s.strong_count() > 0);
        sessions.iter().filter_map(Weak::upgrade).collect()
    }
}

impl Shared {
    /// Waits, at most `core_wait`, until every server with core tools has listed them or
    /// failed: Codex drops tools that arrive after its first list (DESIGN.md 7a).
    pub(super) async fn wait_for_core(&self) {
        let deadline = deadline_after(self.config().settings.core_wait);
        self.wait_for(|s| s.always_load != AlwaysLoad::None, deadline)
            .await;
    }

    /// Waits, at most `core_wait`, until every server has listed or failed: a client's first
    /// `prompts/list` or `resources/list` comes right after the handshake, and is best in
    /// config order; servers that come later are appended, with list-changed.
    pub(super) async fn wait_for_first_list(&self) {
        let deadline = tokio::time::Instant::now() + self.config().settings.core_wait;
        self.wait_for(|_| true, deadline).await;
    }

    /// Waits until every server has listed its tools or failed, at most the longest
    /// `startup_timeout`: a search or call that comes early should see what is coming.
    pub(super) async fn wait_for_servers(&self) {
        self.wait_for_servers_unless(|| false).await;
    }

    /// As [`Shared::wait_for_servers`], ending as soon as `found` holds: a call of a tool
    /// whose server is ready goes at once, without waiting for the slowest server.
    pub(super) async fn wait_for_servers_unless(&self, found: impl Fn() -> bool) {
        let longest = self.longest_startup();
        self.wait_until(|_| true, deadline_after(longest), found)
            .await;
    }

    /// When a search stops waiting for servers still starting: after [`SEARCH_GRACE`]
    /// whatever it found, and after [`SEARCH_WAIT`] when nothing fits; never past the
    /// longest `startup_timeout`.
    pub(super) fn search_deadlines(&self) -> SearchDeadlines {
        let longest = self.longest_startup();
        SearchDeadlines {
            grace: deadline_after(longest.min(SEARCH_GRACE)),
            nothing_fits: deadline_after(longest.min(SEARCH_WAIT)),
        }
    }

    /// Waits until the servers still starting are no longer `before` (one has listed its
    /// tools or failed), or `deadline` passes: a search ranks again on each arrival.
    pub(super) async fn wait_for_arrival(&self, before: &[String], deadline: tokio::time::Instant) {
        self.wait_until(|_| true, deadline, || self.starting_servers() != before)
            .await;
    }

    /// Before a call goes to the server at `server`: when it has announced a tool change
    /// that no screened list answers yet (`notifications/tools/list_changed`, then the
    /// re-list), waits for that list, at most the server's `startup_timeout` (what a
    /// re-list may take). A rug pull announced a moment before the call would otherwise
    /// reach the server before trust saw the new definition. `Err` with the message for
    /// the client when the list did not come; nothing waits with `trust = "off"`.
    pub(super) async fn await_screened(&self, server: usize) -> Result<(), String> {
        let Servers { config, handles } = self.view();
        let (Some(handle), Some(server_config)) = (handles.get(server), config.servers.get(server))
        else {
            return Ok(());
        };
        if config.trust(server) == crate::config::TrustMode::Off {
            return Ok(());
        }
        let deadline = deadline_after(server_config.startup_timeout);
        let screened = || handle.tool_changes() <= self.registry.screened_changes(server);
        self.wait_on_changes(&[], deadline, screened).await;
        if screened() {
            return Ok(());
        }
        Err(format!(
            "Server '{}' announced that its tools changed, and they could not be listed \
             again within {} s; the call was not sent, since the tool may have changed \
             since it was approved. Try again in a moment.",
            handle.name(),
            server_config.startup_timeout.as_secs()
        ))
    }

    /// The longest `startup_timeout` of the enabled servers: no start takes longer.
    fn longest_startup(&self) -> Duration {
        (self.config().enabled_servers())
            .map(|s| s.startup_timeout)
            .max()
            .unwrap_or_default()
    }

    /// The enabled servers still starting whose tools are not searchable yet (listed but
    /// not indexed yet counts as starting: a search would miss them all the same).
    pub(crate) fn starting_servers(&self) -> Vec<String> {
        let Servers { config, handles } = self.view();
        (config.servers.iter().enumerate())
            .filter(|(i, s)| s.enabled && self.coming(&handles, *i))
            .map(|(_, s)| s.name.clone())
            .collect()
    }

    /// Whether the server at `i` will have searchable tools without anything else
    /// happening: not searchable yet, and starting or serving (not failed, restarting or
    /// stopped).
    fn coming(&self, handles: &[ServerHandle], i: usize) -> bool {
        !self.registry.is_searchable(i)
            && handles.get(i).is_some_and(|h| {
                matches!(
                    h.state(),
                    ServerState::Starting | ServerState::Ready { .. } | ServerState::Idle { .. }
                )
            })
    }

    /// Waits until each enabled server that `which` picks has listed its tools once, or is
    /// not coming (failed, restarting, disabled), or `deadline` passes.
    pub(super) async fn wait_for(
        &self,
        which: impl Fn(&crate::config::ServerConfig) -> bool,
        deadline: tokio::time::Instant,
    ) {
        self.wait_until(which, deadline, || false).await;
    }

    /// As [`Shared::wait_for`], ending early once `found` holds.
    async fn wait_until(
        &self,
        which: impl Fn(&crate::config::ServerConfig) -> bool,
        deadline: tokio::time::Instant,
        found: impl Fn() -> bool,
    ) {
        let Servers { config, handles } = self.view();
        let awaited: Vec<usize> = (config.servers.iter().enumerate())
            .filter(|(_, s)| s.enabled && which(s))
            .map(|(i, _)| i)
            .collect();
        let settled = || found() || !awaited.iter().any(|&i| self.coming(&handles, i));
        self.wait_on_changes(&handles, deadline, settled).await;
    }

    /// Waits until `done` holds or `deadline` passes. `done` is checked again at each
    /// batch of lists the registry applies ([`Registry::generation`]) and each change of
    /// state of the running servers and of `also` (handles a reload may have replaced
    /// since the wait began): what the waits above depend on changes only then, so none
    /// polls.
    async fn wait_on_changes(
        &self,
        also: &[ServerHandle],
        deadline: tokio::time::Instant,
        done: impl Fn() -> bool,
    ) {
        let mut lists = self.registry.generation();
        loop {
            // Seen before `done` looks, so a change while it looks wakes the wait below.
            lists.mark_unchanged();
            let mut states = StateChanges::of(self.handles().iter().chain(also));
            if done() || tokio::time::Instant::now() >= deadline {
                return;
            }
            tokio::select! {
                // The registry outlives `self`'s borrow: its sender is never gone here.
                _ = lists.changed() => {}
                () = states.next() => {}
                () = tokio::time::sleep_until(deadline) => return,
            }
        }
    }

    /// Why each of `names` resolved to nothing (see [`Servers::unknown`]), worked out
    /// on the blocking pool: "did you mean" takes an edit distance against every tool's name
    /// (milliseconds at 10k tools), which must not hold up the requests behind it.
    pub(super) async fn explain_unknown(&self, names: Vec<String>) -> Vec<Unknown> {
        if names.is_empty() {
            return Vec::new();
        }
        let servers = self.view();
        let registry = self.registry.clone();
        let count = names.len();
        let explained = tokio::task::spawn_blocking(move || {
            let catalog = registry.catalog();
            let trust = registry.trust();
            (names.iter())
                .map(|name| servers.explain(&catalog, &trust, name))
                .collect::<Vec<_>>()
        })
        .await;
        explained.unwrap_or_else(|err| {
            tracing::error!(error = %err, "working out an unknown name failed");
            vec![Unknown::Tool { suggestion: None }; count]
        })
    }

    /// The error text for a call of `name`, which resolved to nothing.
    pub(super) async fn unknown_message(&self, name: &str) -> String {
        let explained = self.explain_unknown(vec![name.to_owned()]).await;
        super::view::unknown_message(explained.first(), name)
    }
}

/// `now + after`, saturating: config bounds keep `after` small, and a deadline must never
/// be the reason a request panics (`startup_timeout_sec = 1.7e19` once did).
pub(super) fn deadline_after(after: Duration) -> tokio::time::Instant {
    let now = tokio::time::Instant::now();
    now.checked_add(after)
        .unwrap_or_else(|| now + Duration::from_secs(86_400))
}
