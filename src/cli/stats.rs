//! `mcp-defer stats`: what the first tool list costs the client's context, in two exposure
//! modes side by side (`--compare direct,deferred` by default).
//!
//! Tokens are counted with [`crate::tokens::count`] (o200k_base, the same count `report`
//! uses) over each tool's serialized JSON as the client receives it. For Claude this is an
//! approximation: Anthropic's tokenizer is not public.

use std::process::ExitCode;
use std::sync::Arc;

use super::{ConfigArg, connect_all, load_config, runtime, write_stdout};
use crate::catalog::{Catalog, CatalogEntry};
use crate::config::{Config, ExposureMode};
use crate::downstream::ServerState;
use crate::exposure::listed_form;
use crate::server::meta::MetaTool;
use crate::tokens;

#[derive(Debug, clap::Args)]
pub(super) struct Args {
    #[command(flatten)]
    config: ConfigArg,
    /// Two modes to compare, e.g. `all,deferred`: `direct` (the servers registered in the
    /// client without mcp-defer), `all`, `deferred` or `proxy` (mcp-defer's `exposure`).
    #[arg(long, value_name = "A,B", default_value = "direct,deferred", value_parser = parse_pair)]
    compare: (Mode, Mode),
}

/// What the client is shown at the start of a session.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Mode {
    /// Every server registered in the client directly: each tool as its server lists it.
    Direct,
    /// Through mcp-defer with this `exposure`.
    Exposure(ExposureMode),
}

impl Mode {
    fn name(self) -> &'static str {
        match self {
            Mode::Direct => "direct",
            Mode::Exposure(ExposureMode::All) => "all",
            Mode::Exposure(ExposureMode::Deferred) => "deferred",
            Mode::Exposure(ExposureMode::Proxy) => "proxy",
        }
    }
}

/// A `--compare` value that is not two modes.
#[derive(Debug, PartialEq, Eq, thiserror::Error)]
enum ModeError {
    #[error("unknown mode '{0}': use direct, all, deferred or proxy")]
    Unknown(String),
    #[error("'{0}': give two modes separated by a comma, e.g. all,deferred")]
    NotAPair(String),
}

fn parse_mode(text: &str) -> Result<Mode, ModeError> {
    Ok(match text.trim() {
        "direct" => Mode::Direct,
        "all" => Mode::Exposure(ExposureMode::All),
        "deferred" => Mode::Exposure(ExposureMode::Deferred),
        "proxy" => Mode::Exposure(ExposureMode::Proxy),
        other => return Err(ModeError::Unknown(other.to_owned())),
    })
}

fn parse_pair(text: &str) -> Result<(Mode, Mode), ModeError> {
    let Some((a, b)) = text.split_once(',') else {
        return Err(ModeError::NotAPair(text.to_owned()));
    };
    Ok((parse_mode(a)?, parse_mode(b)?))
}

pub(super) fn run(args: Args) -> anyhow::Result<ExitCode> {
    let config = Arc::new(load_config(args.config.config)?);
    runtime()?.block_on(stats(&config, args.compare))
}

async fn stats(config: &Arc<Config>, modes: (Mode, Mode)) -> anyhow::Result<ExitCode> {
    let (pool, registry) = connect_all(config).await?;
    let unlisted: Vec<Option<&'static str>> = pool.iter().map(|h| unlisted(&h.state())).collect();
    let out = render(config, &registry.catalog(), &unlisted, modes);
    pool.shutdown().await;
    write_stdout(&out)?;
    Ok(ExitCode::SUCCESS)
}

/// Why a server has no tools to count, if it has none: a failed server is not a server
/// without tools, and a row of zeros would say it is.
fn unlisted(state: &ServerState) -> Option<&'static str> {
    match state {
        ServerState::Failed { .. } | ServerState::Restarting { .. } => {
            Some("failed (`check` says why)")
        }
        ServerState::NeedsLogin { .. } => Some("needs login"),
        ServerState::Disabled => Some("disabled"),
        ServerState::Removed => Some("removed"),
        ServerState::Starting => Some("still starting"),
        ServerState::Ready { .. } | ServerState::Idle { .. } => None,
    }
}

