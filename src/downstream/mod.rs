//! Connections to the configured servers: one supervised task per enabled server.
//!
//! The supervisor owns its connection (child process group or HTTP session), restarts it
//! with backoff, and sends each complete tool, prompt and resource list as an [`Event`] to
//! the one catalog writer; everything else holds a cheap [`ServerHandle`] that sends calls,
//! `prompts/get`, `resources/read`, `completion/complete` and resource subscriptions. Calls
//! are never replayed (DESIGN.md invariant 4). Must not import `server`.
//!
//! One idea a file: [`Pool`] (`pool.rs`) holds a [`ServerHandle`] (`handle.rs`) per server
//! and starts its `supervisor`; the handle reports a [`ServerState`] (`state.rs`) and fails
//! with a [`DownstreamError`] (`error.rs`); `demand.rs` counts calls for idle stop and starts
//! a server not running on its first call; the supervisor (`supervisor.rs`: run, restart,
//! re-list) makes each connection in `connect.rs` (spawn or dial, handshake, first lists)
//! and sends [`Event`]s (`event.rs`).

mod backoff;
mod cause;
pub(crate) use cause::chain;
mod child_transport;
mod connect;
mod demand;
mod environment;
mod error;
mod event;
mod handle;
mod handler;
mod http_raw;
mod launcher;
mod listing;
mod logging;
mod passed;
mod pool;
mod process;
mod progress;
mod raw_answers;
mod raw_call;
mod session_watch;
mod state;
mod stderr_cause;
mod supervisor;
mod tap;
pub mod tasks;
pub mod tool_cache;
mod upstream;
pub mod watchdog;

pub use backoff::{Backoff, InvalidBackoff, Restarts, SplitMix};
pub use environment::{ChildEnv, DEFAULT_ENV_VARS, NETWORK_ENV_VARS, STARTED_AS_VAR, started_as};
pub use error::DownstreamError;
pub use event::Event;
pub(crate) use handle::StateChanges;
pub use handle::{CallOptions, ServerHandle};
pub use passed::{CallAnswer, PassedAnswer, Passing};
pub use pool::{Pool, REMOVED_BY_RELOAD, RESTARTED_BY_RELOAD};
pub use process::STDERR_CAP_BYTES;
pub use progress::ProgressRoute;
pub use state::ServerState;
pub use upstream::{CallOrigin, ClientLink, LogFuture, Upstream, UpstreamFuture, input_method};
