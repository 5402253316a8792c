//! The servers as one request sees them ([`Servers`]): the config in force and the handles
//! that run it, taken together (a reload swaps both at once, `Shared::set_running`), and
//! the one answer to "does this server serve, and if not, why" ([`Servers::availability`]).
//!
//! A search leaves out the tools of removed servers and names those that are down, a
//! selection refuses them, a call answers that the server was removed, and a name that
//! resolves to nothing is explained ([`Unknown`], as a sentence or as a clause after the
//! name): all from a server's handle state read here, by position, so the four can never
//! disagree. Causes are
//! [`ServerState::for_model`]: no stderr of the child.
//!
//! A leaf of `server/`: it imports no other part of it, so the meta tools may use it.

use std::sync::Arc;

use serde::Serialize;

use crate::catalog::{Catalog, QualifiedName, Resolution, SEPARATOR};
use crate::config::Config;
use crate::downstream::{ServerHandle, ServerState};
use crate::trust::Trust;

/// A consistent view of the running servers: `handles[i]` runs `config.servers[i]`.
#[derive(Clone)]
pub(crate) struct Servers {
    pub(crate) config: Arc<Config>,
    pub(crate) handles: Arc<[ServerHandle]>,
}

/// Whether a server serves now, by its handle's state.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Availability {
    /// Starting, ready, or idle until its next call: its tools are offered.
    Serving,
    /// Failed, restarting or waiting for a login; `state` says why, as the model may read it.
    Down { state: String },
    /// `enabled = false` in the config.
    Disabled,
    /// Removed from the config file by a reload: its listed tools stay (append-only) and
    /// answer that it was removed; searches and selections leave them out.
    Removed,
}

impl Availability {
    fn of(state: &ServerState) -> Availability {
        match state {
            ServerState::Failed { .. }
            | ServerState::Restarting { .. }
            | ServerState::NeedsLogin { .. } => Availability::Down {
                state: state.for_model(),
            },
            ServerState::Disabled => Availability::Disabled,
            ServerState::Removed => Availability::Removed,
            ServerState::Starting | ServerState::Ready { .. } | ServerState::Idle { .. } => {
                Availability::Serving
            }
        }
    }
}

/// A server that is not serving, with its state as the model may read it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub(crate) struct Unavailable {
    pub(crate) server: String,
    pub(crate) state: String,
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
    /// The tool is held until the user approves it (`crate::trust`): the whole message.
    Held { message: String },
    /// The server no longer lists the tool.
    Gone { server: String },
}

impl Servers {
    /// Whether the server at position `index` serves; `None` when no server is there.
    pub(crate) fn availability(&self, index: usize) -> Option<Availability> {
        (self.handles.get(index)).map(|handle| Availability::of(&handle.state()))
    }

    /// Whether a reload removed the server at position `index` from the config file.
    pub(crate) fn is_removed(&self, index: usize) -> bool {
        self.availability(index) == Some(Availability::Removed)
    }

    /// The positions of the servers a reload removed from the config file.
    pub(crate) fn removed(&self) -> Vec<usize> {
        (0..self.handles.len())
            .filter(|&i| self.is_removed(i))
            .collect()
    }

    /// The enabled servers that are not serving now, with their state for the model.
    pub(crate) fn unavailable(&self) -> Vec<Unavailable> {
        (self.config.servers.iter().enumerate())
            .filter(|(_, server)| server.enabled)
            .filter_map(|(i, server)| {
                let state = match self.availability(i)? {
                    Availability::Down { state } => state,
                    Availability::Removed => ServerState::Removed.for_model(),
                    Availability::Serving | Availability::Disabled => return None,
                };
                Some(Unavailable {
                    server: server.name.clone(),
                    state,
                })
            })
            .collect()
    }

