//! Server table names and prefixes: what qualified tool names `<prefix>__<tool>` are made
//! of (DESIGN.md section 4), so every rule that keeps those names splittable and distinct
//! is checked here, at load, with a prefix that would pass offered as the fix.

use std::ops::Range;

use super::super::error::{ConfigError, Source, server_table};
use super::super::raw::S;
use super::super::{PREFIX_ROOM, ServerConfig};
use super::Server;
use crate::catalog::is_name_char;

/// Why a prefix cannot start qualified names; each message ends a config error's sentence.
#[derive(Debug, thiserror::Error)]
pub(super) enum PrefixError {
    #[error("is empty")]
    Empty,
    #[error("has characters other than letters, digits, `_` and `-`")]
    BadCharacters,
    #[error("contains `__`, which separates the prefix from the tool name")]
    DoubleUnderscore,
    #[error("starts or ends with `_`, which would blur the `__` separator")]
    EdgeUnderscore,
    #[error(
        "is {len} characters long, but at most {max} fit under `max_name_length = \
         {max_name_length}` with room for a tool name"
    )]
    TooLong {
        len: usize,
        max: usize,
        max_name_length: usize,
    },
}

impl Server<'_, '_> {
    pub(super) fn check_name(&self, name: &str, span: Range<usize>) -> Result<(), ConfigError> {
        if name.is_empty() {
            return Err(self.error(
                span,
                None,
                "has an empty server name; name the table, e.g. `[mcp_servers.docs]`",
            ));
        }
        if !is_name(name) {
            return Err(self.error(
                span,
                None,
                format!(
                    "has a server name with characters other than letters, digits, `_` and `-`; \
                     rename the table, e.g. `[mcp_servers.{}]`",
                    sanitize(name)
                ),
            ));
        }
        Ok(())
    }

    /// The server's prefix: `prefix` as written, else the table name, each checked.
    pub(super) fn prefix(
        &self,
        prefix: Option<S<String>>,
        name: &str,
        name_span: Range<usize>,
        max_name_length: usize,
    ) -> Result<String, ConfigError> {
        match prefix {
            // `prefix = ""`: the server's tools and prompts keep their own names (one server
            // only, checked in `build`; see `catalog::name` for the names it cannot have).
            Some(prefix) if prefix.get_ref().is_empty() => Ok(prefix.into_inner()),
            Some(prefix) => {
                check_prefix(prefix.get_ref(), max_name_length).map_err(|why| {
                    self.error(
                        prefix.span(),
                        Some("prefix"),
                        format!(
                            "`{}` {why}; write e.g. `prefix = \"{}\"`",
                            prefix.get_ref(),
                            suggest_prefix(prefix.get_ref(), max_name_length)
                        ),
                    )
                })?;
                Ok(prefix.into_inner())
            }
            None => {
                check_prefix(name, max_name_length).map_err(|why| {
                    self.error(
                        name_span,
                        None,
                        format!(
                            "cannot serve as the prefix of qualified tool names: the name {why}; \
                             add `prefix = \"{}\"` to this table",
                            suggest_prefix(name, max_name_length)
                        ),
                    )
                })?;
                Ok(name.to_owned())
            }
        }
    }
}

/// `server`'s prefix is not one of a server `built` before it: qualified names must name
/// one server, and only one server may keep its own names (`prefix = ""`).
pub(super) fn check_unique_prefix(
    built: &[(ServerConfig, Range<usize>)],
    server: &ServerConfig,
    span: Range<usize>,
    source: &Source<'_>,
) -> Result<(), ConfigError> {
    let Some((first, first_span)) = built.iter().find(|(s, _)| s.prefix == server.prefix) else {
        return Ok(());
    };
    if server.prefix.is_empty() {
        return Err(source.error(
            span,
            format!(
                "{} has `prefix = \"\"`, as has {} (line {}); only one server can keep \
                 its own tool and prompt names, or a tool both servers have would be \
                 two tools under one name, so set `prefix = \"...\"` in one of the two \
                 tables",
                server_table(&server.name),
                server_table(&first.name),
                source.line(first_span.start),
            ),
        ));
    }
    Err(source.error(
        span,
        format!(
            "{} uses the prefix `{}`, already used by {} (line {}); qualified tool names \
             `{}__<tool>` must name one server, so set a different `prefix = \"...\"` in \
             one of the two tables",
            server_table(&server.name),
            server.prefix,
            server_table(&first.name),
            source.line(first_span.start),
            server.prefix,
        ),
    ))
}

/// Why `prefix` cannot start qualified names, if it cannot. Qualified names are
/// `<prefix>__<tool>` and the catalog splits them at the first `__`, so a prefix holding
/// `__` or ending in `_` would split in the wrong place; one starting with `_` reads as a
/// private name to some clients. The length leaves room under `max_name_length` for `__`,
/// one tool character and the catalog's 9-character hash suffix.
fn check_prefix(prefix: &str, max_name_length: usize) -> Result<(), PrefixError> {
    let max = max_name_length.saturating_sub(PREFIX_ROOM);
    if prefix.is_empty() {
        Err(PrefixError::Empty)
    } else if !is_name(prefix) {
        Err(PrefixError::BadCharacters)
    } else if prefix.contains("__") {
        Err(PrefixError::DoubleUnderscore)
    } else if prefix.starts_with('_') || prefix.ends_with('_') {
        Err(PrefixError::EdgeUnderscore)
    } else if prefix.len() > max {
        Err(PrefixError::TooLong {
            len: prefix.len(),
            max,
            max_name_length,
        })
    } else {
        Ok(())
    }
}

fn is_name(s: &str) -> bool {
    s.chars().all(is_name_char)
}

/// `s` with every character outside the name set replaced, as qualified names are.
fn sanitize(s: &str) -> String {
    let out = crate::catalog::sanitize(s);
    if out.is_empty() {
        "server".to_owned()
    } else {
        out
    }
}

/// A prefix close to `name` that passes [`check_prefix`], for the fix in messages.
fn suggest_prefix(name: &str, max_name_length: usize) -> String {
    let sanitized = sanitize(name);
    let mut collapsed = String::with_capacity(sanitized.len());
    for c in sanitized.chars() {
        if !(c == '_' && collapsed.ends_with('_')) {
            collapsed.push(c);
        }
    }
    let max = max_name_length.saturating_sub(PREFIX_ROOM).max(1);
    let cut: String = collapsed.trim_matches('_').chars().take(max).collect();
    let cut = cut.trim_end_matches('_');
    if cut.is_empty() {
        "srv".to_owned()
    } else {
        cut.to_owned()
    }
}
