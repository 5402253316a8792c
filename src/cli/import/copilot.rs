//! GitHub Copilot CLI: `mcpServers` in `$COPILOT_HOME/mcp-config.json` (default
//! `~/.copilot/mcp-config.json`, the user's), then the workspace's `.mcp.json` and
//! `.github/mcp.json`. Entries as Claude's, with `"type": "local"` for stdio, `tools` (`["*"]`
//! for all, else the tools to offer) and `timeout` (ms); `copilot mcp disable NAME` lists the
//! server in `disabledMcpServers` of `settings.json` beside the user file, and it stays off
//! here too (`copilot mcp --help`, Copilot CLI 1.0.102).

use std::path::{Path, PathBuf};

use serde_json::Value as Json;

use super::dialect::Dialect;
use super::entry;
use super::{Cx, Imported, import_servers};

/// The user's file, then the workspace's.
pub(super) fn paths(home: &Path, cwd: &Path) -> Vec<PathBuf> {
    let dir = std::env::var_os("COPILOT_HOME")
        .map(PathBuf::from)
        .unwrap_or_else(|| home.join(".copilot"));
    vec![
        dir.join("mcp-config.json"),
        cwd.join(".mcp.json"),
        cwd.join(".github/mcp.json"),
    ]
}

pub(super) fn import(
    json: &Json,
    path: &Path,
    cx: &Cx<'_>,
    out: &mut Imported,
) -> anyhow::Result<()> {
    // A server Copilot has turned off gets the `"disabled": true` every entry conversion
    // reads, so it stays off.
    let mut json = json.clone();
    if let Some(Json::Object(servers)) = json.get_mut("mcpServers") {
        for name in disabled_servers(path) {
            if let Some(Json::Object(entry)) = servers.get_mut(&name) {
                entry.insert("disabled".to_owned(), Json::Bool(true));
            }
        }
    }
    import_servers(&json, "mcpServers", path, cx.client, out, |server| {
        entry::convert(server, Dialect::Copilot, cx, &mut |s| s.to_owned())
    })
}

/// `disabledMcpServers` of the `settings.json` beside the user file (`copilot mcp
/// disable`); none for a workspace file.
fn disabled_servers(path: &Path) -> Vec<String> {
    if path.file_name().is_none_or(|n| n != "mcp-config.json") {
        return Vec::new();
    }
    let settings = path.with_file_name("settings.json");
    let Ok(text) = std::fs::read_to_string(&settings) else {
        return Vec::new();
    };
    super::parse_json(&text, &settings)
        .ok()
        .and_then(|json| json.get("disabledMcpServers").cloned())
        .and_then(|list| serde_json::from_value(list).ok())
        .unwrap_or_default()
}
