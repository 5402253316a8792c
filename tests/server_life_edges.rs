//! The edges of a server's life (DESIGN.md 7b), with real fixture processes: parallel
//! first calls to a lazy server, calls that arrive as `idle_stop_sec` fires, calls cut by a
//! reload, and progress that must arrive whole and before the result.

use std::path::Path;
use std::time::Duration;

use mcp_defer::config::Config;
use mcp_defer::downstream::{CallOptions, Pool, ProgressRoute, ServerState};
use rmcp::model::{CallToolRequestParams, NumberOrString, ProgressToken};
use serde_json::json;
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use crate::support::session::*;
use crate::support::wait::eventually;
use crate::support::{
    Dir, FIXTURE, assert_contains_all, fixture, fixture_with_pids, recorded_calls, running,
};

/// Bounds a broken build; not what the tests measure.
const DEADLINE: Duration = Duration::from_secs(30);

fn config(toml: &str) -> Config {
    Config::parse(toml, Path::new("servers.toml")).expect("valid config")
}

fn request(tool: &str, args: serde_json::Value) -> CallToolRequestParams {
    let mut params = CallToolRequestParams::new(tool.to_owned());
    params.arguments = args.as_object().cloned();
    params
}

async fn wait_state(pool: &Pool, what: &str, done: impl Fn(&ServerState) -> bool) {
    let mut watch = pool.get(0).expect("server").watch();
    tokio::time::timeout(DEADLINE, watch.wait_for(|s| done(s)))
        .await
        .unwrap_or_else(|_| panic!("never: {what}"))
        .expect("supervisor alive");
}

/// Claude Code calls tools in parallel: the first calls to a lazy server that is not
/// running all join the one start and are answered by the server.
#[tokio::test]
async fn parallel_first_calls_to_a_lazy_server_all_wait_for_its_start() {
    let dir = Dir::new();
    let pids = dir.file("fx.pids");
    dir.config(&fixture_with_pids("fx", &pids, "start = \"lazy\""));
    let cache = dir.file("cache");
    let session = Session::start_with(&dir.file("servers.toml"), |command| {
        command.env("MCP_DEFER_CACHE_DIR", &cache);
    })
    .await;
    // No cached list yet: started once to list, then stopped until the first call.
    let found = structured(&session.call("search_tools", json!({"query": "echo"})).await);
    assert!(found.to_string().contains("fx__echo"), "{found:#}");
    eventually("the listing run stops", async || {
        running(FIXTURE, &pids).is_empty()
    })
    .await;

    let mut calls = tokio::task::JoinSet::new();
    for i in 0..24 {
        let peer = session.client.peer().clone();
        calls.spawn(async move {
            // Spread over the start (tens of ms): the later ones find it `Starting`.
            tokio::time::sleep(Duration::from_millis(2 * i)).await;
            let said = format!("caller-{i}");
            let result = peer
                .call_tool(request("fx__echo", json!({ "text": said })))
                .await
                .unwrap_or_else(|e| panic!("tools/call: {e}"));
            (said, result)
        });
    }
    let results = calls.join_all().await;
    let failed: Vec<String> = results
        .iter()
        .filter(|(said, result)| result.is_error == Some(true) || !text(result).contains(said))
        .map(|(said, result)| format!("{said}: {}", text(result)))
        .collect();
    assert!(
        failed.is_empty(),
        "{} of 24 parallel first calls failed: {failed:#?}",
        failed.len()
    );
    session.close().await;
}

/// Calls spaced around `idle_stop_sec`: one that arrives as the idle stop fires either
/// keeps the server or starts it again; none is cut by the stop.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_call_as_the_idle_stop_fires_is_answered() {
    let config = config(&fixture("fx", &[], "idle_stop_sec = 0.1"));
    let (pool, _events) = Pool::start(&config, CancellationToken::new());
    wait_state(&pool, "ready", |s| matches!(s, ServerState::Ready { .. })).await;
    let fx = pool.get(0).expect("fx").clone();
    let mut failed = Vec::new();
    let runs = 60u64;
    for i in 0..runs {
        // 98 to 102 ms after the last call ended: on the timer ticks the stop fires at.
        tokio::time::sleep(Duration::from_millis(98 + i % 5)).await;
        match fx
            .call(request("echo", json!({"i": i})), CallOptions::default())
            .await
        {
            Ok(result) if result.is_error != Some(true) => {}
            other => failed.push(format!("{i}: {other:?}")),
        }
    }
    assert!(
        failed.is_empty(),
        "{} of {runs} calls near the idle stop failed: {failed:#?}",
        failed.len()
    );
    pool.shutdown().await;
}

