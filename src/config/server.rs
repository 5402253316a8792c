//! One validated `[mcp_servers.<name>]` table: how to reach the server and what of its tools
//! to show. Secrets (env values, tokens, header values, the OAuth client secret) live inside
//! and never reach a log line: the `Debug` impls here print names only.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Duration;

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
    /// `share`: whether one process may serve every session of the hub.
    pub share: Share,
    /// `idle_stop_sec`: stopped after this long without a call, started again by the next.
    pub idle_stop: Option<Duration>,
    /// `trust = ...` for this server; `None`: `[settings]`'s.
    pub trust: Option<super::TrustMode>,
}

/// `share = "shared" | "session"` (docs/design.md section 21).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Share {
    /// One process serves every session of the hub: requests it sends its client during a
    /// call reach the session of the call; it is offered no roots.
    Shared,
    /// Its client is one session (its roots, requests outside a call): the sessions of a
    /// config with such a server run alone, each with its own servers, not through the hub.
    Session,
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
