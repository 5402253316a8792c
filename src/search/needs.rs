//! A query's needs: the parts of a task that ask for different tools ("find the weather in
//! Paris. Also suggest a hotel there" asks for a weather tool and a travel tool).
//!
//! One mean-pooled vector of a two-need task sits between its two tools, so neither may
//! reach the first five; each need's own vector points at its tool. The split is by
//! sentences and by connectors that start a new request ("and also", "as well as",
//! "additionally"); a part without content words of its own ("Can you help me with
//! that?") stays with its neighbour, and a query with fewer than two such parts is one
//! need. The split is pure text (no index, no model); [`SearchIndex::rank`] (here) ranks
//! each need beside the whole query and combines the rankings. Measured in docs/search.md
//! ("Two-need queries").

use std::collections::{HashMap, HashSet};
use std::sync::OnceLock;

use tantivy::tokenizer::TextAnalyzer;

use super::analysis::{text_analyzer, tokens};
use super::fusion::FUSION_DEPTH;
use super::query::bounded;
use super::{Explained, Ranking, SearchIndex, Tier};
use crate::catalog::EntryId;

/// A part of a query counts as a need only with at least this many content words (words
/// that are neither English stop words nor request framing: `analysis::QUERY_FILLER`).
pub(crate) const MIN_NEED_WORDS: usize = 2;
/// At most this many needs per query: each costs a ranking (and a transformer pass).
pub const MAX_NEEDS: usize = 4;

/// Phrases that start a new request inside a sentence, matched on lowercase text with a
/// space or punctuation before them. Plain "and" is not one: "accounting and tax" is one
/// need, and cutting there too gained MetaTool multi R@5 only +0.002 (tuning half).
const CONNECTORS: &[&str] = &[
    "and also ",
    "and then ",
    "and additionally ",
    "as well as ",
    "along with ",
    "additionally",
    "in addition",
    "also ",
    "then ",
    "plus ",
];

/// A query's transformer vectors, made off the index ([`QueryEncoder::embed_query`]
/// (super::transformer::QueryEncoder::embed_query)): the whole query's and, when it has two
/// or more needs, each need's in the order of [`needs`].
#[derive(Debug, Clone, Default, PartialEq)]
pub struct QueryVectors {
    pub whole: Vec<f32>,
    pub needs: Vec<Vec<f32>>,
}

impl SearchIndex {
    /// [`SearchIndex::rank`] by the tools' text alone.
    ///
    /// A query of two or more needs ([`needs`]) in a tier with vectors is ranked whole and
    /// need by need; a tool scores its whole-query score plus [`Boosts::needs`]
    /// (super::Boosts::needs) times its best score over the needs, so a tool that one need
    /// asks for climbs even when the whole query's vector sits between two tools. A tool
    /// missing from a ranking counts that ranking's lowest score. Single-need queries rank
    /// as before.
    pub(super) fn rank_by_content(
        &self,
        query: &str,
        limit: usize,
        server: Option<&str>,
        model_query: Option<&QueryVectors>,
    ) -> Ranking {
        let query = bounded(query);
        let whole = model_query.map(|v| v.whole.as_slice());
        let parts = needs(query);
        if parts.len() < 2 || limit == 0 {
            return self.rank_one(query, limit, server, whole);
        }
        let depth = limit.max(FUSION_DEPTH);
        let mut ranking = self.rank_one(query, depth, server, whole);
        let weight = match ranking.tier {
            Tier::Words => 0.0,
            Tier::Static => self.boosts.static_needs,
            Tier::Transformer => self.boosts.needs,
        };
        if weight <= 0.0 {
            ranking.hits.truncate(limit);
            return ranking;
        }
        let vectors = model_query.filter(|v| v.needs.len() == parts.len());
        let lists: Vec<Vec<Explained>> = (parts.iter().enumerate())
            .map(|(i, need)| {
                let vector = vectors.map(|v| v.needs[i].as_slice());
                self.rank_one(need, depth, server, vector)
            })
            // A need ranked by another tier (the last transformer vectors landed between
            // the rankings) is not comparable: left out.
            .filter(|r| r.tier == ranking.tier)
            .map(|r| r.hits)
            .collect();
        ranking.hits = combine(&ranking.hits, &lists, weight, limit);
        self.judge(&mut ranking, query);
        ranking.needs = parts.iter().map(|p| (*p).to_owned()).collect();
        ranking
    }
}

