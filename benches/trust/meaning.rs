//! The sentences of a definition, as the meaning experiment reads them (issue 30,
//! `scripts/trust_meaning.py`; a negative result, so it lives with the bench, not in the
//! product): every text the rules read, as they read it
//! (`rules::readings`: a name as words, spaced-out letters joined, base64 decoded), cut into
//! sentences and clauses. A poisoned description is a tool description with one sentence
//! addressed to the model; a score over sentences can find that one sentence where a score
//! over the whole text dilutes it.

use mcp_defer::trust::learned::field;
use mcp_defer::trust::{Definition, rules};

/// At most this many sentences of a definition are read (a bound on a huge schema's cost).
pub const MAX_SENTENCES: usize = 64;
/// A sentence is cut to this many characters.
pub const MAX_CHARS: usize = 400;

/// The sentences of `definition`, each with the field it is in (`name`, `description`,
/// `title`, `property`, `schema`), in order, distinct, at most [`MAX_SENTENCES`].
pub fn sentences(definition: &Definition) -> Vec<(&'static str, String)> {
    let mut out: Vec<(&'static str, String)> = Vec::new();
    for (at, text) in definition.texts() {
        let field = field(&at);
        for (_, plain) in rules::readings(&at, &text) {
            for sentence in split(&plain) {
                if out.len() >= MAX_SENTENCES {
                    return out;
                }
                if !out.iter().any(|(_, s)| *s == sentence) {
                    out.push((field, sentence));
                }
            }
        }
    }
    out
}

/// `text` cut after `.`, `!`, `?`, `;` or `:` followed by a space, after CJK stops, and at
/// `<`/`>` tag edges; trimmed, empty pieces dropped, each at most [`MAX_CHARS`] characters.
pub fn split(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut current = String::new();
    let mut chars = text.chars().peekable();
    let mut push = |current: &mut String| {
        let piece = current.trim();
        if piece.chars().any(char::is_alphanumeric) {
            out.push(piece.chars().take(MAX_CHARS).collect());
        }
        current.clear();
    };
    while let Some(c) = chars.next() {
        match c {
            '<' => {
                push(&mut current);
                current.push(c);
            }
            '>' | '。' | '！' | '？' | '；' | '\n' => {
                current.push(c);
                push(&mut current);
            }
            '.' | '!' | '?' | ';' | ':' if chars.peek().is_none_or(|n| n.is_whitespace()) => {
                current.push(c);
                push(&mut current);
            }
            _ => current.push(c),
        }
    }
    push(&mut current);
    out
}
