//! Named things in a query (issue 21, item 2): words that name a server, or two words
//! joined that name a tool, a server or a parameter ("Hey Gen" for a `heygen` server), or rare words written as names ("the board
//! game 'Catan'", "my MTNA servers"). Embeddings blur such words into word pieces, so the
//! fused ranking lost tools that words alone rank first; the tools holding a query's named
//! things get a bonus of their own in the fusion ([`Boosts::named`]), per query, instead of
//! the one global lexical share deciding for every query.

use std::collections::HashMap;

use tantivy::query::{BooleanQuery, ConstScoreQuery, Occur, Query, TermQuery};
use tantivy::schema::{Field, IndexRecordOption};
use tantivy::{Searcher, Term};

use super::analysis::{name_key, tokens};
use super::collector::TopRanked;
use super::{Boosts, SearchIndex, concepts};
use crate::catalog::EntryId;

/// A word is rare when at most 1/this of the tools hold it (200 tools: 2; 10k: 100)...
const RARE_SHARE: u64 = 100;
/// ...or at most this many, whatever the catalog's size.
const RARE_MIN: u64 = 2;
/// Shorter words are never named things (`go`, `ai`: too many meanings).
const MIN_CHARS: usize = 3;
/// At most this many named things per query.
const MAX_NAMED: usize = 8;

/// The named things of one query: each is the (field, term) pairs it was found rare in.
#[derive(Debug, Default, Clone)]
pub(super) struct Named {
    things: Vec<(String, Vec<(Field, String)>)>,
}

impl Named {
    pub(super) fn is_empty(&self) -> bool {
        self.things.is_empty()
    }

    /// The named words, for `search --explain` and the bench.
    pub(super) fn words(&self) -> Vec<String> {
        self.things.iter().map(|(w, _)| w.clone()).collect()
    }
}

impl SearchIndex {
    /// How much of `query` names things, in [0, 1]: its named things over its content
    /// words (analyzed: stop words and request framing dropped).
    pub(super) fn nameness(&self, named: &Named, query: &str) -> f32 {
        if named.is_empty() {
            return 0.0;
        }
        let content = tokens(&self.analyzers.text, query).len().max(1);
        (named.things.len() as f32 / content as f32).min(1.0)
    }
}

/// Per tool, the share (0..=1) of the query's named things it holds.
pub(super) type NamedShare = HashMap<EntryId, f32>;

impl SearchIndex {
    /// Finds the query's named things: a word that a server's name holds, or two adjacent
    /// words joined (`Hey Gen` → `heygen`) that a tool, server or parameter name holds, and
    /// few tools do (everyday words only when joined); or a word
    /// written as a name (quoted, capitalised after the first word, all capitals, with a
    /// digit) that few tools' descriptions hold.
    pub(super) fn named(&self, searcher: &Searcher, query: &str) -> Named {
        let b: &Boosts = &self.boosts;
        if b.named <= 0.0 && b.static_named <= 0.0 {
            return Named::default();
        }
        let docs = searcher.num_docs();
        if docs == 0 {
            return Named::default();
        }
        let rare = (docs / RARE_SHARE).max(RARE_MIN);
        let f = &self.fields;
        let a = &self.analyzers;
        let is_rare = |field: Field, text: &str| {
            let n = searcher
                .doc_freq(&Term::from_field_text(field, text))
                .unwrap_or(0);
            n > 0 && n <= rare
        };
        let words: Vec<&str> = query.split_whitespace().collect();
        let mut things: Vec<(String, Vec<(Field, String)>)> = Vec::new();
        let mut push = |word: String, pairs: Vec<(Field, String)>| {
            if !pairs.is_empty()
                && things.len() < MAX_NAMED
                && !things.iter().any(|(w, _)| *w == word)
            {
                things.push((word, pairs));
            }
        };
        // Names: each word that is not an everyday word, and each pair of adjacent words
        // joined (`Hey Gen` → `heygen`).
        let joined = words
            .windows(2)
            .map(|pair| (format!("{}{}", name_key(pair[0]), name_key(pair[1])), true));
        let singles = words.iter().map(|w| ((*w).to_owned(), false));
        for (word, pair) in singles.chain(joined) {
            for term in tokens(&a.ident, &word) {
                if term.chars().count() < MIN_CHARS || !pair && concepts::is_everyday(&term) {
                    continue;
                }
                // A single word must name a server (`github`, `heygen`): single words in
                // tool and parameter names are mostly everyday nouns and verbs
                // (`avatar_video`), which the other engines weigh already.
                let fields: &[Field] = if pair {
                    &[f.name, f.server, f.params]
                } else {
                    &[f.server]
                };
                let pairs: Vec<(Field, String)> = (fields.iter().copied())
                    .filter(|&field| is_rare(field, &term))
                    .map(|field| (field, term.clone()))
                    .collect();
                push(term, pairs);
            }
        }
        // Rare words written as names, anywhere in a tool's description.
        for (i, word) in words.iter().enumerate() {
            if !written_as_name(word, i == 0) {
                continue;
            }
            for term in tokens(&a.plain, word) {
                if term.chars().count() < MIN_CHARS {
                    continue;
                }
                let pairs: Vec<(Field, String)> = [f.description_plain]
                    .into_iter()
                    .filter(|&field| is_rare(field, &term))
                    .map(|field| (field, term.clone()))
                    .collect();
                push(term, pairs);
            }
        }
        Named { things }
    }

