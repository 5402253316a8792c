//! Codex: `[mcp_servers.<name>]` tables in `$CODEX_HOME/config.toml` or
//! `~/.codex/config.toml`, already our format: the keys mcp-defer reads are carried as they
//! are. Codex signs in to HTTP servers with `codex mcp login`, configured by `scopes` (which
//! `mcp-defer login` reads too), `oauth_resource` and `[mcp_servers.<name>.oauth]
//! client_id` (a pre-registered client, carried as `oauth_client_id`).

use std::path::{Path, PathBuf};

use anyhow::{Context, bail};

use super::{Client, Imported, itself};
use crate::config::SERVER_KEYS;

/// Codex keys about OAuth sign-in; carried, and the server gets a note.
const OAUTH_KEYS: &[&str] = &["scopes", "oauth_resource", "oauth"];

pub(super) fn default_path(home: Option<&Path>) -> anyhow::Result<PathBuf> {
    Ok(match std::env::var_os("CODEX_HOME") {
        Some(dir) => PathBuf::from(dir).join("config.toml"),
        None => home
            .context("HOME is not set; give the file to import as PATH")?
            .join(".codex/config.toml"),
    })
}

/// Codex's `[mcp_servers.<name>]` tables, with the keys mcp-defer reads.
pub(super) fn import(text: &str, path: &Path) -> anyhow::Result<Imported> {
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
            out.note(format!("skipped {name}: not a table"));
            continue;
        };
        let args: Vec<String> = server
            .get("args")
            .and_then(toml::Value::as_array)
            .map(|a| {
                a.iter()
                    .filter_map(|v| v.as_str().map(str::to_owned))
                    .collect()
            })
            .unwrap_or_default();
        if server
            .get("command")
            .and_then(toml::Value::as_str)
            .is_some_and(|command| itself::is_self(command, &args))
        {
            out.note(format!("skipped {name}: it is mcp-defer itself"));
            continue;
        }
        let mut table = toml::Table::new();
        for (key, value) in server {
            // Codex's pre-registered client: `[mcp_servers.<name>.oauth] client_id`.
            if key == "oauth" {
                let id = value.get("client_id").and_then(toml::Value::as_str);
                if let Some(id) = id {
                    table.insert("oauth_client_id".to_owned(), id.into());
                }
                let others = value
                    .as_table()
                    .into_iter()
                    .flatten()
                    .map(|(k, _)| k.as_str())
                    .filter(|k| *k != "client_id");
                for other in others {
                    out.note(format!(
                        "left out `oauth.{other}` of {name}: mcp-defer does not read it"
                    ));
                }
                continue;
            }
            // Codex's `tools` tables hold approval modes, which mean nothing behind a proxy.
            let ours = SERVER_KEYS.contains(&key.as_str()) && key != "tools";
            if ours || OAUTH_KEYS.contains(&key.as_str()) {
                table.insert(key.clone(), value.clone());
            } else {
                out.note(format!(
                    "left out `{key}` of {name}: mcp-defer does not read it"
                ));
            }
        }
        let oauth = OAUTH_KEYS.iter().any(|k| server.contains_key(*k));
        let remote = server.get("url").and_then(toml::Value::as_str);
        let credentials = ["bearer_token_env_var", "http_headers", "env_http_headers"]
            .iter()
            .any(|k| server.contains_key(*k));
        let as_server = super::Server {
            url: remote.map(str::to_owned),
            oauth,
            bearer_token_env_var: credentials.then(String::new),
            ..Default::default()
        };
        if let Some(why) = as_server.oauth_note(Client::Codex, name) {
            out.note(format!("{name}: {why}"));
        }
        out.put(name, table);
    }
    Ok(out)
}
