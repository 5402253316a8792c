//! `servers.toml`: the one place that reads the user's file (DESIGN.md section 8).
//!
//! `raw` reads the TOML into spanned shapes (so errors name file, line, table and key);
//! `validate` turns them into the [`Config`] below: `${VAR}` expanded, secrets resolved,
//! units converted, one [`Transport`] per server, prefixes fit for `<prefix>__<tool>`.
//! Everything downstream can trust what it holds. Must not import `server` or `downstream`.
//!
//! # The file
//! ```toml
//! [settings]                      # optional; every key has a default
//! exposure = "deferred"           # "deferred" | "proxy" | "all"
//!
//! [settings.search]
//! semantic = "static"             # "static" (built-in embeddings) | "off" (words only)
//!                                 # | "model" (a transformer, with `model = "<dir>"`)
//!
//! [mcp_servers.docs]              # a Codex block, pasted unchanged
//! command = "npx"
//! args = ["-y", "@example/docs-mcp", "--root", "${HOME}/docs"]
//! env = { API_KEY = "${DOCS_KEY:-none}" }
//! description = "Project documentation"   # ours: one line for the instructions
//! always_load = ["search_docs"]           # ours: core tools, or `true` for all
//!
//! [mcp_servers.docs.tools.search_docs]    # ours: what the model reads for this tool
//! description = "Search the project docs by keyword; returns titles and URLs"
//!
//! [mcp_servers.github]
//! url = "https://api.githubcopilot.com/mcp/"
//! bearer_token_env_var = "GITHUB_PAT"
//! prefix = "gh"                           # ours: qualified names become `gh__<tool>`
//! ```
//!
//! # Expansion
//! `${VAR}` and `${VAR:-default}` expand in every free-text value: `command`, `args`, `env`
//! values, `cwd`, `url`, `http_headers` values, `description`, `search_hints`. `$$` is a
//! literal `$`; any other `$` stays as written. Identifiers are taken literally (table names,
//! `prefix`, tool lists, variable and header names), so qualified tool names do not depend on
//! the machine. `bearer_token_env_var` and `env_http_headers` name variables that are read at
//! load time; unset is an error.
//!
//! # Codex keys
//! Every key Codex accepts in a server table loads. Those that mean nothing to a proxy
//! (`experimental_environment`, `supports_parallel_tool_calls`, `default_tools_approval_mode`,
//! `oauth`, `oauth_resource`, `name`, and `approval_mode` under `tools.<tool>`)
//! are type-checked and ignored; `scopes` is what `mcp-defer login` asks for, beside our
//! `oauth_client_id`, `oauth_client_secret_env_var` and `oauth_callback_port` (HTTP servers
//! only);
//! `startup_timeout_ms` is read when `startup_timeout_sec` is absent; an inline
//! `bearer_token` is rejected, as Codex rejects it.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

pub mod diff;
pub use tool_filter::ToolFilter;
mod error;
mod expand;
mod raw;
mod tool_filter;
mod validate;

