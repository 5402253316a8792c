//! Connections to the configured servers: one supervised task per enabled server.
//!
//! The supervisor owns its connection (child process group or HTTP session), restarts it
//! with backoff, and sends each complete tool list as an [`Event`] to the one catalog
//! writer; everything else holds a cheap [`ServerHandle`]. Calls are never replayed
//! (DESIGN.md invariant 4). Must not import `server`.

use std::fmt;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use rmcp::model::{
    CallToolRequest, CallToolRequestParams, CallToolResult, ClientRequest,
    ProgressNotificationParam, ServerResult,
};
use rmcp::service::{PeerRequestOptions, ServiceError};
use tokio::sync::{mpsc, watch};
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;
use tracing::Instrument;

use crate::config::Config;

mod backoff;
mod child_transport;
mod environment;
mod handler;
mod listing;
mod process;
mod session_watch;
mod settle;
mod supervisor;
pub mod watchdog;

pub use backoff::{Backoff, InvalidBackoff, Restarts, SplitMix};
pub use environment::{ChildEnv, DEFAULT_ENV_VARS};
pub use process::STDERR_CAP_BYTES;
pub use settle::{Settled, settle};

use handler::{ProgressRoute, ProgressRoutes};

/// How long a call that saw its connection drop waits for the supervisor to learn why
/// (the exit status arrives a moment after the pipe closes).
const CAUSE_WAIT: Duration = Duration::from_secs(2);

/// What the supervisors tell the catalog writer.
#[derive(Debug, Clone)]
pub enum Event {
    /// A server connected, reconnected or re-listed: its complete current list, filtered by
    /// `enabled_tools`/`disabled_tools`, in the order it lists them.
    Tools {
        /// The server's position in `Config::servers`.
        server: usize,
        tools: Vec<rmcp::model::Tool>,
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
    /// The connection failed or ended; the next attempt comes after a backoff delay.
    Restarting {
        attempt: u32,
        cause: String,
        /// The last lines the child wrote to stderr (redacted): for the user and the log,
        /// never for the model, which gets `cause` alone.
        stderr: Option<String>,
    },
    /// Gave up for good: retrying cannot help (command not found, missing directory).
    Failed {
        cause: String,
        stderr: Option<String>,
    },
    Disabled,
}

impl ServerState {
    /// Whether the first attempt has concluded: what `check` and `list` wait for.
    pub fn is_settled(&self) -> bool {
        !matches!(self, ServerState::Starting)
    }

    /// The cause of a failed or restarting connection.
    pub fn cause(&self) -> Option<&str> {
        match self {
            ServerState::Restarting { cause, .. } | ServerState::Failed { cause, .. } => {
                Some(cause)
            }
            _ => None,
        }
    }

    /// The child's stderr tail of a failed or restarting connection.
    pub fn stderr(&self) -> Option<&str> {
        match self {
            ServerState::Restarting { stderr, .. } | ServerState::Failed { stderr, .. } => {
                stderr.as_deref()
            }
            _ => None,
        }
    }

    /// The state as the model may read it: the cause without the child's stderr, which can
    /// hold anything the server printed (its stderr is in mcp-defer's log).
    pub fn for_model(&self) -> String {
        match self {
            ServerState::Restarting { attempt, cause, .. } => {
                format!("restarting (attempt {attempt}) after: {cause}")
            }
            ServerState::Failed { cause, .. } => format!("failed: {cause}"),
            other => other.to_string(),
        }
    }
}

impl fmt::Display for ServerState {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ServerState::Starting => f.write_str("starting"),
            ServerState::Ready { tools, .. } => write!(f, "ready, {tools} tools"),
            ServerState::Restarting { .. } | ServerState::Failed { .. } => {
                f.write_str(&self.for_model())?;
                match self.stderr() {
                    Some(stderr) => write!(f, "; stderr: {stderr}"),
                    None => Ok(()),
                }
            }
            ServerState::Disabled => f.write_str("disabled in the config"),
        }
    }
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
    /// Downstream progress for this call, to be forwarded to the client. Each carries the
    /// progress token of the client's request `_meta` when it had one.
    pub progress: Option<mpsc::UnboundedSender<ProgressNotificationParam>>,
}

