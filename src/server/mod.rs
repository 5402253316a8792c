//! The MCP server the client talks to, by idea:
//!
//! - [`handler`]: the thin rmcp `ServerHandler`, one `DeferServer` per client session,
//!   each method handing its request to the module that owns it; the meta tools' context.
//! - [`shared`]: what every session shares (config, downstream handles, registry), the
//!   sessions it opened and the waits for servers still starting; [`session`]: one
//!   client's lists and notifier, and a private part for each feature below.
//! - [`meta`]: each meta tool end to end (`meta/call_tool.rs`: resolve, validate, call),
//!   over [`meta::Context`], all a meta tool sees of the server.
//! - [`route`]: where every other `tools/call` goes downstream; [`output_limit`] bounds
//!   what comes back; [`call_reply`]: its answer, typed or as its server wrote it.
//! - [`publish`]: what [`crate::ingest`] learnt becomes appends and list-changed.
//! - [`usage`]: which tool a session chose after which search, for search to learn from.
//! - [`forwarded`]: the client's prompts, resources, completions and log level, forwarded
//!   as they would go directly; [`passthrough`]: what they and the requests servers send
//!   their client hold (shown lists, subscriptions, levels); [`tasks`]: 2025-11-25 tasks.
//! - [`view`]: the servers as a request sees them (config and handles together), and the
//!   one answer to which are removed or unavailable, and why a name is unknown.
//! - transports: [`stdio`] (framing, the listed bytes spliced into `tools/list`),
//!   [`serve`] (the stdio session), [`http`] (`serve --http`: server, gate, session
//!   expiry), [`hub`] (`serve --hub`: every stdio session of a config, over a local
//!   socket); [`reload`] decides what a changed `servers.toml` restarts.
//!
//! This file is the folder's face only: no child imports it, each imports the sibling
//! that owns what it needs. This is the only writer of the exposed lists (DESIGN.md
//! section 2). Locks are std mutexes held for a few lines and never across `.await`, in
//! the order [`crate::sync::order`] writes down.

mod call_reply;
mod error;
mod forwarded;
mod handler;
mod http;
mod hub;
mod instructions;
mod latency;
pub(crate) mod meta;
mod output_limit;
mod passthrough;
mod publish;
mod reload;
mod reused_ids;
mod route;
mod serve;
mod session;
mod shared;
mod stdio;
mod task_wire;
mod tasks;
mod thin_calls;
mod usage;
pub(crate) mod view;

pub(crate) use http::serve_http;
pub(crate) use hub::serve_hub;
pub(crate) use serve::serve;
