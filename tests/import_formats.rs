//! Issue 20, items 3 and 4 of `mcp-defer import`: the formats of Windsurf, Cline, Roo Code,
//! Zed, Continue and Goose as each writes its file (with `"disabled": true` kept), the
//! pre-registered OAuth clients of Claude Code, Codex, Cursor and Gemini CLI carried over,
//! importing into an existing file (merged, de-duplicated), `--force` writing a new 0600
//! file and never through a symlink, and names and paths that cannot break the output.

use std::path::Path;
use std::process::Command;

use crate::support::{BIN, Dir, FIXTURE, assert_contains_all, row, stderr, stdout};

/// `mcp-defer import <args>` run in `cwd`, with HOME, XDG_CONFIG_HOME and CODEX_HOME in
/// `home`, so every default path is the test's.
fn import(home: &Path, cwd: &Path, args: &[&str]) -> std::process::Output {
    Command::new(BIN)
        .arg("import")
        .args(args)
        .current_dir(cwd)
        .env("HOME", home)
        .env("XDG_CONFIG_HOME", home.join(".config"))
        .env("CODEX_HOME", home.join("codex"))
        .env_remove("XDG_DATA_HOME")
        .output()
        .unwrap()
}

fn put(root: &Path, rel: &str, text: &str) {
    let path = root.join(rel);
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

/// One client's case: its name, its file's place under HOME (or the project), the file's
/// text, the servers that must be ready and those that must stay disabled.
type Case = (
    &'static str,
    &'static str,
    String,
    &'static [&'static str],
    &'static [&'static str],
);

/// The fixture's path as a JSON (and YAML) string.
fn fx() -> String {
    serde_json::to_string(FIXTURE).unwrap()
}

