//! The loopback redirect of a login: a one-shot HTTP listener on `127.0.0.1` at an
//! ephemeral port (RFC 8252 section 7.3) that waits for the browser to come back to
//! `/callback` with the authorization code, answers it with a short page, and hands the
//! full callback URL to rmcp, which exchanges the code.
//!
//! Only a callback whose `state` is the one of the login under way ends the wait. Any
//! other page or program on the machine can reach the port: a `/callback` with another
//! state (or none) is answered 400 and the wait goes on, so it can neither end the login
//! nor plant a code of its own.

use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpListener;

/// The path the authorization server redirects to.
pub(crate) const CALLBACK_PATH: &str = "/callback";
/// The most of a request we read: a request line with a long code and state fits easily.
const MAX_REQUEST_BYTES: usize = 16 * 1024;
/// How long one connection may take to send its request line.
const READ_TIMEOUT: Duration = Duration::from_secs(10);

#[derive(Debug, thiserror::Error)]
pub(crate) enum CallbackError {
    #[error("cannot listen on 127.0.0.1 for the login callback: {0}")]
    Bind(std::io::Error),
    #[error(
        "port {0} (`oauth_callback_port`) is in use on 127.0.0.1; close what listens there \
         (another login?) and run the command again"
    )]
    PortInUse(u16),
    #[error("no callback within {} s; run the command again and finish the login in the browser", .0.as_secs())]
    Timeout(Duration),
}

/// A bound listener and the redirect URI that reaches it.
pub(crate) struct Callback {
    listener: TcpListener,
    redirect_uri: String,
}

impl Callback {
    /// Binds `127.0.0.1:0`: the OS picks a free port, so two logins never collide. With a
    /// fixed `port` (a client registered with `http://localhost:<port>/callback`, as Claude
    /// Code registers them) binds that port and uses that redirect URI.
    ///
    /// # Errors
    /// [`CallbackError::Bind`] when no loopback socket can be opened,
    /// [`CallbackError::PortInUse`] when the fixed port is taken.
    pub(crate) async fn bind(port: Option<u16>) -> Result<Callback, CallbackError> {
        let listener = TcpListener::bind(("127.0.0.1", port.unwrap_or(0)))
            .await
            .map_err(|e| match (port, e.kind()) {
                (Some(port), std::io::ErrorKind::AddrInUse) => CallbackError::PortInUse(port),
                _ => CallbackError::Bind(e),
            })?;
        let bound = listener.local_addr().map_err(CallbackError::Bind)?.port();
        // The registered redirect names `localhost`; the browser resolves it to the
        // loopback address we listen on.
        let host = if port.is_some() {
            "localhost"
        } else {
            "127.0.0.1"
        };
        Ok(Callback {
            listener,
            redirect_uri: format!("http://{host}:{bound}{CALLBACK_PATH}"),
        })
    }

    pub(crate) fn redirect_uri(&self) -> &str {
        &self.redirect_uri
    }

    /// Waits for `GET /callback?...` with `state` and returns the full URL it asked for.
    /// Other paths (a browser's `/favicon.ico`) get a 404, a callback with another state
    /// or none a 400, and the wait goes on.
    ///
    /// # Errors
    /// [`CallbackError::Timeout`] when nothing came back within `timeout`.
    pub(crate) async fn wait(
        self,
        server: &str,
        state: &str,
        timeout: Duration,
    ) -> Result<String, CallbackError> {
        let accept = async {
            loop {
                let Ok((mut socket, _)) = self.listener.accept().await else {
                    continue;
                };
                let Ok(Some(target)) =
                    tokio::time::timeout(READ_TIMEOUT, request_target(&mut socket))
                        .await
                        .map(Result::ok)
                        .map(Option::flatten)
                else {
                    continue;
                };
                let path = target.split('?').next().unwrap_or_default();
                if path != CALLBACK_PATH {
                    let _ = respond(&mut socket, "404 Not Found", "Not found.").await;
                    continue;
                }
                if query_value(&target, "state").as_deref() != Some(state) {
                    tracing::warn!(
                        "a callback came with another state than this login's; answered 400, \
                         still waiting for the browser"
                    );
                    let page = format!(
                        "This is not the login to {server} under way (its state does not \
                         match). The login is still waiting; finish it in the tab it opened."
                    );
                    let _ = respond(&mut socket, "400 Bad Request", &page).await;
                    continue;
                }
                let page = if target.contains("error=") {
                    format!(
                        "The authorization server refused the login to {server}. \
                         See the terminal for why."
                    )
                } else {
                    format!("Logged in to {server}. You can close this tab.")
                };
                let _ = respond(&mut socket, "200 OK", &page).await;
                let base = self.redirect_uri.trim_end_matches(CALLBACK_PATH);
                return format!("{base}{target}");
            }
        };
        tokio::time::timeout(timeout, accept)
            .await
            .map_err(|_| CallbackError::Timeout(timeout))
    }
}

/// The first value of `name` in the query of `target` (`/callback?code=..&state=..`, or a
/// whole URL), percent-decoded.
pub(super) fn query_value(target: &str, name: &str) -> Option<String> {
    let query = target.split_once('?')?.1;
    let query = query.split('#').next().unwrap_or_default();
    reqwest::Url::parse(&format!("http://127.0.0.1/?{query}"))
        .ok()?
        .query_pairs()
        .find(|(key, _)| key == name)
        .map(|(_, value)| value.into_owned())
}

/// The target of a `GET` request line (`/callback?code=...`), once its head has arrived.
async fn request_target(socket: &mut tokio::net::TcpStream) -> std::io::Result<Option<String>> {
    let mut head = Vec::new();
    let mut buf = [0u8; 2048];
    while !head.windows(4).any(|w| w == b"\r\n\r\n") && head.len() < MAX_REQUEST_BYTES {
        let n = socket.read(&mut buf).await?;
        if n == 0 {
            break;
        }
        head.extend_from_slice(&buf[..n]);
    }
    let text = String::from_utf8_lossy(&head);
    let mut parts = text.lines().next().unwrap_or_default().split(' ');
    match (parts.next(), parts.next()) {
        (Some("GET"), Some(target)) if target.starts_with('/') => Ok(Some(target.to_owned())),
        _ => Ok(None),
    }
}

async fn respond(
    socket: &mut tokio::net::TcpStream,
    status: &str,
    body: &str,
) -> std::io::Result<()> {
    let response = format!(
        "HTTP/1.1 {status}\r\ncontent-type: text/plain; charset=utf-8\r\ncontent-length: {}\r\n\
         connection: close\r\n\r\n{body}",
        body.len()
    );
    socket.write_all(response.as_bytes()).await?;
    socket.shutdown().await
}

#[cfg(test)]
mod tests {
    use super::query_value;

    #[test]
    fn the_state_is_read_decoded_from_the_query() {
        let target = "/callback?code=abc&state=a%2Bb%3D&x=1";
        assert_eq!(query_value(target, "state").as_deref(), Some("a+b="));
        assert_eq!(query_value("/callback?code=abc", "state"), None);
        assert_eq!(query_value("/callback", "state"), None);
    }
}
