//! What an operator's tooling asks: `/healthz` (the process serves), `/readyz` (the
//! servers it needs are connected) and `/metrics` (Prometheus text, behind the tokens).
//!
//! The probes carry no token: a kubelet or load balancer asks them, and they say nothing
//! a stranger could use (a status and counts, no server names). `/metrics` names the
//! servers and counts what clients do, so it takes the same token as `/mcp`.

use std::sync::Arc;

use axum::extract::State;
use axum::response::{IntoResponse, Response};
use http::{StatusCode, header};

use super::expiry::Sessions;
use super::gate::Gate;
use crate::downstream::{ServerHandle, ServerState};

/// The probes' state.
#[derive(Clone)]
pub(super) struct Probes(Arc<Inner>);

struct Inner {
    servers: Vec<ServerHandle>,
    /// By position: whether the server is `required = true`.
    required: Vec<bool>,
    sessions: Vec<Arc<Sessions>>,
    gate: Gate,
    /// Each path's registry: what trust holds, for `/metrics` (each tool once, whichever
    /// paths serve its server). The first is `/mcp`'s, every server at its own position:
    /// whether a connected server's tools are in the catalog yet, for `/readyz`.
    registries: Vec<Arc<crate::ingest::Registry>>,
}

impl Probes {
    pub(super) fn new(
        servers: Vec<ServerHandle>,
        required: Vec<bool>,
        sessions: Vec<Arc<Sessions>>,
        gate: Gate,
        registries: Vec<Arc<crate::ingest::Registry>>,
    ) -> Probes {
        Probes(Arc::new(Inner {
            servers,
            required,
            sessions,
            gate,
            registries,
        }))
    }

    pub(super) fn router(self) -> axum::Router {
        axum::Router::new()
            .route("/healthz", axum::routing::get(healthz))
            .route("/readyz", axum::routing::get(readyz))
            .route("/metrics", axum::routing::get(metrics))
            .with_state(self)
    }
}

async fn healthz() -> &'static str {
    "ok\n"
}

/// 200 when every `required = true` server is connected (or idle by design) and every
/// other server has concluded its first attempt; 503 otherwise, with the counts.
///
/// A connected server counts once its first tool list has been taken in (screened by
/// trust, in the catalog and the index), not when its handshake ends: a load balancer
/// sends calls as soon as this says ready, and a call that came between the two would
/// find no such tool.
async fn readyz(State(probes): State<Probes>) -> Response {
    let listed =
        |position: usize| (probes.0.registries.first()).is_some_and(|r| r.is_searchable(position));
    let mut required = 0;
    let mut required_down = 0;
    let mut starting = 0;
    for (position, server) in probes.0.servers.iter().enumerate() {
        let state = server.state();
        let connected = match &state {
            ServerState::Idle { .. } => true,
            ServerState::Ready { .. } => listed(position),
            _ => false,
        };
        if probes.0.required.get(position).copied().unwrap_or(false) {
            required += 1;
            if !connected {
                required_down += 1;
            }
        } else if matches!(state, ServerState::Starting)
            || matches!(state, ServerState::Ready { .. }) && !connected
        {
            starting += 1;
        }
    }
    if required_down == 0 && starting == 0 {
        return (StatusCode::OK, "ready\n").into_response();
    }
    (
        StatusCode::SERVICE_UNAVAILABLE,
        format!(
            "not ready: {required_down} of {required} required servers not connected, \
             {starting} other servers still starting\n"
        ),
    )
        .into_response()
}

async fn metrics(State(probes): State<Probes>, headers: http::HeaderMap) -> Response {
    if let Err(response) = probes.0.gate.principal(&headers) {
        return *response;
    }
    let sessions = probes.0.sessions.iter().map(|s| s.open()).sum();
    let held: std::collections::BTreeSet<(String, String)> = (probes.0.registries.iter())
        .flat_map(|r| {
            let trust = r.trust();
            (trust.all_held())
                .map(|h| (h.server.clone(), h.tool.clone()))
                .collect::<Vec<_>>()
        })
        .collect();
    (
        [(header::CONTENT_TYPE, "text/plain; version=0.0.4")],
        super::metrics::render(sessions, &probes.0.servers, held.len()),
    )
        .into_response()
}
