//! Which connections count where under `max_connections`, so that sockets without a token
//! cannot lock token holders out.
//!
//! A connection is *pending* from accept until a request on it passes the gate's token
//! check (any request, when no tokens are configured), then *authenticated*. Pending
//! connections may hold at most half of `max_connections`, and one peer address at most a
//! quarter of that (at least [`PEER_FLOOR`]); a new connection past either share closes
//! the oldest pending one there (its peer's own first) instead of being refused, since a
//! client sends its first request at once and only a socket that sends nothing grows old.
//! A connection is refused on accept only when authenticated ones fill what pending ones
//! leave, so idle tokenless sockets, however many, never stop a token holder: its
//! connections are served, and once its token checks out they count in the other pool.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::net::IpAddr;
use std::sync::{Arc, Mutex};

use tokio_util::sync::CancellationToken;

use crate::sync::lock;

/// The least room one peer address gets among pending connections (where the pool
/// allows): a client opens a few at once (a POST stream and a GET stream), and each
/// stays pending until its first request is read.
const PEER_FLOOR: usize = 8;

/// The count of every open connection, shared by the accept loop and the gate.
#[derive(Debug)]
pub(super) struct Connections {
    max: usize,
    pending_max: usize,
    peer_max: usize,
    inner: Mutex<Inner>,
}

#[derive(Debug, Default)]
struct Inner {
    next: u64,
    /// By age (ids grow): the oldest first.
    pending: BTreeMap<u64, Pending>,
    per_peer: HashMap<IpAddr, usize>,
    authenticated: HashSet<u64>,
}

#[derive(Debug)]
struct Pending {
    peer: IpAddr,
    close: CancellationToken,
}

/// What a refused connection is told: nothing (it is closed), but the accept loop counts it.
#[derive(Debug, PartialEq, Eq)]
pub(super) struct Full;

impl Connections {
    /// Counts under `max` (`[settings.http] max_connections`, at least 1).
    pub(super) fn new(max: usize) -> Connections {
        let max = max.max(1);
        let pending_max = (max / 2).max(1);
        let peer_max = (pending_max / 4).max(PEER_FLOOR).min(pending_max);
        Connections {
            max,
            pending_max,
            peer_max,
            inner: Mutex::new(Inner::default()),
        }
    }

    /// Admits a connection from `peer` as pending, closing the oldest pending one where
    /// its peer's or the pool's share is full.
    ///
    /// # Errors
    /// [`Full`] when authenticated connections fill `max_connections`.
    pub(super) fn accept(self: &Arc<Self>, peer: IpAddr) -> Result<Slot, Full> {
        let mut inner = lock(&self.inner);
        if inner.per_peer.get(&peer).copied().unwrap_or(0) >= self.peer_max {
            inner.close_oldest(Some(peer));
        } else if inner.pending.len() >= self.pending_max {
            inner.close_oldest(None);
        }
        if inner.authenticated.len() + inner.pending.len() >= self.max && !inner.close_oldest(None)
        {
            return Err(Full);
        }
        let id = inner.next;
        inner.next += 1;
        let close = CancellationToken::new();
        inner.pending.insert(
            id,
            Pending {
                peer,
                close: close.clone(),
            },
        );
        *inner.per_peer.entry(peer).or_default() += 1;
        Ok(Slot {
            connection: Connection {
                id,
                connections: self.clone(),
            },
            close,
        })
    }

    fn authenticated(&self, id: u64) {
        let mut inner = lock(&self.inner);
        if inner.remove_pending(id).is_some() {
            inner.authenticated.insert(id);
        }
    }

    fn ended(&self, id: u64) {
        let mut inner = lock(&self.inner);
        if inner.remove_pending(id).is_none() {
            inner.authenticated.remove(&id);
        }
    }

    /// Pending and authenticated connections now.
    #[cfg(test)]
    fn counts(&self) -> (usize, usize) {
        let inner = lock(&self.inner);
        (inner.pending.len(), inner.authenticated.len())
    }
}

impl Inner {
    fn remove_pending(&mut self, id: u64) -> Option<Pending> {
        let pending = self.pending.remove(&id)?;
        if let Some(count) = self.per_peer.get_mut(&pending.peer) {
            *count -= 1;
            if *count == 0 {
                self.per_peer.remove(&pending.peer);
            }
        }
        Some(pending)
    }

    /// Closes the oldest pending connection (of `peer`, if given); false when there is none.
    fn close_oldest(&mut self, peer: Option<IpAddr>) -> bool {
        let oldest = (self.pending.iter())
            .find(|(_, p)| peer.is_none_or(|peer| p.peer == peer))
            .map(|(&id, _)| id);
        let Some(pending) = oldest.and_then(|id| self.remove_pending(id)) else {
            return false;
        };
        tracing::debug!(
            peer = %pending.peer,
            "closed a connection that sent no authorized request, for room under \
             [settings.http] max_connections"
        );
        pending.close.cancel();
        true
    }
}

/// One accepted connection: its place in the count until dropped (the connection's
/// task holds it), and `close`, cancelled when it is closed for room.
#[derive(Debug)]
pub(super) struct Slot {
    pub(super) connection: Connection,
    pub(super) close: CancellationToken,
}

/// A connection as its requests carry it (an extension the gate reads).
#[derive(Debug, Clone)]
pub(super) struct Connection {
    id: u64,
    connections: Arc<Connections>,
}

impl Connection {
    /// A request on this connection passed the token check: it counts as authenticated
    /// from now on and is never closed for room.
    pub(super) fn authenticated(&self) {
        self.connections.authenticated(self.id);
    }
}

impl Drop for Slot {
    fn drop(&mut self) {
        self.connection.connections.ended(self.connection.id);
    }
}

#[cfg(test)]
mod tests {
    // A test fails loudly on broken setup; the crate-wide denial is for the library.
    #![allow(clippy::unwrap_used)]

    use super::*;

    fn ip(last: u8) -> IpAddr {
        IpAddr::from([127, 0, 0, last])
    }

    #[test]
    fn idle_connections_close_each_other_and_leave_room_for_authenticated_ones() {
        let connections = Arc::new(Connections::new(64));
        // 32 pending at most (half), 8 per peer.
        let idle: Vec<Slot> = (0..40)
            .map(|_| connections.accept(ip(2)).unwrap())
            .collect();
        let closed = idle.iter().filter(|s| s.close.is_cancelled()).count();
        assert_eq!(closed, 32, "one peer keeps at most 8 pending");
        assert!(!idle[39].close.is_cancelled(), "the newest stays");
        assert_eq!(connections.counts(), (8, 0));
        // Other peers fill the pending half; a new one closes the oldest pending there.
        let others: Vec<Slot> = (0..30)
            .map(|i| connections.accept(ip(10 + (i % 5) as u8)).unwrap())
            .collect();
        assert_eq!(connections.counts().0, 32);
        drop(others);
        // Authenticated connections take the other half and more: they are never closed
        // for room, and refused only once they fill everything.
        let mut holders = Vec::new();
        for _ in 0..64 {
            let slot = connections.accept(ip(1)).unwrap();
            slot.connection.authenticated();
            holders.push(slot);
        }
        assert!(holders.iter().all(|s| !s.close.is_cancelled()));
        assert_eq!(connections.counts(), (0, 64));
        assert_eq!(connections.accept(ip(3)).err(), Some(Full));
        holders.pop();
        assert!(connections.accept(ip(3)).is_ok());
    }
}
