//! The one integration target: drives the built binaries over real stdio.

// Tests may panic on broken setup; the crate-wide unwrap/expect denial is for the library.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod raw;
mod replicas;
mod session;
mod util;

mod check;
mod client_requests;
mod deploy;
mod downstream;
mod eras;
mod framing;
mod fuzz;
mod http;
mod import;
mod interop;
mod launcher;
mod lazy;
mod list;
mod oauth;
mod output_limit;
mod overrides;
mod passthrough;
mod reliability;
mod reload;
mod search;
mod search_feel;
mod secrets;
#[cfg(feature = "model")]
mod semantic_model;
mod serve;
mod shutdown;
mod soak;
mod tool_fidelity;
