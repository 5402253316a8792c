//! A server that fails is named with its own cause, never another's (issue 10, items 1, 3, 5
//! and 10): a malformed tool skipped by name, a `tools/list` error, a command that cannot
//! run, an answer over `max_message_bytes`; an HTTP server that restarts is reconnected.
//! Each reproduced with real processes.

use std::time::{Duration, Instant};

use serde_json::json;

use crate::support::session::{Session, structured, text};
use crate::support::wait::eventually;
use crate::support::{
    Dir, FIXTURE, assert_contains_all, fixture, line_where, row, stderr, stdout, toml_list,
    toml_str,
};

/// A server table running the fixture in raw mode with `list` as its `tools/list` answer.
fn raw(name: &str, list: serde_json::Value, extra: &str) -> String {
    format!(
        "[mcp_servers.{name}]\ncommand = {}\nargs = {}\n{extra}\n",
        toml_str(FIXTURE),
        toml_list(&["--raw-list", &list.to_string()])
    )
}

#[test]
fn a_malformed_tool_is_skipped_by_name_and_the_rest_work() {
    let dir = Dir::with_config(&raw(
        "raw",
        json!({"tools": [
            {"name": "good", "inputSchema": {"type": "object"}},
            {"name": "broken", "description": "no inputSchema"},
            {"name": "also_good", "inputSchema": {"type": "object"}}
        ]}),
        "",
    ));
    let out = dir.run(&["check"]);
    let (table, log) = (stdout(&out), stderr(&out));
    assert_eq!(
        row(&table, "raw")[..3],
        ["raw", "ready", "2"],
        "{table}\n{log}"
    );
    let warning = line_where(&log, |l| l.contains("malformed"));
    assert_contains_all(warning, &["broken", "inputSchema"]);
}

#[test]
fn a_tools_list_error_is_reported_as_the_cause() {
    let dir = Dir::with_config(&raw(
        "lister",
        json!({"error": {"code": -32603, "message": "catalog database is locked"}}),
        "",
    ));
    let out = dir.run(&["check"]);
    let table = stdout(&out);
    let lister = row(&table, "lister");
    assert_eq!(lister[1], "failed", "{table}");
    assert!(
        lister[4].contains("tools/list failed") && lister[4].contains("catalog database is locked"),
        "{lister:?}"
    );
    assert!(!lister[4].contains("exited with code"), "{lister:?}");
}

#[tokio::test]
async fn a_failed_server_is_named_with_its_cause_and_never_pointed_elsewhere() {
    let dir = Dir::with_config(&format!(
        "{}{}{}",
        fixture("fake", &[], ""),
        fixture("failstart", &["--fail-start", "no credentials"], ""),
        raw(
            "other",
            json!({"tools": [{"name": "special_thing", "inputSchema": {"type": "object"}}]}),
            ""
        ),
    ));
    let session = Session::start(&dir.file("servers.toml")).await;
    let said = text(&session.call_through("failstart__echo", json!({})).await);
    assert_contains_all(&said, &["'failstart'", "exited with code 1"]);
    assert!(
        !said.contains("fake__echo") && !said.contains("no credentials"),
        "{said}"
    );
    // `fake` exists and is ready: "did you mean" stays within it.
    let said = text(&session.call_through("fake__special_thing", json!({})).await);
    assert!(
        said.contains("Unknown tool") && !said.contains("other__"),
        "{said}"
    );
    let said = text(
        &session
            .call("call_tool", json!({"name": "fake__ecoh"}))
            .await,
    );
    assert_contains_all(&said, &["did you mean fake__echo"]);
    // search_tools says which server is missing and why.
    let found = session.call("search_tools", json!({"query": "echo"})).await;
    let unavailable = structured(&found)["unavailable"].clone();
    assert_eq!(unavailable[0]["server"], "failstart", "{unavailable}");
    assert!(
        unavailable[0]["state"]
            .as_str()
            .is_some_and(|s| s.contains("exited with code 1")),
        "{unavailable}"
    );
    session.close().await;
}

