//! Goose: the `extensions` mapping of `~/.config/goose/config.yaml`. A command-line
//! extension is `{type: stdio, cmd, args, envs, env_keys, timeout, enabled}`, a remote one
//! `{type: streamable_http, uri, headers}`; `builtin` and `platform` extensions live inside
//! Goose (<https://block.github.io/goose/docs/getting-started/using-extensions>).
//!
//! `env_keys` (variables Goose reads from its keyring or the environment) become `env_vars`,
//! which pass them from mcp-defer's environment; `timeout` (seconds) becomes
//! `tool_timeout_sec`.

use super::skip::Skip;
use std::path::{Path, PathBuf};

use serde_json::Value as Json;

use super::server::{self, Server};
use super::{Client, Imported, import_servers};

pub(super) fn paths(config_home: &Path) -> Vec<PathBuf> {
    vec![config_home.join("goose/config.yaml")]
}

pub(super) fn import(json: &Json, path: &Path, out: &mut Imported) -> anyhow::Result<()> {
    import_servers(json, "extensions", path, Client::Goose, out, convert)
}

fn convert(entry: &Json) -> Result<Server, Skip> {
    let Some(entry) = entry.as_object() else {
        return Err(Skip::NotA("a mapping"));
    };
    let same = &mut |s: &str| s.to_owned();
    let mut server = Server::default();
    let mut read = vec![
        "type",
        "name",
        "enabled",
        "timeout",
        "description",
        "bundled",
    ];
    match entry.get("type").and_then(Json::as_str) {
        Some("stdio") => {
            let command = entry
                .get("cmd")
                .ok_or(Skip::Missing("a stdio extension without a `cmd`"))
                .and_then(|c| server::string("cmd", c))?;
            server.command = Some(command);
            if let Some(args) = entry.get("args") {
                server.args = server::strings("args", args)?;
            }
            if let Some(envs) = entry.get("envs") {
                server.env = server::pairs("envs", envs, same)?;
            }
            if let Some(keys) = entry.get("env_keys") {
                let keys = server::strings("env_keys", keys)?;
                if !keys.is_empty() {
                    server.notes.push(format!(
                        "Goose reads {} from its keyring or environment; mcp-defer passes \
                         them from its environment (`env_vars`): set them before starting it",
                        keys.join(", ")
                    ));
                    server.env_vars = Some(keys);
                }
            }
            read.extend(["cmd", "args", "envs", "env_keys"]);
        }
        Some("streamable_http" | "streamable-http" | "http") => {
            let url = entry
                .get("uri")
                .or_else(|| entry.get("url"))
                .ok_or(Skip::Missing("a remote extension without a `uri`"))
                .and_then(|u| server::string("uri", u))?;
            server.url = Some(url);
            if let Some(headers) = entry.get("headers") {
                server.headers = server::pairs("headers", headers, same)?;
            }
            read.extend(["uri", "url", "headers", "envs", "env_keys"]);
        }
        Some("sse") => {
            return Err(Skip::Unsupported(
                "it uses the legacy SSE transport, which mcp-defer does not speak",
            ));
        }
        Some("builtin" | "platform" | "frontend" | "inline_python") => {
            return Err(Skip::Unsupported(
                "it is built into Goose, not a separate MCP server",
            ));
        }
        Some(other) => {
            return Err(Skip::UnknownType {
                what: "type",
                found: other.to_owned(),
                known: "",
            });
        }
        None => return Err(Skip::Missing("no `type`")),
    }
    if let Some(enabled) = entry.get("enabled").and_then(Json::as_bool) {
        server.enabled = Some(enabled);
    }
    if let Some(timeout) = entry.get("timeout").and_then(Json::as_f64) {
        server.tool_timeout_sec = (timeout > 0.0 && timeout.is_finite()).then_some(timeout);
    }
    if let Some(description) = entry.get("description").and_then(Json::as_str)
        && !description.trim().is_empty()
    {
        server.description = Some(description.to_owned());
    }
    server.dropped = entry
        .keys()
        .filter(|k| !read.contains(&k.as_str()))
        .cloned()
        .collect();
    Ok(server)
}
