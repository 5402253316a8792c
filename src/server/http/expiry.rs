//! The HTTP sessions that are open, when each was last used, and how many requests each
//! has in flight: rmcp's in-memory `LocalSessionManager` behind our own expiry.
//!
//! rmcp's own idle timeout stops a session's worker but leaves its id in the manager's
//! map, so a late request gets a 500 instead of the 404 "session not found" the spec
//! prescribes (and the map grows). Here a session unused for `session_idle_sec`, with
//! nothing in flight, is closed through the manager: its id is forgotten (its next request
//! gets 404 and the client re-initializes), its worker ends, and with it the
//! [`super::DeferServer`] holding that client's lists.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures_core::Stream;
use rmcp::model::{ClientJsonRpcMessage, ServerJsonRpcMessage};
use rmcp::transport::streamable_http_server::session::local::{
    LocalSessionManager, LocalSessionManagerError, SessionConfig,
};
use rmcp::transport::streamable_http_server::session::{ServerSseMessage, SessionId};
use rmcp::transport::streamable_http_server::{RestoreOutcome, SessionManager};
use tokio::sync::{OwnedSemaphorePermit, Semaphore};
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

use super::thin::{Diversions, Diverting, Thin};
use crate::server::thin_calls::Opening;
use crate::sync::lock;

/// Bounds of the expiry sweep's period: often enough that a session lives at most a few
/// percent past its idle time, rarely enough to cost nothing.
const SWEEP_MIN: Duration = Duration::from_millis(100);
const SWEEP_MAX: Duration = Duration::from_secs(30);

pub(super) struct Sessions {
    inner: LocalSessionManager,
    idle: Duration,
    max_in_flight: usize,
    max_per_principal: usize,
    live: Mutex<HashMap<SessionId, Live>>,
    /// Sessions each principal holds or is opening (see [`Reservation`]), over every path.
    held: Holdings,
}

/// How many sessions each principal holds, shared by the paths of one process.
pub(super) type Holdings = Arc<Mutex<HashMap<Principal, usize>>>;

/// Who made a request: the position of its bearer token among the configured ones (0 for
/// everyone when no tokens are configured). A session belongs to the principal that
/// opened it; to anyone else it does not exist.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(super) struct Principal(pub usize);

struct Live {
    last_used: Instant,
    in_flight: Arc<Semaphore>,
    /// `None` until the `initialize` that opened it has been answered.
    owner: Option<Principal>,
    /// The JSON-RPC ids of its requests in flight: a second request with one of them
    /// would take over the first one's stream, leaving the first unanswered.
    ids: std::collections::HashSet<String>,
    /// Ids the client cancelled (JSON text): a request reusing one is aliased
    /// (`server/reused_ids/`). Bounded: ids are otherwise unique in a session (MCP), and a client
    /// reuses one right after cancelling it, if at all.
    cancelled: std::collections::HashSet<String>,
    /// The client's id -> the alias its request runs under, while that request runs.
    aliases: HashMap<String, String>,
    /// Aliases given so far.
    next_alias: u64,
    /// Its plain calls' way around rmcp's worker (`thin.rs`), once its handshake is served.
    opening: Opening,
    /// Where its thin calls' messages to the client go.
    diversions: Diversions,
}

/// Cancelled ids remembered per session, at most.
const CANCELLED_REMEMBERED: usize = 1024;

/// A principal's place in its session cap while its `initialize` runs; given back on drop
/// unless [`Sessions::bind`] turned it into the session's own.
pub(super) struct Reservation {
    held: Arc<Mutex<HashMap<Principal, usize>>>,
    principal: Principal,
    bound: bool,
}

impl Drop for Reservation {
    fn drop(&mut self) {
        if !self.bound {
            release(&self.held, self.principal);
        }
    }
}

fn release(held: &Mutex<HashMap<Principal, usize>>, principal: Principal) {
    let mut held = lock(held);
    if let Some(count) = held.get_mut(&principal) {
        *count = count.saturating_sub(1);
        if *count == 0 {
            held.remove(&principal);
        }
    }
}

/// Whose a session is.
pub(super) enum Owner {
    /// No such session (or not yet answered): rmcp answers 404.
    Unknown,
    /// Open, and made by this principal.
    Is(Principal),
}

/// What the gate may do with a request for a session.
pub(super) enum Admission {
    /// Not a session we know: rmcp answers 404.
    Unknown,
    /// Go on; the permit is the request's place in the session's limit, the id its
    /// place among the ids in flight.
    Admitted(OwnedSemaphorePermit, Option<IdInFlight>),
    /// The session has `limit` requests in flight already.
    Busy { limit: usize },
    /// The session has a request with this id in flight already.
    DuplicateId,
}

/// A request id's place in its session's in-flight set, freed on drop.
pub(super) struct IdInFlight {
    sessions: Arc<Sessions>,
    session: SessionId,
    id: String,
}

impl Drop for IdInFlight {
    fn drop(&mut self) {
        if let Some(live) = lock(&self.sessions.live).get_mut(&self.session) {
            live.ids.remove(&self.id);
        }
    }
}

