//! Text from elsewhere made safe to print on a terminal: a remote server's error body, a
//! child's stderr, a name from another client's config. A control character in it would be
//! obeyed by the terminal, not shown: ESC starts a sequence that can clear the screen,
//! rewrite earlier lines, retitle the window or (OSC 52) write the user's clipboard; a
//! carriage return overwrites the line it is on. Each such character is shown as its Rust
//! escape (`\u{1b}`, `\r`) instead, so what it was stays visible. A leaf: imports nothing.

use std::borrow::Cow;

/// `text` with every control character escaped except newline and tab, which multi-line
/// output (a log line, an error with a server's stderr) keeps. Borrowed when there was
/// nothing to escape.
pub(crate) fn printable(text: &str) -> Cow<'_, str> {
    escape(text, |c| c == '\n' || c == '\t')
}

/// `text` as one line: as [`printable`], with newlines and tabs escaped too, for a table
/// cell or a line that must stay one.
pub(crate) fn one_line(text: &str) -> Cow<'_, str> {
    escape(text, |_| false)
}

/// At most this many characters of a caller's input are echoed back in an error: enough
/// to recognise it, too few to flood a log or a model's context (a 1 MB task id came back
/// whole: issue 35).
pub(crate) const ECHO_CHARS: usize = 80;

/// `text` cut to [`ECHO_CHARS`] characters, with its length in bytes when cut: what an
/// error echoes of the input it refuses. Borrowed when short enough.
pub(crate) fn excerpt(text: &str) -> Cow<'_, str> {
    match text.char_indices().nth(ECHO_CHARS) {
        None => Cow::Borrowed(text),
        Some((end, _)) => Cow::Owned(format!("{}… ({} bytes)", &text[..end], text.len())),
    }
}

fn escape(text: &str, keep: impl Fn(char) -> bool) -> Cow<'_, str> {
    let unsafe_char = |c: char| is_unsafe(c) && !keep(c);
    if !text.chars().any(unsafe_char) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 8);
    for c in text.chars() {
        if unsafe_char(c) {
            out.extend(c.escape_default());
        } else {
            out.push(c);
        }
    }
    Cow::Owned(out)
}

/// C0 and C1 controls and DEL (a terminal acts on them), and the bidirectional overrides
/// and isolates, which make a terminal show text in another order than it is.
fn is_unsafe(c: char) -> bool {
    c.is_control() || matches!(c, '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn control_characters_are_shown_not_obeyed() {
        let hostile = "HTTP 500: \x1b[2J\x1b[H\x1b]52;c;cm0gLXJmIH4=\x07gone\r\nnext\tcol \u{9b}31m \u{202e}txt";
        let safe = printable(hostile);
        assert!(!safe.chars().any(is_unsafe_but_newline_or_tab), "{safe}");
        assert_eq!(
            safe,
            "HTTP 500: \\u{1b}[2J\\u{1b}[H\\u{1b}]52;c;cm0gLXJmIH4=\\u{7}gone\\r\nnext\tcol \\u{9b}31m \\u{202e}txt"
        );
        assert_eq!(one_line("a\nb\tc"), "a\\nb\\tc");
        assert!(matches!(printable("plain é 日本 ✓\n"), Cow::Borrowed(_)));
    }

    #[test]
    fn excerpts_keep_short_text_and_cut_long_text_on_a_character_boundary() {
        assert!(matches!(excerpt("fx:42"), Cow::Borrowed("fx:42")));
        let long = "é".repeat(500_000);
        let cut = excerpt(&long);
        assert_eq!(cut, format!("{}… (1000000 bytes)", "é".repeat(ECHO_CHARS)));
    }

    fn is_unsafe_but_newline_or_tab(c: char) -> bool {
        is_unsafe(c) && c != '\n' && c != '\t'
    }
}
