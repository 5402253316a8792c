//! Errors that say where the bad input is and how to fix it.
//!
//! Every problem inside the file becomes [`ConfigError::Invalid`], rendered `path:line:
//! message`, where the message names the table and key and ends with the fix. Messages never
//! quote a value that may be a secret (env values, tokens, header values, expanded strings).

use std::ops::Range;
use std::path::{Path, PathBuf};

#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    /// The OS error is the `source`, which `{:#}` prints after this message (once).
    #[error("cannot read config {}", path.display())]
    Read {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error(
        "no config file found; looked in {}. Pass --config PATH or set MCP_DEFER_CONFIG",
        looked.iter().map(|p| p.display().to_string()).collect::<Vec<_>>().join(", ")
    )]
    NotFound { looked: Vec<PathBuf> },
    /// Anything wrong inside the file: `{path}:{line}: {message}`. `line` is 1-based; the
    /// message names the table (`[mcp_servers.docs]`) and the key, and says what to write.
    #[error("{}:{line}: {message}", path.display())]
    Invalid {
        path: PathBuf,
        line: usize,
        message: String,
    },
    #[error("{}: no `[profiles.{name}]` table{hint}", path.display())]
    UnknownProfile {
        path: PathBuf,
        name: String,
        hint: String,
    },
}

/// The text being parsed, for turning byte offsets from the TOML parser into line numbers.
pub(super) struct Source<'a> {
    path: &'a Path,
    /// Byte offset where each line starts; the first is 0.
    line_starts: Vec<usize>,
}

impl<'a> Source<'a> {
    pub(super) fn new(path: &'a Path, text: &str) -> Source<'a> {
        let line_starts = std::iter::once(0)
            .chain(text.match_indices('\n').map(|(i, _)| i + 1))
            .collect();
        Source { path, line_starts }
    }

    pub(super) fn path(&self) -> &'a Path {
        self.path
    }

    /// The 1-based line holding byte `offset`.
    pub(super) fn line(&self, offset: usize) -> usize {
        self.line_starts
            .partition_point(|&start| start <= offset)
            .max(1)
    }

    /// An [`ConfigError::Invalid`] at the start of `span`.
    pub(super) fn error(&self, span: Range<usize>, message: impl Into<String>) -> ConfigError {
        ConfigError::Invalid {
            path: self.path.to_owned(),
            line: self.line(span.start),
            message: message.into(),
        }
    }
}

/// `[mcp_servers.<name>]` as the user would write it: the name is quoted when it is not a
/// bare TOML key, so the label can be searched for in the file.
pub(super) fn server_table(name: &str) -> String {
    format!("[mcp_servers.{}]", bare_or_quoted(name))
}

/// A TOML key as written: bare when it can be, quoted otherwise.
pub(super) fn bare_or_quoted(name: &str) -> String {
    if !name.is_empty() && name.chars().all(crate::catalog::is_name_char) {
        name.to_owned()
    } else {
        format!("{name:?}")
    }
}
