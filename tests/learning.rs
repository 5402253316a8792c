//! Search that learns from use (issue 21 item 6), through real `mcp-defer serve` processes
//! over stdio with the fixture server: a tool selected and called after a search ranks
//! first for a similar query in the next process; with `learn = false` nothing is written
//! and nothing changes (`serve` and the `search` command). Over `serve --http` (issue 35
//! item 6) each token learns from its own use, in its own store, unless `learn = "shared"`;
//! a usage file that is a symbolic link is not followed.

use std::path::Path;
use std::time::Duration;

use serde_json::{Value, json};

use crate::support::session::{Session, structured};
use crate::support::wait::poll_sync;
use crate::support::{Dir, assert_contains_all, fixture};

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
    let text = poll_sync(Duration::from_secs(20), || {
        let text = std::fs::read_to_string(path).unwrap_or_default();
        if text.lines().count() >= lines {
            Ok(text)
        } else {
            Err(text)
        }
    })
    .unwrap_or_else(|text| text);
    (text.lines())
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}")))
        .collect()
}

/// Searches, selects and calls [`TAUGHT`] in one session.
async fn choose_taught(session: &Session) -> Vec<String> {
    let before = ranked(session, FIRST_QUERY).await;
    let selected = session
        .call("select_tools", json!({"names": [TAUGHT]}))
        .await;
    assert_ne!(selected.is_error, Some(true), "{selected:?}");
    let called = session.call_through(TAUGHT, json!({"a": 2, "b": 3})).await;
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
        crate::support::os::mode(&file),
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
    assert_contains_all(&text, &["use up to +0.70 of the best"]);
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

/// `mcp-defer search` (the CLI) with `learn = false` lifts nothing, whatever the usage
/// file holds (issue 35 item 13: the CLI's own check was untested).
#[test]
fn the_search_command_with_learn_off_ignores_what_the_usage_file_holds() {
    let dir = Dir::new();
    let data = dir.file("data");
    std::fs::create_dir_all(&data).unwrap();
    let event = |k: &str| json!({"t": 1, "k": k, "q": FIRST_QUERY, "tool": TAUGHT}).to_string();
    std::fs::write(
        data.join("usage.jsonl"),
        format!("{}\n{}\n", event("selected"), event("called")),
    )
    .unwrap();
    let explain = |learn: bool| {
        config(&dir, Some(learn));
        let out = dir.run(&["search", SIMILAR_QUERY, "--explain"]);
        assert!(out.status.success(), "{}", crate::support::stderr(&out));
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    let first = |text: &str| {
        (text.lines())
            .find(|l| l.trim_start().starts_with("1 "))
            .unwrap_or_else(|| panic!("{text}"))
            .to_owned()
    };
    // The file does teach: with learning on, the taught tool ranks first...
    let on = explain(true);
    assert!(first(&on).ends_with(TAUGHT), "{on}");
    // ...and with it off, neither the lift nor its line is there.
    let off = explain(false);
    assert!(!off.contains("use up to"), "{off}");
    assert!(!first(&off).ends_with(TAUGHT), "{off}");
}

const TOKEN_A: &str = "learning-token-aaaaaaaa";
const TOKEN_B: &str = "learning-token-bbbbbbbb";

/// `serve --http` with two tokens and `learn` as given (`None`: the default).
fn http_server(dir: &Dir, learn: Option<&str>) -> crate::support::http::Server {
    let search = learn.map_or_else(String::new, |learn| {
        format!("[settings.search]\nlearn = {learn}\n\n")
    });
    dir.config(&format!(
        "[settings]\nrelist_wait_ms = 0\n\n{search}[settings.http]\ntokens_env = \
         \"MCP_DEFER_TEST_TOKENS\"\n\n{}{}",
        fixture("fx", &[], ""),
        fixture("other", &["--name", "other"], "")
    ));
    let data = dir.file("data");
    crate::support::http::Server::start(
        dir,
        &[
            ("MCP_DEFER_TEST_TOKENS", &format!("{TOKEN_A},{TOKEN_B}")),
            ("MCP_DEFER_DATA_DIR", data.to_str().unwrap()),
        ],
    )
}

/// One token's session over HTTP, calling tools with reqwest.
struct HttpSession<'s> {
    client: reqwest::Client,
    url: &'s str,
    bearer: String,
    id: String,
    next: std::cell::Cell<u64>,
}

impl<'s> HttpSession<'s> {
    async fn open(server: &'s crate::support::http::Server, token: &str) -> HttpSession<'s> {
        let client = reqwest::Client::new();
        let bearer = format!("Bearer {token}");
        let id =
            crate::support::http::open_session(&client, &server.url, &[("authorization", &bearer)])
                .await;
        HttpSession {
            client,
            url: &server.url,
            bearer,
            id,
            next: std::cell::Cell::new(10),
        }
    }

    async fn call(&self, name: &str, arguments: Value) -> Value {
        let id = self.next.get();
        self.next.set(id + 1);
        let request = json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
            "params": {"name": name, "arguments": arguments}});
        let headers = [
            ("authorization", self.bearer.as_str()),
            ("mcp-session-id", self.id.as_str()),
        ];
        let (status, _, body) =
            crate::support::http::post(&self.client, self.url, &headers, &request).await;
        assert_eq!(status, 200, "{body}");
        let result = crate::support::http::result_of(&body, id);
        assert_ne!(result["isError"], json!(true), "{name}: {result}");
        result
    }

    async fn ranked(&self, query: &str) -> Vec<String> {
        let found = self.call("search_tools", json!({"query": query})).await;
        (found["structuredContent"]["tools"].as_array().cloned())
            .unwrap_or_default()
            .iter()
            .filter_map(|t| t["name"].as_str().map(str::to_owned))
            .collect()
    }

    /// Searches, selects and calls [`TAUGHT`].
    async fn choose_taught(&self) {
        self.ranked(FIRST_QUERY).await;
        self.call("select_tools", json!({"names": [TAUGHT]})).await;
        let arguments = json!({"name": TAUGHT, "arguments": {"a": 2, "b": 3}});
        self.call("call_tool", arguments).await;
    }
}

