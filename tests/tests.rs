//! The one integration target: drives the built binaries over real stdio and HTTP.
//!
//! Each module checks one behaviour and is named for it; its line below says what goes in
//! it. A new test goes in the module whose line fits, or in a new module with a line here
//! (issue numbers belong in doc lines, not in names). What tests share (the harness, the
//! clients they speak through, `eventually`) lives in `support/`.

// Tests may panic on broken setup; the crate-wide unwrap/expect denial is for the library.
#![allow(clippy::unwrap_used, clippy::expect_used)]

/// The harness, the clients (rmcp session, raw JSON-RPC lines, plain HTTP), waiting, OS calls.
mod support;

// Serving over stdio: the contract a client sees.
/// `serve` end to end: listing, selecting, calling, progress, downstream changes.
mod serve;
/// How a found tool becomes usable (`search_tools` loads its hits; the 2026-07-28 rule).
mod activation;
/// Every client era against every kind of server, each cell a real call.
mod era_matrix;
/// Every line a client sends gets exactly one answer (ids in flight, a client gone deaf).
mod one_answer_per_line;
/// Random bytes, JSON and requests on stdin: one answer each, and serving goes on.
mod fuzz;
/// A tool through mcp-defer is the tool the server offers: definition and results.
mod tool_fidelity;
/// Prompts, resources, templates, completions and subscriptions passed through.
mod passthrough;
/// Sampling, elicitation and roots asked by a server reach the client and back.
mod client_requests;
/// MCP logging: `logging/setLevel` out, `notifications/message` back, per era.
mod logging;
/// `max_output_tokens`: results over the budget are cut with a note.
mod output_limit;
/// `[mcp_servers.x.tools.NAME]` overrides: what the model reads is the replacement.
mod overrides;
/// `prefix = ""`: a server keeps its own tool and prompt names.
mod unprefixed;
/// Tools that change after approval are held until `mcp-defer trust` approves them.
mod trust;
/// Real third-party servers and SDK clients behind mcp-defer.
mod interop;

// Searching.
/// What `search_tools` answers: tiers, no tool fits, servers still starting, many at once.
mod search_answers;
/// A task with two needs finds a tool for each.
mod multi_need_search;
/// Search that learns from use, per process, per token, or not at all.
mod learning;
/// The transformer tier through real processes: finds by meaning, caches its vectors.
#[cfg(feature = "model")]
mod semantic_model;

// Downstream servers: their life behind mcp-defer.
/// The downstream pool through its library API: routing, progress, cancel, crash, restart.
mod downstream;
/// A server's start: launchers' first-run allowance, a timeout or failure explained.
#[cfg(unix)]
mod server_start;
/// A missing launcher (`npx`, `uvx`) named with what to install.
mod missing_launcher;
/// A server that fails is named with its own cause; one that restarts is reconnected.
mod failure_causes;
/// Races at the edges of a server's life: lazy start, idle stop, reload, last progress.
mod server_life_edges;
/// `start = "lazy"` and `idle_stop_sec`: not running until called, stopped when idle.
#[cfg(target_os = "linux")]
mod lazy;
/// Hot reload of servers.toml (or SIGHUP): added, removed, changed, broken.
#[cfg(target_os = "linux")]
mod reload;
/// No child or grandchild outlives mcp-defer, however it ends.
// Linux only: they watch processes come and go through /proc (the promise itself holds on
// every OS; src/platform/ keeps it by each OS's means).
#[cfg(target_os = "linux")]
mod shutdown;
/// Requests keep flowing while servers die and come back; none lost, none doubled.
#[cfg(target_os = "linux")]
mod soak;
/// mcp-defer never runs under itself.
mod nesting;
/// The per-user hub: stdio sessions of one config share one process and its servers.
#[cfg(target_os = "linux")]
mod hub;

// Serving over HTTP (`serve --http`).
/// Sessions, each its own list; stateless requests; expiry; tokens, Origin, profiles.
mod http_serve;
/// Limits and hostile clients: slowloris, sessions per token, concurrency, probes.
mod http_limits;
/// What an operator reads: the JSON log and `/metrics`.
mod http_log_and_metrics;
/// Replicas behind a real HAProxy with affinity on `Mcp-Session-Id`.
#[cfg(unix)]
mod replicas;

// Secrets and the environment.
/// No planted secret reaches stdout, the log, a tool result or `check`.
mod secrets;
/// Proxy and CA variables reach stdio servers; no proxy password is shown.
mod proxy_env;
/// OAuth for remote servers: challenge, login, refresh, logout, the token file.
mod oauth;

// The other commands.
/// `mcp-defer check` against fixture servers and the real peers.
mod check;
/// `mcp-defer list`: qualified names in config order, `--json`.
mod list_command;
/// `mcp-defer search` and `mcp-defer stats` against fixture servers.
mod search_command;
/// `mcp-defer stats --compare`: two exposure modes' first lists, counted.
mod stats;
/// `mcp-defer report` on transcripts.
mod report;
/// `mcp-defer import`: a client's MCP config into a servers.toml.
mod import;
/// `import` from the other clients' formats, OAuth clients carried, merging, names.
#[cfg(unix)]
mod import_formats;
/// `mcp-defer adopt <client>` and `--undo`.
mod adopt;
/// `mcp-defer model fetch`: the transformer tier's model from a wheel.
#[cfg(feature = "model")]
mod model_fetch;
/// What a user meets at the command line: help texts, a bare run in a terminal, the npm package.
mod cli_surface;

// The repository's own files.
/// README and docs snippets show only what the program prints.
mod readme;
/// The deploy files docs/deploy.md points at are what they claim.
mod deploy;
