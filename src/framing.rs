//! Newline-delimited JSON-RPC, read with a bound: the pieces both sides share (the client's
//! stdin in `server::framing`, each server's stdout in `downstream::child_transport`).
//!
//! rmcp's codec reads a line of any content and drops what it cannot decode without an
//! answer, and an over-long line is only a log entry; a caller then waits forever (or for
//! its timeout). Here every line is accounted for: a line over the limit is drained and
//! reported with its size and whatever id its head shows, a lone UTF-16 surrogate escape is
//! repaired instead of refused, and the id of a broken line is recovered when it can be.

use std::borrow::Cow;

use rmcp::model::{NumberOrString, RequestId};
use serde_json::Value;
use tokio::io::{AsyncBufRead, AsyncBufReadExt};

/// Default of `[settings] max_message_bytes`: rmcp's own line limit, so nothing that worked
/// before is refused now.
pub const DEFAULT_MAX_MESSAGE_BYTES: usize = 16 * 1024 * 1024;
/// How much of an over-long line is kept to find its id in.
const HEAD_BYTES: usize = 4096;

/// One line of input.
#[derive(Debug, PartialEq, Eq)]
pub enum Line {
    /// A complete line, without its newline.
    Text(Vec<u8>),
    /// A line over the limit, drained: its size and its first bytes.
    TooLong { size: usize, head: Vec<u8> },
}

/// Reads lines of at most `max` bytes from `reader`; `Ok(None)` at end of input.
///
/// # Errors
/// The reader's I/O errors.
pub async fn next_line<R: AsyncBufRead + Unpin>(
    reader: &mut R,
    max: usize,
) -> std::io::Result<Option<Line>> {
    let mut line = Vec::new();
    let mut size = 0usize;
    let mut too_long = false;
    loop {
        let buf = reader.fill_buf().await?;
        if buf.is_empty() {
            // End of input: a last line without a newline still counts.
            return Ok(match (size, too_long) {
                (0, _) => None,
                (_, false) => Some(Line::Text(line)),
                (_, true) => Some(Line::TooLong { size, head: line }),
            });
        }
        let (chunk, done) = match buf.iter().position(|&b| b == b'\n') {
            Some(at) => (&buf[..at], Some(at + 1)),
            None => (buf, None),
        };
        size = size.saturating_add(chunk.len());
        if !too_long && size > max {
            too_long = true;
            line.truncate(HEAD_BYTES);
        }
        let room = if too_long {
            HEAD_BYTES.saturating_sub(line.len())
        } else {
            chunk.len()
        };
        line.extend_from_slice(&chunk[..room.min(chunk.len())]);
        let used = done.unwrap_or(buf.len());
        reader.consume(used);
        if done.is_some() {
            if line.last() == Some(&b'\r') && !too_long {
                line.pop();
            }
            return Ok(Some(if too_long {
                Line::TooLong { size, head: line }
            } else {
                Line::Text(line)
            }));
        }
    }
}

/// `text` with every lone UTF-16 surrogate escape (`\ud83d` without its pair, which
/// JavaScript's `JSON.stringify` writes for a cut emoji) replaced by `\ufffd`, so the message
/// parses and the damage is visible. Paired surrogates and escaped backslashes are untouched.
pub fn repair_surrogates(text: &str) -> Cow<'_, str> {
    if !text.contains("\\u") && !text.contains("\\U") {
        return Cow::Borrowed(text);
    }
    let bytes = text.as_bytes();
    let mut out: Option<String> = None;
    let mut copied = 0;
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] != b'\\' {
            i += 1;
            continue;
        }
        let Some(unit) = escape_at(bytes, i) else {
            i += 2;
            continue;
        };
        let lone = match unit {
            0xD800..=0xDBFF => match escape_at(bytes, i + 6) {
                Some(0xDC00..=0xDFFF) => {
                    i += 12;
                    continue;
                }
                _ => true,
            },
            0xDC00..=0xDFFF => true,
            _ => false,
        };
        if lone {
            let out = out.get_or_insert_with(|| String::with_capacity(text.len()));
            out.push_str(&text[copied..i]);
            out.push_str("\\ufffd");
            copied = i + 6;
        }
        i += 6;
    }
    match out {
        None => Cow::Borrowed(text),
        Some(mut out) => {
            out.push_str(&text[copied..]);
            Cow::Owned(out)
        }
    }
}

