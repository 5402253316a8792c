//! What passes through as it would directly, the state half: the lists a client was shown
//! ([`shown`]), who holds which resource subscription ([`subscriptions`]), a session's log
//! level ([`logging`]), the requests downstream servers send their client (sampling,
//! elicitation, roots: [`client_requests`]), and the protocol envelope of the connection a
//! message goes over ([`envelope`]). None of it takes the shared state: `shared.rs` and
//! `session/` hold it; the client's own requests that pass through (prompts, resources,
//! completions, `logging/setLevel`) are answered in `forwarded/`, a floor above them.

mod client_requests;
pub(super) mod envelope;
mod logging;
mod shown;
mod subscriptions;

pub(crate) use client_requests::ClientRequests;
pub(crate) use logging::LogLevel;
pub(super) use logging::rank;
pub(super) use shown::{Prompts, ResourceLists};
pub(super) use subscriptions::{Holds, Subscriptions};
