//! A client's pre-registered OAuth client settings, carried into our keys so that
//! `mcp-defer login` can sign in to servers without dynamic client registration:
//!
//! - Claude Code: `"oauth": {"clientId", "callbackPort", "scopes" (space-separated)}`; the
//!   secret is in its keychain, never in the file
//!   (<https://docs.anthropic.com/en/docs/claude-code/mcp>).
//! - Cursor: `"auth": {"CLIENT_ID", "CLIENT_SECRET", "scopes": [...]}`
//!   (<https://docs.cursor.com/context/model-context-protocol>).
//! - Gemini CLI and Qwen Code: `"oauth": {"enabled", "clientId", "clientSecret", "scopes",
//!   "redirectUri", ...}`.
//! - Codex: `[mcp_servers.<name>.oauth] client_id` (read in `codex.rs`).
//!
//! A secret is never copied: a `${VAR}` reference becomes `oauth_client_secret_env_var`, a
//! literal gets a note asking for a variable. Notes name keys, never values.

use serde_json::{Map, Value as Json};

use super::dialect::Dialect;
use super::server::Server;

/// Reads the OAuth settings of `entry` into `server`; returns the keys it read.
pub(super) fn read(
    entry: &Map<String, Json>,
    dialect: Dialect,
    server: &mut Server,
    vars: &mut dyn FnMut(&str) -> String,
) -> Vec<&'static str> {
    let key = match dialect {
        Dialect::Cursor => "auth",
        _ => "oauth",
    };
    let mut read = Vec::new();
    if dialect == Dialect::Gemini && entry.contains_key("authProviderType") {
        server.oauth = true;
        read.push("authProviderType");
    }
    let Some(settings) = entry.get(key) else {
        return read;
    };
    read.push(key);
    let Some(settings) = settings.as_object() else {
        server.oauth = true;
        return read;
    };
    // Gemini's `"enabled": false` turns its OAuth off for this server.
    if settings.get("enabled") == Some(&Json::Bool(false)) {
        return read;
    }
    server.oauth = true;
    let (id_key, secret_key) = match dialect {
        Dialect::Cursor => ("CLIENT_ID", "CLIENT_SECRET"),
        _ => ("clientId", "clientSecret"),
    };
    if let Some(id) = settings.get(id_key).and_then(Json::as_str) {
        server.oauth_client_id = Some(vars(id));
    }
    if let Some(secret) = settings.get(secret_key).and_then(Json::as_str) {
        match variable_of(&vars(secret)) {
            Some(var) => server.oauth_client_secret_env_var = Some(var),
            None => server.notes.push(format!(
                "its OAuth client secret (`{key}.{secret_key}`) is not copied into the \
                 servers.toml; put it in an environment variable and add \
                 `oauth_client_secret_env_var = \"<NAME>\"`"
            )),
        }
    }
    match settings.get("scopes") {
        Some(Json::String(list)) => {
            let scopes: Vec<String> = list.split_whitespace().map(str::to_owned).collect();
            if !scopes.is_empty() {
                server.scopes = Some(scopes);
            }
        }
        Some(Json::Array(items)) => {
            let scopes: Vec<String> = items
                .iter()
                .filter_map(Json::as_str)
                .map(str::to_owned)
                .collect();
            if !scopes.is_empty() {
                server.scopes = Some(scopes);
            }
        }
        _ => {}
    }
    if let Some(port) = settings.get("callbackPort").and_then(Json::as_u64) {
        server.oauth_callback_port = u16::try_from(port).ok().filter(|p| *p > 0);
    }
    if let Some(uri) = settings.get("redirectUri").and_then(Json::as_str) {
        match loopback_callback_port(uri) {
            Some(port) => server.oauth_callback_port = Some(port),
            None => server.notes.push(format!(
                "its OAuth client was registered with the redirect URI {uri:?}; mcp-defer \
                 logs in with `http://localhost:<oauth_callback_port>/callback`, so add that \
                 redirect to the client's registration"
            )),
        }
    }
    read
}

/// `NAME` when `value` is exactly one `${NAME}` (our syntax, after the client's `vars`).
fn variable_of(value: &str) -> Option<String> {
    let name = value.strip_prefix("${")?.strip_suffix('}')?;
    let valid = !name.is_empty() && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
    valid.then(|| name.to_owned())
}

/// The port of `http://localhost:<port>/callback` (or `127.0.0.1`): the redirect URI our
/// login uses with a fixed port. Any other URI cannot be ours.
fn loopback_callback_port(uri: &str) -> Option<u16> {
    let rest = uri
        .strip_prefix("http://localhost:")
        .or_else(|| uri.strip_prefix("http://127.0.0.1:"))?;
    let (port, path) = rest.split_once('/')?;
    (path == "callback").then(|| port.parse().ok())?
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn redirect_uris_of_our_shape_give_the_port() {
        assert_eq!(
            loopback_callback_port("http://localhost:3118/callback"),
            Some(3118)
        );
        assert_eq!(
            loopback_callback_port("http://localhost:7777/oauth/callback"),
            None
        );
        assert_eq!(
            variable_of("${CLIENT_SECRET}").as_deref(),
            Some("CLIENT_SECRET")
        );
        assert_eq!(variable_of("s3cr3t"), None);
    }
}