pub use error::ConfigError;
pub(crate) use raw::SERVER_KEYS;

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
pub const MAX_NAME_LENGTH_RANGE: std::ops::RangeInclusive<usize> = 16..=128;
/// Accepted `search_limit`: `search_tools` never returns more than 50 (DESIGN.md section 5).
pub const SEARCH_LIMIT_RANGE: std::ops::RangeInclusive<usize> = 1..=50;
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
pub const MAX_MESSAGE_BYTES_RANGE: std::ops::RangeInclusive<usize> = 65_536..=1 << 30;
/// Characters a prefix must leave free under `max_name_length`: `__`, at least one
/// character of the tool name, and the catalog's `_` + 8 hex hash suffix.
pub const PREFIX_ROOM: usize = 2 + 1 + 9;
/// Accepted `max_output_tokens`: below 100 the note saying what was cut is longer than what
/// is kept; above ten million tokens no model reads it anyway.
/// How long an idle HTTP session lives: a working day's pause in a conversation is
/// longer, but a client that comes back after it re-initializes on the 404 (as the spec
/// asks), and what an abandoned session holds is freed within the half hour.
pub const DEFAULT_SESSION_IDLE: Duration = Duration::from_secs(1800);
/// Bounds of `session_idle_sec`: a second (tests) to a week.
pub const SESSION_IDLE_SEC_RANGE: std::ops::RangeInclusive<usize> = 1..=604_800;
/// Requests one HTTP session may have in flight: more than a client runs in parallel
/// (Claude Code runs a handful of tools at once), few enough that one session cannot
/// occupy every downstream server.
pub const DEFAULT_MAX_CONCURRENT_REQUESTS: usize = 32;
/// Bounds of `max_concurrent_requests`.
pub const MAX_CONCURRENT_REQUESTS_RANGE: std::ops::RangeInclusive<usize> = 1..=10_000;
/// How long a connection may take to send a request's headers, and how long a kept-alive
/// connection may wait for its next request: a real client sends its headers in one
/// packet; a slowloris connection that never finishes them is closed after this.
pub const DEFAULT_HEADER_TIMEOUT: Duration = Duration::from_secs(10);
/// How long a request body may take to arrive once its headers are in (bodies are at most
/// `max_message_bytes`; a client on a slow link sends 1 MB in well under this).
pub const DEFAULT_BODY_TIMEOUT: Duration = Duration::from_secs(30);
/// Bounds of `header_timeout_sec` and `body_timeout_sec`: a second to an hour.
pub const HTTP_TIMEOUT_SEC_RANGE: std::ops::RangeInclusive<usize> = 1..=3600;
/// Connections served at once: far above what a team's clients open (each keeps one or
/// two), and below a raised file-descriptor limit. Connections past it are closed on
/// accept.
pub const DEFAULT_MAX_CONNECTIONS: usize = 4096;
/// Bounds of `max_connections`.
pub const MAX_CONNECTIONS_RANGE: std::ops::RangeInclusive<usize> = 1..=1_000_000;
/// Sessions one token (one principal) may hold open at once: one per client window or
/// agent it runs, with room to spare; each holds its lists (~100 KiB).
pub const DEFAULT_MAX_SESSIONS_PER_TOKEN: usize = 256;
/// Bounds of `max_sessions_per_token`.
pub const MAX_SESSIONS_PER_TOKEN_RANGE: std::ops::RangeInclusive<usize> = 1..=1_000_000;
pub const MAX_OUTPUT_TOKENS_RANGE: std::ops::RangeInclusive<usize> = 100..=10_000_000;

/// A validated configuration.
#[derive(Debug, Clone, PartialEq)]
pub struct Config {
    /// Where it was read from, for messages.
    pub path: PathBuf,
    pub settings: Settings,
    /// Every `[mcp_servers.*]` table in file order, disabled ones included.
    pub servers: Vec<ServerConfig>,
    /// `[profiles.<name>]` tables in file order.
    pub profiles: Vec<Profile>,
    /// The tools this view shows: a profile's `allow_tools`/`deny_tools`
    /// ([`Config::for_profile`]); empty, showing every tool, for the whole file.
    pub tools: ToolFilter,
}

/// `[profiles.<name>] servers = [...]`: a subset of the servers, served as its own MCP server
/// (`/mcp/<name>` over HTTP, `serve --profile <name>` on stdio).
#[derive(Debug, Clone, PartialEq)]
pub struct Profile {
    /// `[A-Za-z0-9_-]+`: it is a URL path segment.
    pub name: String,
    /// Server table names, each one that exists.
    pub servers: Vec<String>,
    /// `allow_tools` and `deny_tools`: which of their tools its clients see.
    pub tools: ToolFilter,
}

