//! Retrieval benchmark: loads each data set under `benches/data/` straight into a catalog and
//! a search index (no processes), runs its queries, and prints Recall@1/5/10, MRR@10,
//! nDCG@5 and nDCG@10 (metric definitions in `benches/data/README.md`) and the search
//! latency. `FM` is the false-match rate of the "no tool fits" signal (each query ranked with
//! its own tools taken out: how often a tool still "fits") and `gR@5` the R@5 when that
//! signal is obeyed (an unserved query returns nothing). A `named` row scores the queries
//! that name a thing (a tool, server or parameter name, or a rare word written as a name).
//! Every weight is picked on one set and reported on the others (the table printed first
//! says which set picked what); `bfcl` and `bfcl live` (Berkeley Function Calling
//! Leaderboard, issue 33) tuned nothing. Each row is followed by how well the confidences
//! of its first five hits are calibrated (ECE, Brier). `RETRIEVAL_DUMP=<dir>` writes each
//! query's first ten hits with their scores (`scripts/fit_confidence.py` fits the
//! confidence from them); `RETRIEVAL_CALIBRATION` overrides the confidence model. After
//! the sets, `foreign requests`: MetaTool tasks asked of the reference tools, which none
//! serves, and how often a hit still "fits" (`foreign.rs`).
//!
//! Each set is measured five ways, side by side: `bm25` (the lexical engine alone,
//! `semantic = "off"`), `static` (the built-in static embeddings alone), `fused` (both, as
//! shipped), `model` (the transformer tier's vectors alone) and `mfused` (the transformer
//! fused with the lexical engine and the static vectors, `semantic = "model"`). The model rows need the model
//! directory (`.models/all-MiniLM-L6-v2` from `.ci/install-peers`, or `RETRIEVAL_MODEL`);
//! without it they are skipped with a line saying so. Each query's transformer vector is
//! computed once and reused by both model rows (its cost is printed on its own, beside the
//! transformer budgets: first-time embedding of 1,000 tools, restart, added RSS), and each
//! tier's memory at 1,000 tools, one process per tier (`memory.rs`). Queries of at most [`SHORT_WORDS`] words are also scored on their own
//! ("short": what agents type) when a set has enough of them.
//!
//! `cargo bench --bench retrieval`. Env: `RETRIEVAL_MISSES=N` prints N misses per set;
//! `RETRIEVAL_BOOSTS=name=3,vector=0.6,model_vector=0.5,model_static=0.3,model_floor=0.2` overrides
//! field boosts and the fusion weights (for tuning); `RETRIEVAL_VARIANTS=bm25,fused` picks variants; `RETRIEVAL_RANKS=1` prints
//! where the first relevant tool lands in the top 100; `RETRIEVAL_BUDGETS=0` skips the
//! transformer budgets (a minute of embedding) when tuning; `RETRIEVAL_SWEEP="spec;spec"`
//! ranks the `mfused` index again under each boosts spec (a `sweep` line each: tuning many
//! fusions for one embedding); `RETRIEVAL_CACHE=<dir>` keeps the tool vectors (and the
//! queries' and their needs') between runs.
//!
//! Two-need queries (issue 21, item 3): `fused` and `mfused` cut a query into its needs as
//! shipped; `fwhole` and `mwhole` are the same tiers with needs off. `RETRIEVAL_NEEDS`
//! compares ways to combine the needs' rankings outside the index (`needs.rs`);
//! `RETRIEVAL_QUICK=1` skips the warm-up and the FM, named and short/long rows (tuning).
//! fusions for one embedding); `RETRIEVAL_CACHE=<dir>` keeps the tool vectors between runs.
//! Each set and variant also gets "use" rows (`usage.rs`): half the queries replayed as
//! usage, the other half scored without and with it, and with 30% wrong usage;
//! `RETRIEVAL_USAGE=0` skips them, `RETRIEVAL_USAGE_SWEEP="usage=0.3;usage_floor=0.5"` adds
//! a row per weights spec.

/// The binary's allocator (see `src/main.rs`), so figures match what users run.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use mcp_defer::catalog::{Catalog, ServerKey};
use mcp_defer::ingest::Indexed;
use mcp_defer::search::transformer::{Encoder, ModelDir, Transformer};
use mcp_defer::search::{
    Boosts, Calibration, MAX_QUERY_CHARS, QueryVectors, SearchIndex, Semantic, StaticModel, needs,
};
use rmcp::model::Tool;

mod eval;
mod foreign;
mod memory;
mod model;
mod needs;
#[path = "../common/os.rs"]
mod os;
#[path = "../common/scale.rs"]
mod scale;
mod usage;

