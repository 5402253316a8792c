//! The file as written: each key checked against the keys we know and each value against
//! its type, kept with its span for error lines. Nothing is expanded, resolved or judged
//! against other keys here; `validate` does that on these shapes. The TOML is read through
//! `toml::de::DeTable` rather than serde derive so that every message can name the table,
//! the key, the line and the fix (serde's own messages know only the field).

use std::ops::Range;

use serde::Deserialize;
use toml::Spanned;
use toml::de::{DeTable, DeValue};

use super::error::{ConfigError, Source, server_table};
use crate::suggest;

/// A value with the span of its key (or, for array elements, of the element itself).
pub(super) type S<T> = Spanned<T>;
/// `NAME = "value"` pairs in file order, each side with its span.
pub(super) type Pairs = Vec<(S<String>, S<String>)>;

pub(super) struct RawFile {
    pub settings: RawSettings,
    pub servers: Vec<RawServer>,
    pub profiles: Vec<RawProfile>,
}

/// One `[profiles.<name>]` table.
pub(super) struct RawProfile {
    pub name: S<String>,
    pub servers: Option<S<Vec<S<String>>>>,
    pub allow_tools: Option<S<Vec<S<String>>>>,
    pub deny_tools: Option<S<Vec<S<String>>>>,
}

#[derive(Default)]
pub(super) struct RawSettings {
    pub exposure: Option<S<String>>,
    pub max_name_length: Option<S<i64>>,
    pub search_limit: Option<S<i64>>,
    pub core_wait_ms: Option<S<i64>>,
    pub relist_wait_ms: Option<S<i64>>,
    pub claude_always_load: Option<S<bool>>,
    pub inherit_env: Option<S<bool>>,
    pub max_message_bytes: Option<S<i64>>,
    pub max_output_tokens: Option<S<i64>>,
    pub client_era: Option<S<String>>,
    /// `[settings.search] semantic`.
    pub search_semantic: Option<S<String>>,
    /// `[settings.search] model`.
    pub search_model: Option<S<String>>,
    pub session_idle_sec: Option<S<i64>>,
    pub http: RawHttp,
}

/// The `[settings.http]` table: how `serve --http` admits clients.
#[derive(Default)]
pub(super) struct RawHttp {
    pub tokens_env: Option<S<String>>,
    pub token_file: Option<S<String>>,
    pub allowed_origins: Option<S<Vec<S<String>>>>,
    pub allowed_hosts: Option<S<Vec<S<String>>>>,
    pub max_concurrent_requests: Option<S<i64>>,
    pub header_timeout_sec: Option<S<i64>>,
    pub body_timeout_sec: Option<S<i64>>,
    pub max_connections: Option<S<i64>>,
    pub max_sessions_per_token: Option<S<i64>>,
}

/// One `[mcp_servers.<name>.tools.<tool>]` table.
pub(super) struct RawToolOverride {
    /// The tool's name as the server lists it, spanned where it is written.
    pub name: S<String>,
    pub description: Option<S<String>>,
    pub title: Option<S<String>>,
}

/// The keys of a `[mcp_servers.<name>.tools.<tool>]` table: ours, then Codex's.
const TOOL_KEYS: &[&str] = &["description", "title", "approval_mode"];

pub(super) enum RawAlwaysLoad {
    Bool(bool),
    Tools(Vec<S<String>>),
}

