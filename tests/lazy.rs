//! `start = "lazy"` and `idle_stop_sec`, with real fixture processes: a lazy server with a
//! cached list does not run until its first call, its tools are searchable meanwhile; an
//! idle server stops and the next call starts it again. Each test has its own cache dir
//! (`MCP_DEFER_CACHE_DIR`); no secret of the config reaches it.

use std::path::Path;

use serde_json::{Value, json};

use crate::support::session::*;
use crate::support::wait::eventually;
use crate::support::{
    Dir, FIXTURE, fixture, fixture_with_pids, is_gone, read_pids, row, running, stdout,
};

/// The fixture processes with `marker` among their arguments.
fn processes_with(marker: &Path) -> Vec<i32> {
    running(FIXTURE, marker)
}

async fn start(dir: &Dir) -> Session {
    let cache = dir.file("cache");
    Session::start_with(&dir.file("servers.toml"), |command| {
        command.env("MCP_DEFER_CACHE_DIR", &cache);
    })
    .await
}

fn hits(found: &Value) -> Vec<String> {
    (found["tools"].as_array().into_iter().flatten())
        .map(|hit| hit["name"].as_str().unwrap_or_default().to_owned())
        .collect()
}

#[tokio::test]
async fn a_lazy_server_runs_from_its_first_call_and_stops_when_idle() {
    let dir = Dir::new();
    let pids = dir.file("fx.pids");
    dir.config(&fixture_with_pids(
        "fx",
        &pids,
        "start = \"lazy\"\nidle_stop_sec = 1",
    ));

    // First run, no cached list yet: started once to list, then stopped.
    let session = start(&dir).await;
    let found = structured(&session.call("search_tools", json!({"query": "echo"})).await);
    assert!(hits(&found).contains(&"fx__echo".to_owned()), "{found:#}");
    eventually("the listing run stops", async || {
        processes_with(&pids).is_empty()
    })
    .await;
    session.close().await;
    let cached: Vec<_> = std::fs::read_dir(dir.file("cache"))
        .expect("the cache dir was made")
        .filter_map(|e| e.ok())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    assert!(
        cached.len() == 1 && cached[0].starts_with("fx-") && cached[0].ends_with(".json"),
        "{cached:?}"
    );

    // Second run: the tools come from the cache, nothing runs.
    std::fs::remove_file(&pids).expect("remove pid file");
    let session = start(&dir).await;
    let found = structured(&session.call("search_tools", json!({"query": "echo"})).await);
    assert!(hits(&found).contains(&"fx__echo".to_owned()), "{found:#}");
    assert!(
        found.get("unavailable").is_none(),
        "not running is not unavailable: {found:#}"
    );
    assert!(
        processes_with(&pids).is_empty(),
        "a lazy server is not started by a search"
    );
    assert!(!pids.exists());

    // The first call starts it and gets its answer.
    let echoed = session.call("fx__echo", json!({"text": "woken"})).await;
    assert_ne!(echoed.is_error, Some(true), "{echoed:?}");
    assert!(text(&echoed).contains("woken"));
    // (Not asserted alive: on a loaded machine a second may pass, and it may be idle.)
    let first = read_pids(&pids)[0];

    // Idle for `idle_stop_sec`: stopped; its tools stay listed and searchable.
    eventually("the idle server stops", async || is_gone(first)).await;
    let found = structured(&session.call("search_tools", json!({"query": "echo"})).await);
    assert!(hits(&found).contains(&"fx__echo".to_owned()), "{found:#}");
    let through_meta = session
        .call_through("fx__echo", json!({"text": "again"}))
        .await;
    assert!(text(&through_meta).contains("again"), "{through_meta:?}");
    let second = read_pids(&pids)[0];
    assert_ne!(second, first, "started again: a new process");
    session.close().await;

    // `check` says it is not running, with the tools it knows.
    let out = dir
        .command(&["check"])
        .env("MCP_DEFER_CACHE_DIR", dir.file("cache"))
        .output()
        .expect("run check");
    let table = stdout(&out);
    let fx = row(&table, "fx");
    assert_eq!(fx[1], "not running", "{table}");
    assert_eq!(fx[2], "7", "{table}");
}

