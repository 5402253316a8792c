//! What an HTTP request must pass before rmcp's transport sees it: a bearer token (when
//! configured) and the per-session limit on requests in flight.
//!
//! Tokens are compared in constant time (`subtle`), every configured token each time, so
//! the answer's timing says nothing about how much of a guess was right. A token never
//! reaches a log line or an error message. `Host`, `Origin` and the body size are checked
//! by rmcp behind this gate (see [`super::http`]).

use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use axum::body::Body;
use axum::extract::{Request, State};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use bytes::Bytes;
use http::{HeaderValue, Method, StatusCode, header};
use http_body::{Frame, SizeHint};
use subtle::ConstantTimeEq;
use tokio::sync::OwnedSemaphorePermit;

use super::error::HttpError;
use super::expiry::{Admission, Sessions};
use crate::config::{HttpSettings, TokenSource};

/// The accepted bearer tokens. `Debug` shows how many, never what.
pub(super) struct Tokens(Vec<Vec<u8>>);

impl std::fmt::Debug for Tokens {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Tokens({} configured)", self.0.len())
    }
}

impl Tokens {
    /// Reads the tokens `[settings.http]` names; `None` when it names none.
    ///
    /// # Errors
    /// An unset variable, an unreadable file, or either holding no token.
    pub fn load(settings: &HttpSettings) -> Result<Option<Tokens>, HttpError> {
        let tokens = match &settings.tokens {
            None => return Ok(None),
            Some(TokenSource::Env(var)) => {
                let value = std::env::var(var).unwrap_or_default();
                let tokens = split(value.split(','));
                if tokens.is_empty() {
                    return Err(HttpError::NoTokenInEnv { var: var.clone() });
                }
                tokens
            }
            Some(TokenSource::File(path)) => {
                let shown = path.display().to_string();
                let text = std::fs::read_to_string(path).map_err(|cause| HttpError::TokenFile {
                    path: shown.clone(),
                    cause,
                })?;
                let tokens = split(text.lines().filter(|l| !l.trim_start().starts_with('#')));
                if tokens.is_empty() {
                    return Err(HttpError::NoTokenInFile { path: shown });
                }
                tokens
            }
        };
        Ok(Some(Tokens(tokens)))
    }

    /// Whether `offered` is one of the tokens, in time that depends only on the lengths.
    fn accepts(&self, offered: &[u8]) -> bool {
        let mut found = subtle::Choice::from(0);
        for token in &self.0 {
            found |= token.as_slice().ct_eq(offered);
        }
        found.into()
    }
}

fn split<'a>(parts: impl Iterator<Item = &'a str>) -> Vec<Vec<u8>> {
    parts
        .map(str::trim)
        .filter(|t| !t.is_empty())
        .map(|t| t.as_bytes().to_vec())
        .collect()
}

/// The gate's state: cheap to clone per request.
#[derive(Clone)]
pub(super) struct Gate {
    tokens: Option<Arc<Tokens>>,
    sessions: Arc<Sessions>,
}

impl Gate {
    pub fn new(tokens: Option<Arc<Tokens>>, sessions: Arc<Sessions>) -> Gate {
        Gate { tokens, sessions }
    }
}

/// The middleware: 401 without a valid token (when tokens are configured), 429 when the
/// session already has its limit of requests in flight; otherwise on to rmcp, holding a
/// permit until the response body (an SSE stream for most requests) ends.
pub(super) async fn admit(State(gate): State<Gate>, request: Request, next: Next) -> Response {
    if let Some(tokens) = &gate.tokens {
        let offered = request
            .headers()
            .get(header::AUTHORIZATION)
            .and_then(|v| v.as_bytes().strip_prefix(b"Bearer "));
        if !offered.is_some_and(|t| tokens.accepts(t)) {
            let mut response = (
                StatusCode::UNAUTHORIZED,
                "Unauthorized: send `Authorization: Bearer <token>` with a token from \
                 [settings.http] tokens_env or token_file",
            )
                .into_response();
            response.headers_mut().insert(
                header::WWW_AUTHENTICATE,
                HeaderValue::from_static("Bearer realm=\"mcp-defer\""),
            );
            return response;
        }
    }
    // Only POSTs count: a GET is the session's one long-lived notification stream.
    let session = (request.method() == Method::POST)
        .then(|| request.headers().get("mcp-session-id"))
        .flatten()
        .and_then(|v| v.to_str().ok())
        .map(str::to_owned);
    let permit = match session.map(|id| gate.sessions.admit(&id)) {
        // Unknown sessions go on to rmcp, which answers 404 as the spec says.
        None | Some(Admission::Unknown) => None,
        Some(Admission::Admitted(permit)) => Some(permit),
        Some(Admission::Busy { limit }) => {
            return (
                StatusCode::TOO_MANY_REQUESTS,
                format!(
                    "Too Many Requests: this session already has {limit} requests in flight \
                     ([settings.http] max_concurrent_requests); retry when one has finished"
                ),
            )
                .into_response();
        }
    };
    let response = next.run(request).await;
    match permit {
        None => response,
        Some(permit) => {
            let (parts, body) = response.into_parts();
            Response::from_parts(
                parts,
                Body::new(Held {
                    body,
                    _permit: permit,
                }),
            )
        }
    }
}

/// A response body that holds its session's permit until it ends or is dropped.
struct Held {
    body: Body,
    _permit: OwnedSemaphorePermit,
}

impl http_body::Body for Held {
    type Data = Bytes;
    type Error = axum::Error;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, axum::Error>>> {
        Pin::new(&mut self.body).poll_frame(cx)
    }

    fn is_end_stream(&self) -> bool {
        self.body.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.body.size_hint()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_accept_each_configured_one_and_nothing_else() {
        let tokens = Tokens(split("alpha, beta ,,".split(',')));
        assert!(tokens.accepts(b"alpha"));
        assert!(tokens.accepts(b"beta"));
        assert!(!tokens.accepts(b"alph"));
        assert!(!tokens.accepts(b"alphaa"));
        assert!(!tokens.accepts(b""));
        assert_eq!(format!("{tokens:?}"), "Tokens(2 configured)");
    }
}
