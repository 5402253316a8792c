//! `mcp-defer list`: every catalog tool, by qualified name, once all servers settled.
//!
//! Text: one tool a line with the first line of its description. `--json`: the full
//! entries (qualified name, server, and the tool JSON exactly as the server sent it).

use std::path::PathBuf;
use std::process::ExitCode;

use serde_json::json;

use super::{load_config, runtime, settle, write_stdout};
use crate::config::Config;
use crate::downstream::ServerState;

pub fn run(config: Option<PathBuf>, json: bool) -> anyhow::Result<ExitCode> {
    let config = load_config(config)?;
    runtime()?.block_on(list(&config, json))
}

async fn list(config: &Config, as_json: bool) -> anyhow::Result<ExitCode> {
    let settled = settle(config).await;
    let mut failed_required = false;
    for (handle, server) in settled.pool.iter().zip(&config.servers) {
        let state = handle.state();
        if let ServerState::Failed { .. } | ServerState::Restarting { .. } = state {
            let cause = state.to_string();
            let cause = cause.strip_prefix("failed: ").unwrap_or(&cause);
            eprintln!("mcp-defer: server '{}' failed: {cause}", handle.name());
            failed_required |= server.required;
        }
    }
    let mut out = String::new();
    if as_json {
        let entries: Vec<_> = settled
            .catalog
            .iter()
            .filter(|e| !e.gone)
            .map(|e| json!({"name": e.name.as_str(), "server": &*e.server, "tool": &*e.tool}))
            .collect();
        out = serde_json::to_string_pretty(&entries)?;
        out.push('\n');
    } else {
        let entries: Vec<_> = settled.catalog.iter().filter(|e| !e.gone).collect();
        let width = entries
            .iter()
            .map(|e| e.name.as_str().len())
            .max()
            .unwrap_or(0);
        for e in entries {
            let description = e.tool.description.as_deref().unwrap_or("");
            let first = description.lines().next().unwrap_or("").trim();
            let line = format!("{:<width$}  {first}", e.name.as_str());
            out.push_str(line.trim_end());
            out.push('\n');
        }
    }
    write_stdout(&out)?;
    settled.pool.shutdown().await;
    Ok(if failed_required {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    })
}
