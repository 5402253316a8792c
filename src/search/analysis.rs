//! Text analysis shared by indexing and querying: identifier-aware word splitting, character
//! bigrams for scripts written without spaces, and the compact keys used for exact names.
//!
//! The same analyzers run on documents and on queries, so a query term and an indexed term
//! always agree on case, splitting and stemming.

use tantivy::tokenizer::{
    Language, Stemmer, StopWordFilter, TextAnalyzer, Token, TokenStream, Tokenizer,
    WhitespaceTokenizer,
};

/// Analyzer names registered on the index.
pub(crate) const IDENT: &str = "mcpd_ident";
pub(crate) const TEXT: &str = "mcpd_text";
pub(crate) const PLAIN: &str = "mcpd_plain";
pub(crate) const PREFIX: &str = "mcpd_prefix";
/// Topic names, as `concepts` writes them: one per space-separated word.
pub(crate) const TOPICS: &str = "mcpd_topics";

/// Words of a request that frame it rather than name a capability ("can you help me ..."):
/// dropped from queries only, never from documents. Action verbs (`find`, `get`, `list`,
/// `show`, `search`) are not here: in a tool catalog they carry meaning.
const QUERY_FILLER: &[&str] = &[
    "about",
    "also",
    "any",
    "anything",
    "assist",
    "assistance",
    "could",
    "can",
    "do",
    "does",
    "hello",
    "help",
    "hey",
    "hi",
    "how",
    "i",
    "im",
    "interested",
    "just",
    "know",
    "let",
    "like",
    "looking",
    "me",
    "mine",
    "my",
    "myself",
    "need",
    "please",
    "provide",
    "should",
    "so",
    "some",
    "someone",
    "something",
    "tell",
    "thank",
    "thanks",
    "there",
    "want",
    "way",
    "we",
    "what",
    "whats",
    "would",
    "you",
    "your",
];

fn stop_words(query: bool) -> StopWordFilter {
    let mut words: Vec<String> = Vec::new();
    words.extend(ENGLISH_STOP_WORDS.iter().map(|w| (*w).to_owned()));
    if query {
        words.extend(QUERY_FILLER.iter().map(|w| (*w).to_owned()));
    }
    StopWordFilter::remove(words)
}

/// tantivy's English list (Lucene's), repeated so query filler can be added to it.
const ENGLISH_STOP_WORDS: &[&str] = &[
    "a", "an", "and", "are", "as", "at", "be", "but", "by", "for", "if", "in", "into", "is", "it",
    "no", "not", "of", "on", "or", "such", "that", "the", "their", "then", "there", "these",
    "they", "this", "to", "was", "will", "with",
];

/// Stemmed words without English stop words: descriptions, titles, server text.
pub(crate) fn text_analyzer(query: bool) -> TextAnalyzer {
    TextAnalyzer::builder(WordTokenizer::default())
        .filter(stop_words(query))
        .filter(Stemmer::new(Language::English))
        .build()
}

/// Topic names as written by `concepts`, split on spaces only.
pub(crate) fn topics_analyzer() -> TextAnalyzer {
    TextAnalyzer::builder(WhitespaceTokenizer::default()).build()
}

/// Unstemmed words without stop words: the exact surface forms.
pub(crate) fn plain_analyzer(query: bool) -> TextAnalyzer {
    TextAnalyzer::builder(WordTokenizer::default())
        .filter(stop_words(query))
        .build()
}

/// Stemmed identifier parts; stop words kept in documents (`to`, `all` are parts of names)
/// and weighed by their rarity across all fields (shared IDF).
pub(crate) fn ident_analyzer(query: bool) -> TextAnalyzer {
    let filler: Vec<String> = if query {
        QUERY_FILLER.iter().map(|w| (*w).to_owned()).collect()
    } else {
        Vec::new()
    };
    TextAnalyzer::builder(WordTokenizer::default())
        .filter(StopWordFilter::remove(filler))
        .filter(Stemmer::new(Language::English))
        .build()
}

/// Words cut to their first [`PREFIX_LEN`] characters: a coarse, language-agnostic stemmer
/// that joins `finance`/`financial`, `recommend`/`recommendation`.
pub(crate) fn prefix_analyzer(query: bool) -> TextAnalyzer {
    TextAnalyzer::builder(WordTokenizer { prefix: true })
        .filter(stop_words(query))
        .build()
}

/// Length of the truncation stem of [`prefix_analyzer`].
pub(crate) const PREFIX_LEN: usize = 5;

