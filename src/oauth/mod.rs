//! OAuth for remote (Streamable HTTP) servers, as Claude Code and Codex do it: `mcp-defer
//! login <server>` runs the authorization code flow with PKCE once and stores the tokens;
//! every later connection puts the access token on its requests, refreshes it when it
//! expires, and on a 401 refreshes and retries once (rmcp's `AuthClient`). A server that
//! answers 401 with no usable login is in the "needs login" state, which names the
//! command to run; it is never retried in a loop.
//!
//! - [`store`]: the 0600 token file, keyed by the server's URL.
//! - [`login`]: discovery, registration, the authorization URL, the code exchange.
//! - [`callback`]: the loopback redirect listener.
//!
//! Tokens never reach a log line, an error, `check`'s output or the model: each one read
//! or received is registered with [`crate::redact`]. Depends on `config` only.

pub(crate) mod callback;
pub(crate) mod login;
pub(crate) mod store;

pub(crate) use login::{Prompt, Target, login, stored_session};
pub(crate) use store::TokenFile;

/// The sentence the user and the model read for a server that needs a login.
pub(crate) fn needs_login(server: &str) -> String {
    format!("needs login: run `mcp-defer login {server}`")
}
