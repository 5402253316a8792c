//! `mcp-defer search`: what `search_tools` would answer, with scores, for people tuning
//! their catalog (descriptions, `search_hints`).

use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;

use super::{connect_all, load_config, runtime, wait_for_vectors, write_stdout};
use crate::catalog::Catalog;
use crate::config::Config;
use crate::exposure::ExposedList;
use crate::search::usage::{Principal, Stores};
use crate::search::{Calibration, Explained, Ranking};
use crate::server::meta::search_tools;

#[derive(Debug, clap::Args)]
pub(super) struct Args {
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

pub(super) fn run(config: Option<PathBuf>, args: Args) -> anyhow::Result<ExitCode> {
    let config = Arc::new(load_config(config)?);
    runtime()?.block_on(search(&config, args))
}

async fn search(config: &Arc<Config>, args: Args) -> anyhow::Result<ExitCode> {
    let (pool, registry) = connect_all(config).await?;
    // What the local user's `serve` learnt from use ranks here too (read only: a search
    // here chooses nothing); nothing with `learn = false`.
    let usage = Stores::new(config.settings.learn).for_principal(&Principal::Local);
    let registry = wait_for_vectors(registry).await?;
    let ranking = if args.explain {
        let limit = args
            .limit
            .unwrap_or(config.settings.search_limit)
            .clamp(1, crate::server::meta::MAX_SEARCH_LIMIT);
        Some((registry.index()).rank_learnt(
            &args.query,
            limit,
            args.server.as_deref(),
            None,
            usage.as_deref(),
        ))
    } else {
        None
    };
    let request = search_tools::Args {
        query: args.query,
        limit: args.limit,
        server: args.server,
    };
    let found = {
        let index = registry.index();
        let search = search_tools::Search {
            catalog: &registry.catalog(),
            ranker: search_tools::Ranker {
                index: &index,
                model_query: None,
                usage: usage.as_deref(),
            },
            exposed: &ExposedList::new(),
            default_limit: config.settings.search_limit,
            removed: &[],
        };
        search.run(&request)
    };
    pool.shutdown().await;
    let found = found?;
    let out = if args.json {
        let mut out = serde_json::to_string_pretty(&found)?;
        out.push('\n');
        out
    } else if let Some(ranking) = ranking {
        let mut out = registry.index().describe_semantic();
        out.push('\n');
        out.push_str(&shares_line(&ranking, registry.index().calibration()));
        out.push_str(&explain_table(&ranking.hits, &registry.catalog()));
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
            hit.score,
            hit.name,
            // Written by the server: its escapes shown, not obeyed by the terminal.
            crate::printable::one_line(&hit.description)
        );
        out.push_str(line.trim_end());
        out.push('\n');
    }
    out
}

/// Which tier ranked, each engine's share of the fused score for this query, the query's
/// named things and whether any hit fits.
fn shares_line(ranking: &Ranking, calibration: &Calibration) -> String {
    let s = ranking.shares;
    let mut line = format!(
        "ranked by {}: shares words {:.2}, vector {:.2}, static {:.2}",
        ranking.tier.as_str(),
        s.lexical,
        s.vector,
        s.statics
    );
    if !ranking.named.is_empty() {
        line.push_str(&format!(
            ", named +{:.2} ({})",
            s.named,
            ranking.named.join(", ")
        ));
    }
    if ranking.nameness > 0.0 {
        // The shares above are this query's: meaning's shrinks for a query of names.
        line.push_str(&format!(", query names {:.2}", ranking.nameness));
    }
    if s.usage > 0.0 {
        line.push_str(&format!(", use up to +{:.2} of the best", s.usage));
    }
    if !ranking.needs.is_empty() {
        // Scores are whole + weight x best need (`Boosts::needs`); the columns below are
        // the parts of one ranking (the whole query's when it holds the tool).
        line.push_str(&format!(
            "; needs ranked too: {}",
            ranking.needs.join(" | ")
        ));
    }
    if ranking.waiting > 0 {
        line.push_str(&format!("; {} tools wait for vectors", ranking.waiting));
    }
    if !ranking.fits {
        line.push_str("; no tool fits");
    }
    line.push_str(&format!(
        "; a hit fits at confidence {:.2}",
        calibration.threshold(ranking.tier)
    ));
    line.push('\n');
    line
}

/// One line per hit: fused rank, confidence (`conf`, what `search_tools` shows) and score, lexical score and rank, cosine and rank, each
/// engine's part and the lift of learnt use (`used`). A `-`
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
        "{:>4}  {:>4}  {:>6}  {:>8}  {:>4}  {:>7}  {:>4}  {:>6}  {:>6}  {:>6}  {:>6}  {:>6}  {:<width$}\n",
        "rank",
        "conf",
        "fused",
        "lexical",
        "lex#",
        "cosine",
        "vec#",
        "words",
        "vector",
        "static",
        "named",
        "used",
        "tool"
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
        let p = hit.parts;
        let line = format!(
            "{:>4}  {:>4.2}  {:>6.3}  {:>8}  {:>4}  {:>7}  {:>4}  {:>6.3}  {:>6.3}  {:>6.3}  {:>6.3}  {:>6.3}  {name}",
            rank + 1,
            hit.confidence,
            hit.score,
            lex,
            lex_rank,
            cos,
            cos_rank,
            p.lexical,
            p.vector,
            p.statics,
            p.named,
            p.usage
        );
        out.push_str(line.trim_end());
        out.push('\n');
    }
    out
}
