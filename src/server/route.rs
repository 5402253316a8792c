//! Where a `tools/call` for a downstream tool goes: the one path to a server, for direct
//! calls by qualified name and for `call_tool` ([`super::meta::call_tool`]) alike.
//!
//! The tool's server gets the call under the tool's original name, with the client's
//! `_meta` minus the protocol envelope; its progress comes back under the client's token,
//! requests it sends its client during the call are tied to this call, and whatever goes
//! wrong downstream comes back as an error result naming the server (DESIGN.md invariant 4).

use rmcp::model::{CallToolRequestParams, ProgressNotificationParam};
use rmcp::service::RequestContext;
use rmcp::{ErrorData as McpError, Peer, RoleServer};
use tokio::sync::mpsc;

use super::call_reply::CallReply;
use super::passthrough::{LogLevel, envelope};
use super::session::Session;
use super::shared::Shared;
use super::{meta, output_limit, view};
use crate::catalog::EntryId;
use crate::downstream::{CallAnswer, CallOptions, DownstreamError, Passing, ProgressRoute};
use crate::search::usage::Kind;

/// A direct `tools/call` of a downstream tool by its qualified name, from `session`. A
/// name we do not know yet waits for starting servers first (an early call sees what is
/// coming).
///
/// # Errors
/// `invalid_params` for an empty, over-long or unknown name, with what to do instead.
pub(super) async fn call_direct(
    shared: &Shared,
    session: &Session,
    request: CallToolRequestParams,
    context: &RequestContext<RoleServer>,
    pass: Pass,
) -> Result<CallReply, McpError> {
    let name = meta::clean_name(&request.name)
        .map_err(|err| McpError::invalid_params(err.to_string(), None))?
        .to_owned();
    match entry_waiting(shared, &name).await {
        Some(id) => {
            (session.usage()).note_choice(shared.learning(), &name, Kind::Called, false);
            let level = session.log_level();
            Ok(route(shared, level, id, request, &name, context, pass).await)
        }
        None => {
            let message = shared.unknown_message(&name).await;
            Err(McpError::invalid_params(
                format!("{message} Then select_tools or call_tool."),
                None,
            ))
        }
    }
}

/// The catalog entry named `name`; a name not known yet waits for starting servers, and
/// only until it is known: a tool of a server that is ready goes at once.
pub(super) async fn entry_waiting(shared: &Shared, name: &str) -> Option<EntryId> {
    let id = || shared.registry().catalog().by_name(name).map(|e| e.id);
    if let Some(id) = id() {
        return Some(id);
    }
    shared.wait_for_servers_unless(|| id().is_some()).await;
    id()
}

/// Whether a call's answer may reach its caller as the server wrote it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Pass {
    /// Decoded: the caller works on the result, or writes it typed.
    Typed,
    /// As written where it can be (`downstream/passed.rs`): the thin call path of a
    /// handshake-era session, which writes the bytes under its client's id.
    Bytes,
}

