//! Newline-delimited JSON-RPC, read with a bound: the pieces both sides share (the client's
//! stdin in `server::stdio`, each server's stdout in `downstream::child_transport`).
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
pub(crate) const DEFAULT_MAX_MESSAGE_BYTES: usize = 16 * 1024 * 1024;
/// How much of an over-long line is kept to find its id in.
const HEAD_BYTES: usize = 4096;

/// One line of input.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Line {
    /// A complete line, without its newline.
    Text(Vec<u8>),
    /// A line over the limit, drained: its size and its first bytes.
    TooLong { size: usize, head: Vec<u8> },
}

/// Reads lines of at most `max` bytes; `Ok(None)` at end of input.
///
/// Cancel-safe: rmcp drops a pending `receive` whenever another event of its loop comes
/// first, so the part of a line read so far lives here, not in the future, and the next
/// call goes on from it. (A line split across two reads was lost otherwise: a request
/// without an answer, under load.)
pub(crate) struct LineReader<R> {
    reader: R,
    max: usize,
    /// The line so far (its first `HEAD_BYTES` once it is over the limit).
    line: Vec<u8>,
    /// Its size so far, counted on past the limit.
    size: usize,
}

impl<R: AsyncBufRead + Unpin> LineReader<R> {
    pub(crate) fn new(reader: R, max: usize) -> LineReader<R> {
        LineReader {
            reader,
            max,
            line: Vec::new(),
            size: 0,
        }
    }

    /// The longest line read whole.
    pub(crate) fn max(&self) -> usize {
        self.max
    }

    /// The next line.
    ///
    /// # Errors
    /// The reader's I/O errors.
    pub(crate) async fn next(&mut self) -> std::io::Result<Option<Line>> {
        loop {
            // The one await: `fill_buf` consumes nothing, so dropping the future here loses
            // nothing; what follows up to `consume` runs without yielding.
            let buf = self.reader.fill_buf().await?;
            if buf.is_empty() {
                // End of input: a last line without a newline still counts.
                return Ok((self.size > 0).then(|| self.take()));
            }
            let (chunk, done) = match buf.iter().position(|&b| b == b'\n') {
                Some(at) => (&buf[..at], Some(at + 1)),
                None => (buf, None),
            };
            let was_too_long = self.size > self.max;
            self.size = self.size.saturating_add(chunk.len());
            let too_long = self.size > self.max;
            if too_long && !was_too_long {
                self.line.truncate(HEAD_BYTES);
            }
            let room = if too_long {
                HEAD_BYTES.saturating_sub(self.line.len())
            } else {
                chunk.len()
            };
            self.line.extend_from_slice(&chunk[..room.min(chunk.len())]);
            let used = done.unwrap_or(buf.len());
            self.reader.consume(used);
            if done.is_some() {
                if !too_long && self.line.last() == Some(&b'\r') {
                    self.line.pop();
                }
                return Ok(Some(self.take()));
            }
        }
    }

    /// The line read so far, and a fresh start.
    fn take(&mut self) -> Line {
        let size = std::mem::take(&mut self.size);
        let line = std::mem::take(&mut self.line);
        if size > self.max {
            Line::TooLong { size, head: line }
        } else {
            Line::Text(line)
        }
    }
}

/// `text` with every lone UTF-16 surrogate escape (`\ud83d` without its pair, which
/// JavaScript's `JSON.stringify` writes for a cut emoji) replaced by `\ufffd`, so the message
/// parses and the damage is visible. Paired surrogates and escaped backslashes are untouched.
pub(crate) fn repair_surrogates(text: &str) -> Cow<'_, str> {
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
pub(crate) fn id_of(value: &Value) -> Option<RequestId> {
    match value {
        Value::String(s) => Some(NumberOrString::String(s.as_str().into())),
        Value::Number(n) => n.as_i64().map(NumberOrString::Number),
        _ => None,
    }
}

/// The id of a message that did not parse, read from its text: the value of an `"id"` key at
/// the top level of the object, if it is complete there. Best effort, never wrong about
/// nesting: keys inside nested objects and strings are skipped.
pub(crate) fn scan_id(text: &[u8]) -> Option<RequestId> {
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
        let mut reader = LineReader::new(
            tokio::io::BufReader::with_capacity(64, input.as_bytes()),
            100,
        );
        match reader.next().await.ok().flatten() {
            Some(Line::TooLong { size, head }) => {
                assert_eq!(size, 10_000);
                assert_eq!(head.len(), HEAD_BYTES);
            }
            other => panic!("{other:?}"),
        }
        assert_eq!(
            reader.next().await.ok().flatten(),
            Some(Line::Text(b"next".to_vec()))
        );
        assert_eq!(
            reader.next().await.ok().flatten(),
            Some(Line::Text(b"last".to_vec()))
        );
        assert_eq!(reader.next().await.ok().flatten(), None);
    }

    /// A read cut short (rmcp drops `receive` whenever another event comes first) loses
    /// nothing: the next read goes on from where the line stood. On paused time: the 20 ms
    /// wait passes at once when nothing else can run, so it costs nothing and cannot race.
    #[tokio::test(start_paused = true)]
    async fn a_read_dropped_mid_line_loses_nothing() {
        let (mut tx, rx) = tokio::io::duplex(64);
        let mut reader = LineReader::new(tokio::io::BufReader::with_capacity(8, rx), 1000);
        tokio::io::AsyncWriteExt::write_all(&mut tx, b"{\"id\":1,\"pad\":\"xxxx")
            .await
            .ok();
        // The line is half there: the read waits for more, and is dropped meanwhile.
        let cut = tokio::time::timeout(std::time::Duration::from_millis(20), reader.next()).await;
        assert!(
            cut.is_err(),
            "a half line must not come back as a line: {cut:?}"
        );
        tokio::io::AsyncWriteExt::write_all(&mut tx, b"yyyy\"}\n{\"id\":2}\n")
            .await
            .ok();
        assert_eq!(
            reader.next().await.ok().flatten(),
            Some(Line::Text(b"{\"id\":1,\"pad\":\"xxxxyyyy\"}".to_vec()))
        );
        assert_eq!(
            reader.next().await.ok().flatten(),
            Some(Line::Text(b"{\"id\":2}".to_vec()))
        );
    }
}
