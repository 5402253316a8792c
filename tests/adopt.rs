//! `mcp-defer adopt <client>` and `--undo`: on a temporary HOME holding client files shaped
//! as the real CLIs write them (Claude Code 2.1.332's `~/.claude.json`, Codex 0.171.0's
//! `config.toml`), the servers move into servers.toml, mcp-defer is registered, the
//! originals are off, and undo puts every file back. When the real `claude` / `codex` CLIs
//! are installed (../shared/clients/setup-clients.sh, or `MCP_DEFER_CLAUDE` /
//! `MCP_DEFER_CODEX`), their own `mcp list` must show the same; otherwise that part is
//! skipped with a notice (they are not part of .ci/install-peers).

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_json::{Value as Json, json};

use crate::support::{self, BIN, Dir, assert_contains_all, stderr, stdout};

/// `mcp-defer adopt <args>` run in `cwd` with every per-user location inside `dir`.
fn adopt(dir: &Dir, cwd: &Path, args: &[&str]) -> Output {
    Command::new(BIN)
        .arg("adopt")
        .args(args)
        .current_dir(cwd)
        .env("HOME", dir.path())
        .env("XDG_CONFIG_HOME", dir.file(".config"))
        .env("XDG_DATA_HOME", dir.file(".local/share"))
        .env("CODEX_HOME", dir.file(".codex"))
        .env_remove("MCP_DEFER_CONFIG")
        .output()
        .expect("run mcp-defer adopt")
}

fn ok(out: &Output) {
    assert!(
        out.status.success(),
        "exit {:?}\nstdout:\n{}\nstderr:\n{}",
        out.status,
        stdout(out),
        stderr(out)
    );
}

#[cfg(unix)]
fn mode(path: &Path) -> u32 {
    crate::support::os::mode(path)
}

