//! General-English synonyms for query expansion: WordNet through the `thesaurus` crate.
//!
//! The dictionary ships compressed inside the binary; it is decompressed and parsed once, on
//! first use, into single-word synonym lists (multi-word synonyms are split into their
//! words). Lists keep WordNet's sense order, so the most common senses come first.

use std::collections::HashMap;
use std::sync::OnceLock;

type Dict = HashMap<Box<str>, Box<[Box<str>]>>;

static DICT: OnceLock<Dict> = OnceLock::new();

/// Loads the dictionary now rather than on the first query that needs it.
pub(crate) fn init() {
    dict();
}

fn dict() -> &'static Dict {
    DICT.get_or_init(|| {
        thesaurus::dict()
            .into_iter()
            .filter(|(word, _)| is_word(word))
            .map(|(word, synonyms)| {
                let mut words: Vec<Box<str>> = Vec::new();
                for synonym in &synonyms {
                    for w in synonym.split([' ', '-']) {
                        if is_word(w) && w != word && !words.iter().any(|x| &**x == w) {
                            words.push(w.into());
                        }
                    }
                }
                (word.into_boxed_str(), words.into_boxed_slice())
            })
            .filter(|(_, words)| !words.is_empty())
            .collect()
    })
}

/// Lowercase ASCII letters only, at least three: no phrases, numbers or abbreviations.
fn is_word(w: &str) -> bool {
    w.len() >= 3 && w.bytes().all(|b| b.is_ascii_lowercase())
}

/// WordNet's detachment rules (morphy): inflected forms to try when a word is not an entry.
const DETACH: &[(&str, &str)] = &[
    ("ies", "y"),
    ("ses", "s"),
    ("xes", "x"),
    ("zes", "z"),
    ("ches", "ch"),
    ("shes", "sh"),
    ("men", "man"),
    ("es", "e"),
    ("es", ""),
    ("s", ""),
    ("ing", "e"),
    ("ing", ""),
    ("ed", "e"),
    ("ed", ""),
    ("er", ""),
    ("est", ""),
    ("er", "e"),
    ("est", "e"),
];

/// Synonyms of `word` (lowercase), in sense order: those of the word itself, or else of its
/// first base form (`studies` → `study`) that is an entry.
pub(crate) fn synonyms(word: &str) -> &'static [Box<str>] {
    let dict = dict();
    if let Some(s) = dict.get(word) {
        return s;
    }
    for (suffix, with) in DETACH {
        if let Some(stem) = word.strip_suffix(suffix)
            && stem.len() >= 2
            && let Some(s) = dict.get(format!("{stem}{with}").as_str())
        {
            return s;
        }
    }
    &[]
}

#[cfg(test)]
mod tests {
    use super::synonyms;

    #[test]
    fn single_words_in_sense_order_and_base_forms() {
        let mut sofa: Vec<&str> = synonyms("sofa").iter().map(|s| &**s).collect();
        sofa.sort_unstable();
        assert_eq!(sofa, ["couch", "lounge"]);
        assert!(synonyms("studies").iter().any(|s| &**s == "learn"));
        assert!(synonyms("movie").iter().any(|s| &**s == "film"));
        assert!(synonyms("movie").iter().all(|s| !s.contains(' ')));
        assert!(synonyms("zzzz").is_empty());
    }
}
