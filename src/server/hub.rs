//! `mcp-defer serve --hub`: one process per user and config that serves every stdio session
//! of that config over one shared set of servers (issue 29). Sessions reach it through
//! [`crate::relay`], over a private local channel ([`crate::platform::hub`]); each connection
//! is one session, served by the same transport as stdio ([`super::stdio::Framed`]) with its
//! own exposed list, notifier and log level, as an HTTP session is (`server/http/`).
//!
//! What a shared server may ask of its client is what `serve --http` allows: sampling and
//! elicitation reach the session whose call they come during; roots, and any request
//! outside a call, have no one client and are not offered (docs/design.md, "The hub").
//!
//! The hub leaves `hub_grace_sec` after its last session ends, on SIGINT or SIGTERM, and
//! stops every server as `serve` does.

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use rmcp::ServiceExt;
use tokio::io::BufReader;
use tokio::sync::watch;
use tokio_util::sync::CancellationToken;

use super::error::ServeError;
use super::handler::DeferServer;
use super::passthrough::ClientRequests;
use super::reload::{Reloader, Source, View};
use super::session::Mode;
use super::shared::Shared;
use super::stdio::{Framed, ToolLists};
use crate::config::Config;
use crate::downstream::Pool;
use crate::platform::hub::{Channel, ChannelError, Listener};

/// How long a hub waits for its first session: the one that started it connects within
/// milliseconds; a hub started by hand gets time to be joined.
const FIRST_SESSION_WAIT: Duration = Duration::from_secs(30);

/// Serves sessions on the socket at `socket` until the last one has been gone
/// `hub_grace_sec`, or a signal arrives.
///
/// # Errors
/// When the socket cannot be bound (another hub listens there, or it is refused), or the
/// shared state cannot be built.
pub(crate) async fn serve_hub(
    config: Config,
    profile: Option<String>,
    socket: &Path,
) -> Result<(), ServeError> {
    let terminated = super::serve::terminated().map_err(ServeError::Signals)?;
    let listener = Listener::bind(socket).await.map_err(ServeError::Hub)?;
    let shutdown = CancellationToken::new();
    // As `serve --http`: servers start at once, offered what many clients can answer.
    let client = ClientRequests::for_many_clients();
    let (_link_tx, link_rx) = watch::channel(Some(client.many_clients_link()));
    let (pool, events) = Pool::start_after(&config, shutdown.child_token(), link_rx);
    let handles = pool.iter().cloned().collect();
    let grace = config.settings.hub_grace;
    let max = config.settings.max_message_bytes;
    let source = Source {
        path: config.path.clone(),
        profile,
    };
    let started = config.clone();
    let shared = super::publish::start(config, handles, events, client)?;
    let pool = Arc::new(tokio::sync::Mutex::new(pool));
    let view = View {
        shared: shared.clone(),
        positions: None,
    };
    Reloader::new(source, &started, pool.clone(), vec![view])
        .start(shutdown.child_token())
        .map_err(ServeError::Watch)?;
    tracing::info!(socket = %socket.display(), "the hub is listening");

    let (count, mut counted) = watch::channel(0usize);
    let count = Arc::new(count);
    tokio::pin!(terminated);
    let mut first = true;
    loop {
        let idle = idle_for(
            &mut counted,
            if first {
                grace.max(FIRST_SESSION_WAIT)
            } else {
                grace
            },
        );
        tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok(channel) => {
                    first = false;
                    count.send_modify(|n| *n += 1);
                    let count = count.clone();
                    let shared = shared.clone();
                    tokio::spawn(async move {
                        session(&shared, channel, max).await;
                        count.send_modify(|n| *n -= 1);
                    });
                }
                Err(ChannelError::ForeignPeer { peer, .. }) => {
                    tracing::warn!(%peer, "refused a connection of another user");
                }
                Err(err) => {
                    tracing::warn!(error = %err, "cannot accept a session");
                    // Out of descriptors, most likely: give sessions a moment to end.
                    tokio::time::sleep(Duration::from_millis(100)).await;
                }
            },
            () = idle => {
                tracing::info!(grace_sec = grace.as_secs(), "no session left; the hub leaves");
                break;
            }
            signal = &mut terminated => {
                tracing::info!(signal, "shutting down");
                break;
            }
        }
    }
    // No session joins a hub on its way out.
    drop(listener);
    shutdown.cancel();
    pool.lock().await.stop_all().await;
    Ok(())
}

/// Resolves once no session has been connected for `grace`.
async fn idle_for(counted: &mut watch::Receiver<usize>, grace: Duration) {
    loop {
        if counted.wait_for(|n| *n == 0).await.is_err() {
            return std::future::pending().await;
        }
        tokio::select! {
            () = tokio::time::sleep(grace) => return,
            changed = counted.changed() => if changed.is_err() {
                return std::future::pending().await;
            },
        }
    }
}

/// One session over `channel`, as a stdio session is served.
async fn session(shared: &Arc<Shared>, channel: Channel, max: usize) {
    let lists = ToolLists::default();
    let server = DeferServer::session(shared, Some(Mode::Connection), Some(lists.clone()));
    let calls = super::serve::thin_calls(&server);
    let framed = Framed::new(
        BufReader::new(channel.reader),
        channel.writer,
        max,
        lists,
        calls.clone(),
    );
    match server.serve(framed).await {
        Ok(running) => {
            calls.open(running.peer().clone());
            let quit = running.waiting().await;
            tracing::debug!(?quit, "a hub session ended");
        }
        Err(err) => tracing::debug!(error = %err, "a hub session did not start"),
    }
}
