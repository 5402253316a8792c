//! Soak: requests keep flowing while the servers behind mcp-defer die and come back, a stdio
//! server crashing mid-call and a Streamable HTTP server killed and restarted on its port.
//! Every request gets exactly one answer (the right one: an echo carries its request's
//! number back), none is lost, nothing else is answered (a sentinel ends the run), every
//! `tools/list` extends the one before, no call to a server that never died fails, and
//! mcp-defer's peak RSS is printed. `.ci/run` runs the short form; `SOAK_SECS=600 cargo test soak --
//! --nocapture` the long one.

use std::collections::HashMap;
use std::time::{Duration, Instant};

use mcp_defer::downstream::SplitMix;
use serde_json::{Value, json};

use crate::support::raw::RawClient;
use crate::support::wait::eventually;
use crate::support::{Dir, fixture, free_port, peers};

/// How long requests flow in the short form.
const DEFAULT_SECS: u64 = 12;
/// Requests kept in flight at once.
const IN_FLIGHT: usize = 8;
/// How long the last answers may take once sending stops: a call in flight when its server
/// died is answered at once, and `tool_timeout_sec` bounds the rest.
const DRAIN_WAIT: Duration = Duration::from_secs(20);
/// Ids of the storm's requests start here, apart from the ids `RawClient::request` uses.
const FIRST_ID: u64 = 1_000_000;

/// What a request was, to check its answer.
#[derive(Debug, Clone)]
enum Sent {
    /// An echo: the answer must carry `n` back, or say why the server could not answer.
    Echo {
        n: u64,
    },
    Crash,
    List,
    Search,
}

/// The server an echo goes to: `one` is never killed, `two` crashes on `Sent::Crash`, `ev`
/// (HTTP) is killed and restarted.
fn echo_server(n: u64) -> &'static str {
    ["one", "two", "ev"][(n % 3) as usize]
}

fn request(kind: &Sent, id: u64) -> Value {
    let (method, params) = match kind {
        Sent::Echo { n } => match n % 3 {
            0 => (
                "tools/call",
                json!({"name": "one__echo", "arguments": {"n": n}}),
            ),
            1 => (
                "tools/call",
                json!({"name": "call_tool", "arguments": {"name": "two__echo", "arguments": {"n": n}}}),
            ),
            _ => (
                "tools/call",
                json!({"name": "call_tool", "arguments": {"name": "ev__echo", "arguments": {"message": format!("n={n}")}}}),
            ),
        },
        Sent::Crash => (
            "tools/call",
            json!({"name": "call_tool", "arguments": {"name": "two__crash", "arguments": {}}}),
        ),
        Sent::List => ("tools/list", json!({})),
        Sent::Search => (
            "tools/call",
            json!({"name": "search_tools", "arguments": {"query": "echo the arguments"}}),
        ),
    };
    json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params})
}

/// Peak resident set of a process, in MiB, from `/proc`.
fn peak_rss_mib(pid: u32) -> Option<f64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    let kib: f64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib / 1024.0)
}

