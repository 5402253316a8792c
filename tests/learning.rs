//! Search that learns from use (issue 21 item 6), through real `mcp-defer serve` processes
//! over stdio with the fixture server: a tool selected and called after a search ranks
//! first for a similar query in the next process; with `learn = false` nothing is written
//! and nothing changes.

use std::path::Path;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::session::{Session, structured};
use crate::util::{Dir, fixture};

/// The tool taught: the same `add` as `other__add`, which ranks before it.
const TAUGHT: &str = "fx__add";
const FIRST_QUERY: &str = "sum of two numbers";
const SIMILAR_QUERY: &str = "the sum of two numbers please";

fn config(dir: &Dir, learn: Option<bool>) -> std::path::PathBuf {
    let settings = learn.map_or_else(String::new, |learn| {
        format!("[settings.search]\nlearn = {learn}\n\n")
    });
    dir.config(&format!(
        "{settings}{}{}",
        fixture("fx", &[], ""),
        fixture("other", &["--name", "other"], "")
    ))
}

async fn serve(config: &Path, data: &Path) -> Session {
    let data = data.to_owned();
    Session::start_with(config, move |c| {
        c.env("MCP_DEFER_DATA_DIR", &data);
    })
    .await
}

/// The qualified names `search_tools` answers, best first.
async fn ranked(session: &Session, query: &str) -> Vec<String> {
    let found = session.search(json!({"query": query})).await;
    (structured(&found)["tools"]
        .as_array()
        .cloned()
        .unwrap_or_default())
    .iter()
    .filter_map(|t| t["name"].as_str().map(str::to_owned))
    .collect()
}

/// The usage file once it has `lines` lines (its writer is a thread of its own), at most
/// 20 s.
fn usage_lines(path: &Path, lines: usize) -> Vec<Value> {
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let text = std::fs::read_to_string(path).unwrap_or_default();
        if text.lines().count() >= lines || Instant::now() > deadline {
            return (text.lines())
                .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}")))
                .collect();
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Searches, selects and calls [`TAUGHT`] in one session.
async fn choose_taught(session: &Session) -> Vec<String> {
    let before = ranked(session, FIRST_QUERY).await;
    let selected = session
        .call("select_tools", json!({"names": [TAUGHT]}))
        .await;
    assert_ne!(selected.is_error, Some(true), "{selected:?}");
    let called = session
        .call(
            "call_tool",
            json!({"name": TAUGHT, "arguments": {"a": 2, "b": 3}}),
        )
        .await;
    assert_ne!(called.is_error, Some(true), "{called:?}");
    before
}

#[tokio::test(flavor = "multi_thread")]
async fn a_tool_chosen_after_a_search_ranks_first_for_a_similar_query_next_time() {
    let dir = Dir::new();
    let config = config(&dir, None);
    let data = dir.file("data");
    let session = serve(&config, &data).await;
    let before = choose_taught(&session).await;
    assert!(
        before.iter().any(|n| n == TAUGHT) && before[0] != TAUGHT,
        "the taught tool is found but not first before any use: {before:?}"
    );
    let file = data.join("usage.jsonl");
    let events = usage_lines(&file, 2);
    session.close().await;
    assert_eq!(events.len(), 2, "a selection and a call: {events:#?}");
    for (event, kind) in events.iter().zip(["selected", "called"]) {
        assert_eq!(event["k"], kind, "{events:#?}");
        assert_eq!(event["q"], FIRST_QUERY);
        assert_eq!(event["tool"], TAUGHT);
        let keys: Vec<&String> = event
            .as_object()
            .map(|o| o.keys().collect())
            .unwrap_or_default();
        assert_eq!(
            keys,
            ["t", "k", "q", "tool"],
            "no arguments, no results: {event}"
        );
    }
    #[cfg(unix)]
    assert_eq!(
        crate::util::os::mode(&file),
        0o600,
        "the usage file is the user's alone"
    );

    // A new process, the same data directory: a similar query puts the tool first.
    let session = serve(&config, &data).await;
    let after = ranked(&session, SIMILAR_QUERY).await;
    assert_eq!(after.first().map(String::as_str), Some(TAUGHT), "{after:?}");
    session.close().await;

    // `mcp-defer search --explain` shows the lift.
    let out = dir
        .command(&["search", SIMILAR_QUERY, "--explain"])
        .env("MCP_DEFER_DATA_DIR", &data)
        .output()
        .unwrap_or_else(|e| panic!("{e}"));
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("use up to +0.70 of the best"), "{text}");
    let taught = (text.lines())
        .find(|l| l.ends_with(TAUGHT))
        .unwrap_or_else(|| panic!("{text}"));
    assert!(taught.trim_start().starts_with("1 "), "{text}");
}

#[tokio::test(flavor = "multi_thread")]
async fn with_learn_off_nothing_is_written_and_the_ranking_stays() {
    let dir = Dir::new();
    let config = config(&dir, Some(false));
    let data = dir.file("data");
    let session = serve(&config, &data).await;
    let before = choose_taught(&session).await;
    session.close().await;
    let session = serve(&config, &data).await;
    let after = ranked(&session, FIRST_QUERY).await;
    let similar = ranked(&session, SIMILAR_QUERY).await;
    session.close().await;
    assert_eq!(after, before, "nothing learnt, nothing changed");
    // Without what was learnt, the similar query does not put the taught tool first
    // either: the lift is what does.
    assert_ne!(
        similar.first().map(String::as_str),
        Some(TAUGHT),
        "{similar:?}"
    );
    assert!(!data.exists(), "learn = false creates no file");
}
