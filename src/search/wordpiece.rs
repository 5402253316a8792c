//! The static tier's tokenizer: all-MiniLM-L6-v2's WordPiece over a compact vocabulary.
//!
//! `tokenizers::Tokenizer` keeps its vocabulary twice, as `HashMap<String, u32>` and the
//! reverse `HashMap<u32, String>`: 30,522 tokens cost ~5 MiB of heap for as long as the
//! process runs (issue 31). Here the tokens are one blob with an end offset per id and an
//! open-addressing table of ids by hash (~0.6 MiB), and the rest of the pipeline is the
//! crate's own: the special tokens split off the raw text as its `AddedVocabulary` does,
//! each other piece through its `BertNormalizer` and `BertPreTokenizer`, then WordPiece's
//! greedy longest match as `tokenizers::models::wordpiece` does it, without a `String` per
//! candidate. The unit tests compare it with the crate's `Tokenizer` on the same file.

use serde::Deserialize;
use serde::de::{MapAccess, Visitor};
use tokenizers::normalizers::BertNormalizer;
use tokenizers::pre_tokenizers::bert::BertPreTokenizer;
use tokenizers::{
    NormalizedString, Normalizer, OffsetReferential, OffsetType, PreTokenizedString, PreTokenizer,
};

/// What this module implements of a `tokenizer.json`; anything else is refused.
#[derive(Deserialize)]
struct File {
    added_tokens: Vec<Added>,
    normalizer: NormalizerConfig,
    pre_tokenizer: Kind,
    model: Model,
}

#[derive(Deserialize)]
struct Added {
    id: u32,
    content: String,
    #[serde(default)]
    single_word: bool,
    #[serde(default)]
    lstrip: bool,
    #[serde(default)]
    rstrip: bool,
    #[serde(default)]
    normalized: bool,
}

#[derive(Deserialize)]
struct Kind {
    #[serde(rename = "type")]
    kind: String,
}

#[derive(Deserialize)]
struct NormalizerConfig {
    #[serde(rename = "type")]
    kind: String,
    clean_text: bool,
    handle_chinese_chars: bool,
    strip_accents: Option<bool>,
    lowercase: bool,
}

#[derive(Deserialize)]
struct Model {
    #[serde(rename = "type")]
    kind: String,
    unk_token: String,
    continuing_subword_prefix: String,
    max_input_chars_per_word: usize,
    vocab: Tokens,
}

/// The vocabulary as read: every token's text appended to one blob in file order, with
/// its id and where it ends. No `String` per token is kept (30,522 of them were ~1 MiB more
/// at the model's load).
struct Tokens {
    blob: Vec<u8>,
    /// `(id, end in blob)` in file order.
    entries: Vec<(u32, u32)>,
}

impl<'de> Deserialize<'de> for Tokens {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Tokens, D::Error> {
        struct Entries;
        impl<'de> Visitor<'de> for Entries {
            type Value = Tokens;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("a map of token to id")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Tokens, A::Error> {
                let mut tokens = Tokens {
                    blob: Vec::new(),
                    entries: Vec::with_capacity(map.size_hint().unwrap_or(0)),
                };
                while let Some((token, id)) = map.next_entry::<String, u32>()? {
                    tokens.blob.extend_from_slice(token.as_bytes());
                    let end = u32::try_from(tokens.blob.len())
                        .map_err(|_| serde::de::Error::custom("vocabulary too large"))?;
                    tokens.entries.push((id, end));
                }
                Ok(tokens)
            }
        }
        deserializer.deserialize_map(Entries)
    }
}

/// Tokens by id in one blob, and a hash table from a token's bytes to its id.
struct Vocab {
    blob: Box<[u8]>,
    /// `ends[id]`: where token `id` ends in `blob` (it starts where `id - 1` ends).
    ends: Box<[u32]>,
    /// Open addressing, linear probing: `id + 1`, 0 for an empty slot.
    slots: Box<[u32]>,
}

