//! VS Code: `mcp.json` in the workspace (`.vscode/mcp.json`) or the user profile, with a
//! `servers` object (each entry has `type`: `stdio`, `http` or `sse`) and an `inputs`
//! array of values VS Code prompts for, referenced as `${input:ID}`
//! (<https://code.visualstudio.com/docs/copilot/reference/mcp-configuration>).
//!
//! mcp-defer prompts for nothing: each `${input:ID}` becomes `${ID_AS_VARIABLE}` and a note
//! names the variable to set, with the input's description.

use std::path::{Path, PathBuf};

use serde_json::Value as Json;

use super::cursor::workspace_of;
use super::dialect::Dialect;
use super::entry;
use super::{Cx, Imported, import_servers, vars};

/// The user profile's `mcp.json`: `~/Library/Application Support/Code/User/` on macOS,
/// `$XDG_CONFIG_HOME/Code/User/` elsewhere.
pub(super) fn user_path(home: &Path, config_home: &Path) -> PathBuf {
    if cfg!(target_os = "macos") {
        home.join("Library/Application Support/Code/User/mcp.json")
    } else {
        config_home.join("Code/User/mcp.json")
    }
}

/// VS Code's global storage, where extensions such as Cline and Roo Code keep their files.
pub(super) fn global_storage(home: &Path, config_home: &Path) -> PathBuf {
    user_path(home, config_home).with_file_name("globalStorage")
}

pub(super) fn import(
    json: &Json,
    path: &Path,
    cx: &Cx<'_>,
    out: &mut Imported,
) -> anyhow::Result<()> {
    let workspace = workspace_of(path, ".vscode").unwrap_or(cx.cwd);
    import_servers(json, "servers", path, cx.client, out, |server| {
        let mut inputs = Vec::new();
        let mut converted = entry::convert(server, Dialect::Vscode, cx, &mut |s| {
            vars::editor(s, workspace, &mut inputs)
        });
        if let Ok(server) = &mut converted {
            for id in &inputs {
                server.notes.push(input_note(json, id));
            }
        }
        converted
    })
}

/// "set API_KEY before starting mcp-defer (VS Code prompted for it as input `api-key`:
/// "API key")". The description is the file's own label, never the value.
fn input_note(json: &Json, id: &str) -> String {
    let description = json
        .get("inputs")
        .and_then(Json::as_array)
        .and_then(|inputs| {
            inputs
                .iter()
                .find(|i| i.get("id").and_then(Json::as_str) == Some(id))
        })
        .and_then(|i| i.get("description"))
        .and_then(Json::as_str)
        .map(|d| format!(": {d:?}"))
        .unwrap_or_default();
    format!(
        "set the environment variable {} before starting mcp-defer (VS Code prompted for it as \
         input `{id}`{description})",
        vars::input_variable(id)
    )
}
