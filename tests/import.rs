//! `mcp-defer import`: a client's own MCP config in, a servers.toml out that `check` runs
//! against the real peers.

use std::process::Command;

use crate::util::{self, BIN, Dir, row, stderr, stdout};

/// Runs `mcp-defer import <client>` in `dir` with `HOME` (and `CODEX_HOME`) inside it, so the
/// default paths are the test's files, and writes its output as the dir's servers.toml.
fn import(dir: &Dir, client: &str) -> std::process::Output {
    let out = Command::new(BIN)
        .args(["import", client])
        .current_dir(dir.path())
        .env("HOME", dir.path())
        .env("CODEX_HOME", dir.file("codex"))
        .output()
        .expect("run mcp-defer import");
    dir.config(&stdout(&out));
    out
}

#[test]
fn claude_project_and_user_servers_import_and_run() {
    let Some(peers) = util::peers() else { return };
    let dir = Dir::new();
    // Project scope: the real time server. User scope: the real everything server, a legacy
    // SSE server (left out) and mcp-defer itself (left out). Local scope (this directory's
    // entry in ~/.claude.json): the time server again, with other args, which wins.
    let project = serde_json::json!({"mcpServers": {
        "time": {"command": peers.time, "args": ["--local-timezone", "UTC"]}
    }});
    let user = serde_json::json!({"mcpServers": {
        "everything": {"type": "stdio", "command": peers.everything, "args": ["stdio"],
                       "env": {"NODE_NO_WARNINGS": "1"}},
        "legacy": {"type": "sse", "url": "http://127.0.0.1:9/sse"},
        "defer": {"command": "mcp-defer", "args": ["serve"]}
    }, "projects": {dir.path().to_string_lossy(): {"mcpServers": {
        "time": {"command": peers.time, "args": ["--local-timezone", "Europe/Paris"]}
    }}}});
    std::fs::write(dir.file(".mcp.json"), project.to_string()).unwrap();
    std::fs::write(dir.file(".claude.json"), user.to_string()).unwrap();

    let out = import(&dir, "claude");
    let text = stdout(&out);
    assert_eq!(out.status.code(), Some(0), "{text}\n{}", stderr(&out));
    // User scope first, then project, as Claude Code lists them.
    let everything = text.find("[mcp_servers.everything]").expect(&text);
    let time = text.find("[mcp_servers.time]").expect(&text);
    assert!(everything < time, "{text}");
    assert_eq!(text.matches("[mcp_servers.time]").count(), 1, "{text}");
    assert!(text.contains("\"Europe/Paris\""), "{text}");
    assert!(
        !text.contains("legacy") && !text.contains("[mcp_servers.defer]"),
        "{text}"
    );
    let notes = stderr(&out);
    assert!(
        notes.contains("skipped legacy") && notes.contains("SSE"),
        "{notes}"
    );
    assert!(
        notes.contains("skipped defer") && notes.contains("itself"),
        "{notes}"
    );

    let check = dir.run(&["check"]);
    let table = stdout(&check);
    assert_eq!(check.status.code(), Some(0), "{table}\n{}", stderr(&check));
    assert_eq!(row(&table, "time")[..3], ["time", "ready", "2"]);
    assert_eq!(row(&table, "everything")[1], "ready", "{table}");
}

#[test]
fn codex_servers_import_and_run() {
    let Some(peers) = util::peers() else { return };
    let dir = Dir::new();
    std::fs::create_dir(dir.file("codex")).unwrap();
    let codex = format!(
        "model = \"o3\"\n\n[mcp_servers.time]\ncommand = {}\nargs = [\"--local-timezone\", \"UTC\"]\n\
         startup_timeout_sec = 20\n\n[mcp_servers.time.tools.get_current_time]\napproval = \"never\"\n",
        util::toml_str(&peers.time.to_string_lossy())
    );
    std::fs::write(dir.file("codex/config.toml"), codex).unwrap();

    let out = import(&dir, "codex");
    let text = stdout(&out);
    assert_eq!(out.status.code(), Some(0), "{text}\n{}", stderr(&out));
    assert!(text.contains("startup_timeout_sec = 20\n"), "{text}");
    assert!(
        stderr(&out).contains("left out `tools` of time"),
        "{}",
        stderr(&out)
    );

    let check = dir.run(&["check"]);
    let table = stdout(&check);
    assert_eq!(check.status.code(), Some(0), "{table}\n{}", stderr(&check));
    assert_eq!(row(&table, "time")[..3], ["time", "ready", "2"]);
}

#[test]
fn a_missing_or_broken_source_is_named() {
    let dir = Dir::new();
    let out = import(&dir, "claude");
    assert_eq!(out.status.code(), Some(2));
    let err = stderr(&out);
    assert!(
        err.contains(".claude.json") && err.contains(".mcp.json"),
        "{err}"
    );
    assert!(err.contains("give the file to import as PATH"), "{err}");

    std::fs::create_dir(dir.file("codex")).unwrap();
    std::fs::write(dir.file("codex/config.toml"), "[mcp_servers\n").unwrap();
    let out = import(&dir, "codex");
    assert_eq!(out.status.code(), Some(2));
    let err = stderr(&out);
    assert!(err.contains("codex/config.toml is not valid TOML"), "{err}");
}

/// A server whose name our config rejects is still printed, and the exit status and stderr
/// say what to fix.
#[test]
fn an_import_that_needs_a_fix_says_which() {
    let dir = Dir::new();
    let json = serde_json::json!({"mcpServers": {"my server.v2": {"command": "npx"}}});
    std::fs::write(dir.file(".mcp.json"), json.to_string()).unwrap();
    let out = import(&dir, "claude");
    assert_eq!(out.status.code(), Some(1));
    assert!(stdout(&out).contains("[mcp_servers.\"my server.v2\"]"));
    let err = stderr(&out);
    assert!(err.contains("needs a fix before use"), "{err}");
    assert!(err.contains("rename the table"), "{err}");
}