    /// Why `name` loads nothing: its server was removed, it is held by trust, gone from its
    /// server, or [`Servers::unknown`].
    pub(crate) fn explain(&self, catalog: &Catalog, trust: &Trust, name: &str) -> Unknown {
        if let Resolution::Found(entry) = catalog.resolve(name)
            && self.is_removed(entry.server_index)
        {
            return Unknown::ServerRemoved {
                server: entry.server.to_string(),
            };
        }
        if let Some(message) = self.held(catalog, trust, name) {
            return Unknown::Held { message };
        }
        if let Resolution::Found(entry) = catalog.resolve(name)
            && entry.gone
        {
            return Unknown::Gone {
                server: entry.server.to_string(),
            };
        }
        self.unknown(catalog, name)
    }

    /// The message for `name` when it designates a tool trust holds: by qualified name,
    /// `server/tool`, `<prefix>__tool` (a new tool has no catalog entry yet), or a bare
    /// tool name.
    pub(crate) fn held(&self, catalog: &Catalog, trust: &Trust, name: &str) -> Option<String> {
        if trust.held_count() == 0 {
            return None;
        }
        if let Resolution::Found(entry) = catalog.resolve(name) {
            return (trust.held(&entry.server, entry.original_name())).map(|h| h.message(name));
        }
        if let Some(index) = addressed_server(&self.config, name) {
            let server = &self.config.servers[index];
            let tool = [server.prefix.as_str(), server.name.as_str()]
                .into_iter()
                .filter(|head| !head.is_empty())
                .find_map(|head| {
                    let rest = name.strip_prefix(head)?;
                    rest.strip_prefix(SEPARATOR)
                        .or_else(|| rest.strip_prefix('/'))
                });
            if let Some(held) = tool.and_then(|tool| trust.held(&server.name, tool)) {
                return Some(held.message(name));
            }
        }
        let mut bare = trust.all_held().filter(|h| h.tool == name);
        match (bare.next(), bare.next()) {
            (Some(only), None) => Some(only.message(name)),
            _ => None,
        }
    }

    /// Judges a `name` that resolved to nothing in `catalog`. A name that addresses a
    /// configured server (`<prefix>__tool`, `<server>__tool`, `<server>/tool`) is judged
    /// against that server only: if it is not serving, the answer says so with its cause;
    /// otherwise "did you mean" offers that server's tools and never another server's.
    pub(crate) fn unknown(&self, catalog: &Catalog, name: &str) -> Unknown {
        let Some(index) = addressed_server(&self.config, name) else {
            return Unknown::Tool {
                suggestion: catalog.suggest(name),
            };
        };
        let server = || self.config.servers[index].name.clone();
        match self.availability(index) {
            Some(Availability::Down { state }) => Unknown::ServerDown {
                server: server(),
                state,
            },
            Some(Availability::Disabled) => Unknown::ServerDown {
                server: server(),
                state: ServerState::Disabled.to_string(),
            },
            Some(Availability::Removed) => Unknown::ServerRemoved { server: server() },
            Some(Availability::Serving) | None => Unknown::Tool {
                suggestion: catalog.suggest_in(index, name),
            },
        }
    }
}

impl Unknown {
    /// Why, as a clause after the name in a list of names (`select_tools`); `None` for a
    /// name no tool has, whose suggestion (if any) says the rest.
    pub(crate) fn reason(&self) -> Option<String> {
        match self {
            Unknown::ServerDown { server, state } => {
                Some(format!("server '{server}' is not available: {state}"))
            }
            Unknown::ServerRemoved { server } => {
                Some(format!("server '{server}' was removed from servers.toml"))
            }
            Unknown::Tool { .. } => None,
            Unknown::Held { message } => Some(message.clone()),
            Unknown::Gone { server } => Some(format!("server '{server}' no longer offers it")),
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
            Unknown::Held { message } => message.clone(),
            Unknown::Gone { server } => format!(
                "Server '{server}' no longer offers the tool '{name}'. Use search_tools to find \
                 another."
            ),
        }
    }
}

/// The error text for a call of `name`, which resolved to nothing, by `why` (`None`:
/// nothing explained it).
pub(crate) fn unknown_message(why: Option<&Unknown>, name: &str) -> String {
    why.map_or_else(|| format!("Unknown tool '{name}'."), |u| u.message(name))
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
