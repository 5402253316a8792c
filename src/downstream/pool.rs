//! All servers of a config: one supervisor per enabled server, each reached through its
//! [`ServerHandle`]; a reload adds, stops and relaunches positions without shifting them.

use std::collections::BTreeSet;
use std::sync::{Arc, Mutex};

use tokio::sync::{mpsc, watch};
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;
use tracing::Instrument;

use super::demand::Demand;
use super::supervisor::{self, StopCause};
use super::{ClientLink, Event, ServerHandle, ServerState};
use crate::config::{Config, ServerConfig};
use crate::sync::lock;

/// All servers of a config, by their position in `Config::servers`. A position is stable
/// for the life of the pool: a server removed by a reload keeps its slot (its handle says
/// [`ServerState::Removed`]), an added one gets the next, so the catalog's server indexes
/// never shift.
pub struct Pool {
    slots: Vec<Slot>,
    stop: CancellationToken,
    events: mpsc::UnboundedSender<Event>,
    link: watch::Receiver<Option<ClientLink>>,
    max_message_bytes: usize,
}

/// One position of the pool: the handle everyone holds (the same object across restarts,
/// so clones held elsewhere stay valid), the state's sender the supervisor writes through,
/// and the running supervisor, if any.
struct Slot {
    handle: ServerHandle,
    state: watch::Sender<ServerState>,
    running: Option<(JoinHandle<()>, CancellationToken)>,
    /// Why [`Pool::stop_one`] stopped it: what its calls in flight are told.
    stopped_because: StopCause,
}

/// What a call cut by a reload that restarts its server is told. Not repeated for it:
/// the server may have done part of it (DESIGN.md invariant 4).
pub const RESTARTED_BY_RELOAD: &str = "restarted because its entry in the config file \
     changed (reload); the call was not repeated, call it again";
/// What a call cut by a reload that removes its server is told.
pub const REMOVED_BY_RELOAD: &str = "removed from the config file (reload)";

impl Pool {
    /// Starts one supervisor per enabled server, concurrently, and returns at once, with
    /// no client behind it ([`ClientLink::none`]). Cancelling `shutdown` (or calling
    /// [`Pool::shutdown`]) closes every connection.
    pub fn start(
        config: &Config,
        shutdown: CancellationToken,
    ) -> (Pool, mpsc::UnboundedReceiver<Event>) {
        let (_, link) = watch::channel(Some(ClientLink::none()));
        Pool::start_after(config, shutdown, link)
    }

    /// Like [`Pool::start`], but the supervisors spawn nothing until `link` holds the
    /// client's link: each handshake declares the client's capabilities, so they must be
    /// known first. `serve` also holds them back while it answers the handshake: spawning
    /// 20 processes takes tens of milliseconds of the thread that would answer it. A
    /// sender dropped before it sent anything starts them with [`ClientLink::none`].
    pub fn start_after(
        config: &Config,
        shutdown: CancellationToken,
        link: watch::Receiver<Option<ClientLink>>,
    ) -> (Pool, mpsc::UnboundedReceiver<Event>) {
        let (events, rx) = mpsc::unbounded_channel();
        let mut pool = Pool {
            slots: Vec::with_capacity(config.servers.len()),
            stop: shutdown.child_token(),
            events,
            link,
            max_message_bytes: config.settings.max_message_bytes,
        };
        for server in &config.servers {
            let index = pool.add(server);
            pool.launch(index, server);
        }
        (pool, rx)
    }

    /// A new position for `server` at the end, its handle `Starting` (or `Disabled`), no
    /// supervisor yet: [`Pool::launch`] starts it. Returns the position.
    pub fn add(&mut self, server: &ServerConfig) -> usize {
        let index = self.slots.len();
        let (state, receiver) = watch::channel(if server.enabled {
            ServerState::Starting
        } else {
            ServerState::Disabled
        });
        self.slots.push(Slot {
            handle: ServerHandle {
                name: server.name.as_str().into(),
                index,
                state: receiver,
                live: Arc::new(Mutex::new(None)),
                subscriptions: Arc::new(Mutex::new(BTreeSet::new())),
                demand: Arc::new(Demand::new()),
                tool_changes: Default::default(),
                stopping: self.stop.clone(),
            },
            state,
            running: None,
            stopped_because: Arc::new(Mutex::new(None)),
        });
        index
    }

