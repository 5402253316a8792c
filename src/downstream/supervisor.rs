//! One server's lifetime: connect within the startup deadline, serve until the connection
//! ends or we stop, then restart after a backoff delay (or give up when retrying is futile).
//!
//! The supervisor alone writes the server's state and its `Live` slot; calls read clones.
//! The connect step (spawn or dial, handshake, first lists) is `connect.rs`.

use std::collections::{BTreeSet, HashSet};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use rmcp::model::Prompt;
use rmcp::service::{RoleClient, RunningService};
use tokio::sync::{mpsc, watch};
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

use super::backoff::{Backoff, DEFAULT_HEALTHY_AFTER, Restarts, SplitMix};
use super::connect::{self, Child, ConnectError, Dial, Offer};
use super::demand::Demand;
use super::handle::{Listed, Live, Subscriptions};
use super::handler::{Handler, Relist};
use super::listing;
use super::progress::ProgressRoutes;
use super::session_watch::BrokenCause;
use super::tool_cache::{self, CachedList};
use super::upstream::{ClientLink, InFlight};
use super::{Event, ServerState};
use crate::config::{ServerConfig, Start};
use crate::server_tool::ServerTool;
use crate::sync::lock;

/// How long a closing connection gets before its process group is terminated.
const CLOSE_GRACE: Duration = Duration::from_secs(2);

/// Why a supervisor was stopped other than by the pool's shutdown; read once by it.
pub(super) type StopCause = Arc<Mutex<Option<&'static str>>>;

pub(super) struct Supervisor {
    pub name: Arc<str>,
    pub index: usize,
    pub config: ServerConfig,
    pub state: watch::Sender<ServerState>,
    pub live: Arc<Mutex<Option<Live>>>,
    pub events: mpsc::UnboundedSender<Event>,
    pub stop: CancellationToken,
    /// Holds the client's link once the supervisor may start connecting.
    pub link: watch::Receiver<Option<ClientLink>>,
    /// Resource URIs to subscribe to again on each new connection.
    pub subscriptions: Subscriptions,
    /// The longest answer read from a stdio server (`[settings] max_message_bytes`).
    pub max_message_bytes: usize,
    /// Calls to the server: what idle stop watches and what wakes a server not running.
    pub demand: Arc<Demand>,
    /// The tool changes the server announced, shared with its handle and handlers.
    pub tool_changes: super::handle::ToolChanges,
    /// Why the pool stopped this server, when a reload did: its calls are told that.
    pub stopped_because: StopCause,
}

/// How a connection that was up came to an end.
enum Ended {
    /// We were told to stop.
    Stopped,
    /// Idle (or a lazy server's first listing done): not running until the next call.
    Idle,
    /// It ended by itself: the cause and the child's stderr tail.
    Crashed(String, Option<String>),
}

/// Why we end a connection that is up.
#[derive(Clone, Copy, PartialEq)]
enum Stop {
    Shutdown,
    Idle,
}

/// What a connection is made for.
#[derive(Clone, Copy, PartialEq)]
enum Purpose {
    /// Serving calls; stopped when idle for `idle_stop_sec`, if set.
    Serve,
    /// Listing once: a lazy server without a cached tool list starts to fill the cache,
    /// and stops as soon as it is idle.
    List,
}

impl Purpose {
    /// How long the connection may be idle before it stops; `None`: never.
    fn idle_after(self, config: &ServerConfig) -> Option<Duration> {
        match self {
            Purpose::List => Some(Duration::ZERO),
            Purpose::Serve => config.idle_stop,
        }
    }
}

/// How [`Supervisor::attend`] let go of a connection.
enum Until {
    /// It ended by itself: a crash, or a server that quit.
    Crashed,
    /// We stop it; `closed`: it had already ended.
    Stopped { stop: Stop, closed: bool },
}

/// What [`Supervisor::attend`] answers re-list requests with.
struct Attended<'a> {
    relist: &'a mut mpsc::UnboundedReceiver<Relist>,
    peer: &'a rmcp::Peer<RoleClient>,
    instructions: &'a Option<String>,
    listed: &'a Listed,
}

