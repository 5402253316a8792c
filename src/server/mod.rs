//! The MCP server the client talks to, by idea:
//!
//! - [`handler`]: the thin rmcp `ServerHandler`, one [`DeferServer`] per client session,
//!   each method handing its request to the module that owns it.
//! - [`shared`]: what every session shares (config, downstream handles, registry) and the
//!   waits for servers still starting; [`session`]: one client's lists, notifier and hold.
//! - [`meta`]: each meta tool end to end (`meta/call_tool.rs`: resolve, validate, call),
//!   over [`meta::Context`], which [`meta_context`] implements for the request state.
//! - [`route`]: where every other `tools/call` goes downstream; [`output_limit`] bounds
//!   what comes back.
//! - [`arrivals`]: what [`crate::ingest`] learnt becomes appends and list-changed.
//! - [`usage`]: which tool a session chose after which search, for search to learn from.
//! - [`passthrough`]: prompts, resources, completions and the requests servers send their
//!   client, forwarded as they would be directly.
//! - [`view`]: the servers as a request sees them (config and handles together), and the
//!   one answer to which are removed or unavailable, and why a name is unknown.
//! - transports: [`stdio`] (framing, the listed bytes spliced into `tools/list`),
//!   [`serve`] (the stdio session), [`http`] (`serve --http`: server, gate, session
//!   expiry), [`hub`] (`serve --hub`: every stdio session of a config, over a local socket); [`reload`] decides what a changed `servers.toml` restarts.
//!
//! This is the only writer of the exposed lists (DESIGN.md section 2). Locks are std
//! mutexes held for a few lines and never across `.await`, in the order
//! [`crate::sync::order`] writes down.

use std::sync::Arc;

mod arrivals;
mod error;
mod handler;
mod http;
mod hub;
mod instructions;
mod latency;
pub(crate) mod meta;
mod meta_context;
mod output_limit;
mod passthrough;
mod reload;
mod reused_ids;
mod route;
mod serve;
mod session;
mod shared;
mod stdio;
mod tasks;
mod usage;
pub(crate) mod view;

pub(crate) use error::ServeError;
pub(crate) use handler::DeferServer;
pub(crate) use http::{HttpError, serve_http};
pub(crate) use hub::serve_hub;
pub(crate) use serve::serve;

use session::Session;
use shared::Shared;

/// What a request handler sees: the state every session shares and its own session, each
/// named where it is used (`state.shared`, `state.session`), so a reader sees which one a
/// line reads.
#[derive(Clone)]
pub(crate) struct State {
    pub(super) shared: Arc<Shared>,
    pub(super) session: Arc<Session>,
}
