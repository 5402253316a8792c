//! Where the log goes and what it lets through: stderr (stdout is the protocol), every line
//! masked by [`crate::redact`], at the level `-q`, `-v`, `-vv` or `RUST_LOG` asks, with the
//! crates that write a line per event they see held to `info` whatever is asked.

use tracing_subscriber::EnvFilter;

/// The shape of a log line (`--log-format`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub(super) enum LogFormat {
    Text,
    Json,
}

/// Crates that log every event they see at `debug` or `trace`, held to `info` unless
/// `RUST_LOG` names them itself. `notify` logs each inotify event of the folder the config
/// is in: with the log written into that folder, each line was an event and each event a
/// line, 29-41 MB/s of log and a full core while idle (issue 35).
const PER_EVENT: [&str; 2] = ["notify", "inotify"];

/// The filter when `RUST_LOG` is unset (or not a filter). rmcp logs every handshake at
/// info; ours are the lines a user wants by default. Its transport worker logs each
/// connection's end as an ERROR with no server name ("worker quit with fatal: ...
/// AuthRequired"); the supervisor says the same under the server's name with the fix
/// ("needs login: run ..."), so by default only ours is shown. rmcp's `debug` dumps each
/// request and response whole (a tool's arguments and results, whatever a client put in
/// them), so `-v` keeps rmcp at `info`; `-vv` shows it, masked as every line is.
fn default_filter(verbose: u8, quiet: bool) -> &'static str {
    match (quiet, verbose) {
        (true, _) => "error,rmcp::transport::worker=off",
        (false, 0) => "info,rmcp=warn,rmcp::transport::worker=off",
        (false, 1) => "debug,rmcp=info",
        (false, _) => "trace",
    }
}

/// The filter spec to use: `RUST_LOG` when it is a valid filter, else the default for
/// `-q`/`-v`; then [`PER_EVENT`] crates at `info` unless the spec names them.
fn spec(verbose: u8, quiet: bool, rust_log: Option<&str>) -> String {
    let chosen = rust_log
        .filter(|s| !s.trim().is_empty() && EnvFilter::try_new(s).is_ok())
        .unwrap_or_else(|| default_filter(verbose, quiet));
    let named = |target: &str| {
        chosen.split(',').any(|directive| {
            let name = directive.split(['=', '[']).next().unwrap_or_default();
            name.trim() == target || name.trim().starts_with(&format!("{target}::"))
        })
    };
    let mut spec = chosen.to_owned();
    for target in PER_EVENT.into_iter().filter(|t| !named(t)) {
        spec.push_str(&format!(",{target}=info"));
    }
    spec
}

/// Logs go to stderr, never stdout: stdout is the protocol. Every line passes through
/// [`crate::redact`], whatever its level or origin (a JSON line value by value, so it
/// stays JSON: [`crate::redact::RedactingJsonStderr`]).
pub(super) fn init(verbose: u8, quiet: bool, format: LogFormat) {
    let rust_log = std::env::var("RUST_LOG").ok();
    let spec = spec(verbose, quiet, rust_log.as_deref());
    // `spec` is a valid filter plus valid directives; the default is the fallback anyway.
    let filter = EnvFilter::try_new(&spec)
        .unwrap_or_else(|_| EnvFilter::new(default_filter(verbose, quiet)));
    let builder = tracing_subscriber::fmt()
        .with_ansi(false)
        .with_env_filter(filter);
    match format {
        LogFormat::Text => builder.with_writer(crate::redact::RedactingStderr).init(),
        LogFormat::Json => builder
            .json()
            .with_writer(crate::redact::RedactingJsonStderr)
            .init(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn per_event_crates_stay_at_info_at_every_level_unless_named() {
        assert_eq!(spec(2, false, None), "trace,notify=info,inotify=info");
        assert_eq!(
            spec(0, false, Some("trace")),
            "trace,notify=info,inotify=info"
        );
        assert_eq!(
            spec(0, false, Some("debug,notify::inotify=trace")),
            "debug,notify::inotify=trace,inotify=info"
        );
        // Not a filter: the default for the flags.
        assert_eq!(
            spec(1, false, Some("=nonsense=")),
            "debug,rmcp=info,notify=info,inotify=info"
        );
    }
}
