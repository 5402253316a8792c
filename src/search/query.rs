//! Building a query: the lexical ranking (BM25F over the fields, topics, and exact names)
//! from a query's text. Any text is a valid query; its size is bounded here
//! ([`MAX_QUERY_CHARS`], [`MAX_QUERY_TERMS`]) so a long query cannot cost more than a
//! short page.

use tantivy::query::{BooleanQuery, BoostQuery, ConstScoreQuery, Occur, Query, TermQuery};
use tantivy::schema::{Field, IndexRecordOption};
use tantivy::{Searcher, Term};

use super::analysis::{name_key, part_count, tokens};
use super::collector::{Ranked, TopRanked};
use super::{SearchIndex, concepts};

/// In a large catalog a topic held by more than 1/this of the tools is skipped at query time:
/// its IDF is at most ln 4, so it barely ranks, and walking its postings was most of the
/// topics' cost (10k tools: p50 311 µs with every topic, 145 µs without these; MetaTool
/// recall unchanged). "Large" is more than [`TOPIC_POSTINGS_FREE`] tools holding it.
const MAX_TOPIC_SHARE: u64 = 4;
/// Posting lists this short cost nothing worth saving, so small catalogs keep every topic.
const TOPIC_POSTINGS_FREE: u64 = 256;

/// Queries are cut to this many characters: a query is a request, not a document.
pub const MAX_QUERY_CHARS: usize = 512;
/// At most this many distinct terms per analyzer are looked up.
pub const MAX_QUERY_TERMS: usize = 64;
/// Longest run of query words joined into one candidate exact name (`github create issue`).
const MAX_NAME_WORDS: usize = 4;
/// Score of a whole-name match: above anything text matching reaches, so it ranks first.
const EXACT_NAME_SCORE: f32 = 100.0;

/// A query's terms under one analyzer, the field giving their whole-tool document frequency,
/// and the (field, boost) pairs they are looked up in.
type QueryGroup<'a> = (Vec<String>, Field, &'a [(Field, f32)]);

impl SearchIndex {
    /// The lexical ranking: BM25F over the fields, topics and exact names.
    pub(super) fn lexical(&self, query: &str, limit: usize, server: Option<&str>) -> Vec<Ranked> {
        let searcher = self.reader.searcher();
        let mut clauses = self.text_clauses(&searcher, query);
        clauses.extend(self.name_clauses(query));
        let filter = self.server_filter(server);
        let query: Box<dyn Query> = match (clauses.is_empty(), filter) {
            (true, None) => return Vec::new(),
            (true, Some(filter)) => filter,
            (false, None) => Box::new(BooleanQuery::new(clauses)),
            (false, Some(filter)) => Box::new(BooleanQuery::new(vec![
                (
                    Occur::Must,
                    Box::new(BooleanQuery::new(clauses)) as Box<dyn Query>,
                ),
                (Occur::Must, filter),
            ])),
        };
        let collector = TopRanked {
            limit,
            order_field: "order",
        };
        match searcher.search(query.as_ref(), &collector) {
            Ok(ranked) => ranked,
            Err(error) => {
                tracing::warn!(%error, "search failed");
                Vec::new()
            }
        }
    }

    /// A clause that keeps the tools of `server` only (scoring 0), if one is given.
    pub(super) fn server_filter(&self, server: Option<&str>) -> Option<Box<dyn Query>> {
        server.map(|s| {
            let term = Term::from_field_text(self.fields.server_exact, s);
            let q: Box<dyn Query> = Box::new(ConstScoreQuery::new(
                Box::new(TermQuery::new(term, IndexRecordOption::Basic)),
                0.0,
            ));
            q
        })
    }

