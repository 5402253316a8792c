//! Importing into a servers.toml that exists: the servers it lacks are appended below its
//! own text, which is kept byte for byte (comments, order, settings), so importing a second
//! client, or the same one again, is one more command instead of a second file.
//!
//! A server is already there when the file has one of the same name, or one that runs the
//! same `command` and `args`, or reaches the same `url`. A server whose name is taken by a
//! different one is added as `<name>-<client>`.

use anyhow::Context;

use super::Client;

/// What to append, and the notes that say what was not.
pub(in crate::cli) struct Merged {
    pub added: Vec<(String, toml::Table)>,
    pub notes: Vec<String>,
}

/// The servers of `imported` that `existing` (a servers.toml's text) does not have.
///
/// # Errors
/// `existing` is not valid TOML, or its `mcp_servers` is not a table.
pub(in crate::cli) fn merge(
    existing: &str,
    client: Client,
    imported: Vec<(String, toml::Table)>,
) -> anyhow::Result<Merged> {
    let doc: toml::Table = toml::from_str(existing).context(
        "the file to add the imported servers to is not valid TOML; fix it, pass --force to \
         replace it, or --write another path",
    )?;
    let mut have: Vec<(String, toml::Table)> = match doc.get("mcp_servers") {
        None => Vec::new(),
        Some(toml::Value::Table(servers)) => servers
            .iter()
            .map(|(name, server)| {
                let table = server.as_table().cloned().unwrap_or_default();
                (name.clone(), table)
            })
            .collect(),
        Some(_) => anyhow::bail!("`mcp_servers` in the file to add to is not a table"),
    };
    let mut merged = Merged {
        added: Vec::new(),
        notes: Vec::new(),
    };
    for (name, table) in imported {
        match place(&mut have, &name, table.clone(), client.name(), same_server) {
            Place::Present(other) => merged.notes.push(if other == name {
                format!("{name} is already in the file; kept as it is there")
            } else {
                format!("{name} is already in the file as {other} (same command or url); not added")
            }),
            Place::Added(ours) => {
                if ours != name {
                    merged.notes.push(format!(
                        "the file has another server named {name}; {}'s is added as {ours}",
                        client.label()
                    ));
                }
                merged.added.push((ours, table));
            }
        }
    }
    Ok(merged)
}

/// Where an imported server goes among those a file `have`s, by name and by what it is
/// (`T`: its table, or what identifies it): the same as a server already there, or added
/// under a free name. Shared by `import --write` and `adopt`, which compare servers in
/// their own terms (`same`) and word their own notes.
pub(in crate::cli) enum Place {
    /// The file already has it, under this name.
    Present(String),
    /// Added (and pushed to `have`) under this name: its own, or `<name>-<client>[-N]`
    /// when that is taken by a different server.
    Added(String),
}

/// Places `server`, named `name` in `client`, among `have` (see [`Place`]).
pub(in crate::cli) fn place<T>(
    have: &mut Vec<(String, T)>,
    name: &str,
    server: T,
    client: &str,
    same: impl Fn(&T, &T) -> bool,
) -> Place {
    if let Some((other, _)) = have.iter().find(|(_, t)| same(t, &server)) {
        return Place::Present(other.clone());
    }
    let taken = |candidate: &str| have.iter().any(|(n, _)| n == candidate);
    let mut ours = name.to_owned();
    if taken(&ours) {
        ours = format!("{name}-{client}");
        let mut n = 2;
        while taken(&ours) {
            ours = format!("{name}-{client}-{n}");
            n += 1;
        }
    }
    have.push((ours.clone(), server));
    Place::Added(ours)
}

/// `existing` with `added` after it, one blank line between.
pub(in crate::cli) fn append(existing: &str, added: &str) -> String {
    if added.is_empty() {
        return existing.to_owned();
    }
    let mut out = existing.trim_end_matches('\n').to_owned();
    if !out.is_empty() {
        out.push('\n');
    }
    out.push_str(added);
    out
}

/// The same server: the same `command` and `args`, or the same `url`.
fn same_server(a: &toml::Table, b: &toml::Table) -> bool {
    let get = |t: &toml::Table, k: &str| t.get(k).cloned();
    let empty = || Some(toml::Value::Array(Vec::new()));
    match (get(a, "command"), get(b, "command")) {
        (Some(x), Some(y)) => {
            x == y && get(a, "args").or_else(empty) == get(b, "args").or_else(empty)
        }
        _ => matches!((get(a, "url"), get(b, "url")), (Some(x), Some(y)) if x == y),
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    fn table(text: &str) -> toml::Table {
        toml::from_str(text).unwrap()
    }

    #[test]
    fn duplicates_by_name_command_or_url_are_left_out() {
        let existing = "# mine\n[settings]\nexposure = \"all\"\n\n[mcp_servers.time]\ncommand = \"uvx\"\nargs = [\"mcp-server-time\"]\n\n[mcp_servers.gh]\nurl = \"https://api.githubcopilot.com/mcp/\"\n";
        let imported = vec![
            (
                "clock".to_owned(),
                table("command = \"uvx\"\nargs = [\"mcp-server-time\"]"),
            ),
            (
                "github".to_owned(),
                table("url = \"https://api.githubcopilot.com/mcp/\""),
            ),
            (
                "time".to_owned(),
                table("command = \"npx\"\nargs = [\"time-mcp\"]"),
            ),
            ("memory".to_owned(), table("command = \"npx\"")),
        ];
        let merged = merge(existing, Client::Claude, imported).unwrap();
        let names: Vec<&str> = merged.added.iter().map(|(n, _)| n.as_str()).collect();
        assert_eq!(names, ["time-claude", "memory"]);
        let notes = merged.notes.join("\n");
        assert!(
            notes.contains("clock is already in the file as time"),
            "{notes}"
        );
        assert!(
            notes.contains("github is already in the file as gh"),
            "{notes}"
        );
        assert!(notes.contains("added as time-claude"), "{notes}");
        assert_eq!(append(existing, ""), existing);
        assert!(append(existing, "\n[mcp_servers.x]\n").starts_with(existing));
    }
}
