//! The file as written: each key checked against the keys we know and each value against
//! its type, kept with its span for error lines. Nothing is expanded, resolved or judged
//! against other keys here; `validate` does that on these shapes. The TOML is read through
//! `toml::de::DeTable` rather than serde derive so that every message can name the table,
//! the key, the line and the fix (serde's own messages know only the field).
//!
//! This file holds the raw shapes and the top level; `settings` and `server` decode their
//! tables, `values` reads one typed value with its span.

use toml::Spanned;
use toml::de::DeTable;

use super::error::{ConfigError, Source};
use server::decode_server;
use settings::decode_settings;
use values::{Cx, Key, Value, in_file_order};

mod server;
mod settings;
mod values;

pub(crate) use server::SERVER_KEYS;

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
    pub search_loads: Option<S<i64>>,
    /// `[settings.search] semantic`.
    pub search_semantic: Option<S<String>>,
    /// `[settings.search] model`.
    pub search_model: Option<S<String>>,
    /// `[settings.search] learn`: `"true"`, `"false"`, or a mode's name.
    pub search_learn: Option<S<String>>,
    pub session_idle_sec: Option<S<i64>>,
    pub hub: Option<S<bool>>,
    pub hub_grace_sec: Option<S<i64>>,
    pub http: RawHttp,
    pub trust: Option<S<String>>,
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

pub(super) enum RawAlwaysLoad {
    Bool(bool),
    Tools(Vec<S<String>>),
}

/// The keys of a server table that say how it is reached (`command` or `url`), kept
/// together so `validate` checks them as one transport.
#[derive(Default)]
pub(super) struct RawTransport {
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
}

/// One `[mcp_servers.<name>]` table. Keys in Codex's order, then ours, then the Codex keys
/// we accept and ignore.
pub(super) struct RawServer {
    /// The table name, spanned where it is written in the header.
    pub name: S<String>,
    /// How the server is reached: `command` or `url` and the keys of each.
    pub transport: RawTransport,
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
    /// `share = "shared" | "session"`.
    pub share: Option<S<String>>,
    /// Ours: stop the server after this long without a call.
    pub idle_stop_sec: Option<S<f64>>,
    /// Ours: `"pin"`, `"warn"` or `"off"` (checked as written).
    pub trust: Option<S<String>>,
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
        let cx = Cx::new(source, "top level:".to_owned());
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
    let cx = Cx::new(source, format!("[profiles.{}]", name.get_ref()));
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
