//! Small defects a new user met on the way in (issue 20, item 7): each pinned by a test that
//! failed before its fix.

use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};

use crate::support::{BIN, Dir, listening, stderr, stdout};

#[test]
fn an_empty_servers_toml_is_named_with_the_fix() {
    let dir = Dir::new();
    dir.config("");
    let out = dir.run(&["check"]);
    let err = stderr(&out);
    assert!(
        err.contains("has no servers") && err.contains("mcp-defer adopt"),
        "{err}"
    );
}

#[test]
fn serve_http_takes_a_host_name() {
    let dir = Dir::new();
    dir.config("");
    let mut child = Command::new(BIN)
        .args(["serve", "--http", "localhost:0", "--config"])
        .arg(dir.file("servers.toml"))
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let lines = BufReader::new(child.stderr.take().unwrap()).lines();
    let mut seen = Vec::new();
    for line in lines {
        let line = line.unwrap();
        let serving = line.contains("serving MCP over Streamable HTTP");
        seen.push(line);
        if serving {
            break;
        }
    }
    let _ = child.kill();
    let _ = child.wait();
    let last = seen.last().cloned().unwrap_or_default();
    assert!(
        last.contains("url=http://127.0.0.1:"),
        "localhost resolves to the IPv4 loopback:\n{}",
        seen.join("\n")
    );
}

#[test]
fn login_and_logout_help_describe_every_option() {
    for command in ["login", "logout"] {
        let out = Command::new(BIN)
            .args([command, "--help"])
            .output()
            .unwrap();
        let help = stdout(&out);
        let config = help
            .lines()
            .find(|l| l.contains("--config <PATH>"))
            .unwrap_or_else(|| panic!("{help}"));
        assert!(
            config.trim_end().len() > "  -c, --config <PATH>".len(),
            "`{command} --help` explains --config:\n{help}"
        );
    }
}

#[test]
fn login_to_a_server_without_oauth_names_the_cause_once_without_its_html() {
    let dir = Dir::new();
    let port = crate::support::free_port();
    // A plain web server: every request gets an HTML error page, as many non-OAuth
    // servers answer.
    let _web = crate::support::Killed(
        Command::new("python3")
            .args([
                "-m",
                "http.server",
                &port.to_string(),
                "--bind",
                "127.0.0.1",
            ])
            .current_dir(dir.path())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("python3 -m http.server"),
    );
    listening(port, "python3 -m http.server");
    dir.config(&format!(
        "[mcp_servers.web]\nurl = \"http://127.0.0.1:{port}/mcp\"\n"
    ));
    let out = Command::new(BIN)
        .args(["login", "web", "--no-browser", "--timeout", "5", "--config"])
        .arg(dir.file("servers.toml"))
        .env("HOME", dir.path())
        .env("XDG_DATA_HOME", dir.file("data"))
        .output()
        .unwrap();
    let err = stderr(&out);
    assert!(!out.status.success());
    assert!(!err.to_ascii_lowercase().contains("<html"), "{err}");
    assert_eq!(err.matches("HTTP 501").count(), 1, "{err}");
    assert!(err.contains("may need no login"), "{err}");
}

// Issue 35, item 12: the way in, as a new user met it.

#[test]
fn adopt_of_a_client_it_cannot_edit_points_to_import() {
    let out = Command::new(BIN)
        .args(["adopt", "cursor"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = stderr(&out);
    assert!(
        err.contains("mcp-defer import cursor") && err.contains("Cursor"),
        "{err}"
    );
    // An unknown name keeps clap's own list of what adopt takes.
    let out = Command::new(BIN).args(["adopt", "emacs"]).output().unwrap();
    assert!(stderr(&out).contains("copilot"), "{}", stderr(&out));
}

#[test]
fn help_says_where_to_start_with_examples() {
    let out = Command::new(BIN).arg("--help").output().unwrap();
    let help = stdout(&out);
    assert!(
        help.contains("Start here:") && help.contains("mcp-defer adopt claude"),
        "{help}"
    );
    assert!(
        help.contains("Examples:") && help.contains("mcp-defer check"),
        "{help}"
    );
}

#[test]
fn stats_shows_a_failed_server_as_failed() {
    let dir = Dir::new();
    dir.config(&format!(
        "{}\n[mcp_servers.broken]\ncommand = \"mcp-server-that-does-not-exist\"\n",
        crate::support::fixture("fx", &[], "")
    ));
    let out = dir.run(&["stats"]);
    let table = stdout(&out);
    let broken = table
        .lines()
        .find(|l| l.starts_with("broken "))
        .unwrap_or_else(|| panic!("{table}"));
    assert!(broken.contains("failed"), "{table}");
    assert!(!broken.contains(" 0 "), "{table}");
}

#[test]
fn the_npm_package_carries_every_file_it_lists() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("npm/mcp-defer");
    let package: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("package.json")).unwrap()).unwrap();
    for file in package["files"].as_array().unwrap() {
        let file = file.as_str().unwrap();
        assert!(
            dir.join(file).is_file(),
            "npm/mcp-defer lists {file}, which it lacks"
        );
    }
}

/// `mcp-defer` typed in a terminal: stdin is a TTY (a pseudo-terminal from Python's `pty`),
/// and a line on stderr says what is going on instead of a silent wait.
#[cfg(unix)]
#[test]
fn a_bare_mcp_defer_in_a_terminal_says_it_waits_for_a_client() {
    let dir = Dir::new();
    let config = dir.config(&crate::support::fixture("fx", &[], ""));
    let script = r#"
import os, pty, signal, subprocess, sys
signal.alarm(120)
master, slave = pty.openpty()
child = subprocess.Popen([sys.argv[1]], stdin=slave, stdout=subprocess.DEVNULL,
                         stderr=subprocess.PIPE, env=dict(os.environ, MCP_DEFER_CONFIG=sys.argv[2]))
for line in child.stderr:
    line = line.decode(errors="replace")
    sys.stdout.write(line)
    if "mcp-defer --help" in line or "ready" in line:
        break
child.terminate()
child.wait()
"#;
    let out = Command::new("python3")
        .args(["-c", script, BIN])
        .arg(&config)
        .output()
        .unwrap();
    let seen = stdout(&out);
    assert!(
        seen.contains("serving MCP over stdin/stdout") && seen.contains("mcp-defer --help"),
        "{seen}\n{}",
        stderr(&out)
    );
}
