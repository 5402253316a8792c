//! Notices a dead connection from the messages that fail to go out.
//!
//! When a Streamable HTTP server restarts, our session is unknown to it: every POST fails
//! (`400`/`404`, or "connection refused" while it is down), but rmcp's service only logs the
//! failed send, so the call waits out its whole `tool_timeout` and the connection is never
//! re-opened. This wrapper around any rmcp client transport turns the first failed send
//! into (1) an immediate error answer for that request, naming the cause, and (2) the end
//! of the connection, so the supervisor restarts it with its usual backoff. An error the
//! server sends without an id (what a restarted server answers a POST of an unknown session
//! with: `400 {"error": "No valid session ID provided", "id": null}`) ends it the same way:
//! the calls in flight fail with that cause. Calls are never replayed (DESIGN.md invariant 4).

use std::sync::{Arc, Mutex};

use rmcp::RoleClient;
use rmcp::model::{ClientJsonRpcMessage, ErrorCode, ErrorData, JsonRpcError, JsonRpcMessage};
use rmcp::service::{RxJsonRpcMessage, TxJsonRpcMessage};
use rmcp::transport::Transport;
use tokio::sync::mpsc;

use super::cause::chain;
use crate::sync::lock;

/// Where the cause of a broken connection is left for the supervisor.
pub(super) type BrokenCause = Arc<Mutex<Option<Broken>>>;

/// Why an HTTP connection ended by itself; the first one seen is kept.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub(super) enum Broken {
    /// The server answered an error without an id: it no longer knows our session.
    #[error("the server refused the session: {0}")]
    Refused(String),
    /// A message could not be sent (the server is down, or the session is gone).
    #[error("the connection broke: {0}")]
    SendFailed(String),
}

pub(super) struct SessionWatch<T> {
    inner: T,
    failed_tx: mpsc::UnboundedSender<(Option<rmcp::model::RequestId>, String)>,
    failed: mpsc::UnboundedReceiver<(Option<rmcp::model::RequestId>, String)>,
    cause: BrokenCause,
    /// Set after the failure was answered: the next `receive` ends the connection.
    ended: bool,
}

impl<T> SessionWatch<T> {
    /// Wraps `inner`; `cause` receives the first send failure.
    pub(super) fn new(inner: T, cause: BrokenCause) -> SessionWatch<T> {
        let (failed_tx, failed) = mpsc::unbounded_channel();
        SessionWatch {
            inner,
            failed_tx,
            failed,
            cause,
            ended: false,
        }
    }
}

fn request_id(message: &ClientJsonRpcMessage) -> Option<rmcp::model::RequestId> {
    match message {
        JsonRpcMessage::Request(request) => Some(request.id.clone()),
        _ => None,
    }
}

impl<T> Transport<RoleClient> for SessionWatch<T>
where
    T: Transport<RoleClient> + Send,
{
    type Error = T::Error;

    fn send(
        &mut self,
        item: TxJsonRpcMessage<RoleClient>,
    ) -> impl Future<Output = Result<(), Self::Error>> + Send + 'static {
        let id = request_id(&item);
        let sending = self.inner.send(item);
        let failed = self.failed_tx.clone();
        async move {
            let sent = sending.await;
            if let Err(err) = &sent {
                let cause = crate::redact::redact(&chain(err)).into_owned();
                let _ = failed.send((id, cause));
            }
            sent
        }
    }

    async fn receive(&mut self) -> Option<RxJsonRpcMessage<RoleClient>> {
        if self.ended {
            return None;
        }
        tokio::select! {
            message = self.inner.receive() => match message {
                Some(JsonRpcMessage::Error(JsonRpcError { id: None, error, .. })) => {
                    let cause = crate::redact::redact(&error.message).into_owned();
                    tracing::warn!(%cause, "the server refused the session; reconnecting");
                    lock(&self.cause).get_or_insert_with(|| Broken::Refused(cause.clone()));
                    self.ended = true;
                    None
                }
                other => other,
            },
            Some((id, cause)) = self.failed.recv() => {
                tracing::warn!(%cause, "a message could not be sent; the connection is dead");
                lock(&self.cause).get_or_insert_with(|| Broken::SendFailed(cause.clone()));
                self.ended = true;
                id.map(|id| {
                    JsonRpcMessage::Error(JsonRpcError {
                        jsonrpc: Default::default(),
                        id: Some(id),
                        error: ErrorData::new(
                            ErrorCode::INTERNAL_ERROR,
                            format!("the request could not be sent: {cause}"),
                            None,
                        ),
                    })
                })
            }
        }
    }

    async fn close(&mut self) -> Result<(), Self::Error> {
        self.inner.close().await
    }
}