/// The whole query's ranking and its needs' rankings as one, best `limit` first: each tool
/// scores its whole score plus `weight` times its best need score; ties (and tools in
/// several lists) keep the order they were first seen in, whole ranking first.
fn combine(
    whole: &[Explained],
    needs: &[Vec<Explained>],
    weight: f32,
    limit: usize,
) -> Vec<Explained> {
    let lowest = |list: &[Explained]| list.last().map_or(0.0, |e| e.score);
    let by_id: Vec<HashMap<EntryId, f32>> = needs
        .iter()
        .map(|list| list.iter().map(|e| (e.id, e.score)).collect())
        .collect();
    let mut seen: HashSet<EntryId> = HashSet::new();
    let all: Vec<Explained> = (whole.iter().chain(needs.iter().flatten()))
        .filter(|e| seen.insert(e.id))
        .copied()
        .collect();
    let whole_score: HashMap<EntryId, f32> = whole.iter().map(|e| (e.id, e.score)).collect();
    let whole_lowest = lowest(whole);
    let mut scored: Vec<(usize, Explained)> = (all.into_iter().enumerate())
        .map(|(order, mut e)| {
            let best_need = (by_id.iter().zip(needs))
                .map(|(scores, list)| scores.get(&e.id).copied().unwrap_or(lowest(list)))
                .fold(f32::NEG_INFINITY, f32::max);
            let own = whole_score.get(&e.id).copied().unwrap_or(whole_lowest);
            e.score = own + weight * best_need;
            (order, e)
        })
        .collect();
    scored.sort_by(|(ao, a), (bo, b)| b.score.total_cmp(&a.score).then(ao.cmp(bo)));
    scored.truncate(limit);
    scored.into_iter().map(|(_, e)| e).collect()
}

/// Which separators cut a query (benches compare them).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SplitRules {
    /// Cut at sentence ends (`. ? ! ;` followed by a space).
    pub sentences: bool,
    /// Cut before the [`CONNECTORS`].
    pub connectors: bool,
    /// Cut before ", and " and " and " too.
    pub and: bool,
    /// See [`MIN_NEED_WORDS`].
    pub min_words: usize,
}

impl Default for SplitRules {
    fn default() -> SplitRules {
        SplitRules {
            sentences: true,
            connectors: true,
            and: false,
            min_words: MIN_NEED_WORDS,
        }
    }
}

/// The needs of `query` under the default rules; one element (the whole query, trimmed)
/// when it has fewer than two.
pub fn needs(query: &str) -> Vec<&str> {
    needs_with(query, SplitRules::default())
}

/// [`needs`] under `rules`.
pub fn needs_with(query: &str, rules: SplitRules) -> Vec<&str> {
    let whole = query.trim();
    let cuts = cuts(whole, rules);
    let mut parts: Vec<(usize, usize)> = Vec::new();
    let mut start = 0;
    for cut in cuts.into_iter().chain([whole.len()]) {
        if cut > start {
            parts.push((start, cut));
        }
        start = cut;
    }
    // Built once: every search splits its query.
    static ANALYZER: OnceLock<TextAnalyzer> = OnceLock::new();
    let analyzer = ANALYZER.get_or_init(|| text_analyzer(true));
    let content = |&(from, to): &(usize, usize)| tokens(analyzer, &whole[from..to]).len();
    // A part without enough content words joins the part before it (the first joins the
    // next): "Can you help me with that?" belongs to the request it follows.
    let mut merged: Vec<(usize, usize)> = Vec::with_capacity(parts.len());
    let mut pending: Option<usize> = None;
    for part in parts {
        let part = (pending.take().unwrap_or(part.0), part.1);
        if content(&part) >= rules.min_words {
            merged.push(part);
        } else if let Some(last) = merged.last_mut() {
            last.1 = part.1;
        } else {
            pending = Some(part.0);
        }
    }
    if merged.len() < 2 {
        return vec![whole];
    }
    merged.truncate(MAX_NEEDS);
    merged
        .into_iter()
        .map(|(from, to)| whole[from..to].trim_matches(|c: char| c.is_whitespace() || c == ','))
        .filter(|p| !p.is_empty())
        .collect()
}

