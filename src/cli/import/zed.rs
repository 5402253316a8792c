//! Zed: `context_servers` in `~/.config/zed/settings.json` (user) and `.zed/settings.json`
//! (project), JSON with comments. A custom server is `{"command": "...", "args": [...],
//! "env": {...}}` (older files: `"command": {"path", "args", "env"}`), a remote one
//! `{"url": "...", "headers": {...}}`; a server from a Zed extension (`"source":
//! "extension"`) is installed by Zed and cannot be run without it
//! (<https://zed.dev/docs/ai/mcp>).

use super::skip::Skip;
use std::path::{Path, PathBuf};

use serde_json::Value as Json;

use super::server::{self, Server};
use super::{Client, Imported, import_servers};

/// User first, then the project's.
pub(super) fn paths(config_home: &Path, cwd: &Path) -> Vec<PathBuf> {
    vec![
        config_home.join("zed/settings.json"),
        cwd.join(".zed/settings.json"),
    ]
}

pub(super) fn import(json: &Json, path: &Path, out: &mut Imported) -> anyhow::Result<()> {
    import_servers(json, "context_servers", path, Client::Zed, out, convert)
}

fn convert(entry: &Json) -> Result<Server, Skip> {
    let Some(entry) = entry.as_object() else {
        return Err(Skip::NotA("an object"));
    };
    if entry.get("source").and_then(Json::as_str) == Some("extension") {
        return Err(Skip::Unsupported(
            "it comes from a Zed extension, which Zed installs and runs itself; add the \
             server's own command to servers.toml instead",
        ));
    }
    let mut server = Server::default();
    let mut read = vec!["source", "enabled", "settings"];
    let same = &mut |s: &str| s.to_owned();
    match (entry.get("command"), entry.get("url")) {
        (Some(Json::String(command)), _) => {
            server.command = Some(command.clone());
            if let Some(args) = entry.get("args") {
                server.args = server::strings("args", args)?;
            }
            if let Some(env) = entry.get("env") {
                server.env = server::pairs("env", env, same)?;
            }
            read.extend(["command", "args", "env"]);
        }
        // The older shape: `"command": {"path": ..., "args": [...], "env": {...}}`.
        (Some(Json::Object(command)), _) => {
            let path = command
                .get("path")
                .ok_or(Skip::Missing("`command` has no `path`"))
                .and_then(|p| server::string("command.path", p))?;
            server.command = Some(path);
            if let Some(args) = command.get("args") {
                server.args = server::strings("command.args", args)?;
            }
            if let Some(env) = command.get("env").filter(|e| !e.is_null()) {
                server.env = server::pairs("command.env", env, same)?;
            }
            read.push("command");
        }
        (None, Some(url)) => {
            server.url = Some(server::string("url", url)?);
            if let Some(headers) = entry.get("headers") {
                server.headers = server::pairs("headers", headers, same)?;
            }
            read.extend(["url", "headers"]);
        }
        _ => return Err(Skip::Missing("neither a `command` nor a `url`")),
    }
    if let Some(enabled) = entry.get("enabled").and_then(Json::as_bool) {
        server.enabled = Some(enabled);
    }
    server.dropped = entry
        .keys()
        .filter(|k| !read.contains(&k.as_str()))
        .cloned()
        .collect();
    Ok(server)
}
