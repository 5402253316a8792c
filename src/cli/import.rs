//! `mcp-defer import claude|codex [PATH]`: a servers.toml from the MCP servers a client
//! already has, printed to stdout, so moving them behind mcp-defer is one redirect.
//!
//! Codex's `[mcp_servers.<name>]` tables are already our format: their keys are carried
//! over as they are. Claude Code's JSON (`mcpServers` in `.mcp.json` or `~/.claude.json`)
//! maps onto the same keys. What cannot be carried (a legacy SSE server, mcp-defer itself, a
//! key we do not read) is left out with a line on stderr saying why. The output is validated
//! by the same loader `serve` uses before it is printed.
//!
//! Environment rule: a Claude Code stdio server gets `inherit_env = true`, since Claude Code
//! passes it the whole environment and we cannot know which variables it reads; a Codex
//! server keeps Codex's rule (default set plus `env_vars`), which is ours by default.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{Context, bail};
use serde_json::Value as Json;

use crate::config::{Config, SERVER_KEYS};

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub(super) enum Client {
    /// Claude Code: `.mcp.json`, `~/.claude.json`.
    Claude,
    /// Codex: `~/.codex/config.toml`.
    Codex,
}

#[derive(Debug, clap::Args)]
pub(super) struct Args {
    /// Whose configuration to read.
    client: Client,
    /// The file to read [default: claude: ~/.claude.json (user and this directory's local
    /// servers) and ./.mcp.json (project servers); codex: $CODEX_HOME/config.toml, then
    /// ~/.codex/config.toml]
    path: Option<PathBuf>,
}

/// Servers in the order the client lists them, each as the keys of its servers.toml table.
#[derive(Debug, Default, PartialEq)]
struct Imported {
    servers: Vec<(String, toml::Table)>,
    /// What was left out and why, for stderr.
    skipped: Vec<String>,
}

impl Imported {
    /// Adds or replaces `name` (a later scope wins, as in the client), keeping first position.
    fn put(&mut self, name: &str, table: toml::Table) {
        match self.servers.iter_mut().find(|(n, _)| n == name) {
            Some((_, t)) => *t = table,
            None => self.servers.push((name.to_owned(), table)),
        }
    }
}

pub(super) fn run(args: Args) -> anyhow::Result<ExitCode> {
    let cwd = std::env::current_dir().context("cannot read the current directory")?;
    let (sources, imported) = match (args.client, args.path) {
        (Client::Codex, path) => {
            let path = match path {
                Some(path) => path,
                None => codex_default()?,
            };
            let imported = from_codex(&read(&path)?, &path)?;
            (vec![path], imported)
        }
        (Client::Claude, Some(path)) => {
            let mut imported = Imported::default();
            from_claude(&read(&path)?, &path, &cwd, &mut imported)?;
            (vec![path], imported)
        }
        (Client::Claude, None) => claude_defaults(&cwd)?,
    };
    let text = render(args.client, &sources, &imported.servers);
    super::write_stdout(&text)?;
    for line in &imported.skipped {
        eprintln!("mcp-defer: {line}");
    }
    if args.client == Client::Claude
        && imported
            .servers
            .iter()
            .any(|(_, t)| t.contains_key("inherit_env"))
    {
        eprintln!(
            "mcp-defer: stdio servers got `inherit_env = true`, because Claude Code passes them \
             its whole environment; for tighter secrets, replace it with `env_vars = [...]` \
             naming the variables each server needs (`check` lists what each receives)"
        );
    }
    if imported.servers.is_empty() {
        eprintln!("mcp-defer: no MCP servers found in {}", list(&sources));
    }
    // `${VAR}`s stay unexpanded in the output; any value will do to validate the rest. The
    // text is printed either way, so what is wrong can be fixed in it.
    if let Err(e) =
        Config::parse_with_env(&text, Path::new("servers.toml"), &|_| Some("x".to_owned()))
    {
        eprintln!("mcp-defer: the imported servers.toml needs a fix before use: {e}");
        return Ok(ExitCode::FAILURE);
    }
    Ok(ExitCode::SUCCESS)
}

fn read(path: &Path) -> anyhow::Result<String> {
    std::fs::read_to_string(path).with_context(|| format!("cannot read {}", path.display()))
}

fn home() -> anyhow::Result<PathBuf> {
    std::env::var_os("HOME")
        .map(PathBuf::from)
        .context("HOME is not set; give the file to import as PATH")
}

