//! The `[settings]` table and its `[settings.search]` and `[settings.http]` subtables, as
//! written: known keys only, each value of its type. Ranges and modes are `validate`'s.

use super::super::error::{ConfigError, Source};
use super::values::{Cx, Key, Value, in_file_order};
use super::{RawHttp, RawSettings, S};
use crate::config::TrustMode;

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
    "search_loads",
    "search",
    "session_idle_sec",
    "hub",
    "hub_grace_sec",
    "http",
    "trust",
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
const SEARCH_KEYS: &[&str] = &["semantic", "model", "learn"];

pub(super) fn decode_settings(
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
            "search_loads" => settings.search_loads = Some(cx.integer(key, value)?),
            "search" => {
                (
                    settings.search_semantic,
                    settings.search_model,
                    settings.search_learn,
                ) = decode_search(source, key, value)?;
            }
            "session_idle_sec" => settings.session_idle_sec = Some(cx.integer(key, value)?),
            "hub" => settings.hub = Some(cx.boolean(key, value)?),
            "hub_grace_sec" => settings.hub_grace_sec = Some(cx.integer(key, value)?),
            "http" => settings.http = decode_http(source, key, value)?,
            "trust" => settings.trust = Some(cx.one_of(key, value, &TrustMode::NAMES)?),
            other => return Err(cx.unknown(key, other, SETTINGS_KEYS)),
        }
    }
    Ok(settings)
}

/// `[settings.search]` as written: `semantic`, `model`, `learn`.
type SearchKeys = (Option<S<String>>, Option<S<String>>, Option<S<String>>);

/// The `[settings.search]` table: `semantic`, `model` and `learn`.
fn decode_search(
    source: &Source<'_>,
    key: &Key<'_>,
    value: &Value<'_>,
) -> Result<SearchKeys, ConfigError> {
    let (cx, table) = Cx::open(source, "[settings.search]", key, value)?;
    let (mut semantic, mut model, mut learn) = (None, None, None);
    for (key, value) in in_file_order(table) {
        match key.get_ref().as_ref() {
            "semantic" => semantic = Some(cx.string(key, value)?),
            "model" => model = Some(cx.string(key, value)?),
            "learn" => {
                let modes = crate::search::usage::Learn::NAMES;
                learn = Some(cx.boolean_or_one_of(key, value, &modes)?);
            }
            other => return Err(cx.unknown(key, other, SEARCH_KEYS)),
        }
    }
    Ok((semantic, model, learn))
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