impl Config {
    /// The config a profile sees: only its servers, in file order (so its instructions,
    /// search and lists are those of its servers alone, in the order the file gives), and
    /// for each, its position in `self.servers`.
    ///
    /// # Errors
    /// An unknown profile name, with the closest known one.
    pub fn for_profile(&self, name: &str) -> Result<(Config, Vec<usize>), ConfigError> {
        let Some(profile) = self.profiles.iter().find(|p| p.name == name) else {
            let known: Vec<&str> = self.profiles.iter().map(|p| p.name.as_str()).collect();
            return Err(ConfigError::UnknownProfile {
                path: self.path.clone(),
                name: name.to_owned(),
                hint: crate::suggest::hint(name, &known),
            });
        };
        let positions: Vec<usize> = (self.servers.iter().enumerate())
            .filter(|(_, s)| profile.servers.contains(&s.name))
            .map(|(i, _)| i)
            .collect();
        let config = Config {
            path: self.path.clone(),
            settings: self.settings.clone(),
            servers: positions.iter().map(|&i| self.servers[i].clone()).collect(),
            profiles: Vec::new(),
            tools: profile.tools.clone(),
        };
        Ok((config, positions))
    }
}

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
    /// `[settings.search] semantic`: the meaning-based tier fused with lexical search.
    pub semantic: crate::search::Semantic,
    /// `[settings.search] model`: the transformer's directory (relative paths resolved
    /// against the config file's). Some exactly when `semantic` is `Model`, and then a
    /// directory whose files and tensor shapes were checked at load.
    pub model: Option<std::path::PathBuf>,
    /// `serve --http`: a session without a request this long is closed and its state
    /// dropped.
    pub session_idle: Duration,
    /// `[settings.http]`: how `serve --http` admits clients.
    pub http: HttpSettings,
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
            client_era: ClientEra::Any,
            semantic: crate::search::Semantic::default(),
            model: None,
            session_idle: DEFAULT_SESSION_IDLE,
            http: HttpSettings::default(),
        }
    }
}

/// Which protocol eras mcp-defer answers the client in (`client_era = ...`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ClientEra {
    /// Whichever the client speaks: `initialize`, or `server/discover` (2026-07-28).
    Any,
    /// `server/discover` is refused, so a 2026-07-28 client falls back to `initialize`: a
    /// server may then ask the client for roots, sampling or elicitation at any time, not
    /// only during a call (server-filesystem asks for roots when it starts).
    Handshake,
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

/// One `[mcp_servers.<name>]` table.
#[derive(Debug, Clone, PartialEq)]
pub struct ServerConfig {
    /// The table name: `[A-Za-z0-9_-]+`.
    pub name: String,
    /// What qualified names start with: `prefix` if set, else the name. Never contains `__`
    /// and never starts or ends with `_`, so `<prefix>__<tool>` splits back unambiguously.
    /// Empty (`prefix = ""`, one server at most): the server's tools and prompts keep their
    /// own names (`catalog::QualifiedName::assign`).
    pub prefix: String,
    /// One line for the catalog in the instructions.
    pub description: Option<String>,
    /// Extra keywords for the search index, for servers whose descriptions are poor.
    pub search_hints: Vec<String>,
    pub transport: Transport,
    pub enabled: bool,
    /// `check` exits 1 when a required server fails.
    pub required: bool,
    pub startup_timeout: Duration,
    pub tool_timeout: Duration,
    /// Only these tools are taken, when set.
    pub enabled_tools: Option<Vec<String>>,
    /// These tools are dropped (after `enabled_tools`).
    pub disabled_tools: Vec<String>,
    /// The core tools: shown from the start. Never names a tool that `enabled_tools` or
    /// `disabled_tools` filters out: load rejects that contradiction, since the tool would
    /// silently never appear.
    pub always_load: AlwaysLoad,
    /// `[mcp_servers.<name>.tools.<tool>]` replacements, in file order.
    pub tool_overrides: Vec<ToolOverride>,
    /// This server's results are cut above this many tokens; wins over `[settings]`.
    pub max_output_tokens: Option<usize>,
    /// When the server's process starts (`start = "lazy"`: at the first call).
    pub start: Start,
    /// `idle_stop_sec`: stopped after this long without a call, started again by the next.
    pub idle_stop: Option<Duration>,
}

/// `start = "eager" | "lazy"`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Start {
    /// With mcp-defer: its tools are listed as soon as it answers.
    Eager,
    /// At the first call of one of its tools; until then its tools come from the list it
    /// gave last time (the tool cache). With no cached list yet, it starts once at launch
    /// to fill it.
    Lazy,
}

/// A replacement description or title for one tool of a server, for servers whose own
/// text is poor or misleading. Applied to the tool as it is listed, before the catalog,
/// the search index and the client see it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToolOverride {
    /// The tool's name as the server lists it.
    pub tool: String,
    pub description: Option<String>,
    pub title: Option<String>,
}