/// Splits text into lowercase words; identifiers are split at `_ - . /`, camelCase and
/// letter/digit boundaries, and the whole compound is kept too. Runs of CJK, kana, hangul or
/// Thai become overlapping character bigrams.
#[derive(Debug, Clone, Default)]
pub(crate) struct WordTokenizer {
    /// Emit words truncated to [`PREFIX_LEN`] characters (CJK bigrams unchanged).
    prefix: bool,
}

pub(crate) struct WordStream {
    tokens: Vec<Token>,
    next: usize,
}

impl TokenStream for WordStream {
    fn advance(&mut self) -> bool {
        if self.next < self.tokens.len() {
            self.next += 1;
            true
        } else {
            false
        }
    }

    fn token(&self) -> &Token {
        &self.tokens[self.next - 1]
    }

    fn token_mut(&mut self) -> &mut Token {
        &mut self.tokens[self.next - 1]
    }
}

impl Tokenizer for WordTokenizer {
    type TokenStream<'a> = WordStream;

    fn token_stream<'a>(&'a mut self, text: &'a str) -> WordStream {
        let mut tokens = Vec::new();
        for_each_word(text, |from, to, word| {
            let text = if self.prefix && !word.chars().any(is_bigram_script) {
                word.chars().take(PREFIX_LEN).collect()
            } else {
                word
            };
            let position = tokens.len();
            tokens.push(Token {
                offset_from: from,
                offset_to: to,
                position,
                text,
                position_length: 1,
            });
        });
        WordStream { tokens, next: 0 }
    }
}

/// Scripts written without spaces between words: indexed as character bigrams.
pub(crate) fn is_bigram_script(c: char) -> bool {
    matches!(c as u32,
        0x0E00..=0x0E7F      // Thai
        | 0x1100..=0x11FF    // Hangul jamo
        | 0x3040..=0x30FF    // Hiragana, Katakana
        | 0x3130..=0x318F    // Hangul compatibility jamo
        | 0x3400..=0x4DBF    // CJK extension A
        | 0x4E00..=0x9FFF    // CJK unified
        | 0xAC00..=0xD7AF    // Hangul syllables
        | 0xF900..=0xFAFF    // CJK compatibility
        | 0x20000..=0x2FFFF) // CJK extensions B+
}

/// Calls `emit(from, to, lowercase_word)` for every word of `text`, in order.
pub(crate) fn for_each_word(text: &str, mut emit: impl FnMut(usize, usize, String)) {
    let mut run_start: Option<usize> = None;
    let mut cjk_start: Option<usize> = None;
    for (i, c) in text.char_indices() {
        if is_bigram_script(c) {
            if let Some(start) = run_start.take() {
                emit_identifier(text, start, i, &mut emit);
            }
            cjk_start.get_or_insert(i);
        } else if c.is_alphanumeric() {
            if let Some(start) = cjk_start.take() {
                emit_bigrams(text, start, i, &mut emit);
            }
            run_start.get_or_insert(i);
        } else {
            if let Some(start) = run_start.take() {
                emit_identifier(text, start, i, &mut emit);
            }
            if let Some(start) = cjk_start.take() {
                emit_bigrams(text, start, i, &mut emit);
            }
        }
    }
    if let Some(start) = run_start {
        emit_identifier(text, start, text.len(), &mut emit);
    }
    if let Some(start) = cjk_start {
        emit_bigrams(text, start, text.len(), &mut emit);
    }
}

fn emit_bigrams(text: &str, from: usize, to: usize, emit: &mut impl FnMut(usize, usize, String)) {
    let chars: Vec<(usize, char)> = text[from..to].char_indices().collect();
    if chars.len() == 1 {
        emit(from, to, text[from..to].to_owned());
        return;
    }
    for pair in chars.windows(2) {
        let start = from + pair[0].0;
        let end = from + pair[1].0 + pair[1].1.len_utf8();
        emit(start, end, text[start..end].to_owned());
    }
}

/// One alphanumeric run: its camelCase / digit parts, then the whole run if it had several.
fn emit_identifier(
    text: &str,
    from: usize,
    to: usize,
    emit: &mut impl FnMut(usize, usize, String),
) {
    let run = &text[from..to];
    let parts = split_parts(run);
    let several = parts.len() > 1;
    for (start, end) in &parts {
        let part = run[*start..*end].to_lowercase();
        if keep(&part) {
            emit(from + start, from + end, part);
        }
    }
    if several {
        emit(from, to, run.to_lowercase());
    }
}

