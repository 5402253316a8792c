//! One `[mcp_servers.<name>]` table and its `tools.<tool>` subtables, as written. Every key
//! Codex accepts decodes (those meaningless to a proxy are type-checked, then kept only for
//! a log line), so a pasted Codex block loads; anything else is an unknown key with the
//! closest known one.

use toml::Spanned;
use toml::de::DeValue;

use super::super::error::{ConfigError, Source, bare_or_quoted, server_table};
use super::values::{Cx, Key, Value, found, in_file_order};
use super::{RawServer, RawToolOverride, RawTransport};
use crate::config::TrustMode;

/// The keys of a `[mcp_servers.<name>.tools.<tool>]` table: ours, then Codex's.
const TOOL_KEYS: &[&str] = &["description", "title", "approval_mode"];

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
    "share",
    "idle_stop_sec",
    "trust",
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

pub(super) fn decode_server(
    source: &Source<'_>,
    name: &Key<'_>,
    value: &Value<'_>,
) -> Result<RawServer, ConfigError> {
    let cx = Cx::new(source, server_table(name.get_ref()));
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
        transport: RawTransport::default(),
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
        share: None,
        idle_stop_sec: None,
        trust: None,
        tools: Vec::new(),
        ignored: Vec::new(),
    };
    for (key, value) in in_file_order(table) {
        let k = key.get_ref().as_ref();
        let ignore =
            |s: &mut RawServer, k: &'static str| s.ignored.push(Spanned::new(key.span(), k));
        match k {
            "command" => s.transport.command = Some(cx.string(key, value)?),
            "args" => s.transport.args = Some(cx.strings(key, value)?),
            "env" => s.transport.env = Some(cx.pairs(key, value)?),
            "env_vars" => s.transport.env_vars = Some(cx.env_vars(key, value)?),
            "cwd" => s.transport.cwd = Some(cx.string(key, value)?),
            "inherit_env" => s.transport.inherit_env = Some(cx.boolean(key, value)?),
            "url" => s.transport.url = Some(cx.string(key, value)?),
            "bearer_token" => {
                cx.string(key, value)?;
                s.transport.bearer_token = Some(Spanned::new(key.span(), ()));
            }
            "bearer_token_env_var" => {
                s.transport.bearer_token_env_var = Some(cx.string(key, value)?)
            }
            "http_headers" => s.transport.http_headers = Some(cx.pairs(key, value)?),
            "env_http_headers" => s.transport.env_http_headers = Some(cx.pairs(key, value)?),
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
            "share" => s.share = Some(cx.string(key, value)?),
            "idle_stop_sec" => s.idle_stop_sec = Some(cx.seconds(key, value)?),
            "trust" => s.trust = Some(cx.one_of(key, value, &TrustMode::NAMES)?),
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
            "scopes" => s.transport.scopes = Some(cx.strings(key, value)?),
            "oauth_client_id" => s.transport.oauth_client_id = Some(cx.string(key, value)?),
            "oauth_client_secret_env_var" => {
                s.transport.oauth_client_secret_env_var = Some(cx.string(key, value)?)
            }
            "oauth_callback_port" => {
                s.transport.oauth_callback_port = Some(cx.integer(key, value)?)
            }
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
    let cx = Cx::new(
        source,
        format!(
            "{}.tools.{}]",
            table_name.trim_end_matches(']'),
            bare_or_quoted(name.get_ref())
        ),
    );
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
