//! Lazy start and idle stop: the calls a server is asked for, counted so an idle stop never
//! cuts one, and the wake-up that starts a server not running, joined by every caller
//! that arrives while it starts.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::sync::watch;
use tokio_util::sync::CancellationToken;

use super::{DownstreamError, ServerState};
use crate::sync::lock;

/// What a server is asked for: shared by its handle (which counts calls and wakes it) and
/// its supervisor (which stops it when idle and waits for the wake-up).
///
/// A request counts from before it looks for the connection, and the idle stop is decided
/// under the same lock ([`Demand::stop_if_idle`]): a request either counts before the
/// decision (no stop) or finds the connection already gone and the server `Idle` (and
/// wakes it). None is sent on a connection that is being stopped for idleness.
#[derive(Debug)]
pub(crate) struct Demand {
    wake: tokio::sync::Notify,
    /// Notified when the last request in flight ends: what an idle wait that saw a request
    /// in flight waits for.
    quiet: tokio::sync::Notify,
    counts: Mutex<Counts>,
}

/// Requests in flight and when the last one ended.
#[derive(Debug)]
struct Counts {
    busy: usize,
    last: tokio::time::Instant,
}

impl Demand {
    pub(super) fn new() -> Demand {
        Demand {
            wake: tokio::sync::Notify::new(),
            quiet: tokio::sync::Notify::new(),
            counts: Mutex::new(Counts {
                busy: 0,
                last: tokio::time::Instant::now(),
            }),
        }
    }

    /// A request starts; it counts until the guard drops.
    pub(super) fn begin(self: &Arc<Self>) -> Busy {
        let mut counts = lock(&self.counts);
        counts.busy += 1;
        counts.last = tokio::time::Instant::now();
        drop(counts);
        Busy(self.clone())
    }

    /// Now counts as the last activity (a connection that just came up is not idle).
    pub(crate) fn touch(&self) {
        lock(&self.counts).last = tokio::time::Instant::now();
    }

    /// How long no request has been in flight; `None` while one is.
    pub(crate) fn idle_for(&self) -> Option<Duration> {
        let counts = lock(&self.counts);
        (counts.busy == 0).then(|| counts.last.elapsed())
    }

    /// Resolves once no request has been in flight for `idle` (as seen then: confirm with
    /// [`Demand::stop_if_idle`]).
    pub(crate) async fn idle(&self, idle: Duration) {
        loop {
            // Listening before looking: a request that ends meanwhile still wakes us.
            let quiet = self.quiet.notified();
            let mut quiet = std::pin::pin!(quiet);
            quiet.as_mut().enable();
            match self.idle_for() {
                Some(elapsed) if elapsed >= idle => return,
                Some(elapsed) => tokio::time::sleep(idle - elapsed).await,
                None => quiet.await,
            }
        }
    }

    /// Runs `stop` (which takes the connection away and says `Idle`) when no request has
    /// been in flight for `idle`, under the lock every request counts itself with; `true`
    /// when it ran.
    pub(crate) fn stop_if_idle(&self, idle: Duration, stop: impl FnOnce()) -> bool {
        let counts = lock(&self.counts);
        if counts.busy > 0 || counts.last.elapsed() < idle {
            return false;
        }
        stop();
        true
    }

    /// Resolves at the next wake-up (a call to a server that is not running).
    pub(crate) async fn woken(&self) {
        self.wake.notified().await;
    }
}

/// One request in flight; its drop is the request's end.
pub(super) struct Busy(Arc<Demand>);

impl Drop for Busy {
    fn drop(&mut self) {
        let mut counts = lock(&self.0.counts);
        counts.busy = counts.busy.saturating_sub(1);
        counts.last = tokio::time::Instant::now();
        let quiet = counts.busy == 0;
        drop(counts);
        if quiet {
            self.0.quiet.notify_waiters();
        }
    }
}

impl Demand {
    /// The connection of a server that is not running. One that is [`ServerState::Idle`]
    /// is woken; a request to a server that is `Starting` (woken by another request, started
    /// eagerly, or restarted by a reload) joins that start; each waits until the server is
    /// ready or has failed (its supervisor bounds that by `startup_timeout`). A connection
    /// that is closing (stopped by a reload) is waited out until the state says what comes
    /// next. Any other state (restarting after a crash, failed, disabled, removed) answers at
    /// once with the state.
    ///
    /// `live` reads the server's connection (its handle's), `state` its state; `stopping`
    /// is the pool's stop.
    pub(super) async fn start<L>(
        &self,
        server: &str,
        mut state: watch::Receiver<ServerState>,
        live: impl Fn() -> Option<L>,
        cancel: &CancellationToken,
        stopping: &CancellationToken,
    ) -> Result<L, DownstreamError> {
        // Each round waits for a change of state; a few are the most a start takes
        // (idle -> starting -> ready), more means it keeps failing.
        for _ in 0..4 {
            if let Some(live) = live() {
                return Ok(live);
            }
            let now = state.borrow_and_update().clone();
            match now {
                ServerState::Idle { .. } => {
                    tracing::info!(server = %server, "starting on demand");
                    self.wake.notify_one();
                }
                ServerState::Starting => {
                    tracing::debug!(server = %server, "waiting for the start under way");
                }
                // Ready without a connection: it is closing (a reload stops it); the next
                // state says whether it starts again.
                ServerState::Ready { .. } => {}
                _ => break,
            }
            let waiting = |s: &ServerState| match s {
                ServerState::Idle { .. } | ServerState::Starting => true,
                ServerState::Ready { .. } => live().is_none() && *s == now,
                _ => false,
            };
            tokio::select! {
                changed = state.wait_for(|s| !waiting(s)) => {
                    if changed.is_err() {
                        break;
                    }
                }
                () = cancel.cancelled() => return Err(DownstreamError::Cancelled),
                () = stopping.cancelled() => break,
            }
        }
        live().ok_or_else(|| DownstreamError::NotReady {
            server: server.to_owned(),
            state: state.borrow().clone(),
        })
    }
}
