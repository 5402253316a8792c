//! A synthetic catalog of any size for the scale benches (`search`, and the transformer
//! budgets of `retrieval`): the real reference servers (`benches/data/reference`, real
//! schemas) replicated under distinct server names, each replica's descriptions with a
//! MetaTool description appended (chosen by a fixed stride) so terms are not all equally
//! frequent and the index is not degenerate.

#![allow(clippy::unwrap_used, dead_code)]

use std::path::PathBuf;

use mcp_defer::catalog::EntryId;
use mcp_defer::search::ToolDoc;
use rmcp::model::Tool;
use serde::Deserialize;

#[derive(Deserialize)]
pub struct Server {
    pub server: String,
    #[serde(default)]
    pub description: String,
    pub tools: Vec<serde_json::Value>,
}

/// One synthetic catalog entry, owning what a [`ToolDoc`] borrows.
pub struct Entry {
    pub id: EntryId,
    pub server_index: usize,
    pub qualified: String,
    pub server: String,
    pub server_text: String,
    pub tool: Tool,
}

impl Entry {
    pub fn doc(&self) -> ToolDoc<'_> {
        ToolDoc {
            id: self.id,
            server_index: self.server_index,
            qualified_name: &self.qualified,
            server: &self.server,
            server_text: &self.server_text,
            tool: &self.tool,
        }
    }
}

pub fn data() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("benches/data")
}

pub fn read<T: for<'de> Deserialize<'de>>(path: PathBuf) -> T {
    let text = std::fs::read_to_string(&path).unwrap();
    serde_json::from_str(&text).unwrap()
}

/// `n` tools: the reference servers replicated as `<server>-<k>`, descriptions varied.
pub fn catalog(n: usize, first_id: u32, first_server: usize) -> Vec<Entry> {
    let reference: Vec<Server> = read(data().join("reference/servers.json"));
    let variety: Vec<Server> = read(data().join("metatool/servers.json"));
    let phrases: Vec<&str> = variety.iter().map(|s| s.description.as_str()).collect();
    let mut out = Vec::with_capacity(n);
    let mut replica = 0;
    while out.len() < n {
        for (s, server) in reference.iter().enumerate() {
            let server_index = first_server + replica * reference.len() + s;
            let name = format!("{}-{server_index}", server.server);
            for tool in &server.tools {
                if out.len() == n {
                    return out;
                }
                let mut tool: Tool = serde_json::from_value(tool.clone()).unwrap();
                let phrase = phrases[(out.len() * 7 + replica * 13) % phrases.len()];
                let description = format!("{} {phrase}", tool.description.as_deref().unwrap_or(""));
                tool.description = Some(description.into());
                let id = EntryId(first_id + out.len() as u32);
                out.push(Entry {
                    id,
                    server_index,
                    qualified: format!("{name}__{}", tool.name),
                    server: name.clone(),
                    server_text: server.description.clone(),
                    tool,
                });
            }
        }
        replica += 1;
    }
    out
}
