//! `mcp-defer serve --http ADDR`: many clients over Streamable HTTP at `/mcp` (and each
//! `[profiles.NAME]` at `/mcp/NAME`), one shared set of downstream servers.
//!
//! rmcp's `StreamableHttpService` speaks the transport (sessions with `Mcp-Session-Id` for
//! `initialize` clients, stateless 2026-07-28 requests, SSE, `Host` and `Origin` checks);
//! hyper serves it under our connection limits ([`listen`]). This module owns what is ours
//! around it: one [`Shared`] state and one downstream pool for the process, a
//! [`DeferServer`] session per client ([`super::session`]), the gate in front of rmcp
//! (tokens, session owners, body limits, request and session caps: [`gate`]), the bind
//! rule (loopback unless auth is configured), session expiry ([`expiry`]), and what an
//! operator asks: `/healthz`, `/readyz`, `/metrics` ([`probes`], [`metrics`]).
//! docs/design.md section 17 and docs/deploy.md have the rules.

use std::net::SocketAddr;
use std::sync::Arc;

use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use tokio::sync::{mpsc, watch};
use tokio_util::sync::CancellationToken;

use super::passthrough::ClientRequests;
mod connections;
mod expiry;
mod gate;
mod listen;
mod metrics;
mod probes;
mod tasks;
mod thin;
mod token_file;

use super::error::{HttpError, ServeError};
use super::handler::DeferServer;
use super::reload::{Reloader, Source, View as ReloadedView};
use super::shared::Shared;
use super::thin_calls::Calls;
use crate::config::{Config, Settings, TokenSource};
use crate::downstream::{Event, Pool, ServerHandle};
use expiry::{Holdings, Sessions};
use gate::{Gate, Limits, Tokens};

/// The path clients connect to.
pub(super) const MCP_PATH: &str = "/mcp";

/// Serves MCP over Streamable HTTP on `addr` until SIGINT or SIGTERM; then every
/// downstream server is stopped before we return.
///
/// # Errors
/// [`HttpError`] when the bind or the tokens are refused; when the address cannot be bound.
pub(crate) async fn serve_http(
    config: Config,
    addr: SocketAddr,
    profile: Option<String>,
) -> Result<(), ServeError> {
    let terminated = super::serve::terminated().map_err(ServeError::Signals)?;
    let settings = config.settings.clone();
    let tokens = Tokens::load(&settings.http)?;
    if tokens.is_none() && !addr.ip().is_loopback() {
        return Err(HttpError::OpenBind {
            addr,
            config: config.path.display().to_string(),
        }
        .into());
    }
    let listener = tokio::net::TcpListener::bind(addr)
        .await
        .map_err(|source| ServeError::Bind { addr, source })?;
    let bound = listener.local_addr().unwrap_or(addr);

    let shutdown = CancellationToken::new();
    // Servers start at once: there is no one client to wait for.
    let client = ClientRequests::for_many_clients();
    let (_link_tx, link_rx) = watch::channel(Some(client.many_clients_link()));
    let (pool, events) = Pool::start_after(&config, shutdown.child_token(), link_rx);
    let handles: Vec<ServerHandle> = pool.iter().cloned().collect();
    let tokens = tokens.map(Arc::new);

    // One view of the servers per path: all of them at /mcp, each profile's at /mcp/NAME.
    // Every view shares the one pool (a server runs once whatever the number of views and
    // sessions); each has its own registry, fed by `fan_out`, so its instructions and
    // search see its servers only.
    // The view at /mcp has every server at its own position, servers a reload adds
    // included (`None`); a profile's has the positions it named at start.
    let mut views = vec![(MCP_PATH.to_owned(), config.clone(), None)];
    for profile in &config.profiles {
        let (view, positions) = config.for_profile(&profile.name)?;
        views.push((
            format!("{MCP_PATH}/{}", profile.name),
            view,
            Some(positions),
        ));
    }
    let mut app = axum::Router::new();
    let holdings = Holdings::default();
    let mut all_sessions = Vec::with_capacity(views.len());
    let mut routes = Vec::with_capacity(views.len());
    let mut paths = Vec::with_capacity(views.len());
    let mut reloaded = Vec::with_capacity(views.len());
    let mut registries = Vec::with_capacity(views.len());
    for (path, view, positions) in views {
        let (tx, rx) = mpsc::unbounded_channel();
        let subset = match &positions {
            Some(positions) => positions.iter().map(|&i| handles[i].clone()).collect(),
            None => handles.clone(),
        };
        let shared = super::publish::start(view, subset, rx, client.clone())?;
        registries.push(shared.registry().clone());
        reloaded.push(ReloadedView {
            shared: shared.clone(),
            positions: positions.clone(),
        });
        let gate = View {
            settings: &settings,
            tokens: tokens.clone(),
            bound,
            stop: shutdown.child_token(),
            holdings: holdings.clone(),
        };
        let (router, sessions) = gate.mount(&path, shared);
        app = app.merge(router);
        all_sessions.push(sessions);
        routes.push((tx, positions));
        paths.push(path);
    }
    if let (Some(tokens), Some(TokenSource::File(path))) = (&tokens, &settings.http.tokens) {
        token_file::follow(
            path.clone(),
            tokens.clone(),
            all_sessions.clone(),
            shutdown.child_token(),
        );
    }
    let required = config.servers.iter().map(|s| s.required).collect();
    let probes = probes::Probes::new(
        handles.clone(),
        required,
        all_sessions,
        gate_for_probes(&settings, tokens.clone(), holdings),
        registries,
    );
    app = app.merge(probes.router());
    tokio::spawn(fan_out(events, routes));
    let pool = Arc::new(tokio::sync::Mutex::new(pool));
    let source = Source {
        path: config.path.clone(),
        profile,
    };
    Reloader::new(source, &config, pool.clone(), reloaded)
        .start(shutdown.child_token())
        .map_err(ServeError::Watch)?;

    for path in &paths {
        tracing::info!(url = %format!("http://{bound}{path}"), "serving MCP over Streamable HTTP");
    }
    let served = tokio::spawn(listen::serve(listener, app, settings.http.clone()));
    let abort = served.abort_handle();
    let result = tokio::select! {
        _ = served => Ok(()),
        signal = terminated => {
            tracing::info!(signal, "shutting down");
            Ok(())
        }
    };
    abort.abort();
    shutdown.cancel();
    pool.lock().await.stop_all().await;
    result
}