/// One `[mcp_servers.<name>]` table. Keys in Codex's order, then ours, then the Codex keys
/// we accept and ignore.
pub(super) struct RawServer {
    /// The table name, spanned where it is written in the header.
    pub name: S<String>,
    pub command: Option<S<String>>,
    pub args: Option<S<Vec<S<String>>>>,
    pub env: Option<S<Pairs>>,
    /// Codex allows `"NAME"` or `{ name = "NAME", source = "local" | "remote" }`; we keep
    /// the names.
    pub env_vars: Option<S<Vec<S<String>>>>,
    pub cwd: Option<S<String>>,
    /// Ours: pass mcp-defer's whole environment instead of Codex's default set.
    pub inherit_env: Option<S<bool>>,
    pub url: Option<S<String>>,
    /// Codex rejects an inline token in every transport; so do we, with the fix.
    pub bearer_token: Option<S<()>>,
    pub bearer_token_env_var: Option<S<String>>,
    pub http_headers: Option<S<Pairs>>,
    /// Header name → name of the environment variable holding its value.
    pub env_http_headers: Option<S<Pairs>>,
    /// Codex's OAuth scopes to ask for at `mcp-defer login` (else the server's own).
    pub scopes: Option<S<Vec<S<String>>>>,
    /// Ours: a client registered with the authorization server beforehand, for servers
    /// without dynamic client registration.
    pub oauth_client_id: Option<S<String>>,
    /// Ours: the variable holding that client's secret (never the secret inline).
    pub oauth_client_secret_env_var: Option<S<String>>,
    /// Ours: the fixed loopback port of the login's redirect URI
    /// (`http://localhost:<port>/callback`, as Claude Code's `callbackPort`), for a client
    /// registered with that redirect.
    pub oauth_callback_port: Option<S<i64>>,
    pub enabled: Option<S<bool>>,
    pub required: Option<S<bool>>,
    pub startup_timeout_sec: Option<S<f64>>,
    /// Codex's legacy alias; `startup_timeout_sec` wins when both are set (as in Codex).
    pub startup_timeout_ms: Option<S<i64>>,
    pub tool_timeout_sec: Option<S<f64>>,
    pub enabled_tools: Option<S<Vec<S<String>>>>,
    pub disabled_tools: Option<S<Vec<S<String>>>>,
    pub description: Option<S<String>>,
    pub prefix: Option<S<String>>,
    pub always_load: Option<S<RawAlwaysLoad>>,
    pub search_hints: Option<S<Vec<S<String>>>>,
    pub max_output_tokens: Option<S<i64>>,
    /// Ours: `"eager"` (the default) or `"lazy"`.
    pub start: Option<S<String>>,
    /// Ours: stop the server after this long without a call.
    pub idle_stop_sec: Option<S<f64>>,
    /// `[mcp_servers.<name>.tools.<tool>]` tables, in file order: ours (`description`,
    /// `title`) and Codex's (`approval_mode`, type-checked and ignored).
    pub tools: Vec<RawToolOverride>,
    /// Codex keys that mean nothing to a proxy (approval modes, OAuth login, remote
    /// environments, display name). Type-checked so a broken block is still caught, then
    /// ignored; kept for a log line.
    pub ignored: Vec<S<&'static str>>,
}

const TOP_KEYS: &[&str] = &["mcp_servers", "settings", "profiles"];

const PROFILE_KEYS: &[&str] = &["servers", "allow_tools", "deny_tools"];

const SETTINGS_KEYS: &[&str] = &[
    "exposure",
    "max_name_length",
    "search_limit",
    "core_wait_ms",
    "relist_wait_ms",
    "claude_always_load",
    "inherit_env",
    "max_message_bytes",
    "max_output_tokens",
    "client_era",
    "search",
    "session_idle_sec",
    "http",
];

const HTTP_KEYS: &[&str] = &[
    "tokens_env",
    "token_file",
    "allowed_origins",
    "allowed_hosts",
    "max_concurrent_requests",
    "header_timeout_sec",
    "body_timeout_sec",
    "max_connections",
    "max_sessions_per_token",
];

/// Keys of `[settings.search]`.
const SEARCH_KEYS: &[&str] = &["semantic", "model"];

/// The keys to use in a server table: Codex's, then ours.
pub(crate) const SERVER_KEYS: &[&str] = &[
    "command",
    "args",
    "env",
    "env_vars",
    "cwd",
    "url",
    "bearer_token_env_var",
    "http_headers",
    "env_http_headers",
    "scopes",
    "oauth_client_id",
    "oauth_client_secret_env_var",
    "oauth_callback_port",
    "enabled",
    "required",
    "startup_timeout_sec",
    "startup_timeout_ms",
    "tool_timeout_sec",
    "enabled_tools",
    "disabled_tools",
    "description",
    "prefix",
    "always_load",
    "search_hints",
    "inherit_env",
    "max_output_tokens",
    "start",
    "idle_stop_sec",
    "tools",
];

