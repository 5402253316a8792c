//! `mcp-defer serve`: wires config, downstream pool and handler to stdio, and shuts down
//! cleanly: stdin EOF, SIGINT or SIGTERM end the session, then every downstream server and
//! its process group is stopped before we exit.

use std::time::Duration;

use rmcp::ServiceExt;
use tokio_util::sync::CancellationToken;

use super::DeferServer;
use crate::config::Config;
use crate::downstream::Pool;

/// How long downstream servers wait for the client's handshake before they start anyway:
/// the handshake is answered first, then the processes are spawned (DESIGN.md section 10).
const HANDSHAKE_HEAD_START: Duration = Duration::from_millis(20);

/// Serves MCP on stdin/stdout until the client goes away or a signal arrives.
///
/// # Errors
/// When the stdio transport cannot start.
pub async fn serve(config: Config) -> anyhow::Result<()> {
    // Signals are taken over first: a SIGTERM during the handshake must still reap children.
    let terminated = terminated()?;
    let shutdown = CancellationToken::new();
    // Downstream servers start once the handshake is answered, or after a short head
    // start whatever the client does (a 2026-07-28 client may never send `initialize`).
    let go = CancellationToken::new();
    let (pool, events) = Pool::start_after(&config, shutdown.child_token(), go.clone());
    tokio::spawn({
        let go = go.clone();
        async move {
            tokio::time::sleep(HANDSHAKE_HEAD_START).await;
            go.cancel();
        }
    });
    let handles = pool.iter().cloned().collect();
    let max_message_bytes = config.settings.max_message_bytes;
    let server = DeferServer::new(config, handles, events)?;
    let session = async {
        // Pipes (how clients launch us) go through the IO reactor; the blocking `stdio()`
        // handles would cost a thread hand-off per message in each direction. The framing is
        // ours: every line gets an answer (see `framing`).
        let (stdin, stdout) = rmcp::transport::stdio_pipes();
        let framed = super::framing::Framed::new(
            tokio::io::BufReader::new(stdin),
            stdout,
            max_message_bytes,
        );
        let served = server.serve(framed).await;
        go.cancel();
        match served {
            Ok(running) => {
                let quit = running.waiting().await;
                tracing::debug!(?quit, "client session ended");
            }
            // A client that hangs up before the handshake is not an error worth more.
            Err(err) => tracing::warn!(error = %err, "client session did not start"),
        }
    };
    tokio::select! {
        () = session => {}
        signal = terminated => tracing::info!(signal, "shutting down"),
    }
    shutdown.cancel();
    pool.shutdown().await;
    Ok(())
}

/// Installs the handlers now and returns a future that resolves on SIGINT or SIGTERM with
/// the signal's name.
///
/// # Errors
/// When the handlers cannot be installed.
fn terminated() -> std::io::Result<impl Future<Output = &'static str>> {
    use tokio::signal::unix::{SignalKind, signal};
    let mut interrupt = signal(SignalKind::interrupt())?;
    let mut terminate = signal(SignalKind::terminate())?;
    Ok(async move {
        tokio::select! {
            _ = interrupt.recv() => "SIGINT",
            _ = terminate.recv() => "SIGTERM",
        }
    })
}
