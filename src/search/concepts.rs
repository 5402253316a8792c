//! Topics: a bridge between a request and a tool that share a subject but no word.
//!
//! A lexical index cannot match `bitcoin price` to "real-time financial insights": one
//! in five MetaTool queries shares no word with the tool it wants. The Empath lexicon
//! (Fast et al. 2016, MIT; `lexicon/empath.tsv`) groups 7,643 everyday English words into
//! 194 topics (`money`, `shopping`, `vacation`, `computer`, ...). Every word of a tool and of a
//! query is mapped to its topics (stemmed, so inflections agree), and the topics are matched
//! as terms of their own field at a small weight: a shared topic lifts a tool, a shared word
//! still counts far more. A list of plain data, not a model: same words, same topics.

use std::collections::HashMap;
use std::sync::LazyLock;

use tantivy::tokenizer::{TextAnalyzer, TokenStream};

use super::analysis::{self, tokens};

/// The lexicon: one topic per line, its name then its words, tab-separated.
const EMPATH: &str = include_str!("lexicon/empath.tsv");

/// A query takes its most frequent topics only: each topic is one more posting list to walk,
/// and a long request touches dozens of topics through incidental words.
pub(crate) const MAX_QUERY_TOPICS: usize = 12;

/// Word stems (as the text analyzer makes them) to topic names.
struct Lexicon {
    topics: Vec<&'static str>,
    by_stem: HashMap<String, Vec<u16>>,
}

static LEXICON: LazyLock<Lexicon> = LazyLock::new(|| {
    let analyzer = analysis::text_analyzer(false);
    let mut topics = Vec::new();
    let mut by_stem: HashMap<String, Vec<u16>> = HashMap::new();
    for line in EMPATH.lines() {
        let mut cells = line.split('\t');
        let Some(name) = cells.next().filter(|n| !n.is_empty()) else {
            continue;
        };
        let Ok(topic) = u16::try_from(topics.len()) else {
            break;
        };
        topics.push(name);
        // The topic's own name is one of its words (`real_estate` → `real`, `estate`).
        for word in cells.chain(std::iter::once(name)) {
            for stem in tokens(&analyzer, word) {
                let entry = by_stem.entry(stem).or_default();
                if !entry.contains(&topic) {
                    entry.push(topic);
                }
            }
        }
    }
    Lexicon { topics, by_stem }
});

/// Whether an analyzed term is an everyday English word (in the lexicon): such a word is
/// a topic, not a name (`named` skips it unless it is written as one).
pub(crate) fn is_everyday(term: &str) -> bool {
    LEXICON.by_stem.contains_key(term)
}

/// The topics of already-analyzed terms, one per occurrence (a tool that says `stock` and
/// `financial` is more about money than one that says `price` once).
fn topic_ids<'a>(terms: impl IntoIterator<Item = &'a str>) -> impl Iterator<Item = u16> {
    let lexicon = &*LEXICON;
    terms
        .into_iter()
        .filter_map(|t| lexicon.by_stem.get(t))
        .flatten()
        .copied()
}

/// The text of a tool's topic field: its topic names, space-separated, repeated as often as
/// its words name them. Streams the tokens without collecting them: this runs beside the
/// indexing thread, and allocations there contend for the allocator.
pub(crate) fn document_topics(analyzer: &mut TextAnalyzer, text: &str) -> String {
    let lexicon = &*LEXICON;
    let mut out = String::new();
    let mut stream = analyzer.token_stream(text);
    while let Some(token) = stream.next() {
        for id in topic_ids([token.text.as_str()]) {
            if !out.is_empty() {
                out.push(' ');
            }
            out.push_str(lexicon.topics[usize::from(id)]);
        }
    }
    out
}

/// A query's topics, most often named first (ties in lexicon order), at most
/// [`MAX_QUERY_TOPICS`].
pub(crate) fn query_topics(terms: &[String]) -> Vec<(&'static str, u32)> {
    let lexicon = &*LEXICON;
    let mut counts: Vec<(u16, u32)> = Vec::new();
    for id in topic_ids(terms.iter().map(String::as_str)) {
        match counts.iter_mut().find(|(t, _)| *t == id) {
            Some((_, n)) => *n += 1,
            None => counts.push((id, 1)),
        }
    }
    counts.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
    counts
        .into_iter()
        .take(MAX_QUERY_TOPICS)
        .map(|(id, n)| (lexicon.topics[usize::from(id)], n))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_lexicon_loads_every_topic() {
        assert_eq!(LEXICON.topics.len(), 194);
        assert!(LEXICON.by_stem.len() > 5_000, "{}", LEXICON.by_stem.len());
    }

    #[test]
    fn words_without_a_shared_stem_share_a_topic() {
        let mut analyzer = analysis::text_analyzer(false);
        let tool = document_topics(&mut analyzer, "Real-time financial insights");
        let query = query_topics(&tokens(&analyzer, "the price of this stock"));
        assert!(
            query.iter().any(|(t, _)| tool.split(' ').any(|d| d == *t)),
            "tool {tool:?}, query {query:?}"
        );
        assert!(tool.split(' ').any(|t| t == "money"), "{tool:?}");
    }

    #[test]
    fn query_topics_are_bounded_and_ordered_by_count() {
        let analyzer = analysis::text_analyzer(true);
        let many = "money bank shop travel beach hotel computer music sport weather food law \
                    school car phone dog wedding war art dance";
        let topics = query_topics(&tokens(&analyzer, many));
        assert_eq!(topics.len(), MAX_QUERY_TOPICS);
        let again = query_topics(&tokens(&analyzer, many));
        assert_eq!(topics, again);
        assert!(query_topics(&tokens(&analyzer, "zzzq")).is_empty());
    }
}
