//! The connect step of a supervisor: spawn a child (stdio) or dial a URL (Streamable HTTP,
//! with a configured token or a stored OAuth login), then handshake and the full lists,
//! all within `startup_timeout`. Each failure is a [`ConnectError`] the supervisor turns
//! into a state: restart, give up, or wait for a login.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use rmcp::model::Prompt;
use rmcp::service::{RoleClient, RunningService, ServiceExt};
use rmcp::transport::streamable_http_client::{
    StreamableHttpClient, StreamableHttpClientTransportConfig,
};
use tokio::sync::watch;
use tokio_util::sync::CancellationToken;

use super::cause::chain;
use super::child_transport::ChildTransport;
use super::environment::ChildEnv;
use super::handler::Handler;
use super::http_raw;
use super::listing;
use super::logging::{LogTap, apply_level};
use super::process::{self, GroupGuard, SpawnError, StderrLog, describe_exit};
use super::progress::{ProgressRoutes, ProgressTap};
use super::raw_call::RawLink;
use super::session_watch::{BrokenCause, SessionWatch};
use super::tap::Tap;
use super::upstream::InFlight;
use crate::config::{OAuthClient, ServerConfig, Transport};
use crate::server_tool::ServerTool;

/// How long to wait for a dead child's exit status after its pipe closed.
const EXIT_WAIT: Duration = Duration::from_secs(1);
/// How long to wait for a dead child's last stderr lines after its exit status.
const STDERR_DRAIN: Duration = Duration::from_millis(250);

/// What one connection attempt is made with: the handler its server talks to, the token
/// that closes it, the server's config, and the routes its taps feed.
pub(super) struct Dial<'a> {
    pub handler: Handler,
    pub ct: CancellationToken,
    pub config: &'a ServerConfig,
    pub progress: &'a Arc<ProgressRoutes>,
    pub calls: &'a Arc<InFlight>,
}

/// A connection made: the running service, what it listed, and its child (stdio only).
pub(super) type Made = (RunningService<RoleClient, Handler>, Offer, Option<Child>);

/// Spawns or dials the server of `dial.config`, then handshake and full lists (tools, and
/// prompts and resources when declared), all within `startup_timeout`. `broken` receives
/// why an HTTP connection broke later; the longest answer a child may send is
/// `max_message_bytes`.
pub(super) async fn dial(
    dial: Dial<'_>,
    max_message_bytes: usize,
    broken: &BrokenCause,
) -> Result<Made, ConnectError> {
    match &dial.config.transport {
        transport @ Transport::Stdio {
            command, args, cwd, ..
        } => {
            let mut env = ChildEnv::from_process(transport).unwrap_or_else(|| ChildEnv {
                inherit: false,
                vars: BTreeMap::new(),
            });
            env.mark_server(&dial.config.name);
            let spawned = process::spawn(command, args, &env, cwd.as_deref(), max_message_bytes)?;
            let child = Child {
                group: spawned.group,
                exit: spawned.exit,
                stderr: spawned.stderr,
                raw: spawned.transport.raw_link(),
            };
            stdio(dial, spawned.transport, child).await
        }
        Transport::Http {
            url,
            bearer_token,
            headers,
            oauth,
        } => {
            let (running, offer) = http(dial, url, bearer_token, headers, oauth, broken).await?;
            Ok((running, offer, None))
        }
    }
}

