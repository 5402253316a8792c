//! Hot reload: `servers.toml` edited on disk (or SIGHUP) while `serve` runs, with a real
//! client and real fixture processes. Added servers start, removed ones stop and their
//! listed tools answer that they were removed, changed ones restart (new pid), unchanged
//! ones keep their process; a broken file keeps the running servers and is named in the
//! next meta-tool answer; every HTTP session sees the change, and a profile path reaches
//! a server a reload restarted.

use std::path::Path;
use std::time::{Duration, Instant};

use rmcp::model::{CallToolRequestParams, ClientConfig, Tool};
use rmcp::service::{NotificationContext, RoleClient};
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::{ClientHandler, ServiceExt};
use serde_json::{Value, json};
use tokio::sync::mpsc;

use crate::support::session::*;
use crate::support::wait::eventually;
use crate::support::{BIN, Dir, fixture, fixture_with_pids, is_gone, read_pids, running};

/// How long a reload may take to show, at most: a fixture starts in milliseconds; this
/// bounds a broken build, it is not what the test measures.
const RELOAD_DEADLINE: Duration = Duration::from_secs(30);

/// A fixture table whose process writes its pid to `<dir>/<file>`.
fn with_pid(dir: &Dir, name: &str, file: &str, extra: &str) -> String {
    let path = dir.file(file);
    fixture_with_pids(name, &path, extra)
}

/// The fixture's own pid from its pid file, once it has written it.
async fn pid_in(path: &Path) -> i32 {
    let what = format!("{} written", path.display());
    eventually(&what, async || read_pids(path).first().copied()).await
}

/// Calls `search_tools` until `done` holds for its structured answer.
async fn search_until(session: &Session, args: Value, done: impl Fn(&Value) -> bool) -> Value {
    eventually("the search shows the reload", async || {
        let found = structured(&session.call("search_tools", args.clone()).await);
        if done(&found) {
            Ok(found)
        } else {
            Err(format!("{found:#}"))
        }
    })
    .await
}

fn servers_of(found: &Value) -> Vec<String> {
    (found["tools"].as_array().into_iter().flatten())
        .map(|hit| hit["server"].as_str().unwrap_or_default().to_owned())
        .collect()
}

fn has_server(found: &Value, server: &str) -> bool {
    servers_of(found).iter().any(|s| s == server)
}

fn assert_no_duplicates(tools: &[Tool]) {
    let mut seen = std::collections::BTreeSet::new();
    for name in names(tools) {
        assert!(seen.insert(name.clone()), "{name} listed twice");
    }
}

/// Writes `text` as the new file the way editors do: a temporary file renamed over it.
fn save(path: &Path, text: &str) {
    let tmp = path.with_extension("toml.tmp");
    std::fs::write(&tmp, text).expect("write temp");
    std::fs::rename(&tmp, path).expect("rename over servers.toml");
}

