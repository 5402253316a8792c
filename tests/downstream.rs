//! The downstream pool through its library API, against real fixture servers: routing,
//! progress, cancellation, timeouts, crashes mid-call, restarts and `list_changed`.

use std::path::Path;
use std::time::Duration;

use mcp_defer::config::Config;
use mcp_defer::downstream::{
    CallOptions, DownstreamError, Event, Pool, ProgressRoute, ServerState,
};
use rmcp::model::{CallToolRequestParams, ProgressToken};
use serde_json::{Value, json};
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use crate::support::wait::eventually;
use crate::support::{Dir, assert_contains_all, fixture, recorded_calls};

const WAIT: Duration = Duration::from_secs(20);

fn config(toml: &str) -> Config {
    Config::parse(toml, Path::new("servers.toml")).expect("valid config")
}

fn request(tool: &str, args: Value) -> CallToolRequestParams {
    let mut params = CallToolRequestParams::new(tool.to_owned());
    params.arguments = args.as_object().cloned();
    params
}

async fn ready(pool: &Pool, index: usize) {
    let handle = pool.get(index).expect("server");
    let mut watch = handle.watch();
    tokio::time::timeout(
        WAIT,
        watch.wait_for(|s| matches!(s, ServerState::Ready { .. })),
    )
    .await
    .expect("ready in time")
    .expect("supervisor alive");
}

async fn next_tools(events: &mut mpsc::UnboundedReceiver<Event>) -> Vec<String> {
    let Event::Tools { tools, .. } = tokio::time::timeout(WAIT, events.recv())
        .await
        .expect("event in time")
        .expect("events open")
    else {
        panic!("expected a tool list first");
    };
    tools.iter().map(|t| t.name().to_owned()).collect()
}

#[tokio::test]
async fn calls_return_the_downstream_result_unchanged() {
    let config = config(&fixture("fx", &["--instructions", "Use echo to test."], ""));
    let (pool, mut events) = Pool::start(&config, CancellationToken::new());
    let Some(Event::Tools { instructions, .. }) = events.recv().await else {
        panic!("expected a tool list first");
    };
    assert_eq!(instructions.as_deref(), Some("Use echo to test."));
    ready(&pool, 0).await;
    let fx = pool.get(0).expect("fx");

    let echoed = fx
        .call(
            request("echo", json!({"b": [1, 2], "a": "x"})),
            CallOptions::default(),
        )
        .await
        .expect("echo");
    assert_eq!(
        echoed.structured_content,
        Some(json!({"b": [1, 2], "a": "x"}))
    );

    let sum = fx
        .call(
            request("add", json!({"a": 2, "b": 40})),
            CallOptions::default(),
        )
        .await
        .expect("add");
    assert_eq!(sum.structured_content, Some(json!({"sum": 42.0})));

    let failed = fx
        .call(request("fail", json!({})), CallOptions::default())
        .await
        .expect("an error result is still a result");
    assert_eq!(failed.is_error, Some(true));

    // A name the running server does not list is never forwarded (issue 24 f).
    let unknown = fx
        .call(request("nope", json!({})), CallOptions::default())
        .await;
    assert!(
        matches!(unknown, Err(DownstreamError::NotListed { .. })),
        "{unknown:?}"
    );
    pool.shutdown().await;
}

#[tokio::test]
async fn progress_reaches_the_call_under_the_clients_token() {
    let config = config(&fixture("fx", &[], ""));
    let (pool, _events) = Pool::start(&config, CancellationToken::new());
    ready(&pool, 0).await;
    let (tx, mut rx) = mpsc::unbounded_channel();
    let params = request("sleep", json!({"ms": 200}));
    let options = CallOptions {
        progress: Some(ProgressRoute {
            tx,
            client_token: ProgressToken(rmcp::model::NumberOrString::String("client-7".into())),
        }),
        ..CallOptions::default()
    };
    let result = pool
        .get(0)
        .expect("fx")
        .call(params, options)
        .await
        .expect("sleep");
    assert_eq!(result.is_error, Some(false));
    let mut seen = Vec::new();
    while let Ok(p) = rx.try_recv() {
        seen.push(p);
    }
    assert!(!seen.is_empty(), "no progress forwarded");
    for p in &seen {
        assert_eq!(
            p.progress_token,
            ProgressToken(rmcp::model::NumberOrString::String("client-7".into()))
        );
    }
    pool.shutdown().await;
}

#[tokio::test]
async fn cancel_and_timeout_end_the_call_and_keep_the_server() {
    let dir = Dir::new();
    let calls = dir.file("calls");
    let toml = fixture(
        "fx",
        &["--record-calls", &calls.to_string_lossy()],
        "tool_timeout_sec = 0.5",
    );
    let config = config(&toml);
    let (pool, _events) = Pool::start(&config, CancellationToken::new());
    ready(&pool, 0).await;
    let fx = pool.get(0).expect("fx").clone();

    let cancel = CancellationToken::new();
    let options = CallOptions {
        cancel: cancel.clone(),
        ..CallOptions::default()
    };
    let call = tokio::spawn({
        let fx = fx.clone();
        async move {
            fx.call(request("sleep", json!({"ms": 60000})), options)
                .await
        }
    });
    // Cancelled in flight: once the server has the call.
    eventually("the sleep reaches the server", async || {
        recorded_calls(&calls, "sleep") > 0
    })
    .await;
    cancel.cancel();
    let cancelled = tokio::time::timeout(WAIT, call)
        .await
        .expect("prompt")
        .expect("join");
    assert!(
        matches!(cancelled, Err(DownstreamError::Cancelled)),
        "{cancelled:?}"
    );

    let timed_out = fx
        .call(
            request("sleep", json!({"ms": 60000})),
            CallOptions::default(),
        )
        .await;
    match timed_out {
        Err(DownstreamError::Timeout {
            server,
            tool,
            after,
        }) => {
            assert_eq!((server.as_str(), tool.as_str()), ("fx", "sleep"));
            assert_eq!(after, Duration::from_millis(500));
        }
        other => panic!("expected a timeout, got {other:?}"),
    }
    // The server is still there for the next call.
    fx.call(request("echo", json!({})), CallOptions::default())
        .await
        .expect("echo after cancel and timeout");
    pool.shutdown().await;
}