/// Each client's file at its default place, as its documentation shows it, with the
/// fixture as the server. The imported servers.toml must run: the enabled fixture servers
/// ready, the disabled ones disabled.
#[test]
fn new_client_formats_import_and_run() {
    let fx = fx();
    let cases: Vec<Case> = vec![
        (
            "windsurf",
            ".codeium/windsurf/mcp_config.json",
            format!(
                r#"{{"mcpServers": {{
                    "fx": {{"command": {fx}, "args": ["--name", "fx"], "env": {{"API_KEY": "${{env:API_KEY}}"}}, "disabledTools": ["crash"]}},
                    "remote": {{"serverUrl": "http://127.0.0.1:9/mcp", "headers": {{"X-Api-Key": "${{env:API_KEY}}"}}, "disabled": true}}
                }}}}"#
            ),
            &["fx"],
            &["remote"],
        ),
        (
            "cline",
            ".config/Code/User/globalStorage/saoudrizwan.claude-dev/settings/cline_mcp_settings.json",
            format!(
                r#"{{"mcpServers": {{
                    "fx": {{"type": "stdio", "command": {fx}, "args": [], "env": {{}}, "alwaysAllow": ["echo"], "autoApprove": [], "disabled": false, "timeout": 30}},
                    "off": {{"command": {fx}, "args": [], "disabled": true}}
                }}}}"#
            ),
            &["fx"],
            &["off"],
        ),
        (
            "roo",
            ".roo/mcp.json",
            format!(
                r#"{{"mcpServers": {{
                    "fx": {{"command": {fx}, "args": ["--name", "roo"], "cwd": "${{workspaceFolder}}", "alwaysAllow": [], "disabled": false, "watchPaths": ["dist/index.js"], "disabledTools": ["crash"]}},
                    "web": {{"type": "streamable-http", "url": "http://127.0.0.1:9/mcp", "headers": {{"Authorization": "Bearer ${{env:TOKEN}}"}}, "disabled": true}}
                }}}}"#
            ),
            &["fx"],
            &["web"],
        ),
        (
            "zed",
            ".config/zed/settings.json",
            format!(
                r#"{{
  // Zed's settings are JSON with comments.
  "theme": "One Dark",
  "context_servers": {{
    "fx": {{"source": "custom", "command": {fx}, "args": ["--name", "zed"], "env": {{}}}},
    "legacy": {{"command": {{"path": {fx}, "args": [], "env": null}}, "settings": {{}}}},
    "postgres": {{"source": "extension", "settings": {{"database_url": "postgres://x"}}}},
  }},
}}"#
            ),
            &["fx", "legacy"],
            &[],
        ),
        (
            "continue",
            ".continue/config.yaml",
            format!(
                "name: My Config\nversion: 0.0.1\nschema: v1\nmodels: []\nmcpServers:\n  - name: fx\n    command: {fx}\n    args:\n      - \"--name\"\n      - continue\n    env:\n      API_KEY: ${{{{ secrets.API_KEY }}}}\n"
            ),
            &["fx"],
            &[],
        ),
        (
            "goose",
            ".config/goose/config.yaml",
            format!(
                "GOOSE_PROVIDER: openai\nextensions:\n  developer:\n    bundled: true\n    enabled: true\n    name: developer\n    timeout: 300\n    type: builtin\n  fx:\n    args: []\n    cmd: {fx}\n    enabled: true\n    envs: {{}}\n    env_keys:\n      - API_KEY\n    name: fx\n    timeout: 300\n    type: stdio\n  off:\n    cmd: {fx}\n    args: []\n    enabled: false\n    type: stdio\n"
            ),
            &["fx"],
            &["off"],
        ),
    ];
    for (client, rel, text, ready, disabled) in cases {
        let dir = Dir::new();
        put(dir.path(), rel, &text);
        let out = import(dir.path(), dir.path(), &[client]);
        let (toml, notes) = (stdout(&out), stderr(&out));
        assert_eq!(out.status.code(), Some(0), "{client}: {toml}\n{notes}");
        for name in disabled {
            let table = format!("[mcp_servers.{name}]");
            let at = toml
                .find(&table)
                .unwrap_or_else(|| panic!("{client}: no {name}:\n{toml}"));
            assert!(
                toml[at..].contains("enabled = false"),
                "{client}: {name} must stay disabled:\n{toml}"
            );
        }
        dir.config(&toml);
        let check = dir.run_with_env(&["check"], &[("API_KEY", "k"), ("TOKEN", "t")]);
        let table = stdout(&check);
        assert_eq!(
            check.status.code(),
            Some(0),
            "{client}:\n{toml}\n{table}\n{}",
            stderr(&check)
        );
        for name in ready {
            assert_eq!(row(&table, name)[1], "ready", "{client}: {table}");
        }
        for name in disabled {
            assert_eq!(row(&table, name)[1], "disabled", "{client}: {table}");
        }
        match client {
            "zed" => assert!(
                notes.contains("skipped postgres") && notes.contains("Zed extension"),
                "{notes}"
            ),
            "goose" => {
                assert_contains_all(&notes, &["skipped developer"]);
                assert_contains_all(&toml, &["env_vars = [\"API_KEY\"]"]);
            }
            "continue" => {
                assert_contains_all(&toml, &["API_KEY = \"${API_KEY}\""]);
                assert_contains_all(&notes, &["set the environment variable API_KEY"]);
            }
            "windsurf" | "roo" => assert!(toml.contains("disabled_tools = [\"crash\"]"), "{toml}"),
            _ => {}
        }
        assert!(!notes.contains("alwaysAllow"), "{client}: {notes}");
    }
}