/// Byte offsets in `text` where a new part starts, ascending.
fn cuts(text: &str, rules: SplitRules) -> Vec<usize> {
    let lower = text.to_lowercase();
    // Lowercasing may change byte lengths outside ASCII: only cut when it did not.
    if lower.len() != text.len() {
        return if rules.sentences {
            sentence_cuts(text)
        } else {
            Vec::new()
        };
    }
    let mut cuts = if rules.sentences {
        sentence_cuts(text)
    } else {
        Vec::new()
    };
    let at_word_start = |i: usize| {
        i > 0
            && lower[..i]
                .chars()
                .next_back()
                .is_some_and(|c| c.is_whitespace() || c == ',' || c == '(')
    };
    let mut connectors: Vec<&str> = Vec::new();
    if rules.connectors {
        connectors.extend(CONNECTORS);
    }
    if rules.and {
        connectors.push("and ");
    }
    for phrase in connectors {
        let mut from = 0;
        while let Some(found) = lower[from..].find(phrase) {
            let i = from + found;
            if at_word_start(i) {
                cuts.push(i);
            }
            from = i + phrase.len();
        }
    }
    cuts.sort_unstable();
    cuts.dedup();
    // "and also": one cut, before "and", not a second one before "also".
    let mut kept: Vec<usize> = Vec::with_capacity(cuts.len());
    for cut in cuts {
        if kept
            .last()
            .is_some_and(|&k| text[k..cut].split_whitespace().count() <= 1 && cut > k)
        {
            continue;
        }
        kept.push(cut);
    }
    kept
}

/// Offsets just after a sentence end: `.`, `?`, `!` or `;` followed by whitespace.
fn sentence_cuts(text: &str) -> Vec<usize> {
    let mut cuts = Vec::new();
    let mut chars = text.char_indices().peekable();
    while let Some((_, c)) = chars.next() {
        if matches!(c, '.' | '?' | '!' | ';' | '。' | '？' | '！')
            && let Some(&(next, n)) = chars.peek()
            && n.is_whitespace()
        {
            cuts.push(next);
        }
    }
    cuts
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn single_need_queries_stay_whole() {
        for q in [
            "create github issue",
            "read a file",
            "I need help rewording my essay. Can you assist me with that?",
            "Hi! I need to know the surf conditions for Manly Beach in Sydney.",
            "courses that teach accounting and investment",
            "search and replace text in a file",
            "",
            "读取文件内容",
        ] {
            assert_eq!(needs(q), vec![q.trim()], "{q:?}");
        }
    }

    #[test]
    fn two_sentences_with_content_are_two_needs() {
        assert_eq!(
            needs(
                "Can you tell me if it will rain in London tomorrow? Also, suggest some popular cafes near the museums."
            ),
            vec![
                "Can you tell me if it will rain in London tomorrow?",
                "Also, suggest some popular cafes near the museums."
            ]
        );
    }

    #[test]
    fn connectors_split_a_sentence() {
        assert_eq!(
            needs("find trending news articles in tech, and also recommend music to listen to"),
            vec![
                "find trending news articles in tech",
                "and also recommend music to listen to"
            ]
        );
        assert_eq!(
            needs("download the latest release notes and then summarise the breaking changes"),
            vec![
                "download the latest release notes",
                "and then summarise the breaking changes"
            ]
        );
    }

    #[test]
    fn framing_sentences_join_their_neighbour() {
        assert_eq!(
            needs(
                "Hello! Please check the weather in Paris. Can you help? Then book a hotel room nearby."
            ),
            vec![
                "Hello! Please check the weather in Paris. Can you help?",
                "Then book a hotel room nearby."
            ]
        );
    }

    #[test]
    fn at_most_max_needs() {
        let q = "get the weather forecast. find cheap flights. book hotel rooms. rent electric cars. buy travel insurance.";
        assert_eq!(needs(q).len(), MAX_NEEDS);
    }
}
