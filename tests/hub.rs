//! The per-user hub (issue 29): stdio sessions of one config share one process and one set
//! of servers, each with its own list; the hub leaves after its last session; a killed hub
//! is replaced and the session goes on; sockets that are stale or someone else's; `hub =
//! false`. Each test gives its sessions a runtime directory of its own (`XDG_RUNTIME_DIR`)
//! and turns the hub on (`MCP_DEFER_HUB=on`; the suite runs without it, .cargo/config.toml).

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::support::raw::{RawClient, result_text};
use crate::support::wait::{DEADLINE, eventually};
use crate::support::{
    BIN, Dir, FIXTURE, assert_contains_all, bin_under_test, fixture, is_gone, os, running,
};

/// A config in `dir` with one fixture server `f` (marked by `marker`, to count its
/// processes) and `settings` lines.
fn config(dir: &Dir, name: &str, marker: &str, settings: &str) -> PathBuf {
    let toml = format!(
        "[settings]\n{settings}\n{}",
        fixture("f", &["--name", marker], "")
    );
    let path = dir.file(name);
    std::fs::write(&path, toml).expect("write config");
    path.canonicalize().expect("config path")
}

fn runtime_dir(dir: &Dir) -> PathBuf {
    let run = dir.file("run");
    std::fs::create_dir_all(&run).expect("runtime dir");
    run
}

/// A handshake-era session through the hub of `config`, with `run` as its runtime dir.
async fn session(config: &Path, run: &Path) -> RawClient {
    session_with(config, run, |_| {}).await
}

async fn session_with(
    config: &Path,
    run: &Path,
    configure: impl FnOnce(&mut tokio::process::Command),
) -> RawClient {
    let mut client = RawClient::start_with(config, |command| {
        command
            .env("XDG_RUNTIME_DIR", run)
            .env("MCP_DEFER_HUB", "on");
        configure(command);
    });
    if let Err(answer) = try_handshake(&mut client).await {
        panic!("initialize: {answer}\nthe hubs' logs:\n{}", hub_logs(run));
    }
    client
}

/// What the hubs under `run` logged, for a failure's message.
fn hub_logs(run: &Path) -> String {
    let Ok(entries) = std::fs::read_dir(run.join("mcp-defer")) else {
        return String::new();
    };
    (entries.flatten())
        .filter(|e| e.path().extension().is_some_and(|x| x == "log"))
        .map(|e| std::fs::read_to_string(e.path()).unwrap_or_default())
        .collect::<Vec<_>>()
        .join("\n")
}

/// `initialize` 2025-06-18 and `notifications/initialized`.
async fn handshake(client: &mut RawClient) {
    client.handshake("2025-06-18").await;
}

/// As [`handshake`]; `Err` with the answer when `initialize` fails.
async fn try_handshake(client: &mut RawClient) -> Result<(), Value> {
    client.try_handshake("2025-06-18").await.map(drop)
}

async fn tool_names(client: &mut RawClient) -> Vec<String> {
    let listed = client.request("tools/list", json!({})).await;
    (listed["result"]["tools"].as_array())
        .unwrap_or_else(|| panic!("tools/list: {listed}"))
        .iter()
        .map(|t| t["name"].as_str().unwrap_or_default().to_owned())
        .collect()
}

async fn select(client: &mut RawClient, names: &[&str]) {
    let id = client
        .send_request(
            "tools/call",
            json!({"name": "select_tools", "arguments": {"names": names}}),
        )
        .await;
    // `select_tools` holds its answer until the client lists again.
    let _ = tool_names(client).await;
    let answer = client.response(id).await;
    assert_eq!(answer["result"]["isError"], false, "select_tools: {answer}");
}

async fn echo(client: &mut RawClient, tool: &str) -> Value {
    client
        .request(
            "tools/call",
            json!({"name": tool, "arguments": {"said": "hello"}}),
        )
        .await
}

/// The hub processes of `config` (their command line has `--hub` and the config path).
fn hubs(config: &Path) -> Vec<i32> {
    hubs_of(BIN, config)
}

/// As [`hubs`], run by `program` (another build).
fn hubs_of(program: &str, config: &Path) -> Vec<i32> {
    (running(program, config).into_iter())
        .filter(|pid| {
            std::fs::read(format!("/proc/{pid}/cmdline"))
                .is_ok_and(|c| String::from_utf8_lossy(&c).contains("--hub"))
        })
        .collect()
}