/// Codex keys we accept (`bearer_token` only to reject it with the fix); offered by "did
/// you mean" but not listed among the keys to use.
const CODEX_ONLY_KEYS: &[&str] = &[
    "bearer_token",
    "experimental_environment",
    "supports_parallel_tool_calls",
    "default_tools_approval_mode",
    "oauth",
    "oauth_resource",
    "name",
];

/// The raw shapes of `text`, or the first problem in file order.
pub(super) fn decode(text: &str, source: &Source<'_>) -> Result<RawFile, ConfigError> {
    let document = DeTable::parse(text).map_err(|e| {
        // `message()` only: the error's Display quotes the offending line, which may hold a
        // secret.
        let span = e.span().unwrap_or(0..0);
        source.error(
            span,
            format!(
                "TOML syntax error: {}; fix the syntax on this line",
                e.message()
            ),
        )
    })?;
    let mut file = RawFile {
        settings: RawSettings::default(),
        servers: Vec::new(),
        profiles: Vec::new(),
    };
    for (key, value) in in_file_order(document.get_ref()) {
        let cx = Cx {
            source,
            table: "top level:".to_owned(),
        };
        match key.get_ref().as_ref() {
            "settings" => file.settings = decode_settings(source, key, value)?,
            "mcp_servers" => {
                let servers = cx.table(key, value, "write servers as `[mcp_servers.<name>]`")?;
                for (name, server) in in_file_order(servers) {
                    file.servers.push(decode_server(source, name, server)?);
                }
            }
            "profiles" => {
                let profiles = cx.table(key, value, "write profiles as `[profiles.<name>]`")?;
                for (name, profile) in in_file_order(profiles) {
                    file.profiles.push(decode_profile(source, name, profile)?);
                }
            }
            other => return Err(cx.unknown(key, other, TOP_KEYS)),
        }
    }
    Ok(file)
}

fn decode_profile(
    source: &Source<'_>,
    name: &Key<'_>,
    value: &Value<'_>,
) -> Result<RawProfile, ConfigError> {
    let cx = Cx {
        source,
        table: format!("[profiles.{}]", name.get_ref()),
    };
    let table = cx.table(
        name,
        value,
        "write `servers = [...]` under `[profiles.<name>]`",
    )?;
    let mut profile = RawProfile {
        name: Spanned::new(name.span(), name.get_ref().to_string()),
        servers: None,
        allow_tools: None,
        deny_tools: None,
    };
    for (key, value) in in_file_order(table) {
        match key.get_ref().as_ref() {
            "servers" => profile.servers = Some(cx.strings(key, value)?),
            "allow_tools" => profile.allow_tools = Some(cx.strings(key, value)?),
            "deny_tools" => profile.deny_tools = Some(cx.strings(key, value)?),
            other => return Err(cx.unknown(key, other, PROFILE_KEYS)),
        }
    }
    Ok(profile)
}

fn decode_settings(
    source: &Source<'_>,
    key: &Key<'_>,
    value: &Value<'_>,
) -> Result<RawSettings, ConfigError> {
    let (cx, table) = Cx::open(source, "[settings]", key, value)?;
    let mut settings = RawSettings::default();
    for (key, value) in in_file_order(table) {
        match key.get_ref().as_ref() {
            "exposure" => settings.exposure = Some(cx.string(key, value)?),
            "max_name_length" => settings.max_name_length = Some(cx.integer(key, value)?),
            "search_limit" => settings.search_limit = Some(cx.integer(key, value)?),
            "core_wait_ms" => settings.core_wait_ms = Some(cx.integer(key, value)?),
            "relist_wait_ms" => settings.relist_wait_ms = Some(cx.integer(key, value)?),
            "claude_always_load" => settings.claude_always_load = Some(cx.boolean(key, value)?),
            "inherit_env" => settings.inherit_env = Some(cx.boolean(key, value)?),
            "max_message_bytes" => settings.max_message_bytes = Some(cx.integer(key, value)?),
            "max_output_tokens" => settings.max_output_tokens = Some(cx.integer(key, value)?),
            "client_era" => settings.client_era = Some(cx.string(key, value)?),
            "search" => {
                (settings.search_semantic, settings.search_model) =
                    decode_search(source, key, value)?;
            }
            "session_idle_sec" => settings.session_idle_sec = Some(cx.integer(key, value)?),
            "http" => settings.http = decode_http(source, key, value)?,
            other => return Err(cx.unknown(key, other, SETTINGS_KEYS)),
        }
    }
    Ok(settings)
}

