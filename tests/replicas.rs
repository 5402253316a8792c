//! Replicas of `serve --http` behind a real load balancer (HAProxy, from Debian's package,
//! started by the test on loopback) with affinity on `Mcp-Session-Id`: each session stays
//! on the replica that created it; a replica that dies loses only its own sessions, whose
//! next request gets a clean 404 "Session not found", and a new `initialize` works.
//! Skipped (with a notice) when `haproxy` is not installed, except under CI. docs/deploy.md has the config.

use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use crate::http::{Server, initialize, open_session, post, tools_list};
use crate::util::{Dir, Killed, fixture, free_port};

/// deploy/haproxy.cfg (what docs/deploy.md shows), with the test's ports.
fn haproxy_config(port: u16, replicas: &[u16]) -> String {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("deploy/haproxy.cfg");
    let text = std::fs::read_to_string(path).unwrap();
    assert_eq!(replicas.len(), 2, "the file has two replicas");
    text.replace("127.0.0.1:8080", &format!("127.0.0.1:{port}"))
        .replace("127.0.0.1:8765", &format!("127.0.0.1:{}", replicas[0]))
        .replace("127.0.0.1:8766", &format!("127.0.0.1:{}", replicas[1]))
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
        // Under CI a missing HAProxy is a failure: `.ci/install-peers` installs it.
        assert!(
            std::env::var_os("CI").is_none(),
            "haproxy missing under CI; .ci/install-peers installs it"
        );
        eprintln!("skipping: haproxy is not installed (apt-get install haproxy)");
        return;
    }
    let dir = Dir::new();
    dir.config(&fixture("fx", &[], ""));
    let first = Server::start(&dir, &[]);
    let second = Server::start(&dir, &[]);
    let port = free_port();
    let config = dir.file("haproxy.cfg");
    let replicas = [port_of(&first.url), port_of(&second.url)];
    std::fs::write(&config, haproxy_config(port, &replicas)).unwrap();
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
    let deadline = Instant::now() + Duration::from_secs(10);
    while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
        assert!(Instant::now() < deadline, "haproxy did not listen");
        std::thread::sleep(Duration::from_millis(20));
    }
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

    drop(first);
    // HAProxy sees it down after a failed check (every 200 ms).
    tokio::time::sleep(Duration::from_millis(800)).await;
    for session in &on_second {
        let headers = [("mcp-session-id", session.as_str())];
        let (status, _, body) = post(&client, &balanced, &headers, &tools_list(10)).await;
        assert_eq!(status, 200, "the live replica keeps its sessions: {body}");
    }
    for session in &on_first {
        let headers = [("mcp-session-id", session.as_str())];
        let (status, _, body) = post(&client, &balanced, &headers, &tools_list(11)).await;
        assert_eq!(status, 404, "{body}");
        assert!(body.contains("Session not found"), "{body}");
    }
    let (status, session, body) = post(&client, &balanced, &[], &initialize()).await;
    assert_eq!(status, 200, "re-initialize: {body}");
    assert!(session.is_some());
    drop(second);
}
