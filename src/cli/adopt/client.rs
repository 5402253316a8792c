//! The edits `adopt` makes in a client's own file, and the ones `--undo` makes to take them
//! back. Each works on the file's text and returns the new text; nothing here touches disk.
//!
//! - Claude Code (`~/.claude.json`): mcp-defer is added to the user scope's `mcpServers`
//!   with `"alwaysLoad": true` (its tool search would otherwise hide `search_tools`); the
//!   adopted servers are removed from the user scope and from the local scope of the
//!   directory adopt ran in (Claude Code has no switch that turns off a user-scope server).
//! - Gemini CLI and Qwen Code (`~/.gemini/settings.json`, `~/.qwen/settings.json`): the same
//!   in `mcpServers`, without the Claude-only option.
//! - GitHub Copilot CLI (`~/.copilot/mcp-config.json`): the same in `mcpServers`, the entry
//!   as `copilot mcp add` writes it (`"type": "local"`, `"tools": ["*"]`: without `tools`
//!   Copilot offers none of the server's tools).
//! - Codex (`config.toml`): `[mcp_servers.mcp-defer]` is added and each adopted server gets
//!   `enabled = false`, which Codex honours; comments and layout stay (toml_edit).
//!
//! Undo puts back, key by key, what the backup had for each key adopt touched (the adopted
//! servers and the `mcp-defer` entry) into the file as it is now, so whatever the client or
//! the user changed since (Claude Code rewrites its file all the time) is kept.

use serde_json::{Map, Value as Json};
use toml_edit::{DocumentMut, Item};

/// The name mcp-defer is registered under in the client.
pub(super) const ENTRY: &str = "mcp-defer";

/// The file formats adopt edits.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Format {
    /// `mcpServers` in a JSON file, with each client's entry.
    Json(Entry),
    /// Codex's `[mcp_servers.<name>]` tables.
    CodexToml,
}

/// How a client writes a stdio server under `mcpServers`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Entry {
    /// Claude Code: `type`, `env` and `"alwaysLoad": true` (its tool search would
    /// otherwise hide `search_tools`).
    Claude,
    /// Gemini CLI and Qwen Code: no `type`.
    Gemini,
    /// GitHub Copilot CLI: `"type": "local"` and `"tools": ["*"]`.
    Copilot,
}

/// How mcp-defer is started by the client.
pub(super) struct Launch<'a> {
    pub command: &'a str,
    pub args: &'a [String],
}

/// The client's file with mcp-defer registered and the `moved` servers turned off.
/// `local_scope` is the key of Claude Code's `projects` entry to clean too.
///
/// # Errors
/// When the text does not parse, or a servers object has the wrong type.
pub(super) fn adopt(
    format: Format,
    text: &str,
    moved: &[String],
    launch: &Launch<'_>,
    local_scope: &str,
) -> anyhow::Result<String> {
    match format {
        Format::Json(style) => {
            let claude = style == Entry::Claude;
            let mut doc = parse_json(text)?;
            let root = object(&mut doc, "the file")?;
            if claude
                && let Some(Json::Object(projects)) = root.get_mut("projects")
                && let Some(Json::Object(project)) = projects.get_mut(local_scope)
                && let Some(Json::Object(servers)) = project.get_mut("mcpServers")
            {
                servers.retain(|name, _| !moved.contains(name));
            }
            let servers = root
                .entry("mcpServers")
                .or_insert_with(|| Json::Object(Map::new()));
            let servers = object(servers, "mcpServers")?;
            servers.retain(|name, _| !moved.contains(name));
            let entry = match style {
                Entry::Claude => serde_json::json!({
                    "type": "stdio",
                    "command": launch.command,
                    "args": launch.args,
                    "env": {},
                    "alwaysLoad": true,
                }),
                Entry::Gemini => serde_json::json!({
                    "command": launch.command,
                    "args": launch.args,
                }),
                Entry::Copilot => serde_json::json!({
                    "type": "local",
                    "command": launch.command,
                    "args": launch.args,
                    "env": {},
                    "tools": ["*"],
                }),
            };
            servers.insert(ENTRY.to_owned(), entry);
            json_text(&doc)
        }
        Format::CodexToml => {
            let mut doc = parse_toml(text)?;
            let servers = codex_servers(&mut doc)?;
            for name in moved {
                if let Some(table) = servers.get_mut(name).and_then(Item::as_table_like_mut) {
                    table.insert("enabled", toml_edit::value(false));
                }
            }
            let mut entry = toml_edit::Table::new();
            entry.insert("command", toml_edit::value(launch.command));
            let mut args = toml_edit::Array::new();
            for arg in launch.args {
                args.push(arg.as_str());
            }
            entry.insert("args", toml_edit::value(args));
            servers.insert(ENTRY, Item::Table(entry));
            Ok(doc.to_string())
        }
    }
}

