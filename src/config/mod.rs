//! `servers.toml`: the one place that reads the user's file (DESIGN.md section 8).
//!
//! `raw` reads the TOML into spanned shapes (so errors name file, line, table and key);
//! `validate` turns them into the [`Config`] below: `${VAR}` expanded, secrets resolved,
//! units converted, one [`Transport`] per server, prefixes fit for `<prefix>__<tool>`.
//! Everything downstream can trust what it holds. Must not import `server` or `downstream`.
//! The validated shapes are split by what they describe: [`Config`] and [`Profile`] here,
//! `settings` (the `[settings]` table), `server` (one `[mcp_servers.<name>]` table),
//! `defaults` (every default and accepted range, with its reason).
//!
//! # The file
//! ```toml
//! [settings]                      # optional; every key has a default
//! exposure = "deferred"           # "deferred" | "proxy" | "all"
//!
//! [settings.search]
//! semantic = "static"             # "static" (built-in embeddings) | "off" (words only)
//!                                 # | "model" (a transformer, with `model = "<dir>"`)
//! learn = "principal"             # lift tools chosen before for similar queries: each
//!                                 # principal by its own use | "shared" | false
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

use std::path::{Path, PathBuf};

pub mod diff;
pub use tool_filter::ToolFilter;
mod defaults;
mod error;
mod expand;
mod raw;
mod server;
mod settings;
mod tool_filter;
mod validate;

pub use defaults::{
    DEFAULT_BODY_TIMEOUT, DEFAULT_CORE_WAIT, DEFAULT_HEADER_TIMEOUT, DEFAULT_HUB_GRACE,
    DEFAULT_MAX_CONCURRENT_REQUESTS, DEFAULT_MAX_CONNECTIONS, DEFAULT_MAX_NAME_LENGTH,
    DEFAULT_MAX_SESSIONS_PER_TOKEN, DEFAULT_RELIST_WAIT, DEFAULT_SEARCH_LIMIT,
    DEFAULT_SEARCH_LOADS, DEFAULT_SESSION_IDLE, DEFAULT_STARTUP_TIMEOUT, DEFAULT_TOOL_TIMEOUT,
    HTTP_TIMEOUT_SEC_RANGE, HUB_GRACE_SEC_RANGE, LAUNCHER_STARTUP_TIMEOUT, LAUNCHERS,
    MAX_CONCURRENT_REQUESTS_RANGE, MAX_CONNECTIONS_RANGE, MAX_IDLE_STOP_SEC,
    MAX_MESSAGE_BYTES_RANGE, MAX_NAME_LENGTH_RANGE, MAX_OUTPUT_TOKENS_RANGE,
    MAX_SESSIONS_PER_TOKEN_RANGE, MAX_STARTUP_TIMEOUT_SEC, MAX_TOOL_TIMEOUT_SEC, MAX_WAIT_MS,
    PREFIX_ROOM, SEARCH_LIMIT_RANGE, SEARCH_LOADS_RANGE, SESSION_IDLE_SEC_RANGE, is_launcher,
};
pub use error::ConfigError;
pub(crate) use raw::SERVER_KEYS;
pub use server::{AlwaysLoad, OAuthClient, ServerConfig, Share, Start, ToolOverride, Transport};
pub use settings::{ClientEra, ExposureMode, HttpSettings, Settings, TokenSource, TrustMode};

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

    /// The `trust` mode of the server at `index`: its own, else `[settings]`'s.
    pub fn trust(&self, index: usize) -> TrustMode {
        (self.servers.get(index))
            .and_then(|s| s.trust)
            .unwrap_or(self.settings.trust)
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