/// The fixture's `sleep` with `ms = 0` sends its ten progress notifications and its result
/// back to back: every one of them reaches the call's route, in order, before the call
/// returns, run after run (the multi-thread runtime is `serve --http`'s).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_last_progress_is_never_lost() {
    let config = config(&fixture("fx", &[], ""));
    let (pool, _events) = Pool::start(&config, CancellationToken::new());
    wait_state(&pool, "ready", |s| matches!(s, ServerState::Ready { .. })).await;
    let fx = pool.get(0).expect("fx");
    let runs = 200;
    let mut lost = Vec::new();
    for run in 0..runs {
        let (tx, mut rx) = mpsc::unbounded_channel();
        let client_token = ProgressToken(NumberOrString::Number(run));
        let options = CallOptions {
            progress: Some(ProgressRoute {
                tx,
                client_token: client_token.clone(),
            }),
            ..CallOptions::default()
        };
        let result = fx
            .call(request("sleep", json!({"ms": 0})), options)
            .await
            .expect("sleep");
        assert_eq!(result.is_error, Some(false), "{result:?}");
        // The route is gone with the call: whatever was delivered is in the channel now.
        let mut seen = Vec::new();
        while let Ok(progress) = rx.try_recv() {
            assert_eq!(progress.progress_token, client_token);
            seen.push(progress.progress);
        }
        let expected: Vec<f64> = (1..=10).map(f64::from).collect();
        if seen != expected {
            lost.push(format!("run {run}: {seen:?}"));
        }
    }
    assert!(
        lost.is_empty(),
        "{} of {runs} calls lost or reordered progress: {lost:#?}",
        lost.len()
    );
    pool.shutdown().await;
}

fn save(path: &Path, text: &str) {
    let tmp = path.with_extension("toml.tmp");
    std::fs::write(&tmp, text).expect("write temp");
    std::fs::rename(&tmp, path).expect("rename over servers.toml");
}

/// A reload that restarts a server tells its call in flight what happened, not that the
/// whole proxy is going away; the next call goes to the restarted server.
#[tokio::test]
async fn a_call_cut_by_a_reload_is_told_the_server_restarted() {
    let dir = Dir::new();
    let calls = dir.file("calls");
    let calls_arg = calls.to_string_lossy().into_owned();
    let fx = |instructions| {
        fixture(
            "fx",
            &["--instructions", instructions, "--record-calls", &calls_arg],
            "",
        )
    };
    let path = dir.config(&fx("one"));
    let session = Session::start(&path).await;
    let echoed = session.call("fx__echo", json!({"text": "before"})).await;
    assert!(text(&echoed).contains("before"), "{echoed:?}");

    let peer = session.client.peer().clone();
    let cut = tokio::spawn(async move {
        peer.call_tool(request("fx__sleep", json!({"ms": 20_000})))
            .await
            .unwrap_or_else(|e| panic!("tools/call: {e}"))
    });
    // Once the call reached the server, its table changes: the reload restarts it.
    eventually("the sleep reaches the server", async || {
        recorded_calls(&calls, "sleep") > 0
    })
    .await;
    save(&path, &fx("two"));
    let result = tokio::time::timeout(DEADLINE, cut)
        .await
        .expect("the cut call is answered")
        .expect("call task");
    let said = text(&result);
    assert_eq!(result.is_error, Some(true), "{said}");
    assert_contains_all(
        &said,
        &["restarted because its entry in the config file changed"],
    );
    assert!(!said.contains("shutting down"), "{said}");
    let again = session.call("fx__echo", json!({"text": "after"})).await;
    assert!(text(&again).contains("after"), "{again:?}");
    session.close().await;
}