/// A query of at most this many words counts as short (`create github issue`).
const SHORT_WORDS: usize = 5;
/// Sets with fewer short queries than this get no "short" row (too few to mean anything).
const MIN_SHORT: usize = 20;

struct Loaded<'m> {
    catalog: Catalog,
    index: SearchIndex,
    build: Duration,
    /// Each query's transformer vector (model rows only).
    queries: Option<&'m HashMap<String, Vec<f32>>>,
}

/// The transformer rows' shared state: the model and every query's vector.
struct ModelRows {
    dir: ModelDir,
    /// Vector cache for the bench's indexes.
    cache: VectorCache,
    queries: HashMap<String, Vec<f32>>,
}

/// Where the bench's indexes cache their transformer vectors.
enum VectorCache {
    /// A temporary directory (the default: every run embeds afresh, as the budgets assume).
    Temporary(tempfile::TempDir),
    /// A directory kept between runs (`RETRIEVAL_CACHE`).
    Kept(PathBuf),
}

impl VectorCache {
    fn path(&self) -> &Path {
        match self {
            VectorCache::Temporary(dir) => dir.path(),
            VectorCache::Kept(dir) => dir,
        }
    }
}

fn load<'m>(
    dir: &Path,
    boosts: Boosts,
    semantic: Semantic,
    model: Option<&'m ModelRows>,
) -> Result<Loaded<'m>, String> {
    let servers = eval::load_servers(&dir.join("servers.json"))?;
    let mut catalog = Catalog::new(64);
    let mut index = SearchIndex::with_options(boosts, semantic).map_err(|e| e.to_string())?;
    if let Some(model) = model {
        let root = model.cache.path().to_owned();
        index.set_transformer(Transformer::start(model.dir.clone(), Some(root)));
    }
    let mut build = Duration::ZERO;
    let mut updates = Vec::new();
    for (i, server) in servers.iter().enumerate() {
        let tools: Vec<Tool> = server
            .tools
            .iter()
            .map(|t| {
                serde_json::from_value(t.clone()).map_err(|e| format!("{}: {e}", server.server))
            })
            .collect::<Result<_, _>>()?;
        let key = ServerKey {
            name: &server.server,
            prefix: &server.server,
            index: i,
        };
        updates.push(catalog.update_server(key, tools));
    }
    // One upsert per server, as the server does when a server's tools arrive.
    for (update, server) in updates.iter().zip(&servers) {
        let indexed: Vec<Indexed> = update
            .added
            .iter()
            .filter_map(|id| catalog.get(*id))
            .map(Indexed::of)
            .collect();
        let docs: Vec<_> = indexed.iter().map(|e| e.doc(&server.description)).collect();
        let start = Instant::now();
        index.upsert(docs).map_err(|e| e.to_string())?;
        build += start.elapsed();
    }
    if let Some(transformer) = index.transformer()
        && !transformer.wait_ready(Duration::from_secs(1800))
    {
        return Err("the transformer's vectors did not get ready".to_owned());
    }
    Ok(Loaded {
        catalog,
        index,
        build,
        queries: model.map(|m| &m.queries),
    })
}

fn ranked(loaded: &Loaded, query: &str, latencies: &mut Vec<Duration>) -> Vec<(String, String)> {
    ranked_n(loaded, query, 10, latencies)
}

fn ranked_n(
    loaded: &Loaded,
    query: &str,
    limit: usize,
    latencies: &mut Vec<Duration>,
) -> Vec<(String, String)> {
    let vectors = query_vectors(loaded, query);
    let start = Instant::now();
    let hits = loaded
        .index
        .explain_with(query, limit, None, vectors.as_ref());
    latencies.push(start.elapsed());
    hits.iter()
        .filter_map(|h| loaded.catalog.get(h.id))
        .map(|e| (e.server.to_string(), e.original_name().to_owned()))
        .collect()
}

/// The query's transformer vectors (model rows), its needs' included: embedded before
/// timing, as `search_tools` embeds them before it ranks.
fn query_vectors(loaded: &Loaded, query: &str) -> Option<QueryVectors> {
    let map = loaded.queries?;
    let whole = map.get(query)?.clone();
    let parts = needs(bounded(query));
    let needs = if parts.len() > 1 {
        (parts.iter().map(|p| map.get(*p).cloned()))
            .collect::<Option<Vec<_>>>()
            .unwrap_or_default()
    } else {
        Vec::new()
    };
    Some(QueryVectors { whole, needs })
}

