//! Telling the client its tool, prompt or resource list grew, or a subscribed resource
//! changed, on whichever channel its protocol era uses.
//!
//! Legacy sessions (`initialize`) get `notifications/{tools,prompts,resources}/list_changed`
//! and `notifications/resources/updated`; 2026-07-28 sessions get each on the open
//! `subscriptions/listen` streams whose filter asked for it, tagged with the subscription id
//! (rmcp's `SubscriptionSink` does the tagging). [`Notifier`] also counts the client's re-lists, so
//! `select_tools` can hold its result until the client has the new list (DESIGN.md 7a).

use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use rmcp::Peer;
use rmcp::RoleServer;
use rmcp::model::{RequestId, ResourceUpdatedNotificationParam};
use rmcp::service::SubscriptionSink;
use tokio::sync::watch;

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
    /// Cleared once the client lets a held result time out: it does not re-list while a
    /// call is pending (Codex), so holding would only slow it down.
    client_relists_while_held: AtomicBool,
}

impl Notifier {
    pub(crate) fn new() -> Notifier {
        Notifier {
            legacy: Mutex::new(None),
            subscriptions: Mutex::new(Vec::new()),
            relists: watch::Sender::new(0),
            client_relists_while_held: AtomicBool::new(true),
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

    /// Starts without a hold for a client known not to re-list while a call is pending
    /// ([`NO_RELIST_CLIENTS`]), by the `clientInfo.name` of its handshake.
    pub(crate) fn client_named(&self, name: &str) {
        if never_relists_while_held(name) {
            tracing::debug!(
                client = name,
                "a client known not to re-list: select_tools is not held"
            );
            self.client_relists_while_held
                .store(false, Ordering::Relaxed);
        }
    }

    /// Waits until the client has re-listed after `seen`, at most `max`. A client that lets
    /// the wait time out is not waited for again in this session.
    pub(crate) async fn hold_until_relist(&self, seen: u64, max: Duration) {
        if !self.client_relists_while_held.load(Ordering::Relaxed) {
            return;
        }
        let mut relists = self.relists.subscribe();
        let relisted = tokio::time::timeout(max, relists.wait_for(|n| *n > seen)).await;
        if relisted.is_err() {
            tracing::debug!(
                waited_ms = max.as_millis() as u64,
                "client did not re-list while select_tools was held; not holding again"
            );
            self.client_relists_while_held
                .store(false, Ordering::Relaxed);
        }
    }
}

/// `clientInfo.name` prefixes of clients that never re-list while a `select_tools` result is
/// held (docs/design.md, "Edges"): Codex (`codex-mcp-client`; it ignores `list_changed` by
/// default, and with `mcp_tool_list_changed` on re-lists only after the call returned) and
/// Qwen Code (`qwen-cli-mcp-client-<server>`; it never re-lists). Holding only costs them
/// `relist_wait_ms` per select.
pub(crate) const NO_RELIST_CLIENTS: &[&str] = &["codex-mcp-client", "qwen-cli-mcp-client"];

fn never_relists_while_held(name: &str) -> bool {
    NO_RELIST_CLIENTS
        .iter()
        .any(|prefix| name.starts_with(prefix))
}

#[cfg(test)]
mod tests {
    use super::never_relists_while_held;

    #[test]
    fn codex_and_qwen_code_are_known_by_their_client_names() {
        assert!(never_relists_while_held("codex-mcp-client"));
        assert!(never_relists_while_held("qwen-cli-mcp-client-time"));
        assert!(!never_relists_while_held("claude-code"));
        assert!(!never_relists_while_held("opencode"));
        assert!(!never_relists_while_held("gemini-cli-mcp-client"));
    }
}
