//! Config errors a user meets: each names the cause, where it is (file, line, table, key)
//! and the fix, before anything starts.

use crate::support::{Dir, assert_contains_all, fixture, stderr};

#[test]
fn an_empty_servers_toml_is_named_with_the_fix() {
    let dir = Dir::with_config("");
    let out = dir.run(&["check"]);
    let err = stderr(&out);
    assert_contains_all(&err, &["has no servers", "mcp-defer adopt"]);
}

#[test]
fn a_huge_timeout_is_refused_with_key_table_line_and_range() {
    let dir = Dir::with_config(&fixture("fx", &[], "startup_timeout_sec = 1.7e19"));
    let out = dir.run(&["check"]);
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert_contains_all(
        &err,
        &[
            "servers.toml:4:",
            "[mcp_servers.fx]",
            "`startup_timeout_sec`",
            "at most 3600",
        ],
    );
}

#[test]
fn a_missing_config_names_the_os_error_once() {
    let dir = Dir::new();
    let out = dir.run(&["check"]);
    let err = stderr(&out);
    assert_eq!(err.matches("No such file or directory").count(), 1, "{err}");
}
