//! Requests no tool serves (issue 33, item 5): MetaTool's single-tool tasks (everyday
//! plugins: weather, trips, shopping, finance) asked of the reference set's 50 developer
//! tools (filesystem, git, memory, time, `everything`). The take-out protocol of `FM` keeps
//! a query's siblings in the catalog, which often do serve it; here nothing does, so every
//! "fits" is a false match. Tasks whose tool overlaps a reference server's purpose (current
//! time, remembering facts, files and repositories) are left out. Tuned on by nothing.
//! `RETRIEVAL_FOREIGN=1` runs it in quick mode too, the filter `foreign` alone; with `RETRIEVAL_DUMP` the rankings are
//! dumped as `foreign-<variant>.jsonl`.

use std::path::Path;

use mcp_defer::search::{Boosts, Semantic};

use crate::{Loaded, ModelRows, dump, eval, load, query_vectors};

/// MetaTool tools a reference server could serve: `timemachine` (time), `DataRetrievalTool`
/// (memory), `PDF&URLTool` (reading files), `RepoTool` (repositories).
const OVERLAP: [&str; 4] = [
    "timemachine",
    "DataRetrievalTool",
    "PDF&URLTool",
    "RepoTool",
];

/// Prints, per variant, the share of foreign requests that still get a "fitting" hit.
pub(crate) fn print(
    data: &Path,
    variants: &[(&str, Semantic, f32, bool)],
    boosts: Boosts,
    model: Option<&ModelRows>,
    calibration: Option<mcp_defer::search::Calibration>,
) -> Result<(), String> {
    let queries: Vec<eval::Query> = eval::load_queries(&data.join("metatool/queries.jsonl"))?
        .into_iter()
        .filter(|q| {
            q.relevant
                .iter()
                .all(|(s, _)| !OVERLAP.contains(&s.as_str()))
        })
        .collect();
    for &(variant, semantic, weight, _) in variants {
        if weight < 1.0 || variant == "bm25" {
            let boosts = Boosts {
                vector: weight,
                model_vector: weight,
                ..boosts
            };
            let model = model.filter(|_| semantic == Semantic::Model);
            let mut loaded = load(&data.join("reference"), boosts, semantic, model)?;
            if let Some(c) = calibration {
                loaded.index.set_calibration(c);
            }
            let fits = fits(&loaded, &queries);
            if let Ok(dir) = std::env::var("RETRIEVAL_DUMP") {
                dump(
                    &loaded,
                    &queries,
                    &Path::new(&dir).join(format!("foreign-{variant}.jsonl")),
                )?;
            }
            println!(
                "foreign requests ({variant}): {} MetaTool tasks over the 50 reference tools, \
                 \"fits\" {:.3} (every fit false)",
                queries.len(),
                fits
            );
        }
    }
    Ok(())
}

fn fits(loaded: &Loaded, queries: &[eval::Query]) -> f64 {
    let n = queries.len().max(1) as f64;
    let fit = (queries.iter())
        .filter(|q| {
            let vector = query_vectors(loaded, &q.query);
            loaded.index.rank(&q.query, 10, None, vector.as_ref()).fits
        })
        .count();
    fit as f64 / n
}