#[tokio::test]
async fn an_edited_file_starts_stops_and_restarts_only_what_changed() {
    let dir = Dir::new();
    let keep = with_pid(&dir, "keep", "keep.pids", "");
    let gone = with_pid(&dir, "gone", "gone.pids", "");
    let settings = "[settings]\nexposure = \"all\"\n\n";
    let path = dir.config(&format!(
        "{settings}{keep}{}{gone}",
        with_pid(&dir, "change", "change1.pids", "")
    ));
    let mut session = Session::start(&path).await;
    // A meta tool waits for every starting server: all three are listed after it.
    search_until(&session, json!({"query": "echo"}), |_| true).await;
    let before = session.list().await;
    assert!(names(&before).contains(&"gone__echo".to_owned()));
    // What follows must be told by the reload's own notification.
    session.forget_changes();
    let keep_pid = pid_in(&dir.file("keep.pids")).await;
    let change_pid = pid_in(&dir.file("change1.pids")).await;
    let gone_pid = pid_in(&dir.file("gone.pids")).await;

    // `change` gets another argument, `gone` goes, `added` comes, `keep` stays as it was.
    save(
        &path,
        &format!(
            "{settings}{keep}{}{}",
            with_pid(&dir, "change", "change2.pids", ""),
            fixture("added", &[], "description = \"Added while serving\""),
        ),
    );
    let found = search_until(&session, json!({"query": "echo"}), |found| {
        has_server(found, "added")
    })
    .await;
    assert!(
        !has_server(&found, "gone"),
        "a removed server's tools are not offered: {found:#}"
    );
    let unavailable = found["unavailable"].to_string();
    assert!(
        unavailable.contains("gone") && unavailable.contains("removed"),
        "{found:#}"
    );

    let echoed = session
        .call("added__echo", json!({"text": "hello from added"}))
        .await;
    assert_ne!(echoed.is_error, Some(true), "{echoed:?}");
    assert!(text(&echoed).contains("hello from added"), "{echoed:?}");

    let removed = session.call("gone__echo", json!({"text": "x"})).await;
    assert_eq!(removed.is_error, Some(true));
    let message = text(&removed);
    assert!(
        message.contains("removed from servers.toml") && message.contains("[mcp_servers.gone]"),
        "says what happened and how to bring it back: {message}"
    );
    let through_meta = session
        .call_through("gone__echo", json!({"text": "x"}))
        .await;
    assert!(
        text(&through_meta).contains("removed from servers.toml"),
        "{through_meta:?}"
    );
    let selected = session
        .call("select_tools", json!({"names": ["gone__add"]}))
        .await;
    assert!(
        text(&selected).contains("gone__add (server 'gone' was removed from servers.toml)"),
        "select_tools loads nothing of a removed server: {selected:?}"
    );

    let new_change_pid = pid_in(&dir.file("change2.pids")).await;
    assert_ne!(new_change_pid, change_pid, "a changed server restarts");
    wait_gone(change_pid).await;
    wait_gone(gone_pid).await;
    assert_eq!(
        read_pids(&dir.file("keep.pids")).first(),
        Some(&keep_pid),
        "an unchanged server is not restarted"
    );
    assert!(
        !is_gone(keep_pid),
        "the unchanged server's process still runs"
    );

    // The client was told its list grew (in `all` mode, `added`'s tools are listed), and the
    // list only grew at its end: `gone`'s tools are still there.
    session
        .expect_changed(RELOAD_DEADLINE, "a reload that added `added`")
        .await;
    let after = session.list().await;
    assert_extends(&before, &after);
    assert!(names(&after).contains(&"gone__echo".to_owned()));
    assert!(names(&after).contains(&"added__echo".to_owned()));
    assert_no_duplicates(&after);

    // `gone` comes back: its tools answer again under the same names, listed once.
    save(
        &path,
        &format!(
            "{settings}{keep}{}{}{gone}",
            with_pid(&dir, "change", "change2.pids", ""),
            fixture("added", &[], "description = \"Added while serving\""),
        ),
    );
    eventually("gone__echo comes back", async || {
        let back = session.call("gone__echo", json!({"text": "back"})).await;
        if back.is_error == Some(true) {
            return Err(format!("{back:?}"));
        }
        assert!(text(&back).contains("back"), "{back:?}");
        Ok(())
    })
    .await;
    let again = session.list().await;
    assert_extends(&after, &again);
    assert_no_duplicates(&again);
    assert_eq!(
        read_pids(&dir.file("keep.pids")).first(),
        Some(&keep_pid),
        "still the same process after a second reload"
    );
    assert_eq!(
        read_pids(&dir.file("change2.pids")).first(),
        Some(&new_change_pid),
        "a server unchanged by the second reload keeps its process"
    );
    session.close().await;
}

async fn wait_gone(pid: i32) {
    eventually(&format!("process {pid} stops"), async || is_gone(pid)).await;
}

#[tokio::test]
async fn a_broken_file_keeps_the_running_servers_and_the_next_answer_says_why() {
    let dir = Dir::new();
    let fx = with_pid(&dir, "fx", "fx.pids", "");
    let path = dir.config(&fx);
    let session = Session::start(&path).await;
    search_until(&session, json!({"query": "echo"}), |_| true).await;
    let pid = pid_in(&dir.file("fx.pids")).await;

    save(
        &path,
        &format!("{fx}\n[mcp_servers.broken\ncommand = \"x\"\n"),
    );
    let found = search_until(&session, json!({"query": "echo"}), |found| {
        found.get("config_problem").is_some()
    })
    .await;
    let problem = found["config_problem"].as_str().unwrap_or_default();
    assert!(
        problem.contains("servers.toml") && problem.contains("line"),
        "names the file and where: {problem}"
    );
    let answer = session.call("search_tools", json!({"query": "echo"})).await;
    assert!(
        text(&answer).contains("was not applied"),
        "the text says it too: {}",
        text(&answer)
    );
    let selected = session
        .call("select_tools", json!({"names": ["fx__add"]}))
        .await;
    assert!(
        structured(&selected)["config_problem"].is_string(),
        "{selected:?}"
    );
    let echoed = session
        .call("fx__echo", json!({"text": "still here"}))
        .await;
    assert_ne!(
        echoed.is_error,
        Some(true),
        "the running server still serves"
    );
    assert_eq!(read_pids(&dir.file("fx.pids")).first(), Some(&pid));

    // Fixed: the note goes, the fixed file applies.
    save(&path, &format!("{fx}{}", fixture("more", &[], "")));
    let found = search_until(&session, json!({"query": "echo"}), |found| {
        has_server(found, "more")
    })
    .await;
    assert!(found.get("config_problem").is_none(), "{found:#}");
    assert_eq!(read_pids(&dir.file("fx.pids")).first(), Some(&pid));
    session.close().await;
}

