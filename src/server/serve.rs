//! `mcp-defer serve`: wires config, downstream pool and handler to stdio, and shuts down
//! cleanly: stdin EOF, SIGINT or SIGTERM end the session, then every downstream server and
//! its process group is stopped before we exit.

use std::sync::Arc;
use std::time::Duration;

use rmcp::ServiceExt;
use tokio::sync::watch;
use tokio_util::sync::CancellationToken;

use super::error::ServeError;
use super::handler::DeferServer;
use super::passthrough::ClientRequests;
use super::reload::{Reloader, Source, View};
use crate::config::Config;
use crate::downstream::{ClientLink, Pool};

/// Once the client's capabilities are known, how long downstream servers give the
/// handshake answer before they spawn, unless the handshake completes sooner: spawning
/// 20 processes takes tens of milliseconds of the thread that answers (DESIGN.md section 10).
const HANDSHAKE_HEAD_START: Duration = Duration::from_millis(20);

/// How long downstream servers wait for the client to declare its capabilities (in
/// `initialize`, or the envelope of a 2026-07-28 request) before they start without any.
/// Each downstream handshake declares the client's capabilities, so they wait for them;
/// a client that says nothing this long is not one that answers sampling or elicitation,
/// and its tools should not wait longer. Codex drops servers later than ~1.5 s (7a).
const CLIENT_SILENCE_FALLBACK: Duration = Duration::from_secs(1);

/// Serves MCP on stdin/stdout until the client goes away or a signal arrives; reloads
/// the config file when it changes or on SIGHUP ([`super::reload`]). `profile` is the
/// `--profile` that `config` is the view of.
///
/// # Errors
/// When the stdio transport cannot start.
pub(crate) async fn serve(config: Config, profile: Option<String>) -> Result<(), ServeError> {
    // Signals are taken over first: a SIGTERM during the handshake must still reap children.
    let terminated = terminated().map_err(ServeError::Signals)?;
    let shutdown = CancellationToken::new();
    let client = ClientRequests::new();
    // Downstream servers start once the client's capabilities are known and the handshake
    // is answered, or without capabilities when the client stays silent.
    let answered = CancellationToken::new();
    let (link_tx, link) = watch::channel(None);
    let (pool, events) = Pool::start_after(&config, shutdown.child_token(), link);
    tokio::spawn(start_servers(client.clone(), answered.clone(), link_tx));
    let handles = pool.iter().cloned().collect();
    let max_message_bytes = config.settings.max_message_bytes;
    let source = Source {
        path: config.path.clone(),
        profile,
    };
    let started = config.clone();
    let tool_lists = super::stdio::ToolLists::default();
    let server = DeferServer::new(config, handles, events, client, tool_lists.clone())?;
    let pool = Arc::new(tokio::sync::Mutex::new(pool));
    let view = View {
        shared: server.shared().clone(),
        positions: None,
    };
    Reloader::new(source, &started, pool.clone(), vec![view])
        .start(shutdown.child_token())
        .map_err(ServeError::Watch)?;
    let calls = super::thin_calls::Calls::of(&server);
    let session = async {
        // Pipes and sockets (how clients launch us) go through the IO reactor
        // (`platform::client_stdio`). The framing is ours: every line gets an answer (see
        // `stdio`).
        let (stdin, stdout) = crate::platform::client_stdio();
        let framed = super::stdio::Framed::new(
            tokio::io::BufReader::new(stdin),
            stdout,
            max_message_bytes,
            tool_lists,
            calls.clone(),
        );
        let served = server.serve(framed).await;
        answered.cancel();
        match served {
            Ok(running) => {
                calls.open(running.peer().clone());
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
    pool.lock().await.stop_all().await;
    Ok(())
}

/// Lets the downstream servers start: once the client has declared its capabilities (then
/// after the handshake answer's head start) or once it has been silent too long.
async fn start_servers(
    client: ClientRequests,
    answered: CancellationToken,
    link: watch::Sender<Option<ClientLink>>,
) {
    let capabilities = match tokio::time::timeout(CLIENT_SILENCE_FALLBACK, client.declared()).await
    {
        Ok(capabilities) => {
            tokio::select! {
                () = tokio::time::sleep(HANDSHAKE_HEAD_START) => {}
                () = answered.cancelled() => {}
            }
            capabilities
        }
        Err(_) => {
            tracing::info!(
                waited_ms = CLIENT_SILENCE_FALLBACK.as_millis() as u64,
                "the client declared no capabilities yet; starting servers without them"
            );
            Default::default()
        }
    };
    link.send_replace(Some(ClientLink::new(&capabilities, Arc::new(client))));
}

/// Installs the handlers now and returns a future that resolves on SIGINT or SIGTERM
/// (Windows: Ctrl-C, Ctrl-Break, console close, logoff, shutdown) with its name.
///
/// # Errors
/// When the handlers cannot be installed.
pub(super) fn terminated() -> std::io::Result<impl Future<Output = &'static str>> {
    crate::platform::terminated()
}