/// FNV-1a over `prefix` then `rest`: the same value as over their concatenation, so a
/// continuation (`##` + piece) is looked up without building its string.
fn hash(prefix: &[u8], rest: &[u8]) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for &b in prefix.iter().chain(rest) {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0000_0100_0000_01b3);
    }
    h
}

impl Vocab {
    /// `tokens` must hold each id of `0..n` once.
    fn new(tokens: Tokens) -> Result<Vocab, String> {
        let Tokens { blob, entries } = tokens;
        let n = entries.len();
        if u32::try_from(n).is_err() {
            return Err("vocabulary too large".to_owned());
        }
        let in_order = entries
            .iter()
            .enumerate()
            .all(|(i, (id, _))| *id as usize == i);
        let (blob, ends) = if in_order {
            (blob, entries.into_iter().map(|(_, end)| end).collect())
        } else {
            // Listed in another order than by id: copied by id.
            let mut spans: Vec<(u32, u32, u32)> = Vec::with_capacity(n);
            let mut start = 0;
            for &(id, end) in &entries {
                spans.push((id, start, end));
                start = end;
            }
            spans.sort_unstable_by_key(|&(id, _, _)| id);
            if spans
                .iter()
                .enumerate()
                .any(|(i, (id, _, _))| *id as usize != i)
            {
                return Err("vocabulary ids are not 0..n, each once".to_owned());
            }
            let mut sorted = Vec::with_capacity(blob.len());
            let mut ends = Vec::with_capacity(n);
            for (_, start, end) in spans {
                sorted.extend_from_slice(&blob[start as usize..end as usize]);
                // As long as `blob`, which the reader checked fits in a u32.
                ends.push(sorted.len() as u32);
            }
            (sorted, ends)
        };
        let slots = vec![0u32; (n * 2).next_power_of_two().max(2)];
        let mut vocab = Vocab {
            blob: blob.into(),
            ends: ends.into(),
            slots: slots.into(),
        };
        let mask = vocab.slots.len() - 1;
        for id in 0..vocab.ends.len() {
            let token = vocab.token(id);
            let mut at = hash(token, &[]) as usize & mask;
            while vocab.slots[at] != 0 {
                if vocab.token(vocab.slots[at] as usize - 1) == token {
                    return Err(format!(
                        "token {:?} listed twice",
                        String::from_utf8_lossy(token)
                    ));
                }
                at = (at + 1) & mask;
            }
            vocab.slots[at] = id as u32 + 1;
        }
        Ok(vocab)
    }

    fn len(&self) -> usize {
        self.ends.len()
    }

    fn token(&self, id: usize) -> &[u8] {
        let start = if id == 0 {
            0
        } else {
            self.ends[id - 1] as usize
        };
        &self.blob[start..self.ends[id] as usize]
    }

    /// The id of the token `prefix` + `rest`.
    fn get(&self, prefix: &[u8], rest: &[u8]) -> Option<u32> {
        let mask = self.slots.len() - 1;
        let mut at = hash(prefix, rest) as usize & mask;
        loop {
            let slot = self.slots[at];
            if slot == 0 {
                return None;
            }
            let token = self.token(slot as usize - 1);
            if token.len() == prefix.len() + rest.len()
                && token.starts_with(prefix)
                && &token[prefix.len()..] == rest
            {
                return Some(slot - 1);
            }
            at = (at + 1) & mask;
        }
    }

    /// Heap bytes held.
    #[cfg(test)]
    fn heap_bytes(&self) -> usize {
        self.blob.len() + 4 * self.ends.len() + 4 * self.slots.len()
    }
}

/// A BERT WordPiece tokenizer read from a `tokenizer.json` of that pipeline.
pub(crate) struct WordPiece {
    vocab: Vocab,
    /// The special tokens matched on the raw text (`normalized: false`), with their ids.
    special: Vec<(Box<str>, u32)>,
    normalizer: BertNormalizer,
    unk: u32,
    prefix: Box<str>,
    max_chars: usize,
}

