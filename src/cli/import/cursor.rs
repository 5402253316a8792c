//! Cursor: `mcpServers` in `~/.cursor/mcp.json` (global) and `.cursor/mcp.json` (project,
//! which wins), entries as Claude's plus `envFile` and `auth` (static OAuth client), with
//! `${env:NAME}`, `${userHome}` and `${workspaceFolder}` variables
//! (<https://docs.cursor.com/context/model-context-protocol>).

use std::path::Path;

use serde_json::Value as Json;

use super::dialect::Dialect;
use super::entry;
use super::{Cx, Imported, import_servers, vars};

pub(super) fn import(
    json: &Json,
    path: &Path,
    cx: &Cx<'_>,
    out: &mut Imported,
) -> anyhow::Result<()> {
    // `${workspaceFolder}` is the project: the directory holding `.cursor/`.
    let workspace = workspace_of(path, ".cursor").unwrap_or(cx.cwd);
    import_servers(json, "mcpServers", path, cx.client, out, |server| {
        let mut inputs = Vec::new();
        entry::convert(server, Dialect::Cursor, cx, &mut |s| {
            vars::editor(s, workspace, &mut inputs)
        })
    })
}

/// The directory holding `<dir>/` when `path` is `<project>/<dir>/<file>`.
pub(super) fn workspace_of<'a>(path: &'a Path, dir: &str) -> Option<&'a Path> {
    let parent = path.parent()?;
    (parent.file_name()? == dir).then(|| parent.parent())?
}
