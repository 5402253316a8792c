//! Pseudo-relevance feedback: per-tool term vectors kept beside the tantivy index, used to
//! widen a query with the words its best first-pass matches share.
//!
//! A request rarely uses the catalog's words ("studies" for "academic papers"); the tools
//! that do match it usually sit next to the wanted one and describe it with the catalog's
//! vocabulary. Taking their most discriminative terms (RM3-style, learned from the catalog
//! only, never from queries) and re-scoring with them recovers the neighbour. Everything here
//! is plain maps with ordered iteration or explicit tie-breaks, so a result never depends on
//! hashing or segment layout; it must not depend on tantivy.

use std::collections::{BTreeMap, BTreeSet, HashMap};

use crate::catalog::EntryId;

/// One tool's analyzed text.
#[derive(Debug)]
struct DocVector {
    order: u64,
    server: String,
    /// `(term id, term frequency)`, sorted by term id.
    terms: Vec<(u32, f32)>,
    len: f32,
}

/// Term vectors and document frequencies of every live tool.
#[derive(Debug, Default)]
pub(crate) struct TermVectors {
    ids: HashMap<String, u32>,
    /// Per term id: the tools that contain it.
    postings: Vec<BTreeSet<EntryId>>,
    docs: BTreeMap<EntryId, DocVector>,
}

/// The knobs of one feedback round.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Feedback {
    /// How many first-pass results feed the expansion.
    pub docs: usize,
    /// How many expansion terms are kept.
    pub terms: usize,
    /// Weight of the expansion score relative to the best first-pass text score.
    pub weight: f32,
}

/// A re-ranked candidate.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Scored {
    pub id: EntryId,
    pub order: u64,
    pub score: f32,
}

impl TermVectors {
    /// Replaces the vector of `id` with `terms` (its analyzed text).
    pub fn insert(&mut self, id: EntryId, order: u64, server: &str, terms: Vec<String>) {
        self.remove(id);
        let len = terms.len() as f32;
        let mut counts: BTreeMap<u32, f32> = BTreeMap::new();
        for term in terms {
            let next = self.ids.len() as u32;
            let tid = *self.ids.entry(term).or_insert(next);
            if tid as usize == self.postings.len() {
                self.postings.push(BTreeSet::new());
            }
            *counts.entry(tid).or_default() += 1.0;
        }
        for tid in counts.keys() {
            self.postings[*tid as usize].insert(id);
        }
        self.docs.insert(
            id,
            DocVector {
                order,
                server: server.to_owned(),
                terms: counts.into_iter().collect(),
                len: len.max(1.0),
            },
        );
    }

    pub fn remove(&mut self, id: EntryId) {
        if let Some(old) = self.docs.remove(&id) {
            for (tid, _) in old.terms {
                self.postings[tid as usize].remove(&id);
            }
        }
    }

    /// IDF over live tools (the `1 +` keeps it positive for a term in every tool).
    fn idf(&self, tid: u32) -> f32 {
        let n = self.docs.len() as f32;
        let df = self.postings[tid as usize].len() as f32;
        (1.0 + (n - df + 0.5) / (df + 0.5)).ln()
    }

    /// Re-ranks `first` (first-pass results, best first) with the top terms of its best
    /// `fb.docs` entries; tools that contain those terms but missed the first pass join as
    /// candidates. `query_terms` are left out of the expansion (the first pass scored them),
    /// `server` filters joining candidates as the first pass was filtered. `scale` is the
    /// first-pass text score the expansion is measured against.
    pub fn rerank(
        &self,
        first: &[Scored],
        query_terms: &[String],
        server: Option<&str>,
        scale: f32,
        fb: Feedback,
    ) -> Vec<Scored> {
        let mut out: Vec<Scored> = first.to_vec();
        let expansion = self.expansion(first, query_terms, fb);
        if expansion.is_empty() || fb.weight <= 0.0 {
            return out;
        }
        // Expansion score per tool: Σ weight(t) · saturated tf(t) · idf(t).
        let mut extra: BTreeMap<EntryId, f32> = BTreeMap::new();
        for &(tid, w) in &expansion {
            let idf = self.idf(tid);
            for id in &self.postings[tid as usize] {
                let Some(doc) = self.docs.get(id) else {
                    continue;
                };
                if server.is_some_and(|s| s != doc.server) {
                    continue;
                }
                let tf = doc
                    .terms
                    .binary_search_by_key(&tid, |(t, _)| *t)
                    .map_or(0.0, |i| doc.terms[i].1);
                let sat = tf / (tf + 0.5 + doc.len / 16.0);
                *extra.entry(*id).or_default() += w * sat * idf;
            }
        }
        let max = extra.values().copied().fold(0.0_f32, f32::max);
        if max <= 0.0 {
            return out;
        }
        let k = fb.weight * scale / max;
        for s in &mut out {
            if let Some(e) = extra.remove(&s.id) {
                s.score += k * e;
            }
        }
        for (id, e) in extra {
            if let Some(doc) = self.docs.get(&id) {
                out.push(Scored {
                    id,
                    order: doc.order,
                    score: k * e,
                });
            }
        }
        out.sort_by(|a, b| b.score.total_cmp(&a.score).then(a.order.cmp(&b.order)));
        out
    }

    /// The `fb.terms` best expansion terms and their weights (summing to 1): each feedback
    /// tool contributes its terms' tf · idf share, weighted by its first-pass score.
    fn expansion(&self, first: &[Scored], query_terms: &[String], fb: Feedback) -> Vec<(u32, f32)> {
        let skip: BTreeSet<u32> = query_terms
            .iter()
            .filter_map(|t| self.ids.get(t).copied())
            .collect();
        let top = first.iter().take(fb.docs);
        let best = first.first().map_or(0.0, |s| s.score);
        if best <= 0.0 {
            return Vec::new();
        }
        let mut weights: BTreeMap<u32, f32> = BTreeMap::new();
        for s in top {
            let Some(doc) = self.docs.get(&s.id) else {
                continue;
            };
            let dw = s.score / best;
            let norm: f32 = doc.terms.iter().map(|&(t, tf)| tf * self.idf(t)).sum();
            if norm <= 0.0 {
                continue;
            }
            for &(tid, tf) in &doc.terms {
                if skip.contains(&tid) || self.postings[tid as usize].len() < 2 {
                    continue;
                }
                *weights.entry(tid).or_default() += dw * tf * self.idf(tid) / norm;
            }
        }
        let mut ranked: Vec<(u32, f32)> = weights.into_iter().collect();
        ranked.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
        ranked.truncate(fb.terms);
        let total: f32 = ranked.iter().map(|(_, w)| w).sum();
        if total > 0.0 {
            for (_, w) in &mut ranked {
                *w /= total;
            }
        }
        ranked
    }
}
