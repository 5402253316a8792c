//! Errors that say where the bad input is and how to fix it.

use std::path::PathBuf;

#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    #[error("cannot read config {}: {source}", path.display())]
    Read {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error(
        "no config file found; looked in {}. Pass --config PATH or set MCP_DEFER_CONFIG",
        looked.iter().map(|p| p.display().to_string()).collect::<Vec<_>>().join(", ")
    )]
    NotFound { looked: Vec<PathBuf> },
    /// Anything wrong inside the file: `{path}:{line}: {message}`.
    #[error("{}:{line}: {message}", path.display())]
    Invalid {
        path: PathBuf,
        line: usize,
        message: String,
    },
}
