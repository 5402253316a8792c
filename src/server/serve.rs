//! `mcp-defer serve`: wires config, downstream pool and handler to stdio, and shuts down
//! cleanly: stdin EOF, SIGINT or SIGTERM end the session, then every downstream server and
//! its process group is stopped before we exit.

use rmcp::ServiceExt;
use tokio_util::sync::CancellationToken;

use super::DeferServer;
use crate::config::Config;
use crate::downstream::Pool;

/// Serves MCP on stdin/stdout until the client goes away or a signal arrives.
///
/// # Errors
/// When the stdio transport cannot start.
pub async fn serve(config: Config) -> anyhow::Result<()> {
    let shutdown = CancellationToken::new();
    let (pool, events) = Pool::start(&config, shutdown.child_token());
    let handles = pool.iter().cloned().collect();
    let server = DeferServer::new(config, handles, events)?;
    let running = server.serve(rmcp::transport::stdio()).await;
    match running {
        Ok(running) => {
            let ct = running.cancellation_token();
            tokio::select! {
                quit = running.waiting() => {
                    tracing::debug!(?quit, "client session ended");
                }
                signal = terminated() => {
                    tracing::info!(signal, "shutting down");
                    ct.cancel();
                }
            }
        }
        // A client that hangs up before the handshake is not our error to report loudly.
        Err(err) => tracing::warn!(error = %err, "client session did not start"),
    }
    shutdown.cancel();
    pool.shutdown().await;
    Ok(())
}

/// Resolves on SIGINT or SIGTERM, with the signal's name.
async fn terminated() -> &'static str {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{SignalKind, signal};
        match (
            signal(SignalKind::interrupt()),
            signal(SignalKind::terminate()),
        ) {
            (Ok(mut int), Ok(mut term)) => tokio::select! {
                _ = int.recv() => "SIGINT",
                _ = term.recv() => "SIGTERM",
            },
            _ => std::future::pending().await,
        }
    }
    #[cfg(not(unix))]
    {
        let _ = tokio::signal::ctrl_c().await;
        "ctrl-c"
    }
}