/// Why a connection that ended by itself ended: the child's exit and stderr, what broke
/// an HTTP session, or that the connection closed.
async fn crash_cause(child: Option<&mut Child>, broken: &BrokenCause) -> (String, Option<String>) {
    let gone = child.is_some();
    let cause = match child {
        Some(child) => child.cause().await,
        None => None,
    };
    cause
        .or_else(|| lock(broken).take().map(|c| (c.to_string(), None)))
        .unwrap_or_else(|| {
            let cause = if gone {
                "closed its stdout (the connection) while still running"
            } else {
                "the connection closed"
            };
            (cause.to_owned(), None)
        })
}

/// A cause for the state and the log: redacted, the stderr tail apart.
fn redacted(cause: &str, stderr: Option<String>) -> (String, Option<String>) {
    (
        crate::redact::redact(cause).into_owned(),
        stderr.map(|s| crate::redact::redact(&s).into_owned()),
    )
}

/// A connection that finished its handshake and first listing.
struct Connection {
    running: RunningService<RoleClient, Handler>,
    ct: CancellationToken,
    relist: mpsc::UnboundedReceiver<Relist>,
    progress: Arc<ProgressRoutes>,
    calls: Arc<InFlight>,
    child: Option<Child>,
    offer: Offer,
    /// The tool changes announced before `offer` was listed: what it answers.
    changes: u64,
    /// Why an HTTP connection broke, left by its [`SessionWatch`].
    broken: BrokenCause,
}

impl Supervisor {
    pub(super) async fn run(mut self) {
        let mut restarts = Restarts::new(Backoff::default(), DEFAULT_HEALTHY_AFTER);
        let mut rng = SplitMix::from_time(self.index as u64);
        // A lazy server with a cached list waits for its first call; without one, it
        // starts now to fill the cache and stops once it has listed.
        let lazy = self.config.start == Start::Lazy;
        let mut on_demand = lazy && self.publish_cached().await;
        let mut purpose = if lazy && !on_demand {
            Purpose::List
        } else {
            Purpose::Serve
        };
        if purpose == Purpose::List {
            tracing::info!("lazy server without a cached tool list: starting it once to list");
        }
        let link = tokio::select! {
            () = self.stop.cancelled() => return,
            link = self.link.wait_for(Option::is_some) => {
                link.ok().and_then(|l| l.clone()).unwrap_or_else(ClientLink::none)
            }
        };
        loop {
            if on_demand {
                self.go_idle();
                tokio::select! {
                    () = self.stop.cancelled() => return,
                    () = self.demand.woken() => {}
                }
                on_demand = false;
                self.state.send_replace(ServerState::Starting);
            }
            let started = Instant::now();
            let connected = tokio::select! {
                () = self.stop.cancelled() => return,
                connected = self.connect(&link) => connected,
            };
            let (cause, stderr) = match connected {
                Err(err @ ConnectError::NeedsLogin { .. }) => {
                    let cause = err.to_string();
                    tracing::warn!(%cause, "server needs a login; waiting for one");
                    self.state.send_replace(ServerState::NeedsLogin { cause });
                    tokio::select! {
                        () = self.stop.cancelled() => return,
                        () = login_changed() => continue,
                    }
                }
                Err(err) if err.is_permanent() => {
                    let (cause, stderr) = redacted(&err.to_string(), err.stderr());
                    tracing::error!(%cause, stderr = stderr.as_deref().unwrap_or(""), "server failed; not retrying");
                    self.state
                        .send_replace(ServerState::Failed { cause, stderr });
                    return;
                }
                Err(err) => redacted(&err.to_string(), err.stderr()),
                Ok(connection) => match self.serve(connection, started, purpose).await {
                    Ended::Crashed(cause, stderr) => redacted(&cause, stderr),
                    Ended::Stopped => return,
                    Ended::Idle => {
                        purpose = Purpose::Serve;
                        on_demand = true;
                        continue;
                    }
                },
            };
            let (attempt, delay) = restarts.next(started.elapsed(), rng.sample());
            tracing::warn!(
                %cause,
                stderr = stderr.as_deref().unwrap_or(""),
                attempt,
                delay_ms = delay.as_millis() as u64,
                "server stopped; restarting"
            );
            self.state.send_replace(ServerState::Restarting {
                attempt,
                cause,
                stderr,
            });
            tokio::select! {
                () = self.stop.cancelled() => return,
                () = tokio::time::sleep(delay) => {}
            }
        }
    }