/// Handshake and lists over a spawned child's pipes; a child that fails is terminated,
/// and its exit status and stderr tail say why.
async fn stdio(
    dial: Dial<'_>,
    transport: ChildTransport,
    mut child: Child,
) -> Result<Made, ConnectError> {
    let after = dial.config.startup_timeout;
    let server = dial.handler.server.clone();
    let transport = tapped(transport, &dial);
    let start = handshake(dial.handler, transport, dial.ct, dial.config);
    match tokio::time::timeout(after, start).await {
        Ok(Ok((running, offer))) => Ok((running, offer, Some(child))),
        Ok(Err(err)) => {
            // A server that answered the handshake and then refused tools/list
            // said why; its exit afterwards is our doing, not the cause.
            let err = match err {
                StartError::List(message) => ConnectError::List {
                    message,
                    stderr: child.stderr.tail(),
                },
                // Only an HTTP answer asks for a login; a child cannot.
                StartError::NeedsLogin => ConnectError::Handshake {
                    message: "the server asked for an OAuth login".to_owned(),
                    stderr: child.stderr.tail(),
                },
                StartError::Handshake(message) => match child.cause().await {
                    Some((status, stderr)) => ConnectError::Exited { status, stderr },
                    None => ConnectError::Handshake {
                        message,
                        stderr: child.stderr.tail(),
                    },
                },
            };
            child.group.terminate().await;
            Err(err)
        }
        Err(_) => {
            let stderr = child.stderr.tail();
            child.group.terminate().await;
            Err(ConnectError::Timeout {
                after,
                server: server.to_string(),
                stderr,
            })
        }
    }
}

/// Handshake and lists with a Streamable HTTP server, with the configured token or
/// headers, else a stored OAuth login when there is one.
async fn http(
    dial: Dial<'_>,
    url: &str,
    bearer_token: &Option<String>,
    headers: &BTreeMap<String, String>,
    oauth: &OAuthClient,
    broken: &BrokenCause,
) -> Result<(RunningService<RoleClient, Handler>, Offer), ConnectError> {
    let after = dial.config.startup_timeout;
    let server = dial.handler.server.clone();
    let mut config =
        StreamableHttpClientTransportConfig::with_uri(url).custom_headers(http_headers(headers)?);
    // A configured token or Authorization header is the user's choice of
    // credentials; a stored login is used only where there is neither.
    let configured = bearer_token.is_some()
        || headers
            .keys()
            .any(|name| name.eq_ignore_ascii_case("authorization"));
    if let Some(token) = bearer_token {
        config = config.auth_header(token.clone());
    }
    let start = async {
        let login = if configured {
            None
        } else {
            let file = crate::oauth::TokenFile::default_location().ok();
            match file {
                Some(file) => crate::oauth::stored_session(url, oauth, &file)
                    .await
                    .map_err(|err| StartError::Handshake(chain(&err)))?,
                None => None,
            }
        };
        let http = http_client();
        match login {
            Some(manager) => {
                let client = rmcp::transport::AuthClient::new(http, manager);
                over_http(dial, client, config, broken).await
            }
            None => over_http(dial, http, config, broken).await,
        }
    };
    match tokio::time::timeout(after, start).await {
        Ok(Ok(made)) => Ok(made),
        Ok(Err(StartError::NeedsLogin)) => Err(ConnectError::NeedsLogin {
            server: server.to_string(),
        }),
        Ok(Err(StartError::Handshake(message))) => Err(ConnectError::Http {
            url: url.to_owned(),
            message,
        }),
        Ok(Err(StartError::List(message))) => Err(ConnectError::List {
            message,
            stderr: None,
        }),
        Err(_) => Err(ConnectError::Timeout {
            after,
            server: server.to_string(),
            stderr: None,
        }),
    }
}

/// One path for either HTTP client (plain, or carrying an OAuth login): its raw answers
/// kept, a broken session noticed, the taps on, then handshake and lists.
async fn over_http<C>(
    dial: Dial<'_>,
    client: C,
    config: StreamableHttpClientTransportConfig,
    broken: &BrokenCause,
) -> Result<(RunningService<RoleClient, Handler>, Offer), StartError>
where
    C: StreamableHttpClient + Sync + Send + 'static,
{
    let transport = tapped(
        SessionWatch::new(http_raw::transport(client, config), broken.clone()),
        &dial,
    );
    handshake(dial.handler, transport, dial.ct, dial.config).await
}

