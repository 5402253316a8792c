//! mcp-defer never runs under itself (issue 35, item 1): a servers.toml whose entry starts
//! mcp-defer again (the binary, or through a launcher that `import` cannot see through)
//! would start the same servers again, itself among them, with no end. The child `serve`
//! finds the marker its parent set and refuses, naming the entry.

use std::process::Command;

use crate::support::{BIN, Dir, assert_contains_all, row, stderr, stdout, toml_list, toml_str};

#[test]
fn a_server_entry_that_starts_mcp_defer_is_refused_by_name() {
    let dir = Dir::new();
    let config = dir.file("servers.toml");
    let config_arg = config.to_string_lossy().into_owned();
    // The binary itself, and a launcher (`sh -c`) standing for `npx -y mcp-defer`, each
    // reading the very same servers.toml (one at a time: before the guard, each level
    // started the next until the startup timeout).
    for (name, command, args) in [
        (
            "again",
            BIN.to_owned(),
            vec![
                "serve".to_owned(),
                "--config".to_owned(),
                config_arg.clone(),
            ],
        ),
        (
            "launched",
            "sh".to_owned(),
            vec![
                "-c".to_owned(),
                format!("MCP_DEFER_CONFIG='{config_arg}' exec '{BIN}'"),
            ],
        ),
    ] {
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        dir.config(&format!(
            "[mcp_servers.{name}]\ncommand = {}\nargs = {}\nstartup_timeout_sec = 5\n",
            toml_str(&command),
            toml_list(&args),
        ));
        let out = dir.run(&["check"]);
        let table = stdout(&out);
        let row = row(&table, name);
        assert_eq!(row[1], "failed", "{table}\n{}", stderr(&out));
        let cause = row.last().unwrap();
        assert!(
            cause.contains("refusing to serve") && cause.contains(&format!("`{name}`")),
            "{name}: {cause}\n{table}"
        );
    }
}

#[test]
fn serve_refuses_when_started_by_mcp_defer() {
    let dir = Dir::with_config("");
    let out = Command::new(BIN)
        .args(["serve", "--config"])
        .arg(dir.file("servers.toml"))
        .env("MCP_DEFER_STARTED_AS", "defer")
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    let err = stderr(&out);
    assert_contains_all(&err, &["refusing to serve", "`defer`"]);
}