/// The query as the index cuts it ([`MAX_QUERY_CHARS`]), so the needs embedded are the
/// needs it ranks.
pub(crate) fn bounded(query: &str) -> &str {
    match query.char_indices().nth(MAX_QUERY_CHARS) {
        Some((end, _)) => &query[..end],
        None => query,
    }
}

fn parse_boosts() -> Result<Boosts, String> {
    let b = Boosts::default();
    let Ok(spec) = std::env::var("RETRIEVAL_BOOSTS") else {
        return Ok(b);
    };
    apply_boosts(b, &spec)
}

/// `spec` (`name=3,vector=0.6`) over `b`.
fn apply_boosts(mut b: Boosts, spec: &str) -> Result<Boosts, String> {
    for item in spec.split(',').filter(|s| !s.is_empty()) {
        let (k, v) = item.split_once('=').ok_or(format!("bad boost {item}"))?;
        let v: f32 = v.parse().map_err(|e| format!("{item}: {e}"))?;
        let slot = match k {
            "name" => &mut b.name,
            "name_prefix" => &mut b.name_prefix,
            "title" => &mut b.title,
            "description" => &mut b.description,
            "description_plain" => &mut b.description_plain,
            "description_prefix" => &mut b.description_prefix,
            "params" => &mut b.params,
            "param_text" => &mut b.param_text,
            "enums" => &mut b.enums,
            "server" => &mut b.server,
            "server_text" => &mut b.server_text,
            "topics" => &mut b.topics,
            "vector" => &mut b.vector,
            "model_vector" => &mut b.model_vector,
            "model_static" => &mut b.model_static,
            "model_floor" => &mut b.model_floor,
            "named" => &mut b.named,
            "name_shift" => &mut b.name_shift,
            "static_named" => &mut b.static_named,
            "needs" => &mut b.needs,
            "static_needs" => &mut b.static_needs,
            "usage" => &mut b.usage,
            "usage_selected" => &mut b.usage_selected,
            "usage_floor" => &mut b.usage_floor,
            "usage_words_floor" => &mut b.usage_words_floor,

            "model_zscore" => {
                b.model_zscore = v != 0.0;
                continue;
            }
            "shared_idf" => {
                b.shared_idf = v != 0.0;
                continue;
            }
            "drop_filler" => {
                b.drop_filler = v != 0.0;
                continue;
            }
            _ => return Err(format!("unknown boost {k}")),
        };
        *slot = v;
    }
    Ok(b)
}

/// `RETRIEVAL_CALIBRATION="static=-5,8,6,0.3,0.5,0,1;fit=0.3"`: the confidence model's
/// weights per tier (`words`, `static`, `model`: seven each, see `Calibration`) and
/// thresholds (`fit`, `fit_words`) over the defaults.
fn parse_calibration(spec: &str) -> Result<Calibration, String> {
    let mut c = Calibration::default();
    for item in spec.split(';').filter(|s| !s.is_empty()) {
        let (k, v) = item
            .split_once('=')
            .ok_or(format!("bad calibration {item}"))?;
        let values: Vec<f32> = (v.split(','))
            .map(|x| x.trim().parse().map_err(|e| format!("{item}: {e}")))
            .collect::<Result<_, String>>()?;
        let slot = match k {
            "words" => &mut c.words,
            "static" => &mut c.statics,
            "model" => &mut c.model,
            "fit" | "fit_words" => {
                let value = *values.first().ok_or(format!("{item}: no value"))?;
                if k == "fit" {
                    c.fit = value;
                } else {
                    c.fit_words = value;
                }
                continue;
            }
            _ => return Err(format!("unknown calibration key {k}")),
        };
        if values.len() != slot.len() {
            return Err(format!(
                "{item}: {} weights, not {}",
                slot.len(),
                values.len()
            ));
        }
        slot.copy_from_slice(&values);
    }
    Ok(c)
}