/// Unix: a file without the execute bit (Windows has no such bit).
#[cfg(unix)]
#[test]
fn a_non_executable_command_fails_once_with_its_cause() {
    let dir = Dir::new();
    let script = dir.file("not-executable.sh");
    std::fs::write(&script, "#!/bin/sh\nexit 0\n").unwrap();
    dir.config(&format!(
        "[mcp_servers.noexec]\ncommand = {}\n",
        toml_str(&script.to_string_lossy())
    ));
    let out = dir.run(&["check"]);
    let (table, log) = (stdout(&out), stderr(&out));
    let noexec = row(&table, "noexec");
    assert!(
        noexec[4].contains("cannot execute") && noexec[4].contains("ermission denied"),
        "{noexec:?}"
    );
    // Failed for good, not restarting.
    assert_contains_all(&log, &["noexec: failed: cannot execute"]);
    assert!(!log.contains("restarting"), "{log}");
}

/// Issue 10 item 3: an answer over `max_message_bytes` fails its call at once, naming size and limit.
#[tokio::test]
async fn an_answer_over_the_limit_fails_at_once_with_its_size() {
    let dir = Dir::new();
    let list = json!({"tools": [{"name": "big", "inputSchema": {"type": "object"}}]});
    dir.config(&format!(
        "[settings]\nmax_message_bytes = 65536\n\n[mcp_servers.raw]\ncommand = {}\nargs = {}\n\
         tool_timeout_sec = 30\n",
        toml_str(FIXTURE),
        toml_list(&[
            "--raw-list",
            &list.to_string(),
            "--raw-call-bytes",
            "200000"
        ])
    ));
    let session = Session::start(&dir.file("servers.toml")).await;
    let started = Instant::now();
    let result = session.call_through("raw__big", json!({})).await;
    let said = text(&result);
    assert_eq!(result.is_error, Some(true), "{said}");
    assert_contains_all(&said, &["200", "65536", "max_message_bytes"]);
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "{:?}",
        started.elapsed()
    );
    // The connection survives: a second call is answered the same way.
    let again = session.call_through("raw__big", json!({})).await;
    assert!(text(&again).contains("65536"), "{}", text(&again));
    session.close().await;
}

/// Issue 10 item 1: an HTTP server that restarts is reconnected; the call that finds the session dead
/// fails at once, naming the server and the cause, instead of waiting out its timeout.
#[tokio::test]
async fn an_http_server_that_restarts_is_reconnected() {
    let Some(peers) = crate::support::peers() else {
        return;
    };
    let port = crate::support::free_port();
    let server = peers.http_everything(port);
    let dir = Dir::with_config(&format!(
        "[mcp_servers.ev]\nurl = \"http://127.0.0.1:{port}/mcp\"\ntool_timeout_sec = 30\n"
    ));
    let session = Session::start(&dir.file("servers.toml")).await;
    let echo = |message: &str| json!({"name": "ev__echo", "arguments": {"message": message}});
    let first = session.call("call_tool", echo("one")).await;
    assert!(text(&first).contains("Echo: one"), "{}", text(&first));

    drop(server);
    let _server = peers.http_everything(port);

    let started = Instant::now();
    let broken = session.call("call_tool", echo("two")).await;
    let took = started.elapsed();
    assert!(
        took < Duration::from_secs(10),
        "took {took:?}: {}",
        text(&broken)
    );
    if broken.is_error == Some(true) {
        assert!(
            text(&broken).contains("'ev'"),
            "names the server: {}",
            text(&broken)
        );
    }
    // Reconnected within the backoff: a later call works.
    eventually("reconnected", async || {
        let again = session.call("call_tool", echo("three")).await;
        if text(&again).contains("Echo: three") {
            Ok(())
        } else {
            Err(text(&again))
        }
    })
    .await;
    session.close().await;
}
