//! Adds a client's imported servers to an existing servers.toml (or a new one) without
//! losing a byte of what is there: comments, order and formatting stay (toml_edit).
//!
//! A server is left out when servers.toml already runs the same thing (the same command and
//! arguments, or the same URL), whatever its name there; one whose name is taken by a
//! different server is added as `<name>-<client>`. Each decision is a note for stderr.

use toml_edit::{DocumentMut, Item, Table};

use crate::cli::import::merge::{Place, place};

/// The merged text, the names the servers got in it (one per imported server that was
/// added), and the notes.
#[derive(Debug, Default)]
pub(super) struct Merged {
    pub text: String,
    /// `(name in the client, name in servers.toml)`, for every server added.
    pub added: Vec<(String, String)>,
    /// `(name in the client, name already in servers.toml)`, for every duplicate.
    pub present: Vec<(String, String)>,
    pub notes: Vec<String>,
}

/// What identifies a server, whatever its name: what it runs or where it is.
fn identity(table: &dyn toml_edit::TableLike) -> Option<String> {
    if let Some(url) = table.get("url").and_then(Item::as_str) {
        return Some(url.to_owned());
    }
    let command = table.get("command").and_then(Item::as_str)?;
    let args: Vec<&str> = table
        .get("args")
        .and_then(Item::as_array)
        .map(|a| a.iter().filter_map(toml_edit::Value::as_str).collect())
        .unwrap_or_default();
    Some(format!("{command}\u{0}{}", args.join("\u{0}")))
}

/// Merges `servers` (from `client_name`, e.g. "claude") into `existing` (servers.toml's
/// text, empty for a new file). `header` is the comment put above the first added table.
///
/// # Errors
/// When `existing` is not valid TOML, or its `mcp_servers` is not a table.
pub(super) fn merge(
    existing: &str,
    servers: &[(String, toml::Table)],
    client_name: &str,
    header: &str,
) -> anyhow::Result<Merged> {
    let mut doc: DocumentMut = existing
        .parse()
        .map_err(|e| anyhow::anyhow!("servers.toml is not valid TOML: {e}"))?;
    let mut merged = Merged::default();
    if doc.get("mcp_servers").is_none() {
        let mut table = Table::new();
        table.set_implicit(true);
        doc.insert("mcp_servers", Item::Table(table));
    }
    let Some(table) = doc.get_mut("mcp_servers").and_then(Item::as_table_mut) else {
        anyhow::bail!(
            "servers.toml: `mcp_servers` is not a table of [mcp_servers.<name>] tables; \
             fix it first"
        );
    };
    let mut known: Vec<(String, Option<String>)> = table
        .iter()
        .map(|(name, item)| (name.to_owned(), item.as_table_like().and_then(identity)))
        .collect();
    let mut first = true;
    for (name, server) in servers {
        let new = to_edit(server)?;
        let id = identity(&new);
        // A server without an identity (neither command nor url) is never the same as one
        // already there.
        let same = |a: &Option<String>, b: &Option<String>| b.is_some() && a == b;
        let target = match place(&mut known, name, id, client_name, same) {
            Place::Present(same) => {
                merged.present.push((name.clone(), same.clone()));
                merged.notes.push(if same == *name {
                    format!("{name}: already in servers.toml; kept as it is there")
                } else {
                    format!("{name}: servers.toml already runs it as `{same}`; kept that one")
                });
                continue;
            }
            Place::Added(target) => target,
        };
        if target != *name {
            merged.notes.push(format!(
                "{name}: servers.toml has another server of that name; added as `{target}`"
            ));
        }
        let mut new = new;
        if first {
            new.decor_mut().set_prefix(format!("\n{header}"));
            first = false;
        } else {
            new.decor_mut().set_prefix("\n");
        }
        table.insert(&target, Item::Table(new));
        merged.added.push((name.clone(), target));
    }
    merged.text = doc.to_string();
    Ok(merged)
}

/// A servers.toml table as toml_edit writes it: one `key = value` line per key, nested
/// tables (env, headers) inline, as `import` prints them.
fn to_edit(server: &toml::Table) -> anyhow::Result<Table> {
    let mut table = Table::new();
    for (key, value) in server {
        let value: toml_edit::Value = value
            .to_string()
            .parse()
            .map_err(|e| anyhow::anyhow!("internal error: `{key}` does not re-parse: {e}"))?;
        table.insert(key, Item::Value(value));
    }
    Ok(table)
}

#[cfg(test)]
mod tests {
    // Tests panic on broken setup.
    #![allow(clippy::unwrap_used)]

    use super::*;

    fn server(text: &str) -> toml::Table {
        toml::from_str(text).unwrap()
    }

    #[test]
    fn keeps_comments_and_skips_the_same_server_under_any_name() {
        let existing = "# mine\n[settings]\nsearch_limit = 5\n\n[mcp_servers.clock]\n\
                        command = \"uvx\" # the time\nargs = [ \"mcp-server-time\" ]\n";
        let servers = vec![
            (
                "time".to_owned(),
                server("command = \"uvx\"\nargs = [\"mcp-server-time\"]"),
            ),
            (
                "clock".to_owned(),
                server("url = \"https://x.example/mcp\""),
            ),
            (
                "mem".to_owned(),
                server("command = \"npx\"\nenv = { A = \"${A}\" }"),
            ),
        ];
        let merged = merge(existing, &servers, "claude", "# adopted\n").unwrap();
        assert!(merged.text.starts_with(existing), "{}", merged.text);
        assert_eq!(
            merged.present,
            vec![("time".to_owned(), "clock".to_owned())]
        );
        assert_eq!(
            merged.added,
            vec![
                ("clock".to_owned(), "clock-claude".to_owned()),
                ("mem".to_owned(), "mem".to_owned())
            ]
        );
        let doc: toml::Table = toml::from_str(&merged.text).unwrap();
        assert_eq!(
            doc["mcp_servers"]["mem"]["env"]["A"].as_str(),
            Some("${A}"),
            "{}",
            merged.text
        );
        assert!(
            merged
                .text
                .contains("\n# adopted\n[mcp_servers.clock-claude]")
        );
    }

    #[test]
    fn a_new_file_gets_plain_tables() {
        let servers = vec![(
            "time".to_owned(),
            server("command = \"uvx\"\nargs = [\"mcp-server-time\"]"),
        )];
        let merged = merge("", &servers, "codex", "# adopted\n").unwrap();
        assert_eq!(
            merged.text,
            "\n# adopted\n[mcp_servers.time]\ncommand = \"uvx\"\nargs = [\"mcp-server-time\"]\n"
        );
    }
}
