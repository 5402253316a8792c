//! Every default and accepted range of the file, each with the reason for its value, so a
//! reader changing one sees what it protects and `validate` can quote the range in its
//! errors. Codex's defaults are kept where Codex has one, so a pasted block behaves the same.

use std::ops::RangeInclusive;
use std::time::Duration;

/// How long a server may take to answer `initialize` and its first `tools/list`
/// (Codex's default, so a pasted block behaves the same).
pub const DEFAULT_STARTUP_TIMEOUT: Duration = Duration::from_secs(10);
/// The start deadline of a launcher ([`is_launcher`]) without `startup_timeout_sec`: its
/// first run fetches the package before the server starts (a cold `npx` cache took
/// 11.5-13.6 s, `uvx` may download a Python, `docker` pulls an image); later starts come
/// from the launcher's cache and take a second or two.
pub const LAUNCHER_STARTUP_TIMEOUT: Duration = Duration::from_secs(60);
/// Programs that fetch a package before running it (matched on the file name, any
/// directory): a server started through one gets [`LAUNCHER_STARTUP_TIMEOUT`].
pub const LAUNCHERS: &[&str] = &[
    "npx", "pnpx", "bunx", "uvx", "pipx", "uv", "pnpm", "yarn", "bun", "deno", "docker", "podman",
];

/// Whether `command` is one of [`LAUNCHERS`] (`/usr/local/bin/npx` counts, as does a
/// Windows `npx.cmd`).
pub fn is_launcher(command: &str) -> bool {
    let program = command.rsplit(['/', '\\']).next().unwrap_or(command);
    let program = [".cmd", ".exe", ".bat", ".ps1"]
        .iter()
        .find_map(|ext| program.strip_suffix(ext))
        .unwrap_or(program);
    LAUNCHERS.contains(&program)
}

/// How long one proxied `tools/call` may run (Codex's default).
pub const DEFAULT_TOOL_TIMEOUT: Duration = Duration::from_secs(60);
/// Providers reject tool names longer than 64 characters.
pub const DEFAULT_MAX_NAME_LENGTH: usize = 64;
/// Results `search_tools` returns when the model gives no `limit`.
pub const DEFAULT_SEARCH_LIMIT: usize = 8;
/// The first `tools/list` waits this long for servers with core tools (DESIGN.md 7a:
/// Codex drops a server whose tools come later than about 1.5 s).
pub const DEFAULT_CORE_WAIT: Duration = Duration::from_millis(400);
/// `select_tools` holds its result at most this long for the client's re-list.
pub const DEFAULT_RELIST_WAIT: Duration = Duration::from_millis(2000);

