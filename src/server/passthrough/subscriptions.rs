//! Who holds which resource subscription: each session's holds ([`Holds`]), counted per
//! URI across its channels (legacy `resources/subscribe` and the `resourceSubscriptions`
//! of 2026-07-28 `subscriptions/listen` streams), and the downstream subscriptions of all
//! sessions ([`Subscriptions`]), one per URI, counted across every session's holds.
//! `resources.rs` subscribes and unsubscribes downstream.

use std::collections::BTreeMap;
use std::sync::Mutex;

use tokio::sync::mpsc;

use crate::sync::lock;

/// The URIs one session holds subscriptions to. `resources/updated` goes only to sessions
/// that hold the URI, and a session that ends gives its counts back.
pub(crate) struct Holds {
    subscribed: Mutex<BTreeMap<String, usize>>,
    /// Where the holds of a session that ended go to be released downstream
    /// (`resources::release_ended`).
    release: mpsc::UnboundedSender<String>,
}

impl Holds {
    /// A session's holds, which go to `release` when it drops.
    pub(crate) fn new(release: mpsc::UnboundedSender<String>) -> Holds {
        Holds {
            subscribed: Mutex::default(),
            release,
        }
    }

    /// Whether this session holds a subscription to `uri`.
    pub(crate) fn holds(&self, uri: &str) -> bool {
        lock(&self.subscribed).contains_key(uri)
    }

    /// Counts one more channel of this session holding `uri`.
    fn hold(&self, uri: &str) {
        *lock(&self.subscribed).entry(uri.to_owned()).or_default() += 1;
    }

    /// Gives back one of this session's holds on `uri`; false when it held none.
    pub(in crate::server) fn unhold(&self, uri: &str) -> bool {
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
}

impl Drop for Holds {
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
    }
}

/// The downstream subscriptions of every session, by URI.
#[derive(Default)]
pub(crate) struct Subscriptions(Mutex<BTreeMap<String, Subscription>>);

/// One URI some client subscribed to.
struct Subscription {
    /// The server we subscribed on.
    server: usize,
    /// How many channels of all sessions want it.
    count: usize,
}

impl Subscriptions {
    /// Counts one more hold of `mine` on `uri` when a server is subscribed to it already;
    /// false when none is.
    pub(in crate::server) fn join(&self, uri: &str, mine: &Holds) -> bool {
        let mut subscriptions = lock(&self.0);
        let Some(known) = subscriptions.get_mut(uri) else {
            return false;
        };
        known.count += 1;
        mine.hold(uri);
        true
    }

    /// Counts a hold of `mine` on `uri`, which `server` is now subscribed to.
    pub(in crate::server) fn add(&self, uri: &str, server: usize, mine: &Holds) {
        lock(&self.0)
            .entry(uri.to_owned())
            .and_modify(|s| s.count += 1)
            .or_insert(Subscription { server, count: 1 });
        mine.hold(uri);
    }

    /// Gives back one hold on `uri`: the server to unsubscribe on when it was the last.
    pub(in crate::server) fn release(&self, uri: &str) -> Option<usize> {
        let mut subscriptions = lock(&self.0);
        let known = subscriptions.get_mut(uri)?;
        known.count -= 1;
        if known.count > 0 {
            return None;
        }
        let server = known.server;
        subscriptions.remove(uri);
        Some(server)
    }
}
