//! What `serve --http` counts, and `/metrics` in Prometheus' text format (served behind
//! the same tokens as `/mcp`).
//!
//! One set of counters for the process: connections, sessions, requests and errors by
//! JSON-RPC method and server (the server a `tools/call` went to: the catalog's owner of
//! the name), request latency histograms by method, `search_tools`' own latency
//! ([`crate::server::latency`]), and each downstream server's state and restart attempt.
//! Labels come from a closed set (the methods below, the configured server names), so a
//! client cannot grow the series without bound.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Instant;

use crate::downstream::{ServerHandle, ServerState};
use crate::protocol::method;
use crate::sync::lock;

/// Upper bounds of the latency buckets, in seconds: a local tool call takes a millisecond,
/// a remote one a second, a build a minute.
const BUCKETS: [f64; 12] = [
    0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 5.0, 30.0,
];

/// The JSON-RPC methods counted by name; any other is counted as `other`.
const METHODS: &[&str] = &[
    method::INITIALIZE,
    method::SERVER_DISCOVER,
    method::PING,
    method::TOOLS_LIST,
    method::TOOLS_CALL,
    method::PROMPTS_LIST,
    method::PROMPTS_GET,
    method::RESOURCES_LIST,
    method::RESOURCES_TEMPLATES_LIST,
    method::RESOURCES_READ,
    method::RESOURCES_SUBSCRIBE,
    method::RESOURCES_UNSUBSCRIBE,
    method::COMPLETION_COMPLETE,
    method::LOGGING_SET_LEVEL,
    method::INITIALIZED,
    method::CANCELLED,
];

/// The meta tools: calls to them are counted under server `mcp-defer`.
const META_TOOLS: &[&str] = &["search_tools", "select_tools", "call_tool"];

#[derive(Default)]
struct Counters {
    connections_open: AtomicU64,
    connections_refused: AtomicU64,
    sessions_refused: AtomicU64,
    requests: Mutex<BTreeMap<(&'static str, String), Series>>,
}

#[derive(Default)]
struct Series {
    requests: u64,
    errors: u64,
    buckets: [u64; BUCKETS.len()],
    sum: f64,
}

fn counters() -> &'static Counters {
    static COUNTERS: OnceLock<Counters> = OnceLock::new();
    COUNTERS.get_or_init(Counters::default)
}

pub(super) fn connection_refused() {
    counters()
        .connections_refused
        .fetch_add(1, Ordering::Relaxed);
}

pub(super) fn session_refused() {
    counters().sessions_refused.fetch_add(1, Ordering::Relaxed);
}

/// Counts a connection open until the guard drops.
pub(super) fn connection_opened() -> OpenConnection {
    counters().connections_open.fetch_add(1, Ordering::Relaxed);
    OpenConnection
}

pub(super) struct OpenConnection;

impl Drop for OpenConnection {
    fn drop(&mut self) {
        counters().connections_open.fetch_sub(1, Ordering::Relaxed);
    }
}

/// One request's measurement: recorded when dropped, which the gate arranges to be when
/// its response body (the call's SSE stream) ends.
pub(super) struct Timing {
    method: &'static str,
    server: String,
    started: Instant,
    error: bool,
}

impl Timing {
    /// `tool`: the name a `tools/call` gave, with the server that owns it in the catalog
    /// (`None` for a name the catalog does not have, counted as `unknown`).
    pub(super) fn new(
        method: Option<&str>,
        tool: Option<(&str, Option<Arc<str>>)>,
        started: Instant,
    ) -> Timing {
        let method = method
            .and_then(|m| METHODS.iter().find(|known| **known == m).copied())
            .unwrap_or("other");
        let server = match tool {
            Some((tool, _)) if META_TOOLS.contains(&tool) => "mcp-defer".to_owned(),
            // The server's name is configured, so the set is closed: not the text before
            // `__`, which a client chooses and a `prefix` changes.
            Some((_, Some(owner))) => owner.to_string(),
            Some((_, None)) => "unknown".to_owned(),
            None => String::new(),
        };
        // An error until [`Timing::status`] says otherwise: the gate's own refusals
        // return before it is called.
        Timing {
            method,
            server,
            started,
            error: true,
        }
    }

    /// The HTTP status the request was answered with: 4xx and 5xx count as errors.
    pub(super) fn status(&mut self, status: u16) {
        self.error = status >= 400;
    }
}

impl Drop for Timing {
    fn drop(&mut self) {
        let seconds = self.started.elapsed().as_secs_f64();
        let mut requests = lock(&counters().requests);
        let series = requests
            .entry((self.method, std::mem::take(&mut self.server)))
            .or_default();
        series.requests += 1;
        series.errors += u64::from(self.error);
        series.sum += seconds;
        for (bucket, bound) in series.buckets.iter_mut().zip(BUCKETS) {
            if seconds <= bound {
                *bucket += 1;
            }
        }
    }
}

