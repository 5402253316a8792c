//! The `{command, args, env, url, headers, type}` server entry that Claude Code, Claude
//! Desktop, Cursor, VS Code, Gemini CLI, Qwen Code, Windsurf, Cline and Roo Code all write,
//! with each one's extras.
//! Variable syntax is the caller's: every string value goes through its `vars` function.

use super::dialect::Dialect;
use super::skip::Skip;
use serde_json::{Map, Value as Json};

use super::Cx;
use super::server::{self, Server};

/// Converts one entry; `Err` says why it cannot be a server.
pub(super) fn convert(
    entry: &Json,
    dialect: Dialect,
    cx: &Cx<'_>,
    vars: &mut dyn FnMut(&str) -> String,
) -> Result<Server, Skip> {
    let Some(entry) = entry.as_object() else {
        return Err(Skip::NotA("an object"));
    };
    let mut server = Server::default();
    let mut read: Vec<&str> = vec!["type"];
    let kind = transport(entry, dialect)?;
    match kind {
        Kind::Stdio => {
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
                server.env = server::pairs("env", env, vars)?;
            }
            if let Some(cwd) = entry.get("cwd") {
                let cwd = vars(&server::string("cwd", cwd)?);
                // Gemini CLI resolves a relative `cwd` against the directory it runs in;
                // ours is relative to the servers.toml, wherever that ends up.
                server.cwd = Some(if cwd.starts_with('/') || cwd.starts_with('$') {
                    cwd
                } else {
                    cx.cwd
                        .join(cwd.trim_start_matches("./"))
                        .display()
                        .to_string()
                });
            }
            read.extend(["command", "args", "env", "cwd"]);
        }
        Kind::Http(url_key) => {
            let url = entry
                .get(url_key)
                .map(|u| server::string(url_key, u))
                .transpose()?
                .ok_or(Skip::HttpWithout(url_key))?;
            server.url = Some(vars(&url));
            if let Some(headers) = entry.get("headers") {
                server.headers = server::pairs("headers", headers, vars)?;
            }
            read.extend([url_key, "headers"]);
        }
        Kind::Sse => {
            return Err(Skip::Unsupported(
                "it uses the legacy SSE transport, which mcp-defer does not speak; use its \
                 streamable HTTP endpoint if it has one",
            ));
        }
    }
    // OAuth settings: the registered client is kept, and the caller names the
    // `mcp-defer login` to run.
    read.extend(super::oauth::read(entry, dialect, &mut server, vars));
    if matches!(dialect, Dialect::Cursor | Dialect::Vscode) && entry.contains_key("envFile") {
        server.notes.push(
            "left out `envFile`: mcp-defer does not read env files; add the variables the \
             server needs to its `env`"
                .to_owned(),
        );
        read.push("envFile");
    }
    // Cline, Roo Code and Windsurf write `"disabled": true`; the server stays off here too.
    if let Some(disabled) = entry.get("disabled").and_then(Json::as_bool) {
        server.enabled = Some(!disabled);
        read.push("disabled");
    }
    if let Some(enabled) = entry.get("enabled").and_then(Json::as_bool) {
        server.enabled = Some(enabled);
        read.push("enabled");
    }
    if matches!(dialect, Dialect::Windsurf | Dialect::Cline) {
        if let Some(tools) = entry.get("disabledTools") {
            server.disabled_tools = Some(server::strings("disabledTools", tools)?);
        }
        // Approval lists and file watching are the client's; a proxy has none to apply.
        read.extend(["disabledTools", "alwaysAllow", "autoApprove", "watchPaths"]);
    }
    if dialect == Dialect::Cline {
        if let Some(timeout) = entry.get("timeout").and_then(Json::as_f64) {
            server.tool_timeout_sec = (timeout > 0.0 && timeout.is_finite()).then_some(timeout);
        }
        read.push("timeout");
    }
    if dialect == Dialect::Copilot {
        if let Some(timeout) = entry.get("timeout") {
            server.tool_timeout_sec = server::millis_as_secs(timeout);
        }
        // `["*"]` (what `copilot mcp add` writes) offers every tool, as here by default.
        if let Some(tools) = entry.get("tools") {
            let tools = server::strings("tools", tools)?;
            if !tools.iter().any(|t| t == "*") {
                server.enabled_tools = Some(tools);
            }
        }
        read.extend(["timeout", "tools"]);
    }
    if dialect == Dialect::Gemini {
        if let Some(timeout) = entry.get("timeout") {
            server.tool_timeout_sec = server::millis_as_secs(timeout);
        }
        if let Some(description) = entry.get("description") {
            server.description = Some(vars(&server::string("description", description)?));
        }
        if let Some(tools) = entry.get("includeTools") {
            server.enabled_tools = Some(server::strings("includeTools", tools)?);
        }
        if let Some(tools) = entry.get("excludeTools") {
            server.disabled_tools = Some(server::strings("excludeTools", tools)?);
        }
        // `trust` skips the client's confirmation prompts; mcp-defer has none to skip.
        read.extend([
            "timeout",
            "description",
            "includeTools",
            "excludeTools",
            "trust",
        ]);
        if kind != Kind::Http("httpUrl") {
            read.push("url");
        }
    }
    server.dropped = entry
        .keys()
        .filter(|k| !read.contains(&k.as_str()))
        .cloned()
        .collect();
    Ok(server)
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Stdio,
    /// Streamable HTTP, with the key holding its URL.
    Http(&'static str),
    Sse,
}

fn transport(entry: &Map<String, Json>, dialect: Dialect) -> Result<Kind, Skip> {
    let kind = entry.get("type").and_then(Json::as_str);
    match (dialect, kind) {
        (_, Some("stdio")) | (Dialect::Copilot, Some("local")) => Ok(Kind::Stdio),
        // Cursor and some Claude configs write `streamableHttp` / `streamable-http`.
        (_, Some("http" | "streamableHttp" | "streamable-http" | "streamable_http")) => {
            Ok(Kind::Http(if entry.contains_key("httpUrl") {
                "httpUrl"
            } else {
                "url"
            }))
        }
        (_, Some("sse")) if !entry.contains_key("serverUrl") => Ok(Kind::Sse),
        (Dialect::Windsurf, _) if entry.contains_key("serverUrl") => Ok(Kind::Http("serverUrl")),
        (_, Some("sse")) => Ok(Kind::Sse),
        (_, Some(other)) => Err(Skip::UnknownType {
            what: "transport type",
            found: other.to_owned(),
            known: "",
        }),
        (Dialect::Gemini, None) if entry.contains_key("httpUrl") => Ok(Kind::Http("httpUrl")),
        (Dialect::Gemini, None) if entry.contains_key("url") => Ok(Kind::Sse),
        (_, None) if entry.contains_key("url") => Ok(Kind::Http("url")),
        (_, None) => Ok(Kind::Stdio),
    }
}