/// The sockets in the hub directory under `run`.
fn sockets(run: &Path) -> Vec<PathBuf> {
    let Ok(entries) = std::fs::read_dir(run.join("mcp-defer")) else {
        return Vec::new();
    };
    let mut found: Vec<PathBuf> = (entries.flatten())
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|e| e == "sock"))
        .collect();
    found.sort();
    found
}

#[tokio::test]
async fn two_sessions_share_one_hub_and_one_server_each_with_its_own_list() {
    let dir = Dir::new();
    let run = runtime_dir(&dir);
    let marker = format!("shared-{}", dir.path().display());
    let config = config(&dir, "servers.toml", &marker, "hub_grace_sec = 0");
    let mut a = session(&config, &run).await;
    let mut b = session(&config, &run).await;
    let before = tool_names(&mut b).await;
    select(&mut a, &["f__echo"]).await;
    let a_list = tool_names(&mut a).await;
    assert_eq!(
        a_list.last().map(String::as_str),
        Some("f__echo"),
        "{a_list:?}"
    );
    // B's list is its own: A's selection did not reach it.
    assert_eq!(tool_names(&mut b).await, before);
    assert!(!before.contains(&"f__echo".to_owned()), "{before:?}");
    let answer = echo(&mut a, "f__echo").await;
    assert!(result_text(&answer).contains("hello"), "{answer}");
    let via_b = b.call_through("f__echo", json!({"said": "hello"})).await;
    assert!(result_text(&via_b).contains("hello"), "{via_b}");
    // One hub and one server process for both sessions.
    assert_eq!(hubs(&config).len(), 1, "hubs: {:?}", hubs(&config));
    assert_eq!(running(FIXTURE, Path::new(&marker)).len(), 1);
    assert_eq!(sockets(&run).len(), 1);
    a.no_strays().await;
    b.no_strays().await;
    a.close().await;
    b.close().await;
    // With no grace, the hub leaves with its last session, and takes its server along.
    eventually("the hub leaves after its last session", async || {
        hubs(&config).is_empty()
    })
    .await;
    eventually("the hub's server stops", async || {
        running(FIXTURE, Path::new(&marker)).is_empty()
    })
    .await;
    assert!(sockets(&run).is_empty(), "{:?}", sockets(&run));
}

/// The kB of the mcp-defer binary's file pages resident in process `pid` (its mappings'
/// `Rss` less their `Anonymous`, the relocated pages that are the process's own).
fn resident_binary_kb(pid: u32) -> u64 {
    let binary = Path::new(&crate::support::bin_under_test())
        .canonicalize()
        .expect("binary path");
    let binary = binary.display().to_string();
    let smaps = std::fs::read_to_string(format!("/proc/{pid}/smaps")).unwrap_or_default();
    let (mut ours, mut total) = (false, 0);
    for line in smaps.lines() {
        let mut fields = line.split_whitespace();
        match (fields.next(), fields.next()) {
            (Some(range), _) if range.contains('-') && !range.ends_with(':') => {
                ours = line.trim_end().ends_with(&binary);
            }
            (Some("Rss:"), Some(kb)) if ours => total += kb.parse::<u64>().unwrap_or(0),
            (Some("Anonymous:"), Some(kb)) if ours => total -= kb.parse::<u64>().unwrap_or(0),
            _ => {}
        }
    }
    total
}

#[tokio::test]
async fn an_idle_session_gives_back_the_binary_pages_it_touched_and_relays_on() {
    let dir = Dir::new();
    let run = runtime_dir(&dir);
    let marker = format!("idle-{}", dir.path().display());
    let config = config(&dir, "servers.toml", &marker, "hub_grace_sec = 0");
    let mut a = session(&config, &run).await;
    let _ = tool_names(&mut a).await;
    let pid = a.pid().expect("the session runs");
    let busy = resident_binary_kb(pid);
    assert!(busy > 0, "the session maps its binary");
    // A few seconds idle: the relay unmaps what it touched (the hub maps the same pages).
    eventually(
        "the idle session's binary pages are given back",
        async || resident_binary_kb(pid) < busy / 2,
    )
    .await;
    let via = a.call_through("f__echo", json!({"said": "hello"})).await;
    assert!(result_text(&via).contains("hello"), "{via}");
    a.close().await;
}