/// `current` with every key adopt touched (`moved` and [`ENTRY`]) as it was in `backup`
/// (`None`: the file did not exist before adopt).
///
/// # Errors
/// When either text does not parse.
pub(super) fn undo(
    format: Format,
    current: &str,
    backup: Option<&str>,
    moved: &[String],
    local_scope: &str,
) -> anyhow::Result<String> {
    let mut touched: Vec<String> = moved.to_vec();
    touched.push(ENTRY.to_owned());
    match format {
        Format::Json(style) => {
            let claude = style == Entry::Claude;
            let mut doc = parse_json(current)?;
            let before = match backup {
                Some(text) => parse_json(text)?,
                None => Json::Object(Map::new()),
            };
            let root = object(&mut doc, "the file")?;
            restore_map(root, before.get("mcpServers"), "mcpServers", &touched);
            if claude {
                let before = before.get("projects").and_then(|p| p.get(local_scope));
                if let Some(Json::Object(projects)) = root.get_mut("projects")
                    && let Some(Json::Object(project)) = projects.get_mut(local_scope)
                {
                    let servers = before.and_then(|p| p.get("mcpServers"));
                    restore_map(project, servers, "mcpServers", &touched);
                }
            }
            json_text(&doc)
        }
        Format::CodexToml => {
            let mut doc = parse_toml(current)?;
            let before = parse_toml(backup.unwrap_or(""))?;
            let before = before.get("mcp_servers").and_then(Item::as_table_like);
            let servers = codex_servers(&mut doc)?;
            for name in moved {
                let was = before
                    .and_then(|b| b.get(name))
                    .and_then(Item::as_table_like)
                    .and_then(|t| t.get("enabled"))
                    .cloned();
                if let Some(table) = servers.get_mut(name).and_then(Item::as_table_like_mut) {
                    match was {
                        Some(item) => {
                            table.insert("enabled", item);
                        }
                        None => {
                            table.remove("enabled");
                        }
                    }
                }
            }
            match before.and_then(|b| b.get(ENTRY)) {
                Some(item) => {
                    servers.insert(ENTRY, item.clone());
                }
                None => {
                    servers.remove(ENTRY);
                }
            }
            Ok(doc.to_string())
        }
    }
}

/// `parent[key]` rebuilt in the backup's order: for a touched name the backup's value (or
/// nothing), for any other name the current value; names added since adopt go last.
fn restore_map(
    parent: &mut Map<String, Json>,
    before: Option<&Json>,
    key: &str,
    touched: &[String],
) {
    let empty = Map::new();
    let before = before.and_then(Json::as_object).unwrap_or(&empty);
    let now = match parent.get(key) {
        Some(Json::Object(now)) => now.clone(),
        _ => Map::new(),
    };
    let mut out = Map::new();
    for (name, value) in before {
        if touched.contains(name) {
            out.insert(name.clone(), value.clone());
        } else if let Some(value) = now.get(name) {
            out.insert(name.clone(), value.clone());
        }
    }
    for (name, value) in &now {
        if !touched.contains(name) && !out.contains_key(name) {
            out.insert(name.clone(), value.clone());
        }
    }
    if out.is_empty() && !parent.contains_key(key) {
        return;
    }
    parent.insert(key.to_owned(), Json::Object(out));
}

fn parse_json(text: &str) -> anyhow::Result<Json> {
    if text.trim().is_empty() {
        return Ok(Json::Object(Map::new()));
    }
    // Gemini CLI accepts comments and trailing commas; they are not kept (the backup has
    // them).
    crate::cli::import::parse_json(text, std::path::Path::new("the client's file"))
}

fn parse_toml(text: &str) -> anyhow::Result<DocumentMut> {
    text.parse()
        .map_err(|e| anyhow::anyhow!("the client's file is not valid TOML: {e}"))
}

fn object<'a>(value: &'a mut Json, what: &str) -> anyhow::Result<&'a mut Map<String, Json>> {
    value
        .as_object_mut()
        .ok_or_else(|| anyhow::anyhow!("{what} is not a JSON object; fix it first"))
}

