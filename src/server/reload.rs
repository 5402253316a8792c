//! Hot reload: `servers.toml` changed on disk (or SIGHUP came) while `serve` runs.
//!
//! The file is read again through `config` (all its checks); a file that fails them is
//! reported in the log and in the next meta-tool answers, and the running servers stay.
//! Otherwise [`diff::plan`] says what to do per server name: added ones start, removed ones
//! stop, changed ones restart, the rest are not touched (same process). Positions never
//! shift (the catalog indexes by them): a removed server keeps its slot, its handle says
//! `Removed`, its listed tools stay listed (append-only) and answer that it was removed;
//! a name that comes back takes its old slot, so its tools keep their names. Every view
//! (stdio's one, or each HTTP path) takes the new running config before the new servers
//! start, so their lists reach the catalog through the one ingest path and every session
//! that shows them is told (`publish`). `[settings]` and `[profiles]` apply at start
//! only: a change to them is named in the log with "restart to apply".

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use tokio::sync::{Mutex, mpsc};
use tokio_util::sync::CancellationToken;

use super::shared::Shared;
use super::view::Servers;
use crate::config::diff::{self, Action};
use crate::config::{Config, ConfigError, Profile, ServerConfig, Settings};
use crate::downstream::{Pool, ServerHandle, ServerState, chain};

/// How long the file must stay quiet before it is read: editors save by writing a
/// temporary file and renaming it over the old one (several events within milliseconds),
/// and a file read between them would be half-written or missing.
const DEBOUNCE: Duration = Duration::from_millis(250);

/// Where the running config came from: what a reload reads again.
#[derive(Debug, Clone)]
pub(crate) struct Source {
    pub path: PathBuf,
    /// `serve --profile NAME`: the reloaded file is seen through the same profile.
    pub profile: Option<String>,
}

impl Source {
    /// Reads and checks the file, as at start.
    fn load(&self) -> Result<Config, ConfigError> {
        let config = Config::load(&self.path)?;
        Ok(match &self.profile {
            Some(name) => config.for_profile(name)?.0,
            None => config,
        })
    }
}

/// One view of the servers that a reload updates: stdio's session state, or one HTTP path.
pub(crate) struct View {
    pub shared: Arc<Shared>,
    /// The positions of the pool this view serves, in its own order; `None`: all of them,
    /// at the same positions (the view that sees servers added by a reload).
    pub positions: Option<Vec<usize>>,
}

impl View {
    /// This view's part of the running servers.
    fn running(&self, config: &Arc<Config>, handles: &[ServerHandle]) -> Servers {
        match &self.positions {
            None => Servers {
                config: config.clone(),
                handles: handles.into(),
            },
            Some(positions) => Servers {
                config: Arc::new(Config {
                    servers: (positions.iter())
                        .filter_map(|&i| config.servers.get(i).cloned())
                        .collect(),
                    profiles: Vec::new(),
                    ..Config::clone(config)
                }),
                handles: (positions.iter())
                    .filter_map(|&i| handles.get(i).cloned())
                    .collect(),
            },
        }
    }
}

/// Owns what a reload changes: the pool (shared with `serve`, which stops it at the end)
/// and the running servers by position.
pub(crate) struct Reloader {
    source: Source,
    /// The one async lock held across `.await` on purpose: a reload holds it while it stops
    /// and launches supervisors, and `serve`'s shutdown takes it for `stop_all`, so a
    /// shutdown waits for a reload in progress instead of missing a supervisor it launched.
    /// Nothing on a request's path takes it.
    pool: Arc<Mutex<Pool>>,
    views: Vec<View>,
    /// Every position ever run, with its last config.
    running: Vec<ServerConfig>,
    removed: Vec<bool>,
    /// What the process started with; a reload keeps them.
    settings: Settings,
    profiles: Vec<Profile>,
}

impl Reloader {
    pub(crate) fn new(
        source: Source,
        started: &Config,
        pool: Arc<Mutex<Pool>>,
        views: Vec<View>,
    ) -> Reloader {
        Reloader {
            source,
            pool,
            views,
            running: started.servers.clone(),
            removed: vec![false; started.servers.len()],
            settings: started.settings.clone(),
            profiles: started.profiles.clone(),
        }
    }

    /// Reloads on each change of the file and each SIGHUP until `stop`. The SIGHUP handler
    /// is installed before this returns, so a SIGHUP sent once `serve` answers reloads.
    ///
    /// # Errors
    /// When the SIGHUP handler cannot be installed.
    pub(crate) fn start(self, stop: CancellationToken) -> std::io::Result<()> {
        let hangup = crate::platform::Hangup::new()?;
        tokio::spawn(self.run(hangup, stop));
        Ok(())
    }

    async fn run(mut self, mut hangup: crate::platform::Hangup, stop: CancellationToken) {
        // Dropped when this task ends, which stops watching.
        let mut watch = match Watch::file(&self.source.path) {
            Ok(watch) => Some(watch),
            Err(err) => {
                tracing::warn!(
                    path = %self.source.path.display(),
                    error = %err,
                    "cannot watch the config file; send SIGHUP to reload it"
                );
                None
            }
        };
        loop {
            tokio::select! {
                () = stop.cancelled() => return,
                Some(()) = hangup.recv() => tracing::info!("SIGHUP: reloading the config file"),
                () = Watch::changed_opt(watch.as_mut()) => {
                    tracing::info!(path = %self.source.path.display(), "the config file changed; reloading it");
                }
            }
            self.reload().await;
        }
    }

