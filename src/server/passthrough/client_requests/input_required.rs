//! The 2026-07-28 half: a server's request during a proxied call becomes the call's
//! `InputRequiredResult` (SEP-2322), the call is parked under an opaque `requestState`,
//! and the client's retry answers the requests with its `inputResponses` ([`resume`]).
//!
//! [`resume`]: ClientRequests::resume

use std::hash::BuildHasher;
use std::sync::atomic::Ordering;
use std::time::Duration;

use rmcp::RoleServer;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ClientResult, ElicitResult, ErrorData,
    InputRequest, InputRequests, InputRequiredResult,
};
#[expect(deprecated, reason = "answering what pre-2026-07-28 servers ask")]
use rmcp::model::{CreateMessageResult, ListRootsResult};
use rmcp::service::RequestContext;
use tokio::sync::{mpsc, oneshot};
use tokio_util::sync::CancellationToken;

use super::{ClientRequests, Pending, Reply, requested_log};
use crate::server::call_reply::completed;
use crate::server::meta;
use crate::sync::lock;

/// How long a call parked on an `InputRequiredResult` waits for the client's retry. As
/// long as server-everything gives a person to fill in an elicitation form; a client that
/// never retries must not hold a downstream call (and its request) forever.
const PARKED_CALL_TIMEOUT: Duration = Duration::from_secs(600);

/// A downstream call running for a 2026-07-28 client, driven across its retries.
pub(super) struct Running {
    /// Its number in the table of calls.
    pub(super) number: u64,
    pub(super) inputs: mpsc::UnboundedReceiver<Pending>,
    pub(super) done: oneshot::Receiver<CallToolResult>,
    pub(super) cancel: CancellationToken,
}

/// A call whose client request was answered with `InputRequiredResult`.
pub(super) struct Parked {
    tool: String,
    running: Running,
    /// By input key: what was asked, and where its answer goes.
    replies: Vec<(String, Kind, Reply)>,
}

#[derive(Debug, Clone, Copy)]
enum Kind {
    Sampling,
    Elicitation,
    Roots,
}

impl ClientRequests {
    /// A 2026-07-28 client's retry of a call parked on `InputRequiredResult`: answers the
    /// downstream requests with the client's `inputResponses`, then waits for the call's
    /// next outcome.
    ///
    /// # Errors
    /// An unknown or expired `requestState`, or one issued for another tool.
    pub(crate) async fn resume(
        &self,
        request: &CallToolRequestParams,
        state: &str,
        context: &RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let parked = lock(&self.inner.parked).remove(state);
        let Some(parked) = parked else {
            return Err(ErrorData::invalid_params(
                "unknown or expired requestState: the call it named has ended or was never \
                 parked here; call the tool again without requestState",
                None,
            ));
        };
        if parked.tool != request.name.as_ref() {
            let tool = parked.tool.clone();
            lock(&self.inner.parked).insert(state.to_owned(), parked);
            return Err(ErrorData::invalid_params(
                format!(
                    "this requestState belongs to a call of '{tool}', not '{}'",
                    request.name
                ),
                None,
            ));
        }
        // The first request's stream ended with its InputRequiredResult: the call's log
        // messages from now on go to this retry, as its own `_meta` asks.
        if let Some(call) = lock(&self.inner.calls).get_mut(&parked.running.number) {
            call.log = requested_log(context);
        }
        let responses = request.input_responses.clone().unwrap_or_default();
        for (key, kind, reply) in parked.replies {
            let answer = match responses.get(&key) {
                Some(value) => parse_answer(kind, value.clone()),
                None => Err(ErrorData::invalid_params(
                    format!("the client's retry carried no answer for input request '{key}'"),
                    None,
                )),
            };
            let _ = reply.send(answer);
        }
        Ok(self
            .drive(parked.running, context.ct.clone(), &parked.tool)
            .await)
    }