    /// Spawns or dials the server, then handshake and full lists (tools, and prompts and
    /// resources when declared), all within `startup_timeout` (see `connect.rs`).
    async fn connect(&self, link: &ClientLink) -> Result<Connection, ConnectError> {
        let (relist_tx, relist) = mpsc::unbounded_channel();
        let changes = self.changes();
        let progress = Arc::new(ProgressRoutes::default());
        let calls = Arc::new(InFlight::default());
        let handler = Handler {
            server: self.name.clone(),
            index: self.index,
            relist: relist_tx,
            events: self.events.clone(),
            link: link.clone(),
            calls: calls.clone(),
            tool_changes: self.tool_changes.clone(),
        };
        let ct = self.stop.child_token();
        let broken = BrokenCause::default();
        let dial = Dial {
            handler,
            ct: ct.clone(),
            config: &self.config,
            progress: &progress,
            calls: &calls,
        };
        let (running, offer, child) = connect::dial(dial, self.max_message_bytes, &broken).await?;
        Ok(Connection {
            running,
            ct,
            relist,
            progress,
            calls,
            child,
            broken,
            offer,
            changes,
        })
    }

    /// How many tool changes the server has announced so far.
    fn changes(&self) -> u64 {
        (self.tool_changes).load(std::sync::atomic::Ordering::SeqCst)
    }

    /// Publishes the connection, answers re-list requests, and says how it ended: by
    /// itself (the cause and the child's stderr tail), told to stop, or idle (see
    /// [`Purpose`]).
    async fn serve(&self, connection: Connection, started: Instant, purpose: Purpose) -> Ended {
        let Connection {
            running,
            ct,
            mut relist,
            progress,
            calls,
            mut child,
            broken,
            offer,
            changes,
        } = connection;
        let instructions = running.peer_info().and_then(|i| i.instructions.clone());
        let peer = running.peer().clone();
        let (ended_tx, ended) = watch::channel(None);
        let listed: Listed = Arc::new(Mutex::new(names(&offer.tools)));
        // Calls go around rmcp's loop only to a server of the handshake era (`raw_call.rs`).
        let handshake = running
            .peer_info()
            .is_some_and(|info| info.protocol_version.has_initialize());
        let raw = (child.as_ref())
            .and_then(|child| child.raw.clone())
            .filter(|_| handshake);
        *lock(&self.live) = Some(Live {
            peer: peer.clone(),
            progress,
            calls,
            ended,
            tool_timeout: self.config.tool_timeout,
            listed: listed.clone(),
            raw,
        });
        self.publish_offer(offer, instructions.clone(), started.elapsed(), changes);
        self.resubscribe(&peer).await;
        self.demand.touch();
        let waiting = running.waiting();
        tokio::pin!(waiting);
        let attended = Attended {
            relist: &mut relist,
            peer: &peer,
            instructions: &instructions,
            listed: &listed,
        };
        let until = self.attend(waiting.as_mut(), attended, &ct, purpose).await;
        *lock(&self.live) = None;
        let cause = match until {
            Until::Crashed => crash_cause(child.as_mut(), &broken).await,
            Until::Stopped { stop, closed } => {
                // Stopping: close gracefully, then make sure the whole group is gone.
                if !closed && tokio::time::timeout(CLOSE_GRACE, waiting).await.is_err() {
                    tracing::debug!("connection did not close in time");
                }
                ended_tx.send_replace(Some(self.stop_reason(stop)));
                if let Some(child) = child {
                    child.group.terminate().await;
                }
                return match stop {
                    Stop::Shutdown => Ended::Stopped,
                    Stop::Idle => Ended::Idle,
                };
            }
        };
        ended_tx.send_replace(Some(crate::redact::redact(&cause.0).into_owned()));
        if let Some(child) = child {
            // A crashed server's grandchildren must not outlive it.
            child.group.terminate().await;
        }
        Ended::Crashed(cause.0, cause.1)
    }

    /// What the calls still waiting on a connection we stopped are told.
    fn stop_reason(&self, stop: Stop) -> String {
        match stop {
            Stop::Shutdown => lock(&self.stopped_because)
                .take()
                .unwrap_or("mcp-defer is shutting down")
                .to_owned(),
            Stop::Idle => "stopped while idle".to_owned(),
        }
    }

