//! `[settings.http]`: how `serve --http` admits clients. One token source at most (two would
//! leave a reader unsure which tokens are live); lists as written; every bound a named range
//! in `config`, with what it counts in the error.

use std::ops::RangeInclusive;
use std::path::PathBuf;
use std::time::Duration;

use super::super::error::{ConfigError, Source};
use super::super::raw::{RawHttp, S};
use super::super::{
    DEFAULT_MAX_CONCURRENT_REQUESTS, HTTP_TIMEOUT_SEC_RANGE, HttpSettings,
    MAX_CONCURRENT_REQUESTS_RANGE, MAX_CONNECTIONS_RANGE, MAX_SESSIONS_PER_TOKEN_RANGE,
    TokenSource,
};

/// `[settings.http]`: one token source at most; lists as written.
pub(super) fn build_http(raw: RawHttp, source: &Source<'_>) -> Result<HttpSettings, ConfigError> {
    let RawHttp {
        tokens_env,
        token_file,
        allowed_origins,
        allowed_hosts,
        max_concurrent_requests,
        header_timeout_sec,
        body_timeout_sec,
        max_connections,
        max_sessions_per_token,
    } = raw;
    let defaults = HttpSettings::default();
    let secs = |d: Duration| usize::try_from(d.as_secs()).unwrap_or(usize::MAX);
    let header_timeout = bounded(
        source,
        header_timeout_sec,
        "header_timeout_sec",
        "seconds to send a request's headers",
        &HTTP_TIMEOUT_SEC_RANGE,
        secs(defaults.header_timeout),
    )?;
    let body_timeout = bounded(
        source,
        body_timeout_sec,
        "body_timeout_sec",
        "seconds to send a request's body",
        &HTTP_TIMEOUT_SEC_RANGE,
        secs(defaults.body_timeout),
    )?;
    let max_connections = bounded(
        source,
        max_connections,
        "max_connections",
        "connections served at once",
        &MAX_CONNECTIONS_RANGE,
        defaults.max_connections,
    )?;
    let max_sessions_per_token = bounded(
        source,
        max_sessions_per_token,
        "max_sessions_per_token",
        "sessions one token may hold open",
        &MAX_SESSIONS_PER_TOKEN_RANGE,
        defaults.max_sessions_per_token,
    )?;
    let tokens = token_source(tokens_env, token_file, source)?;
    let max_concurrent_requests = max_concurrent_requests
        .map(|value| concurrent_requests(value, source))
        .transpose()?
        .unwrap_or(defaults.max_concurrent_requests);
    Ok(HttpSettings {
        tokens,
        allowed_origins: list(allowed_origins),
        allowed_hosts: list(allowed_hosts),
        max_concurrent_requests,
        header_timeout: Duration::from_secs(header_timeout as u64),
        body_timeout: Duration::from_secs(body_timeout as u64),
        max_connections,
        max_sessions_per_token,
    })
}

/// `tokens_env` or `token_file` (relative to the config file), not both.
fn token_source(
    tokens_env: Option<S<String>>,
    token_file: Option<S<String>>,
    source: &Source<'_>,
) -> Result<Option<TokenSource>, ConfigError> {
    match (tokens_env, token_file) {
        (Some(_), Some(file)) => Err(source.error(
            file.span(),
            "[settings.http] sets both `tokens_env` and `token_file`; keep one".to_owned(),
        )),
        (Some(env), None) => Ok(Some(TokenSource::Env(env.into_inner()))),
        (None, Some(file)) => {
            let path = PathBuf::from(file.into_inner());
            // Relative to the config file, as a user reading the file would expect.
            let path = match source.path().parent() {
                Some(dir) if path.is_relative() => dir.join(path),
                _ => path,
            };
            Ok(Some(TokenSource::File(path)))
        }
        (None, None) => Ok(None),
    }
}

fn list(value: Option<S<Vec<S<String>>>>) -> Vec<String> {
    value
        .map(|v| v.into_inner().into_iter().map(S::into_inner).collect())
        .unwrap_or_default()
}

/// `max_concurrent_requests`, whose example is the default rather than the value written.
fn concurrent_requests(value: S<i64>, source: &Source<'_>) -> Result<usize, ConfigError> {
    match usize::try_from(*value.get_ref()) {
        Ok(n) if MAX_CONCURRENT_REQUESTS_RANGE.contains(&n) => Ok(n),
        _ => Err(source.error(
            value.span(),
            format!(
                "[settings.http] `max_concurrent_requests` is {}, but must be between \
                 {} and {} (requests one session may have in flight); write e.g. \
                 `max_concurrent_requests = {}`",
                value.get_ref(),
                MAX_CONCURRENT_REQUESTS_RANGE.start(),
                MAX_CONCURRENT_REQUESTS_RANGE.end(),
                DEFAULT_MAX_CONCURRENT_REQUESTS
            ),
        )),
    }
}

/// A `[settings.http]` integer `key` within `range` (what it counts: `what`), or `default`.
fn bounded(
    source: &Source<'_>,
    value: Option<S<i64>>,
    key: &str,
    what: &str,
    range: &RangeInclusive<usize>,
    default: usize,
) -> Result<usize, ConfigError> {
    let Some(value) = value else {
        return Ok(default);
    };
    match usize::try_from(*value.get_ref()) {
        Ok(n) if range.contains(&n) => Ok(n),
        _ => Err(source.error(
            value.span(),
            format!(
                "[settings.http] `{key}` is {}, but must be between {} and {} ({what}); write \
                 e.g. `{key} = {default}`",
                value.get_ref(),
                range.start(),
                range.end(),
            ),
        )),
    }
}
