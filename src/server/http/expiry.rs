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

use crate::sync::lock;

/// Bounds of the expiry sweep's period: often enough that a session lives at most a few
/// percent past its idle time, rarely enough to cost nothing.
const SWEEP_MIN: Duration = Duration::from_millis(100);
const SWEEP_MAX: Duration = Duration::from_secs(30);

pub(super) struct Sessions {
    inner: LocalSessionManager,
    idle: Duration,
    max_in_flight: usize,
    live: Mutex<HashMap<SessionId, Live>>,
}

struct Live {
    last_used: Instant,
    in_flight: Arc<Semaphore>,
}

/// What the gate may do with a request for a session.
pub(super) enum Admission {
    /// Not a session we know: rmcp answers 404.
    Unknown,
    /// Go on; the permit is the request's place in the session's limit.
    Admitted(OwnedSemaphorePermit),
    /// The session has `limit` requests in flight already.
    Busy { limit: usize },
}

impl Sessions {
    pub fn new(idle: Duration, max_in_flight: usize) -> Sessions {
        let mut config = SessionConfig::default();
        // Ours is the expiry (see the module doc).
        config.keep_alive = None;
        let mut inner = LocalSessionManager::default();
        inner.session_config = config;
        Sessions {
            inner,
            idle,
            max_in_flight,
            live: Mutex::new(HashMap::new()),
        }
    }

    /// Takes a place in the session's in-flight limit, and counts as use.
    pub fn admit(&self, id: &str) -> Admission {
        let mut live = lock(&self.live);
        let Some(session) = live.get_mut(id) else {
            return Admission::Unknown;
        };
        session.last_used = Instant::now();
        match session.in_flight.clone().try_acquire_owned() {
            Ok(permit) => Admission::Admitted(permit),
            Err(_) => Admission::Busy {
                limit: self.max_in_flight,
            },
        }
    }

    fn touch(&self, id: &SessionId) {
        if let Some(session) = lock(&self.live).get_mut(id) {
            session.last_used = Instant::now();
        }
    }

    /// Closes every session idle for longer than `idle` with nothing in flight, until
    /// `stop`.
    pub async fn expire_idle(self: Arc<Self>, stop: CancellationToken) {
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
                    session = %id,
                    idle_sec = self.idle.as_secs(),
                    "session expired; its state is dropped"
                );
                if let Err(err) = self.close_session(&id).await {
                    tracing::debug!(session = %id, error = %err, "closing an expired session failed");
                }
            }
        }
    }
}

impl SessionManager for Sessions {
    type Error = LocalSessionManagerError;
    type Transport = <LocalSessionManager as SessionManager>::Transport;

    async fn create_session(&self) -> Result<(SessionId, Self::Transport), Self::Error> {
        let (id, transport) = self.inner.create_session().await?;
        lock(&self.live).insert(
            id.clone(),
            Live {
                last_used: Instant::now(),
                in_flight: Arc::new(Semaphore::new(self.max_in_flight)),
            },
        );
        Ok((id, transport))
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
        lock(&self.live).remove(id);
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