/// The usage files under `dir` (recursively) and their text, once `lines` lines are
/// written across them (each store's writer is a thread of its own), at most 20 s.
fn usage_files(dir: &Path, lines: usize) -> Vec<(std::path::PathBuf, String)> {
    fn walk(dir: &Path, out: &mut Vec<(std::path::PathBuf, String)>) {
        for entry in std::fs::read_dir(dir).into_iter().flatten().flatten() {
            let path = entry.path();
            if path.is_dir() {
                walk(&path, out);
            } else if path.extension().is_some_and(|e| e == "jsonl") {
                let text = std::fs::read_to_string(&path).unwrap_or_default();
                out.push((path, text));
            }
        }
    }
    poll_sync(Duration::from_secs(20), || {
        let mut files = Vec::new();
        walk(dir, &mut files);
        files.sort();
        let written: usize = files.iter().map(|(_, t)| t.lines().count()).sum();
        if written >= lines {
            Ok(files)
        } else {
            Err(files)
        }
    })
    .unwrap_or_else(|files| files)
}

/// Issue 35 item 6: over `serve --http`, what one token's searches and calls teach lifts
/// that token's results only, and is kept in its own store, named by a hash, never the
/// token.
#[tokio::test(flavor = "multi_thread")]
async fn over_http_one_tokens_use_teaches_its_own_search_only_and_stays_in_its_own_store() {
    let dir = Dir::new();
    let server = http_server(&dir, None);
    let a = HttpSession::open(&server, TOKEN_A).await;
    let b = HttpSession::open(&server, TOKEN_B).await;
    let before_b = b.ranked(SIMILAR_QUERY).await;
    assert_ne!(
        before_b.first().map(String::as_str),
        Some(TAUGHT),
        "{before_b:?}"
    );

    a.choose_taught().await;
    // A learnt: its similar query puts the tool first (in this process, at once)...
    let after_a = a.ranked(SIMILAR_QUERY).await;
    assert_eq!(
        after_a.first().map(String::as_str),
        Some(TAUGHT),
        "{after_a:?}"
    );
    // ...and B's ranking is what it was, in its open session and in a new one.
    assert_eq!(b.ranked(SIMILAR_QUERY).await, before_b);
    let b2 = HttpSession::open(&server, TOKEN_B).await;
    assert_eq!(b2.ranked(SIMILAR_QUERY).await, before_b);

    // B chooses something of its own; each store holds its own token's queries only.
    b.ranked("echo the text back").await;
    b.call("select_tools", json!({"names": ["fx__echo"]})).await;
    let files = usage_files(&dir.file("data"), 3);
    let names: Vec<String> = (files.iter())
        .map(|(p, _)| {
            p.strip_prefix(dir.file("data"))
                .unwrap()
                .display()
                .to_string()
        })
        .collect();
    assert_eq!(files.len(), 2, "one store per token: {names:?}");
    for (path, text) in &files {
        assert!(
            path.starts_with(dir.file("data").join("usage")),
            "a token's store is under usage/: {}",
            path.display()
        );
        let name = path.file_name().unwrap().to_string_lossy();
        assert!(
            !name.contains("learning-token") && !text.contains("learning-token"),
            "{name}: {text}"
        );
    }
    let (with_a, without_a): (Vec<_>, Vec<_>) = files
        .iter()
        .partition(|(_, text)| text.contains(FIRST_QUERY));
    assert_eq!(
        with_a.len(),
        1,
        "A's query is in A's store only: {files:#?}"
    );
    assert!(
        without_a[0].1.contains("echo the text back"),
        "B's store: {files:#?}"
    );
    assert!(
        !dir.file("data").join("usage.jsonl").exists(),
        "nothing in the local user's store"
    );
}