/// The pid of the `mcp-defer serve` whose command line names `config`.
fn serving(config: &Path) -> i32 {
    let pids = running(BIN, config);
    assert_eq!(pids.len(), 1, "one mcp-defer serving {}", config.display());
    pids[0]
}

/// Unix: SIGHUP and symbolic links.
#[cfg(unix)]
#[tokio::test]
async fn sighup_reloads_a_file_the_watch_cannot_see() {
    // servers.toml is a link to a file in another directory: the watch (on the link's
    // directory) misses edits of the target, as it would for a dotfiles checkout. SIGHUP
    // is how such a setup reloads.
    let dir = Dir::new();
    let real = dir.file("real");
    std::fs::create_dir(&real).expect("mkdir");
    let target = real.join("servers.toml");
    std::fs::write(&target, fixture("fx", &[], "")).expect("write");
    let path = dir.file("servers.toml");
    crate::support::os::symlink(&target, &path);
    let session = Session::start(&path).await;
    search_until(&session, json!({"query": "echo"}), |_| true).await;

    std::fs::write(
        &target,
        format!("{}{}", fixture("fx", &[], ""), fixture("more", &[], "")),
    )
    .expect("rewrite");
    let unseen = structured(&session.call("search_tools", json!({"query": "echo"})).await);
    assert!(!has_server(&unseen, "more"), "{unseen:#}");

    let pid = serving(&path);
    let sent = crate::support::os::send(pid, crate::support::os::Signal::Hup);
    assert!(sent, "kill -HUP {pid}");
    search_until(&session, json!({"query": "echo"}), |found| {
        has_server(found, "more")
    })
    .await;
    let echoed = session.call("more__echo", json!({"text": "hup"})).await;
    assert!(text(&echoed).contains("hup"), "{echoed:?}");
    session.close().await;
}

/// Counts `notifications/tools/list_changed` of one HTTP session.
#[derive(Clone)]
struct Changes(mpsc::UnboundedSender<()>);

impl ClientHandler for Changes {
    fn get_info(&self) -> ClientConfig {
        ClientConfig::default()
    }

    async fn on_tool_list_changed(&self, _context: NotificationContext<RoleClient>) {
        let _ = self.0.send(());
    }
}

#[tokio::test]
async fn every_http_session_sees_an_added_server() {
    let dir = Dir::new();
    let path = dir.config(&fixture("fx", &[], ""));
    let server = crate::support::http::Server::start(&dir, &[]);
    let mut sessions = Vec::new();
    for _ in 0..2 {
        let (tx, rx) = mpsc::unbounded_channel();
        let transport = StreamableHttpClientTransport::from_uri(server.url.clone());
        let client = Changes(tx)
            .serve(transport)
            .await
            .unwrap_or_else(|e| panic!("HTTP session: {e}"));
        let listed = client.list_tools(None).await.expect("tools/list").tools;
        sessions.push((client, rx, listed));
    }

    // `added` has a core tool: every session that has listed gets it appended and is told.
    save(
        &path,
        &format!(
            "{}{}",
            fixture("fx", &[], ""),
            fixture("added", &[], "always_load = [\"echo\"]")
        ),
    );
    for (client, changed, before) in &mut sessions {
        tokio::time::timeout(RELOAD_DEADLINE, changed.recv())
            .await
            .unwrap_or_else(|_| panic!("no list_changed:\n{}", server.log()));
        let after = client.list_tools(None).await.expect("tools/list").tools;
        assert_extends(before, &after);
        assert_eq!(
            names(&after).last().map(String::as_str),
            Some("added__echo")
        );
        let mut call = CallToolRequestParams::new("added__echo");
        call.arguments = Some(object(json!({"text": "over http"})));
        let result = client.call_tool(call).await.expect("tools/call");
        assert!(text(&result).contains("over http"), "{result:?}");
    }
    for (client, _, _) in sessions {
        let _ = client.cancel().await;
    }
}