/// `[settings.search]` as written: `semantic`, `model`.
type SearchKeys = (Option<S<String>>, Option<S<String>>);

/// The `[settings.search]` table: `semantic` and `model`.
fn decode_search(
    source: &Source<'_>,
    key: &Key<'_>,
    value: &Value<'_>,
) -> Result<SearchKeys, ConfigError> {
    let (cx, table) = Cx::open(source, "[settings.search]", key, value)?;
    let (mut semantic, mut model) = (None, None);
    for (key, value) in in_file_order(table) {
        match key.get_ref().as_ref() {
            "semantic" => semantic = Some(cx.string(key, value)?),
            "model" => model = Some(cx.string(key, value)?),
            other => return Err(cx.unknown(key, other, SEARCH_KEYS)),
        }
    }
    Ok((semantic, model))
}

fn decode_http(
    source: &Source<'_>,
    key: &Key<'_>,
    value: &Value<'_>,
) -> Result<RawHttp, ConfigError> {
    let (cx, table) = Cx::open(source, "[settings.http]", key, value)?;
    let mut http = RawHttp::default();
    for (key, value) in in_file_order(table) {
        match key.get_ref().as_ref() {
            "tokens_env" => http.tokens_env = Some(cx.string(key, value)?),
            "token_file" => http.token_file = Some(cx.string(key, value)?),
            "allowed_origins" => http.allowed_origins = Some(cx.strings(key, value)?),
            "allowed_hosts" => http.allowed_hosts = Some(cx.strings(key, value)?),
            "max_concurrent_requests" => {
                http.max_concurrent_requests = Some(cx.integer(key, value)?)
            }
            "header_timeout_sec" => http.header_timeout_sec = Some(cx.integer(key, value)?),
            "body_timeout_sec" => http.body_timeout_sec = Some(cx.integer(key, value)?),
            "max_connections" => http.max_connections = Some(cx.integer(key, value)?),
            "max_sessions_per_token" => http.max_sessions_per_token = Some(cx.integer(key, value)?),
            other => return Err(cx.unknown(key, other, HTTP_KEYS)),
        }
    }
    Ok(http)
}