/// Why a connection could not be made. The Display is the cause without the child's
/// stderr, which [`ConnectError::stderr`] gives apart: the model reads the one, the user and
/// the log get both.
#[derive(Debug, thiserror::Error)]
pub(super) enum ConnectError {
    #[error(transparent)]
    Spawn(#[from] SpawnError),
    #[error("{status}")]
    Exited {
        status: String,
        stderr: Option<String>,
    },
    /// Names the setting: a first run of a launcher, or a server that builds an index at
    /// start, needs more than the default, and the user must know which key gives it.
    #[error(
        "timed out after {} s waiting for the handshake and tools/list; if it needs longer \
         (a launcher's first run downloads the package), raise `startup_timeout_sec` in \
         [mcp_servers.{server}]",
        after.as_secs_f64()
    )]
    Timeout {
        after: Duration,
        server: String,
        stderr: Option<String>,
    },
    #[error("handshake failed: {message}")]
    Handshake {
        message: String,
        stderr: Option<String>,
    },
    #[error("cannot reach {url}: {message}")]
    Http { url: String, message: String },
    #[error("tools/list failed: {message}")]
    List {
        message: String,
        stderr: Option<String>,
    },
    #[error("invalid HTTP header {name}: {message}")]
    Header { name: String, message: String },
    /// The server wants an OAuth login we do not have (or whose refresh was refused).
    #[error("{}", crate::oauth::needs_login(server))]
    NeedsLogin { server: String },
}

impl ConnectError {
    /// Retrying cannot fix these: the command or directory will not appear by itself, and a
    /// file that is not executable stays so.
    pub(super) fn is_permanent(&self) -> bool {
        matches!(
            self,
            ConnectError::Spawn(
                SpawnError::NotFound { .. }
                    | SpawnError::NoCwd { .. }
                    | SpawnError::NotExecutable { .. }
            ) | ConnectError::Header { .. }
        )
    }

    pub(super) fn stderr(&self) -> Option<String> {
        match self {
            ConnectError::Exited { stderr, .. }
            | ConnectError::Timeout { stderr, .. }
            | ConnectError::Handshake { stderr, .. }
            | ConnectError::List { stderr, .. } => stderr.clone(),
            _ => None,
        }
    }
}

/// The useful part of a failed handshake. For HTTP that is the reqwest error under the
/// transport wrappers ("connection refused", the HTTP status), reached by downcasting:
/// rmcp's `Client(E)` variant does not expose it as a `source`.
fn init_cause(err: &rmcp::service::ClientInitializeError) -> String {
    type HttpError = rmcp::transport::streamable_http_client::StreamableHttpError<reqwest::Error>;
    if let rmcp::service::ClientInitializeError::TransportError { error, .. } = err {
        match error.error.downcast_ref::<HttpError>() {
            Some(HttpError::Client(inner)) => return chain(inner),
            Some(other) => return chain(other),
            None => {}
        }
    }
    chain(err)
}

/// Everything a server lists: tools always, prompts and resources when it declares them.
pub(super) struct Offer {
    pub(super) tools: Vec<ServerTool>,
    pub(super) prompts: Option<Vec<Prompt>>,
    pub(super) resources: Option<listing::Resources>,
}

/// What a stdio connection keeps of its process.
pub(super) struct Child {
    pub(super) group: GroupGuard,
    pub(super) exit: watch::Receiver<Option<std::process::ExitStatus>>,
    pub(super) stderr: StderrLog,
    /// Its pipes for calls sent around rmcp's loop (`raw_call.rs`).
    pub(super) raw: Option<RawLink>,
}

