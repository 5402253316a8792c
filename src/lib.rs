//! mcp-defer: one MCP server in front of many, showing their tools to the client on demand.
//!
//! # Layout
//! Modules in data-flow order (DESIGN.md section 2):
//! - [`config`]: parses and validates `servers.toml`; nothing else reads the file.
//!   `config/diff.rs` plans a reload: which servers start, stop or restart.
//! - [`downstream`]: one supervised connection per configured server; routes calls; sends
//!   each list a server gives as an event (tools as JSON text, `catalog::ServerTool`), and
//!   does nothing else with it. Positions in the pool are stable for the life of the
//!   process (a reload appends, never shifts); lazy servers wait for their first call with
//!   their tools from `downstream/tool_cache.rs`.
//! - [`ingest`]: the one path from those events to what we know. `ingest::Registry::apply`
//!   enters a tool list into the catalog (`enter_catalog`) and feeds the search index
//!   (`feed_index`): where a listed tool becomes searchable, for `serve` and every command.
//! - [`catalog`]: every tool we know, keyed by [`catalog::QualifiedName`]; only grows.
//! - [`search`]: a tantivy index over the catalog; a pure function of what it is fed.
//!   `search/semantic.rs` is the static embedding tier built in; `search/transformer/` the
//!   opt-in transformer tier (candle BERT, its own embedding thread, vectors cached on disk
//!   under `MCP_DEFER_CACHE_DIR`/`vectors/`).
//! - [`exposure`]: the ordered tool list the client sees; append-only by type, each tool
//!   kept as the bytes it is listed with (`server/framing.rs` writes stdio `tools/list`
//!   answers from them).
//! - [`server`]: the rmcp `ServerHandler`. `server/arrivals.rs` shows the client what was
//!   ingested; `server/meta/<tool>.rs` is each meta tool end to end (`call_tool.rs`:
//!   resolve, validate, call); `server/route.rs` is where every `tools/call` goes
//!   downstream. State is split: `server::Shared` (config, downstream handles, registry)
//!   once per process, `server/session.rs` (a client's lists, notifier, hold) per client;
//!   `server/http.rs` serves many sessions over Streamable HTTP (`serve --http`), with
//!   `server/sessions.rs` (expiry) and `server/gate.rs` (tokens, in-flight limit).
//!   `server/reload.rs` re-reads the config on a change of the file or SIGHUP and applies it
//!   to the pool and every view.
//! - [`oauth`]: logins to remote servers (`mcp-defer login`), their stored tokens, and the
//!   authorized HTTP client `downstream` connects with.
//! - [`cli`]: the clap commands; `main.rs` only calls [`cli::main`].
//! - [`platform`]: every line that differs between Linux, macOS and Windows (process trees,
//!   signals, file modes, launcher lookup, config/cache/data directories); nothing outside
//!   it names `libc` or `std::os::{unix,windows}` (`.ci/check-platform`).
//! - [`framing`] and [`redact`]: bounded JSON-RPC lines for both sides, and the one rule for
//!   masking secrets in whatever we show.
//!
//! The arrows that must never exist: `catalog`, `search` and `exposure` never import
//! `downstream`; `exposure` never imports `search`; `config`, `downstream` and `ingest`
//! never import `server`. They keep each module testable alone.

pub mod catalog;
pub mod cli;
pub mod config;
pub mod downstream;
pub mod exposure;
pub mod framing;
pub mod ingest;
pub mod oauth;
pub mod platform;
pub mod redact;
pub mod search;
pub mod server;
mod suggest;
mod sync;
pub mod tokens;