impl WordPiece {
    /// # Errors
    /// When the JSON is malformed or describes another pipeline than BERT's WordPiece.
    pub(crate) fn from_bytes(json: &[u8]) -> Result<WordPiece, String> {
        let file: File = serde_json::from_slice(json).map_err(|e| e.to_string())?;
        let n = &file.normalizer;
        if n.kind != "BertNormalizer"
            || file.pre_tokenizer.kind != "BertPreTokenizer"
            || file.model.kind != "WordPiece"
        {
            return Err(format!(
                "not a BERT WordPiece pipeline ({}, {}, {})",
                n.kind, file.pre_tokenizer.kind, file.model.kind
            ));
        }
        let normalizer = BertNormalizer::new(
            n.clean_text,
            n.handle_chinese_chars,
            n.strip_accents,
            n.lowercase,
        );
        let vocab = Vocab::new(file.model.vocab)?;
        let unk = vocab
            .get(file.model.unk_token.as_bytes(), &[])
            .ok_or("the unknown token is not in the vocabulary")?;
        let mut special = Vec::new();
        for added in file.added_tokens {
            if added.single_word || added.lstrip || added.rstrip || added.normalized {
                return Err(format!(
                    "added token {:?}: options not supported",
                    added.content
                ));
            }
            if added.content.is_empty() || added.id as usize >= vocab.len() {
                return Err(format!("added token {:?}: bad id or text", added.content));
            }
            special.push((added.content.into_boxed_str(), added.id));
        }
        Ok(WordPiece {
            vocab,
            special,
            normalizer,
            unk,
            prefix: file.model.continuing_subword_prefix.into_boxed_str(),
            max_chars: file.model.max_input_chars_per_word,
        })
    }

    /// Number of tokens in the vocabulary.
    pub(crate) fn vocab_size(&self) -> usize {
        self.vocab.len()
    }

    /// Heap bytes the vocabulary holds.
    #[cfg(test)]
    pub(crate) fn heap_bytes(&self) -> usize {
        self.vocab.heap_bytes()
    }

    /// The ids of `text`'s tokens, as `Tokenizer::encode_fast(text, false)` gives them, until
    /// `max` are found. `None` if the normalizer or pre-tokenizer fails.
    pub(crate) fn encode(&self, text: &str, max: usize) -> Option<Vec<u32>> {
        let mut ids = Vec::new();
        let mut rest = text;
        while !rest.is_empty() && ids.len() < max {
            // The leftmost special token, the longest at that place (`AddedVocabulary`).
            let found = (self.special.iter())
                .filter_map(|(content, id)| {
                    rest.find(&**content).map(|at| (at, content.len(), *id))
                })
                .min_by_key(|&(at, len, _)| (at, std::cmp::Reverse(len)));
            match found {
                Some((at, len, id)) => {
                    self.words(&rest[..at], &mut ids)?;
                    ids.push(id);
                    rest = &rest[at + len..];
                }
                None => {
                    self.words(rest, &mut ids)?;
                    rest = "";
                }
            }
        }
        ids.truncate(max);
        Some(ids)
    }

    /// Normalizes and splits one piece of text with no special token, and appends the ids of
    /// its words.
    fn words(&self, piece: &str, ids: &mut Vec<u32>) -> Option<()> {
        if piece.is_empty() {
            return Some(());
        }
        let mut normalized = NormalizedString::from(piece);
        self.normalizer.normalize(&mut normalized).ok()?;
        let mut split = PreTokenizedString::from(normalized);
        BertPreTokenizer.pre_tokenize(&mut split).ok()?;
        for (word, _, _) in split.get_splits(OffsetReferential::Original, OffsetType::Byte) {
            self.word(word, ids);
        }
        Some(())
    }