fn read_json(path: &Path) -> Json {
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

/// A real client CLI: `$<var>`, else the shared client kit's install, else `None` with a
/// notice (they are not among the peers CI installs).
fn real_cli(var: &str, name: &str) -> Option<PathBuf> {
    if let Some(path) = std::env::var_os(var) {
        return Some(PathBuf::from(path));
    }
    let home = std::env::var_os("HOME")?;
    let kit = Path::new(&home)
        .join(".cache/mcp-defer-peers/clients/node_modules/.bin")
        .join(name);
    if kit.exists() {
        return Some(kit);
    }
    eprintln!(
        "skipping the `{name} mcp list` part: {name} is not installed (run \
         ../shared/clients/setup-clients.sh or set {var})"
    );
    None
}

/// `<cli> mcp list` on the test's HOME, offline.
fn mcp_list(cli: &Path, dir: &Dir, cwd: &Path, extra: &[&str]) -> String {
    let out = Command::new(cli)
        .args(["mcp", "list"])
        .args(extra)
        .current_dir(cwd)
        .env("HOME", dir.path())
        .env("CODEX_HOME", dir.file(".codex"))
        .env("XDG_CONFIG_HOME", dir.file(".config"))
        .env("XDG_DATA_HOME", dir.file(".local/share"))
        // No network: the health checks are local, nothing else may leave.
        .env("HTTPS_PROXY", "http://127.0.0.1:9")
        .env("HTTP_PROXY", "http://127.0.0.1:9")
        .env("DISABLE_AUTOUPDATER", "1")
        .env("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1")
        .output()
        .expect("run the client's mcp list");
    format!("{}{}", stdout(&out), stderr(&out))
}

/// The `name: ...` lines of `claude mcp list`.
fn claude_names(list: &str) -> Vec<String> {
    list.lines()
        .filter(|l| l.contains(" - "))
        .filter_map(|l| l.split_once(':').map(|(n, _)| n.to_owned()))
        .collect()
}

#[test]
fn claude_servers_move_behind_mcp_defer_and_undo_puts_them_back() {
    let dir = Dir::new();
    let project = dir.file("proj");
    std::fs::create_dir_all(&project).unwrap();
    let time = support::peers().map_or_else(
        || "uvx".to_owned(),
        |p| p.time.to_string_lossy().into_owned(),
    );
    let elsewhere = dir.file("elsewhere").to_string_lossy().into_owned();
    // As Claude Code 2.1.332 writes it after `claude mcp add --scope user time -- ...`,
    // `claude mcp add --scope user --transport http gh ... -H ...` and a local-scope add.
    let before = json!({
        "firstStartTime": "2026-12-01T15:54:18.956Z",
        "numStartups": 3,
        "mcpServers": {
            "time": {"type": "stdio", "command": time, "args": ["--local-timezone", "UTC"], "env": {}},
            "gh": {"type": "http", "url": "http://127.0.0.1:9/mcp",
                   "headers": {"Authorization": "Bearer secret-123"}}
        },
        "projects": {
            project.to_string_lossy(): {
                "allowedTools": [],
                "mcpServers": {"loc": {"type": "stdio", "command": "node", "args": ["missing.js"],
                                       "env": {"FOO": "bar"}}},
                "hasTrustDialogAccepted": false
            },
            elsewhere.clone(): {"mcpServers": {"other": {"type": "stdio", "command": "x"}}}
        }
    });
    let claude_json = dir.file(".claude.json");
    std::fs::write(&claude_json, serde_json::to_string_pretty(&before).unwrap()).unwrap();
    let claude = real_cli("MCP_DEFER_CLAUDE", "claude");
    let listed_before = claude
        .as_ref()
        .map(|cli| claude_names(&mcp_list(cli, &dir, &project, &[])));

    // `claude mcp list` rewrites the file (machineID, migrations): what adopt starts from is
    // the file as it is now.
    let before_text = std::fs::read_to_string(&claude_json).unwrap();
    let before: Json = serde_json::from_str(&before_text).unwrap();
    let out = adopt(&dir, &project, &["claude"]);
    ok(&out);
    let text = stdout(&out);
    assert_contains_all(&text, &["Added 3 servers of Claude Code", "time, gh, loc"]);
    assert!(!format!("{text}{}", stderr(&out)).contains("secret-123"));

    // Claude's file: mcp-defer at user scope with alwaysLoad, the three servers gone, the
    // rest untouched.
    let after = read_json(&claude_json);
    let config = dir.file(".config/mcp-defer/servers.toml");
    let bin = std::fs::canonicalize(BIN).unwrap();
    assert_eq!(
        after["mcpServers"],
        json!({"mcp-defer": {"type": "stdio", "command": bin.to_string_lossy(),
            "args": ["serve", "--config", config.to_string_lossy()], "env": {},
            "alwaysLoad": true}})
    );
    assert_eq!(
        after["projects"][project.to_string_lossy().as_ref()]["mcpServers"],
        json!({})
    );
    assert_eq!(
        after["projects"][elsewhere.as_str()],
        before["projects"][elsewhere.as_str()]
    );
    assert_eq!(after["numStartups"], 3);

    // servers.toml: the three servers, private (it holds the copied header).
    let servers: toml::Table = toml::from_str(&std::fs::read_to_string(&config).unwrap()).unwrap();
    let names: Vec<&String> = servers["mcp_servers"].as_table().unwrap().keys().collect();
    assert_eq!(names, ["time", "gh", "loc"]);
    #[cfg(unix)]
    assert_eq!(mode(&config), 0o600);
    // The backup is the file as it was, private.
    let state = dir.file(".local/share/mcp-defer/adopt/claude");
    assert_eq!(
        std::fs::read_to_string(state.join("client.bak")).unwrap(),
        before_text
    );
    #[cfg(unix)]
    {
        assert_eq!(mode(&state), 0o700);
        assert_eq!(mode(&state.join("client.bak")), 0o600);
    }
    if let Some(cli) = &claude {
        let list = mcp_list(cli, &dir, &project, &[]);
        assert_eq!(claude_names(&list), ["mcp-defer"], "{list}");
        assert!(list.contains("Connected"), "mcp-defer must answer:\n{list}");
    }

    // A second adopt is refused until undone.
    let again = adopt(&dir, &project, &["claude"]);
    assert!(!again.status.success());
    assert!(
        stderr(&again).contains("adopt --undo claude"),
        "{}",
        stderr(&again)
    );

    // Claude Code keeps rewriting its file; that survives the undo.
    let mut later = read_json(&claude_json);
    later["numStartups"] = 4.into();
    std::fs::write(&claude_json, serde_json::to_string_pretty(&later).unwrap()).unwrap();
    let out = adopt(&dir, &project, &["--undo", "claude"]);
    ok(&out);
    let local = project.to_string_lossy().into_owned();
    let mut expect = later.clone();
    expect["mcpServers"] = before["mcpServers"].clone();
    expect["projects"][local.as_str()]["mcpServers"] =
        before["projects"][local.as_str()]["mcpServers"].clone();
    let undone = read_json(&claude_json);
    assert_eq!(undone, expect);
    let names: Vec<&String> = undone["mcpServers"].as_object().unwrap().keys().collect();
    assert_eq!(names, ["time", "gh"]);
    assert_eq!(undone["numStartups"], 4);
    assert!(
        !config.exists(),
        "adopt created servers.toml; undo removes it"
    );
    assert!(!state.exists(), "the backups move aside after undo");
    if let (Some(cli), Some(listed_before)) = (&claude, listed_before) {
        let list = mcp_list(cli, &dir, &project, &[]);
        assert_eq!(claude_names(&list), listed_before, "{list}");
    }
    // Nothing left to undo.
    let out = adopt(&dir, &project, &["--undo", "claude"]);
    assert!(stderr(&out).contains("nothing to undo"), "{}", stderr(&out));
}

#[test]
fn codex_servers_merge_into_servers_toml_are_turned_off_and_come_back() {
    let dir = Dir::new();
    let codex_dir = dir.file(".codex");
    std::fs::create_dir_all(&codex_dir).unwrap();
    // As Codex 0.171.0 writes it after `codex mcp add`, plus a user's comment.
    let before = "model = \"gpt-5\"\n\n# my servers\n[mcp_servers.time]\ncommand = \"uvx\"\n\
                  args = [\"mcp-server-time\"]\n\n[mcp_servers.remote]\n\
                  url = \"https://example.com/mcp\"\n\n[mcp_servers.off]\ncommand = \"y\"\n\
                  enabled = false\n";
    let codex_toml = codex_dir.join("config.toml");
    std::fs::write(&codex_toml, before).unwrap();
    // An existing servers.toml that already runs `time` under another name.
    let config = dir.file(".config/mcp-defer/servers.toml");
    std::fs::create_dir_all(config.parent().unwrap()).unwrap();
    let mine = "# my own\n[settings]\nsearch_limit = 5\n\n[mcp_servers.clock]\ncommand = \"uvx\"\n\
                args = [\"mcp-server-time\"]\n";
    std::fs::write(&config, mine).unwrap();
    let codex = real_cli("MCP_DEFER_CODEX", "codex");
    let listed_before = codex
        .as_ref()
        .map(|cli| mcp_list(cli, &dir, dir.path(), &["--json"]));

    let out = adopt(&dir, dir.path(), &["codex"]);
    ok(&out);
    let text = stdout(&out);
    assert_contains_all(&text, &["Already there: time (as clock)"]);
    assert!(
        stderr(&out).contains("servers.toml already runs it as `clock`"),
        "{}",
        stderr(&out)
    );

    let merged = std::fs::read_to_string(&config).unwrap();
    assert!(merged.starts_with(mine), "{merged}");
    let servers: toml::Table = toml::from_str(&merged).unwrap();
    let names: Vec<&String> = servers["mcp_servers"].as_table().unwrap().keys().collect();
    assert_eq!(names, ["clock", "remote", "off"]);
    assert_eq!(
        servers["mcp_servers"]["off"]["enabled"].as_bool(),
        Some(false)
    );

    let after: toml::Table =
        toml::from_str(&std::fs::read_to_string(&codex_toml).unwrap()).unwrap();
    for name in ["time", "remote", "off"] {
        assert_eq!(
            after["mcp_servers"][name]["enabled"].as_bool(),
            Some(false),
            "{name}"
        );
    }
    assert_eq!(
        after["mcp_servers"]["mcp-defer"]["args"],
        toml::Value::Array(vec![
            "serve".into(),
            "--config".into(),
            config.to_string_lossy().into_owned().into()
        ])
    );
    if let Some(cli) = &codex {
        let list: Json =
            serde_json::from_str(&json_part(&mcp_list(cli, &dir, dir.path(), &["--json"])))
                .unwrap();
        let enabled: Vec<(String, bool)> = list
            .as_array()
            .unwrap()
            .iter()
            .map(|s| {
                (
                    s["name"].as_str().unwrap().to_owned(),
                    s["enabled"].as_bool().unwrap(),
                )
            })
            .collect();
        let on: Vec<&str> = enabled
            .iter()
            .filter(|(_, e)| *e)
            .map(|(n, _)| n.as_str())
            .collect();
        assert_eq!(on, ["mcp-defer"], "{list}");
    }

    let out = adopt(&dir, dir.path(), &["--undo", "codex"]);
    ok(&out);
    assert_eq!(std::fs::read_to_string(&codex_toml).unwrap(), before);
    assert_eq!(std::fs::read_to_string(&config).unwrap(), mine);
    if let (Some(cli), Some(listed_before)) = (&codex, listed_before) {
        assert_eq!(mcp_list(cli, &dir, dir.path(), &["--json"]), listed_before);
    }
}

/// Codex prints a warning line before its JSON on a temporary HOME.
fn json_part(text: &str) -> String {
    let start = text.find('[').unwrap_or(0);
    let end = text.rfind(']').map_or(text.len(), |e| e + 1);
    text[start..end].to_owned()
}

#[test]
fn undo_leaves_a_servers_toml_edited_since_adopt() {
    let dir = Dir::new();
    let gemini = dir.file(".gemini/settings.json");
    std::fs::create_dir_all(gemini.parent().unwrap()).unwrap();
    let before = json!({"theme": "x", "mcpServers": {"time": {"command": "uvx", "args": ["mcp-server-time"]}}});
    std::fs::write(&gemini, before.to_string()).unwrap();
    let out = adopt(&dir, dir.path(), &["gemini"]);
    ok(&out);
    let after = read_json(&gemini);
    let servers = after["mcpServers"].as_object().unwrap();
    assert_eq!(servers.keys().collect::<Vec<_>>(), ["mcp-defer"]);
    assert!(servers["mcp-defer"].get("alwaysLoad").is_none());
    let config = dir.file(".config/mcp-defer/servers.toml");
    let edited = format!(
        "{}\n[settings]\nsearch_limit = 3\n",
        std::fs::read_to_string(&config).unwrap()
    );
    std::fs::write(&config, &edited).unwrap();

    let out = adopt(&dir, dir.path(), &["--undo", "gemini"]);
    ok(&out);
    assert_eq!(read_json(&gemini), before);
    assert_eq!(std::fs::read_to_string(&config).unwrap(), edited);
    assert!(stdout(&out).contains("left as it is"), "{}", stdout(&out));
}

/// `adopt` run through `exe` (a copy of the binary at a runner's cache path) with `env`.
fn adopt_as(exe: &Path, dir: &Dir, env: &[(&str, &str)], args: &[&str]) -> Output {
    let mut command = Command::new(exe);
    command
        .arg("adopt")
        .args(args)
        .current_dir(dir.path())
        .env("HOME", dir.path())
        .env("XDG_CONFIG_HOME", dir.file(".config"))
        .env("XDG_DATA_HOME", dir.file(".local/share"))
        .env("CODEX_HOME", dir.file(".codex"))
        .env_remove("MCP_DEFER_CONFIG")
        .env_remove("npm_config_user_agent");
    for (name, value) in env {
        command.env(name, value);
    }
    command.output().expect("run mcp-defer adopt")
}

/// The binary placed at `relative` inside `dir`, as a package runner's cache holds it (a
/// hard link: the running binary sees that path as its own).
fn in_cache(dir: &Dir, relative: &str) -> PathBuf {
    let exe = dir.file(relative);
    std::fs::create_dir_all(exe.parent().unwrap()).unwrap();
    std::fs::hard_link(BIN, &exe)
        .or_else(|_| std::fs::copy(BIN, &exe).map(|_| ()))
        .unwrap();
    exe
}

#[test]
fn adopt_run_through_npx_or_uvx_registers_the_runner_not_its_cache() {
    for (relative, agent, runner, shown) in [
        (
            ".npm/_npx/4b4c857f6efdfb61/node_modules/@mcp-defer/linux-x64/bin/mcp-defer",
            "npm/10.9.2 node/v22.12.0 linux x64 workspaces/false",
            ("npx", vec!["-y", "mcp-defer"]),
            "npx -y mcp-defer",
        ),
        (
            ".cache/uv/archive-v0/ZbvI3VZ6lNCoGm5fsP1yT/bin/mcp-defer",
            "",
            ("uvx", vec!["mcp-defer"]),
            "uvx mcp-defer",
        ),
    ] {
        let dir = Dir::new();
        let exe = in_cache(&dir, relative);
        let claude_json = dir.file(".claude.json");
        let before = json!({"mcpServers": {"time": {"type": "stdio", "command": "uvx",
            "args": ["mcp-server-time"], "env": {}}}});
        std::fs::write(&claude_json, before.to_string()).unwrap();
        let env: Vec<(&str, &str)> = if agent.is_empty() {
            Vec::new()
        } else {
            vec![("npm_config_user_agent", agent)]
        };
        let out = adopt_as(&exe, &dir, &env, &["claude"]);
        ok(&out);
        let config = dir.file(".config/mcp-defer/servers.toml");
        let config = config.to_string_lossy();
        let mut args: Vec<&str> = runner.1.clone();
        args.extend(["serve", "--config", &config]);
        let entry = &read_json(&claude_json)["mcpServers"]["mcp-defer"];
        assert_eq!(entry["command"], runner.0, "{entry}");
        assert_eq!(entry["args"], json!(args), "{entry}");
        let text = stdout(&out);
        assert_contains_all(
            &text,
            &[
                &format!("Undo: `{shown} adopt --undo claude`"),
                &format!("Next: `{shown} check --config"),
            ],
        );
        assert!(!text.contains(relative), "{text}");

        // That entry is mcp-defer itself: importing Claude Code's servers now leaves it out.
        let out = Command::new(BIN)
            .args(["import", "claude"])
            .current_dir(dir.path())
            .env("HOME", dir.path())
            .output()
            .unwrap();
        assert!(
            stderr(&out).contains("skipped mcp-defer") && stderr(&out).contains("itself"),
            "{}",
            stderr(&out)
        );
        assert!(
            !stdout(&out).contains("mcp_servers.mcp-defer"),
            "{}",
            stdout(&out)
        );
    }
}

#[test]
fn renamed_servers_are_turned_off_in_the_client_under_their_own_names() {
    let dir = Dir::new();
    let gemini = dir.file(".gemini/settings.json");
    std::fs::create_dir_all(gemini.parent().unwrap()).unwrap();
    // Gemini CLI reads comments in its settings file; undo keeps them.
    let before = "{\n  // my theme\n  \"theme\": \"x\",\n  \"mcpServers\": {\n    \
                  \"docs.site\": {\"command\": \"uvx\", \"args\": [\"docs-server\"]},\n    \
                  \"my server\": {\"command\": \"uvx\", \"args\": [\"mine\"]}, // mine\n    \
                  \"time\": {\"command\": \"uvx\", \"args\": [\"mcp-server-time\"]},\n  },\n}\n";
    std::fs::write(&gemini, before).unwrap();
    let out = adopt(&dir, dir.path(), &["gemini"]);
    ok(&out);
    let after = read_json(&gemini);
    let names: Vec<&String> = after["mcpServers"].as_object().unwrap().keys().collect();
    assert_eq!(names, ["mcp-defer"], "{after}");
    assert!(
        stdout(&out).contains("removed there: docs.site, my server, time"),
        "{}",
        stdout(&out)
    );
    let config = dir.file(".config/mcp-defer/servers.toml");
    let servers: toml::Table = toml::from_str(&std::fs::read_to_string(&config).unwrap()).unwrap();
    let names: Vec<&String> = servers["mcp_servers"].as_table().unwrap().keys().collect();
    assert_eq!(names, ["docs_site", "my_server", "time"]);
    #[cfg(unix)]
    assert_eq!(
        mode(config.parent().unwrap()),
        0o700,
        "adopt creates the config folder private, as docs/install.md says"
    );

    let out = adopt(&dir, dir.path(), &["--undo", "gemini"]);
    ok(&out);
    assert_eq!(std::fs::read_to_string(&gemini).unwrap(), before);

    // Codex: the same server is turned off under its quoted name.
    let codex = dir.file(".codex/config.toml");
    std::fs::create_dir_all(codex.parent().unwrap()).unwrap();
    std::fs::write(
        &codex,
        "[mcp_servers.\"docs.site\"]\ncommand = \"uvx\"\nargs = [\"docs-server\"]\n",
    )
    .unwrap();
    let out = adopt(&dir, dir.path(), &["codex"]);
    ok(&out);
    let after: toml::Table = toml::from_str(&std::fs::read_to_string(&codex).unwrap()).unwrap();
    assert_eq!(
        after["mcp_servers"]["docs.site"]["enabled"].as_bool(),
        Some(false),
        "{after}"
    );
}

/// GitHub Copilot CLI from the shared client kit (`$MCP_DEFER_COPILOT`, else
/// `clients3/node_modules/@github/copilot-linux-x64/copilot`), with its package cache.
fn copilot_cli() -> Option<(PathBuf, PathBuf)> {
    let home = PathBuf::from(std::env::var_os("HOME")?);
    let peers = home.join(".cache/mcp-defer-peers");
    let cli = std::env::var_os("MCP_DEFER_COPILOT").map_or_else(
        || peers.join("clients3/node_modules/@github/copilot-linux-x64/copilot"),
        PathBuf::from,
    );
    if !cli.exists() {
        eprintln!("skipping the `copilot mcp list` part: set MCP_DEFER_COPILOT");
        return None;
    }
    Some((cli, peers.join("copilot-cache")))
}

/// The server lines of `copilot mcp list` on the test's HOME, offline.
fn copilot_list(dir: &Dir) -> Option<String> {
    let (cli, cache) = copilot_cli()?;
    let out = Command::new(cli)
        .args(["mcp", "list"])
        .current_dir(dir.path())
        .env("HOME", dir.path())
        .env_remove("COPILOT_HOME")
        // Each fresh HOME would unpack ~235 MB of Copilot's package: the kit's one cache.
        .env("XDG_CACHE_HOME", cache)
        .env("COPILOT_OFFLINE", "true")
        .env("COPILOT_AUTO_UPDATE", "false")
        .output()
        .expect("run copilot mcp list");
    Some(stdout(&out))
}

#[test]
fn copilot_servers_move_behind_mcp_defer_and_come_back() {
    let dir = Dir::new();
    let file = dir.file(".copilot/mcp-config.json");
    std::fs::create_dir_all(file.parent().unwrap()).unwrap();
    // As Copilot CLI 1.0.102 writes it after `copilot mcp add time --env TZ=UTC -- uvx
    // mcp-server-time` and `copilot mcp add --transport http gh URL`.
    let before = "{\n  \"mcpServers\": {\n    \"time\": {\n      \"tools\": [\n        \"*\"\n      ],\n      \
                  \"type\": \"local\",\n      \"command\": \"uvx\",\n      \"args\": [\n        \
                  \"mcp-server-time\"\n      ],\n      \"env\": {\n        \"TZ\": \"UTC\"\n      }\n    },\n    \
                  \"gh\": {\n      \"tools\": [\n        \"*\"\n      ],\n      \"type\": \"http\",\n      \
                  \"url\": \"http://127.0.0.1:9/mcp\"\n    }\n  }\n}";
    std::fs::write(&file, before).unwrap();
    let out = adopt(&dir, dir.path(), &["copilot"]);
    ok(&out);
    assert!(
        stdout(&out).contains("Added 2 servers of GitHub Copilot CLI")
            && stdout(&out).contains("removed there: time, gh")
            && stdout(&out).contains("`copilot mcp list` shows `mcp-defer`"),
        "{}",
        stdout(&out)
    );
    let after = read_json(&file);
    let config = dir.file(".config/mcp-defer/servers.toml");
    let bin = std::fs::canonicalize(BIN).unwrap();
    assert_eq!(
        after["mcpServers"],
        json!({"mcp-defer": {"type": "local", "command": bin.to_string_lossy(),
            "args": ["serve", "--config", config.to_string_lossy()], "env": {},
            "tools": ["*"]}})
    );
    let servers: toml::Table = toml::from_str(&std::fs::read_to_string(&config).unwrap()).unwrap();
    let names: Vec<&String> = servers["mcp_servers"].as_table().unwrap().keys().collect();
    assert_eq!(names, ["time", "gh"]);
    assert_eq!(
        servers["mcp_servers"]["time"]["env"]["TZ"].as_str(),
        Some("UTC")
    );
    if let Some(list) = copilot_list(&dir) {
        assert!(
            list.contains("mcp-defer (local)") && !list.contains("time (local)"),
            "{list}"
        );
    }

    let out = adopt(&dir, dir.path(), &["--undo", "copilot"]);
    ok(&out);
    let undone = std::fs::read_to_string(&file).unwrap();
    assert_eq!(
        serde_json::from_str::<Json>(&undone).unwrap(),
        serde_json::from_str::<Json>(before).unwrap()
    );
    if let Some(list) = copilot_list(&dir) {
        assert!(
            list.contains("time (local)") && !list.contains("mcp-defer"),
            "{list}"
        );
    }
}

/// The way in as a new user met it (issue 35, item 12).
#[test]
fn adopt_of_a_client_it_cannot_edit_points_to_import() {
    let out = Command::new(BIN)
        .args(["adopt", "cursor"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = stderr(&out);
    assert_contains_all(&err, &["mcp-defer import cursor", "Cursor"]);
    // An unknown name keeps clap's own list of what adopt takes.
    let out = Command::new(BIN).args(["adopt", "emacs"]).output().unwrap();
    assert!(stderr(&out).contains("copilot"), "{}", stderr(&out));
}
