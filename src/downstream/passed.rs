//! A `tools/call` answer passed on as the server wrote it (issue 31, item 1): the bytes of
//! its `result`, checked but not decoded, for a caller that writes them under its own
//! client's id (`server/thin_calls.rs`).
//!
//! Decoding an answer into rmcp's `CallToolResult` allocates every string and block, and
//! encoding it again for the client does the same work backwards: most of what a proxy
//! spends on a call's answer, for a result it hands on unchanged. An answer is passed only
//! when nothing between the server and the client would change it:
//!
//! - the caller asked ([`Passing`]), with room under its output budget: a result whose
//!   bytes are at most a fifth of the budget cannot be cut, since no part of it measures
//!   more than 4.5 times its bytes once decoded (a text's decoded bytes are at most its
//!   JSON's; a number such as `1e15` is the 18 bytes `1000000000000000.0`);
//! - it is a result, not an error, with no `resultType` (what rmcp would strip or refuse)
//!   and `structuredContent`, when present, an object (a handshake-era client gets any
//!   other value moved into the content);
//! - its `content` is an array of blocks rmcp knows, each with its required fields of the
//!   right kind, so a client gets no block the typed path would have refused;
//! - no carriage return: a line with one could not be an SSE event's data.
//!
//! Deeper fields (annotations, a resource's contents) and keys MCP does not define go as
//! the server wrote them; a `Result` may carry keys of its own. Anything else is decoded
//! as before ([`CallAnswer::Result`]).

use std::ops::Range;

use rmcp::model::CallToolResult;
use serde::Deserialize;
use serde::de::IgnoredAny;
use serde_json::value::RawValue;

/// A caller's leave to have its call's answer passed on ([`super::CallOptions::passing`]).
#[derive(Clone, Copy, Debug, Default)]
pub struct Passing {
    /// The output budget in bytes (`tokens::bytes_for`), when one applies to the call.
    pub budget: Option<usize>,
}

/// A `tools/call` answer: decoded, or passed on as written.
#[derive(Debug)]
pub enum CallAnswer {
    Result(CallToolResult),
    Passed(PassedAnswer),
}

/// The answer line of a call, and where its `result` is in it.
#[derive(Debug)]
pub struct PassedAnswer {
    line: String,
    result: Range<usize>,
}

/// The answer line as far as passing needs it: every other key (`jsonrpc`, `id`) skipped.
#[derive(Deserialize)]
struct Line<'a> {
    #[serde(borrow)]
    result: Option<&'a RawValue>,
    error: Option<IgnoredAny>,
}

/// What a result must hold to be passed (module doc); other keys are skipped.
#[derive(Deserialize)]
struct Shape<'a> {
    #[serde(borrow)]
    content: Vec<Block<'a>>,
    #[serde(rename = "structuredContent", borrow)]
    structured_content: Option<&'a RawValue>,
    #[serde(rename = "isError")]
    #[expect(dead_code, reason = "read to check it is a boolean")]
    is_error: Option<bool>,
    #[serde(rename = "resultType")]
    result_type: Option<IgnoredAny>,
    #[serde(rename = "_meta", borrow)]
    meta: Option<&'a RawValue>,
}

/// One content block, as far as its kind's required fields.
#[derive(Deserialize)]
struct Block<'a> {
    #[serde(rename = "type", borrow)]
    kind: std::borrow::Cow<'a, str>,
    #[serde(borrow)]
    text: Option<&'a RawValue>,
    #[serde(borrow)]
    data: Option<&'a RawValue>,
    #[serde(rename = "mimeType", borrow)]
    mime_type: Option<&'a RawValue>,
    #[serde(borrow)]
    resource: Option<&'a RawValue>,
    #[serde(borrow)]
    uri: Option<&'a RawValue>,
    #[serde(borrow)]
    name: Option<&'a RawValue>,
}

impl Block<'_> {
    fn known(&self) -> bool {
        let string = |v: Option<&RawValue>| v.is_some_and(|v| v.get().starts_with('"'));
        let object = |v: Option<&RawValue>| v.is_some_and(|v| v.get().starts_with('{'));
        match &*self.kind {
            "text" => string(self.text),
            "image" | "audio" => string(self.data) && string(self.mime_type),
            "resource" => object(self.resource),
            "resource_link" => string(self.uri) && string(self.name),
            _ => false,
        }
    }
}

impl PassedAnswer {
    /// The answer on `line`, when it may be passed on (module doc); else the line, given
    /// back to be decoded.
    pub(super) fn read(line: String, passing: Passing) -> Result<PassedAnswer, String> {
        match result_range(&line, passing) {
            Some(result) => Ok(PassedAnswer { line, result }),
            None => Err(line),
        }
    }