/// Tokens of one tool as `mode` lists it, or `None` when that mode does not list it at
/// the start.
fn tool_tokens(config: &Config, entry: &CatalogEntry, core: bool, mode: Mode) -> Option<usize> {
    let always_load = config.settings.claude_always_load;
    match mode {
        Mode::Direct => Some(tokens::count(entry.tool.as_str())),
        Mode::Exposure(ExposureMode::All) => Some(json_tokens(&listed_form(entry, always_load))),
        Mode::Exposure(ExposureMode::Deferred | ExposureMode::Proxy) => {
            core.then(|| json_tokens(&listed_form(entry, always_load)))
        }
    }
}

fn json_tokens(tool: &rmcp::model::Tool) -> usize {
    serde_json::to_string(tool).map_or(0, |s| tokens::count(&s))
}

/// Tokens of the meta tools `mode` lists.
fn meta_tokens(config: &Config, mode: Mode) -> usize {
    match mode {
        Mode::Direct => 0,
        Mode::Exposure(exposure) => MetaTool::ALL
            .iter()
            .map(|m| {
                json_tokens(&m.definition(
                    exposure,
                    config.settings.claude_always_load,
                    config.settings.search_loads,
                ))
            })
            .sum(),
    }
}

/// The table: per server its tools and the tokens each mode lists at the start (a server
/// that listed none, with why: `unlisted`, by position); then the meta tools and the totals.
fn render(
    config: &Config,
    catalog: &Catalog,
    unlisted: &[Option<&str>],
    (a, b): (Mode, Mode),
) -> String {
    let line = |name: &str, tools: &str, x: &str, y: &str| {
        format!("{name:<24} {tools:>6} {x:>10} {y:>10}\n")
    };
    let mut out = line("server", "tools", a.name(), b.name());
    let (mut total_a, mut total_b, mut tools) = (0, 0, 0);
    for (i, server) in config.servers.iter().enumerate() {
        if let Some(why) = unlisted.get(i).copied().flatten() {
            let row = line(&server.name, "-", "-", "-");
            out.push_str(&format!("{}  {why}\n", row.trim_end()));
            continue;
        }
        let entries: Vec<_> = catalog.server_entries(i).filter(|e| !e.gone).collect();
        let (mut sa, mut sb) = (0, 0);
        for entry in &entries {
            let core = server.is_core(entry.original_name());
            sa += tool_tokens(config, entry, core, a).unwrap_or(0);
            sb += tool_tokens(config, entry, core, b).unwrap_or(0);
        }
        out.push_str(&line(
            &server.name,
            &entries.len().to_string(),
            &sa.to_string(),
            &sb.to_string(),
        ));
        total_a += sa;
        total_b += sb;
        tools += entries.len();
    }
    let (ma, mb) = (meta_tokens(config, a), meta_tokens(config, b));
    out.push_str(&line(
        "meta tools",
        &MetaTool::ALL.len().to_string(),
        &ma.to_string(),
        &mb.to_string(),
    ));
    total_a += ma;
    total_b += mb;
    out.push_str(&line(
        &format!("total ({} tokens)", tokens::ENCODING),
        &tools.to_string(),
        &total_a.to_string(),
        &total_b.to_string(),
    ));
    if total_a > 0 {
        out.push_str(&format!(
            "the first tools/list in {} is {:.1}% of {} ({} tokens {} per request)\n",
            b.name(),
            100.0 * total_b as f64 / total_a as f64,
            a.name(),
            total_a.abs_diff(total_b),
            if total_b <= total_a { "fewer" } else { "more" }
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn modes_parse_in_pairs_and_name_the_fix() {
        assert_eq!(
            parse_pair("all,deferred"),
            Ok((
                Mode::Exposure(ExposureMode::All),
                Mode::Exposure(ExposureMode::Deferred)
            ))
        );
        assert_eq!(
            parse_pair("direct, proxy"),
            Ok((Mode::Direct, Mode::Exposure(ExposureMode::Proxy)))
        );
        let Err(ModeError::NotAPair(_)) = parse_pair("all") else {
            panic!("one mode is not a pair")
        };
        let Err(err) = parse_pair("all").map_err(|e| e.to_string()) else {
            panic!("one mode is not a pair")
        };
        assert!(err.contains("two modes"), "{err}");
        let Err(err) = parse_pair("all,lazy").map_err(|e| e.to_string()) else {
            panic!("lazy is not a mode")
        };
        assert!(
            err.contains("'lazy'") && err.contains("direct, all"),
            "{err}"
        );
    }
}