fn decode_server(
    source: &Source<'_>,
    name: &Key<'_>,
    value: &Value<'_>,
) -> Result<RawServer, ConfigError> {
    let cx = Cx {
        source,
        table: server_table(name.get_ref()),
    };
    let table = match value.get_ref() {
        DeValue::Table(table) => table,
        other => {
            return Err(cx.at(
                name.span(),
                None,
                format!(
                    "must be a table, not {}; write the server as a table with `command` or `url`",
                    found(other)
                ),
            ));
        }
    };
    let mut s = RawServer {
        name: Spanned::new(name.span(), name.get_ref().to_string()),
        command: None,
        args: None,
        env: None,
        env_vars: None,
        cwd: None,
        inherit_env: None,
        url: None,
        bearer_token: None,
        bearer_token_env_var: None,
        http_headers: None,
        env_http_headers: None,
        scopes: None,
        oauth_client_id: None,
        oauth_client_secret_env_var: None,
        oauth_callback_port: None,
        enabled: None,
        required: None,
        startup_timeout_sec: None,
        startup_timeout_ms: None,
        tool_timeout_sec: None,
        enabled_tools: None,
        disabled_tools: None,
        description: None,
        prefix: None,
        always_load: None,
        search_hints: None,
        max_output_tokens: None,
        start: None,
        idle_stop_sec: None,
        tools: Vec::new(),
        ignored: Vec::new(),
    };
    for (key, value) in in_file_order(table) {
        let k = key.get_ref().as_ref();
        let ignore =
            |s: &mut RawServer, k: &'static str| s.ignored.push(Spanned::new(key.span(), k));
        match k {
            "command" => s.command = Some(cx.string(key, value)?),
            "args" => s.args = Some(cx.strings(key, value)?),
            "env" => s.env = Some(cx.pairs(key, value)?),
            "env_vars" => s.env_vars = Some(cx.env_vars(key, value)?),
            "cwd" => s.cwd = Some(cx.string(key, value)?),
            "inherit_env" => s.inherit_env = Some(cx.boolean(key, value)?),
            "url" => s.url = Some(cx.string(key, value)?),
            "bearer_token" => {
                cx.string(key, value)?;
                s.bearer_token = Some(Spanned::new(key.span(), ()));
            }
            "bearer_token_env_var" => s.bearer_token_env_var = Some(cx.string(key, value)?),
            "http_headers" => s.http_headers = Some(cx.pairs(key, value)?),
            "env_http_headers" => s.env_http_headers = Some(cx.pairs(key, value)?),
            "enabled" => s.enabled = Some(cx.boolean(key, value)?),
            "required" => s.required = Some(cx.boolean(key, value)?),
            "startup_timeout_sec" => s.startup_timeout_sec = Some(cx.seconds(key, value)?),
            "startup_timeout_ms" => s.startup_timeout_ms = Some(cx.integer(key, value)?),
            "tool_timeout_sec" => s.tool_timeout_sec = Some(cx.seconds(key, value)?),
            "enabled_tools" => s.enabled_tools = Some(cx.strings(key, value)?),
            "disabled_tools" => s.disabled_tools = Some(cx.strings(key, value)?),
            "description" => s.description = Some(cx.string(key, value)?),
            "prefix" => s.prefix = Some(cx.string(key, value)?),
            "always_load" => s.always_load = Some(cx.always_load(key, value)?),
            // One hint as a string, or several as a list.
            "search_hints" => s.search_hints = Some(cx.string_or_strings(key, value)?),
            "max_output_tokens" => s.max_output_tokens = Some(cx.integer(key, value)?),
            "start" => s.start = Some(cx.string(key, value)?),
            "idle_stop_sec" => s.idle_stop_sec = Some(cx.seconds(key, value)?),
            "experimental_environment" => {
                cx.string(key, value)?;
                ignore(&mut s, "experimental_environment");
            }
            "oauth_resource" => {
                cx.string(key, value)?;
                ignore(&mut s, "oauth_resource");
            }
            "name" => {
                cx.string(key, value)?;
                ignore(&mut s, "name");
            }
            "supports_parallel_tool_calls" => {
                cx.boolean(key, value)?;
                ignore(&mut s, "supports_parallel_tool_calls");
            }
            "default_tools_approval_mode" => {
                cx.one_of(key, value, &["auto", "prompt", "approve"])?;
                ignore(&mut s, "default_tools_approval_mode");
            }
            "scopes" => s.scopes = Some(cx.strings(key, value)?),
            "oauth_client_id" => s.oauth_client_id = Some(cx.string(key, value)?),
            "oauth_client_secret_env_var" => {
                s.oauth_client_secret_env_var = Some(cx.string(key, value)?)
            }
            "oauth_callback_port" => s.oauth_callback_port = Some(cx.integer(key, value)?),
            "oauth" => {
                cx.table(key, value, "write `oauth = { client_id = \"...\" }`")?;
                ignore(&mut s, "oauth");
            }
            "tools" => {
                let tools = cx.table(key, value, "write `[mcp_servers.<name>.tools.<tool>]`")?;
                for (tool, table) in in_file_order(tools) {
                    s.tools
                        .push(decode_tool(source, name.get_ref(), tool, table)?);
                }
            }
            "type" | "transport" => {
                return Err(cx.at(
                    key.span(),
                    Some(k),
                    "is not needed: a server with `url` is an HTTP server and one with `command` \
                     is a stdio server; remove this key"
                        .to_owned(),
                ));
            }
            other => {
                let all: Vec<&str> = SERVER_KEYS.iter().chain(CODEX_ONLY_KEYS).copied().collect();
                return Err(cx.unknown_among(key, other, &all, SERVER_KEYS));
            }
        }
    }
    Ok(s)
}

