//! The validated `[settings]` table: what the whole proxy does, as opposed to one server.
//! Defaults come from `defaults`; `validate::settings` fills it from the file.

use std::path::PathBuf;
use std::time::Duration;

use super::{
    DEFAULT_BODY_TIMEOUT, DEFAULT_CORE_WAIT, DEFAULT_HEADER_TIMEOUT, DEFAULT_HUB_GRACE,
    DEFAULT_MAX_CONCURRENT_REQUESTS, DEFAULT_MAX_CONNECTIONS, DEFAULT_MAX_NAME_LENGTH,
    DEFAULT_MAX_SESSIONS_PER_TOKEN, DEFAULT_RELIST_WAIT, DEFAULT_SEARCH_LIMIT,
    DEFAULT_SEARCH_LOADS, DEFAULT_SESSION_IDLE,
};

/// The `[settings]` table.
#[derive(Debug, Clone, PartialEq)]
pub struct Settings {
    pub exposure: ExposureMode,
    pub max_name_length: usize,
    pub search_limit: usize,
    pub core_wait: Duration,
    pub relist_wait: Duration,
    /// Put `_meta {"anthropic/alwaysLoad": true}` on every listed tool (DESIGN.md 7a).
    pub claude_always_load: bool,
    /// The default of each stdio server's `inherit_env`: `false` gives a server only
    /// [`crate::downstream::DEFAULT_ENV_VARS`], the network settings
    /// ([`crate::downstream::NETWORK_ENV_VARS`]), its `env_vars` and its `env`, as Codex does.
    pub inherit_env: bool,
    /// The longest JSON-RPC message (one line) read from the client or from a server.
    pub max_message_bytes: usize,
    /// Tool results over this many tokens are cut (`None`: never); a server's own
    /// `max_output_tokens` wins.
    pub max_output_tokens: Option<usize>,
    /// Which protocol eras the client may speak (docs/design.md section 12).
    pub client_era: ClientEra,
    /// How many of its best hits `search_tools` loads itself, where the session's list may
    /// grow on request (`search_loads`; 0: only `select_tools` loads).
    pub search_loads: usize,
    /// `[settings.search] semantic`: the meaning-based tier fused with lexical search.
    pub semantic: crate::search::Semantic,
    /// `[settings.search] model`: the transformer's directory (relative paths resolved
    /// against the config file's). Some exactly when `semantic` is `Model`, and then a
    /// directory whose files and tensor shapes were checked at load.
    pub model: Option<std::path::PathBuf>,
    /// `[settings.search] learn`: keep which tool was chosen after which query, and lift
    /// it for similar queries (`search::usage`): each principal from its own use
    /// (`"principal"`, the default, or `true`), everyone's pooled (`"shared"`), or not at
    /// all (`false`: nothing is read or written).
    pub learn: crate::search::usage::Learn,
    /// `serve --http`: a session without a request this long is closed and its state
    /// dropped.
    pub session_idle: Duration,
    /// `hub`: stdio sessions of this config share one process per user (the hub) and its
    /// servers; `false` keeps one process, and one set of servers, per session.
    pub hub: bool,
    /// `hub_grace_sec`: how long the hub stays after its last session ends.
    pub hub_grace: Duration,
    /// `[settings.http]`: how `serve --http` admits clients.
    pub http: HttpSettings,
    /// `trust = ...`: what a changed or suspicious tool definition does (`crate::trust`);
    /// a server's own `trust` wins.
    pub trust: TrustMode,
}

/// `[settings.http]`.
#[derive(Debug, Clone, PartialEq)]
pub struct HttpSettings {
    /// Where the bearer tokens come from; `None`: no auth (refused off loopback).
    pub tokens: Option<TokenSource>,
    /// Browser origins allowed to call (`Origin` header); any other present Origin gets
    /// 403. Empty: every request that carries an Origin is refused.
    pub allowed_origins: Vec<String>,
    /// `Host` values accepted (DNS-rebinding protection); empty: loopback names and the
    /// bound address.
    pub allowed_hosts: Vec<String>,
    /// Requests one session may have in flight at once; also the stateless (2026-07-28)
    /// requests one token may have in flight at once.
    pub max_concurrent_requests: usize,
    /// `header_timeout_sec`: the time to send a request's headers, and the longest a
    /// kept-alive connection waits for its next request.
    pub header_timeout: Duration,
    /// `body_timeout_sec`: the time a request body may take to arrive.
    pub body_timeout: Duration,
    /// Connections served at once; more are closed on accept.
    pub max_connections: usize,
    /// Sessions one token may hold open at once.
    pub max_sessions_per_token: usize,
}