/// What every path is served with.
struct View<'a> {
    settings: &'a Settings,
    tokens: Option<Arc<Tokens>>,
    bound: SocketAddr,
    stop: CancellationToken,
    holdings: Holdings,
}

/// Browser origins allowed when `allowed_origins` is not set and we are bound to
/// loopback: pages served from this machine, which is who can reach us anyway. DNS
/// rebinding still fails: a rebound page's origin is its own domain, not `localhost`.
const LOOPBACK_ORIGINS: [&str; 6] = [
    "http://localhost:*",
    "http://127.0.0.1:*",
    "http://[::1]:*",
    "https://localhost:*",
    "https://127.0.0.1:*",
    "https://[::1]:*",
];

impl View<'_> {
    /// The route at `path`: rmcp's service over `shared`, its own sessions, behind the gate.
    fn mount(self, path: &str, shared: Arc<Shared>) -> (axum::Router, Arc<Sessions>) {
        let settings = self.settings;
        let sessions = Arc::new(Sessions::new(
            settings.session_idle,
            settings.http.max_concurrent_requests,
            settings.http.max_sessions_per_token,
            self.holdings.clone(),
        ));
        tokio::spawn(sessions.clone().expire_idle(self.stop.clone()));
        let origins: Vec<String> =
            if settings.http.allowed_origins.is_empty() && self.bound.ip().is_loopback() {
                LOOPBACK_ORIGINS.iter().map(|&o| o.to_owned()).collect()
            } else {
                settings.http.allowed_origins.clone()
            };
        let mut http = StreamableHttpServerConfig::default()
            .with_allowed_origins(origins)
            .enforce_origin_validation()
            .with_max_request_body_bytes(settings.max_message_bytes)
            .with_cancellation_token(self.stop.clone());
        http = if !settings.http.allowed_hosts.is_empty() {
            http.with_allowed_hosts(settings.http.allowed_hosts.iter().cloned())
        } else if self.bound.ip().is_loopback() {
            // The default: loopback names only (DNS-rebinding protection).
            http
        } else {
            // Reachable from elsewhere under names we cannot know; tokens guard it.
            http.disable_allowed_hosts()
        };
        // The thin path takes what rmcp's check would pass: the same list.
        let hosts = thin::Hosts::allowing(&http.allowed_hosts);
        // Each request without a session gets a session of its own, as rmcp gives it.
        let each = {
            let shared = shared.clone();
            Calls::each(move || DeferServer::session(&shared, None, None))
        };
        let sessionless = thin::Sessionless::start(
            hosts.clone(),
            each,
            DeferServer::session(&shared, None, None),
            self.stop,
        );
        let registry = shared.registry().clone();
        let service = StreamableHttpService::new(
            move || Ok(DeferServer::session(&shared, None, None)),
            sessions.clone(),
            http,
        );
        let gate = Gate::new(self.tokens, sessions.clone(), limits(settings))
            .naming(registry)
            .thin(hosts, sessionless);
        let router = axum::Router::new()
            .route_service(path, service)
            .layer(axum::middleware::from_fn_with_state(gate, gate::admit));
        (router, sessions)
    }
}

fn limits(settings: &Settings) -> Limits {
    Limits {
        max_body: settings.max_message_bytes,
        body_timeout: settings.http.body_timeout,
        max_in_flight: settings.http.max_concurrent_requests,
    }
}

/// The gate `/metrics` is behind: the same tokens as `/mcp`; it opens no session.
fn gate_for_probes(settings: &Settings, tokens: Option<Arc<Tokens>>, holdings: Holdings) -> Gate {
    let sessions = Arc::new(Sessions::new(settings.session_idle, 1, 1, holdings));
    Gate::new(tokens, sessions, limits(settings))
}

/// A session id as logs show it: its first four characters, enough to tell sessions
/// apart in one log, too few to take one over (the rest of a UUID is 100 random bits).
pub(super) fn masked(id: &str) -> String {
    let head: String = id.chars().take(4).collect();
    format!("{head}…")
}

/// Hands each downstream event to every view that has its server, under the server's
/// position in that view (`None`: every server, at its own position).
async fn fan_out(
    mut events: mpsc::UnboundedReceiver<Event>,
    routes: Vec<(mpsc::UnboundedSender<Event>, Option<Vec<usize>>)>,
) {
    while let Some(event) = events.recv().await {
        for (tx, positions) in &routes {
            let Some(positions) = positions else {
                let _ = tx.send(event.clone());
                continue;
            };
            let Some(local) = positions.iter().position(|&p| p == server_of(&event)) else {
                continue;
            };
            let mut event = event.clone();
            match &mut event {
                Event::Tools { server, .. }
                | Event::Prompts { server, .. }
                | Event::Resources { server, .. }
                | Event::ResourceUpdated { server, .. } => *server = local,
            }
            let _ = tx.send(event);
        }
    }
}

fn server_of(event: &Event) -> usize {
    match event {
        Event::Tools { server, .. }
        | Event::Prompts { server, .. }
        | Event::Resources { server, .. }
        | Event::ResourceUpdated { server, .. } => *server,
    }
}
