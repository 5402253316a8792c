//! The accept loop: hyper's HTTP/1 server with the connection-level limits `axum::serve`
//! does not set, so a client that never finishes its request cannot hold a connection.
//!
//! - `header_timeout_sec`: hyper's header-read timer. It runs from the moment the
//!   connection waits for a request head, so it also bounds how long a kept-alive
//!   connection may sit idle between requests. A slowloris connection (headers sent a
//!   byte at a time, or never) is closed after it, before any token is checked.
//! - `max_connections`: a connection past the cap is closed at once instead of left in
//!   the kernel's backlog, so a flood costs us a file descriptor for microseconds and
//!   the clients already connected keep being served. Connections that have not yet sent
//!   a request with a valid token hold at most half of it, one peer address a share of
//!   that, and make room for new ones ([`super::connections`]): sockets without a token
//!   never lock a token holder out.
//! - The soft file-descriptor limit is raised to the hard one at start (systemd's default
//!   soft limit, 1024, is what a flood would hit first).
//! - `TCP_NODELAY` on every accepted socket: a response is a few small writes (headers,
//!   an SSE event); with Nagle's algorithm on, each waits for the client's delayed ACK
//!   (40 ms on Linux), which is what the TypeScript SDK saw per call.
//!
//! The body-read timeout is the gate's (`gate.rs` reads the body under it).

use std::sync::Arc;
use std::time::Duration;

use hyper::server::conn::http1;
use hyper_util::rt::{TokioIo, TokioTimer};
use tokio::net::TcpListener;

use super::connections::Connections;

use crate::config::HttpSettings;

/// How long to wait before accepting again after `accept` failed (EMFILE, ENFILE,
/// ENOBUFS): short, so served clients see no pause once descriptors are free again.
const ACCEPT_BACKOFF: Duration = Duration::from_millis(10);

/// Serves `app` on `listener` until the future is dropped; never returns otherwise.
///
/// Run it on a worker (`tokio::spawn`), not on `block_on`'s thread: a connection's task
/// then starts on the worker that accepted it, where `block_on`'s thread must wake a worker
/// for each one (a client that opens a connection per call pays it per call).
pub(super) async fn serve(listener: TcpListener, app: axum::Router, settings: HttpSettings) {
    crate::platform::raise_fd_limit();
    let connections = Arc::new(Connections::new(settings.max_connections));
    let mut builder = http1::Builder::new();
    builder
        .timer(TokioTimer::new())
        .header_read_timeout(settings.header_timeout)
        .keep_alive(true);
    let builder = Arc::new(builder);
    loop {
        let (stream, peer) = match listener.accept().await {
            Ok(accepted) => accepted,
            Err(err) => {
                tracing::debug!(error = %err, "accept failed; retrying");
                tokio::time::sleep(ACCEPT_BACKOFF).await;
                continue;
            }
        };
        let Ok(slot) = connections.accept(peer.ip()) else {
            // Dropping the stream closes it: the client sees the connection reset and
            // may retry; nothing of ours is held.
            tracing::debug!(
                max_connections = settings.max_connections,
                "connection refused: at [settings.http] max_connections"
            );
            super::metrics::connection_refused();
            drop(stream);
            continue;
        };
        if let Err(err) = stream.set_nodelay(true) {
            tracing::debug!(error = %err, "cannot set TCP_NODELAY");
        }
        let service = WithConnection {
            app: app.clone(),
            connection: slot.connection.clone(),
        };
        let builder = builder.clone();
        tokio::spawn(async move {
            let _open = super::metrics::connection_opened();
            let connection = builder.serve_connection(TokioIo::new(stream), service);
            tokio::select! {
                served = connection => {
                    if let Err(err) = served {
                        // Timeouts, resets and malformed requests: the client's doing.
                        tracing::trace!(error = %err, "connection ended with an error");
                    }
                }
                // Closed for room (`connections.rs`): dropping it closes the socket.
                () = slot.close.cancelled() => {}
            }
            drop(slot);
        });
    }
}

/// The router, each request carrying its connection for the gate to count it as
/// authenticated. (A layer per connection would rebuild every route of the router.)
#[derive(Clone)]
struct WithConnection {
    app: axum::Router,
    connection: super::connections::Connection,
}

impl hyper::service::Service<http::Request<hyper::body::Incoming>> for WithConnection {
    type Response = axum::response::Response;
    type Error = std::convert::Infallible;
    type Future = axum::routing::future::RouteFuture<std::convert::Infallible>;

    fn call(&self, mut request: http::Request<hyper::body::Incoming>) -> Self::Future {
        request.extensions_mut().insert(self.connection.clone());
        tower_service::Service::call(&mut self.app.clone(), request)
    }
}