impl Child {
    /// "exited with code N" and the stderr tail once the status is known, waiting briefly
    /// for it. A child we signalled ourselves (rmcp stops one whose stdout closed) is
    /// described by what it did, not by our signal.
    pub(super) async fn cause(&mut self) -> Option<(String, Option<String>)> {
        let status = tokio::time::timeout(EXIT_WAIT, self.exit.wait_for(Option::is_some))
            .await
            .ok()
            .and_then(|r| r.ok().and_then(|s| *s))?;
        self.stderr.drained(STDERR_DRAIN).await;
        let text = if self.group.signalled_by_us() && crate::platform::exit_signal(status).is_some()
        {
            "closed its stdout (the connection) and was stopped by mcp-defer".to_owned()
        } else {
            describe_exit(status)
        };
        Some((text, self.stderr.tail()))
    }
}

enum StartError {
    Handshake(String),
    /// The server answered 401 with a challenge, and no stored login satisfied it.
    NeedsLogin,
    List(String),
}

/// Whether the handshake failed on the server's 401 challenge (no token, or one that is
/// rejected even after a refresh): a login is the fix, not a retry.
fn asks_for_login(err: &rmcp::service::ClientInitializeError) -> bool {
    type HttpError = rmcp::transport::streamable_http_client::StreamableHttpError<reqwest::Error>;
    let rmcp::service::ClientInitializeError::TransportError { error, .. } = err else {
        return false;
    };
    matches!(
        error.error.downcast_ref::<HttpError>(),
        Some(HttpError::AuthRequired(_))
            | Some(HttpError::Auth(
                rmcp::transport::AuthError::AuthorizationRequired
                    | rmcp::transport::AuthError::TokenRefreshRejected(_)
            ))
    )
}

/// The HTTP client for Streamable HTTP servers, as rmcp builds its default one: no idle
/// pooling (a reused connection whose last body was not drained stalls ~40 ms).
fn http_client() -> reqwest::Client {
    reqwest::Client::builder()
        .pool_max_idle_per_host(0)
        .build()
        .unwrap_or_default()
}

async fn handshake<T, E, A>(
    handler: Handler,
    transport: T,
    ct: CancellationToken,
    config: &ServerConfig,
) -> Result<(RunningService<RoleClient, Handler>, Offer), StartError>
where
    T: rmcp::transport::IntoTransport<RoleClient, E, A>,
    E: std::error::Error + Send + Sync + 'static,
{
    let (server, link) = (handler.server.clone(), handler.link.clone());
    let running = handler.serve_with_ct(transport, ct).await.map_err(|err| {
        if asks_for_login(&err) {
            StartError::NeedsLogin
        } else {
            StartError::Handshake(init_cause(&err))
        }
    })?;
    let peer = running.peer();
    apply_level(peer, &server, &link).await;
    let tools = listing::tools(peer, config)
        .await
        .map_err(|err| StartError::List(chain(&err)))?;
    let prompts = listing::prompts(peer).await;
    let resources = listing::resources(peer).await;
    Ok((
        running,
        Offer {
            tools,
            prompts,
            resources,
        },
    ))
}

fn http_headers(
    headers: &BTreeMap<String, String>,
) -> Result<std::collections::HashMap<http::HeaderName, http::HeaderValue>, ConnectError> {
    headers
        .iter()
        .map(|(name, value)| {
            let invalid = |message: String| ConnectError::Header {
                name: name.clone(),
                message,
            };
            let key =
                http::HeaderName::try_from(name.as_str()).map_err(|e| invalid(e.to_string()))?;
            // The value is a secret: the error names the header only.
            let value = http::HeaderValue::try_from(value.as_str())
                .map_err(|_| invalid("the value has characters a header cannot carry".into()))?;
            Ok((key, value))
        })
        .collect()
}

/// A connection's transport with its taps: progress routed, then log messages forwarded,
/// each as it is read (`progress.rs`, `logging.rs`).
fn tapped<T>(inner: T, dial: &Dial<'_>) -> Tap<Tap<T, ProgressTap>, LogTap> {
    Tap::new(
        Tap::new(inner, ProgressTap::new(dial.progress.clone())),
        LogTap::new(
            dial.handler.server.clone(),
            dial.handler.link.clone(),
            dial.calls.clone(),
        ),
    )
}
