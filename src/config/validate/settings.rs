//! The `[settings]` table: each key parsed to its mode or checked against its named range
//! (the ranges and their reasons are constants in `config`), with the default when absent.
//! `[settings.search] model` is in `model`, `[settings.http]` in `http_settings`.

use std::ops::RangeInclusive;
use std::time::Duration;

use super::super::error::{ConfigError, Source};
use super::super::raw::{RawSettings, S};
use super::super::{
    ClientEra, ExposureMode, HUB_GRACE_SEC_RANGE, MAX_MESSAGE_BYTES_RANGE, MAX_NAME_LENGTH_RANGE,
    MAX_OUTPUT_TOKENS_RANGE, MAX_WAIT_MS, SEARCH_LIMIT_RANGE, SEARCH_LOADS_RANGE,
    SESSION_IDLE_SEC_RANGE, Settings, TrustMode,
};
use super::Env;
use super::http_settings::build_http;
use super::model::build_model;
use crate::search::Semantic;
use crate::search::usage::Learn;
use crate::suggest;

pub(super) fn build_settings(
    raw: RawSettings,
    source: &Source<'_>,
    env: Env<'_>,
) -> Result<Settings, ConfigError> {
    let RawSettings {
        exposure,
        max_name_length,
        search_limit,
        core_wait_ms,
        relist_wait_ms,
        claude_always_load,
        inherit_env,
        max_message_bytes,
        max_output_tokens,
        client_era,
        search_loads,
        search_semantic,
        search_model,
        search_learn,
        session_idle_sec,
        hub,
        hub_grace_sec,
        http,
        trust,
    } = raw;
    let defaults = Settings::default();
    let in_range = |value: Option<S<i64>>, key: &str, range, why: &str, example| {
        setting_in_range(source, value, key, range, why, example)
    };
    let exposure = exposure
        .map(|value| parse_exposure(value, source))
        .transpose()?
        .unwrap_or(defaults.exposure);
    let client_era = client_era
        .map(|value| parse_client_era(value, source))
        .transpose()?
        .unwrap_or(defaults.client_era);
    let semantic_span = search_semantic.as_ref().map(S::span);
    let semantic = search_semantic
        .map(|value| parse_semantic(value, source))
        .transpose()?
        .unwrap_or(defaults.semantic);
    let model = build_model(semantic, semantic_span, search_model, source, env)?;
    let wait = |value: Option<S<i64>>, key: &str, default: Duration| {
        in_range(
            value,
            key,
            0..=MAX_WAIT_MS,
            "milliseconds; a longer hold looks like a hung call",
            default.as_millis(),
        )
        .map(|ms| ms.map_or(default, |ms| Duration::from_millis(ms as u64)))
    };
    let session_idle = in_range(
        session_idle_sec,
        "session_idle_sec",
        SESSION_IDLE_SEC_RANGE,
        "seconds an idle HTTP session lives",
        defaults.session_idle.as_secs() as u128,
    )?
    .map_or(defaults.session_idle, |s| Duration::from_secs(s as u64));
    let hub_grace = in_range(
        hub_grace_sec,
        "hub_grace_sec",
        HUB_GRACE_SEC_RANGE,
        "seconds the hub stays after its last session",
        defaults.hub_grace.as_secs() as u128,
    )?
    .map_or(defaults.hub_grace, |s| Duration::from_secs(s as u64));
    let http = build_http(http, source)?;
    Ok(Settings {
        session_idle,
        hub: hub.map_or(defaults.hub, |b| *b.get_ref()),
        hub_grace,
        http,
        exposure,
        max_name_length: in_range(
            max_name_length,
            "max_name_length",
            MAX_NAME_LENGTH_RANGE,
            "room for a prefix, `__`, a tool name and a hash suffix; no provider takes more",
            defaults.max_name_length as u128,
        )?
        .unwrap_or(defaults.max_name_length),
        search_limit: in_range(
            search_limit,
            "search_limit",
            SEARCH_LIMIT_RANGE,
            "the most `search_tools` returns",
            defaults.search_limit as u128,
        )?
        .unwrap_or(defaults.search_limit),
        core_wait: wait(core_wait_ms, "core_wait_ms", defaults.core_wait)?,
        relist_wait: wait(relist_wait_ms, "relist_wait_ms", defaults.relist_wait)?,
        claude_always_load: claude_always_load
            .map_or(defaults.claude_always_load, |b| *b.get_ref()),
        inherit_env: inherit_env.map_or(defaults.inherit_env, |b| *b.get_ref()),
        max_message_bytes: in_range(
            max_message_bytes,
            "max_message_bytes",
            MAX_MESSAGE_BYTES_RANGE,
            "bytes of one JSON-RPC message, from the client or a server",
            defaults.max_message_bytes as u128,
        )?
        .unwrap_or(defaults.max_message_bytes),
        max_output_tokens: in_range(
            max_output_tokens,
            "max_output_tokens",
            MAX_OUTPUT_TOKENS_RANGE,
            "tokens of one tool result; longer results are cut",
            20_000,
        )?,
        client_era,
        search_loads: in_range(
            search_loads,
            "search_loads",
            SEARCH_LOADS_RANGE,
            "how many of its best hits `search_tools` loads itself; 0 leaves loading to `select_tools`",
            defaults.search_loads as u128,
        )?
        .unwrap_or(defaults.search_loads),
        semantic,
        model,
        learn: search_learn.map_or(defaults.learn, |learn| match learn.get_ref().as_str() {
            "false" => Learn::Off,
            // `true`, and a name `raw` already checked is one of `Learn::NAMES`.
            other => Learn::from_name(other).unwrap_or_default(),
        }),
        // `raw` accepted only the names `TrustMode::parse` knows.
        trust: (trust.and_then(|t| TrustMode::parse(t.get_ref()))).unwrap_or(defaults.trust),
    })
}