    /// Logs the server ready and publishes what its first listing offered.
    fn publish_offer(
        &self,
        offer: Offer,
        instructions: Option<String>,
        ready_after: Duration,
        changes: u64,
    ) {
        tracing::info!(
            tools = offer.tools.len(),
            prompts = offer.prompts.as_ref().map(Vec::len),
            resources = offer.resources.as_ref().map(|(r, _)| r.len()),
            templates = offer.resources.as_ref().map(|(_, t)| t.len()),
            ready_ms = ready_after.as_millis() as u64,
            "server ready"
        );
        if let Some(prompts) = offer.prompts {
            self.publish_prompts(prompts);
        }
        if let Some(resources) = offer.resources {
            self.publish_resources(resources);
        }
        self.publish(offer.tools, instructions, Some(ready_after), changes);
    }

    /// Attends a live connection until it ends by itself, the pool stops it, or it is
    /// stopped for idleness: answers the server's re-list requests meanwhile.
    async fn attend<F: Future<Output: std::fmt::Debug>>(
        &self,
        mut waiting: std::pin::Pin<&mut F>,
        attended: Attended<'_>,
        ct: &CancellationToken,
        purpose: Purpose,
    ) -> Until {
        let Attended {
            relist,
            peer,
            instructions,
            listed,
        } = attended;
        let idle_after = purpose.idle_after(&self.config);
        loop {
            tokio::select! {
                quit = &mut waiting => {
                    tracing::debug!(?quit, "connection ended");
                    // Stopping cancels the connection too (its token is a child of ours):
                    // when it ends first, this is still a stop, not a crash to restart.
                    return if self.stop.is_cancelled() {
                        Until::Stopped { stop: Stop::Shutdown, closed: true }
                    } else {
                        Until::Crashed
                    };
                }
                Some(first) = relist.recv() => {
                    let mut due = BTreeSet::from([first]);
                    while let Ok(more) = relist.try_recv() {
                        due.insert(more);
                    }
                    for kind in due {
                        self.relist(kind, peer, instructions, listed).await;
                    }
                }
                () = self.stop.cancelled() => {
                    ct.cancel();
                    return Until::Stopped { stop: Stop::Shutdown, closed: false };
                }
                () = self.demand.idle(idle_after.unwrap_or_default()), if idle_after.is_some() => {
                    if self.stop_if_idle(idle_after.unwrap_or_default(), purpose) {
                        ct.cancel();
                        return Until::Stopped { stop: Stop::Idle, closed: false };
                    }
                }
            }
        }
    }

    /// Takes the connection away and says `Idle` when no request came in for `idle`;
    /// decided under the lock requests count themselves with: a request that came in
    /// meanwhile keeps the server; one that comes after finds no connection and the server
    /// `Idle`, and wakes the next connection.
    fn stop_if_idle(&self, idle: Duration, purpose: Purpose) -> bool {
        let stopped = self.demand.stop_if_idle(idle, || {
            *lock(&self.live) = None;
            self.go_idle();
        });
        if stopped {
            match purpose {
                Purpose::List => tracing::info!("listed; a lazy server stops until its first call"),
                Purpose::Serve => tracing::info!(
                    idle_stop_sec = self.config.idle_stop.map(|d| d.as_secs_f64()),
                    "idle; stopping until the next call"
                ),
            }
        }
        stopped
    }

    /// Fetches one list again after the server said it changed, and publishes it.
    async fn relist(
        &self,
        kind: Relist,
        peer: &rmcp::Peer<RoleClient>,
        instructions: &Option<String>,
        listed: &Listed,
    ) {
        let after = self.config.startup_timeout;
        match kind {
            Relist::Tools => {
                let changes = self.changes();
                match tokio::time::timeout(after, listing::tools(peer, &self.config)).await {
                    Ok(Ok(tools)) => {
                        *lock(listed) = names(&tools);
                        self.publish(tools, instructions.clone(), None, changes);
                    }
                    Ok(Err(err)) => tracing::warn!(cause = %err, "re-listing tools failed"),
                    Err(_) => tracing::warn!("re-listing tools timed out"),
                }
            }
            Relist::Prompts => match tokio::time::timeout(after, listing::prompts(peer)).await {
                Ok(Some(prompts)) => self.publish_prompts(prompts),
                Ok(None) => tracing::debug!("prompts changed on a server without prompts"),
                Err(_) => tracing::warn!("re-listing prompts timed out"),
            },
            Relist::Resources => {
                match tokio::time::timeout(after, listing::resources(peer)).await {
                    Ok(Some(resources)) => self.publish_resources(resources),
                    Ok(None) => tracing::debug!("resources changed on a server without resources"),
                    Err(_) => tracing::warn!("re-listing resources timed out"),
                }
            }
        }
    }