    /// Reads the file again and applies it, or reports why not and keeps what runs.
    async fn reload(&mut self) {
        let source = self.source.clone();
        let loaded = match tokio::task::spawn_blocking(move || source.load()).await {
            Ok(loaded) => loaded.map_err(|err| chain(&err)),
            Err(err) => Err(format!("reading the config file failed: {err}")),
        };
        let new = match loaded {
            Ok(new) => new,
            Err(err) => {
                let problem = crate::redact::redact(&err).into_owned();
                tracing::error!(
                    error = %problem,
                    "the config file was not reloaded; the running servers stay as they are"
                );
                for view in &self.views {
                    view.shared.set_reload_problem(Some(problem.clone()));
                }
                return;
            }
        };
        for view in &self.views {
            view.shared.set_reload_problem(None);
        }
        let settings = diff::settings_changes(&self.settings, &new.settings);
        if !settings.is_empty() {
            tracing::warn!(
                keys = %settings.join(", "),
                "[settings] changed in the config file; restart mcp-defer to apply"
            );
        }
        if self.profiles != new.profiles {
            tracing::warn!("[profiles] changed in the config file; restart mcp-defer to apply");
        }
        let plan = diff::plan(&self.running, &self.removed, &new);
        if plan.is_empty() {
            tracing::info!("config reloaded; no server changed");
            return;
        }
        tracing::info!(
            added = ?[plan.names(Action::Add), plan.names(Action::Readd)].concat(),
            removed = ?plan.names(Action::Remove),
            restarted = ?plan.names(Action::Restart),
            "config reloaded"
        );
        self.apply(plan).await;
    }

    /// Stops what goes and restarts what changed, publishes the running servers to every
    /// view, then starts what comes: the views know a server before its first list.
    async fn apply(&mut self, plan: diff::Plan) {
        let mut pool = self.pool.lock().await;
        for &(index, action) in &plan.actions {
            match action {
                Action::Remove => pool.stop_one(index, ServerState::Removed).await,
                Action::Restart => pool.stop_one(index, ServerState::Starting).await,
                Action::Add => {
                    let added = pool.add(&plan.servers[index]);
                    debug_assert_eq!(added, index, "positions are appended in order");
                }
                Action::Readd => {}
            }
        }
        let config = Arc::new(Config {
            path: self.source.path.clone(),
            settings: self.settings.clone(),
            servers: plan.servers.clone(),
            profiles: self.profiles.clone(),
            // Each view's registry keeps the filter it started with.
            tools: crate::config::ToolFilter::default(),
        });
        let handles: Vec<ServerHandle> = pool.iter().cloned().collect();
        for view in &self.views {
            view.shared.set_running(view.running(&config, &handles));
        }
        for &(index, action) in &plan.actions {
            if action != Action::Remove {
                pool.launch(index, &plan.servers[index]);
            }
        }
        self.running = plan.servers;
        self.removed = plan.removed;
    }
}

/// One file watched for changes, each save's burst of events taken as one.
///
/// The watch is on the file's directory (an editor's rename replaces the file, and a watch
/// on the old file would see nothing after it), so it sees every file there, the log
/// `serve` may be writing beside its config included. Events about other files are
/// dropped in notify's callback, before anything is logged or woken; and `notify`'s own
/// per-event trace lines stay off whatever the log level (`cli/logging.rs`): each such line
/// written into the folder would be the next event (issue 35: 29-41 MB/s while idle).
pub(crate) struct Watch {
    /// Dropping it stops watching.
    _watcher: notify::RecommendedWatcher,
    events: mpsc::UnboundedReceiver<()>,
}

impl Watch {
    /// Watches `path`.
    ///
    /// # Errors
    /// When the watch cannot be set up (no inotify, the directory is gone).
    pub(crate) fn file(path: &Path) -> notify::Result<Watch> {
        use notify::{EventKind, RecursiveMode, Watcher};
        let (tx, events) = mpsc::unbounded_channel();
        let name = path.file_name().map(ToOwned::to_owned);
        let dir = match path.parent() {
            Some(dir) if !dir.as_os_str().is_empty() => dir.to_owned(),
            _ => PathBuf::from("."),
        };
        let mut watcher =
            notify::recommended_watcher(move |event: notify::Result<notify::Event>| {
                let Ok(event) = event else { return };
                if matches!(event.kind, EventKind::Access(_)) {
                    return;
                }
                if (event.paths.iter()).any(|p| p.file_name().map(ToOwned::to_owned) == name) {
                    let _ = tx.send(());
                }
            })?;
        watcher.watch(&dir, RecursiveMode::NonRecursive)?;
        Ok(Watch {
            _watcher: watcher,
            events,
        })
    }

    /// Returns once the file has changed and then stayed quiet for [`DEBOUNCE`] (the
    /// editor has finished saving). Dropped mid-burst, the events it took are gone: both
    /// callers drop it only to stop or to reload anyway.
    pub(crate) async fn changed(&mut self) {
        if self.events.recv().await.is_none() {
            return std::future::pending().await;
        }
        loop {
            tokio::select! {
                () = tokio::time::sleep(DEBOUNCE) => return,
                Some(()) = self.events.recv() => {}
            }
        }
    }

    /// [`Watch::changed`] of a watch that may not exist: never, without one.
    pub(crate) async fn changed_opt(watch: Option<&mut Watch>) {
        match watch {
            Some(watch) => watch.changed().await,
            None => std::future::pending().await,
        }
    }
}
