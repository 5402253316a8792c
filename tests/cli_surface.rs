//! What a user meets at the command line: the help texts, a bare `mcp-defer` typed in a
//! terminal, and the npm package it is installed from. Small defects a new user met on the
//! way in (issue 20, item 7; issue 35, item 12), each pinned by a test that failed before its
//! fix; the others of that list went to the modules of what they check (config_errors,
//! http_serve, oauth, adopt, stats).

use std::process::Command;

use crate::support::{BIN, assert_contains_all, line_where, stdout};
#[cfg(unix)]
use crate::support::{Dir, stderr};

#[test]
fn login_and_logout_help_describe_every_option() {
    for command in ["login", "logout"] {
        let out = Command::new(BIN)
            .args([command, "--help"])
            .output()
            .unwrap();
        let help = stdout(&out);
        let config = line_where(&help, |l| l.contains("--config <PATH>"));
        assert!(
            config.trim_end().len() > "  -c, --config <PATH>".len(),
            "`{command} --help` explains --config:\n{help}"
        );
    }
}

#[test]
fn help_says_where_to_start_with_examples() {
    let out = Command::new(BIN).arg("--help").output().unwrap();
    let help = stdout(&out);
    assert_contains_all(&help, &["Start here:", "mcp-defer adopt claude"]);
    assert_contains_all(&help, &["Examples:", "mcp-defer check"]);
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