/// Pretty JSON with two-space indents and a final newline, as Claude Code writes it.
fn json_text(doc: &Json) -> anyhow::Result<String> {
    let mut text = serde_json::to_string_pretty(doc)?;
    text.push('\n');
    Ok(text)
}

/// Codex's `mcp_servers` table, created (without a header of its own) when absent.
fn codex_servers(doc: &mut DocumentMut) -> anyhow::Result<&mut dyn toml_edit::TableLike> {
    if doc.get("mcp_servers").is_none() {
        let mut table = toml_edit::Table::new();
        table.set_implicit(true);
        doc.insert("mcp_servers", Item::Table(table));
    }
    doc.get_mut("mcp_servers")
        .and_then(Item::as_table_like_mut)
        .ok_or_else(|| anyhow::anyhow!("`mcp_servers` in the Codex file is not a table"))
}

#[cfg(test)]
mod tests {
    // Tests panic on broken setup.
    #![allow(clippy::unwrap_used)]

    use super::*;

    fn launch() -> (String, Vec<String>) {
        (
            "/bin/mcp-defer".to_owned(),
            vec!["serve".into(), "--config".into(), "/c/servers.toml".into()],
        )
    }

    #[test]
    fn codex_round_trip_keeps_comments_and_old_enabled() {
        let before = "# top\nmodel = \"x\"\n\n[mcp_servers.time] # clock\ncommand = \"uvx\"\n\
                      args = [\"mcp-server-time\"]\n\n[mcp_servers.off]\ncommand = \"y\"\n\
                      enabled = false\n";
        let (command, args) = launch();
        let moved = vec!["time".to_owned(), "off".to_owned()];
        let launch = Launch {
            command: &command,
            args: &args,
        };
        let adopted = adopt(Format::CodexToml, before, &moved, &launch, "").unwrap();
        let doc: toml::Table = toml::from_str(&adopted).unwrap();
        assert_eq!(doc["mcp_servers"]["time"]["enabled"].as_bool(), Some(false));
        assert_eq!(
            doc["mcp_servers"]["mcp-defer"]["command"].as_str(),
            Some("/bin/mcp-defer")
        );
        assert!(adopted.contains("# clock"), "{adopted}");
        // A later change by the user survives the undo.
        let later = adopted.replace("model = \"x\"", "model = \"y\"");
        let undone = undo(Format::CodexToml, &later, Some(before), &moved, "").unwrap();
        assert_eq!(undone, before.replace("model = \"x\"", "model = \"y\""));
    }

    #[test]
    fn claude_round_trip_restores_order_and_keeps_later_keys() {
        let before = serde_json::json!({
            "numStartups": 1,
            "mcpServers": {"a": {"command": "a"}, "b": {"command": "b"}, "keep": {"url": "u"}},
            "projects": {"/p": {"mcpServers": {"loc": {"command": "l"}}, "x": 1}}
        });
        let text = serde_json::to_string_pretty(&before).unwrap();
        let moved = vec!["a".to_owned(), "b".to_owned(), "loc".to_owned()];
        let (command, args) = launch();
        let launch = Launch {
            command: &command,
            args: &args,
        };
        let adopted = adopt(Format::Json(Entry::Claude), &text, &moved, &launch, "/p").unwrap();
        let doc: Json = serde_json::from_str(&adopted).unwrap();
        let names: Vec<&String> = doc["mcpServers"].as_object().unwrap().keys().collect();
        assert_eq!(names, ["keep", "mcp-defer"]);
        assert_eq!(doc["mcpServers"]["mcp-defer"]["alwaysLoad"], true);
        assert_eq!(doc["projects"]["/p"]["mcpServers"], serde_json::json!({}));
        // Claude Code rewrites its file; a server added since adopt stays after undo.
        let mut later = doc.clone();
        later["numStartups"] = 7.into();
        later["mcpServers"]["new"] = serde_json::json!({"command": "n"});
        let later = serde_json::to_string_pretty(&later).unwrap();
        let undone = undo(
            Format::Json(Entry::Claude),
            &later,
            Some(&text),
            &moved,
            "/p",
        )
        .unwrap();
        let mut expect = before.clone();
        expect["numStartups"] = 7.into();
        expect["mcpServers"]["new"] = serde_json::json!({"command": "n"});
        let undone: Json = serde_json::from_str(&undone).unwrap();
        assert_eq!(undone, expect);
        let names: Vec<&String> = undone["mcpServers"].as_object().unwrap().keys().collect();
        assert_eq!(names, ["a", "b", "keep", "new"]);
    }
}