impl Sessions {
    pub(super) fn new(
        idle: Duration,
        max_in_flight: usize,
        max_per_principal: usize,
        held: Holdings,
    ) -> Sessions {
        let mut config = SessionConfig::default();
        // Ours is the expiry (see the module doc).
        config.keep_alive = None;
        let mut inner = LocalSessionManager::default();
        inner.session_config = config;
        Sessions {
            inner,
            idle,
            max_in_flight,
            max_per_principal,
            live: Mutex::new(HashMap::new()),
            held,
        }
    }

    /// Whose the session `id` is.
    pub(super) fn owner(&self, id: &str) -> Owner {
        match lock(&self.live).get(id).and_then(|s| s.owner) {
            Some(owner) => Owner::Is(owner),
            None => Owner::Unknown,
        }
    }

    /// Sessions open now, for the metrics.
    pub(super) fn open(&self) -> usize {
        lock(&self.live).len()
    }

    /// A place for one more session of `principal`, or `Err(cap)` when it holds its cap.
    pub(super) fn reserve(&self, principal: Principal) -> Result<Reservation, usize> {
        let mut held = lock(&self.held);
        let count = held.entry(principal).or_default();
        if *count >= self.max_per_principal {
            return Err(self.max_per_principal);
        }
        *count += 1;
        Ok(Reservation {
            held: self.held.clone(),
            principal,
            bound: false,
        })
    }

    /// Makes the session `id` (just answered its `initialize`) the reservation's
    /// principal's, counted under its cap until it closes, with its thin path from
    /// `opening`.
    pub(super) fn bind(&self, id: &str, mut reservation: Reservation, opening: Opening) {
        if let Some(session) = lock(&self.live).get_mut(id) {
            session.owner = Some(reservation.principal);
            session.opening = opening;
            reservation.bound = true;
        }
    }

    /// The session's thin path, once its handshake is served.
    pub(super) fn thin(&self, id: &str) -> Option<Thin> {
        let live = lock(&self.live);
        let session = live.get(id)?;
        Some(Thin {
            calls: session.opening.calls()?,
            diversions: session.diversions.clone(),
        })
    }

    /// Takes a place in the session's in-flight limit (and, for a request, its id's place
    /// among the ids in flight), and counts as use.
    pub(super) fn admit(self: &Arc<Self>, id: &str, request: Option<String>) -> Admission {
        let mut live = lock(&self.live);
        let Some(session) = live.get_mut(id) else {
            return Admission::Unknown;
        };
        session.last_used = Instant::now();
        if request.as_ref().is_some_and(|r| session.ids.contains(r)) {
            return Admission::DuplicateId;
        }
        match session.in_flight.clone().try_acquire_owned() {
            Ok(permit) => {
                let id = request.map(|request| {
                    session.ids.insert(request.clone());
                    IdInFlight {
                        sessions: self.clone(),
                        session: SessionId::from(id.to_owned()),
                        id: request,
                    }
                });
                Admission::Admitted(permit, id)
            }
            Err(_) => Admission::Busy {
                limit: self.max_in_flight,
            },
        }
    }

    /// A `notifications/cancelled` for `request` (JSON text) in session `id`: remembered,
    /// so a request reusing it is aliased; the alias it must name instead, when the request
    /// it cancels runs under one.
    pub(super) fn cancelled(&self, id: &str, request: &str) -> Option<String> {
        let mut live = lock(&self.live);
        let session = live.get_mut(id)?;
        if session.cancelled.len() >= CANCELLED_REMEMBERED {
            session.cancelled.clear();
        }
        session.cancelled.insert(request.to_owned());
        session.aliases.get(request).cloned()
    }

    /// The client cancelled `request` (JSON text) in session `id`: a thin call with that
    /// id stops and is not answered (`thin.rs`).
    pub(super) fn cancel_thin(&self, id: &str, request: &str) {
        let calls = lock(&self.live).get(id).and_then(|s| s.opening.calls());
        if let Some(calls) = calls
            && let Ok(request) = serde_json::from_str(request)
        {
            calls.cancel(&request);
        }
    }

    /// The alias a request with the cancelled id `request` (JSON text) runs under, if it
    /// reuses one; noted until [`Sessions::unalias`].
    pub(super) fn alias_for(&self, id: &str, request: &str) -> Option<String> {
        let mut live = lock(&self.live);
        let session = live.get_mut(id)?;
        if !session.cancelled.remove(request) {
            return None;
        }
        session.next_alias += 1;
        let alias = crate::server::reused_ids::http::alias(session.next_alias);
        session.aliases.insert(request.to_owned(), alias.clone());
        Some(alias)
    }

    /// The aliased request with the client's id `request` has ended.
    pub(super) fn unalias(&self, id: &str, request: &str, alias: &str) {
        if let Some(session) = lock(&self.live).get_mut(id)
            && session.aliases.get(request).is_some_and(|a| a == alias)
        {
            session.aliases.remove(request);
        }
    }

