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
/// How a found tool becomes usable (`search_tools` loads its hits; the 2026-07-28 rule).
mod activation;
/// Sampling, elicitation and roots asked by a server reach the client and back.
mod client_requests;
/// Every client era against every kind of server, each cell a real call.
mod era_matrix;
/// Random bytes, JSON and requests on stdin: one answer each, and serving goes on.
mod fuzz;
/// Real third-party servers and SDK clients behind mcp-defer.
mod interop;
/// MCP logging: `logging/setLevel` out, `notifications/message` back, per era.
mod logging;
/// Every line a client sends gets exactly one answer (ids in flight, a client gone deaf).
mod one_answer_per_line;
/// `max_output_tokens`: results over the budget are cut with a note.
mod output_limit;
/// `[mcp_servers.x.tools.NAME]` overrides: what the model reads is the replacement.
mod overrides;
/// Prompts, resources, templates, completions and subscriptions passed through.
mod passthrough;
/// `serve` end to end: listing, selecting, calling, progress, downstream changes.
mod serve;
/// A tool through mcp-defer is the tool the server offers: definition and results.
mod tool_fidelity;
/// Tools that change after approval are held until `mcp-defer trust` approves them.
mod trust;
/// `prefix = ""`: a server keeps its own tool and prompt names.
mod unprefixed;

// Searching.
/// Search that learns from use, per process, per token, or not at all.
mod learning;
/// A task with two needs finds a tool for each.
mod multi_need_search;
/// What `search_tools` answers: tiers, no tool fits, servers still starting, many at once.
mod search_answers;
/// The transformer tier through real processes: finds by meaning, caches its vectors.
#[cfg(feature = "model")]
mod semantic_model;

// Downstream servers: their life behind mcp-defer.
/// The downstream pool through its library API: routing, progress, cancel, crash, restart.
mod downstream;
/// A server that fails is named with its own cause; one that restarts is reconnected.
mod failure_causes;
/// The per-user hub: stdio sessions of one config share one process and its servers.
#[cfg(target_os = "linux")]
mod hub;
/// `start = "lazy"` and `idle_stop_sec`: not running until called, stopped when idle.
#[cfg(target_os = "linux")]
mod lazy;
/// A missing launcher (`npx`, `uvx`) named with what to install.
mod missing_launcher;
/// mcp-defer never runs under itself.
mod nesting;
/// Hot reload of servers.toml (or SIGHUP): added, removed, changed, broken.
#[cfg(target_os = "linux")]
mod reload;
/// Races at the edges of a server's life: lazy start, idle stop, reload, last progress.
mod server_life_edges;
/// A server's start: launchers' first-run allowance, a timeout or failure explained.
#[cfg(unix)]
mod server_start;
/// No child or grandchild outlives mcp-defer, however it ends.
// Linux only: they watch processes come and go through /proc (the promise itself holds on
// every OS; src/platform/ keeps it by each OS's means).
#[cfg(target_os = "linux")]
mod shutdown;
/// Requests keep flowing while servers die and come back; none lost, none doubled.
#[cfg(target_os = "linux")]
mod soak;

// Serving over HTTP (`serve --http`).
/// Limits and hostile clients: slowloris, sessions per token, concurrency, probes.
mod http_limits;
/// What an operator reads: the JSON log and `/metrics`.
mod http_log_and_metrics;
/// Sessions, each its own list; stateless requests; expiry; tokens, Origin, profiles.
mod http_serve;
/// Plain calls around rmcp's session worker: JSON answers, progress and requests on the
/// call's own stream.
mod http_thin;
/// Replicas behind a real HAProxy with affinity on `Mcp-Session-Id`.
#[cfg(unix)]
mod replicas;

// Configuration.
/// A broken servers.toml is named with its cause, place and fix before anything starts.
mod config_errors;

// Secrets and the environment.
/// OAuth for remote servers: challenge, login, refresh, logout, the token file.
mod oauth;
/// Proxy and CA variables reach stdio servers; no proxy password is shown.
mod proxy_env;
/// No planted secret reaches stdout, the log, a tool result or `check`.
mod secrets;

// The other commands.
/// `mcp-defer adopt <client>` and `--undo`.
mod adopt;
/// `mcp-defer check` against fixture servers and the real peers.
mod check;
/// What a user meets at the command line: help texts, a bare run in a terminal, the npm package.
mod cli_surface;
/// `mcp-defer import`: a client's MCP config into a servers.toml.
mod import;
/// `import` from the other clients' formats, OAuth clients carried, merging, names.
#[cfg(unix)]
mod import_formats;
/// `mcp-defer list`: qualified names in config order, `--json`.
mod list_command;
/// `mcp-defer model fetch`: the transformer tier's model from a wheel.
#[cfg(feature = "model")]
mod model_fetch;
/// `mcp-defer report` on transcripts.
mod report;
/// `mcp-defer search` and `mcp-defer stats` against fixture servers.
mod search_command;
/// `mcp-defer stats --compare`: two exposure modes' first lists, counted.
mod stats;

// The repository's own files.
/// The deploy files docs/deploy.md points at are what they claim.
mod deploy;
/// README and docs snippets show only what the program prints.
mod readme;
