//! The client's requests that pass through to a downstream server as they would directly:
//! `prompts/get` ([`prompts`]), `resources/read` and subscriptions ([`resources`]),
//! `completion/complete` ([`completions`]) and `logging/setLevel` ([`set_level`]). Each takes
//! the shared state and the session's part it needs (its state lives in `passthrough/`), and
//! ends the one way [`answered`] does: the server's result marked complete, or its failure as
//! the client would see it directly.

use rmcp::ErrorData as McpError;
use rmcp::model::{CompleteResult, ErrorCode, GetPromptResult, ReadResourceResult, ResultType};

use crate::downstream::DownstreamError;

pub(super) mod completions;
pub(super) mod prompts;
pub(super) mod resources;
pub(super) mod set_level;

use super::passthrough::envelope;

/// A result a server answers a forwarded request with: it carries the `resultType` a
/// 2026-07-28 client requires ([`envelope::mark_complete`]).
pub(super) trait Forwarded {
    fn result_type(&mut self) -> &mut Option<ResultType>;
}

macro_rules! forwarded {
    ($($result:ty),*) => {$(
        impl Forwarded for $result {
            fn result_type(&mut self) -> &mut Option<ResultType> {
                &mut self.result_type
            }
        }
    )*};
}
forwarded!(CompleteResult, GetPromptResult, ReadResourceResult);

/// The one ending of a forwarded request: the server's result marked complete, or its
/// failure as the client would see it directly ([`downstream_error`]).
pub(super) fn answered<R: Forwarded>(result: Result<R, DownstreamError>) -> Result<R, McpError> {
    let mut result = result.map_err(downstream_error)?;
    envelope::mark_complete(result.result_type());
    Ok(result)
}

/// Asks each candidate server in turn until one answers: with one candidate its failure is
/// the answer; with several, every failure is kept so the error names each server's reason.
pub(super) async fn first_that_answers<T, F>(
    candidates: &[usize],
    mut ask: impl FnMut(usize) -> Option<F>,
) -> Result<T, Tried>
where
    F: Future<Output = Result<T, DownstreamError>>,
{
    let mut failures = Vec::new();
    for &server in candidates {
        let Some(asked) = ask(server) else { continue };
        match asked.await {
            Ok(answer) => return Ok(answer),
            Err(err) if candidates.len() == 1 => return Err(Tried::Only(downstream_error(err))),
            Err(err) => failures.push(err.to_string()),
        }
    }
    Err(Tried::None(if failures.is_empty() {
        "no server offers it".to_owned()
    } else {
        failures.join("; ")
    }))
}

/// Why [`first_that_answers`] got no answer.
pub(super) enum Tried {
    /// The one candidate failed: its error, as the client would see it directly.
    Only(McpError),
    /// No candidate, or each failed: the reasons, for a sentence naming the URI.
    None(String),
}

/// A downstream failure as the answer to a proxied request: the server's own error code and
/// message when it refused, so the client sees what it would directly; otherwise an
/// internal error naming the server and the cause. Either text passes the secret mask: a
/// server may quote its own settings.
pub(super) fn downstream_error(err: DownstreamError) -> McpError {
    let masked = |text: &str| crate::redact::redact(text).into_owned();
    match err {
        DownstreamError::Service {
            message,
            code: Some(code),
            ..
        } => McpError::new(code, masked(&message), None),
        other => McpError::new(ErrorCode::INTERNAL_ERROR, masked(&other.to_string()), None),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn refused(server: &str) -> DownstreamError {
        DownstreamError::Service {
            server: server.to_owned(),
            message: "no such resource".to_owned(),
            code: Some(ErrorCode::RESOURCE_NOT_FOUND),
        }
    }

    #[tokio::test]
    async fn each_candidate_is_asked_until_one_answers_and_failures_are_named() {
        let answers = |server: usize| {
            Some(async move {
                match server {
                    2 => Ok(server),
                    _ => Err(refused(&format!("s{server}"))),
                }
            })
        };
        assert!(matches!(
            first_that_answers(&[0, 1, 2], answers).await,
            Ok(2)
        ));
        let Err(Tried::None(reason)) = first_that_answers(&[0, 1], answers).await else {
            panic!("two failures are a reason naming both");
        };
        assert_eq!(
            reason,
            "server 's0' answered with an error: no such resource; \
             server 's1' answered with an error: no such resource"
        );
        // One candidate: its own error, with the server's code, as directly.
        let Err(Tried::Only(err)) = first_that_answers(&[1], answers).await else {
            panic!("one failure is the answer");
        };
        assert_eq!(err.code, ErrorCode::RESOURCE_NOT_FOUND);
        // A position without a running server is skipped, not a failure.
        let Err(Tried::None(reason)) =
            first_that_answers(&[7], |_| None::<std::future::Ready<Result<(), _>>>).await
        else {
            panic!("nothing to ask");
        };
        assert_eq!(reason, "no server offers it");
    }
}