#[tokio::test]
async fn a_crash_mid_call_fails_that_call_and_the_server_restarts() {
    let config = config(&fixture("fx", &[], ""));
    let (pool, mut events) = Pool::start(&config, CancellationToken::new());
    ready(&pool, 0).await;
    let fx = pool.get(0).expect("fx").clone();
    let mut watch = fx.watch();

    let crashed = tokio::time::timeout(
        WAIT,
        fx.call(request("crash", json!({})), CallOptions::default()),
    )
    .await
    .expect("a call on a dying server never hangs");
    match crashed {
        Err(DownstreamError::Disconnected { server, cause }) => {
            assert_eq!(server, "fx");
            assert_contains_all(&cause, &["exited with code 3"]);
            // The model reads this cause: the child's stderr stays in the state and the log.
            assert!(!cause.contains("crashing on request"), "{cause}");
        }
        other => panic!("expected a disconnect, got {other:?}"),
    }
    // Restarting, then Ready again with the same tools re-sent to the catalog.
    let restarting = tokio::time::timeout(
        WAIT,
        watch.wait_for(|s| matches!(s, ServerState::Restarting { attempt: 1, .. })),
    )
    .await
    .ok()
    .and_then(|r| r.ok().map(|s| s.clone()));
    if let Some(state) = restarting {
        assert!(
            state
                .stderr()
                .is_some_and(|s| s.contains("crashing on request")),
            "{state:?}"
        );
    }
    assert_eq!(next_tools(&mut events).await.len(), 7);
    assert_eq!(next_tools(&mut events).await.len(), 7);
    ready(&pool, 0).await;
    fx.call(request("echo", json!({})), CallOptions::default())
        .await
        .expect("echo after restart");
    pool.shutdown().await;
}

#[tokio::test]
async fn downstream_list_changed_resends_the_list() {
    let config = config(&fixture("fx", &[], "disabled_tools = [\"crash\"]"));
    let (pool, mut events) = Pool::start(&config, CancellationToken::new());
    let first = next_tools(&mut events).await;
    assert_eq!(first, ["echo", "add", "sleep", "grow", "shrink", "fail"]);
    ready(&pool, 0).await;
    let fx = pool.get(0).expect("fx");
    fx.call(
        request("grow", json!({"name": "extra"})),
        CallOptions::default(),
    )
    .await
    .expect("grow");
    let grown = next_tools(&mut events).await;
    assert_eq!(grown.last().map(String::as_str), Some("extra"));
    assert_eq!(
        fx.state(),
        ServerState::Ready {
            tools: 7,
            ready_after: match fx.state() {
                ServerState::Ready { ready_after, .. } => ready_after,
                _ => Duration::ZERO,
            }
        }
    );
    fx.call(
        request("shrink", json!({"name": "echo"})),
        CallOptions::default(),
    )
    .await
    .expect("shrink");
    assert_eq!(
        next_tools(&mut events).await,
        ["add", "sleep", "grow", "shrink", "fail", "extra"]
    );
    pool.shutdown().await;
}

#[tokio::test]
async fn a_disabled_server_is_not_ready_for_calls() {
    let config = config(&fixture("fx", &[], "enabled = false"));
    let (pool, _events) = Pool::start(&config, CancellationToken::new());
    assert_eq!(pool.get(0).expect("fx").state(), ServerState::Disabled);
    let err = pool
        .get(0)
        .expect("fx")
        .call(request("echo", json!({})), CallOptions::default())
        .await;
    match err {
        Err(e @ DownstreamError::NotReady { .. }) => {
            assert_eq!(
                e.to_string(),
                "server 'fx' is not connected (disabled in the config)"
            );
        }
        other => panic!("{other:?}"),
    }
    pool.shutdown().await;
}

/// Issue 10: a server that closes its stdout and keeps running is described by what it did,
/// not by the signal we stop it with ("killed by signal 15").
#[tokio::test]
async fn a_server_that_closes_its_stdout_is_not_reported_as_killed() {
    let list = json!({"tools": [{"name": "t", "inputSchema": {"type": "object"}}]});
    let config = config(&format!(
        "[mcp_servers.quiet]\ncommand = {}\nargs = {}\n",
        crate::support::toml_str(crate::support::FIXTURE),
        crate::support::toml_list(&["--raw-list", &list.to_string(), "--raw-close-stdout"])
    ));
    let (pool, _events) = Pool::start(&config, CancellationToken::new());
    let mut watch = pool.get(0).expect("quiet").watch();
    let state = tokio::time::timeout(
        WAIT,
        watch.wait_for(|s| matches!(s, ServerState::Restarting { .. })),
    )
    .await
    .expect("restarting in time")
    .expect("supervisor alive")
    .clone();
    let cause = state.cause().unwrap_or_default().to_owned();
    assert!(cause.contains("closed its stdout"), "{state:?}");
    assert!(!cause.contains("signal"), "{state:?}");
    pool.shutdown().await;
}
