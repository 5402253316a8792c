//! The order of the locks one request can reach, written once (issue 23): before this
//! page it lived in comments over `server/mod.rs`, `ingest/mod.rs` and the files that take
//! them. All are std locks taken through [`crate::sync`], held for a few lines and never
//! across `.await`: a std guard is not `Send`, so a handler future that held one over an
//! `.await` would not compile (rmcp needs `Send` handler futures).
//!
//! A lock may be taken while holding locks of earlier rows only; the locks of one row are
//! never held together.
//!
//! 1. `Shared::sessions`, the live sessions: held to read each one's `LogLevel`
//!    (`passthrough/logging.rs`).
//! 2. `Shared::subscriptions`, the downstream subscriptions of all sessions: held while a
//!    session counts its hold (`Session::subscribed`, `passthrough/resources.rs`).
//! 3. The registry's catalogs (`ingest::Registry`): `catalog`, then `index` (a search
//!    holds both); `prompts`; `resources`.
//! 4. One session's lists (`server/session/`), each after its registry catalog:
//!    `exposed` (after `catalog` and `index`: `meta/search_tools.rs`, `meta/select_tools.rs`,
//!    `arrivals.rs`, `handler.rs`'s `tools/list`), `prompts`, `resources`, `subscribed`.
//! 5. Innermost, nothing is taken while one is held: `Shared::running` (a snapshot, cloned
//!    out at once: [`super::view::Servers`]), `Shared::reload_problem`, `LogLevel`, the
//!    registry's `instructions` and `searchable`, `Session::tasks`, the
//!    `Notifier`'s `legacy` and `subscriptions`, `ClientRequests`' `session`,
//!    `downstream_level`, `calls` and `parked`, `Validators` (`meta/validate.rs`) and
//!    `ToolLists` (`stdio/tool_lists.rs`).
//!
//! The one async lock is the reload's pool (`reload.rs`), held across `.await` on purpose
//! and never on a request's path.