fn main() -> Result<(), String> {
    if memory::child()? {
        return Ok(());
    }
    // `cargo bench` passes `--bench`; a filter argument selects sets by name.
    let filter: Option<String> = std::env::args().skip(1).find(|a| !a.starts_with('-'));
    let misses: usize = std::env::var("RETRIEVAL_MISSES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(0);
    let boosts = parse_boosts()?;
    let calibration = match std::env::var("RETRIEVAL_CALIBRATION") {
        Ok(spec) => Some(parse_calibration(&spec)?),
        Err(_) => None,
    };
    let fused_weight = boosts.vector;
    let model_weight = boosts.model_vector;
    let variants: Vec<(&str, Semantic, f32, bool)> = [
        ("bm25", Semantic::Off, 0.0, true),
        ("static", Semantic::Static, 1.0, true),
        ("fwhole", Semantic::Static, fused_weight, false),
        ("fused", Semantic::Static, fused_weight, true),
        ("model", Semantic::Model, 1.0, true),
        ("mwhole", Semantic::Model, model_weight, false),
        ("mfused", Semantic::Model, model_weight, true),
    ]
    .into_iter()
    .filter(|(name, ..)| {
        std::env::var("RETRIEVAL_VARIANTS").map_or(true, |v| v.split(',').any(|x| x == *name))
    })
    .collect();
    // Load the model before timing anything: its one-time parse is not a query's cost.
    let start = Instant::now();
    let model = StaticModel::get().ok_or("the static model does not load")?;
    println!(
        "static model: {} dims, parsed in {:.1} ms",
        model.dims(),
        start.elapsed().as_secs_f64() * 1e3
    );
    let data = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("benches/data");
    let sets = [
        ("metatool single", "metatool", "queries.jsonl"),
        ("metatool multi", "metatool", "queries_multi.jsonl"),
        ("reference", "reference", "queries.jsonl"),
        ("bfcl", "bfcl", "queries.jsonl"),
        ("bfcl live", "bfcl-live", "queries.jsonl"),
    ];
    print_tuned_on();
    let needs_specs = needs::specs()?;
    let quick = std::env::var("RETRIEVAL_QUICK").is_ok_and(|v| v != "0");
    let wants_model = variants.iter().any(|v| v.1 == Semantic::Model);
    let model_rows = if wants_model {
        let wanted: Vec<_> = (sets.iter().copied())
            .filter(|(name, ..)| filter.as_deref().is_none_or(|f| name.contains(f)))
            .collect();
        model_rows(&data, &wanted, &needs_specs)?
    } else {
        None
    };
    let variants: Vec<(&str, Semantic, f32, bool)> = variants
        .into_iter()
        .filter(|v| v.1 != Semantic::Model || model_rows.is_some())
        .collect();
    println!(
        "{:<22} {:<7} {:>7} {:>6} {:>6} {:>6} {:>7} {:>7} {:>8} {:>6} {:>6} {:>9} {:>9}",
        "set",
        "variant",
        "queries",
        "R@1",
        "R@5",
        "R@10",
        "MRR@10",
        "nDCG@5",
        "nDCG@10",
        "FM",
        "gR@5",
        "p50 µs",
        "p99 µs"
    );
    let mut all: Vec<(&str, Vec<Duration>)> = variants.iter().map(|v| (v.0, Vec::new())).collect();
    let mut builds = Vec::new();
    for (name, dir, file) in sets {
        for (vi, &(variant, semantic, weight, split)) in variants.iter().enumerate() {
            let boosts = Boosts {
                vector: weight,
                model_vector: weight,
                needs: if split { boosts.needs } else { 0.0 },
                static_needs: if split { boosts.static_needs } else { 0.0 },
                ..boosts
            };
            if filter.as_deref().is_some_and(|f| !name.contains(f)) {
                continue;
            }
            let dir = data.join(dir);
            if !dir.join(file).exists() {
                println!("{name:<16} (missing {})", dir.join(file).display());
                continue;
            }
            let model = model_rows.as_ref().filter(|_| semantic == Semantic::Model);
            let mut loaded = load(&dir, boosts, semantic, model)?;
            if let Some(c) = calibration {
                loaded.index.set_calibration(c);
            }
            builds.push((name, variant, loaded.catalog.len(), loaded.build));
            let queries = eval::load_queries(&dir.join(file))?;
            // Warm up caches once, then measure.
            let mut sink = Vec::new();
            if !quick {
                for q in &queries {
                    ranked(&loaded, &q.query, &mut sink);
                }
            }
            let mut latencies = Vec::with_capacity(queries.len());
            let m = eval::evaluate(&queries, |q| ranked(&loaded, q, &mut latencies));
            let (p50, p99) = percentiles(&mut latencies);
            all[vi].1.extend(latencies);
            if let Ok(dir) = std::env::var("RETRIEVAL_DUMP") {
                dump(
                    &loaded,
                    &queries,
                    &Path::new(&dir).join(format!("{name}-{variant}.jsonl")),
                )?;
            }
            let fit = if quick {
                Fit {
                    false_match: 0.0,
                    gated_r5: 0.0,
                    ece: 0.0,
                    brier: 0.0,
                    mean_confidence: 0.0,
                    relevant: 0.0,
                }
            } else {
                fit_eval(&loaded, &queries)
            };
            println!(
                "{:<22} {:<7} {:>7} {:>6.3} {:>6.3} {:>6.3} {:>7.3} {:>7.3} {:>8.3} {:>6.3} {:>6.3} {:>9.1} {:>9.1}",
                name,
                variant,
                m.queries,
                m.r1,
                m.r5,
                m.r10,
                m.mrr10,
                m.ndcg5,
                m.ndcg10,
                fit.false_match,
                fit.gated_r5,
                p50,
                p99
            );
            if !quick {
                println!(
                    "  {name} {variant} confidence of the first five hits: ECE {:.3}, Brier {:.3}, \
                     mean {:.3}, relevant {:.3}",
                    fit.ece, fit.brier, fit.mean_confidence, fit.relevant
                );
            }
            // Each query cut into its needs, ranked per need and combined outside the index
            // (item 3: ways to combine, compared over one index; needs off inside it).
            loaded.index.set_boosts(Boosts {
                needs: 0.0,
                static_needs: 0.0,
                ..boosts
            });
            for spec in &needs_specs {
                let part = needs::half(spec, &queries);
                let split = needs::split_count(spec, &part);
                if spec.half.is_some() {
                    let m = eval::evaluate(&part, |q| ranked(&loaded, q, &mut sink));
                    print_row(name, "whole", &m, &format!(" half of {}", spec.text));
                }
                let m = eval::evaluate(&part, |q| needs::ranked(&loaded, spec, q, 10));
                print_row(name, "needs", &m, &format!(" {split} split  {}", spec.text));
            }
            loaded.index.set_boosts(boosts);
            if quick {
                continue;
            }
            // Learning from use, by replay (item 6 of issue 21).
            if std::env::var("RETRIEVAL_USAGE").map_or(true, |v| v != "0") {
                usage::replay(&mut loaded, &queries, name, variant, boosts)?;
            }
            // The queries that name a thing (item 2 of issue 21), on their own.
            let named: Vec<eval::Query> = queries
                .iter()
                .filter(|q| {
                    let v = query_vectors(&loaded, &q.query);
                    !loaded
                        .index
                        .rank(&q.query, 1, None, v.as_ref())
                        .named
                        .is_empty()
                })
                .cloned()
                .collect();
            if !named.is_empty() {
                let m = eval::evaluate(&named, |q| ranked(&loaded, q, &mut sink));
                print_row(&format!("  {name} named"), variant, &m, "");
            }
            let (short, long): (Vec<&eval::Query>, Vec<&eval::Query>) = queries
                .iter()
                .partition(|q| q.query.split_whitespace().count() <= SHORT_WORDS);
            if short.len() >= MIN_SHORT {
                for (label, part) in [("short", short), ("long", long)] {
                    let part: Vec<eval::Query> = part.into_iter().cloned().collect();
                    let m = eval::evaluate(&part, |q| ranked(&loaded, q, &mut sink));
                    print_row(&format!("  {name} {label}"), variant, &m, "");
                }
            }
            // `RETRIEVAL_SWEEP="model_static=0.2;model_vector_short=0.8"`: the model rows
            // again under each spec (over the base weights), one index, one line each.
            if semantic != Semantic::Off
                && weight < 1.0
                && let Ok(sweep) = std::env::var("RETRIEVAL_SWEEP")
            {
                for spec in sweep.split(';').filter(|s| !s.is_empty()) {
                    loaded.index.set_boosts(apply_boosts(boosts, spec)?);
                    let m = eval::evaluate(&queries, |q| ranked(&loaded, q, &mut sink));
                    let fit = fit_eval(&loaded, &queries);
                    let tail = format!("{:>6.3} {:>6.3}  {spec}", fit.false_match, fit.gated_r5);
                    print_row(name, "sweep", &m, &tail);
                }
                loaded.index.set_boosts(boosts);
            }
            if std::env::var("RETRIEVAL_RANKS").is_ok() {
                // Where the first relevant tool lands (1-based, within the top 100): how many
                // misses a re-ranking of the first page could recover.
                let mut buckets = [0usize; 6];
                for q in &queries {
                    let got = ranked_n(&loaded, &q.query, 100, &mut sink);
                    let rank = eval::hits(&got, &q.relevant).iter().position(|h| *h);
                    let b = match rank {
                        Some(r) if r < 5 => 0,
                        Some(r) if r < 10 => 1,
                        Some(r) if r < 20 => 2,
                        Some(r) if r < 50 => 3,
                        Some(_) => 4,
                        None => 5,
                    };
                    buckets[b] += 1;
                }
                println!(
                    "  first hit rank: 1-5 {} | 6-10 {} | 11-20 {} | 21-50 {} | 51-100 {} | none {}",
                    buckets[0], buckets[1], buckets[2], buckets[3], buckets[4], buckets[5]
                );
            }
            if misses > 0 {
                let mut shown = 0;
                for q in &queries {
                    let got = ranked(&loaded, &q.query, &mut sink);
                    let hit = eval::hits(&got[..got.len().min(5)], &q.relevant);
                    if hit.iter().filter(|h| **h).count() < q.relevant.len().min(5)
                        && shown < misses
                    {
                        shown += 1;
                        let top: Vec<&str> = got.iter().take(5).map(|(_, t)| t.as_str()).collect();
                        let want: Vec<&str> = q.relevant.iter().map(|(_, t)| t.as_str()).collect();
                        eprintln!(
                            "  miss {} ({variant}): {:?}\n    want {:?}\n    got  {:?}",
                            q.id, q.query, want, top
                        );
                    }
                }
            }
        }
    }
    let foreign_only = filter.as_deref() == Some("foreign");
    if (!quick || std::env::var_os("RETRIEVAL_FOREIGN").is_some())
        && (filter.is_none() || foreign_only)
    {
        foreign::print(&data, &variants, boosts, model_rows.as_ref(), calibration)?;
    }
    for (variant, mut latencies) in all {
        let (p50, p99) = percentiles(&mut latencies);
        println!(
            "all searches ({variant}): {} queries, p50 {p50:.1} µs, p99 {p99:.1} µs (limit 10)",
            latencies.len()
        );
    }
    for (name, variant, tools, build) in builds {
        println!(
            "index build ({name}, {variant}): {tools} tools, one upsert per server, {:.1} ms",
            build.as_secs_f64() * 1e3
        );
    }
    // The query embedding alone, over every query of every set (what `static` adds).
    let mut embeds = Vec::new();
    for (_, dir, file) in sets {
        let path = data.join(dir).join(file);
        if let Ok(queries) = eval::load_queries(&path) {
            for q in &queries {
                let start = Instant::now();
                let v = model.embed(&q.query);
                embeds.push(start.elapsed());
                std::hint::black_box(v);
            }
        }
    }
    let (p50, p99) = percentiles(&mut embeds);
    println!(
        "query embedding: {} queries, p50 {p50:.1} µs, p99 {p99:.1} µs",
        embeds.len()
    );
    if let Some(rows) = &model_rows
        && std::env::var("RETRIEVAL_BUDGETS").map_or(true, |v| v != "0")
    {
        model::budgets(&rows.dir)?;
    }
    // The model tier's memory needs its 1,000 tools embedded once: with the budgets only.
    let budgets = std::env::var("RETRIEVAL_BUDGETS").map_or(true, |v| v != "0");
    memory::print(
        model_rows
            .as_ref()
            .filter(|_| budgets)
            .map(|rows| &rows.dir),
    )?;
    Ok(())
}

/// The model and every query's transformer vector (timed: the transformer tier's query
/// cost), or `None` with a line saying why the model rows are skipped.
fn model_rows(
    data: &Path,
    sets: &[(&str, &str, &str)],
    needs_specs: &[needs::Spec],
) -> Result<Option<ModelRows>, String> {
    let dir = std::env::var_os("RETRIEVAL_MODEL").map_or_else(
        || PathBuf::from(env!("CARGO_MANIFEST_DIR")).join(".models/all-MiniLM-L6-v2"),
        PathBuf::from,
    );
    if !dir.exists() {
        println!(
            "model rows skipped: {} absent (run .ci/install-peers, or set RETRIEVAL_MODEL)",
            dir.display()
        );
        return Ok(None);
    }
    let dir = ModelDir::check(&dir).map_err(|e| e.to_string())?;
    let (start, rss) = (Instant::now(), model::rss_mb());
    let encoder = Encoder::load(&dir).map_err(|e| e.to_string())?;
    println!(
        "transformer model: {} ({} layers, {} dims), loaded in {:.0} ms, +{:.0} MB RSS \
         (budget < 120 MB)",
        dir.path().display(),
        dir.layers(),
        dir.dims(),
        start.elapsed().as_secs_f64() * 1e3,
        model::rss_mb() - rss
    );
    // With `RETRIEVAL_CACHE`, the queries' vectors are kept there too (tuning re-runs).
    let kept = std::env::var_os("RETRIEVAL_CACHE")
        .map(|d| PathBuf::from(d).join(format!("queries-{}.json", encoder.id())));
    let mut queries: HashMap<String, Vec<f32>> = kept
        .as_ref()
        .and_then(|p| std::fs::read(p).ok())
        .and_then(|b| serde_json::from_slice(&b).ok())
        .unwrap_or_default();
    let cached = queries.len();
    let mut times = Vec::new();
    let mut need_texts = Vec::new();
    for (_, set, file) in sets {
        let loaded = eval::load_queries(&data.join(set).join(file))?;
        need_texts.extend(needs::texts(needs_specs, &loaded));
        for q in loaded {
            if queries.contains_key(&q.query) {
                continue;
            }
            let start = Instant::now();
            let vector = encoder.embed(&q.query).map_err(|e| e.to_string())?;
            times.push(start.elapsed());
            queries.insert(q.query, vector);
        }
    }
    // The needs' vectors (`RETRIEVAL_NEEDS`), untimed: not every query has them.
    for text in need_texts {
        if let std::collections::hash_map::Entry::Vacant(slot) = queries.entry(text) {
            let vector = encoder.embed(slot.key()).map_err(|e| e.to_string())?;
            slot.insert(vector);
        }
    }
    if let Some(path) = &kept
        && queries.len() > cached
    {
        let json = serde_json::to_vec(&queries).map_err(|e| e.to_string())?;
        std::fs::write(path, json).map_err(|e| format!("{}: {e}", path.display()))?;
    }
    let (p50, p99) = percentiles(&mut times);
    println!(
        "transformer query embedding: {} queries, p50 {:.1} ms, p99 {:.1} ms",
        times.len(),
        p50 / 1e3,
        p99 / 1e3
    );
    // `RETRIEVAL_CACHE=<dir>` keeps the tool vectors between runs (tuning).
    let cache = match std::env::var_os("RETRIEVAL_CACHE") {
        Some(dir) => VectorCache::Kept(PathBuf::from(dir)),
        None => VectorCache::Temporary(tempfile::tempdir().map_err(|e| e.to_string())?),
    };
    Ok(Some(ModelRows {
        dir,
        cache,
        queries,
    }))
}

/// Which set picked each weight of [`Boosts`] (the rule: a weight is picked on one set and
/// reported on all others; `bfcl` and `bfcl live` tuned nothing). From the measurements in
/// docs/search.md that chose each default.
const TUNED_ON: &[(&str, &str)] = &[
    (
        "field boosts, topics, vector (static share)",
        "metatool single + multi + reference (issues 7, 14)",
    ),
    (
        "model_vector, model_static, model_floor",
        "metatool single + multi + reference (issue 14)",
    ),
    ("named", "metatool single"),
    ("static_named", "reference"),
    ("needs, static_needs", "metatool multi, even half"),
    ("usage, usage_floor, usage_words_floor", "metatool single"),
    (
        "confidence weights (words, static), fit thresholds",
        "reference (issue 33; model tier: the static weights)",
    ),
    ("name_shift", "not tuned yet (0: shares as before)"),
];

fn print_tuned_on() {
    println!("weights and where each was picked (held out: every other set):");
    for (knobs, set) in TUNED_ON {
        println!("  {knobs:<44} {set}");
    }
}

/// One table row without latencies; `tail` is printed after the metrics.
fn print_row(set: &str, variant: &str, m: &eval::Metrics, tail: &str) {
    println!(
        "{:<22} {:<7} {:>7} {:>6.3} {:>6.3} {:>6.3} {:>7.3} {:>7.3} {:>8.3} {tail}",
        set, variant, m.queries, m.r1, m.r5, m.r10, m.mrr10, m.ndcg5, m.ndcg10
    );
}

/// The "no tool fits" signal (issue 21, item 7), judged two ways.
struct Fit {
    /// Share of queries whose own tools are taken out of the ranking (as if the catalog
    /// lacked them) where the signal still says a tool fits: a false match.
    false_match: f64,
    /// R@5 with the signal obeyed: a query judged unserved returns no tools.
    gated_r5: f64,
    /// How well the confidences of the first five hits match how often such hits are
    /// relevant: expected calibration error over ten equal-width bins, Brier score, mean
    /// confidence and share relevant.
    ece: f64,
    brier: f64,
    mean_confidence: f64,
    relevant: f64,
}

fn fit_eval(loaded: &Loaded, queries: &[eval::Query]) -> Fit {
    let (mut false_match, mut gated) = (0usize, 0.0f64);
    // Per confidence bin: hits, confidence sum, relevant count.
    let mut bins = [(0usize, 0.0f64, 0usize); 10];
    let mut brier = 0.0f64;
    for q in queries {
        let vector = query_vectors(loaded, &q.query);
        let ranking = loaded.index.rank(&q.query, 10, None, vector.as_ref());
        let pairs: Vec<(String, String)> = (ranking.hits.iter())
            .filter_map(|h| loaded.catalog.get(h.id))
            .map(|e| (e.server.to_string(), e.original_name().to_owned()))
            .collect();
        let hit = eval::hits(&pairs, &q.relevant);
        for (h, rel) in ranking.hits.iter().zip(&hit).take(5) {
            let c = f64::from(h.confidence);
            let bin = &mut bins[((c * 10.0) as usize).min(9)];
            bin.0 += 1;
            bin.1 += c;
            bin.2 += usize::from(*rel);
            brier += (c - if *rel { 1.0 } else { 0.0 }).powi(2);
        }
        let rest: Vec<_> = (ranking.hits.iter().zip(&hit))
            .filter(|(_, h)| !**h)
            .map(|(e, _)| *e)
            .collect();
        if loaded.index.fits(ranking.tier, &rest, &q.query) {
            false_match += 1;
        }
        if ranking.fits {
            let found = hit.iter().take(5).filter(|h| **h).count();
            gated += found as f64 / q.relevant.len().max(1) as f64;
        }
    }
    let n = queries.len().max(1) as f64;
    let judged = bins.iter().map(|b| b.0).sum::<usize>().max(1) as f64;
    let ece = (bins.iter())
        .filter(|b| b.0 > 0)
        .map(|b| (b.1 - b.2 as f64).abs() / judged)
        .sum();
    Fit {
        false_match: false_match as f64 / n,
        gated_r5: gated / n,
        ece,
        brier: brier / judged,
        mean_confidence: bins.iter().map(|b| b.1).sum::<f64>() / judged,
        relevant: bins.iter().map(|b| b.2).sum::<usize>() as f64 / judged,
    }
}

/// `RETRIEVAL_DUMP=<dir>`: each query's first ten hits, as ranked and with its own tools
/// taken out, with every score a hit carries (for fitting the confidence outside Rust), then
/// the hit's server and tool name (for re-ranking by another encoder outside Rust).
pub(crate) fn dump(loaded: &Loaded, queries: &[eval::Query], path: &Path) -> Result<(), String> {
    use std::fmt::Write as _;
    let mut out = String::new();
    for q in queries {
        let vector = query_vectors(loaded, &q.query);
        let ranking = loaded.index.rank(&q.query, 10, None, vector.as_ref());
        let pairs: Vec<(String, String)> = (ranking.hits.iter())
            .filter_map(|h| loaded.catalog.get(h.id))
            .map(|e| (e.server.to_string(), e.original_name().to_owned()))
            .collect();
        let hit = eval::hits(&pairs, &q.relevant);
        let rows: Vec<serde_json::Value> = (ranking.hits.iter().zip(&hit))
            .map(|(h, rel)| {
                let entry = loaded.catalog.get(h.id);
                serde_json::json!([
                    h.score,
                    h.lexical.map(|l| l.0),
                    h.lexical.map(|l| l.1),
                    h.vector.map(|v| v.0),
                    h.vector.and_then(|v| v.1),
                    h.parts.lexical,
                    h.parts.vector,
                    h.parts.statics,
                    h.parts.named,
                    rel,
                    h.confidence,
                    entry.map(|e| e.server.to_string()),
                    entry.map(|e| e.original_name().to_owned())
                ])
            })
            .collect();
        let line = serde_json::json!({
            "id": q.id,
            "query": q.query,
            "words": q.query.split_whitespace().count(),
            "named": ranking.named.len(),
            "needs": ranking.needs.len(),
            "tier": ranking.tier.as_str(),
            "relevant": q.relevant.len(),
            "hits": rows,
        });
        let _ = writeln!(out, "{line}");
    }
    std::fs::write(path, out).map_err(|e| format!("{}: {e}", path.display()))
}

/// p50 and p99 in microseconds.
fn percentiles(latencies: &mut [Duration]) -> (f64, f64) {
    if latencies.is_empty() {
        return (0.0, 0.0);
    }
    latencies.sort();
    let at = |p: f64| {
        let i = ((latencies.len() as f64 - 1.0) * p).round() as usize;
        latencies[i].as_secs_f64() * 1e6
    };
    (at(0.50), at(0.99))
}
