//! `mcp-defer search`: what `search_tools` would answer, with scores, for people tuning
//! their catalog (descriptions, `search_hints`).

use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;

use super::{connect_all, load_config, runtime, write_stdout};
use crate::config::Config;
use crate::exposure::ExposedList;
use crate::server::meta::search_tools;

#[derive(Debug, clap::Args)]
pub struct Args {
    /// What the tool should do, or its name.
    pub query: String,
    /// Only tools of this server.
    #[arg(long, short)]
    pub server: Option<String>,
    /// How many results [default: the config's search_limit].
    #[arg(long, short = 'n')]
    pub limit: Option<usize>,
    /// The result exactly as `search_tools` returns it, as JSON.
    #[arg(long)]
    pub json: bool,
}

pub fn run(config: Option<PathBuf>, args: Args) -> anyhow::Result<ExitCode> {
    let config = Arc::new(load_config(config)?);
    runtime()?.block_on(search(&config, args))
}

async fn search(config: &Arc<Config>, args: Args) -> anyhow::Result<ExitCode> {
    let (pool, registry) = connect_all(config).await?;
    let request = search_tools::Args {
        query: args.query,
        limit: args.limit,
        server: args.server,
    };
    let found = search_tools::run(
        &registry.catalog(),
        &registry.index(),
        &ExposedList::new(),
        &request,
        config.settings.search_limit,
    );
    pool.shutdown().await;
    let found = found.map_err(anyhow::Error::msg)?;
    let out = if args.json {
        let mut out = serde_json::to_string_pretty(&found)?;
        out.push('\n');
        out
    } else {
        table(&found)
    };
    write_stdout(&out)?;
    Ok(ExitCode::SUCCESS)
}

/// One hit a line: score, qualified name, description.
fn table(found: &search_tools::Found) -> String {
    let mut out = String::new();
    if found.tools.is_empty() {
        out.push_str("no tools match\n");
    }
    let width = found.tools.iter().map(|h| h.name.len()).max().unwrap_or(0);
    for hit in &found.tools {
        let line = format!(
            "{:>7.2}  {:<width$}  {}",
            hit.score, hit.name, hit.description
        );
        out.push_str(line.trim_end());
        out.push('\n');
    }
    out
}
