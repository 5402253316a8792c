//! `mcp-defer search`: what `search_tools` would answer, with scores, for people tuning
//! their catalog (descriptions, `search_hints`).

use std::path::PathBuf;
use std::process::ExitCode;

use super::{load_config, runtime, settle, write_stdout};
use crate::catalog::Catalog;
use crate::config::Config;
use crate::exposure::ExposedList;
use crate::search::{Explained, SearchIndex};
use crate::server::meta::search_tools;
use crate::server::search_doc;

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
    /// Per hit: the lexical (BM25) score and rank, the vector cosine and rank, and the
    /// fused rank, to see which engine found a tool.
    #[arg(long, conflicts_with = "json")]
    pub explain: bool,
}

pub fn run(config: Option<PathBuf>, args: Args) -> anyhow::Result<ExitCode> {
    let config = load_config(config)?;
    runtime()?.block_on(search(&config, args))
}

async fn search(config: &Config, args: Args) -> anyhow::Result<ExitCode> {
    let settled = settle(config).await;
    // Fed server by server, as `serve` feeds it while servers connect.
    let mut index = SearchIndex::with_semantic(config.settings.semantic)?;
    for (i, server) in config.servers.iter().enumerate() {
        let text = server.search_text(settled.instructions[i].as_deref());
        index.upsert(
            settled
                .catalog
                .server_entries(i)
                .map(|entry| search_doc(entry, &text)),
        )?;
    }
    let limit = args
        .limit
        .unwrap_or(config.settings.search_limit)
        .clamp(1, crate::server::meta::MAX_SEARCH_LIMIT);
    let explained = if args.explain {
        index.explain(&args.query, limit, args.server.as_deref())
    } else {
        Vec::new()
    };
    let request = search_tools::Args {
        query: args.query,
        limit: args.limit,
        server: args.server,
    };
    let result = search_tools::run(
        &settled.catalog,
        &index,
        &ExposedList::new(),
        &request,
        config.settings.search_limit,
    );
    settled.pool.shutdown().await;

    let structured = result.structured_content.unwrap_or_default();
    let mut out = String::new();
    if result.is_error == Some(true) {
        let message: Vec<String> = result
            .content
            .iter()
            .filter_map(|c| c.as_text().map(|t| t.text.clone()))
            .collect();
        anyhow::bail!("{}", message.join(" "));
    }
    if args.json {
        out = serde_json::to_string_pretty(&structured)?;
        out.push('\n');
    } else if args.explain {
        out = explain_table(&explained, &settled.catalog);
    } else {
        let hits = structured["tools"].as_array().cloned().unwrap_or_default();
        if hits.is_empty() {
            out.push_str("no tools match\n");
        }
        let width = hits
            .iter()
            .filter_map(|h| h["name"].as_str())
            .map(str::len)
            .max()
            .unwrap_or(0);
        for hit in &hits {
            let line = format!(
                "{:>7.2}  {:<width$}  {}",
                hit["score"].as_f64().unwrap_or_default(),
                hit["name"].as_str().unwrap_or_default(),
                hit["description"].as_str().unwrap_or_default(),
            );
            out.push_str(line.trim_end());
            out.push('\n');
        }
    }
    write_stdout(&out)?;
    Ok(ExitCode::SUCCESS)
}

/// One line per hit: fused rank and score, lexical score and rank, cosine and rank. A `-`
/// is "not in that engine's first hundred" (lexical) or "no vector" (vector).
fn explain_table(hits: &[Explained], catalog: &Catalog) -> String {
    let mut out = String::new();
    if hits.is_empty() {
        out.push_str("no tools match\n");
        return out;
    }
    let names: Vec<&str> = hits
        .iter()
        .map(|h| catalog.get(h.id).map_or("?", |e| e.name.as_str()))
        .collect();
    let width = names.iter().map(|n| n.len()).max().unwrap_or(4).max(4);
    out.push_str(&format!(
        "{:>4}  {:>6}  {:>8}  {:>4}  {:>7}  {:>4}  {:<width$}\n",
        "rank", "fused", "lexical", "lex#", "cosine", "vec#", "tool"
    ));
    for (rank, (hit, name)) in hits.iter().zip(&names).enumerate() {
        let (lex, lex_rank) = match hit.lexical {
            Some((score, rank)) => (format!("{score:.2}"), rank.to_string()),
            None => ("-".to_owned(), "-".to_owned()),
        };
        let (cos, cos_rank) = match hit.vector {
            Some((cosine, rank)) => (
                format!("{cosine:.3}"),
                rank.map_or("-".to_owned(), |r| r.to_string()),
            ),
            None => ("-".to_owned(), "-".to_owned()),
        };
        let line = format!(
            "{:>4}  {:>6.3}  {:>8}  {:>4}  {:>7}  {:>4}  {name}",
            rank + 1,
            hit.score,
            lex,
            lex_rank,
            cos,
            cos_rank
        );
        out.push_str(line.trim_end());
        out.push('\n');
    }
    out
}