/// One `[mcp_servers.<server>.tools.<tool>]` table: unknown keys are errors, as everywhere.
fn decode_tool(
    source: &Source<'_>,
    server: &str,
    name: &Key<'_>,
    value: &Value<'_>,
) -> Result<RawToolOverride, ConfigError> {
    let table_name = server_table(server);
    let cx = Cx {
        source,
        table: format!(
            "{}.tools.{}]",
            table_name.trim_end_matches(']'),
            super::error::bare_or_quoted(name.get_ref())
        ),
    };
    let DeValue::Table(table) = value.get_ref() else {
        return Err(cx.at(
            name.span(),
            None,
            format!(
                "must be a table, not {}; write `description = \"...\"` or `title = \"...\"` \
                 under it",
                found(value.get_ref())
            ),
        ));
    };
    let mut tool = RawToolOverride {
        name: Spanned::new(name.span(), name.get_ref().to_string()),
        description: None,
        title: None,
    };
    for (key, value) in in_file_order(table) {
        match key.get_ref().as_ref() {
            "description" => tool.description = Some(cx.string(key, value)?),
            "title" => tool.title = Some(cx.string(key, value)?),
            // Codex's per-tool approval; nothing to approve in a proxy.
            "approval_mode" => {
                cx.one_of(key, value, &["auto", "prompt", "approve"])?;
            }
            other => return Err(cx.unknown(key, other, TOOL_KEYS)),
        }
    }
    Ok(tool)
}

/// Table entries sorted by where their key is written, so servers keep file order (the
/// parser's map is sorted by name) and the first error reported is the first in the file.
fn in_file_order<'t, 'i>(table: &'t DeTable<'i>) -> Vec<(&'t Key<'i>, &'t Value<'i>)> {
    let mut entries: Vec<_> = table.iter().collect();
    entries.sort_by_key(|(key, _)| key.span().start);
    entries
}