/// Sends one call to the tool's server and returns its result unchanged; a failure of the
/// server becomes an error result naming it (DESIGN.md invariant 4). `client_tool` is the
/// name the client called (a retry after `InputRequiredResult` must repeat it); `level`
/// the calling session's, for the server's log messages during the call.
pub(super) async fn route(
    shared: &Shared,
    level: &LogLevel,
    id: EntryId,
    mut request: CallToolRequestParams,
    client_tool: &str,
    context: &RequestContext<RoleServer>,
    pass: Pass,
) -> CallReply {
    // A change the server just announced is listed and screened before its call goes.
    let announced = (shared.registry().catalog())
        .get(id)
        .map(|e| e.server_index);
    if let Some(server) = announced
        && let Err(message) = shared.await_screened(server).await
    {
        return meta::error_result(message).into();
    }
    let Some((server, server_name, qualified, original, gone)) =
        (shared.registry().catalog()).get(id).map(|e| {
            let name = e.name.to_string();
            (
                e.server_index,
                e.server.clone(),
                name,
                e.original_name().to_owned(),
                e.gone,
            )
        })
    else {
        return meta::error_result("Unknown tool.").into();
    };
    // Held by trust (its definition changed since approved): nothing reaches the server.
    if gone && let Some(held) = shared.registry().trust().held(&server_name, &original) {
        return meta::error_result(held.message(&qualified)).into();
    }
    let servers = shared.view();
    let Some(handle) = servers.handles.get(server).cloned() else {
        return meta::error_result("Unknown server.").into();
    };
    if servers.is_removed(server) {
        let message = view::removed_message(client_tool, handle.name());
        return meta::error_result(message).into();
    }
    if gone {
        return meta::error_result(format!(
            "Server '{}' no longer offers the tool '{original}'. Use search_tools to find another.",
            handle.name()
        ))
        .into();
    }
    request.name = original.into();
    // The client's `_meta` reaches rmcp in the context, not in the params.
    let client_meta = request.meta.take().unwrap_or_else(|| context.meta.clone());
    request.meta = envelope::forwarded_meta(&client_meta);
    // The route's channel is read by the call itself while it waits (`with_progress`):
    // a task of its own a call would cost every client that sends a token, and Claude Code
    // sends one with every call.
    let (progress, forward) = match client_meta.get_progress_token() {
        Some(client_token) => {
            let (tx, rx) = mpsc::unbounded_channel();
            let route = ProgressRoute { tx, client_token };
            (Some(route), Some((rx, context.peer.clone())))
        }
        None => (None, None),
    };
    // The next round of a 2026-07-28 retry is not the downstream's business.
    request.input_responses = None;
    request.request_state = None;
    let max_output_tokens = servers.config.max_output_tokens(server);
    let passing = (pass == Pass::Bytes).then(|| Passing {
        budget: max_output_tokens.map(crate::tokens::bytes_for),
    });
    let level = level.clone();
    shared
        .client()
        .run(
            context,
            client_tool,
            level,
            move |origin, cancel| async move {
                let options = CallOptions {
                    cancel,
                    progress,
                    origin: Some(origin),
                    passing,
                };
                let called = handle.call_answer(request, options);
                let called = match forward {
                    Some((progress, peer)) => with_progress(called, progress, &peer).await,
                    None => called.await,
                };
                let mut result = match called {
                    Ok(CallAnswer::Result(result)) => result,
                    // Passed only when the output limit cannot cut it.
                    Ok(passed @ CallAnswer::Passed(_)) => return passed,
                    Err(err @ DownstreamError::Cancelled) => meta::error_result(err.to_string()),
                    // A server's error message may quote a URL or a token back at us.
                    Err(err) => meta::error_result(crate::redact::redact(&err.to_string())),
                };
                envelope::mark_complete(&mut result.result_type);
                output_limit::apply(&mut result, max_output_tokens);
                CallAnswer::Result(result)
            },
        )
        .await
}

/// Waits for `call` while passing its progress to the client as it comes. Every progress
/// read before the answer goes out before the result: the connection's reader puts a
/// call's progress in its route before it hands over the answer, and what is left in the
/// channel when the call ends is sent first. A client drops progress that arrives after
/// the result of its request (the Python SDK does).
async fn with_progress<T>(
    call: impl Future<Output = T>,
    mut progress: mpsc::UnboundedReceiver<ProgressNotificationParam>,
    peer: &Peer<RoleServer>,
) -> T {
    tokio::pin!(call);
    // Until the client's side of the connection is gone.
    let mut open = true;
    let result = loop {
        tokio::select! {
            biased;
            param = progress.recv(), if open => match param {
                Some(param) => open = peer.notify_progress(param).await.is_ok(),
                None => open = false,
            },
            result = &mut call => break result,
        }
    };
    while open && let Ok(param) = progress.try_recv() {
        open = peer.notify_progress(param).await.is_ok();
    }
    result
}
