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
    let calls = super::thin_calls::Calls::of(&server);
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

#[cfg(test)]
mod tests {
    // A test panics on broken setup; the crate-wide denial is for the library.
    #![allow(clippy::unwrap_used)]

    use super::*;
    use crate::platform::hub::connect;
    use serde_json::{Value, json};
    use tokio::io::{AsyncBufReadExt, AsyncWriteExt};

    /// One session's end of the hub's channel, speaking newline-delimited JSON-RPC.
    struct Session {
        lines: tokio::io::Lines<BufReader<Box<dyn tokio::io::AsyncRead + Send + Unpin>>>,
        writer: Box<dyn tokio::io::AsyncWrite + Send + Unpin>,
    }

    impl Session {
        async fn join(socket: &Path) -> Session {
            Session::over(connect(socket).await.unwrap())
        }

        fn over(channel: Channel) -> Session {
            Session {
                lines: BufReader::new(channel.reader).lines(),
                writer: channel.writer,
            }
        }

        async fn send(&mut self, message: Value) {
            let mut line = message.to_string();
            line.push('\n');
            self.writer.write_all(line.as_bytes()).await.unwrap();
            self.writer.flush().await.unwrap();
        }

        /// The answer to request `id`, skipping notifications.
        async fn request(&mut self, id: u64, method: &str, params: Value) -> Value {
            self.send(json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}))
                .await;
            loop {
                let line = self.lines.next_line().await.unwrap().unwrap();
                let message: Value = serde_json::from_str(&line).unwrap();
                if message["id"] == id && message.get("method").is_none() {
                    return message;
                }
            }
        }

        /// initialize, initialized, tools/list: the names listed.
        async fn open(&mut self) -> Vec<String> {
            let init = self
                .request(
                    1,
                    "initialize",
                    json!({"protocolVersion": "2025-06-18", "capabilities": {},
                           "clientInfo": {"name": "hub-unit", "version": "1"}}),
                )
                .await;
            assert!(init.get("result").is_some(), "{init}");
            self.send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}))
                .await;
            let listed = self.request(2, "tools/list", json!({})).await;
            (listed["result"]["tools"].as_array().unwrap().iter())
                .map(|t| t["name"].as_str().unwrap().to_owned())
                .collect()
        }
    }

    /// The hub over this OS's channel (a Unix socket, or the named pipe on Windows, where
    /// this runs under Wine in `.ci/cross`): two sessions at once, each with its handshake
    /// and list, then the hub leaves with its last session (`hub_grace_sec = 0`).
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn two_sessions_share_one_hub_over_the_channel_and_it_leaves_after_them() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("servers.toml");
        std::fs::write(&path, "[settings]\nhub_grace_sec = 0\n").unwrap();
        let config = Config::load(&path).unwrap();
        let socket = dir.path().join("hub-unit.sock");
        let sessions = async {
            // The first session connects as soon as the hub listens (a probe that came and
            // went would end the hub's first wait: its grace is 0).
            let deadline = tokio::time::Instant::now() + Duration::from_secs(30);
            let mut a = loop {
                match connect(&socket).await {
                    Ok(channel) => break Session::over(channel),
                    Err(ChannelError::NotListening { .. }) => {}
                    Err(err) => panic!("{err}"),
                }
                assert!(
                    tokio::time::Instant::now() < deadline,
                    "the hub never listened"
                );
                tokio::time::sleep(Duration::from_millis(10)).await;
            };
            let a_tools = a.open().await;
            let joined = std::time::Instant::now();
            let mut b = Session::join(&socket).await;
            let b_tools = b.open().await;
            eprintln!(
                "a session joining the running hub: first tools/list in {:.1} ms",
                joined.elapsed().as_secs_f64() * 1000.0
            );
            for tools in [&a_tools, &b_tools] {
                assert!(tools.iter().any(|t| t == "call_tool"), "{tools:?}");
            }
            assert_eq!(a_tools, b_tools);
        };
        let (served, ()) = tokio::join!(serve_hub(config, None, &socket), sessions);
        served.unwrap();
        assert!(matches!(
            connect(&socket).await.err().unwrap(),
            ChannelError::NotListening { .. }
        ));
    }
}
