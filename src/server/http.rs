//! `mcp-defer serve --http ADDR`: many clients over Streamable HTTP at `/mcp`, one shared
//! set of downstream servers.
//!
//! rmcp's `StreamableHttpService` speaks the transport (sessions with `Mcp-Session-Id` for
//! `initialize` clients, stateless 2026-07-28 requests, SSE, `Host` and `Origin` checks,
//! the body size limit); axum serves it. This module owns what is ours around it: one
//! [`Shared`] state and one downstream pool for the process, a [`DeferServer`] session per
//! client ([`super::session`]), bearer tokens ([`super::gate`]), the bind rule (loopback
//! unless auth is configured) and session expiry ([`super::sessions`]). docs/design.md
//! section 16 has the rules.

use std::net::SocketAddr;
use std::sync::Arc;

use anyhow::Context;
use rmcp::model::{ClientCapabilities, ElicitationCapability, SamplingCapability};
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use tokio::sync::watch;
use tokio_util::sync::CancellationToken;

use super::client_requests::ClientRequests;
use super::gate::{Gate, Tokens};
use super::sessions::Sessions;
use super::{DeferServer, Shared};
use crate::config::Config;
use crate::downstream::{ClientLink, Pool};

/// The path clients connect to.
pub const MCP_PATH: &str = "/mcp";

/// Why `serve --http` cannot start.
#[derive(Debug, thiserror::Error)]
pub enum HttpError {
    #[error(
        "refusing to serve on {addr} without auth: anyone who can reach it could call every \
         configured server. Set `tokens_env = \"VAR\"` or `token_file = \"path\"` under \
         [settings.http] in {config}, or bind 127.0.0.1"
    )]
    OpenBind { addr: SocketAddr, config: String },
    #[error(
        "[settings.http] tokens_env = \"{var}\": the variable is unset or holds no token; \
         export {var}=<token>"
    )]
    NoTokenInEnv { var: String },
    #[error("[settings.http] token_file = \"{path}\": cannot read it: {cause}")]
    TokenFile { path: String, cause: std::io::Error },
    #[error("[settings.http] token_file = \"{path}\" holds no token; write one a line")]
    NoTokenInFile { path: String },
}

/// Serves MCP over Streamable HTTP on `addr` until SIGINT or SIGTERM; then every
/// downstream server is stopped before we return.
///
/// # Errors
/// [`HttpError`] when the bind or the tokens are refused; when the address cannot be bound.
pub async fn serve_http(config: Config, addr: SocketAddr) -> anyhow::Result<()> {
    let terminated = super::serve::terminated()?;
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
        .with_context(|| format!("cannot listen on {addr}"))?;
    let bound = listener.local_addr().unwrap_or(addr);

    let shutdown = CancellationToken::new();
    // Servers start at once: there is no one client to wait for. They are offered sampling
    // and elicitation, which reach the client whose call they come during, and not roots:
    // roots belong to one client, and many share these servers.
    let client = ClientRequests::for_many_clients();
    let mut capabilities = ClientCapabilities::default();
    capabilities.sampling = Some(SamplingCapability::default());
    capabilities.elicitation = Some(ElicitationCapability::default());
    let link = ClientLink::new(&capabilities, Arc::new(client.clone()));
    let (_link_tx, link_rx) = watch::channel(Some(link));
    let (pool, events) = Pool::start_after(&config, shutdown.child_token(), link_rx);
    let handles = pool.iter().cloned().collect();
    let shared = Shared::new(config, handles, events, client)?;

    let sessions = Arc::new(Sessions::new(
        settings.session_idle,
        settings.http.max_concurrent_requests,
    ));
    tokio::spawn(sessions.clone().expire_idle(shutdown.child_token()));

    let mut http = StreamableHttpServerConfig::default()
        .with_allowed_origins(settings.http.allowed_origins.iter().cloned())
        .enforce_origin_validation()
        .with_max_request_body_bytes(settings.max_message_bytes)
        .with_cancellation_token(shutdown.child_token());
    http = if !settings.http.allowed_hosts.is_empty() {
        http.with_allowed_hosts(settings.http.allowed_hosts.iter().cloned())
    } else if bound.ip().is_loopback() {
        // The default: loopback names only (DNS-rebinding protection).
        http
    } else {
        // Reachable from elsewhere under names we cannot know; tokens guard it.
        http.disable_allowed_hosts()
    };
    let factory = shared.clone();
    let service = StreamableHttpService::new(
        move || Ok(DeferServer::session(&factory, None)),
        sessions.clone(),
        http,
    );
    let gate = Gate::new(tokens, sessions);
    let app = axum::Router::new().route_service(MCP_PATH, service).layer(
        axum::middleware::from_fn_with_state(gate, super::gate::admit),
    );

    tracing::info!(url = %format!("http://{bound}{MCP_PATH}"), "serving MCP over Streamable HTTP");
    let served = axum::serve(listener, app);
    let result = tokio::select! {
        served = served => served.context("the HTTP server failed"),
        signal = terminated => {
            tracing::info!(signal, "shutting down");
            Ok(())
        }
    };
    shutdown.cancel();
    drop(shared);
    pool.shutdown().await;
    result
}