    /// The bytes of the `result`, as the server wrote them.
    pub fn result(&self) -> &str {
        &self.line[self.result.clone()]
    }

    /// The result decoded, for a caller that must work on it after all. A result that
    /// passed the checks and still fails rmcp's decoding (a field deeper than they look)
    /// becomes an error result saying so.
    pub fn into_result(self) -> CallToolResult {
        serde_json::from_str(self.result()).unwrap_or_else(|err| {
            CallToolResult::error(vec![rmcp::model::ContentBlock::text(format!(
                "The server's answer could not be read: {err}"
            ))])
        })
    }
}

impl CallAnswer {
    /// The decoded result ([`PassedAnswer::into_result`] for one passed).
    pub fn into_result(self) -> CallToolResult {
        match self {
            CallAnswer::Result(result) => result,
            CallAnswer::Passed(answer) => answer.into_result(),
        }
    }
}

fn result_range(line: &str, passing: Passing) -> Option<Range<usize>> {
    if line.contains('\r') {
        return None;
    }
    let answer: Line<'_> = serde_json::from_str(line).ok()?;
    let result = answer.result.filter(|_| answer.error.is_none())?;
    let text = result.get();
    if passing.budget.is_some_and(|budget| text.len() > budget / 5) {
        return None;
    }
    let shape: Shape<'_> = serde_json::from_str(text).ok()?;
    let object = |v: Option<&RawValue>| v.is_none_or(|v| v.get().starts_with('{'));
    let passable = shape.result_type.is_none()
        && object(shape.structured_content)
        && object(shape.meta)
        && shape.content.iter().all(Block::known);
    if !passable {
        return None;
    }
    // `RawValue` borrows from `line`, so its text is a slice of it.
    let start = text.as_ptr() as usize - line.as_ptr() as usize;
    Some(start..start + text.len())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn passed(result: &str, budget: Option<usize>) -> Option<String> {
        let line = format!(r#"{{"jsonrpc":"2.0","id":"mcp-defer-7","result":{result}}}"#);
        PassedAnswer::read(line, Passing { budget })
            .ok()
            .map(|answer| answer.result().to_owned())
    }

    /// A plain result is passed byte for byte, keys of its own and escapes included.
    #[test]
    fn a_plain_result_is_passed_as_written() {
        let result = r#"{"content":[{"type":"text","text":"3 \"quoted\"\n"},{"type":"image","data":"AA==","mimeType":"image/png"}],"structuredContent":{"sum":3},"isError":false,"_meta":{"k":1},"extra":[1e15]}"#;
        assert_eq!(passed(result, None).as_deref(), Some(result));
        let links = r#"{"content":[{"type":"resource_link","uri":"file:///a","name":"a"},{"type":"resource","resource":{"uri":"file:///b","text":"b"}}]}"#;
        assert_eq!(passed(links, None).as_deref(), Some(links));
    }

    /// What the typed path would change, refuse or cut is left to it.
    #[test]
    fn what_the_typed_path_would_change_is_not_passed() {
        for result in [
            r#"{"content":[],"resultType":"complete"}"#,
            r#"{"content":[],"structuredContent":[1,2]}"#,
            r#"{"content":[{"type":"text"}]}"#,
            r#"{"content":[{"type":"text","text":3}]}"#,
            r#"{"content":[{"type":"image","data":"AA=="}]}"#,
            r#"{"content":[{"type":"video","url":"x"}]}"#,
            r#"{"content":"x"}"#,
            r#"{"structuredContent":{}}"#,
            r#"{"content":[],"isError":"no"}"#,
            r#"{"content":[],"_meta":[]}"#,
            "{\"content\":[],\r\"isError\":false}",
        ] {
            assert_eq!(passed(result, None), None, "{result}");
        }
        let error = r#"{"jsonrpc":"2.0","id":"mcp-defer-7","error":{"code":-1,"message":"x"}}"#;
        assert!(PassedAnswer::read(error.to_owned(), Passing::default()).is_err());
    }

    /// A result over a fifth of the budget goes to the typed path, which may cut it.
    #[test]
    fn a_result_near_the_budget_is_left_to_the_output_limit() {
        let result = r#"{"content":[{"type":"text","text":"0123456789"}]}"#;
        assert!(passed(result, Some(result.len() * 5)).is_some());
        assert!(passed(result, Some(result.len() * 5 - 1)).is_none());
    }
}