#[tokio::test]
async fn a_profile_path_reaches_a_server_restarted_by_a_reload() {
    // A profile's view holds the same handle as /mcp: the restarted connection is behind it.
    let dir = Dir::new();
    let profile = "\n[profiles.p]\nservers = [\"fx\"]\n";
    let path = dir.config(&format!(
        "{}{}{profile}",
        with_pid(&dir, "fx", "fx1.pids", ""),
        fixture("other", &[], "")
    ));
    let server = crate::support::http::Server::start(&dir, &[]);
    let transport = StreamableHttpClientTransport::from_uri(format!("{}/p", server.url));
    let (tx, _changed) = mpsc::unbounded_channel();
    let client = Changes(tx)
        .serve(transport)
        .await
        .unwrap_or_else(|e| panic!("HTTP session: {e}"));
    let echo = |text: &str| {
        let mut call = CallToolRequestParams::new("fx__echo");
        call.arguments = Some(object(json!({"text": text})));
        call
    };
    let first = client.call_tool(echo("one")).await.expect("tools/call");
    assert!(text(&first).contains("one"), "{first:?}");
    let old = pid_in(&dir.file("fx1.pids")).await;

    save(
        &path,
        &format!(
            "{}{}{profile}",
            with_pid(&dir, "fx", "fx2.pids", ""),
            fixture("other", &[], "")
        ),
    );
    let new = pid_in(&dir.file("fx2.pids")).await;
    assert_ne!(new, old);
    eventually("the restarted fx answers", async || {
        let result = client.call_tool(echo("two")).await.expect("tools/call");
        if result.is_error == Some(true) {
            return Err(format!("{result:?}\n{}", server.log()));
        }
        assert!(text(&result).contains("two"), "{result:?}");
        Ok(())
    })
    .await;
    wait_gone(old).await;
    let _ = client.cancel().await;
}

/// Issue 35 item 5: `serve -vv` with its log written into its config's folder fed on
/// itself (notify logged each inotify event at trace, each line written was the next
/// event: 29-41 MB/s of log while idle). The log must stay bounded while nothing happens,
/// and an edit of the config must still reload.
#[tokio::test]
async fn a_trace_log_beside_the_config_stays_quiet_while_idle_and_edits_still_reload() {
    /// Idle growth allowed: a few lines at most come while nothing happens; the loop wrote
    /// megabytes a second.
    const IDLE_BOUND: u64 = 64 * 1024;
    /// How long the log is watched for growth (a bound on the poll, not a measured time).
    const IDLE_WATCH: Duration = Duration::from_secs(2);
    let dir = Dir::new();
    let path = dir.config(&fixture("one", &[], ""));
    let log_path = dir.file("serve.log");
    let log = std::fs::File::create(&log_path).expect("create the log");
    let session = Session::start_logged(&path, Some(log), |command| {
        command.env_remove("RUST_LOG").arg("-vv");
    })
    .await;
    search_until(&session, json!({"query": "echo"}), |found| {
        has_server(found, "one")
    })
    .await;
    let size = || std::fs::metadata(&log_path).map_or(0, |m| m.len());
    let before = size();
    let deadline = Instant::now() + IDLE_WATCH;
    while Instant::now() < deadline {
        let grown = size().saturating_sub(before);
        assert!(
            grown <= IDLE_BOUND,
            "the log grew {grown} bytes while idle; its last lines:\n{}",
            tail(&log_path)
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }

    save(
        &path,
        &format!("{}{}", fixture("one", &[], ""), fixture("two", &[], "")),
    );
    search_until(&session, json!({"query": "echo"}), |found| {
        has_server(found, "two")
    })
    .await;
    session.close().await;
}

/// The last 2 KB of the file at `path`, for a failure message.
fn tail(path: &Path) -> String {
    let text = std::fs::read(path).unwrap_or_default();
    String::from_utf8_lossy(&text[text.len().saturating_sub(2048)..]).into_owned()
}
