//! Why `serve`, `serve --http` or `serve --hub` could not start or went down: typed, so `cli` decides how
//! each is shown and the causes stay inspectable.

use std::net::SocketAddr;

use super::http::HttpError;
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
