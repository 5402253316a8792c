//! The link from a downstream connection back to mcp-defer's own client.
//!
//! A downstream server may ask its client for sampling, elicitation or roots. mcp-defer is
//! that client, yet only its own client can answer, so each downstream [`Handler`] holds a
//! [`ClientLink`]: the capabilities to declare in the downstream handshake (exactly the
//! client's roots, sampling and elicitation) and an [`Upstream`] that carries a request to
//! the client. The server side implements [`Upstream`]; this module must not import
//! `server` (DESIGN.md section 2), which is why the link is a trait object.
//!
//! [`InFlight`] records which proxied call each in-flight downstream request serves, so a
//! request the server sends during that call is tied to the client's request it belongs to.
//!
//! [`Handler`]: super::handler::Handler

use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex};

use crate::protocol::method;
use rmcp::model::{ClientCapabilities, ClientResult, ErrorData, InputRequest, RequestId};
#[expect(deprecated, reason = "MCP logging is deprecated by SEP-2577")]
use rmcp::model::{LoggingLevel, LoggingMessageNotificationParam};
use rmcp::service::InboundStreamOrigin;
use tokio_util::sync::CancellationToken;

/// The answer to one request a downstream server sent its client.
pub type UpstreamFuture = Pin<Box<dyn Future<Output = Result<ClientResult, ErrorData>> + Send>>;

/// Done once the client's transport has taken a forwarded log message (or dropped it).
pub type LogFuture = Pin<Box<dyn Future<Output = ()> + Send>>;

/// Names the client request a proxied call was made for. The server side chooses the
/// number; downstream only carries it from the call to the requests made during it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct CallOrigin(pub u64);

/// Carries a downstream server's request to mcp-defer's client and brings the answer back.
pub trait Upstream: Send + Sync + 'static {
    /// Asks the client `request` (sampling, elicitation or roots) for a downstream server.
    /// `call` is the proxied call it came during, when one is in flight on that connection.
    /// `cancel` fires when the downstream server withdraws the request.
    ///
    /// An error is sent back to the downstream server as the JSON-RPC error of its request:
    /// it must name why the client cannot answer (a capability it did not declare, an era
    /// that cannot carry the request), never leave the request hanging.
    fn ask(
        &self,
        request: InputRequest,
        call: Option<CallOrigin>,
        cancel: CancellationToken,
    ) -> UpstreamFuture;

    /// Passes a server's `notifications/message` on to the client, tagged with `server`
    /// (`logging.rs`). `call` is the proxied call it came during, when one is in flight.
    /// Without a client that takes MCP logging the message stays in our stderr log only.
    #[expect(deprecated, reason = "MCP logging is deprecated by SEP-2577")]
    fn log(
        &self,
        _server: &str,
        _message: LoggingMessageNotificationParam,
        _call: Option<CallOrigin>,
    ) -> LogFuture {
        Box::pin(std::future::ready(()))
    }

    /// Passes a server's 2025-11-25 `notifications/tasks/status` on to the client; `task`
    /// is its params (the task, under the server's own id). Without a client that takes
    /// tasks it goes nowhere.
    fn task_status(&self, _server: &str, _task: serde_json::Value) -> LogFuture {
        Box::pin(std::future::ready(()))
    }

    /// The level servers are asked to log at: the most verbose one a client set with
    /// `logging/setLevel`, `None` while none did (servers then choose).
    #[expect(deprecated, reason = "MCP logging is deprecated by SEP-2577")]
    fn log_level(&self) -> Option<LoggingLevel> {
        None
    }
}

/// What each downstream connection knows about mcp-defer's client.
#[derive(Clone)]
pub struct ClientLink {
    capabilities: ClientCapabilities,
    upstream: Arc<dyn Upstream>,
}

impl ClientLink {
    /// The link for a client that declared `client`. Downstream servers are told exactly
    /// the client's roots, sampling and elicitation (with their sub-capabilities): a server
    /// then never asks for what cannot be answered, and servers that list some tools only
    /// to capable clients list them. Experimental and extension capabilities stay ours to
    /// implement, so they are not passed on.
    pub fn new(client: &ClientCapabilities, upstream: Arc<dyn Upstream>) -> ClientLink {
        let mut capabilities = ClientCapabilities::default();
        capabilities.roots = client.roots.clone();
        capabilities.sampling = client.sampling.clone();
        capabilities.elicitation = client.elicitation.clone();
        ClientLink {
            capabilities,
            upstream,
        }
    }

    /// No client at all (`check`, `list`): nothing is declared and nothing can be asked.
    pub fn none() -> ClientLink {
        ClientLink {
            capabilities: ClientCapabilities::default(),
            upstream: Arc::new(NoClient),
        }
    }

    /// The capabilities declared in each downstream handshake.
    pub fn capabilities(&self) -> &ClientCapabilities {
        &self.capabilities
    }

    pub fn upstream(&self) -> &Arc<dyn Upstream> {
        &self.upstream
    }
}