/// Where `serve --http` reads its bearer tokens. Read when serving starts, never logged.
#[derive(Debug, Clone, PartialEq)]
pub enum TokenSource {
    /// `tokens_env = "VAR"`: the variable holds one token, or several separated by commas.
    Env(String),
    /// `token_file = "path"`: one token a line (blank lines and `#` lines skipped).
    File(PathBuf),
}

impl Default for HttpSettings {
    fn default() -> Self {
        HttpSettings {
            tokens: None,
            allowed_origins: Vec::new(),
            allowed_hosts: Vec::new(),
            max_concurrent_requests: DEFAULT_MAX_CONCURRENT_REQUESTS,
            header_timeout: DEFAULT_HEADER_TIMEOUT,
            body_timeout: DEFAULT_BODY_TIMEOUT,
            max_connections: DEFAULT_MAX_CONNECTIONS,
            max_sessions_per_token: DEFAULT_MAX_SESSIONS_PER_TOKEN,
        }
    }
}

impl Default for Settings {
    fn default() -> Self {
        Settings {
            exposure: ExposureMode::Deferred,
            max_name_length: DEFAULT_MAX_NAME_LENGTH,
            search_limit: DEFAULT_SEARCH_LIMIT,
            core_wait: DEFAULT_CORE_WAIT,
            relist_wait: DEFAULT_RELIST_WAIT,
            claude_always_load: true,
            inherit_env: false,
            max_message_bytes: crate::lines::DEFAULT_MAX_MESSAGE_BYTES,
            max_output_tokens: None,
            client_era: ClientEra::Auto,
            search_loads: DEFAULT_SEARCH_LOADS,
            semantic: crate::search::Semantic::default(),
            model: None,
            learn: crate::search::usage::Learn::default(),
            session_idle: DEFAULT_SESSION_IDLE,
            hub: true,
            hub_grace: DEFAULT_HUB_GRACE,
            http: HttpSettings::default(),
            trust: TrustMode::DEFAULT,
        }
    }
}

/// Which protocol eras mcp-defer answers the client in (`client_era = ...`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ClientEra {
    /// The handshake era where a connection's tool list grows on request (`exposure =
    /// "deferred"` over a connection), whichever the client speaks otherwise: 2026-07-28
    /// forbids a list that changes as a side effect of a request (DESIGN.md 7c), and every
    /// client measured falls back to `initialize` when `server/discover` is refused.
    Auto,
    /// Whichever the client speaks: `initialize`, or `server/discover` (2026-07-28).
    Any,
    /// `server/discover` is refused, so a 2026-07-28 client falls back to `initialize`: a
    /// server may then ask the client for roots, sampling or elicitation at any time, not
    /// only during a call (server-filesystem asks for roots when it starts).
    Handshake,
}

impl Settings {
    /// Whether `server/discover` is refused, sending a 2026-07-28 client back to
    /// `initialize`; `connection`: it came on a connection (stdio), not as a stateless
    /// HTTP request, whose list is fixed whatever the mode.
    pub fn refuses_discover(&self, connection: bool) -> bool {
        match self.client_era {
            ClientEra::Handshake => true,
            ClientEra::Any => false,
            ClientEra::Auto => connection && self.exposure == ExposureMode::Deferred,
        }
    }
}

/// What the client's `tools/list` shows (DESIGN.md section 6).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ExposureMode {
    /// Meta tools and core tools; `select_tools` appends.
    Deferred,
    /// The list never changes; `select_tools` only returns schemas.
    Proxy,
    /// Every catalog tool, appended as servers connect.
    All,
}

/// `trust = "pin" | "warn" | "off"`: what mcp-defer does with a tool definition that
/// differs from the one approved in the lock file, or trips a suspicious-content rule
/// (`crate::trust`; the default and why in docs/design.md).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TrustMode {
    /// Held: not searchable, selectable or callable until `mcp-defer trust` approves it.
    Pin,
    /// Served as it is, and named in the log, `check` and `list`.
    Warn,
    /// Neither recorded nor checked.
    Off,
}

impl TrustMode {
    /// `trust` when neither `[settings]` nor the server sets it: a definition that changed
    /// after it was first seen is held until the user approves it (docs/design.md section
    /// 20: the one place a rug pull can be stopped before it reaches the model). Here
    /// rather than in `defaults.rs`, which must not import this file.
    pub const DEFAULT: TrustMode = TrustMode::Pin;

    /// The values the config accepts, in the order the docs give them.
    pub const NAMES: [&'static str; 3] = ["pin", "warn", "off"];

    pub fn parse(value: &str) -> Option<TrustMode> {
        match value {
            "pin" => Some(TrustMode::Pin),
            "warn" => Some(TrustMode::Warn),
            "off" => Some(TrustMode::Off),
            _ => None,
        }
    }
}