    /// Subscribes again, on a new connection, to what the client subscribed to before.
    async fn resubscribe(&self, peer: &rmcp::Peer<RoleClient>) {
        let uris: Vec<String> = lock(&self.subscriptions).iter().cloned().collect();
        for uri in uris {
            #[expect(
                deprecated,
                reason = "downstream connections use the handshake era's subscribe"
            )]
            let subscribe = peer.subscribe(rmcp::model::SubscribeRequestParams::new(uri.clone()));
            match tokio::time::timeout(self.config.startup_timeout, subscribe).await {
                Ok(Ok(())) => tracing::debug!(%uri, "subscribed again after reconnecting"),
                Ok(Err(err)) => tracing::warn!(%uri, cause = %err, "subscribing again failed"),
                Err(_) => tracing::warn!(%uri, "subscribing again timed out"),
            }
        }
    }

    fn publish_prompts(&self, prompts: Vec<Prompt>) {
        let _ = self.events.send(Event::Prompts {
            server: self.index,
            prompts,
        });
    }

    fn publish_resources(&self, (resources, templates): listing::Resources) {
        let _ = self.events.send(Event::Resources {
            server: self.index,
            resources,
            templates,
        });
    }

    /// Says the server is not running until the next call, with the tools it last listed.
    fn go_idle(&self) {
        self.state.send_modify(|state| {
            let tools = match state {
                ServerState::Ready { tools, .. } | ServerState::Idle { tools } => *tools,
                _ => 0,
            };
            *state = ServerState::Idle { tools };
        });
    }

    /// A lazy server's cached list, sent as its list: `true` when there was one.
    async fn publish_cached(&self) -> bool {
        let config = self.config.clone();
        let Ok(Some(cached)) = tokio::task::spawn_blocking(move || tool_cache::load(&config)).await
        else {
            return false;
        };
        tracing::info!(
            tools = cached.tools.len(),
            "lazy server: tools from the cache; it starts at the first call"
        );
        self.state.send_replace(ServerState::Idle {
            tools: cached.tools.len(),
        });
        let _ = self.events.send(Event::Tools {
            server: self.index,
            tools: cached.tools,
            instructions: cached.instructions,
            changes: self.changes(),
        });
        true
    }

    /// Sends the list to the catalog writer first, then the state: whoever sees `Ready`
    /// finds the tools already queued. A lazy server's list is also kept in the tool
    /// cache, for the next run.
    fn publish(
        &self,
        tools: Vec<ServerTool>,
        instructions: Option<String>,
        ready_after: Option<Duration>,
        changes: u64,
    ) {
        if self.config.start == Start::Lazy {
            let config = self.config.clone();
            let list = CachedList {
                tools: tools.clone(),
                instructions: instructions.clone(),
            };
            tokio::task::spawn_blocking(move || tool_cache::store(&config, &list));
        }
        let count = tools.len();
        let _ = self.events.send(Event::Tools {
            server: self.index,
            tools,
            instructions,
            changes,
        });
        self.state.send_modify(|state| {
            let ready_after = match (ready_after, &*state) {
                (Some(after), _) => after,
                (None, ServerState::Ready { ready_after, .. }) => *ready_after,
                (None, _) => Duration::ZERO,
            };
            *state = ServerState::Ready {
                tools: count,
                ready_after,
            };
        });
    }
}

/// The names in a tool list, for [`Live`]'s check that a call names a listed tool.
fn names(tools: &[ServerTool]) -> Arc<HashSet<String>> {
    Arc::new(tools.iter().map(|t| t.name().to_owned()).collect())
}

/// How often a server that needs a login looks for one in the token file.
const LOGIN_POLL: Duration = Duration::from_secs(2);

/// Resolves once the token file changed (a `mcp-defer login` in another terminal): the
/// server is then tried again, so a running session picks up the login without a restart.
async fn login_changed() {
    let stamp = || {
        crate::oauth::TokenFile::default_location()
            .ok()
            .and_then(|file| std::fs::metadata(file.path()).ok())
            .and_then(|meta| meta.modified().ok())
    };
    let before = stamp();
    loop {
        tokio::time::sleep(LOGIN_POLL).await;
        if stamp() != before {
            return;
        }
    }
}
