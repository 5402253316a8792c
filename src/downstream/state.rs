//! Where a server's connection stands, as its handle reports it to status, `check` and
//! the model.

use std::fmt;
use std::time::Duration;

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
    /// An HTTP server answered 401 and there is no usable OAuth login for it: `cause`
    /// names the command that fixes it. Tried again once a login is stored.
    NeedsLogin {
        cause: String,
    },
    /// Gave up for good: retrying cannot help (command not found, missing directory).
    Failed {
        cause: String,
        stderr: Option<String>,
    },
    Disabled,
    /// A reload found its table gone from the config file: stopped, its listed tools kept
    /// (append-only) and answering that the server was removed.
    Removed,
    /// Not running, by design: `start = "lazy"` before its first call, or stopped after
    /// `idle_stop_sec` without one. Its `tools` (from the tool cache or its last run) stay
    /// listed and searchable; the next call starts it and waits for it.
    Idle {
        tools: usize,
    },
}

impl ServerState {
    /// Whether the first attempt has concluded: what `check` and `list` wait for.
    pub fn is_settled(&self) -> bool {
        !matches!(self, ServerState::Starting)
    }

    /// The cause of a failed or restarting connection.
    pub fn cause(&self) -> Option<&str> {
        match self {
            ServerState::Restarting { cause, .. }
            | ServerState::Failed { cause, .. }
            | ServerState::NeedsLogin { cause } => Some(cause),
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
            ServerState::Removed => f.write_str("removed from the config file"),
            ServerState::Idle { tools } => {
                write!(
                    f,
                    "not running, {tools} tools known; starts at the next call"
                )
            }
            ServerState::NeedsLogin { cause } => f.write_str(cause),
        }
    }
}
