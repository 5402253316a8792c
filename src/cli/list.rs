//! `mcp-defer list`: every catalog tool, by qualified name, once all servers settled.
//!
//! Text: one tool a line with the first line of its description. `--json`: the full
//! entries (qualified name, server, and the tool JSON exactly as the server sent it).

use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;

use serde_json::json;

use super::{connect_all, load_config, runtime, write_stdout};
use crate::catalog::Catalog;
use crate::config::Config;
use crate::downstream::ServerState;

pub(super) fn run(config: Option<PathBuf>, json: bool) -> anyhow::Result<ExitCode> {
    let config = Arc::new(load_config(config)?);
    runtime()?.block_on(list(&config, json))
}

async fn list(config: &Arc<Config>, as_json: bool) -> anyhow::Result<ExitCode> {
    let (pool, registry) = connect_all(config).await?;
    let mut failed_required = false;
    for (handle, server) in pool.iter().zip(&config.servers) {
        let state = handle.state();
        if let ServerState::NeedsLogin { cause } = &state {
            let cause = crate::printable::one_line(cause);
            eprintln!("mcp-defer: server '{}' {cause}", handle.name());
            failed_required |= server.required;
        } else if let ServerState::Failed { .. } | ServerState::Restarting { .. } = state {
            let cause = state.to_string();
            let cause = cause.strip_prefix("failed: ").unwrap_or(&cause);
            let cause = crate::printable::one_line(cause);
            eprintln!("mcp-defer: server '{}' failed: {cause}", handle.name());
            failed_required |= server.required;
        }
    }
    let mut out = render(&registry.catalog(), as_json)?;
    if !as_json {
        // Held tools are not in the catalog: named after it, with how to approve them.
        for note in super::trust::notes(&registry) {
            out.push_str(&crate::printable::one_line(&note));
            out.push('\n');
        }
    }
    write_stdout(&out)?;
    pool.shutdown().await;
    Ok(if failed_required {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    })
}

/// Live tools: one a line with the first line of the description, or the full entries.
fn render(catalog: &Catalog, as_json: bool) -> anyhow::Result<String> {
    let mut out = String::new();
    if as_json {
        let entries: Vec<_> = catalog
            .iter()
            .filter(|e| !e.gone)
            .map(|e| json!({"name": e.name.as_str(), "server": &*e.server, "tool": e.tool.parse()}))
            .collect();
        out = serde_json::to_string_pretty(&entries)?;
        out.push('\n');
    } else {
        let entries: Vec<_> = catalog.iter().filter(|e| !e.gone).collect();
        let width = entries
            .iter()
            .map(|e| e.name.as_str().len())
            .max()
            .unwrap_or(0);
        for e in entries {
            let description = e.tool.description().unwrap_or_default();
            let first = description.lines().next().unwrap_or("").trim();
            // Written by the server: its escapes shown, not obeyed by the terminal.
            let first = crate::printable::one_line(first);
            let line = format!("{:<width$}  {first}", e.name.as_str());
            out.push_str(line.trim_end());
            out.push('\n');
        }
    }
    Ok(out)
}
