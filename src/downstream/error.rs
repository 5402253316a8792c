//! Why a request to a server failed: each kind names the server and the cause.

use std::time::Duration;

use rmcp::model::ErrorCode;

use super::ServerState;

#[derive(Debug, thiserror::Error)]
pub enum DownstreamError {
    /// The model reads this: the state without the child's stderr.
    #[error("server '{server}' is not connected ({})", state.for_model())]
    NotReady { server: String, state: ServerState },
    #[error("server '{server}' did not answer {tool} within {after:?}")]
    Timeout {
        server: String,
        /// What was asked: the tool's name, or the method and its target.
        tool: String,
        after: Duration,
    },
    #[error("server '{server}' disconnected during the call: {cause}")]
    Disconnected { server: String, cause: String },
    #[error("the call was cancelled")]
    Cancelled,
    /// A tool known from the tool cache or an earlier list that the running server does not
    /// list: never forwarded (a cache file edited by hand must not reach a server).
    #[error(
        "server '{server}' does not list a tool '{tool}' now that it runs (it came from the \
         tool cache or an earlier list); search_tools shows the tools it has"
    )]
    NotListed { server: String, tool: String },
    #[error("server '{server}' answered with an error: {message}")]
    Service {
        server: String,
        message: String,
        /// The JSON-RPC error code when the server sent one, so a proxied request can answer
        /// with the same code (a resource not found stays one).
        code: Option<ErrorCode>,
    },
}