/// Accepted `max_name_length`. Below 16 a qualified name has no room for a prefix, `__`, a
/// readable tool name and the catalog's 9-character hash suffix; above 128 no provider
/// accepts the name anyway (most stop at 64, which is the default).
pub const MAX_NAME_LENGTH_RANGE: RangeInclusive<usize> = 16..=128;
/// Accepted `search_limit`: `search_tools` never returns more than 50 (DESIGN.md section 5).
pub const SEARCH_LIMIT_RANGE: RangeInclusive<usize> = 1..=50;
/// Hits of one `search_tools` that it loads itself (issue 34): a found tool is callable by its
/// own name in the request after the search, as with the clients' own tool search, instead
/// of one request later through `select_tools`. Three covers the target ranked second or
/// third (docs/benchmarks.md, the cache-cost bench's catalog sizes), at the cost of the
/// schemas of the two that go unused.
pub const DEFAULT_SEARCH_LOADS: usize = 3;
/// Accepted `search_loads`: 0 leaves loading to `select_tools`; more than a search's default
/// `limit` would load what the model was never shown.
pub const SEARCH_LOADS_RANGE: RangeInclusive<usize> = 0..=8;
/// Upper bound of `core_wait_ms` and `relist_wait_ms`: beyond a minute a held call or a
/// held first `tools/list` looks hung to the user and to the client.
pub const MAX_WAIT_MS: usize = 60_000;
/// Accepted `startup_timeout_sec` (exclusive of 0): past an hour a start is hung, and an
/// unbounded value would overflow the deadline arithmetic (`1.7e19` once panicked every call).
pub const MAX_STARTUP_TIMEOUT_SEC: f64 = 3600.0;
/// Accepted `tool_timeout_sec` (exclusive of 0): one day, far beyond any real tool call.
pub const MAX_TOOL_TIMEOUT_SEC: f64 = 86_400.0;
/// Accepted `idle_stop_sec` (exclusive of 0): a week; a server idle longer than that is
/// one to remove from the file.
pub const MAX_IDLE_STOP_SEC: f64 = 604_800.0;
/// Accepted `max_message_bytes`: from 64 KiB (a large tool list page) to 1 GiB (beyond that
/// one message would exhaust memory before it is refused).
pub const MAX_MESSAGE_BYTES_RANGE: RangeInclusive<usize> = 65_536..=1 << 30;
/// Characters a prefix must leave free under `max_name_length`: `__`, at least one
/// character of the tool name, and the catalog's `_` + 8 hex hash suffix.
pub const PREFIX_ROOM: usize = 2 + 1 + 9;
/// How long an idle HTTP session lives: a working day's pause in a conversation is
/// longer, but a client that comes back after it re-initializes on the 404 (as the spec
/// asks), and what an abandoned session holds is freed within the half hour.
pub const DEFAULT_SESSION_IDLE: Duration = Duration::from_secs(1800);
/// Bounds of `session_idle_sec`: a second (tests) to a week.
pub const SESSION_IDLE_SEC_RANGE: RangeInclusive<usize> = 1..=604_800;
/// How long a hub with no session left stays up (`hub_grace_sec`): a client restarted, or a
/// new terminal tab opened, within it finds its servers still running and their tools warm.
pub const DEFAULT_HUB_GRACE: Duration = Duration::from_secs(60);
/// Bounds of `hub_grace_sec`: none at all (the hub leaves with its last session) to a day.
pub const HUB_GRACE_SEC_RANGE: RangeInclusive<usize> = 0..=86_400;
/// Requests one HTTP session may have in flight: more than a client runs in parallel
/// (Claude Code runs a handful of tools at once), few enough that one session cannot
/// occupy every downstream server.
pub const DEFAULT_MAX_CONCURRENT_REQUESTS: usize = 32;
/// Bounds of `max_concurrent_requests`.
pub const MAX_CONCURRENT_REQUESTS_RANGE: RangeInclusive<usize> = 1..=10_000;
/// How long a connection may take to send a request's headers, and how long a kept-alive
/// connection may wait for its next request: a real client sends its headers in one
/// packet; a slowloris connection that never finishes them is closed after this.
pub const DEFAULT_HEADER_TIMEOUT: Duration = Duration::from_secs(10);
/// How long a request body may take to arrive once its headers are in (bodies are at most
/// `max_message_bytes`; a client on a slow link sends 1 MB in well under this).
pub const DEFAULT_BODY_TIMEOUT: Duration = Duration::from_secs(30);
/// Bounds of `header_timeout_sec` and `body_timeout_sec`: a second to an hour.
pub const HTTP_TIMEOUT_SEC_RANGE: RangeInclusive<usize> = 1..=3600;
/// Connections served at once: far above what a team's clients open (each keeps one or
/// two), and below a raised file-descriptor limit. Connections past it are closed on
/// accept.
pub const DEFAULT_MAX_CONNECTIONS: usize = 4096;
/// Bounds of `max_connections`.
pub const MAX_CONNECTIONS_RANGE: RangeInclusive<usize> = 1..=1_000_000;
/// Sessions one token (one principal) may hold open at once: one per client window or
/// agent it runs, with room to spare; each holds its lists (~100 KiB).
pub const DEFAULT_MAX_SESSIONS_PER_TOKEN: usize = 256;
/// Bounds of `max_sessions_per_token`.
pub const MAX_SESSIONS_PER_TOKEN_RANGE: RangeInclusive<usize> = 1..=1_000_000;
/// Accepted `max_output_tokens`: below 100 the note saying what was cut is longer than what
/// is kept; above ten million tokens no model reads it anyway.
pub const MAX_OUTPUT_TOKENS_RANGE: RangeInclusive<usize> = 100..=10_000_000;
