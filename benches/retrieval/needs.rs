//! Two-need queries (issue 21, item 3): each query is cut into its needs
//! (`mcp_defer::search::needs_with`), each need ranked on its own (with its own transformer
//! vector on the model rows), and the rankings combined outside the index, so many ways to
//! combine can be compared over one index. `RETRIEVAL_NEEDS="spec;spec"` prints a `needs`
//! row per spec after each variant's row; a spec is `key=value` pairs:
//! `comb` (`max`: whole score + beta · best need score; `mean`; `rr`: the whole query's best
//! hit, then the needs' lists and the whole list taken in turn; `rrf`: reciprocal ranks),
//! `beta`, `and=1` (also cut at plain "and"), `words=N` (content words a need needs),
//! `sent=0` / `conn=0` (no sentence / connector cuts), `half=even|odd` (only the queries
//! with an even / odd position: tune on one half, report the other).

use std::collections::HashMap;

use mcp_defer::search::{QueryVectors, SplitRules, needs_with};

use crate::{Loaded, eval};

/// Every tool of the bench's catalogs (MetaTool has 199): each need ranks the whole catalog.
const ALL: usize = 1_000;
/// RRF's k.
const RRF_K: f32 = 60.0;

#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Comb {
    Max,
    Mean,
    RoundRobin,
    Rrf,
}

#[derive(Debug, Clone)]
pub struct Spec {
    pub text: String,
    pub rules: SplitRules,
    pub comb: Comb,
    pub beta: f32,
    /// `Some(0)`: even positions only, `Some(1)`: odd.
    pub half: Option<usize>,
}

/// The specs of `RETRIEVAL_NEEDS`.
pub fn specs() -> Result<Vec<Spec>, String> {
    let Ok(all) = std::env::var("RETRIEVAL_NEEDS") else {
        return Ok(Vec::new());
    };
    let mut out = Vec::new();
    for text in all.split(';').filter(|s| !s.is_empty()) {
        let mut spec = Spec {
            text: text.to_owned(),
            rules: SplitRules::default(),
            comb: Comb::Max,
            beta: 0.5,
            half: None,
        };
        for item in text.split(',').filter(|s| !s.is_empty()) {
            let (k, v) = item
                .split_once('=')
                .ok_or(format!("bad needs spec {item}"))?;
            let num = || v.parse::<f32>().map_err(|e| format!("{item}: {e}"));
            match k {
                "comb" => {
                    spec.comb = match v {
                        "max" => Comb::Max,
                        "mean" => Comb::Mean,
                        "rr" => Comb::RoundRobin,
                        "rrf" => Comb::Rrf,
                        _ => return Err(format!("unknown comb {v}")),
                    }
                }
                "beta" => spec.beta = num()?,
                "and" => spec.rules.and = num()? != 0.0,
                "sent" => spec.rules.sentences = num()? != 0.0,
                "conn" => spec.rules.connectors = num()? != 0.0,
                "words" => spec.rules.min_words = num()? as usize,
                "half" => {
                    spec.half = match v {
                        "even" => Some(0),
                        "odd" => Some(1),
                        _ => return Err(format!("half=even|odd, not {v}")),
                    }
                }
                _ => return Err(format!("unknown needs key {k}")),
            }
        }
        out.push(spec);
    }
    Ok(out)
}

/// Every need the index or the specs rank, for the transformer to embed once.
pub fn texts(specs: &[Spec], queries: &[eval::Query]) -> Vec<String> {
    let mut out = Vec::new();
    for q in queries {
        let needs = mcp_defer::search::needs(crate::bounded(&q.query));
        if needs.len() > 1 {
            out.extend(needs.into_iter().map(str::to_owned));
        }
    }
    for spec in specs {
        for q in queries {
            let needs = needs_with(&q.query, spec.rules);
            if needs.len() > 1 {
                out.extend(needs.into_iter().map(str::to_owned));
            }
        }
    }
    out
}

/// The queries of `spec`'s half.
pub fn half(spec: &Spec, queries: &[eval::Query]) -> Vec<eval::Query> {
    (queries.iter().enumerate())
        .filter(|(i, _)| spec.half.is_none_or(|h| i % 2 == h))
        .map(|(_, q)| q.clone())
        .collect()
}

/// How many of `queries` `spec` cuts in two or more needs.
pub fn split_count(spec: &Spec, queries: &[eval::Query]) -> usize {
    (queries.iter())
        .filter(|q| needs_with(&q.query, spec.rules).len() > 1)
        .count()
}