/// Longer than anything these tests do on a loaded machine, far shorter than a hold or a
/// slow start they tell apart: a bound on an outcome, not a timing.
const NOT_HELD: Duration = Duration::from_secs(30);

/// A client that names itself in its handshake and does nothing else.
#[derive(Clone)]
struct Named(&'static str);

impl rmcp::ClientHandler for Named {
    fn get_info(&self) -> rmcp::model::ClientConfig {
        let mut info = rmcp::model::ClientConfig::default();
        info.protocol_version = rmcp::model::ProtocolVersion::V_2025_06_18;
        info.client_info = rmcp::model::Implementation::new(self.0, "0.171.0");
        info
    }
}

/// Codex never re-lists while a `select_tools` result is held: by its `clientInfo.name`
/// it is not held at all. The hold here is a minute (`relist_wait_ms`' most), so a held
/// select is told from an unheld one by a bound no load comes near, not by a timing.
#[tokio::test]
async fn a_client_known_not_to_relist_is_never_held() {
    use rmcp::ServiceExt;
    let dir = Dir::new();
    let path = dir.config(&format!(
        "[settings]\nrelist_wait_ms = 60000\n\n{}",
        fixture("fx", &[], "")
    ));
    let mut command = tokio::process::Command::new(crate::support::BIN);
    command.arg("serve").arg("--config").arg(&path);
    let (transport, _) = rmcp::transport::TokioChildProcess::builder(command)
        .spawn()
        .expect("spawn mcp-defer");
    let client = Named("codex-mcp-client")
        .serve(transport)
        .await
        .expect("handshake");
    client.list_all_tools().await.expect("tools/list");
    let select = client.call_tool(request("select_tools", json!({"names": ["fx__add"]})));
    let selected = tokio::time::timeout(NOT_HELD, select)
        .await
        .expect("select_tools was held for a client known not to re-list")
        .expect("select_tools");
    assert_ne!(selected.is_error, Some(true), "{selected:?}");
    let _ = client.cancel().await;
}

/// With a server that takes two minutes to start, a call to a tool of a server that is
/// ready goes at once, directly and through `call_tool`: only what needs the slow server
/// waits for it. Waiting would take minutes; the bound is far from both.
#[tokio::test]
async fn the_first_call_to_a_ready_server_does_not_wait_for_the_slowest() {
    let dir = Dir::new();
    let path = dir.config(&format!(
        "{}{}",
        fixture("fx", &[], ""),
        fixture(
            "slow",
            &["--slow-start-ms", "120000"],
            "startup_timeout_sec = 300"
        )
    ));
    let session = Session::start(&path).await;
    let direct = tokio::time::timeout(NOT_HELD, session.call("fx__echo", json!({"text": "early"})))
        .await
        .expect("a direct call waited for the slow server");
    assert!(text(&direct).contains("early"), "{direct:?}");
    let meta = session.call_through("fx__add", json!({"a": 1, "b": 2}));
    let meta = tokio::time::timeout(NOT_HELD, meta)
        .await
        .expect("call_tool waited for the slow server");
    assert!(text(&meta).contains('3'), "{meta:?}");
    session.close().await;
}

/// Issue 35 item 11: a 1 MB task id came back whole in `tasks/get`'s error. The error
/// still names the id (its start) and the fix, in a few hundred bytes.
#[tokio::test]
async fn an_unknown_task_id_is_echoed_cut_short() {
    let dir = Dir::new();
    let path = dir.config(&fixture("fx", &[], ""));
    let mut raw = crate::support::raw::RawClient::start(&path);
    raw.handshake("2025-11-25").await;
    // A server that is not configured: the id stops here (a configured one would be sent
    // on to its server, whose error is its own).
    let long_id = format!("nosuch:{}", "7".repeat(1 << 20));
    let answer = raw.request("tasks/get", json!({"taskId": long_id})).await;
    let message = answer["error"]["message"].as_str().unwrap_or_default();
    assert!(
        message.starts_with("Unknown task \"nosuch:777") && message.contains("bytes"),
        "{}",
        &answer.to_string()[..answer.to_string().len().min(600)]
    );
    assert!(
        answer.to_string().len() < 1024,
        "the error echoes {} bytes",
        answer.to_string().len()
    );
}