#[tokio::test]
async fn hub_false_keeps_one_process_and_one_server_per_session() {
    let dir = Dir::new();
    let run = runtime_dir(&dir);
    let marker = format!("alone-{}", dir.path().display());
    let config = config(&dir, "servers.toml", &marker, "hub = false");
    let alone = |c: &mut tokio::process::Command| {
        c.env("XDG_RUNTIME_DIR", &run).env_remove("MCP_DEFER_HUB");
    };
    let mut a = RawClient::start_with(&config, alone);
    let mut b = RawClient::start_with(&config, alone);
    handshake(&mut a).await;
    handshake(&mut b).await;
    for client in [&mut a, &mut b] {
        let answer = client.call_through("f__echo", json!({})).await;
        assert_eq!(answer["result"]["isError"], false, "{answer}");
    }
    assert!(hubs(&config).is_empty());
    assert_eq!(running(FIXTURE, Path::new(&marker)).len(), 2);
    assert!(sockets(&run).is_empty());
    a.close().await;
    b.close().await;
}

#[tokio::test]
async fn a_killed_hub_is_replaced_and_the_session_keeps_its_list() {
    let dir = Dir::new();
    let run = runtime_dir(&dir);
    let marker = format!("killed-{}", dir.path().display());
    let config = config(&dir, "servers.toml", &marker, "hub_grace_sec = 0");
    let mut a = session(&config, &run).await;
    select(&mut a, &["f__echo", "f__add"]).await;
    let before = tool_names(&mut a).await;
    let [first] = hubs(&config)[..] else {
        panic!("one hub: {:?}", hubs(&config));
    };
    // A call in flight when the hub dies gets an answer naming the cause, not a hang.
    let sleeping = a
        .send_request(
            "tools/call",
            json!({"name": "call_tool", "_meta": {"progressToken": "nap"},
                   "arguments": {"name": "f__sleep", "arguments": {"ms": 20000}}}),
        )
        .await;
    // In flight at the hub once its first progress (of ten) comes back: killed sooner, the
    // relay may see the hub gone before it reads the call, which then goes to the new hub
    // and runs there, as it should.
    loop {
        let message = a.next().await;
        if message["method"] == "notifications/progress" {
            break;
        }
        assert!(
            message.get("method").is_some(),
            "before any progress: {message}"
        );
    }
    assert!(os::send(first, os::Signal::Kill));
    let cut = a.response(sleeping).await;
    assert_eq!(cut["result"]["isError"], true, "{cut}");
    assert!(result_text(&cut).contains("hub"), "{cut}");
    // The next requests go to a new hub, and the list is the one the client had.
    assert_eq!(tool_names(&mut a).await, before);
    let answer = echo(&mut a, "f__echo").await;
    assert!(result_text(&answer).contains("hello"), "{answer}");
    let now = hubs(&config);
    assert_eq!(now.len(), 1, "{now:?}");
    assert_ne!(now[0], first);
    assert!(is_gone(first));
    a.no_strays().await;
    a.close().await;
    eventually("the new hub leaves", async || hubs(&config).is_empty()).await;
}

/// A grace that outlasts the test's steps: a hub must still run when it is killed.
const GRACE: &str = "hub_grace_sec = 600";

/// Stops the hubs of `config` when dropped, so a test that fails leaves no hub with a long
/// grace behind.
struct HubsStopped(PathBuf);

impl Drop for HubsStopped {
    fn drop(&mut self) {
        for hub in hubs(&self.0) {
            os::send(hub, os::Signal::Term);
        }
    }
}

/// Stops the hubs of `config` (SIGTERM: they remove their sockets and stop their servers).
async fn stop_hubs(config: &Path) {
    for hub in hubs(config) {
        os::send(hub, os::Signal::Term);
    }
    eventually("the hubs stop", async || hubs(config).is_empty()).await;
}