/// A `[settings]` integer `key` within `range` (what it counts: `why`); `None` when absent.
fn setting_in_range(
    source: &Source<'_>,
    value: Option<S<i64>>,
    key: &str,
    range: RangeInclusive<usize>,
    why: &str,
    example: u128,
) -> Result<Option<usize>, ConfigError> {
    let Some(value) = value else { return Ok(None) };
    match usize::try_from(*value.get_ref()) {
        Ok(n) if range.contains(&n) => Ok(Some(n)),
        _ => Err(source.error(
            value.span(),
            format!(
                "[settings] `{key}` is {}, but must be between {} and {} ({why}); write e.g. \
                 `{key} = {}`",
                value.get_ref(),
                range.start(),
                range.end(),
                example,
            ),
        )),
    }
}

/// `exposure = "deferred" | "proxy" | "all"`.
fn parse_exposure(value: S<String>, source: &Source<'_>) -> Result<ExposureMode, ConfigError> {
    match value.get_ref().as_str() {
        "deferred" => Ok(ExposureMode::Deferred),
        "proxy" => Ok(ExposureMode::Proxy),
        "all" => Ok(ExposureMode::All),
        other => {
            const MODES: &[&str] = &["deferred", "proxy", "all"];
            Err(source.error(
                value.span(),
                format!(
                    "[settings] `exposure = {other:?}` is not a mode; write one of \
                     \"deferred\", \"proxy\", \"all\"{}",
                    suggest::hint(other, MODES)
                ),
            ))
        }
    }
}

/// `client_era = "auto" | "any" | "handshake"`.
fn parse_client_era(value: S<String>, source: &Source<'_>) -> Result<ClientEra, ConfigError> {
    match value.get_ref().as_str() {
        "auto" => Ok(ClientEra::Auto),
        "any" => Ok(ClientEra::Any),
        "handshake" => Ok(ClientEra::Handshake),
        other => {
            const ERAS: &[&str] = &["auto", "any", "handshake"];
            Err(source.error(
                value.span(),
                format!(
                    "[settings] `client_era = {other:?}` is not an era; write \"auto\" (the \
                     handshake era where tools load on request), \"any\" (the client's choice) \
                     or \"handshake\" (refuse `server/discover`){}",
                    suggest::hint(other, ERAS)
                ),
            ))
        }
    }
}

/// `[settings.search] semantic`: one of [`Semantic::NAMES`].
fn parse_semantic(value: S<String>, source: &Source<'_>) -> Result<Semantic, ConfigError> {
    Semantic::parse(value.get_ref()).ok_or_else(|| {
        let other = value.get_ref();
        source.error(
            value.span(),
            format!(
                "[settings.search] `semantic = {other:?}` is not a tier; write one of \
                 \"static\", \"model\", \"off\"{}",
                suggest::hint(other, &Semantic::NAMES)
            ),
        )
    })
}