/// All servers of a config, by their position in `Config::servers`.
pub struct Pool {
    handles: Vec<ServerHandle>,
    tasks: Vec<JoinHandle<()>>,
    stop: CancellationToken,
}

impl Pool {
    /// Starts one supervisor per enabled server, concurrently, and returns at once.
    /// Cancelling `shutdown` (or calling [`Pool::shutdown`]) closes every connection.
    pub fn start(
        config: &Config,
        shutdown: CancellationToken,
    ) -> (Pool, mpsc::UnboundedReceiver<Event>) {
        let go = CancellationToken::new();
        go.cancel();
        Pool::start_after(config, shutdown, go)
    }

    /// Like [`Pool::start`], but the supervisors spawn nothing until `go` is cancelled.
    /// `serve` holds them back while it answers the handshake: spawning 20 processes
    /// takes tens of milliseconds of the thread that would answer it.
    pub fn start_after(
        config: &Config,
        shutdown: CancellationToken,
        go: CancellationToken,
    ) -> (Pool, mpsc::UnboundedReceiver<Event>) {
        let stop = shutdown.child_token();
        let (events, rx) = mpsc::unbounded_channel();
        let mut handles = Vec::with_capacity(config.servers.len());
        let mut tasks = Vec::new();
        for (index, server) in config.servers.iter().enumerate() {
            let name: Arc<str> = server.name.as_str().into();
            let initial = if server.enabled {
                ServerState::Starting
            } else {
                ServerState::Disabled
            };
            let (state_tx, state) = watch::channel(initial);
            let live = Arc::new(Mutex::new(None));
            handles.push(ServerHandle {
                name: name.clone(),
                index,
                state,
                live: live.clone(),
                tool_timeout: server.tool_timeout,
            });
            if server.enabled {
                let supervisor = supervisor::Supervisor {
                    name: name.clone(),
                    index,
                    config: server.clone(),
                    state: state_tx,
                    live,
                    events: events.clone(),
                    stop: stop.clone(),
                    go: go.clone(),
                    max_message_bytes: config.settings.max_message_bytes,
                };
                let span = tracing::info_span!("downstream", server = %name);
                tasks.push(tokio::spawn(supervisor.run().instrument(span)));
            }
        }
        (
            Pool {
                handles,
                tasks,
                stop,
            },
            rx,
        )
    }

    pub fn get(&self, index: usize) -> Option<&ServerHandle> {
        self.handles.get(index)
    }

    pub fn iter(&self) -> impl Iterator<Item = &ServerHandle> {
        self.handles.iter()
    }

    /// Waits until every server's first attempt has concluded (ready, failed, restarting
    /// or disabled). Bounded by the servers' startup timeouts.
    pub async fn settled(&self) {
        for handle in &self.handles {
            handle.settled().await;
        }
    }

    /// Closes every connection and waits until each child and its process group is gone
    /// (graceful close, a bounded wait, then SIGKILL to the group).
    pub async fn shutdown(self) {
        self.stop.cancel();
        for task in self.tasks {
            if let Err(err) = task.await {
                tracing::warn!(error = %err, "a supervisor task failed");
            }
        }
    }
}

/// The connection a call goes through, cloned out of the handle so no lock is held
/// across `.await`.
#[derive(Clone)]
pub(crate) struct Live {
    peer: rmcp::Peer<rmcp::RoleClient>,
    progress: Arc<ProgressRoutes>,
    /// Set by the supervisor to the cause once the connection has ended.
    ended: watch::Receiver<Option<String>>,
}

/// A cheap, cloneable way to reach one server.
#[derive(Clone)]
pub struct ServerHandle {
    name: Arc<str>,
    index: usize,
    state: watch::Receiver<ServerState>,
    live: Arc<Mutex<Option<Live>>>,
    tool_timeout: Duration,
}

