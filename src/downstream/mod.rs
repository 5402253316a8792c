//! Connections to the configured servers. PLACEHOLDER API: implemented by the foundation work.
//!
//! One supervised task per enabled server owns its connection; everything else holds a cheap
//! [`ServerHandle`]. Each (re)connection and each downstream `list_changed` sends the server's
//! complete current tool list as an [`Event`] to the one catalog writer. Must not import
//! `server`.

use std::time::Duration;

use rmcp::model::{CallToolRequestParams, CallToolResult, ProgressNotificationParam, Tool};
use tokio::sync::{mpsc, watch};
use tokio_util::sync::CancellationToken;

use crate::config::Config;

/// What the supervisors tell the catalog writer.
#[derive(Debug, Clone)]
pub enum Event {
    /// A server connected, reconnected or re-listed: its complete current list, filtered by
    /// `enabled_tools`/`disabled_tools`, in the order it lists them.
    Tools {
        /// The server's position in `Config::servers`.
        server: usize,
        tools: Vec<Tool>,
        /// The `instructions` of its handshake.
        instructions: Option<String>,
    },
}

/// Where a server's connection stands. Each state carries its data.
#[derive(Debug, Clone, PartialEq)]
pub enum ServerState {
    Starting,
    Ready {
        tools: usize,
        /// From spawn to the end of the first `tools/list`.
        ready_after: Duration,
    },
    Restarting {
        attempt: u32,
        cause: String,
    },
    Failed {
        cause: String,
    },
    Disabled,
}

#[derive(Debug, thiserror::Error)]
pub enum DownstreamError {
    #[error("server '{server}' is not connected ({state})")]
    NotReady { server: String, state: String },
    #[error("server '{server}' did not answer {tool} within {after:?}")]
    Timeout {
        server: String,
        tool: String,
        after: Duration,
    },
    #[error("server '{server}' disconnected during the call: {cause}")]
    Disconnected { server: String, cause: String },
    #[error("the call was cancelled")]
    Cancelled,
    #[error("server '{server}' answered with an error: {message}")]
    Service { server: String, message: String },
}

/// How one proxied call is run.
#[derive(Debug, Default)]
pub struct CallOptions {
    /// Fires when the client cancels; the downstream request is cancelled too.
    pub cancel: CancellationToken,
    /// Downstream progress for this call, to be forwarded to the client.
    pub progress: Option<mpsc::UnboundedSender<ProgressNotificationParam>>,
}

/// All servers of a config, by their position in `Config::servers`.
pub struct Pool {
    handles: Vec<ServerHandle>,
}

impl Pool {
    /// Starts one supervisor per enabled server, concurrently, and returns at once.
    pub fn start(
        config: &Config,
        shutdown: CancellationToken,
    ) -> (Pool, mpsc::UnboundedReceiver<Event>) {
        let _ = shutdown;
        let (_tx, rx) = mpsc::unbounded_channel();
        let handles = config
            .servers
            .iter()
            .enumerate()
            .map(|(index, s)| ServerHandle {
                name: s.name.clone().into(),
                index,
                state: watch::channel(ServerState::Disabled).1,
            })
            .collect();
        (Pool { handles }, rx)
    }

    pub fn get(&self, index: usize) -> Option<&ServerHandle> {
        self.handles.get(index)
    }

    pub fn iter(&self) -> impl Iterator<Item = &ServerHandle> {
        self.handles.iter()
    }

    /// Closes every connection and waits until each child and its process group is gone.
    pub async fn shutdown(self) {}
}

/// A cheap, cloneable way to reach one server.
#[derive(Debug, Clone)]
pub struct ServerHandle {
    name: std::sync::Arc<str>,
    index: usize,
    state: watch::Receiver<ServerState>,
}

impl ServerHandle {
    pub fn name(&self) -> &str {
        &self.name
    }

    pub fn index(&self) -> usize {
        self.index
    }

    pub fn state(&self) -> ServerState {
        self.state.borrow().clone()
    }

    pub fn watch(&self) -> watch::Receiver<ServerState> {
        self.state.clone()
    }

    /// Calls `request.name` (the tool's original name) on this server within its
    /// `tool_timeout`.
    ///
    /// # Errors
    /// A [`DownstreamError`] naming the server and the cause.
    pub async fn call(
        &self,
        request: CallToolRequestParams,
        options: CallOptions,
    ) -> Result<CallToolResult, DownstreamError> {
        let _ = (request, options);
        Err(DownstreamError::NotReady {
            server: self.name.to_string(),
            state: "placeholder".into(),
        })
    }
}