/// The `/metrics` page: the counters, `sessions` open now, each server's state, and the
/// tools trust `held` until the user approves them.
pub(super) fn render(sessions: usize, servers: &[ServerHandle], held: usize) -> String {
    let c = counters();
    let mut out = String::new();
    let gauge = |out: &mut String, name: &str, help: &str, kind: &str, value: u64| {
        let _ = writeln!(
            out,
            "# HELP {name} {help}\n# TYPE {name} {kind}\n{name} {value}"
        );
    };
    gauge(
        &mut out,
        "mcp_defer_http_connections_open",
        "HTTP connections open now.",
        "gauge",
        c.connections_open.load(Ordering::Relaxed),
    );
    gauge(
        &mut out,
        "mcp_defer_http_connections_refused_total",
        "Connections closed on accept at [settings.http] max_connections.",
        "counter",
        c.connections_refused.load(Ordering::Relaxed),
    );
    gauge(
        &mut out,
        "mcp_defer_http_sessions_open",
        "MCP sessions open now.",
        "gauge",
        sessions as u64,
    );
    gauge(
        &mut out,
        "mcp_defer_tools_held",
        "Tools held until `mcp-defer trust` approves them (changed, new or suspicious).",
        "gauge",
        held as u64,
    );
    gauge(
        &mut out,
        "mcp_defer_http_sessions_refused_total",
        "initialize requests refused at [settings.http] max_sessions_per_token.",
        "counter",
        c.sessions_refused.load(Ordering::Relaxed),
    );
    let requests = lock(&c.requests);
    out.push_str(
        "# HELP mcp_defer_http_requests_total JSON-RPC messages received, by method and \
         server (tools/call).\n# TYPE mcp_defer_http_requests_total counter\n",
    );
    for ((method, server), series) in requests.iter() {
        let _ = writeln!(
            out,
            "mcp_defer_http_requests_total{{method=\"{method}\",server=\"{server}\"}} {}",
            series.requests
        );
    }
    out.push_str(
        "# HELP mcp_defer_http_request_errors_total Messages answered with an HTTP error \
         status.\n# TYPE mcp_defer_http_request_errors_total counter\n",
    );
    for ((method, server), series) in requests.iter() {
        let _ = writeln!(
            out,
            "mcp_defer_http_request_errors_total{{method=\"{method}\",server=\"{server}\"}} {}",
            series.errors
        );
    }
    out.push_str(
        "# HELP mcp_defer_http_request_duration_seconds From the request to the end of its \
         answer.\n# TYPE mcp_defer_http_request_duration_seconds histogram\n",
    );
    for ((method, server), series) in requests.iter() {
        let labels = format!("method=\"{method}\",server=\"{server}\"");
        for (count, bound) in series.buckets.iter().zip(BUCKETS) {
            let _ = writeln!(
                out,
                "mcp_defer_http_request_duration_seconds_bucket{{{labels},le=\"{bound}\"}} {count}"
            );
        }
        let _ = writeln!(
            out,
            "mcp_defer_http_request_duration_seconds_bucket{{{labels},le=\"+Inf\"}} {}\n\
             mcp_defer_http_request_duration_seconds_sum{{{labels}}} {}\n\
             mcp_defer_http_request_duration_seconds_count{{{labels}}} {}",
            series.requests, series.sum, series.requests
        );
    }
    drop(requests);
    crate::server::latency::SEARCH.render(
        &mut out,
        "mcp_defer_search_duration_seconds",
        "search_tools from the call to its result (waits for starting servers included).",
    );
    out.push_str(
        "# HELP mcp_defer_downstream_up Whether the server is connected (1) or not (0), \
         with its state.\n# TYPE mcp_defer_downstream_up gauge\n",
    );
    for server in servers {
        let state = server.state();
        let up = u8::from(matches!(state, ServerState::Ready { .. }));
        let _ = writeln!(
            out,
            "mcp_defer_downstream_up{{server=\"{}\",state=\"{}\"}} {up}",
            server.name(),
            state_name(&state)
        );
    }
    out.push_str(
        "# HELP mcp_defer_downstream_restart_attempt The attempt a restarting server is at \
         (0 when connected).\n# TYPE mcp_defer_downstream_restart_attempt gauge\n",
    );
    for server in servers {
        let attempt = match server.state() {
            ServerState::Restarting { attempt, .. } => attempt,
            _ => 0,
        };
        let _ = writeln!(
            out,
            "mcp_defer_downstream_restart_attempt{{server=\"{}\"}} {attempt}",
            server.name()
        );
    }
    out
}

/// A state's name for a label.
pub(super) fn state_name(state: &ServerState) -> &'static str {
    match state {
        ServerState::Starting => "starting",
        ServerState::Ready { .. } => "ready",
        ServerState::Restarting { .. } => "restarting",
        ServerState::NeedsLogin { .. } => "needs_login",
        ServerState::Failed { .. } => "failed",
        ServerState::Disabled => "disabled",
        ServerState::Removed => "removed",
        ServerState::Idle { .. } => "idle",
    }
}