#[tokio::test]
async fn a_changed_config_is_a_new_cache_entry() {
    // The cache is keyed by the whole config: a lazy server whose arguments changed lists
    // again instead of offering tools it may no longer have.
    let dir = Dir::new();
    let secret = "sk-live-SECRET-4242";
    let extra = format!("start = \"lazy\"\nenv = {{ API_KEY = \"{secret}\" }}");
    let lazy = |args: &[&str]| fixture("fx", args, &extra);
    dir.config(&lazy(&[]));
    let session = start(&dir).await;
    session.call("search_tools", json!({"query": "echo"})).await;
    session.close().await;

    let pids = dir.file("fx.pids");
    dir.config(&lazy(&["--grandchild-pid-file", &pids.to_string_lossy()]));
    let session = start(&dir).await;
    let found = structured(&session.call("search_tools", json!({"query": "echo"})).await);
    assert!(hits(&found).contains(&"fx__echo".to_owned()), "{found:#}");
    eventually("the new config's listing run", async || pids.exists()).await;
    session.close().await;
    let entries: Vec<_> = std::fs::read_dir(dir.file("cache"))
        .expect("cache")
        .filter_map(|e| e.ok())
        .collect();
    assert_eq!(entries.len(), 2, "one list per config");
    for entry in entries {
        let name = entry.file_name().to_string_lossy().into_owned();
        let body = std::fs::read_to_string(entry.path()).expect("read cache file");
        assert!(
            !name.contains(secret) && !body.contains(secret),
            "the config's secret is not written: {name}"
        );
        assert!(body.contains("\"echo\""), "the tool list is: {body}");
    }
}

#[tokio::test]
async fn a_lazy_python_server_answers_its_first_call_from_a_cold_start() {
    // The PyPI `mcp-server-time`: a real server whose start takes the better part of a
    // second, which the first call waits for.
    let Some(peers) = crate::support::peers() else {
        return;
    };
    let dir = Dir::new();
    let time = peers.time.to_string_lossy().into_owned();
    dir.config(&format!(
        "[mcp_servers.time]\ncommand = {}\nstart = \"lazy\"\n",
        crate::support::toml_str(&time)
    ));
    let session = start(&dir).await;
    session.search(json!({"query": "current time"})).await;
    session.close().await;

    let session = start(&dir).await;
    let found = structured(
        &session
            .call(
                "search_tools",
                json!({"query": "convert between time zones"}),
            )
            .await,
    );
    assert!(
        hits(&found).contains(&"time__convert_time".to_owned()),
        "{found:#}"
    );
    let now = session
        .call("time__get_current_time", json!({"timezone": "UTC"}))
        .await;
    assert_ne!(now.is_error, Some(true), "{now:?}");
    assert!(text(&now).contains("\"timezone\": \"UTC\""), "{now:?}");
    session.close().await;
}

