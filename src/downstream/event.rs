//! What the supervisors tell the one catalog writer: each complete list as it arrives.

use rmcp::model::{Prompt, Resource, ResourceTemplate};

/// What the supervisors tell the catalog writer.
#[derive(Debug, Clone)]
pub enum Event {
    /// A server connected, reconnected or re-listed: its complete current list, filtered by
    /// `enabled_tools`/`disabled_tools`, overrides applied, in the order it lists them.
    Tools {
        /// The server's position in `Config::servers`.
        server: usize,
        /// As JSON text, made as each page arrived (see `listing`).
        tools: Vec<crate::server_tool::ServerTool>,
        /// The `instructions` of its handshake.
        instructions: Option<String>,
        /// How many tool changes the server had announced before this list was asked for
        /// ([`super::handle::ToolChanges`]): the list answers them all.
        changes: u64,
    },
    /// A server that declares `prompts` connected or re-listed: its complete current list.
    /// Sent before the `Tools` of the same listing, so whoever sees the tools of a server
    /// finds its prompts and resources already applied.
    Prompts { server: usize, prompts: Vec<Prompt> },
    /// A server that declares `resources` connected or re-listed: its complete current
    /// lists of resources and templates.
    Resources {
        server: usize,
        resources: Vec<Resource>,
        templates: Vec<ResourceTemplate>,
    },
    /// The server says a resource we subscribed to changed.
    ResourceUpdated { server: usize, uri: String },
}