#[tokio::test]
async fn every_request_is_answered_once_while_servers_die_and_come_back() {
    let Some(peers) = peers() else { return };
    let secs = std::env::var("SOAK_SECS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(DEFAULT_SECS);
    let port = free_port();
    let mut http = Some(peers.http_everything(port));
    let dir = Dir::with_config(&format!(
        "{}\n{}\n[mcp_servers.ev]\nurl = \"http://127.0.0.1:{port}/mcp\"\ntool_timeout_sec = 10\n",
        fixture("one", &[], "tool_timeout_sec = 10"),
        fixture("two", &[], "tool_timeout_sec = 10"),
    ));
    let mut client = RawClient::legacy(&dir.file("servers.toml")).await;
    let selected = client
        .request(
            "tools/call",
            json!({"name": "select_tools", "arguments": {"names": ["one__echo"]}}),
        )
        .await;
    assert!(selected.to_string().contains("Loaded"), "{selected}");

    let mut rng = SplitMix::new(0x5eed);
    let mut pending: HashMap<u64, Sent> = HashMap::new();
    let mut last_list: Option<Vec<Value>> = None;
    let (mut sent, mut errors, mut kills) = (0u64, 0u64, 0u64);
    // Per kind of request (`one`, `two`, `ev` echoes, `crash`, `list`, `search`): answers
    // and how many of them were errors.
    let mut tally: HashMap<&str, (u64, u64)> = HashMap::new();
    let started = Instant::now();
    let stop_sending = started + Duration::from_secs(secs);
    let mut next_chaos = started + Duration::from_millis(700);
    loop {
        let now = Instant::now();
        // The HTTP server dies and comes back on the same port.
        if now >= next_chaos && now < stop_sending {
            if http.take().is_some() {
                kills += 1;
                next_chaos = now + Duration::from_millis(200 + (rng.sample() * 800.0) as u64);
            } else {
                http = Some(peers.http_everything(port));
                next_chaos = now + Duration::from_millis(500 + (rng.sample() * 1500.0) as u64);
            }
        }
        while now < stop_sending && pending.len() < IN_FLIGHT {
            sent += 1;
            let roll = rng.sample();
            let kind = if roll < 0.03 {
                Sent::Crash
            } else if roll < 0.10 {
                Sent::List
            } else if roll < 0.15 {
                Sent::Search
            } else {
                Sent::Echo { n: sent }
            };
            client.send(&request(&kind, FIRST_ID + sent)).await;
            pending.insert(FIRST_ID + sent, kind);
        }
        if pending.is_empty() && now >= stop_sending {
            break;
        }
        assert!(
            now < stop_sending + DRAIN_WAIT,
            "{} requests never answered: {pending:?}",
            pending.len()
        );
        let Some(message) = client.next_within(DRAIN_WAIT).await else {
            panic!(
                "nothing from mcp-defer for {DRAIN_WAIT:?}; {} requests unanswered: {pending:?}",
                pending.len()
            );
        };
        if message.get("method").is_some() {
            continue;
        }
        let Some(id) = message["id"].as_u64() else {
            panic!("an answer without a request id: {message}");
        };
        let Some(kind) = pending.remove(&id) else {
            panic!("a second answer to request {id}, or one never sent: {message}");
        };
        let is_error = message.get("error").is_some() || message["result"]["isError"] == true;
        errors += u64::from(is_error);
        let name = match &kind {
            Sent::Echo { n } => echo_server(*n),
            Sent::Crash => "crash",
            Sent::List => "list",
            Sent::Search => "search",
        };
        let counts = tally.entry(name).or_default();
        counts.0 += 1;
        counts.1 += u64::from(is_error);
        match kind {
            Sent::Echo { n } if !is_error => {
                let text = message["result"].to_string();
                assert!(
                    text.contains(&format!("\"n\":{n}")) || text.contains(&format!("n={n}")),
                    "request {id} got another request's answer: {message}"
                );
            }
            Sent::List => {
                let tools = message["result"]["tools"]
                    .as_array()
                    .cloned()
                    .unwrap_or_else(|| panic!("tools/list failed: {message}"));
                if let Some(before) = &last_list {
                    assert!(
                        tools.len() >= before.len() && tools[..before.len()] == before[..],
                        "tools/list did not only grow:\nbefore {before:?}\nafter {tools:?}"
                    );
                }
                last_list = Some(tools);
            }
            Sent::Echo { .. } | Sent::Crash | Sent::Search => {}
        }
    }
    // Each request was answered exactly once (the loop panics on a second answer and ends
    // only when none is pending). What may fail is a call to a server that was down: `two`
    // after a crash, `ev` while killed (how many depends on the restart backoff, which grows
    // with each death, so it is printed, not bounded). `one` never dies and the meta tools
    // and `tools/list` are mcp-defer's own, so none of theirs may fail.
    let count = |name: &str| tally.get(name).copied().unwrap_or_default();
    for name in ["one", "list", "search"] {
        let (answered, failed) = count(name);
        assert!(answered > 0, "no {name} request in the storm: {tally:?}");
        assert_eq!(failed, 0, "{name} requests failed in the storm: {tally:?}");
    }
    // Still serving after the storm: the HTTP server is back and reconnected.
    if http.is_none() {
        http = Some(peers.http_everything(port));
    }
    eventually("ev comes back after the storm", async || {
        let echo = client
            .call_through("ev__echo", json!({"message": "after"}))
            .await;
        if echo["result"]["isError"] == true {
            return Err(echo);
        }
        assert!(echo.to_string().contains("after"), "{echo}");
        Ok(())
    })
    .await;
    // Nothing more was answered: no late duplicate, no answer to an id never sent.
    client.no_strays().await;
    let rss = client.pid().and_then(peak_rss_mib).unwrap_or(f64::NAN);
    println!(
        "soak: {sent} requests in {:.1} s ({} with the HTTP server killed {kills} times and stdio crashes), \
         {errors} answered with an error (answered, failed per kind: {tally:?}), 0 lost, 0 answered twice; \
         peak RSS {rss:.1} MiB",
        started.elapsed().as_secs_f64(),
        IN_FLIGHT,
    );
    client.close().await;
    drop(http);
}