    /// Waits for the call's result or its next requests to the client. Requests become an
    /// `InputRequiredResult`, and the call is parked until the client's retry.
    pub(super) async fn drive(
        &self,
        mut running: Running,
        client: CancellationToken,
        tool: &str,
    ) -> CallToolResponse {
        let first = tokio::select! {
            biased;
            done = &mut running.done => {
                return completed(
                    done.unwrap_or_else(|_| meta::error_result("the call ended without a result")),
                );
            }
            Some(pending) = running.inputs.recv() => pending,
            () = client.cancelled() => {
                running.cancel.cancel();
                return meta::error_result("the call was cancelled").into();
            }
        };
        self.park(running, first, tool)
    }

    /// Answers the client's request with what the call asked (`first`, and whatever else
    /// it has asked by now) as an `InputRequiredResult`, and parks the call until the
    /// client's retry.
    pub(super) fn park(
        &self,
        mut running: Running,
        first: Pending,
        tool: &str,
    ) -> CallToolResponse {
        // Everything the server asked at once goes out in one result.
        let mut asked = vec![first];
        while let Ok(more) = running.inputs.try_recv() {
            asked.push(more);
        }
        let mut requests = InputRequests::new();
        let mut replies = Vec::with_capacity(asked.len());
        for (index, Pending { request, reply }) in asked.into_iter().enumerate() {
            let Some(kind) = kind(&request) else {
                let _ = reply.send(Err(ErrorData::invalid_request(
                    "mcp-defer cannot carry this request to the client",
                    None,
                )));
                continue;
            };
            let key = format!("input-{index}");
            requests.insert(key.clone(), request);
            replies.push((key, kind, reply));
        }
        let number = self.inner.next.fetch_add(1, Ordering::Relaxed);
        let state = format!("{number:x}.{:016x}", self.inner.nonce.hash_one(number));
        let cancel = running.cancel.clone();
        lock(&self.inner.parked).insert(
            state.clone(),
            Parked {
                tool: tool.to_owned(),
                running,
                replies,
            },
        );
        let expiring = self.clone();
        let expired = state.clone();
        tokio::spawn(async move {
            tokio::select! {
                () = tokio::time::sleep(PARKED_CALL_TIMEOUT) => {}
                () = cancel.cancelled() => {}
            }
            if let Some(parked) = lock(&expiring.inner.parked).remove(&expired) {
                tracing::debug!(tool = %parked.tool, "parked call expired without a retry");
                parked.running.cancel.cancel();
            }
        });
        InputRequiredResult::new(Some(requests), Some(state)).into()
    }
}

fn kind(request: &InputRequest) -> Option<Kind> {
    match request {
        InputRequest::CreateMessage(_) => Some(Kind::Sampling),
        InputRequest::Elicitation(_) => Some(Kind::Elicitation),
        InputRequest::ListRoots(_) => Some(Kind::Roots),
        _ => None,
    }
}

/// Reads the client's answer to one input request as the result its kind expects.
#[expect(deprecated, reason = "answering what pre-2026-07-28 servers ask")]
fn parse_answer(kind: Kind, value: serde_json::Value) -> Result<ClientResult, ErrorData> {
    let invalid = |err: serde_json::Error| {
        ErrorData::invalid_params(
            format!("the client's answer is not a valid result: {err}"),
            None,
        )
    };
    Ok(match kind {
        Kind::Sampling => ClientResult::CreateMessageResult(Box::new(
            serde_json::from_value::<CreateMessageResult>(value).map_err(invalid)?,
        )),
        Kind::Elicitation => ClientResult::ElicitResult(
            serde_json::from_value::<ElicitResult>(value).map_err(invalid)?,
        ),
        Kind::Roots => ClientResult::ListRootsResult(
            serde_json::from_value::<ListRootsResult>(value).map_err(invalid)?,
        ),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn reads_answers_by_the_kind_asked() {
        let answer = parse_answer(
            Kind::Elicitation,
            json!({"action": "accept", "content": {"a": 1}}),
        );
        assert!(matches!(answer, Ok(ClientResult::ElicitResult(_))));
        let answer = parse_answer(Kind::Roots, json!({"roots": [{"uri": "file:///tmp"}]}));
        assert!(matches!(answer, Ok(ClientResult::ListRootsResult(_))));
        assert!(parse_answer(Kind::Sampling, json!({"nope": true})).is_err());
    }
}
