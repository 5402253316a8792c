//! The servers.toml `import` produces: rendered in the client's order with a header naming
//! where it came from, and written so a reader never sees half a file and secrets copied
//! from the client's file are never group- or world-readable.

use std::path::{Path, PathBuf};

use anyhow::Context;

use super::Client;
use crate::printable::one_line;

/// The text of `target` when it exists, to merge into; `None` when it does not. A file we
/// cannot read (or a directory) is an error before anything is imported.
pub(super) fn existing(target: &Path) -> anyhow::Result<Option<String>> {
    match std::fs::read_to_string(target) {
        Ok(text) => Ok(Some(text)),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(anyhow::anyhow!(
            "cannot read {} to add the imported servers to it: {e}; pass --force to replace \
             it, or --write another path",
            target.display()
        )),
    }
}

/// Writes the servers.toml as a new file, mode 0600 (env values and headers copied from the
/// client's file may be secrets), then renames it over `target`: a reader never sees half a
/// file, an existing file's looser mode is not kept, and a symlink at `target` is replaced,
/// never written through.
pub(super) fn write_file(target: &Path, text: &str) -> anyhow::Result<()> {
    use std::io::Write;
    let dir = match target.parent() {
        Some(dir) if !dir.as_os_str().is_empty() => dir,
        _ => Path::new("."),
    };
    let name = target
        .file_name()
        .with_context(|| format!("{} is not a file name", target.display()))?;
    let temp = dir.join(format!(
        ".{}.{}.tmp",
        name.to_string_lossy(),
        std::process::id()
    ));
    let cannot = |e: std::io::Error| anyhow::anyhow!("cannot write {}: {e}", target.display());
    let written = (|| {
        let mut options = std::fs::OpenOptions::new();
        options.write(true).create_new(true);
        crate::platform::private_file_options(&mut options);
        let mut file = options.open(&temp)?;
        file.write_all(text.as_bytes())?;
        file.sync_all()?;
        std::fs::rename(&temp, target)
    })();
    if written.is_err() {
        let _ = std::fs::remove_file(&temp);
    }
    written.map_err(cannot)
}

pub(super) fn list(paths: &[PathBuf], sep: &str) -> String {
    paths
        .iter()
        .map(|p| p.display().to_string())
        .collect::<Vec<_>>()
        .join(sep)
}

/// The servers.toml text: a header naming the sources, then one table per server with
/// inline values, in the client's order.
pub(super) fn render(
    client: Client,
    sources: &[PathBuf],
    servers: &[(String, toml::Table)],
) -> String {
    let mut out = format!(
        "# servers.toml imported by `mcp-defer import {}` from {}.\n\
         # Check it with `mcp-defer check --config <this file>`; settings and mcp-defer's own\n\
         # keys (description, prefix, always_load, search_hints) are in the README.\n",
        client.name(),
        one_line(&list(sources, " and "))
    );
    out.push_str(&tables(servers));
    out
}

/// The servers added to an existing file, under a comment naming where they came from.
pub(super) fn render_added(
    client: Client,
    sources: &[PathBuf],
    servers: &[(String, toml::Table)],
) -> String {
    if servers.is_empty() {
        return String::new();
    }
    format!(
        "\n# Added by `mcp-defer import {}` from {}.\n{}",
        client.name(),
        one_line(&list(sources, " and ")),
        tables(servers)
    )
}

/// One `[mcp_servers.<name>]` table per server, keys and values in TOML's own quoting.
fn tables(servers: &[(String, toml::Table)]) -> String {
    let mut out = String::new();
    for (name, table) in servers {
        out.push_str(&format!("\n[mcp_servers.{}]\n", key(name)));
        for (k, v) in table {
            out.push_str(&format!("{} = {v}\n", key(k)));
        }
    }
    out
}

/// A TOML key: bare when it can be, quoted otherwise.
pub(super) fn key(k: &str) -> String {
    let bare = !k.is_empty()
        && k.chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-');
    if bare {
        k.to_owned()
    } else {
        toml::Value::String(k.to_owned()).to_string()
    }
}