impl fmt::Debug for ServerHandle {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ServerHandle")
            .field("name", &self.name)
            .field("index", &self.index)
            .field("state", &*self.state.borrow())
            .finish()
    }
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

    /// Waits until the first attempt has concluded; see [`ServerState::is_settled`].
    pub async fn settled(&self) -> ServerState {
        let mut rx = self.state.clone();
        if let Ok(state) = rx.wait_for(ServerState::is_settled).await {
            return state.clone();
        }
        // The supervisor is gone; its last word stands.
        rx.borrow().clone()
    }

    fn live(&self) -> Option<Live> {
        self.live.lock().ok().and_then(|live| live.clone())
    }

    /// Calls `request.name` (the tool's original name) on this server within its
    /// `tool_timeout`, and returns the downstream result unchanged. Never replayed: a call
    /// whose connection drops fails with [`DownstreamError::Disconnected`].
    ///
    /// # Errors
    /// A [`DownstreamError`] naming the server and the cause.
    pub async fn call(
        &self,
        request: CallToolRequestParams,
        options: CallOptions,
    ) -> Result<CallToolResult, DownstreamError> {
        let live = self.live().ok_or_else(|| DownstreamError::NotReady {
            server: self.name.to_string(),
            state: self.state().for_model(),
        })?;
        let tool = request.name.to_string();
        let client_token = request.meta.as_ref().and_then(|m| m.get_progress_token());
        let span = tracing::debug_span!("call", tool = %tool);
        let request = ClientRequest::CallToolRequest(CallToolRequest::new(request));
        let mut handle = match live
            .peer
            .send_cancellable_request(request, PeerRequestOptions::no_options())
            .instrument(span.clone())
            .await
        {
            Ok(handle) => handle,
            Err(err) => return Err(self.service_error(err, &live).await),
        };
        let token = handle.progress_token.clone();
        if let Some(tx) = options.progress {
            live.progress
                .insert(token.clone(), ProgressRoute { tx, client_token });
        }
        enum Outcome {
            Answer(
                Box<
                    Result<
                        Result<ServerResult, ServiceError>,
                        tokio::sync::oneshot::error::RecvError,
                    >,
                >,
            ),
            Cancelled,
            TimedOut,
        }
        let outcome = tokio::select! {
            answer = &mut handle.rx => Outcome::Answer(Box::new(answer)),
            () = options.cancel.cancelled() => Outcome::Cancelled,
            () = tokio::time::sleep(self.tool_timeout) => Outcome::TimedOut,
        };
        live.progress.remove(&token);
        match outcome {
            Outcome::Answer(answer) => match *answer {
                Ok(Ok(ServerResult::CallToolResult(result))) => Ok(result),
                Ok(Ok(_)) => Err(DownstreamError::Service {
                    server: self.name.to_string(),
                    message: format!("unexpected answer to tools/call {tool}"),
                }),
                Ok(Err(err)) => Err(self.service_error(err, &live).await),
                Err(_) => Err(self
                    .service_error(ServiceError::TransportClosed, &live)
                    .await),
            },
            Outcome::Cancelled => {
                let _ = handle.cancel(Some("cancelled by the client".into())).await;
                Err(DownstreamError::Cancelled)
            }
            Outcome::TimedOut => {
                let _ = handle.cancel(Some("timed out".into())).await;
                Err(DownstreamError::Timeout {
                    server: self.name.to_string(),
                    tool,
                    after: self.tool_timeout,
                })
            }
        }
    }

    async fn service_error(&self, err: ServiceError, live: &Live) -> DownstreamError {
        let server = self.name.to_string();
        match err {
            ServiceError::McpError(data) => DownstreamError::Service {
                server,
                message: data.message.to_string(),
            },
            ServiceError::TransportClosed | ServiceError::TransportSend(_) => {
                let mut ended = live.ended.clone();
                let cause = tokio::time::timeout(CAUSE_WAIT, ended.wait_for(Option::is_some))
                    .await
                    .ok()
                    .and_then(|r| r.ok().and_then(|c| c.clone()))
                    .unwrap_or_else(|| "the connection closed".to_owned());
                DownstreamError::Disconnected { server, cause }
            }
            other => DownstreamError::Service {
                server,
                message: other.to_string(),
            },
        }
    }
}