fn codex_default() -> anyhow::Result<PathBuf> {
    Ok(match std::env::var_os("CODEX_HOME") {
        Some(dir) => PathBuf::from(dir).join("config.toml"),
        None => home()?.join(".codex/config.toml"),
    })
}

/// Claude Code's three scopes, lowest precedence first: user (`~/.claude.json`
/// `mcpServers`), project (`./.mcp.json`), local (`~/.claude.json` `projects.<cwd>`).
fn claude_defaults(cwd: &Path) -> anyhow::Result<(Vec<PathBuf>, Imported)> {
    let user = home()?.join(".claude.json");
    let project = cwd.join(".mcp.json");
    let user_json = match std::fs::read_to_string(&user) {
        Ok(text) => Some(parse_json(&text, &user)?),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
        Err(e) => return Err(e).with_context(|| format!("cannot read {}", user.display())),
    };
    let mut imported = Imported::default();
    let mut sources = Vec::new();
    if let Some(json) = &user_json {
        servers_of(json, &user, &mut imported)?;
        sources.push(user.clone());
    }
    if project.exists() {
        servers_of(
            &parse_json(&read(&project)?, &project)?,
            &project,
            &mut imported,
        )?;
        sources.push(project.clone());
    }
    if let Some(local) = user_json.as_ref().and_then(|json| local_scope(json, cwd)) {
        servers_of(local, &user, &mut imported)?;
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

/// The entry of `~/.claude.json` for the directory Claude Code was started in.
fn local_scope<'a>(json: &'a Json, cwd: &Path) -> Option<&'a Json> {
    json.get("projects")?.get(cwd.to_string_lossy().as_ref())
}

fn parse_json(text: &str, path: &Path) -> anyhow::Result<Json> {
    serde_json::from_str(text).with_context(|| format!("{} is not valid JSON", path.display()))
}

/// One Claude Code file: its `mcpServers`, and the current directory's local servers when
/// it is a `~/.claude.json`.
fn from_claude(text: &str, path: &Path, cwd: &Path, out: &mut Imported) -> anyhow::Result<()> {
    let json = parse_json(text, path)?;
    servers_of(&json, path, out)?;
    if let Some(local) = local_scope(&json, cwd) {
        servers_of(local, path, out)?;
    }
    Ok(())
}

/// The `mcpServers` object of one Claude Code scope.
fn servers_of(json: &Json, path: &Path, out: &mut Imported) -> anyhow::Result<()> {
    let Some(servers) = json.get("mcpServers") else {
        return Ok(());
    };
    let Some(servers) = servers.as_object() else {
        bail!("{}: `mcpServers` is not an object", path.display());
    };
    for (name, server) in servers {
        match claude_server(server) {
            Ok((table, dropped)) => {
                for key in dropped {
                    out.skipped.push(format!(
                        "left out `{key}` of {name}: mcp-defer does not read it"
                    ));
                }
                out.put(name, table);
            }
            Err(why) => out
                .skipped
                .push(format!("skipped {name} ({}): {why}", path.display())),
        }
    }
    Ok(())
}

/// One Claude Code server entry as a servers.toml table and the keys it left out, or why it
/// cannot be one.
fn claude_server(server: &Json) -> Result<(toml::Table, Vec<String>), String> {
    let Some(entry) = server.as_object() else {
        return Err("not an object".to_owned());
    };
    let kind = match entry.get("type").and_then(Json::as_str) {
        Some(kind) => kind,
        None if entry.contains_key("url") => "http",
        None => "stdio",
    };
    let mut table = toml::Table::new();
    let carry = |from: &str, to: &str, table: &mut toml::Table| -> Result<(), String> {
        if let Some(value) = entry.get(from) {
            let value = toml_value(value).ok_or_else(|| format!("`{from}` has a null in it"))?;
            table.insert(to.to_owned(), value);
        }
        Ok(())
    };
    let known: &[&str] = match kind {
        "stdio" => {
            let Some(command) = entry.get("command").and_then(Json::as_str) else {
                return Err("a stdio server without a `command`".to_owned());
            };
            if is_self(command) {
                return Err("it is mcp-defer itself".to_owned());
            }
            carry("command", "command", &mut table)?;
            carry("args", "args", &mut table)?;
            carry("env", "env", &mut table)?;
            carry("cwd", "cwd", &mut table)?;
            // Claude Code hands a stdio server its whole environment, so a server may read a
            // variable its entry never names; only inheriting keeps such a server working.
            table.insert("inherit_env".to_owned(), toml::Value::Boolean(true));
            &["type", "command", "args", "env", "cwd"]
        }
        "http" => {
            carry("url", "url", &mut table)?;
            carry("headers", "http_headers", &mut table)?;
            &["type", "url", "headers"]
        }
        "sse" => {
            return Err(
                "it uses the legacy SSE transport, which mcp-defer does not speak; use its \
                 streamable HTTP endpoint if it has one"
                    .to_owned(),
            );
        }
        other => return Err(format!("unknown transport type {other:?}")),
    };
    // Not fatal: the server works without them (for example `oauth`, which mcp-defer does
    // not do yet); the caller says what was left behind.
    let dropped = entry
        .keys()
        .filter(|k| !known.contains(&k.as_str()))
        .cloned()
        .collect();
    Ok((table, dropped))
}