/// "a string", "an array", ... for "found ..." in type errors.
fn found(value: &DeValue<'_>) -> &'static str {
    match value {
        DeValue::String(_) => "a string",
        DeValue::Integer(_) => "an integer",
        DeValue::Float(_) => "a float",
        DeValue::Boolean(_) => "a boolean",
        DeValue::Datetime(_) => "a datetime",
        DeValue::Array(_) => "an array",
        DeValue::Table(_) => "a table",
    }
}

type Key<'i> = S<std::borrow::Cow<'i, str>>;
type Value<'i> = S<DeValue<'i>>;

/// Decoding context: where messages point and which table they name.
struct Cx<'s, 'p> {
    source: &'s Source<'p>,
    /// `[settings]`, `[mcp_servers.docs]` or `top level`.
    table: String,
}

impl<'s, 'p> Cx<'s, 'p> {
    /// The context of the table `name` (`[settings.http]`) written at `key`, and the table.
    fn open<'t, 'i>(
        source: &'s Source<'p>,
        name: &str,
        key: &Key<'_>,
        value: &'t Value<'i>,
    ) -> Result<(Self, &'t DeTable<'i>), ConfigError> {
        let cx = Cx {
            source,
            table: name.to_owned(),
        };
        let table = cx.table(key, value, &format!("write `{name}` above its keys"))?;
        Ok((cx, table))
    }

    /// `{table} `{key}`: {message}` at `span`.
    fn at(&self, span: Range<usize>, key: Option<&str>, message: String) -> ConfigError {
        let message = match key {
            Some(key) => format!("{} `{key}` {message}", self.table),
            None => format!("{} {message}", self.table),
        };
        self.source.error(span, message)
    }

    fn type_error(
        &self,
        key: &Key<'_>,
        value: &Value<'_>,
        expected: &str,
        example: &str,
    ) -> ConfigError {
        self.at(
            key.span(),
            Some(key.get_ref()),
            format!(
                "must be {expected}, not {}; write `{} = {example}`",
                found(value.get_ref()),
                key.get_ref()
            ),
        )
    }

    fn unknown(&self, key: &Key<'_>, name: &str, known: &[&str]) -> ConfigError {
        self.unknown_among(key, name, known, known)
    }

    /// An unknown key: the closest of `known` if one is close, else the `listed` keys.
    fn unknown_among(
        &self,
        key: &Key<'_>,
        name: &str,
        known: &[&str],
        listed: &[&str],
    ) -> ConfigError {
        let fix = match suggest::did_you_mean(name, known) {
            Some(candidate) => format!("did you mean `{candidate}`?"),
            None => format!(
                "remove it; valid keys here: {}",
                listed
                    .iter()
                    .map(|k| format!("`{k}`"))
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        };
        self.at(key.span(), None, format!("unknown key `{name}`: {fix}"))
    }

    fn table<'t, 'i>(
        &self,
        key: &Key<'_>,
        value: &'t Value<'i>,
        fix: &str,
    ) -> Result<&'t DeTable<'i>, ConfigError> {
        match value.get_ref() {
            DeValue::Table(table) => Ok(table),
            other => Err(self.at(
                key.span(),
                Some(key.get_ref()),
                format!("must be a table, not {}; {fix}", found(other)),
            )),
        }
    }

    fn string(&self, key: &Key<'_>, value: &Value<'_>) -> Result<S<String>, ConfigError> {
        match value.get_ref() {
            DeValue::String(s) => Ok(Spanned::new(key.span(), s.to_string())),
            _ => Err(self.type_error(key, value, "a string", "\"...\"")),
        }
    }

    fn one_of(
        &self,
        key: &Key<'_>,
        value: &Value<'_>,
        valid: &[&str],
    ) -> Result<S<String>, ConfigError> {
        let s = self.string(key, value)?;
        if valid.contains(&s.get_ref().as_str()) {
            return Ok(s);
        }
        Err(self.at(
            key.span(),
            Some(key.get_ref()),
            format!(
                "is {:?}, but must be one of {}{}",
                s.get_ref(),
                valid
                    .iter()
                    .map(|v| format!("\"{v}\""))
                    .collect::<Vec<_>>()
                    .join(", "),
                suggest::hint(s.get_ref(), valid)
            ),
        ))
    }

    fn boolean(&self, key: &Key<'_>, value: &Value<'_>) -> Result<S<bool>, ConfigError> {
        match value.get_ref() {
            DeValue::Boolean(b) => Ok(Spanned::new(key.span(), *b)),
            _ => Err(self.type_error(key, value, "`true` or `false`", "true")),
        }
    }

    fn integer(&self, key: &Key<'_>, value: &Value<'_>) -> Result<S<i64>, ConfigError> {
        let parsed = match value.get_ref() {
            DeValue::Integer(_) => {
                i64::deserialize(toml::de::ValueDeserializer::from(value.clone())).ok()
            }
            _ => None,
        };
        parsed
            .map(|n| Spanned::new(key.span(), n))
            .ok_or_else(|| self.type_error(key, value, "a whole number", "1000"))
    }

    /// A number of seconds: TOML integers count too (`startup_timeout_sec = 20`), as in
    /// Codex. Range checks are `validate`'s.
    fn seconds(&self, key: &Key<'_>, value: &Value<'_>) -> Result<S<f64>, ConfigError> {
        let parsed = match value.get_ref() {
            DeValue::Integer(_) | DeValue::Float(_) => {
                f64::deserialize(toml::de::ValueDeserializer::from(value.clone())).ok()
            }
            _ => None,
        };
        parsed
            .map(|n| Spanned::new(key.span(), n))
            .ok_or_else(|| self.type_error(key, value, "a number of seconds", "30"))
    }

    fn strings(&self, key: &Key<'_>, value: &Value<'_>) -> Result<S<Vec<S<String>>>, ConfigError> {
        let DeValue::Array(array) = value.get_ref() else {
            return Err(self.type_error(key, value, "an array of strings", "[\"...\"]"));
        };
        let items = array
            .iter()
            .enumerate()
            .map(|(i, item)| match item.get_ref() {
                DeValue::String(s) => Ok(Spanned::new(item.span(), s.to_string())),
                other => Err(self.at(
                    item.span(),
                    Some(key.get_ref()),
                    format!(
                        "must be an array of strings, but item {} is {}; quote it",
                        i + 1,
                        found(other)
                    ),
                )),
            })
            .collect::<Result<_, _>>()?;
        Ok(Spanned::new(key.span(), items))
    }

    /// One string or an array of strings (`search_hints = "..."` or `[...]`).
    fn string_or_strings(
        &self,
        key: &Key<'_>,
        value: &Value<'_>,
    ) -> Result<S<Vec<S<String>>>, ConfigError> {
        match value.get_ref() {
            DeValue::String(s) => Ok(Spanned::new(
                key.span(),
                vec![Spanned::new(value.span(), s.to_string())],
            )),
            DeValue::Array(_) => self.strings(key, value),
            _ => Err(self.type_error(key, value, "a string or an array of strings", "\"...\"")),
        }
    }

    /// A table of strings, such as `env = { NAME = "value" }`.
    fn pairs(&self, key: &Key<'_>, value: &Value<'_>) -> Result<S<Pairs>, ConfigError> {
        let DeValue::Table(table) = value.get_ref() else {
            return Err(self.type_error(key, value, "a table of strings", "{ NAME = \"value\" }"));
        };
        let pairs = in_file_order(table)
            .into_iter()
            .map(|(name, item)| match item.get_ref() {
                DeValue::String(s) => Ok((
                    Spanned::new(name.span(), name.get_ref().to_string()),
                    Spanned::new(name.span(), s.to_string()),
                )),
                other => Err(self.at(
                    name.span(),
                    Some(&format!("{}.{}", key.get_ref(), name.get_ref())),
                    format!("must be a string, not {}; quote the value", found(other)),
                )),
            })
            .collect::<Result<_, _>>()?;
        Ok(Spanned::new(key.span(), pairs))
    }

    /// Codex's `env_vars`: names, or `{ name = "NAME", source = "local" | "remote" }`.
    fn env_vars(&self, key: &Key<'_>, value: &Value<'_>) -> Result<S<Vec<S<String>>>, ConfigError> {
        let example = "[\"NAME\"] or [{ name = \"NAME\", source = \"local\" }]";
        let DeValue::Array(array) = value.get_ref() else {
            return Err(self.type_error(key, value, "an array of variable names", example));
        };
        let mut names = Vec::new();
        for item in array.iter() {
            let bad = |what: &str| {
                self.at(
                    item.span(),
                    Some(key.get_ref()),
                    format!("has {what}; write `{} = {example}`", key.get_ref()),
                )
            };
            let name = match item.get_ref() {
                DeValue::String(s) => s.to_string(),
                DeValue::Table(t) => {
                    for (k, v) in t.iter() {
                        match (k.get_ref().as_ref(), v.get_ref()) {
                            ("name", DeValue::String(_)) => {}
                            ("source", DeValue::String(s)) if s == "local" || s == "remote" => {}
                            ("source", _) => {
                                return Err(bad(
                                    "an item whose `source` is not \"local\" or \"remote\"",
                                ));
                            }
                            (other, _) => {
                                return Err(bad(&format!(
                                    "an item with `{other}`, which is not `name` or `source`"
                                )));
                            }
                        }
                    }
                    match t.get("name").and_then(|v| v.get_ref().as_str()) {
                        Some(name) => name.to_owned(),
                        None => return Err(bad("an item without a string `name`")),
                    }
                }
                other => return Err(bad(&format!("an item that is {}", found(other)))),
            };
            names.push(Spanned::new(item.span(), name));
        }
        Ok(Spanned::new(key.span(), names))
    }

    fn always_load(
        &self,
        key: &Key<'_>,
        value: &Value<'_>,
    ) -> Result<S<RawAlwaysLoad>, ConfigError> {
        match value.get_ref() {
            DeValue::Boolean(b) => Ok(Spanned::new(key.span(), RawAlwaysLoad::Bool(*b))),
            DeValue::Array(_) => {
                let tools = self.strings(key, value)?;
                Ok(Spanned::new(
                    key.span(),
                    RawAlwaysLoad::Tools(tools.into_inner()),
                ))
            }
            _ => Err(self.type_error(
                key,
                value,
                "`true`, `false` or an array of tool names",
                "[\"tool\", ...]",
            )),
        }
    }
}
