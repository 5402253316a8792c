//! Telling the client its tool, prompt or resource list grew, or a subscribed resource
//! changed, on whichever channel its protocol era uses.
//!
//! Legacy sessions (`initialize`) get `notifications/{tools,prompts,resources}/list_changed`
//! and `notifications/resources/updated`; 2026-07-28 sessions get each on the open
//! `subscriptions/listen` streams whose filter asked for it, tagged with the subscription id
//! (rmcp's `SubscriptionSink` does the tagging). [`Notifier`] also counts the client's re-lists, so
//! a result that grew the list can be held until the client has it (DESIGN.md 7a), and
//! knows how this client takes a grown list (`meta/relists.rs`).

use std::sync::Mutex;
use std::time::Duration;

use rmcp::Peer;
use rmcp::RoleServer;
use rmcp::model::{RequestId, ResourceUpdatedNotificationParam};
use rmcp::service::SubscriptionSink;
use tokio::sync::watch;

use crate::server::meta::Relists;
use crate::sync::lock;

/// Which of the client's lists grew.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Change {
    Tools,
    Prompts,
    Resources,
}

pub(crate) struct Notifier {
    /// Set by `initialize`: the session takes unsolicited notifications.
    legacy: Mutex<Option<Peer<RoleServer>>>,
    subscriptions: Mutex<Vec<SubscriptionSink>>,
    /// How many `tools/list` requests the client has sent.
    relists: watch::Sender<u64>,
    /// How this client takes a grown list: by its name, and [`Relists::Never`] once it let
    /// a held result time out (holding would only slow it down).
    relists_how: Mutex<Relists>,
}

impl Notifier {
    pub(crate) fn new() -> Notifier {
        Notifier {
            legacy: Mutex::new(None),
            subscriptions: Mutex::new(Vec::new()),
            relists: watch::Sender::new(0),
            relists_how: Mutex::new(Relists::Unknown),
        }
    }

    pub(crate) fn set_legacy_peer(&self, peer: Peer<RoleServer>) {
        *lock(&self.legacy) = Some(peer);
    }

    pub(crate) fn subscribe(&self, sink: SubscriptionSink) {
        lock(&self.subscriptions).push(sink);
    }

    pub(crate) fn unsubscribe(&self, id: &RequestId) {
        lock(&self.subscriptions).retain(|sink| sink.id() != id);
    }

    /// Sends tools list-changed on every channel the client has. Returns whether any took it.
    pub(crate) async fn tools_changed(&self) -> bool {
        self.changed(Change::Tools).await
    }

    /// Sends list-changed for `change` on every channel the client has that wants it.
    /// Returns whether any took it.
    pub(crate) async fn changed(&self, change: Change) -> bool {
        // Clone out, then await: no lock across `.await`.
        let sinks: Vec<SubscriptionSink> = lock(&self.subscriptions)
            .iter()
            .filter(|sink| {
                let accepted = sink.accepted();
                let wanted = match change {
                    Change::Tools => accepted.tools_list_changed,
                    Change::Prompts => accepted.prompts_list_changed,
                    Change::Resources => accepted.resources_list_changed,
                };
                wanted == Some(true)
            })
            .cloned()
            .collect();
        let legacy = lock(&self.legacy).clone();
        let mut told = false;
        for sink in sinks {
            let sent = match change {
                Change::Tools => sink.notify_tool_list_changed().await,
                Change::Prompts => sink.notify_prompt_list_changed().await,
                Change::Resources => sink.notify_resource_list_changed().await,
            };
            match sent {
                Ok(()) => told = true,
                Err(err) => {
                    tracing::debug!(error = %err, ?change, "subscription did not take list_changed");
                }
            }
        }
        if let Some(peer) = legacy {
            let sent = match change {
                Change::Tools => peer.notify_tool_list_changed().await,
                Change::Prompts => peer.notify_prompt_list_changed().await,
                Change::Resources => peer.notify_resource_list_changed().await,
            };
            match sent {
                Ok(()) => told = true,
                Err(err) => {
                    tracing::debug!(error = %err, ?change, "client did not take list_changed")
                }
            }
        }
        told
    }

    /// Sends `notifications/resources/updated` for `uri` to the legacy session (which only
    /// hears about URIs it subscribed to: we subscribe downstream for nothing else) and to
    /// each subscription stream whose filter names the URI.
    pub(crate) async fn resource_updated(&self, uri: &str) {
        let sinks: Vec<SubscriptionSink> = lock(&self.subscriptions)
            .iter()
            .filter(|sink| {
                sink.accepted()
                    .resource_subscriptions
                    .as_ref()
                    .is_some_and(|uris| uris.iter().any(|u| u == uri))
            })
            .cloned()
            .collect();
        let legacy = lock(&self.legacy).clone();
        for sink in sinks {
            if let Err(err) = sink.notify_resource_updated(uri).await {
                tracing::debug!(error = %err, uri, "subscription did not take resources/updated");
            }
        }
        if let Some(peer) = legacy
            && let Err(err) = peer
                .notify_resource_updated(ResourceUpdatedNotificationParam::new(uri))
                .await
        {
            tracing::debug!(error = %err, uri, "client did not take resources/updated");
        }
    }

    /// Records a `tools/list` from the client.
    pub(crate) fn listed(&self) {
        self.relists.send_modify(|n| *n += 1);
    }

    /// The number of re-lists so far, to wait for the next one.
    pub(crate) fn relist_count(&self) -> u64 {
        *self.relists.borrow()
    }

    /// Learns how the client takes a grown list from the `clientInfo.name` of its handshake.
    pub(crate) fn client_named(&self, name: &str) {
        let relists = Relists::of(name);
        tracing::debug!(
            client = name,
            ?relists,
            "how this client takes a grown tool list"
        );
        *lock(&self.relists_how) = relists;
    }

    /// How the client takes a grown list, as far as is known.
    pub(crate) fn relists(&self) -> Relists {
        *lock(&self.relists_how)
    }

    /// Waits until the client has re-listed after `seen`, at most `max`; returns whether it
    /// did. A client that lets the wait time out is not waited for again in this session.
    pub(crate) async fn hold_until_relist(&self, seen: u64, max: Duration) -> bool {
        if self.relists() == Relists::Never {
            return false;
        }
        let mut relists = self.relists.subscribe();
        let relisted = tokio::time::timeout(max, relists.wait_for(|n| *n > seen)).await;
        if relisted.is_err() {
            tracing::debug!(
                waited_ms = max.as_millis() as u64,
                "client did not re-list while the result was held; not holding again"
            );
            *lock(&self.relists_how) = Relists::Never;
        }
        relisted.is_ok()
    }
}