impl ServerConfig {
    /// Applies this server's override for `tool`, if it has one: the one place overrides
    /// take effect, so the catalog, the index, `tools/list` and every CLI command agree.
    pub fn override_tool(&self, tool: &mut rmcp::model::Tool) {
        let Some(o) = self.tool_overrides.iter().find(|o| o.tool == tool.name) else {
            return;
        };
        if let Some(description) = &o.description {
            tool.description = Some(description.clone().into());
        }
        if let Some(title) = &o.title {
            tool.title = Some(title.clone());
            // The older display title clients may prefer; it must not contradict the new one.
            if let Some(annotations) = &mut tool.annotations
                && annotations.title.is_some()
            {
                annotations.title = Some(title.clone());
            }
        }
    }

    /// The tools overridden in the config that `listed` (the names the server lists) lacks:
    /// a typo, or a tool the server dropped. `check` warns about them.
    pub fn unlisted_overrides<'a>(&'a self, listed: &[&str]) -> Vec<&'a str> {
        self.tool_overrides
            .iter()
            .map(|o| o.tool.as_str())
            .filter(|tool| !listed.contains(tool))
            .collect()
    }
    /// Whether `tool` passes `enabled_tools` and `disabled_tools`.
    pub fn allows(&self, tool: &str) -> bool {
        self.enabled_tools
            .as_ref()
            .is_none_or(|enabled| enabled.iter().any(|t| t == tool))
            && !self.disabled_tools.iter().any(|t| t == tool)
    }

    /// What the search index adds to every tool of this server: its `description` and
    /// `search_hints`, and the `instructions` of its handshake.
    pub fn search_text(&self, instructions: Option<&str>) -> String {
        let mut parts: Vec<&str> = self.description.as_deref().into_iter().collect();
        parts.extend(self.search_hints.iter().map(String::as_str));
        parts.extend(instructions);
        parts.join("\n")
    }

    /// Whether `tool` is pinned as a core tool.
    pub fn is_core(&self, tool: &str) -> bool {
        match &self.always_load {
            AlwaysLoad::None => false,
            AlwaysLoad::All => true,
            AlwaysLoad::Tools(tools) => tools.iter().any(|t| t == tool),
        }
    }
}

/// `always_load = true` or `always_load = ["tool", ...]`; `false` and `[]` are `None`.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum AlwaysLoad {
    #[default]
    None,
    All,
    Tools(Vec<String>),
}

/// How to reach a server. Values are expanded; secrets stay inside and are never logged.
#[derive(Clone, PartialEq)]
pub enum Transport {
    Stdio {
        command: String,
        args: Vec<String>,
        /// Set on top of what is passed on.
        env: BTreeMap<String, String>,
        /// Codex's allow-list: these variables of mcp-defer's environment are passed on, with
        /// the default set, when they are set.
        env_vars: Vec<String>,
        /// Pass mcp-defer's whole environment (Claude Code's behaviour) instead of the
        /// default set plus `env_vars`: the per-server key, else `[settings] inherit_env`.
        inherit_env: bool,
        /// A relative `cwd` in the file is joined to the config file's directory, so the
        /// same file works wherever mcp-defer is started (it stays relative only when the
        /// config path itself was relative).
        cwd: Option<PathBuf>,
    },
    Http {
        url: String,
        /// Resolved from `bearer_token_env_var` at load time.
        bearer_token: Option<String>,
        /// `http_headers` plus resolved `env_http_headers` (which win on a shared name).
        headers: BTreeMap<String, String>,
        /// How `mcp-defer login` registers and what it asks for, if the server uses OAuth.
        oauth: OAuthClient,
    },
}

/// The OAuth client settings of an HTTP server: all optional, since discovery and dynamic
/// client registration need none of them.
#[derive(Clone, Default, PartialEq, Eq)]
pub struct OAuthClient {
    /// `oauth_client_id`: a client registered beforehand; skips dynamic registration.
    pub client_id: Option<String>,
    /// Resolved from `oauth_client_secret_env_var` at load time.
    pub client_secret: Option<String>,
    /// Codex's `scopes`: what to ask for; empty lets the server's metadata decide.
    pub scopes: Vec<String>,
    /// `oauth_callback_port`: log in with the redirect URI
    /// `http://localhost:<port>/callback` (Claude Code's `callbackPort`), for a client whose
    /// registration names it; `None` picks a free port.
    pub callback_port: Option<u16>,
}