/// Codex's `[mcp_servers.<name>]` tables, with the keys mcp-defer reads.
fn from_codex(text: &str, path: &Path) -> anyhow::Result<Imported> {
    let doc: toml::Table =
        toml::from_str(text).with_context(|| format!("{} is not valid TOML", path.display()))?;
    let mut out = Imported::default();
    let Some(servers) = doc.get("mcp_servers") else {
        return Ok(out);
    };
    let Some(servers) = servers.as_table() else {
        bail!("{}: `mcp_servers` is not a table", path.display());
    };
    for (name, server) in servers {
        let Some(server) = server.as_table() else {
            out.skipped.push(format!("skipped {name}: not a table"));
            continue;
        };
        if server
            .get("command")
            .and_then(toml::Value::as_str)
            .is_some_and(is_self)
        {
            out.skipped
                .push(format!("skipped {name}: it is mcp-defer itself"));
            continue;
        }
        let mut table = toml::Table::new();
        for (key, value) in server {
            if SERVER_KEYS.contains(&key.as_str()) {
                table.insert(key.clone(), value.clone());
            } else {
                out.skipped.push(format!(
                    "left out `{key}` of {name}: mcp-defer does not read it"
                ));
            }
        }
        out.put(name, table);
    }
    Ok(out)
}

/// Whether `command` runs mcp-defer (importing it would make it aggregate itself).
fn is_self(command: &str) -> bool {
    Path::new(command)
        .file_stem()
        .is_some_and(|stem| stem == "mcp-defer")
}

/// JSON to TOML; `None` for a null, which TOML cannot hold.
fn toml_value(json: &Json) -> Option<toml::Value> {
    Some(match json {
        Json::Null => return None,
        Json::Bool(b) => toml::Value::Boolean(*b),
        Json::Number(n) => match n.as_i64() {
            Some(i) => toml::Value::Integer(i),
            None => toml::Value::Float(n.as_f64()?),
        },
        Json::String(s) => toml::Value::String(s.clone()),
        Json::Array(items) => {
            toml::Value::Array(items.iter().map(toml_value).collect::<Option<_>>()?)
        }
        Json::Object(map) => toml::Value::Table(
            map.iter()
                .map(|(k, v)| Some((k.clone(), toml_value(v)?)))
                .collect::<Option<_>>()?,
        ),
    })
}

fn list(paths: &[PathBuf]) -> String {
    paths
        .iter()
        .map(|p| p.display().to_string())
        .collect::<Vec<_>>()
        .join(" and ")
}

/// The servers.toml text: a header naming the sources, then one table per server with
/// inline values, in the client's order.
fn render(client: Client, sources: &[PathBuf], servers: &[(String, toml::Table)]) -> String {
    let client = match client {
        Client::Claude => "claude",
        Client::Codex => "codex",
    };
    let mut out = format!(
        "# servers.toml imported by `mcp-defer import {client}` from {}.\n\
         # Check it with `mcp-defer check --config <this file>`; settings and mcp-defer's own\n\
         # keys (description, prefix, always_load, search_hints) are in the README.\n",
        list(sources)
    );
    for (name, table) in servers {
        out.push_str(&format!("\n[mcp_servers.{}]\n", key(name)));
        for (k, v) in table {
            out.push_str(&format!("{} = {v}\n", key(k)));
        }
    }
    out
}