/// Issue 24 (e) and (f): the tool cache was 0644 in a 0755 directory, and a tool written
/// into it by hand was listed and its calls forwarded until the server first ran. Now the
/// directory is 0700 (an older one is tightened) and the file 0600; what the config
/// filters out stays out whatever the file says, and a call reaches the server only for a
/// tool the running server listed itself.
#[tokio::test]
async fn the_tool_cache_is_private_and_a_tool_written_into_it_is_never_called() {
    use crate::support::os::{mode, set_mode};
    let dir = Dir::new();
    let cache_home = dir.file("xdg-cache");
    let ours = cache_home.join("mcp-defer");
    std::fs::create_dir_all(&ours).expect("mkdir");
    set_mode(&ours, 0o755); // as an older version left it
    // What reaches the server: each called tool's name, one a line.
    let record = dir.file("calls.txt");
    dir.config(&fixture(
        "fx",
        &["--record-calls", &record.to_string_lossy()],
        "start = \"lazy\"\ndisabled_tools = [\"add\"]",
    ));
    let config = dir.file("servers.toml");
    let start = || {
        Session::start_with(&config, |command| {
            command
                .env_remove("MCP_DEFER_CACHE_DIR")
                .env("XDG_CACHE_HOME", &cache_home);
        })
    };
    let cached = || -> Vec<std::path::PathBuf> {
        std::fs::read_dir(&ours)
            .expect("read cache dir")
            .filter_map(|e| e.ok())
            .map(|e| e.path())
            .filter(|p| p.extension().is_some_and(|x| x == "json"))
            .collect()
    };

    // First run: listed once, cached.
    let session = start().await;
    eventually("the list is cached", async || !cached().is_empty()).await;
    session.close().await;
    let file = cached().pop().expect("one cache file");
    assert_eq!(mode(&ours), 0o700, "the cache directory");
    assert_eq!(mode(&file), 0o600, "{}", file.display());

    // By hand: the disabled `add`, and a tool the server does not have (again after a run
    // that rewrote the file from the server's own list).
    let plant = || {
        let mut body: Value =
            serde_json::from_slice(&std::fs::read(&file).expect("read")).expect("json");
        let tools = body["tools"].as_array_mut().expect("tools");
        tools.retain(|t| t["name"] != "add" && t["name"] != "planted");
        let echo = tools
            .iter()
            .find(|t| t["name"] == "echo")
            .expect("echo cached")
            .clone();
        for name in ["add", "planted"] {
            let mut tool = echo.clone();
            tool["name"] = json!(name);
            tools.push(tool);
        }
        std::fs::write(&file, body.to_string()).expect("write");
    };
    plant();

    let session = start().await;
    let found = structured(&session.call("search_tools", json!({"query": "add"})).await);
    assert!(
        !hits(&found).contains(&"fx__add".to_owned()),
        "a filtered tool from the file: {found:#}"
    );
    let added = session
        .call_through("fx__add", json!({"a": 1, "b": 2}))
        .await;
    assert_eq!(added.is_error, Some(true), "{added:?}");
    assert!(!text(&added).contains('3'), "{added:?}");
    let planted = session.call_through("fx__planted", json!({})).await;
    assert_eq!(planted.is_error, Some(true), "{planted:?}");
    // Refused either way: held by the trust lock (a name the approved server never
    // listed, read from the cache before the server's own list came), or unknown to the
    // server's own list once it came.
    let refused = text(&planted);
    assert!(
        refused.contains("does not list a tool 'planted'")
            || refused.contains("is held: it is a new tool of a server approved before"),
        "{planted:?}"
    );
    // Neither reached the server: a call it answers afterwards is all it recorded (each
    // name is written before the answer, so the file is complete once echo is answered).
    let echoed = session
        .call_through("fx__echo", json!({"message": "hi"}))
        .await;
    assert_ne!(echoed.is_error, Some(true), "{echoed:?}");
    assert_eq!(
        std::fs::read_to_string(&record).unwrap_or_default(),
        "echo\n"
    );
    session.close().await;

    // A task-augmented call (2025-11-25 tasks) of the planted name, the server not started
    // yet, meets the same guard (issue 35 item 13: its own copy was never reached).
    std::fs::remove_file(&record).expect("rm record");
    plant();
    let mut raw = crate::support::raw::RawClient::start_with(&config, |command| {
        command
            .env_remove("MCP_DEFER_CACHE_DIR")
            .env("XDG_CACHE_HOME", &cache_home);
    });
    raw.handshake("2025-11-25").await;
    let tasked = raw
        .request(
            "tools/call",
            json!({"name": "fx__planted", "arguments": {}, "task": {"ttl": 60000}}),
        )
        .await;
    let refused = tasked.get("error").is_some() || tasked["result"]["isError"] == json!(true);
    assert!(refused, "{tasked}");
    let refused = tasked.to_string();
    assert!(
        refused.contains("does not list a tool 'planted'")
            || refused.contains("is held: it is a new tool of a server approved before"),
        "{tasked}"
    );
    let echoed = raw.call_through("fx__echo", json!({"message": "hi"})).await;
    assert!(echoed.get("result").is_some(), "{echoed}");
    assert_eq!(
        std::fs::read_to_string(&record).unwrap_or_default(),
        "echo\n",
        "the task-augmented call of an unlisted tool reached the server"
    );
    raw.close().await;
}
