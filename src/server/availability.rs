//! What the model is told about servers that are not serving: in `search_tools` answers
//! and when a name cannot be resolved.
//!
//! A name that addresses a configured server (`<prefix>__tool`, `<server>__tool`,
//! `<server>/tool`) is judged against that server only: if the server failed, the answer
//! says so with its cause; otherwise "did you mean" offers that server's tools and never
//! another server's. Causes are [`ServerState::for_model`]: no stderr of the child.

use serde::Serialize;

use crate::catalog::{Catalog, QualifiedName, SEPARATOR};
use crate::config::Config;
use crate::downstream::{ServerHandle, ServerState};

/// A server that is not serving, with its state as the model may read it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub(crate) struct Unavailable {
    pub(crate) server: String,
    pub(crate) state: String,
    /// Removed from the config file by a reload: its tools are left out of results.
    #[serde(skip)]
    pub(crate) removed: bool,
}

/// The enabled servers that are not serving now, with their state for the model.
pub(crate) fn unavailable(config: &Config, handles: &[ServerHandle]) -> Vec<Unavailable> {
    config
        .servers
        .iter()
        .zip(handles)
        .filter(|(server, _)| server.enabled)
        .filter_map(|(server, handle)| {
            let state = handle.state();
            matches!(
                state,
                ServerState::Failed { .. }
                    | ServerState::Restarting { .. }
                    | ServerState::NeedsLogin { .. }
                    | ServerState::Removed
            )
            .then(|| Unavailable {
                server: server.name.clone(),
                removed: state == ServerState::Removed,
                state: state.for_model(),
            })
        })
        .collect()
}

/// Why `name` resolved to nothing, for the model.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Unknown {
    /// The name addresses a configured server that is not serving.
    ServerDown { server: String, state: String },
    /// The name addresses a server a reload removed from the config file.
    ServerRemoved { server: String },
    /// No such tool; perhaps this one (of the addressed server, when one is addressed).
    Tool { suggestion: Option<QualifiedName> },
}

impl Unknown {
    /// Judges an unresolved `name`.
    pub(crate) fn of(
        config: &Config,
        handles: &[ServerHandle],
        catalog: &Catalog,
        name: &str,
    ) -> Unknown {
        let Some(index) = addressed_server(config, name) else {
            return Unknown::Tool {
                suggestion: catalog.suggest(name),
            };
        };
        let state = handles.get(index).map(ServerHandle::state);
        match state {
            Some(
                state @ (ServerState::Failed { .. }
                | ServerState::Restarting { .. }
                | ServerState::NeedsLogin { .. }),
            ) => Unknown::ServerDown {
                server: config.servers[index].name.clone(),
                state: state.for_model(),
            },
            Some(ServerState::Disabled) => Unknown::ServerDown {
                server: config.servers[index].name.clone(),
                state: ServerState::Disabled.to_string(),
            },
            Some(ServerState::Removed) => Unknown::ServerRemoved {
                server: config.servers[index].name.clone(),
            },
            _ => Unknown::Tool {
                suggestion: catalog.suggest_in(index, name),
            },
        }
    }

    /// One sentence for an error result.
    pub(crate) fn message(&self, name: &str) -> String {
        match self {
            Unknown::ServerDown { server, state } => format!(
                "Tool '{name}' is on server '{server}', which is not available: {state}. Its tools \
                 cannot be called until it starts."
            ),
            Unknown::ServerRemoved { server } => removed_message(name, server),
            Unknown::Tool {
                suggestion: Some(suggestion),
            } => format!(
                "Unknown tool '{name}' (did you mean {suggestion}?). Use search_tools to find names."
            ),
            Unknown::Tool { suggestion: None } => {
                format!("Unknown tool '{name}'. Use search_tools to find names.")
            }
        }
    }
}

/// The configured server that `name` addresses by its prefix, its table name, or
/// `server/tool`: the longest match, so `gh` and `gh-enterprise` are told apart.
fn addressed_server(config: &Config, name: &str) -> Option<usize> {
    config
        .servers
        .iter()
        .enumerate()
        .filter_map(|(i, server)| {
            [server.prefix.as_str(), server.name.as_str()]
                .into_iter()
                .filter(|head| {
                    name.strip_prefix(head)
                        .is_some_and(|rest| rest.starts_with(SEPARATOR) || rest.starts_with('/'))
                })
                .map(str::len)
                .max()
                .map(|len| (len, i))
        })
        .max_by_key(|&(len, _)| len)
        .map(|(_, i)| i)
}

/// What a call of `tool` on a server removed from the config file answers: what happened
/// and how to bring it back.
pub(crate) fn removed_message(tool: &str, server: &str) -> String {
    format!(
        "Tool '{tool}' is on server '{server}', which was removed from servers.toml while \
         mcp-defer runs. To use it again, put its [mcp_servers.{server}] table back in \
         servers.toml; it starts, and its tools keep their names."
    )
}
