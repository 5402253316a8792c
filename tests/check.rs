//! `mcp-defer check` against many fixture servers at once, and against the real peers.

use crate::support::{self, Dir, assert_contains_all, fixture, line_where, row, stderr, stdout};

#[test]
fn check_reports_every_server_with_its_cause() {
    let dir = Dir::new();
    let mut toml = String::new();
    toml += &fixture("ok", &["--stderr-chatter"], "required = true");
    toml += &fixture("slow", &["--slow-start-ms", "600"], "");
    toml += &fixture(
        "dies",
        &[
            "--fail-start",
            "fatal: GITHUB_TOKEN is not set",
            "--exit-code",
            "7",
        ],
        "",
    );
    toml += &fixture("junk", &["--garbage-stdout"], "");
    toml += &fixture(
        "paged",
        &["--page-size", "2"],
        "disabled_tools = [\"crash\"]",
    );
    toml += &fixture("only", &[], "enabled_tools = [\"echo\", \"add\"]");
    toml += &fixture("off", &[], "enabled = false");
    toml += "[mcp_servers.nope]\ncommand = \"mcp-defer-no-such-command\"\n";
    toml += &fixture(
        "hang",
        &["--slow-start-ms", "30000"],
        "startup_timeout_sec = 1",
    );
    dir.config(&toml);

    let started = std::time::Instant::now();
    let out = dir.run(&["check"]);
    let elapsed = started.elapsed();
    let table = stdout(&out);
    // Servers failed (dies, nope, hang): a setup that does not work exits 1.
    assert_eq!(out.status.code(), Some(1), "{table}\n{}", stderr(&out));
    assert!(
        stderr(&out).contains("servers not working: dies, nope, hang"),
        "{}",
        stderr(&out)
    );

    assert_eq!(row(&table, "ok")[..3], ["ok", "ready", "7"]);
    assert_eq!(row(&table, "slow")[..3], ["slow", "ready", "7"]);
    let slow_ms: u64 = row(&table, "slow")[3].parse().expect("ready time in ms");
    assert!(slow_ms >= 600, "slow start took {slow_ms} ms");
    assert_eq!(row(&table, "junk")[..3], ["junk", "ready", "7"]);
    // Paginated in pages of 2, every page followed, `crash` filtered out.
    assert_eq!(row(&table, "paged")[..3], ["paged", "ready", "6"]);
    assert_eq!(row(&table, "only")[..3], ["only", "ready", "2"]);
    assert_eq!(row(&table, "off")[..2], ["off", "disabled"]);

    let dies = row(&table, "dies");
    assert_eq!(dies[1], "failed");
    assert!(dies[4].contains("exited with code 7"), "{dies:?}");
    assert!(
        dies[4].contains("fatal: GITHUB_TOKEN is not set"),
        "{dies:?}"
    );

    let nope = row(&table, "nope");
    assert_eq!(nope[1], "failed");
    assert_eq!(nope[4], "command not found: mcp-defer-no-such-command");

    let hang = row(&table, "hang");
    assert_eq!(hang[1], "failed");
    assert!(hang[4].starts_with("timed out after 1 s"), "{hang:?}");

    // Started concurrently: the slowest (the 1 s timeout) bounds the run, not the sum.
    // Generous bound: this only has to rule out sequential starts (30+ s).
    assert!(elapsed.as_secs() < 15, "check took {elapsed:?}");
    // The children's stderr never reaches our stdout.
    assert!(!table.contains("fixture ok:"), "{table}");
}