/// A registered OAuth client is carried into the keys `mcp-defer login` reads; a secret is
/// never copied, a `${VAR}` naming it becomes `oauth_client_secret_env_var`.
#[test]
fn registered_oauth_clients_are_carried() {
    let dir = Dir::new();
    put(
        dir.path(),
        ".mcp.json",
        r#"{"mcpServers": {"slack": {"type": "http", "url": "https://mcp.slack.com/mcp",
            "oauth": {"clientId": "1601185624273.8899143856786", "callbackPort": 3118, "scopes": "channels:read chat:write"}}}}"#,
    );
    let out = import(dir.path(), dir.path(), &["claude", ".mcp.json"]);
    let toml = stdout(&out);
    assert_eq!(out.status.code(), Some(0), "{toml}\n{}", stderr(&out));
    assert_contains_all(
        &toml,
        &[
            "scopes = [\"channels:read\", \"chat:write\"]\noauth_client_id = \"1601185624273.8899143856786\"\noauth_callback_port = 3118\n",
        ],
    );

    put(
        dir.path(),
        "codex/config.toml",
        "[mcp_servers.linear]\nurl = \"https://mcp.linear.app/mcp\"\nscopes = [\"read\"]\n\n[mcp_servers.linear.oauth]\nclient_id = \"lin-client-1\"\n",
    );
    let out = import(dir.path(), dir.path(), &["codex"]);
    let toml = stdout(&out);
    assert_eq!(out.status.code(), Some(0), "{toml}\n{}", stderr(&out));
    assert_contains_all(&toml, &["oauth_client_id = \"lin-client-1\""]);
    assert!(
        !stderr(&out).contains("left out `oauth`"),
        "{}",
        stderr(&out)
    );

    put(
        dir.path(),
        "gemini.json",
        r#"{"mcpServers": {"corp": {"httpUrl": "https://mcp.corp.example/mcp",
            "oauth": {"enabled": true, "clientId": "corp-id", "clientSecret": "$CORP_SECRET",
                      "scopes": ["mcp"], "redirectUri": "http://localhost:7777/callback"}}}}"#,
    );
    let out = import(dir.path(), dir.path(), &["gemini", "gemini.json"]);
    let toml = stdout(&out);
    assert_eq!(out.status.code(), Some(0), "{toml}\n{}", stderr(&out));
    assert_contains_all(
        &toml,
        &[
            "oauth_client_id = \"corp-id\"\noauth_client_secret_env_var = \"CORP_SECRET\"\noauth_callback_port = 7777\n",
        ],
    );

    put(
        dir.path(),
        "cursor.json",
        r#"{"mcpServers": {"api": {"url": "https://api.example.com/mcp",
            "auth": {"CLIENT_ID": "cur-id", "CLIENT_SECRET": "literal-secret-991", "scopes": ["read"]}}}}"#,
    );
    let out = import(dir.path(), dir.path(), &["cursor", "cursor.json"]);
    let (toml, notes) = (stdout(&out), stderr(&out));
    assert_eq!(out.status.code(), Some(0), "{toml}\n{notes}");
    assert_contains_all(&toml, &["oauth_client_id = \"cur-id\""]);
    for text in [&toml, &notes] {
        assert!(
            !text.contains("literal-secret-991"),
            "secret copied:\n{text}"
        );
    }
    assert_contains_all(&notes, &["oauth_client_secret_env_var"]);
}

/// A project directory whose name holds newlines and a table, and a server name that
/// tries the same: the output stays one header comment and the real tables.
#[test]
fn paths_and_names_cannot_inject_tables() {
    let dir = Dir::new();
    let evil = dir.file("proj\n[mcp_servers.pwned]\ncommand = \"/bin/sh\"\n#");
    std::fs::create_dir_all(&evil).unwrap();
    let fx = fx();
    put(
        &evil,
        ".mcp.json",
        &format!(
            r#"{{"mcpServers": {{"ok": {{"command": {fx}}},
                "x\n[mcp_servers.pwned2]\ncommand = \"/bin/sh\"": {{"command": {fx}}}}}}}"#
        ),
    );
    let out = import(dir.path(), &evil, &["claude"]);
    let (toml, notes) = (stdout(&out), stderr(&out));
    assert_eq!(out.status.code(), Some(0), "{toml}\n{notes}");
    let doc: toml::Table = toml::from_str(&toml).unwrap();
    let servers: Vec<&String> = doc["mcp_servers"].as_table().unwrap().keys().collect();
    assert_eq!(
        servers,
        ["ok", "x_mcp_servers_pwned2_command_bin_sh"],
        "{toml}"
    );
    assert_eq!(doc.len(), 1, "{toml}");
    // The header names the path with its newlines escaped, on comment lines only.
    assert_contains_all(&toml, &["proj\\n[mcp_servers.pwned]"]);
    assert!(
        toml.lines()
            .take_while(|l| !l.is_empty())
            .all(|l| l.starts_with('#')),
        "{toml}"
    );
    assert!(
        !notes.lines().any(|l| l.starts_with("[mcp_servers")),
        "{notes}"
    );
}

