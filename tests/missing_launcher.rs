//! A missing launcher (`npx`, `uvx`) is reported by name, with what to install.

use crate::support::{Dir, row, stdout};

#[test]
fn a_missing_launcher_names_what_to_install() {
    let dir = Dir::with_config(
        "[mcp_servers.time]\ncommand = \"uvx\"\nargs = [\"mcp-server-time@2026.10.19\"]\n\n\
         [mcp_servers.memory]\ncommand = \"npx\"\nargs = [\"-y\", \"@modelcontextprotocol/server-memory@2026.8.31\"]\n",
    );
    // An empty PATH: neither launcher exists, whatever this machine has installed.
    let empty = dir.file("empty-path");
    std::fs::create_dir(&empty).unwrap();
    let out = dir.run_with_env(&["check"], &[("PATH", &empty)]);
    let table = stdout(&out);
    assert_eq!(out.status.code(), Some(1), "{table}");
    assert_eq!(
        row(&table, "time")[4],
        "command not found: uvx (install uv, which brings uvx: https://docs.astral.sh/uv/ or `pip install uv`)",
        "{table}"
    );
    assert!(
        row(&table, "memory")[4].starts_with("command not found: npx (install Node.js"),
        "{table}"
    );
}
