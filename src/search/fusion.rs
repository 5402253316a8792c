//! Fusing rankings: the lexical ranking with each tool's cosine (static tier: min-max;
//! transformer tier: z-scores, with the static cosine as a third score). Pure over its
//! inputs; ties break by catalog order.

use std::collections::HashMap;

use super::collector::Ranked;
use super::named::NamedShare;
use super::semantic::Vectors;
use super::{Explained, Parts};
use crate::catalog::EntryId;

/// Fusion looks at the best this many tools of each ranking (more if the caller asks for
/// more): a tool below both lists' first hundred cannot reach a page of results.
pub(super) const FUSION_DEPTH: usize = 100;

/// How [`fuse`] combines the two scores.
#[derive(Debug, Clone, Copy)]
pub(super) struct Fusion<'a> {
    /// Share of the vector score, clamped to 0..=1.
    pub(super) weight: f32,
    /// z-scores (true) or min-max (false).
    pub(super) zscore: bool,
    /// Least cosine of a tool found by its vector alone.
    pub(super) floor: f32,
    /// Per tool, its share of the query's named things, and the bonus for all of them.
    pub(super) named: Option<(&'a NamedShare, f32)>,
}

/// A third score for [`fuse`]: the static tier's cosines beside the transformer's.
#[derive(Debug, Clone, Copy)]
pub(super) struct Static<'a> {
    /// The static tier's vectors (their own row order).
    pub(super) vectors: &'a Vectors,
    /// Cosine per row of `vectors`, NaN for rows filtered out.
    pub(super) cosines: &'a [f32],
    /// Share of the static z-score (taken from the lexical share).
    pub(super) weight: f32,
}

/// The shares of a fusion's engines in the fused score (what `search --explain` prints).
pub(super) fn shares(fusion: Fusion<'_>, statics: f32, named: f32) -> Parts {
    let vector = fusion.weight.clamp(0.0, 1.0);
    let statics = statics.clamp(0.0, 1.0 - vector);
    Parts {
        lexical: 1.0 - vector - statics,
        vector,
        statics,
        named,
        usage: 0.0,
    }
}