/// `query` ranked under `spec`: its best `limit` (server, tool) pairs.
pub fn ranked(loaded: &Loaded, spec: &Spec, query: &str, limit: usize) -> Vec<(String, String)> {
    let needs = needs_with(query, spec.rules);
    let rank = |text: &str, n: usize| {
        let vector = (loaded.queries.and_then(|q| q.get(text))).map(|v| QueryVectors {
            whole: v.clone(),
            needs: Vec::new(),
        });
        loaded.index.explain_with(text, n, None, vector.as_ref())
    };
    let ids = if needs.len() < 2 {
        rank(query, limit).into_iter().map(|e| e.id).collect()
    } else {
        let whole = rank(query, ALL);
        let lists: Vec<_> = needs.iter().map(|n| rank(n, ALL)).collect();
        combine(spec, &whole, &lists, limit)
    };
    ids.into_iter()
        .filter_map(|id| loaded.catalog.get(id))
        .map(|e| (e.server.to_string(), e.original_name().to_owned()))
        .collect()
}

type Id = mcp_defer::catalog::EntryId;

fn combine(
    spec: &Spec,
    whole: &[mcp_defer::search::Explained],
    lists: &[Vec<mcp_defer::search::Explained>],
    limit: usize,
) -> Vec<Id> {
    match spec.comb {
        Comb::Max | Comb::Mean => {
            let scores: Vec<HashMap<Id, f32>> = lists
                .iter()
                .map(|l| l.iter().map(|e| (e.id, e.score)).collect())
                .collect();
            let floor: Vec<f32> = lists
                .iter()
                .map(|l| l.last().map_or(0.0, |e| e.score))
                .collect();
            let whole_floor = whole.last().map_or(0.0, |e| e.score);
            let mut ids: Vec<Id> = whole.iter().map(|e| e.id).collect();
            for l in lists {
                for e in l {
                    if !ids.contains(&e.id) {
                        ids.push(e.id);
                    }
                }
            }
            let whole_score: HashMap<Id, f32> = whole.iter().map(|e| (e.id, e.score)).collect();
            let mut scored: Vec<(usize, Id, f32)> = ids
                .iter()
                .enumerate()
                .map(|(order, &id)| {
                    let per: Vec<f32> = (scores.iter().zip(&floor))
                        .map(|(s, &f)| s.get(&id).copied().unwrap_or(f))
                        .collect();
                    let need = match spec.comb {
                        Comb::Max => per.iter().copied().fold(f32::NEG_INFINITY, f32::max),
                        _ => per.iter().sum::<f32>() / per.len() as f32,
                    };
                    let w = whole_score.get(&id).copied().unwrap_or(whole_floor);
                    (order, id, w + spec.beta * need)
                })
                .collect();
            scored.sort_by(|a, b| b.2.total_cmp(&a.2).then(a.0.cmp(&b.0)));
            scored
                .into_iter()
                .take(limit)
                .map(|(_, id, _)| id)
                .collect()
        }
        Comb::RoundRobin => {
            let mut out: Vec<Id> = whole.iter().take(1).map(|e| e.id).collect();
            let mut at = vec![0usize; lists.len() + 1];
            while out.len() < limit {
                let mut moved = false;
                for (i, list) in lists
                    .iter()
                    .chain(std::iter::once(&whole.to_vec()))
                    .enumerate()
                {
                    while let Some(e) = list.get(at[i]) {
                        at[i] += 1;
                        if !out.contains(&e.id) {
                            out.push(e.id);
                            moved = true;
                            break;
                        }
                    }
                    if out.len() >= limit {
                        break;
                    }
                }
                if !moved {
                    break;
                }
            }
            out
        }
        Comb::Rrf => {
            let mut score: HashMap<Id, (f32, usize)> = HashMap::new();
            let mut order = 0;
            let mut add = |list: &[mcp_defer::search::Explained], w: f32| {
                for (rank, e) in list.iter().enumerate() {
                    let entry = score.entry(e.id).or_insert_with(|| {
                        order += 1;
                        (0.0, order)
                    });
                    entry.0 += w / (RRF_K + rank as f32 + 1.0);
                }
            };
            add(whole, 1.0);
            for l in lists {
                add(l, spec.beta / lists.len() as f32);
            }
            let mut scored: Vec<(Id, (f32, usize))> = score.into_iter().collect();
            scored.sort_by(|a, b| b.1.0.total_cmp(&a.1.0).then(a.1.1.cmp(&b.1.1)));
            scored.into_iter().take(limit).map(|(id, _)| id).collect()
        }
    }
}
