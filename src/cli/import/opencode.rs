//! OpenCode: the `mcp` object of `opencode.json` / `opencode.jsonc` (project, which wins) and
//! `~/.config/opencode/opencode.json` (global). Entries are `{"type": "local", "command":
//! ["npx", "-y", "..."], "environment": {...}}` or `{"type": "remote", "url": "...",
//! "headers": {...}}`, both with `enabled`, `timeout` (ms to fetch the tool list) and, for
//! remote ones, `oauth`; values may use `{env:NAME}`
//! (<https://opencode.ai/docs/mcp-servers/>, <https://opencode.ai/docs/config/#variables>).

use super::skip::Skip;
use std::path::{Path, PathBuf};

use serde_json::Value as Json;

use super::server::{self, Server};
use super::{Imported, import_servers, vars};

/// Global first, then the project's files.
pub(super) fn paths(config_home: &Path, cwd: &Path) -> Vec<PathBuf> {
    vec![
        config_home.join("opencode/opencode.json"),
        config_home.join("opencode/opencode.jsonc"),
        cwd.join("opencode.json"),
        cwd.join("opencode.jsonc"),
    ]
}

pub(super) fn import(json: &Json, path: &Path, out: &mut Imported) -> anyhow::Result<()> {
    import_servers(json, "mcp", path, super::Client::Opencode, out, convert)
}

fn convert(entry: &Json) -> Result<Server, Skip> {
    let Some(entry) = entry.as_object() else {
        return Err(Skip::NotA("an object"));
    };
    let mut files = Vec::new();
    let mut vars = |s: &str| vars::opencode(s, &mut files);
    let mut server = Server::default();
    let mut read = vec!["type", "enabled", "timeout"];
    match entry.get("type").and_then(Json::as_str) {
        Some("local") => {
            let command = entry
                .get("command")
                .ok_or(Skip::Missing("a local server without a `command`"))
                .and_then(|c| {
                    server::strings("command", c).map_err(|_| Skip::NotStrings("command"))
                })?;
            let Some((program, args)) = command.split_first() else {
                return Err(Skip::Empty("command"));
            };
            server.command = Some(vars(program));
            server.args = args.iter().map(|a| vars(a)).collect();
            if let Some(env) = entry.get("environment") {
                server.env = server::pairs("environment", env, &mut vars)?;
            }
            read.extend(["command", "environment"]);
        }
        Some("remote") => {
            let url = entry
                .get("url")
                .ok_or(Skip::Missing("a remote server without a `url`"))
                .and_then(|u| server::string("url", u))?;
            server.url = Some(vars(&url));
            if let Some(headers) = entry.get("headers") {
                server.headers = server::pairs("headers", headers, &mut vars)?;
            }
            // `"oauth": false` turns OpenCode's automatic OAuth off; anything else means the
            // server may sign in with it.
            if let Some(oauth) = entry.get("oauth") {
                server.oauth = oauth != &Json::Bool(false);
            }
            read.extend(["url", "headers", "oauth"]);
        }
        Some(other) => {
            return Err(Skip::UnknownType {
                what: "type",
                found: other.to_owned(),
                known: " (OpenCode has \"local\" and \"remote\")",
            });
        }
        None => return Err(Skip::Missing("no `type` (\"local\" or \"remote\")")),
    }
    if let Some(enabled) = entry.get("enabled").and_then(Json::as_bool) {
        server.enabled = Some(enabled);
    }
    if let Some(timeout) = entry.get("timeout") {
        server.startup_timeout_sec = server::millis_as_secs(timeout);
    }
    for file in files {
        server.notes.push(format!(
            "`{{file:{file}}}` is left as written: mcp-defer reads no files into values; put \
             the value in an environment variable and write `${{NAME}}`"
        ));
    }
    server.dropped = entry
        .keys()
        .filter(|k| !read.contains(&k.as_str()))
        .cloned()
        .collect();
    Ok(server)
}