/// Fuses a lexical ranking with every tool's cosine (`cosines`, row order of `vectors`, NaN
/// for rows filtered out; see [`SearchIndex::explain_with`]).
pub(super) fn fuse(
    lexical: &[Ranked],
    vectors: &Vectors,
    cosines: &[f32],
    fusion: Fusion<'_>,
    statics: Option<Static<'_>>,
    depth: usize,
    limit: usize,
) -> Vec<Explained> {
    // The bonus of a tool holding the query's named things (see `named`).
    let named_score = |id: EntryId| -> f32 {
        fusion
            .named
            .map_or(0.0, |(share, w)| w * share.get(&id).copied().unwrap_or(0.0))
    };
    let weight = fusion.weight.clamp(0.0, 1.0);
    let static_weight = statics.map_or(0.0, |s| s.weight.clamp(0.0, 1.0 - weight));
    let lexical_weight = 1.0 - weight - static_weight;
    // The static cosine of a tool as a z-score over the compared tools (0 when unknown).
    let static_z = statics.map(|s| (s, Moments::of(s.cosines.iter().copied(), 0)));
    let static_score = |id: EntryId| -> f32 {
        let Some((s, moments)) = static_z else {
            return 0.0;
        };
        match s.vectors.row_of(id).and_then(|row| s.cosines.get(row)) {
            Some(&c) if !c.is_nan() => static_weight * moments.z(c),
            _ => 0.0,
        }
    };
    // The best `depth` rows by cosine, best first (ties by catalog order).
    let mut by_cosine: Vec<usize> = (0..cosines.len())
        .filter(|&row| !cosines[row].is_nan())
        .collect();
    let by_rank = |&a: &usize, &b: &usize| {
        cosines[b]
            .total_cmp(&cosines[a])
            .then(vectors.entry(a).1.cmp(&vectors.entry(b).1))
    };
    if by_cosine.len() > depth {
        by_cosine.select_nth_unstable_by(depth, by_rank);
        by_cosine.truncate(depth);
    }
    by_cosine.sort_unstable_by(by_rank);
    // Min-max per query. Lexical: the lowest is 0 (a tool matching no word), so divide by
    // the best. Cosine: between the lowest and highest compared. Measured against z-scores
    // and against min-max over only the first `depth` of each list: z-scores within ±0.005
    // R@5, first-`depth` min-max 0.02 lower on MetaTool.
    let best_lexical = lexical.first().map_or(0.0, |r| r.score);
    let (low, high) = cosines
        .iter()
        .filter(|c| !c.is_nan())
        .fold((f32::INFINITY, f32::NEG_INFINITY), |(lo, hi), &c| {
            (lo.min(c), hi.max(c))
        });
    // z-scores (the transformer tier; measured best for it in issue 14): each score minus
    // its mean over the compared tools, over its standard deviation. Lexical scores of
    // tools outside the list count as 0, and the shift of the lexical mean is the same for
    // every tool, so it is left out: a tool with no word and an average cosine scores 0.
    let (lex_moments, cos_moments) = if fusion.zscore {
        let cos = Moments::of(cosines.iter().copied(), 0);
        let compared = cosines.iter().filter(|c| !c.is_nan()).count();
        let lex = Moments::of(lexical.iter().map(|r| r.score), compared);
        (lex, cos)
    } else {
        (Moments::default(), Moments::default())
    };
    let lex_norm = |score: f32| {
        if fusion.zscore {
            // The shift by the mean is the same for every tool: left out (see above).
            lex_moments.scaled(score)
        } else if best_lexical > 0.0 {
            score / best_lexical
        } else {
            0.0
        }
    };
    let vec_norm = |cosine: f32| {
        if fusion.zscore {
            cos_moments.z(cosine)
        } else if high > low {
            (cosine - low) / (high - low)
        } else {
            0.0
        }
    };
    let vector_rank: HashMap<usize, usize> = by_cosine
        .iter()
        .enumerate()
        .map(|(rank, &row)| (row, rank + 1))
        .collect();
    let mut in_lexical: Vec<usize> = Vec::with_capacity(lexical.len());
    let mut out: Vec<(u64, Explained)> = Vec::with_capacity(lexical.len() + by_cosine.len());
    for (rank, r) in lexical.iter().enumerate() {
        let id = r.entry_id();
        let row = vectors.row_of(id).filter(|&row| row < cosines.len());
        let vector = row
            .map(|row| (cosines[row], vector_rank.get(&row).copied()))
            .filter(|(c, _)| !c.is_nan());
        if let Some(row) = row {
            in_lexical.push(row);
        }
        let v = vector.map_or(0.0, |(c, _)| vec_norm(c));
        out.push((
            r.order,
            Explained::of(
                id,
                Parts {
                    lexical: lexical_weight * lex_norm(r.score),
                    vector: weight * v,
                    statics: static_score(id),
                    named: named_score(id),
                    usage: 0.0,
                },
                Some((r.score, rank + 1)),
                vector,
            ),
        ));
    }
    for (rank, &row) in by_cosine.iter().enumerate() {
        if in_lexical.contains(&row) || cosines[row] < fusion.floor {
            continue;
        }
        let (id, order) = vectors.entry(row);
        out.push((
            order,
            Explained::of(
                id,
                Parts {
                    lexical: 0.0,
                    vector: weight * vec_norm(cosines[row]),
                    statics: static_score(id),
                    named: named_score(id),
                    usage: 0.0,
                },
                None,
                Some((cosines[row], Some(rank + 1))),
            ),
        ));
    }
    out.sort_unstable_by(|(ao, a), (bo, b)| b.score.total_cmp(&a.score).then(ao.cmp(bo)));
    out.truncate(limit);
    out.into_iter().map(|(_, e)| e).collect()
}

/// Mean and standard deviation of one score over the compared tools: what a z-score needs.
#[derive(Debug, Clone, Copy, Default)]
pub(super) struct Moments {
    mean: f32,
    sd: f32,
}

impl Moments {
    /// Over `scores` (NaN: not compared, skipped), counted as at least `n` values with the
    /// missing ones 0 (tools outside a lexical ranking matched no word).
    pub(super) fn of(scores: impl Iterator<Item = f32> + Clone, n: usize) -> Moments {
        let compared = scores.filter(|c| !c.is_nan());
        let count = compared.clone().count();
        let n = n.max(count).max(1) as f64;
        let mean = compared.clone().map(f64::from).sum::<f64>() / n;
        let missing = n - count as f64;
        let var = (compared.map(|c| (f64::from(c) - mean).powi(2)).sum::<f64>()
            + missing * mean * mean)
            / n;
        Moments {
            mean: mean as f32,
            sd: var.sqrt() as f32,
        }
    }

    /// `score` as a z-score (0 when every score is the same).
    pub(super) fn z(self, score: f32) -> f32 {
        if self.sd > 0.0 {
            (score - self.mean) / self.sd
        } else {
            0.0
        }
    }

    /// `score` over the standard deviation, not shifted (0 when every score is the same).
    pub(super) fn scaled(self, score: f32) -> f32 {
        if self.sd > 0.0 { score / self.sd } else { 0.0 }
    }
}