impl std::fmt::Debug for OAuthClient {
    /// The secret never reaches a log line.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OAuthClient")
            .field("client_id", &self.client_id)
            .field(
                "client_secret",
                &self.client_secret.as_ref().map(|_| "<redacted>"),
            )
            .field("scopes", &self.scopes)
            .field("callback_port", &self.callback_port)
            .finish()
    }
}

impl std::fmt::Debug for Transport {
    /// Secrets (env values, tokens, header values) never reach a log line.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Transport::Stdio {
                command,
                args,
                env,
                env_vars,
                inherit_env,
                cwd,
            } => f
                .debug_struct("Stdio")
                .field("command", command)
                .field("args", args)
                .field("env", &env.keys().collect::<Vec<_>>())
                .field("env_vars", env_vars)
                .field("inherit_env", inherit_env)
                .field("cwd", cwd)
                .finish(),
            Transport::Http {
                url,
                bearer_token,
                headers,
                oauth,
            } => f
                .debug_struct("Http")
                .field("url", url)
                .field("bearer_token", &bearer_token.as_ref().map(|_| "<redacted>"))
                .field("headers", &headers.keys().collect::<Vec<_>>())
                .field("oauth", oauth)
                .finish(),
        }
    }
}

impl Config {
    /// Reads and validates the file at `path`.
    ///
    /// # Errors
    /// A [`ConfigError`] that names the file, line, table and key and says how to fix it.
    pub fn load(path: &Path) -> Result<Config, ConfigError> {
        let text = std::fs::read_to_string(path).map_err(|source| ConfigError::Read {
            path: path.to_owned(),
            source,
        })?;
        Config::parse(&text, path)
    }

    /// Validates `text` as if read from `path`, with `std::env` for `${VAR}` expansion.
    ///
    /// # Errors
    /// As [`Config::load`].
    pub fn parse(text: &str, path: &Path) -> Result<Config, ConfigError> {
        Config::parse_with_env(text, path, &|name| std::env::var(name).ok())
    }

    /// As [`Config::parse`], reading variables through `env` instead of the process
    /// environment, so tests (here and in other modules) never have to set real variables.
    /// `path` is only used for messages and to resolve a relative `cwd`.
    ///
    /// # Errors
    /// As [`Config::load`].
    pub fn parse_with_env(
        text: &str,
        path: &Path,
        env: &dyn Fn(&str) -> Option<String>,
    ) -> Result<Config, ConfigError> {
        // Raw shapes in, validated shape out: `raw` never sees `validate`, nor the reverse
        // (ripgrep's lowargs → hiargs).
        let source = error::Source::new(path, text);
        let file = raw::decode(text, &source)?;
        validate::build(file, &source, env)
    }

    /// The output budget of the server at `index`: its own `max_output_tokens`, else the
    /// one in `[settings]`, else none.
    pub fn max_output_tokens(&self, index: usize) -> Option<usize> {
        self.servers
            .get(index)
            .and_then(|s| s.max_output_tokens)
            .or(self.settings.max_output_tokens)
    }

    /// The servers that are enabled, in file order.
    pub fn enabled_servers(&self) -> impl Iterator<Item = &ServerConfig> {
        self.servers.iter().filter(|s| s.enabled)
    }

    /// Where to look when no `--config` is given (DESIGN.md section 9):
    /// `$MCP_DEFER_CONFIG`, `./servers.toml`, `<config dir>/mcp-defer/servers.toml` (Linux:
    /// `$XDG_CONFIG_HOME` or `~/.config`; macOS: `~/Library/Application Support`; Windows:
    /// `%APPDATA%`; see `crate::platform::dirs`).
    ///
    /// # Errors
    /// [`ConfigError::NotFound`] listing every place it looked.
    pub fn default_path() -> Result<PathBuf, ConfigError> {
        let mut looked = Vec::new();
        if let Some(path) = std::env::var_os("MCP_DEFER_CONFIG") {
            // An explicit variable is final: a typo there must not silently load another file.
            return Ok(PathBuf::from(path));
        }
        looked.push(PathBuf::from("servers.toml"));
        if let Some(dir) = crate::platform::dirs::config_dir() {
            looked.push(dir.join("servers.toml"));
        }
        looked
            .iter()
            .find(|p| p.is_file())
            .cloned()
            .ok_or(ConfigError::NotFound { looked })
    }
}

#[cfg(test)]
mod tests;