/// Runs a session, ends it, and kills its hub (which leaves its socket file behind): the
/// socket of a hub that is gone. `config` has a long grace, so the hub is still there.
async fn stale_socket(config: &Path, run: &Path) -> PathBuf {
    let mut a = session(config, run).await;
    let _ = tool_names(&mut a).await;
    let [hub] = hubs(config)[..] else {
        panic!("one hub: {:?}", hubs(config));
    };
    let [socket] = &sockets(run)[..] else {
        panic!("one socket: {:?}", sockets(run));
    };
    let socket = socket.clone();
    // The session is ended first (and waited for), so it does not start a new hub.
    a.close().await;
    assert!(os::send(hub, os::Signal::Kill));
    // Not "its pid is a zombie": its other threads may hold the socket a while longer.
    eventually("the killed hub's socket refuses connections", async || {
        os::refuses_connections(&socket)
    })
    .await;
    assert!(socket.exists(), "a killed hub leaves its socket file");
    socket
}

#[tokio::test]
async fn a_stale_socket_is_replaced() {
    let dir = Dir::new();
    let run = runtime_dir(&dir);
    let marker = format!("stale-{}", dir.path().display());
    let config = config(&dir, "servers.toml", &marker, GRACE);
    let _stopped = HubsStopped(config.clone());
    let socket = stale_socket(&config, &run).await;
    let mut b = session(&config, &run).await;
    select(&mut b, &["f__echo"]).await;
    let answer = echo(&mut b, "f__echo").await;
    assert!(result_text(&answer).contains("hello"), "{answer}");
    assert_eq!(hubs(&config).len(), 1);
    assert_eq!(sockets(&run), [socket]);
    b.close().await;
    stop_hubs(&config).await;
}

#[tokio::test]
async fn a_session_that_joins_a_hub_on_its_way_out_starts_on_the_next() {
    let dir = Dir::new();
    let run = runtime_dir(&dir);
    let marker = format!("leaving-{}", dir.path().display());
    let config = config(&dir, "servers.toml", &marker, "hub_grace_sec = 0");
    let a = session(&config, &run).await;
    let [socket] = &sockets(&run)[..] else {
        panic!("one socket: {:?}", sockets(&run));
    };
    let socket = socket.clone();
    a.close().await;
    eventually("the hub leaves", async || hubs(&config).is_empty()).await;
    // A hub leaving (its grace over, or killed) as a session connects: the session's
    // `initialize` is taken and never answered.
    let leaving = os::goes_away_on_first_request(&socket);
    let mut b = session(&config, &run).await;
    leaving.join().expect("the leaving hub's thread");
    let answer = b.call_through("f__echo", json!({"said": "hello"})).await;
    assert!(result_text(&answer).contains("hello"), "{answer}");
    assert_eq!(hubs(&config).len(), 1);
    b.no_strays().await;
    b.close().await;
    eventually("the new hub leaves", async || hubs(&config).is_empty()).await;
}

#[tokio::test]
async fn a_socket_owned_by_another_user_is_refused() {
    let dir = Dir::new();
    let run = runtime_dir(&dir);
    let marker = format!("foreign-{}", dir.path().display());
    let config = config(&dir, "servers.toml", &marker, GRACE);
    let _stopped = HubsStopped(config.clone());
    let socket = stale_socket(&config, &run).await;
    if let Err(err) = os::chown(&socket, 65534) {
        eprintln!("skipping: cannot give the socket to another user ({err}); needs root");
        return;
    }
    let stderr = dir.file("stderr.txt");
    let file = std::fs::File::create(&stderr).expect("stderr file");
    let mut b = session_with(&config, &run, |c| {
        c.stderr(file);
    })
    .await;
    // The session runs alone, and says why.
    let answer = b.call_through("f__echo", json!({})).await;
    assert_eq!(answer["result"]["isError"], false, "{answer}");
    assert!(hubs(&config).is_empty(), "no hub over a foreign socket");
    let log = std::fs::read_to_string(&stderr).expect("stderr");
    assert_contains_all(&log, &["owned by user 65534"]);
    b.close().await;
}

#[tokio::test]
async fn two_configs_get_two_hubs() {
    let dir = Dir::new();
    let run = runtime_dir(&dir);
    let marker = format!("two-{}", dir.path().display());
    let one = config(&dir, "one.toml", &marker, "hub_grace_sec = 0");
    let two = config(&dir, "two.toml", &marker, "hub_grace_sec = 0");
    let mut a = session(&one, &run).await;
    let mut b = session(&two, &run).await;
    for client in [&mut a, &mut b] {
        let _ = tool_names(client).await;
    }
    assert_eq!(hubs(&one).len(), 1);
    assert_eq!(hubs(&two).len(), 1);
    assert_eq!(sockets(&run).len(), 2);
    a.close().await;
    b.close().await;
    eventually("both hubs leave", async || {
        hubs(&one).is_empty() && hubs(&two).is_empty()
    })
    .await;
}

