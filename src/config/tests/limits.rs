//! A server's timeouts, output budget, `start` and `idle_stop_sec`.

use super::*;

#[test]
fn timeouts_must_be_positive_and_finite() {
    for (value, shown) in [("-1", "-1"), ("nan", "NaN"), ("inf", "inf"), ("0", "0")] {
        fails(
            &lines(&[
                "[mcp_servers.a]",
                "command = \"a\"",
                &format!("tool_timeout_sec = {value}"),
            ]),
            3,
            &[
                "[mcp_servers.a]",
                "`tool_timeout_sec`",
                "positive, finite",
                shown,
                "tool_timeout_sec = 30",
            ],
        );
    }
    fails(
        &lines(&[
            "[mcp_servers.a]",
            "command = \"a\"",
            "startup_timeout_sec = -0.5",
        ]),
        3,
        &["`startup_timeout_sec`", "positive"],
    );
    fails(
        &lines(&[
            "[mcp_servers.a]",
            "command = \"a\"",
            "startup_timeout_ms = -5",
        ]),
        3,
        &["`startup_timeout_ms`", "positive", "startup_timeout_sec"],
    );
    // Codex's rule when both are set: seconds win.
    let config = ok(&lines(&[
        "[mcp_servers.a]",
        "command = \"a\"",
        "startup_timeout_ms = 100",
        "startup_timeout_sec = 3",
    ]));
    assert_eq!(config.servers[0].startup_timeout, Duration::from_secs(3));
}

#[test]
fn max_output_tokens_per_server_wins_over_settings() {
    let config = ok(&lines(&[
        "[settings]",
        "max_output_tokens = 5000",
        "[mcp_servers.a]",
        "command = \"a\"",
        "max_output_tokens = 300",
        "[mcp_servers.b]",
        "command = \"b\"",
    ]));
    assert_eq!(config.max_output_tokens(0), Some(300));
    assert_eq!(config.max_output_tokens(1), Some(5000));
    assert_eq!(
        ok("[mcp_servers.a]\ncommand = \"a\"\n").max_output_tokens(0),
        None
    );
    fails(
        &lines(&[
            "[mcp_servers.a]",
            "command = \"a\"",
            "max_output_tokens = 10",
        ]),
        3,
        &[
            "[mcp_servers.a] `max_output_tokens` is 10",
            "between 100 and 10000000",
        ],
    );
    fails(
        &lines(&["[settings]", "max_output_tokens = -1"]),
        2,
        &["[settings] `max_output_tokens` is -1"],
    );
}

#[test]
fn start_and_idle_stop_are_read_and_checked() {
    let config = ok(&lines(&[
        "[mcp_servers.a]",
        "command = \"srv\"",
        "start = \"lazy\"",
        "idle_stop_sec = 90",
        "[mcp_servers.b]",
        "command = \"srv\"",
    ]));
    assert_eq!(config.servers[0].start, Start::Lazy);
    assert_eq!(config.servers[0].idle_stop, Some(Duration::from_secs(90)));
    assert_eq!(config.servers[1].start, Start::Eager, "the default");
    assert_eq!(config.servers[1].idle_stop, None, "never stopped when idle");

    fails(
        &lines(&["[mcp_servers.a]", "command = \"srv\"", "start = \"lasy\""]),
        3,
        &["start", "\"lasy\"", "start = \"lazy\"", "did you mean"],
    );
    fails(
        &lines(&["[mcp_servers.a]", "command = \"srv\"", "idle_stop_sec = 0"]),
        3,
        &["idle_stop_sec", "positive", "idle_stop_sec = 30"],
    );
    fails(
        &lines(&["[mcp_servers.a]", "command = \"srv\"", "start = true"]),
        3,
        &["start"],
    );
}

#[test]
fn share_is_read_and_checked() {
    let config = ok(&lines(&[
        "[mcp_servers.a]",
        "command = \"srv\"",
        "share = \"session\"",
        "[mcp_servers.b]",
        "command = \"srv\"",
    ]));
    assert_eq!(config.servers[0].share, crate::config::Share::Session);
    assert_eq!(
        config.servers[1].share,
        crate::config::Share::Shared,
        "the default"
    );
    fails(
        &lines(&["[mcp_servers.a]", "command = \"srv\"", "share = \"sesion\""]),
        3,
        &["share", "\"sesion\"", "share = \"session\"", "did you mean"],
    );
}
