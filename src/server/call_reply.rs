//! A proxied call's answer on its way to the client: typed, or passed on as the server
//! wrote it (`downstream/passed.rs`), which only the thin call path asks for and writes
//! (`thin_calls.rs`); every other caller gets it typed.

use rmcp::model::{CallToolResponse, CallToolResult, ResultType};

use crate::downstream::{CallAnswer, PassedAnswer};

#[derive(Debug)]
pub(crate) enum CallReply {
    Response(CallToolResponse),
    Passed(PassedAnswer),
}

impl CallReply {
    /// The typed response, decoding an answer passed as written.
    pub(crate) fn into_response(self) -> CallToolResponse {
        match self {
            CallReply::Response(response) => response,
            CallReply::Passed(answer) => completed(answer.into_result()),
        }
    }
}

impl From<CallAnswer> for CallReply {
    fn from(answer: CallAnswer) -> CallReply {
        match answer {
            CallAnswer::Result(result) => CallReply::Response(completed(result)),
            CallAnswer::Passed(answer) => CallReply::Passed(answer),
        }
    }
}

impl From<CallToolResult> for CallReply {
    fn from(result: CallToolResult) -> CallReply {
        CallReply::Response(completed(result))
    }
}

/// A downstream result as the client's final answer. Handshake-era servers send no
/// `resultType`, which 2026-07-28 requires on every result (`"complete"` here); rmcp
/// strips it again for handshake-era clients.
pub(crate) fn completed(mut result: CallToolResult) -> CallToolResponse {
    result.result_type.get_or_insert(ResultType::COMPLETE);
    result.into()
}