    /// Starts a supervisor for `server` at `index`, which must have none running (a new
    /// position, or one [`Pool::stop_one`] stopped); a disabled server only says so. The
    /// handle stays the same object, so its clones see the new connection.
    pub fn launch(&mut self, index: usize, server: &ServerConfig) {
        let Some(slot) = self.slots.get_mut(index) else {
            tracing::error!(index, server = %server.name, "no such pool position");
            return;
        };
        if slot.running.is_some() {
            tracing::error!(server = %server.name, "a supervisor is already running here");
            return;
        }
        if !server.enabled {
            slot.state.send_replace(ServerState::Disabled);
            return;
        }
        slot.state.send_replace(ServerState::Starting);
        let stop = self.stop.child_token();
        let supervisor = supervisor::Supervisor {
            name: slot.handle.name.clone(),
            index,
            config: server.clone(),
            state: slot.state.clone(),
            live: slot.handle.live.clone(),
            events: self.events.clone(),
            stop: stop.clone(),
            link: self.link.clone(),
            subscriptions: slot.handle.subscriptions.clone(),
            max_message_bytes: self.max_message_bytes,
            demand: slot.handle.demand.clone(),
            tool_changes: slot.handle.tool_changes.clone(),
            stopped_because: slot.stopped_because.clone(),
        };
        let span = tracing::info_span!("downstream", server = %server.name);
        let task = tokio::spawn(supervisor.run().instrument(span));
        slot.running = Some((task, stop));
    }

    /// Stops the server at `index` (graceful close, then its process group is gone) and
    /// leaves its handle in `state`; its position stays taken. Calls in flight end with
    /// [`DownstreamError::Disconnected`](super::DownstreamError::Disconnected), saying the server was removed (`state` is
    /// [`ServerState::Removed`]) or restarted by a reload (any other).
    pub async fn stop_one(&mut self, index: usize, state: ServerState) {
        let Some(slot) = self.slots.get_mut(index) else {
            return;
        };
        *lock(&slot.stopped_because) = Some(if state == ServerState::Removed {
            REMOVED_BY_RELOAD
        } else {
            RESTARTED_BY_RELOAD
        });
        if let Some((task, stop)) = slot.running.take() {
            stop.cancel();
            if let Err(err) = task.await {
                tracing::warn!(error = %err, "a supervisor task failed");
            }
        }
        slot.state.send_replace(state);
    }

    pub fn get(&self, index: usize) -> Option<&ServerHandle> {
        self.slots.get(index).map(|slot| &slot.handle)
    }

    pub fn iter(&self) -> impl Iterator<Item = &ServerHandle> {
        self.slots.iter().map(|slot| &slot.handle)
    }

    /// Waits until every server's first attempt has concluded (ready, failed, restarting
    /// or disabled). Bounded by the servers' startup timeouts.
    pub async fn settled(&self) {
        for handle in self.iter() {
            handle.settled().await;
        }
    }

    /// Closes every connection and waits until each child and its process group is gone
    /// (graceful close, a bounded wait, then SIGKILL to the group).
    pub async fn shutdown(mut self) {
        self.stop_all().await;
    }

    /// [`Pool::shutdown`] for a pool that is shared (`serve` shares it with the reloader).
    pub async fn stop_all(&mut self) {
        self.stop.cancel();
        for slot in &mut self.slots {
            if let Some((task, _)) = slot.running.take()
                && let Err(err) = task.await
            {
                tracing::warn!(error = %err, "a supervisor task failed");
            }
        }
    }
}
