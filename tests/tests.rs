//! The one integration target: drives the built binaries over real stdio.

// Tests may panic on broken setup; the crate-wide unwrap/expect denial is for the library.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

#[cfg(unix)]
mod replicas;

mod activation;
mod adopt;
mod check;
mod client_requests;
mod deploy;
mod downstream;
mod edges;
mod eras;
#[cfg(unix)]
mod first_run;
mod framing;
mod fuzz;
mod http;
mod http_limits;
mod http_ops;
#[cfg(target_os = "linux")]
mod hub;
mod import;
#[cfg(unix)]
mod import_formats;
mod interop;
mod launcher;
#[cfg(target_os = "linux")]
mod lazy;
mod learning;
mod list;
mod logging;
#[cfg(feature = "model")]
mod model_fetch;
mod nesting;
mod network_env;
mod oauth;
mod onboarding;
mod output_limit;
mod overrides;
mod passthrough;
mod readme;
mod reliability;
#[cfg(target_os = "linux")]
mod reload;
mod report;
mod search;
mod search_feel;
mod search_needs;
mod secrets;
#[cfg(feature = "model")]
mod semantic_model;
mod serve;
// Linux only: they watch processes come and go through /proc (the promise itself holds on
// every OS; src/platform/ keeps it by each OS's means).
#[cfg(target_os = "linux")]
mod shutdown;
#[cfg(target_os = "linux")]
mod soak;
mod stats;
mod tool_fidelity;
mod trust;
mod unprefixed;