/// `--write` into an existing file adds what it lacks (by name, command or url) below its
/// own text; a second client's servers go into the same file. `--force` replaces the file
/// with a new 0600 one, and a symlink there is replaced, not written through.
#[test]
fn write_merges_and_force_never_writes_through_a_symlink() {
    let dir = Dir::new();
    let fx = fx();
    let target = dir.file("servers.toml");
    let mine = format!(
        "# my own servers\n[settings]\nexposure = \"all\"\n\n[mcp_servers.time]\ncommand = {fx}\nargs = [\"--name\", \"time\"]\n"
    );
    std::fs::write(&target, &mine).unwrap();
    put(
        dir.path(),
        ".mcp.json",
        &format!(
            r#"{{"mcpServers": {{
                "clock": {{"command": {fx}, "args": ["--name", "time"]}},
                "time": {{"command": {fx}, "args": ["--name", "other"]}},
                "memory": {{"command": {fx}, "args": ["--name", "memory"]}}}}}}"#
        ),
    );
    let target_arg = target.to_str().unwrap();
    let out = import(
        dir.path(),
        dir.path(),
        &["claude", ".mcp.json", "--write", target_arg],
    );
    let notes = stderr(&out);
    assert_eq!(out.status.code(), Some(0), "{notes}");
    let merged = std::fs::read_to_string(&target).unwrap();
    assert!(merged.starts_with(&mine), "{merged}");
    assert_contains_all(&merged, &["[mcp_servers.time-claude]"]);
    assert_contains_all(&merged, &["[mcp_servers.memory]"]);
    assert!(!merged.contains("[mcp_servers.clock]"), "{merged}");
    assert_contains_all(&notes, &["clock is already in the file as time"]);
    assert_contains_all(&notes, &["added 2 servers"]);

    // A second client into the same file; what is there already is not added again.
    put(
        dir.path(),
        "codex/config.toml",
        &format!(
            "[mcp_servers.mem]\ncommand = {fx}\nargs = [\"--name\", \"memory\"]\n\n[mcp_servers.extra]\ncommand = {fx}\n"
        ),
    );
    let out = import(dir.path(), dir.path(), &["codex", "--write", target_arg]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let twice = std::fs::read_to_string(&target).unwrap();
    assert!(twice.starts_with(&merged), "{twice}");
    assert_contains_all(&twice, &["[mcp_servers.extra]"]);
    assert!(!twice.contains("[mcp_servers.mem]"), "{twice}");
    let check = Command::new(BIN)
        .args(["check", "--config", target_arg])
        .output()
        .unwrap();
    assert_eq!(check.status.code(), Some(0), "{}", stderr(&check));

    // --force over a symlink to a 0644 file: the link is replaced by a new 0600 file.
    let elsewhere = dir.file("elsewhere.toml");
    std::fs::write(&elsewhere, "# not to be touched\n").unwrap();
    crate::support::os::set_mode(&elsewhere, 0o644);
    let link = dir.file("linked.toml");
    crate::support::os::symlink(&elsewhere, &link);
    let out = import(
        dir.path(),
        dir.path(),
        &[
            "claude",
            ".mcp.json",
            "--write",
            link.to_str().unwrap(),
            "--force",
        ],
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(
        std::fs::read_to_string(&elsewhere).unwrap(),
        "# not to be touched\n"
    );
    let meta = std::fs::symlink_metadata(&link).unwrap();
    assert!(meta.file_type().is_file(), "still a symlink");
    assert_eq!(crate::support::os::mode(&link), 0o600);
    assert!(
        std::fs::read_to_string(&link)
            .unwrap()
            .contains("[mcp_servers.memory]")
    );
}