    /// Per tool holding any of `named`, the share of them it holds (tools of `server` only).
    pub(super) fn named_share(
        &self,
        searcher: &Searcher,
        named: &Named,
        server: Option<&str>,
        depth: usize,
    ) -> NamedShare {
        if named.is_empty() {
            return NamedShare::new();
        }
        let clauses: Vec<(Occur, Box<dyn Query>)> = (named.things.iter())
            .map(|(_, pairs)| {
                let any: Vec<(Occur, Box<dyn Query>)> = (pairs.iter())
                    .map(|(field, text)| {
                        let term = Term::from_field_text(*field, text);
                        let q: Box<dyn Query> =
                            Box::new(TermQuery::new(term, IndexRecordOption::Basic));
                        (Occur::Should, q)
                    })
                    .collect();
                let q: Box<dyn Query> =
                    Box::new(ConstScoreQuery::new(Box::new(BooleanQuery::new(any)), 1.0));
                (Occur::Should, q)
            })
            .collect();
        let mut query: Box<dyn Query> = Box::new(BooleanQuery::new(clauses));
        if let Some(filter) = self.server_filter(server) {
            query = Box::new(BooleanQuery::new(vec![
                (Occur::Must, query),
                (Occur::Must, filter),
            ]));
        }
        let collector = TopRanked {
            limit: depth,
            order_field: "order",
        };
        let total = named.things.len() as f32;
        match searcher.search(query.as_ref(), &collector) {
            Ok(ranked) => ranked
                .into_iter()
                .map(|r| (r.entry_id(), (r.score / total).min(1.0)))
                .collect(),
            Err(error) => {
                tracing::warn!(%error, "named-thing search failed");
                NamedShare::new()
            }
        }
    }
}

/// Whether `word` is written as a name: quoted, all capitals (two letters or more), holding
/// a digit beside letters, or capitalised when it is not the query's first word.
fn written_as_name(word: &str, first: bool) -> bool {
    let quoted = word.starts_with(['\'', '"', '`', '“', '‘'])
        || word.ends_with(['\'', '"', '`', '”', '’']) && word.chars().count() > 2;
    let letters: Vec<char> = word.chars().filter(|c| c.is_alphabetic()).collect();
    if letters.is_empty() {
        return false;
    }
    let capitals = letters.len() >= 2 && letters.iter().all(|c| c.is_uppercase());
    let digit = word.chars().any(|c| c.is_ascii_digit());
    let capitalised = !first && letters[0].is_uppercase();
    quoted || capitals || digit || capitalised
}

#[cfg(test)]
mod tests {
    use super::written_as_name;

    #[test]
    fn names_are_told_by_how_they_are_written() {
        assert!(written_as_name("'Catan'", false));
        assert!(written_as_name("MTNA", false));
        assert!(written_as_name("Catan", false));
        assert!(written_as_name("s3", false));
        assert!(!written_as_name("Find", true));
        assert!(!written_as_name("board", false));
        assert!(!written_as_name("it's", false));
    }
}
