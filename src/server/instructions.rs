//! The `instructions` of our handshake: built from the config alone, so every session with
//! the same config gets the same bytes (DESIGN.md invariant 3). No counts, no state.

use crate::config::{Config, ExposureMode};

pub(super) fn build(config: &Config) -> String {
    let mut text = String::from(match config.settings.exposure {
        ExposureMode::Deferred => {
            "This server gives you the tools of the MCP servers listed below; only a few are loaded \
at first. To use one:\n\
1. search_tools {query} finds tools by what they do (or by name).\n\
2. select_tools {names} loads them: they are added to your tool list and their schemas are \
returned.\n\
3. Call a loaded tool directly, or any tool through call_tool {name, arguments}.\n"
        }
        ExposureMode::Proxy => {
            "This server gives you the tools of the MCP servers listed below through three tools:\n\
1. search_tools {query} finds tools by what they do (or by name).\n\
2. select_tools {names} returns their full schemas.\n\
3. call_tool {name, arguments} calls one.\n"
        }
        ExposureMode::All => {
            "This server gives you every tool of the MCP servers listed below, named \
<server>__<tool>. search_tools {query} finds tools by what they do; call_tool {name, arguments} \
calls any of them by name.\n"
        }
    });
    let servers: Vec<_> = config.enabled_servers().collect();
    if !servers.is_empty() {
        text.push_str("\nServers:\n");
        for server in servers {
            match &server.description {
                Some(description) => {
                    text.push_str(&format!("- {}: {}\n", server.name, description.trim()))
                }
                None => text.push_str(&format!("- {}\n", server.name)),
            }
        }
    }
    text
}