/// A hub of another build (an older version still serving its sessions after an upgrade)
/// is never joined: a session of this build says so and starts its own hub, and the
/// sessions of both go on. A build is its version and its file's path, size and time, so
/// the binary copied elsewhere is another build.
#[tokio::test]
async fn a_hub_of_another_build_is_not_joined_and_the_session_says_so() {
    let dir = Dir::new();
    let run = runtime_dir(&dir);
    let marker = format!("builds-{}", dir.path().display());
    let config = config(&dir, "servers.toml", &marker, "hub_grace_sec = 0");
    let older = dir.file("older-mcp-defer");
    std::fs::copy(bin_under_test(), &older).expect("copy the binary");
    let older_hubs = || hubs_of(&older.to_string_lossy(), &config).len();
    let mut old = RawClient::start_program(&older, &config, |c| {
        c.env("XDG_RUNTIME_DIR", &run).env("MCP_DEFER_HUB", "on");
    });
    handshake(&mut old).await;
    let _ = tool_names(&mut old).await;
    assert_eq!(older_hubs(), 1, "the older build runs its hub");
    let stderr = dir.file("stderr.txt");
    let file = std::fs::File::create(&stderr).expect("stderr file");
    let mut new = session_with(&config, &run, |c| {
        c.stderr(file);
    })
    .await;
    for client in [&mut old, &mut new] {
        let answer = client.call_through("f__echo", json!({"said": "hi"})).await;
        assert_eq!(answer["result"]["isError"], false, "{answer}");
    }
    assert_eq!(hubs(&config).len(), 1, "this build's own hub");
    assert_eq!(older_hubs(), 1, "the older hub still serves its session");
    assert_eq!(sockets(&run).len(), 2);
    let log = std::fs::read_to_string(&stderr).expect("stderr");
    assert_contains_all(
        &log,
        &["a hub of another mcp-defer build runs for this config; starting one of this build"],
    );
    old.close().await;
    new.close().await;
    eventually("both hubs leave", async || {
        hubs(&config).is_empty() && older_hubs() == 0
    })
    .await;
}

#[tokio::test]
async fn a_server_with_share_session_keeps_the_sessions_of_its_config_alone() {
    let dir = Dir::new();
    let run = runtime_dir(&dir);
    let marker = format!("session-{}", dir.path().display());
    let toml = format!(
        "[settings]\nhub_grace_sec = 0\n{}",
        fixture("f", &["--name", &marker], "share = \"session\"")
    );
    let config = dir.file("servers.toml");
    std::fs::write(&config, toml).expect("write config");
    let config = config.canonicalize().expect("config path");
    let mut a = session(&config, &run).await;
    let mut b = session(&config, &run).await;
    for client in [&mut a, &mut b] {
        let answer = client.call_through("f__echo", json!({})).await;
        assert_eq!(answer["result"]["isError"], false, "{answer}");
    }
    assert!(hubs(&config).is_empty());
    assert!(sockets(&run).is_empty());
    assert_eq!(running(FIXTURE, Path::new(&marker)).len(), 2);
    a.close().await;
    b.close().await;
}

/// One soak session's tally: what it sent, how its answers came back.
#[derive(Debug, Default)]
struct Tally {
    sent: u64,
    /// Calls cut because the hub died under them (the error names the hub).
    cut: u64,
}

impl Tally {
    fn add(&mut self, session: Tally) {
        self.sent += session.sent;
        self.cut += session.cut;
    }
}

