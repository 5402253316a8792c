//! `token_file` followed while `serve --http` runs: a token removed from the file is
//! refused from the next request on, and the sessions it opened are closed; a token added
//! is accepted. The log says how many of each, never which.
//!
//! The file is watched as the config is (`reload::Watch`, the same debounce). A file that
//! cannot be read or holds no token accepts none: a credential list that went missing
//! fails closed, and the log says so and how to fix it.

use std::path::PathBuf;
use std::sync::Arc;

use tokio_util::sync::CancellationToken;

use super::expiry::Sessions;
use super::gate::{Tokens, read_token_file};
use crate::server::reload::Watch;

/// Follows `path` until `stop`, applying each change to `tokens` and closing the revoked
/// tokens' sessions in every one of `sessions` (one per path served).
pub(super) fn follow(
    path: PathBuf,
    tokens: Arc<Tokens>,
    sessions: Vec<Arc<Sessions>>,
    stop: CancellationToken,
) {
    let mut watch = match Watch::file(&path) {
        Ok(watch) => watch,
        Err(err) => {
            tracing::warn!(
                path = %path.display(),
                error = %err,
                "cannot watch [settings.http] token_file; a token removed from it is accepted \
                 until mcp-defer restarts"
            );
            return;
        }
    };
    tokio::spawn(async move {
        loop {
            tokio::select! {
                () = stop.cancelled() => return,
                () = watch.changed() => {}
            }
            let file = path.clone();
            let listed = match tokio::task::spawn_blocking(move || read_token_file(&file)).await {
                Ok(Ok(listed)) => listed,
                Ok(Err(err)) => {
                    tracing::error!(
                        error = %err,
                        "[settings.http] token_file changed and has no token now: every \
                         request is refused until one is written there"
                    );
                    Vec::new()
                }
                Err(err) => {
                    tracing::error!(error = %err, "reading [settings.http] token_file failed; every request is refused until it is read again");
                    Vec::new()
                }
            };
            let change = tokens.reread(listed);
            let mut closed = 0;
            for sessions in &sessions {
                closed += sessions.close_owned_by(&change.revoked).await;
            }
            tracing::info!(
                revoked = change.revoked.len(),
                added = change.added,
                sessions_closed = closed,
                "[settings.http] token_file changed: removed tokens are refused from now on \
                 and their sessions closed"
            );
        }
    });
}
