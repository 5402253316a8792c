//! Why `serve`, `serve --http` or `serve --hub` could not start or went down: typed, so `cli` decides how
//! each is shown and the causes stay inspectable. `serve --http`'s own refusals (the bind and
//! token rules) are here too, so this floor imports nothing above it.

use std::net::SocketAddr;

use crate::config::ConfigError;
use crate::search::SearchError;

#[derive(Debug, thiserror::Error)]
pub(crate) enum ServeError {
    #[error(transparent)]
    Http(#[from] HttpError),
    #[error(transparent)]
    Config(#[from] ConfigError),
    #[error("cannot create the search index: {0}")]
    Search(#[from] SearchError),
    #[error("cannot install the signal handlers: {0}")]
    Signals(#[source] std::io::Error),
    #[error("cannot listen on {addr}: {source}")]
    Bind {
        addr: SocketAddr,
        #[source]
        source: std::io::Error,
    },
    #[error("cannot listen for hub sessions: {0}")]
    Hub(#[source] crate::platform::hub::ChannelError),
    #[error("cannot watch the config file for changes: {0}")]
    Watch(#[source] std::io::Error),
}

/// Why `serve --http` refuses to start: the bind and token rules, each naming its fix.
#[derive(Debug, thiserror::Error)]
pub(crate) enum HttpError {
    #[error(
        "refusing to serve on {addr} without auth: anyone who can reach it could call every \
         configured server. Set `tokens_env = \"VAR\"` or `token_file = \"path\"` under \
         [settings.http] in {config}, or bind 127.0.0.1"
    )]
    OpenBind { addr: SocketAddr, config: String },
    #[error(
        "[settings.http] tokens_env = \"{var}\": the variable is unset or holds no token; \
         export {var}=<token>"
    )]
    NoTokenInEnv { var: String },
    #[error("[settings.http] token_file = \"{path}\": cannot read it: {cause}")]
    TokenFile { path: String, cause: std::io::Error },
    #[error("[settings.http] token_file = \"{path}\" holds no token; write one a line")]
    NoTokenInFile { path: String },
}
