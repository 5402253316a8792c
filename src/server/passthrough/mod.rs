//! What passes through as it would directly: prompts, resources and templates, completions,
//! and the requests downstream servers send their client (sampling, elicitation, roots),
//! each with the protocol envelope of the connection it goes over ([`envelope`]).

use rmcp::ErrorData as McpError;
use rmcp::model::ErrorCode;

use crate::downstream::DownstreamError;

mod client_requests;
mod completions;
pub(super) mod envelope;
mod logging;
mod prompts;
mod resources;

pub(crate) use client_requests::ClientRequests;
pub(crate) use logging::LogLevel;
pub(super) use prompts::Prompts;
pub(super) use resources::{Resources, Subscription, release_ended};

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
