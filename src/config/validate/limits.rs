//! A server's timeouts and limits: each bounded so no deadline computed from it can overflow
//! `Instant` (`1.7e19` once panicked every call) and each error states the allowed range.
//! The defaults are the named constants of `config`, with their reasons.

use std::time::Duration;

use super::super::error::ConfigError;
use super::super::raw::S;
use super::super::{
    DEFAULT_STARTUP_TIMEOUT, DEFAULT_TOOL_TIMEOUT, LAUNCHER_STARTUP_TIMEOUT, MAX_IDLE_STOP_SEC,
    MAX_OUTPUT_TOKENS_RANGE, MAX_STARTUP_TIMEOUT_SEC, MAX_TOOL_TIMEOUT_SEC, Transport,
};
use super::Server;

impl Server<'_, '_> {
    /// `startup_timeout_sec`, else Codex's legacy `startup_timeout_ms`, else the default
    /// for this transport.
    pub(super) fn startup_timeout(
        &self,
        sec: Option<S<f64>>,
        ms: Option<S<i64>>,
        transport: &Transport,
    ) -> Result<Duration, ConfigError> {
        match (sec, ms) {
            (Some(sec), _) => self.seconds(sec, "startup_timeout_sec", MAX_STARTUP_TIMEOUT_SEC),
            (None, Some(ms)) => match u64::try_from(*ms.get_ref()) {
                Ok(n) if n > 0 && n as f64 <= MAX_STARTUP_TIMEOUT_SEC * 1000.0 => {
                    Ok(Duration::from_millis(n))
                }
                _ => Err(self.error(
                    ms.span(),
                    Some("startup_timeout_ms"),
                    format!(
                        "is {}, but must be a positive number of milliseconds, between 1 and {}; better, write \
                         `startup_timeout_sec = 10`",
                        ms.get_ref(),
                        MAX_STARTUP_TIMEOUT_SEC * 1000.0
                    ),
                )),
            },
            (None, None) => Ok(default_startup_timeout(transport)),
        }
    }

    pub(super) fn tool_timeout(&self, sec: Option<S<f64>>) -> Result<Duration, ConfigError> {
        match sec {
            Some(sec) => self.seconds(sec, "tool_timeout_sec", MAX_TOOL_TIMEOUT_SEC),
            None => Ok(DEFAULT_TOOL_TIMEOUT),
        }
    }

    pub(super) fn idle_stop(&self, sec: Option<S<f64>>) -> Result<Option<Duration>, ConfigError> {
        sec.map(|sec| self.seconds(sec, "idle_stop_sec", MAX_IDLE_STOP_SEC))
            .transpose()
    }

    /// A timeout in seconds, in `(0, max]`: a bound keeps every deadline computed from it
    /// far from `Instant` overflow.
    fn seconds(&self, value: S<f64>, key: &str, max: f64) -> Result<Duration, ConfigError> {
        let secs = *value.get_ref();
        if secs > 0.0
            && secs <= max
            && let Ok(duration) = Duration::try_from_secs_f64(secs)
        {
            return Ok(duration);
        }
        Err(self.error(
            value.span(),
            Some(key),
            format!(
                "is {secs}, but must be a positive, finite number of seconds, at most {max} \
                 (allowed: greater than 0 up to {max}); write e.g. `{key} = 30`"
            ),
        ))
    }

    pub(super) fn output_tokens(&self, value: S<i64>) -> Result<usize, ConfigError> {
        match usize::try_from(*value.get_ref()) {
            Ok(n) if MAX_OUTPUT_TOKENS_RANGE.contains(&n) => Ok(n),
            _ => Err(self.error(
                value.span(),
                Some("max_output_tokens"),
                format!(
                    "is {}, but must be between {} and {} (tokens of one tool result; longer \
                     results are cut); write e.g. `max_output_tokens = 20000`",
                    value.get_ref(),
                    MAX_OUTPUT_TOKENS_RANGE.start(),
                    MAX_OUTPUT_TOKENS_RANGE.end()
                ),
            )),
        }
    }
}

/// The start deadline of a server without `startup_timeout_sec`: a launcher's first run
/// downloads and installs the package (a cold `npx` took 11.5-13.6 s), so launchers get
/// [`LAUNCHER_STARTUP_TIMEOUT`]; everything else Codex's default.
fn default_startup_timeout(transport: &Transport) -> Duration {
    match transport {
        Transport::Stdio { command, .. } if super::super::is_launcher(command) => {
            LAUNCHER_STARTUP_TIMEOUT
        }
        _ => DEFAULT_STARTUP_TIMEOUT,
    }
}