    /// WordPiece on one word: the longest vocabulary prefix, then the longest continuation
    /// (`##` + piece) from where it ended, and so on; the unknown token if any place has
    /// none, or if the word is longer than `max_input_chars_per_word`.
    fn word(&self, word: &str, ids: &mut Vec<u32>) {
        if word.chars().count() > self.max_chars {
            ids.push(self.unk);
            return;
        }
        let first = ids.len();
        let mut start = 0;
        while start < word.len() {
            let prefix: &[u8] = if start > 0 {
                self.prefix.as_bytes()
            } else {
                &[]
            };
            let mut end = word.len();
            let mut found = None;
            while start < end {
                if let Some(id) = self.vocab.get(prefix, &word.as_bytes()[start..end]) {
                    found = Some(id);
                    break;
                }
                end -= word[start..end]
                    .chars()
                    .next_back()
                    .map_or(1, char::len_utf8);
            }
            let Some(id) = found else {
                ids.truncate(first);
                ids.push(self.unk);
                return;
            };
            ids.push(id);
            start = end;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::WordPiece;

    const JSON: &[u8] = include_bytes!("model/tokenizer.json");

    /// Texts that exercise each step: accents, CJK, controls, punctuation, special tokens
    /// spelled out, unknown symbols, long words, continuations, emoji.
    const TEXTS: &[&str] = &[
        "",
        "   ",
        "Create a GitHub issue in a repository",
        "search_tools: find the right tool; read_file(path) -> string",
        "Café naïve résumé ÀÉÎÕÜ ß ﬁ Å Ω",
        "東京の天気を調べる 北京 서울 日本語のテキスト",
        "tab\there\nnewline\r\u{0}null \u{200b}zero-width \u{fffd} \u{7f}del",
        "[CLS] the [SEP][MASK] x[PAD]y [UNK] [cls] [MASK",
        "unbelievably antidisestablishmentarianism pneumonoultramicroscopicsilicovolcanoconiosis",
        "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa b",
        "emoji 🎉🚀 and symbols ∑∫√ ≤≥ ← → ¿¡ «» „“ — –",
        "snake_case camelCase kebab-case SCREAMING_CASE dotted.name path/to/file.rs",
        "{\"type\":\"object\",\"properties\":{\"a\":{\"type\":\"number\"}}}",
        "mixed ١٢٣ numbers 12,345.67 1e-9 0x1F 🙂x",
        "ǅ ǈ ǋ İstanbul ΣΑΣ ẞ",
    ];

    #[test]
    fn same_ids_as_the_tokenizers_crate() {
        let ours = WordPiece::from_bytes(JSON).unwrap_or_else(|e| panic!("{e}"));
        let theirs = tokenizers::Tokenizer::from_bytes(JSON).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(ours.vocab_size(), theirs.get_vocab_size(true));
        let mut texts: Vec<String> = TEXTS.iter().map(|t| (*t).to_owned()).collect();
        // The tools' own texts: every description in the reference catalog.
        let reference = include_str!("../../benches/data/reference/servers.json");
        let servers: serde_json::Value =
            serde_json::from_str(reference).unwrap_or_else(|e| panic!("{e}"));
        for tool in servers.as_array().into_iter().flatten() {
            for t in tool["tools"].as_array().into_iter().flatten() {
                texts.push(t.to_string());
            }
        }
        for text in &texts {
            let expected = theirs
                .encode_fast(text.as_str(), false)
                .unwrap_or_else(|e| panic!("{e}"))
                .get_ids()
                .to_vec();
            let got = ours.encode(text, usize::MAX);
            assert_eq!(got.as_deref(), Some(&expected[..]), "text {text:?}");
            let cut = ours.encode(text, 7);
            assert_eq!(cut.as_deref(), Some(&expected[..expected.len().min(7)]));
        }
    }

    #[test]
    fn vocabulary_is_compact() {
        let ours = WordPiece::from_bytes(JSON).unwrap_or_else(|e| panic!("{e}"));
        assert!(ours.heap_bytes() < 1 << 20, "{} bytes", ours.heap_bytes());
    }

    #[test]
    fn refuses_other_pipelines() {
        let json = String::from_utf8_lossy(JSON).replace("BertPreTokenizer", "Whitespace");
        assert!(WordPiece::from_bytes(json.as_bytes()).is_err());
    }
}
