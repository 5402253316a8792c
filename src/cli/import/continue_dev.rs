//! Continue: `mcpServers`, a YAML list in `~/.continue/config.yaml` and in each block file
//! of a workspace's `.continue/mcpServers/` (`*.yaml`). An entry is `{name, type?,
//! command, args, env, cwd}` or `{name, type: streamable-http | sse, url,
//! requestOptions: {headers}}`; values may hold `${{ secrets.NAME }}` (from Continue's Hub
//! or the local `.env`) and `${{ inputs.NAME }}`
//! (<https://docs.continue.dev/customize/deep-dives/mcp>,
//! <https://docs.continue.dev/reference>).
//!
//! Each `${{ secrets.NAME }}` becomes `${NAME}`, with a note naming the variable to set.

use super::skip::Skip;
use std::path::{Path, PathBuf};

use anyhow::bail;
use serde_json::Value as Json;

use super::server::{self, Server};
use super::{Client, Imported};

/// The user's file, then the workspace's block files (sorted, as Continue loads them).
pub(super) fn paths(home: &Path, cwd: &Path) -> Vec<PathBuf> {
    let mut paths = vec![home.join(".continue/config.yaml")];
    if let Ok(dir) = std::fs::read_dir(cwd.join(".continue/mcpServers")) {
        let mut blocks: Vec<PathBuf> = dir
            .filter_map(Result::ok)
            .map(|e| e.path())
            .filter(|p| p.extension().is_some_and(|e| e == "yaml" || e == "yml"))
            .collect();
        blocks.sort();
        paths.extend(blocks);
    }
    paths
}

pub(super) fn import(json: &Json, path: &Path, out: &mut Imported) -> anyhow::Result<()> {
    let servers = match json.get("mcpServers") {
        None | Some(Json::Null) => return Ok(()),
        Some(Json::Array(servers)) => servers,
        Some(_) => bail!("{}: `mcpServers` is not a list", path.display()),
    };
    for (i, entry) in servers.iter().enumerate() {
        let name = entry
            .get("name")
            .and_then(Json::as_str)
            .map_or_else(|| format!("server-{}", i + 1), str::to_owned);
        out.add(Client::Continue, &name, path, convert(entry));
    }
    Ok(())
}

fn convert(entry: &Json) -> Result<Server, Skip> {
    let Some(entry) = entry.as_object() else {
        return Err(Skip::NotA("a mapping"));
    };
    let mut secrets = Vec::new();
    let mut vars = |s: &str| secrets_to_vars(s, &mut secrets);
    let mut server = Server::default();
    let mut read = vec!["name", "type"];
    match entry.get("type").and_then(Json::as_str) {
        None | Some("stdio") => {
            let command = entry
                .get("command")
                .ok_or(Skip::Missing("a stdio server without a `command`"))
                .and_then(|c| server::string("command", c))?;
            server.command = Some(vars(&command));
            if let Some(args) = entry.get("args") {
                server.args = server::strings("args", args)?
                    .iter()
                    .map(|a| vars(a))
                    .collect();
            }
            if let Some(env) = entry.get("env") {
                server.env = server::pairs("env", env, &mut vars)?;
            }
            if let Some(cwd) = entry.get("cwd") {
                server.cwd = Some(vars(&server::string("cwd", cwd)?));
            }
            read.extend(["command", "args", "env", "cwd"]);
        }
        Some("streamable-http" | "streamableHttp" | "http") => {
            let url = entry
                .get("url")
                .ok_or(Skip::Missing("an HTTP server without a `url`"))
                .and_then(|u| server::string("url", u))?;
            server.url = Some(vars(&url));
            if let Some(headers) = entry.get("requestOptions").and_then(|o| o.get("headers")) {
                server.headers = server::pairs("requestOptions.headers", headers, &mut vars)?;
            }
            read.extend(["url", "requestOptions"]);
        }
        Some("sse" | "websocket") => {
            return Err(Skip::Unsupported(
                "it uses SSE or WebSocket, which mcp-defer does not speak; use the server's \
                 streamable HTTP endpoint if it has one",
            ));
        }
        Some(other) => {
            return Err(Skip::UnknownType {
                what: "type",
                found: other.to_owned(),
                known: "",
            });
        }
    }
    for name in secrets {
        server.notes.push(format!(
            "set the environment variable {name} before starting mcp-defer (Continue read it \
             as `${{{{ secrets.{name} }}}}`)"
        ));
    }
    server.dropped = entry
        .keys()
        .filter(|k| !read.contains(&k.as_str()))
        .cloned()
        .collect();
    Ok(server)
}

/// `${{ secrets.NAME }}` and `${{ inputs.NAME }}` as `${NAME}`; `names` collects them.
fn secrets_to_vars(text: &str, names: &mut Vec<String>) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(start) = rest.find("${{") {
        out.push_str(&rest[..start]);
        let after = &rest[start + 3..];
        let Some(end) = after.find("}}") else {
            out.push_str(&rest[start..]);
            return out;
        };
        let inner = after[..end].trim();
        let name = inner
            .strip_prefix("secrets.")
            .or_else(|| inner.strip_prefix("inputs."))
            .filter(|n| !n.is_empty() && n.chars().all(|c| c.is_ascii_alphanumeric() || c == '_'));
        match name {
            Some(name) => {
                if !names.iter().any(|n| n == name) {
                    names.push(name.to_owned());
                }
                out.push_str(&format!("${{{name}}}"));
            }
            None => out.push_str(&rest[start..start + 3 + end + 2]),
        }
        rest = &after[end + 2..];
    }
    out.push_str(rest);
    out
}

#[cfg(test)]
mod tests {
    use super::secrets_to_vars;

    #[test]
    fn secrets_become_variables() {
        let mut names = Vec::new();
        assert_eq!(
            secrets_to_vars("Bearer ${{ secrets.API_KEY }} ${{ other }}", &mut names),
            "Bearer ${API_KEY} ${{ other }}"
        );
        assert_eq!(names, ["API_KEY"]);
    }
}