    /// One SHOULD clause per (field, distinct query term) that occurs in that field, weighted
    /// by the field's boost and, with `shared_idf`, rescaled so the term's IDF is the one over
    /// whole tools.
    fn text_clauses(&self, searcher: &Searcher, query: &str) -> Vec<(Occur, Box<dyn Query>)> {
        let b = &self.boosts;
        let f = &self.fields;
        let a = &self.analyzers;
        let docs = searcher.num_docs();
        let df = |term: &Term| searcher.doc_freq(term).unwrap_or(0).min(docs);
        // Stemmed words serve both their fields and the topics.
        let text_terms = tokens(&a.text, query);
        let topics = if b.topics > 0.0 {
            concepts::query_topics(&text_terms)
        } else {
            Vec::new()
        };
        let groups: [QueryGroup<'_>; 4] = [
            (
                tokens(&a.ident, query),
                f.all_ident,
                &[(f.name, b.name), (f.params, b.params), (f.server, b.server)],
            ),
            (
                text_terms,
                f.all_ident,
                &[
                    (f.title, b.title),
                    (f.description, b.description),
                    (f.param_text, b.param_text),
                    (f.enums, b.enums),
                    (f.server_text, b.server_text),
                ],
            ),
            (
                tokens(&a.plain, query),
                f.all_plain,
                &[(f.description_plain, b.description_plain)],
            ),
            (
                tokens(&a.prefix, query),
                f.all_prefix,
                &[
                    (f.name_prefix, b.name_prefix),
                    (f.description_prefix, b.description_prefix),
                ],
            ),
        ];
        let mut clauses: Vec<(Occur, Box<dyn Query>)> = Vec::new();
        for (terms, all, targets) in groups {
            for text in distinct(terms) {
                let df_all = df(&Term::from_field_text(all, &text));
                for &(field, boost) in targets {
                    if boost <= 0.0 {
                        continue;
                    }
                    let term = Term::from_field_text(field, &text);
                    let df_field = df(&term);
                    if df_field == 0 {
                        continue;
                    }
                    let boost = if b.shared_idf && df_all >= df_field {
                        boost * idf(df_all, docs) / idf(df_field, docs)
                    } else {
                        boost
                    };
                    let q = TermQuery::new(term, IndexRecordOption::WithFreqs);
                    clauses.push((Occur::Should, Box::new(BoostQuery::new(Box::new(q), boost))));
                }
            }
        }
        // A topic several query words name weighs more, sublinearly.
        for (topic, count) in topics {
            let term = Term::from_field_text(f.topics, topic);
            let n = df(&term);
            if n == 0 || (n > TOPIC_POSTINGS_FREE && n.saturating_mul(MAX_TOPIC_SHARE) > docs) {
                continue;
            }
            let q = TermQuery::new(term, IndexRecordOption::WithFreqs);
            let boost = b.topics * (count as f32).sqrt();
            clauses.push((Occur::Should, Box::new(BoostQuery::new(Box::new(q), boost))));
        }
        clauses
    }

    /// Whole-name matches: runs of up to [`MAX_NAME_WORDS`] query words, joined without
    /// separators, that equal a tool's name, qualified name or `server` + `tool`. A run must
    /// hold at least two name parts (`create_issue`, `github create issue`) unless it is the
    /// whole query, so a common word (`time`) does not outrank everything else.
    fn name_clauses(&self, query: &str) -> Vec<(Occur, Box<dyn Query>)> {
        let words: Vec<&str> = query
            .split_whitespace()
            .filter(|w| !name_key(w).is_empty())
            .take(MAX_QUERY_TERMS)
            .collect();
        let mut seen: Vec<String> = Vec::new();
        for start in 0..words.len() {
            let mut key = String::new();
            let mut parts = 0;
            for (n, word) in words[start..].iter().take(MAX_NAME_WORDS).enumerate() {
                key.push_str(&name_key(word));
                parts += part_count(word);
                let whole = start == 0 && n + 1 == words.len();
                if (parts >= 2 || whole)
                    && self
                        .key_counts
                        .contains_key(&super::analysis::key_hash(&key))
                    && !seen.contains(&key)
                {
                    seen.push(key.clone());
                }
            }
        }
        seen.into_iter()
            .map(|key| {
                let term = Term::from_field_text(self.fields.name_key, &key);
                let q = TermQuery::new(term, IndexRecordOption::Basic);
                let q: Box<dyn Query> =
                    Box::new(ConstScoreQuery::new(Box::new(q), EXACT_NAME_SCORE));
                (Occur::Should, q)
            })
            .collect()
    }
}

/// BM25's IDF, as tantivy computes it.
fn idf(doc_freq: u64, docs: u64) -> f32 {
    let x = (docs.saturating_sub(doc_freq) as f32 + 0.5) / (doc_freq as f32 + 0.5);
    (1.0 + x).ln()
}

/// The query cut to [`MAX_QUERY_CHARS`] characters.
pub(super) fn bounded(query: &str) -> &str {
    match query.char_indices().nth(MAX_QUERY_CHARS) {
        Some((end, _)) => &query[..end],
        None => query,
    }
}

/// Terms in first-seen order without repeats, at most [`MAX_QUERY_TERMS`].
fn distinct(terms: Vec<String>) -> Vec<String> {
    let mut out: Vec<String> = Vec::with_capacity(terms.len().min(MAX_QUERY_TERMS));
    for t in terms {
        if out.len() == MAX_QUERY_TERMS {
            break;
        }
        if !out.contains(&t) {
            out.push(t);
        }
    }
    out
}