/// A session of the soak: joins the hub, keeps [`SOAK_IN_FLIGHT`] calls in flight for
/// `life`, then drains. Every request must be answered once: with its own number back (or a
/// nap's success), or, when the hub died under it, with an error naming the hub; nothing
/// else, and no answer to an id it never sent.
async fn soak_session(config: PathBuf, run: PathBuf, first: u64, life: Duration) -> Tally {
    let mut client = session(&config, &run).await;
    let mut pending = std::collections::HashMap::new();
    let mut tally = Tally::default();
    let stop = Instant::now() + life;
    loop {
        while Instant::now() < stop && pending.len() < SOAK_IN_FLIGHT {
            let n = first + tally.sent;
            tally.sent += 1;
            // Every fourth call naps, so some are in flight when the hub is killed.
            let naps = n.is_multiple_of(4);
            let (tool, arguments) = if naps {
                ("f__sleep", json!({"ms": 250}))
            } else {
                ("f__echo", json!({"n": n}))
            };
            client
                .send(&json!({"jsonrpc": "2.0", "id": n, "method": "tools/call",
                    "params": {"name": "call_tool",
                               "arguments": {"name": tool, "arguments": arguments}}}))
                .await;
            pending.insert(n, naps);
        }
        if pending.is_empty() {
            break;
        }
        let Some(message) = client.next_within(DEADLINE).await else {
            panic!("nothing for {DEADLINE:?}; unanswered: {pending:?}");
        };
        if message.get("method").is_some() {
            continue;
        }
        let id = message["id"].as_u64().unwrap_or(u64::MAX);
        let Some(naps) = pending.remove(&id) else {
            panic!("a second answer, or one to an id never sent: {message}");
        };
        if message["result"]["isError"] == false {
            if naps {
                continue;
            }
            let text = result_text(&message);
            assert!(
                text.contains(&format!("\"n\":{id}")),
                "{id} got another answer: {message}"
            );
        } else {
            assert!(
                result_text(&message).contains("hub"),
                "an error that is not the hub dying: {message}"
            );
            tally.cut += 1;
        }
    }
    client.no_strays().await;
    client.close().await;
    tally
}

/// Calls each soak session keeps in flight.
const SOAK_IN_FLIGHT: usize = 4;

/// Issue 29's "nothing lost": sessions come and go through one hub while the hub is killed
/// twice; every request of every session is answered once (its own echo, or an error naming
/// the hub for a call the dead hub held), and the servers end as one process. `SOAK_SECS`
/// lengthens it (default 9).
#[tokio::test]
async fn sessions_coming_and_going_lose_nothing_while_the_hub_is_killed_twice() {
    let secs: u64 = (std::env::var("SOAK_SECS").ok())
        .and_then(|s| s.parse().ok())
        .unwrap_or(9);
    let dir = Dir::new();
    let run = runtime_dir(&dir);
    let marker = format!("soak-{}", dir.path().display());
    let config = config(&dir, "servers.toml", &marker, GRACE);
    let _stopped = HubsStopped(config.clone());
    let started = Instant::now();
    let end = started + Duration::from_secs(secs);
    let kills_at = [
        started + end.duration_since(started) / 3,
        started + end.duration_since(started) * 2 / 3,
    ];
    let mut sessions = tokio::task::JoinSet::new();
    let mut killed = Vec::new();
    let mut opened = 0u64;
    let mut total = Tally::default();
    while Instant::now() < end {
        // Three sessions at a time, each living 0.6, 1.1 or 1.6 s, so joins and leaves overlap.
        while sessions.len() < 3 {
            let life = Duration::from_millis(600 + (opened * 500) % 1500);
            sessions.spawn(soak_session(
                config.clone(),
                run.clone(),
                opened * 1_000_000,
                life,
            ));
            opened += 1;
        }
        if let Some(at) = kills_at.get(killed.len())
            && Instant::now() >= *at
            && let [hub] = hubs(&config)[..]
        {
            assert!(os::send(hub, os::Signal::Kill));
            killed.push(hub);
        }
        if let Ok(Some(done)) =
            tokio::time::timeout(Duration::from_millis(50), sessions.join_next()).await
        {
            total.add(done.expect("a soak session panicked"));
        }
    }
    while let Some(done) = sessions.join_next().await {
        total.add(done.expect("a soak session panicked"));
    }
    assert_eq!(killed.len(), 2, "the hub was killed twice: {killed:?}");
    // One hub now, a new one, and one server process under it.
    let now = hubs(&config);
    assert_eq!(now.len(), 1, "{now:?}");
    assert!(!killed.contains(&now[0]));
    eventually("one server process", async || {
        running(FIXTURE, Path::new(&marker)).len() == 1
    })
    .await;
    eprintln!(
        "hub soak: {opened} sessions, {} calls, the hub killed twice, {} calls cut by a dead hub",
        total.sent, total.cut
    );
}
