//! mcp-defer: one MCP server in front of many, showing their tools to the client on demand.
//!
//! # Layout
//! Modules in data-flow order (DESIGN.md section 2):
//! - [`config`]: parses and validates `servers.toml`; nothing else reads the file.
//!   `config/raw/` reads the file as written (spans, types, known keys); `config/validate/`
//!   checks it, one file per kind of check (names, env, transport, limits, tools, profiles,
//!   settings); `config/defaults.rs` holds every default and range with its reason;
//!   `config/diff.rs` plans a reload: which servers start, stop or restart.
//! - [`downstream`]: one supervised connection per configured server; routes calls; sends
//!   each list a server gives as an event (tools as JSON text, `catalog::ServerTool`), and
//!   does nothing else with it. Positions in the pool are stable for the life of the
//!   process (a reload appends, never shifts); lazy servers wait for their first call with
//!   their tools from `downstream/tool_cache.rs`.
//! - [`ingest`]: the one path from those events to what we know. `ingest::Registry::apply`
//!   enters a tool list into the catalog (`enter_catalog`) and feeds the search index
//!   (`feed_index`): where a listed tool becomes searchable, for `serve` and every command.
//! - [`trust`]: the lock of approved tool definitions beside the config, and what is
//!   held (changed since approved, new to a known server, or tripping a suspicious-content
//!   rule); `ingest` screens every list through it before the catalog.
//! - [`catalog`]: every tool we know, keyed by [`catalog::QualifiedName`]; only grows.
//! - [`search`]: a tantivy index over the catalog; a pure function of what it is fed.
//!   `search/semantic.rs` is the static embedding tier built in; `search/transformer/` the
//!   opt-in transformer tier (BERT on the int8 kernels of `crates/int8-kernels`, its own
//!   embedding thread, vectors cached on disk under `MCP_DEFER_CACHE_DIR`/`vectors/`);
//!   `search/usage/` what search learns from use (which tool was chosen after which query,
//!   per principal: `usage.jsonl` in the data directory, `usage/<id>.jsonl` per HTTP token).
//! - [`exposure`]: the ordered tool list the client sees; append-only by type, each tool
//!   kept as the bytes it is listed with (`server/stdio/` writes stdio `tools/list`
//!   answers from them).
//! - [`server`]: the MCP server the client talks to, one room per idea:
//!   - `server/handler.rs`: the thin rmcp `ServerHandler`, delegating each request;
//!   - `server/shared.rs`: what every session shares (config, downstream handles, registry)
//!     and the sessions it opened; `server/session/`: one client's lists and notifier, and
//!     each feature's private part (`mod.rs` is only the folder's face: no child imports it);
//!   - `server/meta/<tool>.rs`: each meta tool end to end (`call_tool.rs`: resolve,
//!     validate, call), over `meta/context.rs`, all a meta tool sees of the server
//!     (implemented by the handler; `meta/` imports no other part of `server` but `view`);
//!   - `server/route.rs`: where a call is routed downstream; `server/output_limit.rs`;
//!   - `server/publish.rs`: what was ingested becomes appends and list-changed;
//!   - `server/forwarded/`: the client's prompts, resources, completions and
//!     `logging/setLevel`, forwarded to the server that owns each; `server/passthrough/`:
//!     what those hold (shown lists, subscriptions, log levels), the requests servers send
//!     their client (sampling, elicitation, roots), and each connection's envelope;
//!   - `server/view.rs`: the servers as a request sees them (config and handles together)
//!     and the one answer to which are removed or unavailable, and why;
//!   - `server/stdio/` and `server/serve.rs`: the stdio session; `server/http/`: where an
//!     HTTP session lives (`serve --http`: wiring, `gate.rs` tokens and in-flight limit,
//!     `connections.rs` pending and authorized connections, `expiry.rs` open sessions and
//!     their expiry);
//!   - `server/reload.rs`: re-reads the config on a change of the file or SIGHUP and
//!     decides, with `config/diff.rs`, what restarts.
//! - [`oauth`]: logins to remote servers (`mcp-defer login`), their stored tokens, and the
//!   authorized HTTP client `downstream` connects with.
//! - [`report`]: reads the user's Claude Code and Codex transcripts (`mcp-defer report`):
//!   cache reads, writes and re-writes after tool-list changes. Stands alone: it imports
//!   nothing but [`tokens`].
//! - [`tokens`]: the one token count (o200k_base BPE, embedded) and the bytes/4 estimate.
//! - [`relay`]: `serve` as a session of the user's hub (issue 29): joins or starts the
//!   hub of its config (`serve --hub`, `server/hub.rs`) and relays stdio to it; takes the
//!   session over to a new hub when it goes away. Imports neither `server` nor `downstream`.
//! - [`cli`]: the clap commands; `main.rs` only calls [`cli::main`].
//! - [`platform`]: every line that differs between Linux, macOS and Windows (process trees,
//!   signals, file modes, launcher lookup, config/cache/data directories); nothing outside
//!   it names `libc` or `std::os::{unix,windows}` (`.ci/check-platform`).
//! - A tool takes eight shapes on its way (`Tool`, `ServerTool`, `ToolJson`, `CatalogEntry`,
//!   `Indexed`, `ToolDoc`, `ListedTool`, `Value`): docs/design.md, "Shapes of a tool", says
//!   which is which, where each lives and where one becomes the next.
//! - Leaves every layer may use: [`server_tool`] (a tool as its server lists it, JSON text),
//!   [`lines`] (bounded JSON-RPC lines for both sides), [`redact`] (the one rule for masking
//!   secrets in whatever we show), [`printable`] (control characters from elsewhere shown,
//!   never obeyed by the terminal), [`protocol`] (MCP's method and header names, for code
//!   that reads messages as JSON or bytes), [`sync`] (the one lock policy: how a lock is
//!   taken, and the order of every lock, checked by a test).
//!
//! The arrows that must never exist: `catalog`, `search` and `exposure` never import
//! `downstream`; `downstream` never imports `catalog`, `search` or `exposure` (it hands
//! on [`server_tool::ServerTool`]s); `exposure` never imports `search`; `config`,
//! `downstream` and `ingest` never import `server`; no two modules import each other.
//! They keep each module testable alone; `.ci/check-imports` holds them.
//!
//! The public modules are the ones the binary, the tests and the benches use; everything
//! else is `pub(crate)`, and `unreachable_pub` (denied in CI's clippy) keeps a `pub` from
//! creeping into a private module.

#![warn(unreachable_pub)]

pub mod catalog;
pub mod cli;
pub mod config;
pub mod downstream;
pub mod exposure;
pub mod ingest;
pub(crate) mod lines;
pub(crate) mod oauth;
pub mod platform;
pub(crate) mod printable;
pub(crate) mod protocol;
pub(crate) mod redact;
pub(crate) mod relay;
pub(crate) mod report;
pub mod search;
pub(crate) mod server;
pub(crate) mod server_tool;
mod suggest;
mod sync;
pub(crate) mod tokens;
pub mod trust;