/// Drops single Latin letters (the `s` of `website's`); digits and other scripts stay.
fn keep(word: &str) -> bool {
    let mut chars = word.chars();
    match (chars.next(), chars.next()) {
        (Some(c), None) => !c.is_ascii_alphabetic(),
        (Some(_), Some(_)) => true,
        (None, _) => false,
    }
}

/// Byte ranges of the parts of an identifier: `HTMLParser2x` → `HTML`, `Parser`, `2`, `x`.
fn split_parts(run: &str) -> Vec<(usize, usize)> {
    let chars: Vec<(usize, char)> = run.char_indices().collect();
    let mut parts = Vec::new();
    let mut start = 0;
    for i in 1..chars.len() {
        let prev = chars[i - 1].1;
        let cur = chars[i].1;
        let next = chars.get(i + 1).map(|(_, c)| *c);
        let boundary = (prev.is_lowercase() && cur.is_uppercase())
            || (prev.is_uppercase() && cur.is_uppercase() && next.is_some_and(char::is_lowercase))
            || (prev.is_alphabetic() && cur.is_numeric())
            || (prev.is_numeric() && cur.is_alphabetic());
        if boundary {
            parts.push((start, chars[i].0));
            start = chars[i].0;
        }
    }
    parts.push((start, run.len()));
    parts
}

/// An identifier as words for the embedding model: `createPullRequest` and
/// `create_pull-request` both give `create Pull Request`-like word lists (the model's
/// tokenizer lowercases), so name parts embed as the words they are.
pub(crate) fn ident_words(ident: &str) -> String {
    let mut out = String::with_capacity(ident.len() + 8);
    for run in ident.split(|c: char| !c.is_alphanumeric()) {
        for (start, end) in split_parts(run) {
            if start < end {
                if !out.is_empty() {
                    out.push(' ');
                }
                out.push_str(&run[start..end]);
            }
        }
    }
    out
}

/// The compact form of a name for exact matching: lowercase letters and digits only, so
/// `github__create_issue`, `github/create_issue` and `GitHub create-issue` agree.
pub(crate) fn name_key(name: &str) -> String {
    name.chars()
        .filter(|c| c.is_alphanumeric())
        .flat_map(char::to_lowercase)
        .collect()
}

/// Number of identifier parts in `chunk` (`create_issue` → 2, `createIssue` → 2, `echo` → 1).
pub(crate) fn part_count(chunk: &str) -> usize {
    chunk
        .split(|c: char| !c.is_alphanumeric())
        .filter(|run| !run.is_empty())
        .map(|run| split_parts(run).len())
        .sum()
}

/// Runs `analyzer` over `text` and returns its tokens.
pub(crate) fn tokens(analyzer: &TextAnalyzer, text: &str) -> Vec<String> {
    let mut analyzer = analyzer.clone();
    let mut stream = analyzer.token_stream(text);
    let mut out = Vec::new();
    while let Some(token) = stream.next() {
        out.push(token.text.clone());
    }
    out
}

/// What the index files a [`name_key`] under: its hash, not its text (10k tools: 30k keys
/// were kept as `String`s twice, ~2 MiB). Two keys with one hash only make a query build a
/// clause for a term no tool has, which matches nothing.
pub(crate) fn key_hash(key: &str) -> u64 {
    use std::hash::{Hash, Hasher};
    let mut hasher = std::hash::DefaultHasher::new();
    key.hash(&mut hasher);
    hasher.finish()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(text: &str) -> Vec<String> {
        let mut out = Vec::new();
        for_each_word(text, |_, _, w| out.push(w));
        out
    }

    #[test]
    fn splits_identifiers_and_keeps_the_whole() {
        assert_eq!(words("create_issue"), ["create", "issue"]);
        assert_eq!(
            words("HTMLParser2x"),
            ["html", "parser", "2", "htmlparser2x"]
        );
        assert_eq!(words("FinanceTool"), ["finance", "tool", "financetool"]);
        assert_eq!(words("website's"), ["website"]);
    }

    #[test]
    fn cjk_becomes_bigrams() {
        assert_eq!(words("天气预报"), ["天气", "气预", "预报"]);
        assert_eq!(words("查 天"), ["查", "天"]);
        assert_eq!(words("get天气"), ["get", "天气"]);
    }

    #[test]
    fn name_keys_ignore_separators_and_case() {
        assert_eq!(name_key("github__create_issue"), "githubcreateissue");
        assert_eq!(name_key("GitHub/create-issue"), "githubcreateissue");
        assert_eq!(part_count("create_issue"), 2);
        assert_eq!(part_count("echo"), 1);
    }
}