impl std::fmt::Debug for ClientLink {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ClientLink")
            .field("capabilities", &self.capabilities)
            .finish_non_exhaustive()
    }
}

/// The upstream of a command with no MCP client: every request is refused with a reason.
struct NoClient;

impl Upstream for NoClient {
    fn ask(
        &self,
        request: InputRequest,
        _call: Option<CallOrigin>,
        _cancel: CancellationToken,
    ) -> UpstreamFuture {
        let message = format!(
            "mcp-defer has no MCP client in this command to answer {}",
            input_method(&request)
        );
        Box::pin(async move { Err(ErrorData::invalid_request(message, None)) })
    }
}

/// The JSON-RPC method of an input request, for messages.
pub fn input_method(request: &InputRequest) -> &'static str {
    match request {
        InputRequest::CreateMessage(_) => method::SAMPLING_CREATE_MESSAGE,
        InputRequest::Elicitation(_) => method::ELICITATION_CREATE,
        InputRequest::ListRoots(_) => method::ROOTS_LIST,
        _ => "a client request",
    }
}

/// The proxied calls in flight on one connection, oldest first.
#[derive(Debug, Default)]
pub(crate) struct InFlight(Mutex<Vec<Entry>>);

#[derive(Debug)]
struct Entry {
    key: u64,
    origin: CallOrigin,
    /// The id of our `tools/call` once it is sent.
    request: Option<RequestId>,
}

impl InFlight {
    /// Records a call before its request is sent, so a server request that races the
    /// answer to `send` still finds it. The call is forgotten when the guard drops.
    pub(super) fn begin(self: &Arc<Self>, origin: CallOrigin) -> InFlightGuard {
        static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
        let key = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        self.lock().push(Entry {
            key,
            origin,
            request: None,
        });
        InFlightGuard {
            calls: self.clone(),
            key,
        }
    }

    /// The call a downstream request belongs to. Over Streamable HTTP rmcp records the
    /// response stream it arrived on, which names our request exactly. Over stdio nothing
    /// on the wire says: with one call in flight it is that one; with several, the newest
    /// (a server usually asks at the start of a call). For a legacy client a wrong pick
    /// changes nothing the client sees over stdio; for a 2026-07-28 client the request
    /// rides the result of another of its pending calls, and its answer still resolves it.
    pub(super) fn origin(&self, stream: Option<&InboundStreamOrigin>) -> Option<CallOrigin> {
        let calls = self.lock();
        if let Some(InboundStreamOrigin::OutboundRequest(id)) = stream
            && let Some(entry) = calls.iter().find(|e| e.request.as_ref() == Some(id))
        {
            return Some(entry.origin);
        }
        calls.last().map(|e| e.origin)
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Vec<Entry>> {
        crate::sync::lock(&self.0)
    }
}

/// Keeps a call in its connection's [`InFlight`] list while it runs.
pub(crate) struct InFlightGuard {
    calls: Arc<InFlight>,
    key: u64,
}

impl InFlightGuard {
    /// Notes the id our request went out with.
    pub(super) fn sent(&self, id: RequestId) {
        if let Some(entry) = self.calls.lock().iter_mut().find(|e| e.key == self.key) {
            entry.request = Some(id);
        }
    }
}

impl Drop for InFlightGuard {
    fn drop(&mut self) {
        self.calls.lock().retain(|e| e.key != self.key);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rmcp::model::{
        ElicitationCapability, FormElicitationCapability, NumberOrString, RootsCapabilities,
    };

    #[test]
    fn mirrors_roots_sampling_and_elicitation_only() {
        let mut client = ClientCapabilities::default();
        client.roots = Some(RootsCapabilities::default());
        client.elicitation =
            Some(ElicitationCapability::new().with_form(FormElicitationCapability::default()));
        client.experimental = Some(Default::default());
        let link = ClientLink::new(&client, Arc::new(NoClient));
        assert_eq!(link.capabilities().roots, client.roots);
        assert_eq!(link.capabilities().elicitation, client.elicitation);
        assert!(link.capabilities().sampling.is_none());
        assert!(link.capabilities().experimental.is_none());
    }

    #[test]
    fn a_request_belongs_to_the_call_it_names_else_the_newest() {
        let calls = Arc::new(InFlight::default());
        assert_eq!(calls.origin(None), None);
        let first = calls.begin(CallOrigin(1));
        first.sent(NumberOrString::Number(7));
        let second = calls.begin(CallOrigin(2));
        assert_eq!(calls.origin(None), Some(CallOrigin(2)));
        let named = InboundStreamOrigin::OutboundRequest(NumberOrString::Number(7));
        assert_eq!(calls.origin(Some(&named)), Some(CallOrigin(1)));
        drop(second);
        assert_eq!(calls.origin(None), Some(CallOrigin(1)));
        drop(first);
        assert_eq!(calls.origin(None), None);
    }
}