/// The code unit of a `\uXXXX` escape starting at `at`.
fn escape_at(bytes: &[u8], at: usize) -> Option<u32> {
    let escape = bytes.get(at..at + 6)?;
    if escape[0] != b'\\' || escape[1] != b'u' {
        return None;
    }
    let hex = std::str::from_utf8(&escape[2..]).ok()?;
    u32::from_str_radix(hex, 16).ok()
}

/// A JSON-RPC id value, when it is one (a string or an integer).
pub fn id_of(value: &Value) -> Option<RequestId> {
    match value {
        Value::String(s) => Some(NumberOrString::String(s.as_str().into())),
        Value::Number(n) => n.as_i64().map(NumberOrString::Number),
        _ => None,
    }
}

/// The id of a message that did not parse, read from its text: the value of an `"id"` key at
/// the top level of the object, if it is complete there. Best effort, never wrong about
/// nesting: keys inside nested objects and strings are skipped.
pub fn scan_id(text: &[u8]) -> Option<RequestId> {
    let text = String::from_utf8_lossy(text);
    let bytes = text.as_bytes();
    let mut depth = 0i32;
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'{' | b'[' => depth += 1,
            b'}' | b']' => depth -= 1,
            b'"' => {
                let end = string_end(bytes, i)?;
                let key = &text[i..=end];
                let mut j = end + 1;
                while j < bytes.len() && bytes[j].is_ascii_whitespace() {
                    j += 1;
                }
                if depth == 1 && key == "\"id\"" && bytes.get(j) == Some(&b':') {
                    let rest = text[j + 1..].trim_start();
                    let mut values = serde_json::Deserializer::from_str(rest).into_iter::<Value>();
                    return values.next().and_then(Result::ok).as_ref().and_then(id_of);
                }
                i = end;
            }
            _ => {}
        }
        i += 1;
    }
    None
}

/// The index of the quote closing the string that opens at `start`.
fn string_end(bytes: &[u8], start: usize) -> Option<usize> {
    let mut i = start + 1;
    while i < bytes.len() {
        match bytes[i] {
            b'\\' => i += 2,
            b'"' => return Some(i),
            _ => i += 1,
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lone_surrogates_become_replacement_characters() {
        assert_eq!(
            repair_surrogates(r#"{"q":"tokyo \ud83d"}"#),
            r#"{"q":"tokyo \ufffd"}"#
        );
        assert_eq!(repair_surrogates(r#""\ud83d\ude00""#), r#""\ud83d\ude00""#);
        assert_eq!(repair_surrogates(r#""\\ud83d""#), r#""\\ud83d""#);
        assert_eq!(repair_surrogates(r#""\ude00x""#), r#""\ufffdx""#);
    }

    #[test]
    fn ids_are_found_at_the_top_level_only() {
        let id = |t: &str| scan_id(t.as_bytes());
        assert_eq!(
            id(r#"{"jsonrpc":"2.0","id":7,"method":"x"} junk"#),
            Some(NumberOrString::Number(7))
        );
        assert_eq!(
            id(r#"{"params":{"id":1},"id":"abc","x":[1,"#),
            Some(NumberOrString::String("abc".into()))
        );
        assert_eq!(id(r#"{"params":{"id":1}"#), None);
        assert_eq!(id(r#"{"s":"\"id\":3"}"#), None);
    }

    #[tokio::test]
    async fn long_lines_are_drained_and_measured() {
        let input = format!("{}\nnext\nlast", "a".repeat(10_000));
        let mut reader = tokio::io::BufReader::with_capacity(64, input.as_bytes());
        match next_line(&mut reader, 100).await.ok().flatten() {
            Some(Line::TooLong { size, head }) => {
                assert_eq!(size, 10_000);
                assert_eq!(head.len(), HEAD_BYTES);
            }
            other => panic!("{other:?}"),
        }
        assert_eq!(
            next_line(&mut reader, 100).await.ok().flatten(),
            Some(Line::Text(b"next".to_vec()))
        );
        assert_eq!(
            next_line(&mut reader, 100).await.ok().flatten(),
            Some(Line::Text(b"last".to_vec()))
        );
        assert_eq!(next_line(&mut reader, 100).await.ok().flatten(), None);
    }
}
