//! Raw shapes in, the validated [`Config`] out (STYLE.md 3).
//!
//! Each raw struct is destructured exhaustively, so a key added to `raw` cannot slip past
//! without a decision here. This is where `${VAR}` expands, secrets are resolved from the
//! environment, units become `Duration`s, keys foreign to the transport are rejected and the
//! prefixes are checked for the naming scheme of DESIGN.md section 4. One file per kind of
//! check, so a newcomer looking for "where is `startup_timeout_sec` checked" finds `limits`:
//! `settings` (with `model` and `http_settings`), `server` (one table, step by step), `names`
//! (table names and prefixes), `env` (expansion and secrets), `transport`, `limits`, `tools`
//! and `profiles`. [`Server`] lives here so each of those files adds its own `impl` block.

use std::ops::Range;

use super::error::{ConfigError, Source, server_table};
use super::raw::RawFile;
use super::{Config, ServerConfig, ToolFilter};

mod env;
mod http_settings;
mod limits;
mod model;
mod names;
mod profiles;
mod server;
mod settings;
mod tools;
mod transport;

/// Reads a variable of the environment `${VAR}` and secrets come from (the process's, or a
/// test's map).
type Env<'a> = &'a dyn Fn(&str) -> Option<String>;

pub(super) fn build(
    file: RawFile,
    source: &Source<'_>,
    env: Env<'_>,
) -> Result<Config, ConfigError> {
    let RawFile {
        settings,
        servers,
        profiles,
    } = file;
    let settings = settings::build_settings(settings, source, env)?;
    let mut built: Vec<(ServerConfig, Range<usize>)> = Vec::with_capacity(servers.len());
    for raw in servers {
        let span = raw.name.span();
        let server = Server {
            source,
            env,
            table: server_table(raw.name.get_ref()),
        }
        .build(raw, &settings)?;
        names::check_unique_prefix(&built, &server, span.clone(), source)?;
        built.push((server, span));
    }
    let servers: Vec<ServerConfig> = built.into_iter().map(|(s, _)| s).collect();
    let profiles = profiles::build_profiles(profiles, &servers, source)?;
    Ok(Config {
        path: source.path().to_owned(),
        settings,
        profiles,
        servers,
        tools: ToolFilter::default(),
    })
}

/// Builds one server; messages start with its table label. Its steps live in the files
/// named for what they check, each adding an `impl Server` block.
struct Server<'a, 's> {
    source: &'a Source<'s>,
    env: Env<'a>,
    table: String,
}

impl Server<'_, '_> {
    fn error(
        &self,
        span: Range<usize>,
        key: Option<&str>,
        message: impl std::fmt::Display,
    ) -> ConfigError {
        let message = match key {
            Some(key) => format!("{} `{key}` {message}", self.table),
            None => format!("{} {message}", self.table),
        };
        self.source.error(span, message)
    }
}