#[test]
fn check_exits_1_when_a_required_server_fails() {
    let dir = Dir::new();
    let mut toml = fixture("fine", &[], "");
    toml += &fixture(
        "needed",
        &["--fail-start", "cannot open database"],
        "required = true",
    );
    dir.config(&toml);
    let out = dir.run(&["check"]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let table = stdout(&out);
    assert_eq!(row(&table, "fine")[1], "ready");
    assert!(row(&table, "needed")[4].contains("cannot open database"));
    assert!(stderr(&out).contains("required server failed: needed"));
}

/// Issue 20: any enabled server that fails makes `check` exit 1 (it exited 0 before, so a
/// broken first setup passed `check && ...`); a disabled one does not.
#[test]
fn check_exits_1_when_any_enabled_server_fails() {
    let dir = Dir::with_config("[mcp_servers.gone]\ncommand = \"mcp-defer-no-such-command\"\n");
    let out = dir.run(&["check"]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("server not working: gone"),
        "{}",
        stderr(&out)
    );
    dir.config("[mcp_servers.gone]\ncommand = \"mcp-defer-no-such-command\"\nenabled = false\n");
    let out = dir.run(&["check"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
}

#[test]
fn check_with_a_bad_config_exits_2_with_the_message() {
    let dir = Dir::with_config("[mcp_servers.x]\ncommand = \"a\"\nurl = \"http://b\"\n");
    let out = dir.run(&["check"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("servers.toml"), "{}", stderr(&out));
    assert!(stdout(&out).is_empty());
}

#[test]
fn check_reports_an_unreachable_http_server() {
    // A port nothing listens on: bind, read the port, close.
    let port = crate::support::free_port();
    let dir = Dir::with_config(&format!(
        "[mcp_servers.remote]\nurl = \"http://127.0.0.1:{port}/mcp\"\nstartup_timeout_sec = 5\n"
    ));
    let out = dir.run(&["check"]);
    let table = stdout(&out);
    let remote = row(&table, "remote");
    assert_eq!(remote[1], "failed", "{table}");
    assert!(
        remote[4].to_lowercase().contains("connection refused"),
        "cause should say the connection failed: {remote:?}"
    );
}

/// A server that logs over MCP (`notifications/message`, deprecated since 2026-07-28) has its
/// lines on our stderr, tagged with its name, and never on stdout.
#[test]
fn downstream_log_messages_reach_stderr_with_the_server_name() {
    let dir = Dir::with_config(&fixture(
        "chatty",
        &["--log-before-list", "cache warmed: 12 entries"],
        "",
    ));
    let out = dir.run(&["check"]);
    let (table, log) = (stdout(&out), stderr(&out));
    assert_eq!(out.status.code(), Some(0), "{table}\n{log}");
    let line = line_where(&log, |l| l.contains("cache warmed: 12 entries"));
    assert_contains_all(line, &["WARN", "server=chatty"]);
    assert_contains_all(line, &["logger=\"fixture\""]);
    assert!(!table.contains("cache warmed"), "{table}");
}

#[test]
fn check_aggregates_the_real_npm_and_pypi_servers() {
    let Some(peers) = support::peers() else {
        return;
    };
    let dir = Dir::new();
    let mut toml = format!(
        "[mcp_servers.everything]\ncommand = {}\nargs = [\"stdio\"]\nstartup_timeout_sec = 30\n",
        support::toml_str(&peers.everything.to_string_lossy())
    );
    toml += &format!(
        "[mcp_servers.time]\ncommand = {}\nargs = [\"--local-timezone\", \"UTC\"]\nstartup_timeout_sec = 30\n",
        support::toml_str(&peers.time.to_string_lossy())
    );
    toml += &fixture("fixture", &[], "");
    dir.config(&toml);
    let out = dir.run(&["check"]);
    let table = stdout(&out);
    assert_eq!(out.status.code(), Some(0), "{table}\n{}", stderr(&out));
    let everything = row(&table, "everything");
    assert_eq!(everything[1], "ready", "{table}");
    let count: usize = everything[2].parse().expect("tool count");
    assert!(
        count >= 5,
        "server-everything lists many tools: {everything:?}"
    );
    let time = row(&table, "time");
    assert_eq!(time[1], "ready", "{table}");
    assert_eq!(
        time[2], "2",
        "mcp-server-time has get_current_time and convert_time"
    );
}

#[test]
fn check_warns_about_an_always_load_name_the_server_does_not_list() {
    let dir = Dir::with_config(&fixture(
        "fx",
        &[],
        "always_load = [\"nosuchtool\", \"echo\"]",
    ));
    let out = dir.run(&["check"]);
    let log = stderr(&out);
    assert_eq!(out.status.code(), Some(0), "{log}");
    assert!(
        log.contains("warning") && log.contains("`nosuchtool`") && !log.contains("`echo`, which"),
        "{log}"
    );
}
