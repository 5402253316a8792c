//! `mcp-defer import`: a client's own MCP config in, a servers.toml out that `check` runs
//! against the real peers.

use std::process::Command;

use crate::support::{self, BIN, Dir, assert_contains_all, row, stderr, stdout};

/// Runs `mcp-defer import <client>` in `dir` with `HOME` (and `CODEX_HOME`) inside it, so the
/// default paths are the test's files, and writes its output as the dir's servers.toml.
fn import(dir: &Dir, client: &str) -> std::process::Output {
    let out = import_command(dir, &[client])
        .output()
        .expect("run mcp-defer import");
    dir.config(&stdout(&out));
    out
}

/// `mcp-defer import <args>` in `dir`, with `HOME`, `XDG_CONFIG_HOME` and `CODEX_HOME` inside
/// it, so every client's default paths are the test's files.
fn import_command(dir: &Dir, args: &[&str]) -> Command {
    let mut cmd = Command::new(BIN);
    cmd.arg("import")
        .args(args)
        .current_dir(dir.path())
        .env("HOME", dir.path())
        .env("XDG_CONFIG_HOME", dir.file(".config"))
        .env("CODEX_HOME", dir.file("codex"));
    cmd
}

/// Writes `text` at `rel` inside `dir`, creating its directories.
fn put(dir: &Dir, rel: &str, text: &str) {
    let path = dir.file(rel);
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

#[test]
fn claude_project_and_user_servers_import_and_run() {
    let Some(peers) = support::peers() else {
        return;
    };
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
    assert_contains_all(&text, &["\"Europe/Paris\""]);
    assert!(
        !text.contains("legacy") && !text.contains("[mcp_servers.defer]"),
        "{text}"
    );
    let notes = stderr(&out);
    assert_contains_all(&notes, &["skipped legacy", "SSE"]);
    assert_contains_all(&notes, &["skipped defer", "itself"]);

    let check = dir.run(&["check"]);
    let table = stdout(&check);
    assert_eq!(check.status.code(), Some(0), "{table}\n{}", stderr(&check));
    assert_eq!(row(&table, "time")[..3], ["time", "ready", "2"]);
    assert_eq!(row(&table, "everything")[1], "ready", "{table}");
}

#[test]
fn codex_servers_import_and_run() {
    let Some(peers) = support::peers() else {
        return;
    };
    let dir = Dir::new();
    std::fs::create_dir(dir.file("codex")).unwrap();
    let codex = format!(
        "model = \"o3\"\n\n[mcp_servers.time]\ncommand = {}\nargs = [\"--local-timezone\", \"UTC\"]\n\
         startup_timeout_sec = 20\n\n[mcp_servers.time.tools.get_current_time]\napproval = \"never\"\n",
        support::toml_str(&peers.time.to_string_lossy())
    );
    std::fs::write(dir.file("codex/config.toml"), codex).unwrap();

    let out = import(&dir, "codex");
    let text = stdout(&out);
    assert_eq!(out.status.code(), Some(0), "{text}\n{}", stderr(&out));
    assert_contains_all(&text, &["startup_timeout_sec = 20\n"]);
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
    assert_contains_all(&err, &[".claude.json", ".mcp.json"]);
    assert_contains_all(&err, &["give the file to import as PATH"]);

    std::fs::create_dir(dir.file("codex")).unwrap();
    std::fs::write(dir.file("codex/config.toml"), "[mcp_servers\n").unwrap();
    let out = import(&dir, "codex");
    assert_eq!(out.status.code(), Some(2));
    let err = stderr(&out);
    assert_contains_all(&err, &["codex/config.toml is not valid TOML"]);
}

/// A server whose name our config rejects gets one it accepts (issue 20: names went into
/// the output as they were), and stderr says so.
#[test]
fn an_import_renames_a_name_our_config_rejects() {
    let dir = Dir::new();
    let json = serde_json::json!({"mcpServers": {"my server.v2": {"command": "npx"}}});
    std::fs::write(dir.file(".mcp.json"), json.to_string()).unwrap();
    let out = import(&dir, "claude");
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(stdout(&out).contains("[mcp_servers.my_server_v2]"));
    let err = stderr(&out);
    assert_contains_all(&err, &["my server.v2 is named my_server_v2 here"]);
}

/// Each client's own file, written as its documentation shows it (the server swapped for
/// the real time server), imported from its default path and run.
#[test]
fn every_client_format_imports_and_runs() {
    let Some(peers) = support::peers() else {
        return;
    };
    let time = support::toml_str(&peers.time.to_string_lossy());
    let stdio = format!(r#""command": {time}, "args": ["--local-timezone", "UTC"]"#);
    let cases: Vec<(&str, &str, String)> = vec![
        (
            "claude-desktop",
            ".config/Claude/claude_desktop_config.json",
            format!(r#"{{"mcpServers": {{"time": {{{stdio}, "env": {{"TZ": "UTC"}}}}}}}}"#),
        ),
        (
            "cursor",
            ".cursor/mcp.json",
            format!(
                r#"{{"mcpServers": {{"time": {{{stdio}, "env": {{"HOME_DIR": "${{userHome}}", "TOKEN": "${{env:HOME}}"}}}}}}}}"#
            ),
        ),
        (
            "vscode",
            ".vscode/mcp.json",
            format!(
                r#"{{
  // VS Code's file is JSON with comments.
  "inputs": [{{"type": "promptString", "id": "api-key", "description": "Time API key", "password": true}}],
  "servers": {{
    "time": {{"type": "stdio", {stdio}, "env": {{"API_KEY": "${{input:api-key}}"}}}},
  }},
}}"#
            ),
        ),
        (
            "gemini",
            ".gemini/settings.json",
            format!(
                r#"{{"theme": "Default", "mcpServers": {{"time": {{{stdio}, "env": {{"HOME_COPY": "$HOME"}}, "timeout": 15000, "trust": true, "includeTools": ["get_current_time", "convert_time"]}}}}}}"#
            ),
        ),
        (
            "qwen",
            ".qwen/settings.json",
            format!(r#"{{"mcpServers": {{"time": {{{stdio}, "timeout": 30000}}}}}}"#),
        ),
        (
            "opencode",
            "opencode.json",
            format!(
                r#"{{"$schema": "https://opencode.ai/config.json", "mcp": {{"time": {{"type": "local", "command": [{time}, "--local-timezone", "UTC"], "enabled": true, "environment": {{"HOME_COPY": "{{env:HOME}}"}}}}}}}}"#
            ),
        ),
    ];
    for (client, rel, text) in cases {
        let dir = Dir::new();
        put(&dir, rel, &text);
        let out = import_command(&dir, &[client])
            .env("API_KEY", "set-by-the-user")
            .output()
            .unwrap();
        let toml = stdout(&out);
        let notes = stderr(&out);
        assert_eq!(out.status.code(), Some(0), "{client}: {toml}\n{notes}");
        assert!(toml.contains("[mcp_servers.time]"), "{client}: {toml}");
        assert!(
            toml.contains(&format!("import {client}`")),
            "{client}: {toml}"
        );
        if client == "vscode" {
            assert_contains_all(&toml, &["API_KEY = \"${API_KEY}\""]);
            assert_contains_all(
                &notes,
                &["set the environment variable API_KEY before starting mcp-defer"],
            );
        }
        dir.config(&toml);
        let check = dir.run_with_env(&["check"], &[("API_KEY", "x")]);
        let table = stdout(&check);
        assert_eq!(
            check.status.code(),
            Some(0),
            "{client}: {table}\n{}",
            stderr(&check)
        );
        assert_eq!(row(&table, "time")[..3], ["time", "ready", "2"], "{client}");
    }
}

/// `--write` creates the file (mode 0600), adds to it when it exists, and replaces it with
/// `--force`; an OAuth server is carried over with a note (here on a closed local port, so
/// the test stays offline).
#[test]
fn write_adds_to_an_existing_file_and_force_replaces_it() {
    let Some(peers) = support::peers() else {
        return;
    };
    let dir = Dir::new();
    let json = serde_json::json!({"mcpServers": {
        "time": {"command": peers.time, "args": ["--local-timezone", "UTC"]},
        "linear": {"type": "http", "url": "http://127.0.0.1:9/mcp",
                   "oauth": {"clientId": "client-id-value"}}
    }});
    put(&dir, ".mcp.json", &json.to_string());
    let target = dir.file("out.toml");
    let target_arg = target.to_str().unwrap();

    let first = import_command(&dir, &["claude", "--write", target_arg])
        .output()
        .unwrap();
    assert_eq!(first.status.code(), Some(0), "{}", stderr(&first));
    assert!(stdout(&first).is_empty(), "written, not printed");
    let notes = stderr(&first);
    assert_contains_all(&notes, &["wrote 2 servers to"]);
    assert_contains_all(
        &notes,
        &["linear: carried over, but Claude Code signs in to it with OAuth"],
    );
    assert!(!notes.contains("client-id-value"), "{notes}");
    #[cfg(unix)]
    assert_eq!(crate::support::os::mode(&target), 0o600);
    let written = std::fs::read_to_string(&target).unwrap();
    assert!(written.contains("[mcp_servers.linear]\nurl = \"http://127.0.0.1:9/mcp\"\n"));

    // An existing file gets the servers added below its own text (issue 20: it was
    // refused, so importing a second client meant a second file).
    std::fs::write(&target, "# mine\n").unwrap();
    let again = import_command(&dir, &["claude", ".mcp.json", "--write", target_arg])
        .output()
        .unwrap();
    assert_eq!(again.status.code(), Some(0), "{}", stderr(&again));
    let merged = std::fs::read_to_string(&target).unwrap();
    assert!(merged.starts_with("# mine\n"), "{merged}");
    assert_contains_all(&merged, &["[mcp_servers.time]", "[mcp_servers.linear]"]);
    assert!(
        stderr(&again).contains("added 2 servers"),
        "{}",
        stderr(&again)
    );

    let forced = import_command(&dir, &["claude", "--write", target_arg, "--force"])
        .output()
        .unwrap();
    assert_eq!(forced.status.code(), Some(0), "{}", stderr(&forced));
    assert_eq!(std::fs::read_to_string(&target).unwrap(), written);

    // The OAuth server cannot connect yet; the time server runs.
    let check = Command::new(BIN)
        .args(["check", "--config", target_arg])
        .output()
        .unwrap();
    let table = stdout(&check);
    assert_eq!(row(&table, "time")[..3], ["time", "ready", "2"], "{table}");
    assert_eq!(row(&table, "linear")[1], "failed", "{table}");
}
