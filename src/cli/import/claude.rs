//! Claude Code and Claude Desktop: `mcpServers` objects of `{type, command, args, env,
//! url, headers}` entries.
//!
//! Claude Code has three scopes, lowest precedence first: user (`~/.claude.json`
//! `mcpServers`), project (`./.mcp.json`), local (`~/.claude.json` `projects.<cwd>`); it
//! expands `${VAR}` and `${VAR:-default}` as we do
//! (<https://docs.anthropic.com/en/docs/claude-code/mcp>). Claude Desktop has one file,
//! `claude_desktop_config.json`, with stdio servers only
//! (<https://modelcontextprotocol.io/quickstart/user>).

use std::path::{Path, PathBuf};

use anyhow::{Context, bail};
use serde_json::Value as Json;

use super::dialect::Dialect;
use super::entry;
use super::{Client, Cx, Imported, import_servers, parse_json, read};

/// Claude Desktop's file: `~/Library/Application Support/Claude/` on macOS,
/// `$XDG_CONFIG_HOME/Claude/` elsewhere.
pub(super) fn desktop_path(home: &Path, config_home: &Path) -> PathBuf {
    if cfg!(target_os = "macos") {
        home.join("Library/Application Support/Claude/claude_desktop_config.json")
    } else {
        config_home.join("Claude/claude_desktop_config.json")
    }
}

/// Claude Code's three scopes, lowest precedence first.
pub(super) fn defaults(cx: &Cx<'_>) -> anyhow::Result<(Vec<PathBuf>, Imported)> {
    let home = cx
        .home
        .context("HOME is not set; give the file to import as PATH")?;
    let user = home.join(".claude.json");
    let project = cx.cwd.join(".mcp.json");
    let user_json = match std::fs::read_to_string(&user) {
        Ok(text) => Some(parse_json(&text, &user)?),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
        Err(e) => return Err(e).with_context(|| format!("cannot read {}", user.display())),
    };
    let mut imported = Imported::default();
    let mut sources = Vec::new();
    if let Some(json) = &user_json {
        servers_of(json, &user, Client::Claude, cx, &mut imported)?;
        sources.push(user.clone());
    }
    if project.exists() {
        let json = parse_json(&read(&project)?, &project)?;
        servers_of(&json, &project, Client::Claude, cx, &mut imported)?;
        sources.push(project.clone());
    }
    if let Some(local) = user_json
        .as_ref()
        .and_then(|json| local_scope(json, cx.cwd))
    {
        servers_of(local, &user, Client::Claude, cx, &mut imported)?;
    }
    if sources.is_empty() {
        bail!(
            "found neither {} nor {}; give the file to import as PATH",
            user.display(),
            project.display()
        );
    }
    Ok((sources, imported))
}

/// One Claude Code file: its `mcpServers`, and the current directory's local servers when
/// it is a `~/.claude.json`.
pub(super) fn import_code(
    json: &Json,
    path: &Path,
    cx: &Cx<'_>,
    out: &mut Imported,
) -> anyhow::Result<()> {
    servers_of(json, path, Client::Claude, cx, out)?;
    if let Some(local) = local_scope(json, cx.cwd) {
        servers_of(local, path, Client::Claude, cx, out)?;
    }
    Ok(())
}

/// Claude Desktop's `mcpServers`.
pub(super) fn import_desktop(json: &Json, path: &Path, out: &mut Imported) -> anyhow::Result<()> {
    let cx = Cx {
        client: Client::ClaudeDesktop,
        cwd: Path::new("/"),
        home: None,
    };
    servers_of(json, path, Client::ClaudeDesktop, &cx, out)
}

/// The entry of `~/.claude.json` for the directory Claude Code was started in.
fn local_scope<'a>(json: &'a Json, cwd: &Path) -> Option<&'a Json> {
    json.get("projects")?.get(cwd.to_string_lossy().as_ref())
}

/// The `mcpServers` object of one scope.
fn servers_of(
    json: &Json,
    path: &Path,
    client: Client,
    cx: &Cx<'_>,
    out: &mut Imported,
) -> anyhow::Result<()> {
    import_servers(json, "mcpServers", path, client, out, |server| {
        // Claude's `${VAR}` syntax is ours: strings pass through unchanged.
        entry::convert(server, Dialect::Claude, cx, &mut |s| s.to_owned())
    })
}
