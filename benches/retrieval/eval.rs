//! Loading a retrieval data set (`servers.json` + `queries*.jsonl`) and scoring a ranking
//! exactly as `benches/data/README.md` defines it. Shared by the `retrieval` benchmark and
//! the search quality floor test; it knows nothing of the index, only ranked pairs.

#![allow(dead_code)]

use std::path::Path;

use serde::Deserialize;

#[derive(Debug, Deserialize)]
pub(super) struct Server {
    pub server: String,
    #[serde(default)]
    pub description: String,
    pub tools: Vec<serde_json::Value>,
}

#[derive(Debug, Clone, Deserialize)]
pub(super) struct Query {
    pub id: String,
    pub query: String,
    pub relevant: Vec<(String, String)>,
}

pub(super) fn load_servers(path: &Path) -> Result<Vec<Server>, String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
    serde_json::from_str(&text).map_err(|e| format!("{}: {e}", path.display()))
}

pub(super) fn load_queries(path: &Path) -> Result<Vec<Query>, String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
    text.lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty())
        .map(|(n, l)| {
            serde_json::from_str(l).map_err(|e| format!("{}:{}: {e}", path.display(), n + 1))
        })
        .collect()
}

/// Averages over queries.
#[derive(Debug, Clone, Copy, Default)]
pub(super) struct Metrics {
    pub queries: usize,
    pub r1: f64,
    pub r5: f64,
    pub r10: f64,
    pub mrr10: f64,
    pub ndcg5: f64,
    pub ndcg10: f64,
}

/// Which ranked positions are hits: a pair in `relevant`, or ("equiv") a pair whose tool name
/// equals a relevant tool name on another server. Each relevant pair is matched at most once.
pub(super) fn hits(ranked: &[(String, String)], relevant: &[(String, String)]) -> Vec<bool> {
    let mut used = vec![false; relevant.len()];
    ranked
        .iter()
        .map(|(server, tool)| {
            let exact = relevant
                .iter()
                .enumerate()
                .position(|(i, (s, t))| !used[i] && s == server && t == tool);
            let found = exact.or_else(|| {
                relevant
                    .iter()
                    .enumerate()
                    .position(|(i, (_, t))| !used[i] && t == tool)
            });
            match found {
                Some(i) => {
                    used[i] = true;
                    true
                }
                None => false,
            }
        })
        .collect()
}

pub(super) fn evaluate(
    queries: &[Query],
    mut search: impl FnMut(&str) -> Vec<(String, String)>,
) -> Metrics {
    let mut m = Metrics::default();
    for q in queries {
        let ranked = search(&q.query);
        let ranked = &ranked[..ranked.len().min(10)];
        let hit = hits(ranked, &q.relevant);
        let n = q.relevant.len().max(1) as f64;
        let at = |k: usize| hit.iter().take(k).filter(|h| **h).count() as f64 / n;
        m.r1 += at(1);
        m.r5 += at(5);
        m.r10 += at(10);
        if let Some(rank) = hit.iter().position(|h| *h) {
            m.mrr10 += 1.0 / (rank as f64 + 1.0);
        }
        m.ndcg5 += ndcg(&hit, q.relevant.len(), 5);
        m.ndcg10 += ndcg(&hit, q.relevant.len(), 10);
        m.queries += 1;
    }
    let n = m.queries.max(1) as f64;
    m.r1 /= n;
    m.r5 /= n;
    m.r10 /= n;
    m.mrr10 /= n;
    m.ndcg5 /= n;
    m.ndcg10 /= n;
    m
}

/// nDCG@k: binary gains, log2 discount, ideal = every relevant tool first.
fn ndcg(hit: &[bool], relevant: usize, k: usize) -> f64 {
    let dcg: f64 = (hit.iter().take(k).enumerate())
        .filter(|(_, h)| **h)
        .map(|(i, _)| 1.0 / (i as f64 + 2.0).log2())
        .sum();
    let ideal: f64 = (0..relevant.min(k))
        .map(|i| 1.0 / (i as f64 + 2.0).log2())
        .sum();
    if ideal > 0.0 { dcg / ideal } else { 0.0 }
}