/// A TOML key: bare when it can be, quoted otherwise.
fn key(k: &str) -> String {
    let bare = !k.is_empty()
        && k.chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-');
    if bare {
        k.to_owned()
    } else {
        toml::Value::String(k.to_owned()).to_string()
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    fn claude(json: &str) -> Imported {
        let mut out = Imported::default();
        from_claude(
            json,
            Path::new(".mcp.json"),
            Path::new("/work/app"),
            &mut out,
        )
        .unwrap();
        out
    }

    #[test]
    fn claude_servers_map_onto_our_keys() {
        let out = claude(
            r#"{"mcpServers": {
                "github": {"type": "http", "url": "https://api.githubcopilot.com/mcp/",
                           "headers": {"Authorization": "Bearer ${GITHUB_PAT}"}},
                "time": {"command": "uvx", "args": ["mcp-server-time"], "env": {"TZ": "UTC"}},
                "old": {"type": "sse", "url": "https://example.com/sse"},
                "me": {"command": "/usr/local/bin/mcp-defer", "args": ["serve"]}
            },
            "projects": {"/work/app": {"mcpServers": {
                "time": {"command": "uvx", "args": ["mcp-server-time", "--local-timezone", "Europe/Paris"]}
            }}}}"#,
        );
        let names: Vec<&str> = out.servers.iter().map(|(n, _)| n.as_str()).collect();
        assert_eq!(names, ["github", "time"]);
        let text = render(Client::Claude, &[PathBuf::from(".mcp.json")], &out.servers);
        assert!(text.contains(
            "[mcp_servers.github]\nurl = \"https://api.githubcopilot.com/mcp/\"\n\
             http_headers = { Authorization = \"Bearer ${GITHUB_PAT}\" }\n"
        ));
        // The directory's local entry replaces the user one, in the user one's place.
        assert!(text.contains(
            "[mcp_servers.time]\ncommand = \"uvx\"\nargs = [\"mcp-server-time\", \"--local-timezone\", \"Europe/Paris\"]\n"
        ));
        let skipped = out.skipped.join("\n");
        assert!(
            skipped.contains("skipped old") && skipped.contains("SSE"),
            "{skipped}"
        );
        assert!(
            skipped.contains("skipped me") && skipped.contains("itself"),
            "{skipped}"
        );
        assert!(!skipped.contains("github"), "{skipped}");
        let config =
            Config::parse_with_env(&text, Path::new("servers.toml"), &|_| Some("x".into()))
                .unwrap();
        assert_eq!(config.servers.len(), 2);
    }

    #[test]
    fn codex_tables_carry_over_in_order() {
        let text = r#"
            model = "o3"
            [mcp_servers.zeta]
            command = "npx"
            args = ["-y", "@modelcontextprotocol/server-memory"]
            startup_timeout_sec = 20
            tools = { add = { approval = "never" } }
            [mcp_servers.alpha]
            url = "https://mcp.example.com/mcp"
            bearer_token_env_var = "EXAMPLE_TOKEN"
            enabled = false
        "#;
        let out = from_codex(text, Path::new("config.toml")).unwrap();
        let names: Vec<&str> = out.servers.iter().map(|(n, _)| n.as_str()).collect();
        assert_eq!(names, ["zeta", "alpha"], "the file's order, not sorted");
        assert_eq!(
            out.skipped,
            ["left out `tools` of zeta: mcp-defer does not read it"]
        );
        let rendered = render(Client::Codex, &[PathBuf::from("config.toml")], &out.servers);
        assert!(
            rendered.contains("startup_timeout_sec = 20\n"),
            "{rendered}"
        );
        assert!(rendered.contains("bearer_token_env_var = \"EXAMPLE_TOKEN\"\nenabled = false\n"));
        Config::parse_with_env(&rendered, Path::new("servers.toml"), &|_| Some("x".into()))
            .unwrap();
    }

    #[test]
    fn odd_names_are_quoted_and_bad_input_is_named() {
        assert_eq!(key("my server.v2"), "\"my server.v2\"");
        assert_eq!(key("my-server_2"), "my-server_2");
        let err = from_codex("[mcp_servers", Path::new("/h/.codex/config.toml")).unwrap_err();
        assert!(format!("{err:#}").contains("/h/.codex/config.toml is not valid TOML"));
        let mut out = Imported::default();
        let err =
            from_claude("{", Path::new("/h/.claude.json"), Path::new("/"), &mut out).unwrap_err();
        assert!(format!("{err:#}").contains("/h/.claude.json is not valid JSON"));
    }
}
