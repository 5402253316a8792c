//! `mcp-defer stats`: what the tool list costs the client's context, flat against deferred.
//!
//! Tokens are estimated by [`crate::tokens::estimate`]: serialized JSON bytes / 4; good for
//! comparing, not for billing.

use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;

use super::{connect_all, load_config, runtime, write_stdout};
use crate::catalog::Catalog;
use crate::config::Config;
use crate::exposure::listed_form;
use crate::server::meta::MetaTool;

pub fn run(config: Option<PathBuf>) -> anyhow::Result<ExitCode> {
    let config = Arc::new(load_config(config)?);
    runtime()?.block_on(stats(&config))
}

async fn stats(config: &Arc<Config>) -> anyhow::Result<ExitCode> {
    let (pool, registry) = connect_all(config).await?;
    let out = render(config, &registry.catalog());
    pool.shutdown().await;
    write_stdout(&out)?;
    Ok(ExitCode::SUCCESS)
}

/// The table: per server its tools, flat and deferred token estimates; then the totals.
fn render(config: &Config, catalog: &Catalog) -> String {
    let settings = &config.settings;
    let size = |tool: &rmcp::model::Tool| serde_json::to_string(tool).map_or(0, |s| s.len());

    let mut out = format!(
        "{:<24} {:>6} {:>10} {:>10}\n",
        "server", "tools", "flat", "deferred"
    );
    let (mut flat, mut tools) = (0, 0);
    let meta: usize = MetaTool::ALL
        .iter()
        .map(|m| size(&m.definition(settings.exposure, settings.claude_always_load)))
        .sum();
    let mut deferred = meta;
    for (i, server) in config.servers.iter().enumerate() {
        let entries: Vec<_> = catalog.server_entries(i).filter(|e| !e.gone).collect();
        let listed =
            |e: &&crate::catalog::CatalogEntry| size(&listed_form(e, settings.claude_always_load));
        let server_flat: usize = entries.iter().map(listed).sum();
        let server_core: usize = entries
            .iter()
            .filter(|e| server.is_core(e.original_name()))
            .map(listed)
            .sum();
        out.push_str(&format!(
            "{:<24} {:>6} {:>10} {:>10}\n",
            server.name,
            entries.len(),
            tokens(server_flat),
            tokens(server_core)
        ));
        flat += server_flat;
        deferred += server_core;
        tools += entries.len();
    }
    out.push_str(&format!(
        "{:<24} {:>6} {:>10} {:>10}\n",
        "meta tools",
        MetaTool::ALL.len(),
        "",
        tokens(meta)
    ));
    out.push_str(&format!(
        "{:<24} {:>6} {:>10} {:>10}\n",
        "total (≈tokens)",
        tools,
        tokens(flat),
        tokens(deferred)
    ));
    if flat > 0 {
        out.push_str(&format!(
            "the first tools/list is {:.1}% of the flat list\n",
            100.0 * deferred as f64 / flat as f64
        ));
    }
    out
}

fn tokens(bytes: usize) -> String {
    crate::tokens::estimate(bytes).to_string()
}
