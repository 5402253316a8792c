//! Replicas of `serve --http` behind a real load balancer (HAProxy, from Debian's package,
//! started by the test on loopback) with affinity on `Mcp-Session-Id`: each session stays
//! on the replica that created it; a replica that dies loses only its own sessions, whose
//! next request gets a clean 404 "Session not found", and a new `initialize` works.
//! Fails when `haproxy` is not installed (`support::missing_peer`: skipped with a `SKIPPED`
//! line where allowed). docs/deploy.md has the config.

use std::io::{Read, Write};
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Duration;

use crate::support::http::{Server, initialize, open_session, post, tools_list};
use crate::support::os::UnixStream;
use crate::support::wait::eventually;
use crate::support::{Dir, Killed, assert_contains_all, fixture, free_port, listening};

/// deploy/haproxy.cfg (what docs/deploy.md shows), with the test's ports and a stats
/// socket at `stats`, for the test to read what HAProxy thinks of each replica.
fn haproxy_config(port: u16, replicas: &[u16], stats: &Path) -> String {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("deploy/haproxy.cfg");
    let text = std::fs::read_to_string(path).unwrap();
    assert_eq!(replicas.len(), 2, "the file has two replicas");
    assert!(text.contains("\nglobal\n"), "a global section: {text}");
    text.replace(
        "\nglobal\n",
        &format!("\nglobal\n    stats socket {}\n", stats.display()),
    )
    .replace("127.0.0.1:8080", &format!("127.0.0.1:{port}"))
    .replace("127.0.0.1:8765", &format!("127.0.0.1:{}", replicas[0]))
    .replace("127.0.0.1:8766", &format!("127.0.0.1:{}", replicas[1]))
}

/// The status HAProxy gives `server` of `backend` ("UP", "DOWN", ...), from `show stat` on
/// its stats socket; `None` while the socket does not answer.
fn haproxy_status(stats: &Path, backend: &str, server: &str) -> Option<String> {
    let mut socket = UnixStream::connect(stats).ok()?;
    socket.set_read_timeout(Some(Duration::from_secs(5))).ok()?;
    socket.write_all(b"show stat\n").ok()?;
    let mut csv = String::new();
    socket.read_to_string(&mut csv).ok()?;
    let mut lines = csv.lines();
    let header: Vec<&str> = lines.next()?.trim_start_matches("# ").split(',').collect();
    let column = header.iter().position(|&name| name == "status")?;
    lines
        .map(|line| line.split(',').collect::<Vec<_>>())
        .find(|row| row.len() > column && row[0] == backend && row[1] == server)
        .map(|row| row[column].to_owned())
}

/// Waits until HAProxy reports `server` of `backend` with a status starting with `status`.
async fn wait_for_status(stats: &Path, backend: &str, server: &str, status: &str) {
    // HAProxy checks every 200 ms.
    let what = format!("HAProxy sees {backend}/{server} {status}");
    eventually(&what, async || {
        let now = haproxy_status(stats, backend, server);
        if now.as_deref().is_some_and(|s| s.starts_with(status)) {
            Ok(())
        } else {
            Err(format!("it says {now:?}"))
        }
    })
    .await;
}

fn port_of(url: &str) -> u16 {
    url.rsplit(':')
        .next()
        .and_then(|rest| rest.split('/').next())
        .and_then(|p| p.parse().ok())
        .unwrap_or_else(|| panic!("no port in {url}"))
}

#[tokio::test]
async fn replicas_behind_haproxy_keep_their_sessions_and_a_dead_one_loses_only_its_own() {
    if Command::new("haproxy").arg("-v").output().is_err() {
        crate::support::missing_peer("haproxy is missing", ".ci/install-peers installs it");
        return;
    }
    let dir = Dir::with_config(&fixture("fx", &[], ""));
    let first = Server::start(&dir, &[]);
    let second = Server::start(&dir, &[]);
    let port = free_port();
    let config = dir.file("haproxy.cfg");
    let stats = dir.file("haproxy.sock");
    let replicas = [port_of(&first.url), port_of(&second.url)];
    std::fs::write(&config, haproxy_config(port, &replicas, &stats)).unwrap();
    let checked = Command::new("haproxy")
        .arg("-c")
        .arg("-f")
        .arg(&config)
        .output()
        .unwrap();
    assert!(checked.status.success(), "{checked:?}");
    let _balancer = Killed(
        Command::new("haproxy")
            .arg("-db")
            .arg("-f")
            .arg(&config)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("start haproxy"),
    );
    listening(port, "haproxy");
    // Both replicas ready (`/readyz`: their tools taken in) in HAProxy's eyes before a
    // client comes: with `fall 1`, a check that came while a replica was still starting
    // marks it down until the next one.
    wait_for_status(&stats, "mcp_defer", "r0", "UP").await;
    wait_for_status(&stats, "mcp_defer", "r1", "UP").await;
    let balanced = format!("http://127.0.0.1:{port}/mcp");
    let client = reqwest::Client::new();

    // Sessions spread over both replicas, and every request of one reaches its replica.
    let mut on_first = Vec::new();
    let mut on_second = Vec::new();
    for _ in 0..4 {
        let session = open_session(&client, &balanced, &[]).await;
        let headers = [("mcp-session-id", session.as_str())];
        for id in 2..5 {
            let (status, _, body) = post(&client, &balanced, &headers, &tools_list(id)).await;
            assert_eq!(status, 200, "affinity: {body}");
        }
        let (status, _, _) = post(&client, &first.url, &headers, &tools_list(9)).await;
        if status == 200 {
            on_first.push(session);
        } else {
            on_second.push(session);
        }
    }
    assert!(
        !on_first.is_empty() && !on_second.is_empty(),
        "round robin: {on_first:?} / {on_second:?}"
    );

    // Both replicas are up in HAProxy's eyes (they served above); the first dies, and the
    // test goes on once HAProxy's health check has seen it down (r0 is the first's line).
    wait_for_status(&stats, "mcp_defer", "r1", "UP").await;
    drop(first);
    wait_for_status(&stats, "mcp_defer", "r0", "DOWN").await;
    for session in &on_second {
        let headers = [("mcp-session-id", session.as_str())];
        let (status, _, body) = post(&client, &balanced, &headers, &tools_list(10)).await;
        assert_eq!(status, 200, "the live replica keeps its sessions: {body}");
    }
    for session in &on_first {
        let headers = [("mcp-session-id", session.as_str())];
        let (status, _, body) = post(&client, &balanced, &headers, &tools_list(11)).await;
        assert_eq!(status, 404, "{body}");
        assert_contains_all(&body, &["Session not found"]);
    }
    let (status, session, body) = post(&client, &balanced, &[], &initialize()).await;
    assert_eq!(status, 200, "re-initialize: {body}");
    assert!(session.is_some());
    drop(second);
}