/// `learn = "shared"`: the operator pools every token's use, so A's choice lifts B's
/// results too.
#[tokio::test(flavor = "multi_thread")]
async fn with_learn_shared_one_tokens_use_lifts_anothers_results() {
    let dir = Dir::new();
    let server = http_server(&dir, Some("\"shared\""));
    let a = HttpSession::open(&server, TOKEN_A).await;
    let b = HttpSession::open(&server, TOKEN_B).await;
    a.choose_taught().await;
    let after_b = b.ranked(SIMILAR_QUERY).await;
    assert_eq!(
        after_b.first().map(String::as_str),
        Some(TAUGHT),
        "{after_b:?}"
    );
    let files = usage_files(&dir.file("data"), 2);
    assert_eq!(files.len(), 1, "{files:#?}");
    assert_eq!(files[0].0, dir.file("data").join("usage.jsonl"));
}

/// A usage file planted as a symbolic link is not followed: its target is neither
/// written nor made 0600 (issue 35 item 6), and learning goes on in memory.
#[cfg(unix)]
#[tokio::test(flavor = "multi_thread")]
async fn a_usage_file_that_is_a_symbolic_link_is_not_followed() {
    use crate::support::os::{mode, set_mode, symlink};
    let dir = Dir::new();
    let config = config(&dir, None);
    let data = dir.file("data");
    std::fs::create_dir_all(&data).unwrap();
    let target = dir.file("elsewhere.txt");
    std::fs::write(&target, "the user's own file\n").unwrap();
    set_mode(&target, 0o644);
    symlink(&target, &data.join("usage.jsonl"));
    let session = serve(&config, &data).await;
    choose_taught(&session).await;
    // Learning goes on in memory: the similar query is lifted in this process.
    let after = ranked(&session, SIMILAR_QUERY).await;
    assert_eq!(after.first().map(String::as_str), Some(TAUGHT), "{after:?}");
    session.close().await;
    assert_eq!(
        std::fs::read_to_string(&target).unwrap(),
        "the user's own file\n",
        "nothing written through the link"
    );
    assert_eq!(mode(&target), 0o644, "the link's target keeps its mode");
}
