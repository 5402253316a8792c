//! `mcp-defer login`: the authorization code flow with PKCE for one remote server, as
//! Claude Code and Codex run it. Discovery (the server's 401 challenge, protected resource
//! metadata RFC 9728, authorization server metadata RFC 8414), client registration (the
//! configured `oauth_client_id`, else dynamic registration RFC 7591), the authorization
//! URL, the loopback callback, the code exchange: all of it through rmcp's
//! `AuthorizationManager`, which also does the PKCE and `state` checks; nothing here
//! touches a token but to store it.

use std::time::Duration;

use rmcp::transport::auth::{
    AuthError, AuthorizationManager, AuthorizationRequest, AuthorizationSession,
};

use super::callback::{Callback, CallbackError, query_value};
use super::store::{ServerCredentials, StoreError, TokenFile};
use crate::config::OAuthClient;

/// What we call ourselves at dynamic client registration.
const CLIENT_NAME: &str = "mcp-defer";
/// How long the probe for the server's challenge may take.
const PROBE_TIMEOUT: Duration = Duration::from_secs(15);

/// Why a login failed. Texts name the server's URL and the step, never a token.
#[derive(Debug, thiserror::Error)]
pub(crate) enum LoginError {
    // The cause is the error's `source`, which `{:#}` prints after the message: naming it
    // in the message too printed it twice (a whole HTML page, twice, for a server that
    // answers discovery with one).
    #[error("discovery failed for {url}")]
    Discovery { url: String, source: AuthError },
    #[error("client registration failed at {url}'s authorization server")]
    Registration { url: String, source: AuthError },
    #[error("the authorization server refused the code: {0}")]
    Exchange(AuthError),
    #[error(transparent)]
    Callback(#[from] CallbackError),
    /// rmcp always puts a `state` in the authorization URL; without it no callback could
    /// be told from a forged one.
    #[error("the authorization URL has no `state` parameter, so the callback could not be checked")]
    NoState,
    #[error(transparent)]
    Store(#[from] StoreError),
}

/// The authorization URL is ready: show it to the user (and open a browser if one is
/// there). Called once, before the wait for the callback.
pub(crate) trait Prompt {
    fn show(&mut self, authorization_url: &str, redirect_uri: &str);
}

/// One server to log in to.
pub(crate) struct Target<'a> {
    pub name: &'a str,
    pub url: &'a str,
    pub client: &'a OAuthClient,
}

/// Runs the whole flow and stores the tokens in `file` under the server's URL.
///
/// # Errors
/// Each step's failure as a [`LoginError`] naming the step.
pub(crate) async fn login(
    target: &Target<'_>,
    file: &TokenFile,
    timeout: Duration,
    prompt: &mut dyn Prompt,
) -> Result<(), LoginError> {
    let discovery = |source| LoginError::Discovery {
        url: target.url.to_owned(),
        source,
    };
    // The resource is the URL without credentials: a `user:password@` there would go into
    // every discovery request's URL (and an HTTP client's logs) and into the `resource`
    // parameter of the authorization URL printed on stdout.
    let mut manager = AuthorizationManager::new(without_userinfo(target.url).as_str())
        .await
        .map_err(discovery)?;
    manager.set_credential_store(ServerCredentials {
        file: file.clone(),
        url: target.url.to_owned(),
    });
    let challenge = challenge(target.url).await;
    let resolution = manager
        .resolve_metadata_from_challenge(challenge.as_deref())
        .await
        .map_err(discovery)?;
    manager.set_metadata(resolution.metadata);

    let callback = Callback::bind(target.client.callback_port).await?;
    let redirect_uri = callback.redirect_uri().to_owned();
    let scopes = if target.client.scopes.is_empty() {
        manager.select_scopes(None, &[])
    } else {
        target.client.scopes.clone()
    };
    // Registered here rather than inside rmcp's session so that a confidential client's
    // secret is ours to keep: refreshing needs it again in every later run.
    let (client_id, client_secret) = match &target.client.client_id {
        Some(id) => (id.clone(), target.client.client_secret.clone()),
        None => {
            let scope_refs: Vec<&str> = scopes.iter().map(String::as_str).collect();
            let registered = manager
                .register_client(CLIENT_NAME, &redirect_uri, &scope_refs)
                .await
                .map_err(|source| LoginError::Registration {
                    url: target.url.to_owned(),
                    source,
                })?;
            if let Some(secret) = &registered.client_secret {
                crate::redact::register_secret(secret);
            }
            (registered.client_id, registered.client_secret)
        }
    };
    let mut request = AuthorizationRequest::new(redirect_uri.clone())
        .with_client_name(CLIENT_NAME)
        .with_preregistered_client(client_id.clone());
    if !scopes.is_empty() {
        request = request.with_scopes(scopes);
    }
    if let Some(secret) = &client_secret {
        request = request.with_client_secret(secret.clone());
    }
    let session = AuthorizationSession::new(manager, request)
        .await
        .map_err(|(_, source)| LoginError::Registration {
            url: target.url.to_owned(),
            source,
        })?;
    let authorization_url = session.get_authorization_url();
    // The state rmcp put in the URL: the one callback that may end the wait carries it.
    let state = query_value(authorization_url, "state").ok_or(LoginError::NoState)?;
    prompt.show(authorization_url, &redirect_uri);
    let callback_url = callback.wait(target.name, &state, timeout).await?;
    // Exchanges the code (checking `state` and sending the PKCE verifier) and saves the
    // tokens through `ServerCredentials`.
    session
        .handle_callback_url(&callback_url)
        .await
        .map_err(LoginError::Exchange)?;
    // What rmcp does not keep: the client's secret and redirect URI, for refreshing.
    if let Some(mut login) = file.load(target.url)? {
        login.client_secret = client_secret;
        login.redirect_uri = Some(redirect_uri);
        file.save(target.url, login)?;
    }
    Ok(())
}

/// `url` without its `user:password@`, if it has one (unparseable: as it is, for rmcp to
/// refuse with its own error).
fn without_userinfo(url: &str) -> String {
    match reqwest::Url::parse(url) {
        Ok(mut parsed) if !parsed.username().is_empty() || parsed.password().is_some() => {
            let _ = parsed.set_username("");
            let _ = parsed.set_password(None);
            parsed.to_string()
        }
        _ => url.to_owned(),
    }
}

/// The server's `WWW-Authenticate` challenge to an unauthenticated `initialize`, which
/// names its protected resource metadata and sometimes the scopes it wants. `None` when
/// it sent none; discovery then probes the well-known locations.
async fn challenge(url: &str) -> Option<String> {
    let client = reqwest::Client::builder()
        .timeout(PROBE_TIMEOUT)
        .build()
        .ok()?;
    let body = serde_json::json!({
        "jsonrpc": "2.0",
        "id": 0,
        "method": "initialize",
        "params": {
            "protocolVersion": "2025-06-18",
            "capabilities": {},
            "clientInfo": {"name": CLIENT_NAME, "version": env!("CARGO_PKG_VERSION")},
        },
    });
    let response = client
        .post(url)
        .header(http::header::ACCEPT, "application/json, text/event-stream")
        .header(http::header::CONTENT_TYPE, "application/json")
        .body(body.to_string())
        .send()
        .await
        .ok()?;
    if response.status() != reqwest::StatusCode::UNAUTHORIZED {
        return None;
    }
    response
        .headers()
        .get(http::header::WWW_AUTHENTICATE)?
        .to_str()
        .ok()
        .map(str::to_owned)
}

/// An `AuthorizationManager` holding this server's stored login, ready to put its token
/// on requests and to refresh it: `None` when there is no stored login (the server then
/// gets requests without a token, and its 401 says "needs login").
///
/// # Errors
/// The token file is unreadable, or discovery (which finds the token endpoint for
/// refreshing) failed.
pub(crate) async fn stored_session(
    url: &str,
    client: &OAuthClient,
    file: &TokenFile,
) -> Result<Option<AuthorizationManager>, AuthError> {
    let Some(login) = file
        .load(url)
        .map_err(|e| AuthError::CredentialStoreError(e.to_string()))?
    else {
        return Ok(None);
    };
    if login.credentials.token_response.is_none() {
        return Ok(None);
    }
    let mut manager = AuthorizationManager::new(url).await?;
    manager.set_credential_store(ServerCredentials {
        file: file.clone(),
        url: url.to_owned(),
    });
    if !manager.initialize_from_store().await? {
        return Ok(None);
    }
    // rmcp configured the client id alone; a confidential client needs its secret again
    // to refresh.
    let secret = login.client_secret.or_else(|| {
        (client.client_id.as_deref() == Some(login.credentials.client_id.as_str()))
            .then(|| client.client_secret.clone())
            .flatten()
    });
    if let Some(secret) = secret {
        let redirect = login
            .redirect_uri
            .unwrap_or_else(|| "http://127.0.0.1/callback".to_owned());
        let config = rmcp::transport::auth::OAuthClientConfig::new(
            login.credentials.client_id.clone(),
            redirect,
        )
        .with_client_secret(secret);
        manager.configure_client(config)?;
    }
    Ok(Some(manager))
}