    fn touch(&self, id: &SessionId) {
        if let Some(session) = lock(&self.live).get_mut(id) {
            session.last_used = Instant::now();
        }
    }

    /// Closes every session one of `principals` opened (their tokens were revoked); how
    /// many were closed. Its streams end, and its id is 404 from now on.
    pub(super) async fn close_owned_by(&self, principals: &[Principal]) -> usize {
        if principals.is_empty() {
            return 0;
        }
        let owned: Vec<SessionId> = lock(&self.live)
            .iter()
            .filter(|(_, s)| s.owner.is_some_and(|o| principals.contains(&o)))
            .map(|(id, _)| id.clone())
            .collect();
        let mut closed = 0;
        for id in owned {
            match self.close_session(&id).await {
                Ok(()) => closed += 1,
                Err(err) => {
                    tracing::debug!(session = %super::masked(&id), error = %err, "closing a revoked token's session failed");
                }
            }
        }
        closed
    }

    /// Closes every session idle for longer than `idle` with nothing in flight, until
    /// `stop`.
    pub(super) async fn expire_idle(self: Arc<Self>, stop: CancellationToken) {
        let period = (self.idle / 4).clamp(SWEEP_MIN, SWEEP_MAX);
        loop {
            tokio::select! {
                () = tokio::time::sleep(period) => {}
                () = stop.cancelled() => return,
            }
            let now = Instant::now();
            let expired: Vec<SessionId> = lock(&self.live)
                .iter()
                .filter(|(_, s)| {
                    now.duration_since(s.last_used) >= self.idle
                        && s.in_flight.available_permits() == self.max_in_flight
                })
                .map(|(id, _)| id.clone())
                .collect();
            for id in expired {
                tracing::info!(
                    session = %super::masked(&id),
                    idle_sec = self.idle.as_secs(),
                    "session expired; its state is dropped"
                );
                if let Err(err) = self.close_session(&id).await {
                    tracing::debug!(session = %super::masked(&id), error = %err, "closing an expired session failed");
                }
            }
        }
    }
}

impl SessionManager for Sessions {
    type Error = LocalSessionManagerError;
    type Transport = Diverting<<LocalSessionManager as SessionManager>::Transport>;

    async fn create_session(&self) -> Result<(SessionId, Self::Transport), Self::Error> {
        let (id, inner) = self.inner.create_session().await?;
        let diversions = Diversions::default();
        lock(&self.live).insert(
            id.clone(),
            Live {
                last_used: Instant::now(),
                in_flight: Arc::new(Semaphore::new(self.max_in_flight)),
                owner: None,
                ids: std::collections::HashSet::new(),
                cancelled: std::collections::HashSet::new(),
                aliases: HashMap::new(),
                next_alias: 0,
                opening: Opening::default(),
                diversions: diversions.clone(),
            },
        );
        Ok((id, Diverting { inner, diversions }))
    }

    async fn initialize_session(
        &self,
        id: &SessionId,
        message: ClientJsonRpcMessage,
    ) -> Result<ServerJsonRpcMessage, Self::Error> {
        self.touch(id);
        self.inner.initialize_session(id, message).await
    }

    async fn has_session(&self, id: &SessionId) -> Result<bool, Self::Error> {
        if !lock(&self.live).contains_key(id) {
            return Ok(false);
        }
        self.inner.has_session(id).await
    }

    async fn close_session(&self, id: &SessionId) -> Result<(), Self::Error> {
        let closed = lock(&self.live).remove(id);
        if let Some(owner) = closed.and_then(|s| s.owner) {
            release(&self.held, owner);
        }
        self.inner.close_session(id).await
    }

    async fn create_stream(
        &self,
        id: &SessionId,
        message: ClientJsonRpcMessage,
    ) -> Result<impl Stream<Item = ServerSseMessage> + Send + Sync + 'static, Self::Error> {
        self.touch(id);
        self.inner.create_stream(id, message).await
    }

    async fn accept_message(
        &self,
        id: &SessionId,
        message: ClientJsonRpcMessage,
    ) -> Result<(), Self::Error> {
        self.touch(id);
        self.inner.accept_message(id, message).await
    }

    async fn create_standalone_stream(
        &self,
        id: &SessionId,
    ) -> Result<impl Stream<Item = ServerSseMessage> + Send + Sync + 'static, Self::Error> {
        self.touch(id);
        self.inner.create_standalone_stream(id).await
    }

    async fn resume(
        &self,
        id: &SessionId,
        last_event_id: String,
    ) -> Result<impl Stream<Item = ServerSseMessage> + Send + Sync + 'static, Self::Error> {
        self.touch(id);
        self.inner.resume(id, last_event_id).await
    }

    async fn restore_session(
        &self,
        _id: SessionId,
    ) -> Result<RestoreOutcome<Self::Transport>, Self::Error> {
        // No external store: a session this process does not hold is gone (404).
        Ok(RestoreOutcome::NotSupported)
    }
}
