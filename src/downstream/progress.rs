//! A call's downstream progress, routed where it is read off the connection.
//!
//! rmcp hands each notification to the handler on a task of its own, spawned when the
//! line is read, while the answer to a request goes straight to the caller: on a
//! multi-thread runtime (`serve --http`) the last progress of a call could be handled after
//! its answer, when the call's route was gone, and was lost (~5% of calls with a server
//! that sends progress right before its result). [`ProgressTap`], a hook on the
//! connection's [`Tap`](super::tap::Tap), routes each progress notification as it is read, in the order read: all
//! of a call's progress is in its route's channel before rmcp even sees the answer.
//!
//! A call's route is known only once rmcp has put its own progress token on the request,
//! and the server may answer with progress before that; so the tap marks the token of each
//! outgoing `tools/call` as expected, and progress that arrives before the route waits in
//! it, delivered first when the route is installed.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use rmcp::RoleClient;
use rmcp::model::{
    ClientRequest, GetMeta, JsonRpcMessage, JsonRpcNotification, ProgressNotificationParam,
    ProgressToken, ServerNotification,
};
use rmcp::service::{RxJsonRpcMessage, TxJsonRpcMessage};
use tokio::sync::mpsc;

use super::tap::Hook;
use crate::sync::lock;

/// Where one call's downstream progress goes: each notification is re-tagged with the
/// client's own token (the downstream request carries a token of its connection's).
#[derive(Debug)]
pub struct ProgressRoute {
    pub tx: mpsc::UnboundedSender<ProgressNotificationParam>,
    pub client_token: ProgressToken,
}

/// Progress that may wait for a route that is not installed yet: more than a call's
/// worth is a server sending progress for a token nobody will claim.
const EARLY_CAP: usize = 1024;

/// Where each in-flight call's progress goes, by the progress token rmcp put on the
/// downstream request.
#[derive(Debug, Default)]
pub(super) struct ProgressRoutes(Mutex<HashMap<ProgressToken, Slot>>);

#[derive(Debug)]
enum Slot {
    /// A `tools/call` went out with this token; its route is not installed yet.
    Expected(Vec<ProgressNotificationParam>),
    Routed(ProgressRoute),
}

impl ProgressRoutes {
    /// The call's route for `token`; progress that arrived before it goes first.
    pub(super) fn insert(&self, token: ProgressToken, route: ProgressRoute) {
        let mut map = lock(&self.0);
        if let Some(Slot::Expected(early)) = map.remove(&token) {
            for mut params in early {
                params.progress_token = route.client_token.clone();
                let _ = route.tx.send(params);
            }
        }
        map.insert(token, Slot::Routed(route));
    }

    /// The call is over (every request removes its token, routed or not).
    pub(super) fn remove(&self, token: &ProgressToken) {
        lock(&self.0).remove(token);
    }

    /// A `tools/call` with `token` is going out: its progress is kept until its route is
    /// installed or the call removes it.
    fn expect(&self, token: ProgressToken) {
        lock(&self.0)
            .entry(token)
            .or_insert_with(|| Slot::Expected(Vec::new()));
    }

    /// Routes one notification: `false` when no call expects it.
    fn forward(&self, mut params: ProgressNotificationParam) -> bool {
        let mut map = lock(&self.0);
        match map.get_mut(&params.progress_token) {
            Some(Slot::Routed(route)) => {
                params.progress_token = route.client_token.clone();
                let _ = route.tx.send(params);
                true
            }
            Some(Slot::Expected(early)) if early.len() < EARLY_CAP => {
                early.push(params);
                true
            }
            Some(Slot::Expected(_)) | None => false,
        }
    }
}

/// The hook that routes progress as it is read (see the module doc).
pub(super) struct ProgressTap {
    routes: Arc<ProgressRoutes>,
}

impl ProgressTap {
    pub(super) fn new(routes: Arc<ProgressRoutes>) -> ProgressTap {
        ProgressTap { routes }
    }
}

impl Hook for ProgressTap {
    fn sending(&mut self, message: &TxJsonRpcMessage<RoleClient>) {
        if let JsonRpcMessage::Request(request) = message
            && let ClientRequest::CallToolRequest(_) = &request.request
            && let Some(token) = request.request.get_meta().get_progress_token()
        {
            self.routes.expect(token);
        }
    }

    async fn received(
        &mut self,
        message: RxJsonRpcMessage<RoleClient>,
    ) -> Option<RxJsonRpcMessage<RoleClient>> {
        if let JsonRpcMessage::Notification(JsonRpcNotification {
            notification: ServerNotification::ProgressNotification(progress),
            ..
        }) = &message
            && self.routes.forward(progress.params.clone())
        {
            return None;
        }
        Some(message)
    }
}
