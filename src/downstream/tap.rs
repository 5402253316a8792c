//! One wrapper for the taps on a downstream connection's transport: [`Tap`] passes every
//! message through to rmcp and back, and shows each to a [`Hook`] on the way. What a tap
//! is for lives in its hook (`logging.rs` forwards log messages, `progress.rs` routes
//! progress, `http_raw.rs` hands on an HTTP server's raw answers), so the
//! send/receive/close delegation is written once.
//!
//! `session_watch.rs` is not a hook: it watches the outcome of each send and races a second
//! source in `receive`, which a hook that only sees messages cannot do.

use rmcp::RoleClient;
use rmcp::service::{RxJsonRpcMessage, TxJsonRpcMessage};
use rmcp::transport::Transport;

/// What a [`Tap`] does with the messages it sees, in the order they pass.
pub(crate) trait Hook: Send {
    /// Sees each message before it goes to the server.
    fn sending(&mut self, _message: &TxJsonRpcMessage<RoleClient>) {}

    /// Sees each message read from the server before rmcp does: `Some` passes it on
    /// (changed or not), `None` keeps it from rmcp. The next message is read only once
    /// this is done, so what the hook does keeps the order the server sent in.
    fn received(
        &mut self,
        message: RxJsonRpcMessage<RoleClient>,
    ) -> impl Future<Output = Option<RxJsonRpcMessage<RoleClient>>> + Send;
}

/// A client transport that shows every message to its [`Hook`]; the rest is `inner`'s.
pub(super) struct Tap<T, H> {
    inner: T,
    hook: H,
}

impl<T, H> Tap<T, H> {
    pub(super) fn new(inner: T, hook: H) -> Tap<T, H> {
        Tap { inner, hook }
    }
}

impl<T, H> Transport<RoleClient> for Tap<T, H>
where
    T: Transport<RoleClient> + Send,
    H: Hook,
{
    type Error = T::Error;

    fn send(
        &mut self,
        item: TxJsonRpcMessage<RoleClient>,
    ) -> impl Future<Output = Result<(), Self::Error>> + Send + 'static {
        self.hook.sending(&item);
        self.inner.send(item)
    }

    async fn receive(&mut self) -> Option<RxJsonRpcMessage<RoleClient>> {
        loop {
            let message = self.inner.receive().await?;
            if let Some(message) = self.hook.received(message).await {
                return Some(message);
            }
        }
    }

    async fn close(&mut self) -> Result<(), Self::Error> {
        self.inner.close().await
    }
}
