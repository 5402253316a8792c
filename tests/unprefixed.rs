//! `prefix = ""` (issue 24): a user who moves one server behind mcp-defer keeps its tool and
//! prompt names. Through `serve --http` with `exposure = "all"`, over plain HTTP (reqwest), the
//! fixture's tools and prompts are listed and called by their own names, next to a prefixed
//! server's; names it cannot have (a meta tool's) get the hash suffix; two such servers are
//! refused at load with both tables named. The conformance suite's server scenarios run the
//! same way in `.ci/conformance-server`.

use serde_json::{Value, json};

use crate::support::http::{Server, open_session, post, result_of, tools_list};
use crate::support::wait::eventually;
use crate::support::{Dir, assert_contains_all, fixture, stderr};

/// Sends one request in `session` and returns its `result` (panics on an error answer).
async fn request(
    client: &reqwest::Client,
    url: &str,
    session: &str,
    id: u64,
    body: Value,
) -> Value {
    let (status, _, text) = post(client, url, &[("mcp-session-id", session)], &body).await;
    assert_eq!(status, 200, "{body}: {text}");
    result_of(&text, id)
}

fn names(list: &Value, key: &str) -> Vec<String> {
    list[key]
        .as_array()
        .unwrap_or_else(|| panic!("no {key} in {list}"))
        .iter()
        .map(|t| t["name"].as_str().unwrap_or_default().to_owned())
        .collect()
}

/// The tool names listed once `want` is among them (servers connect after `initialize`).
async fn listed_with(
    client: &reqwest::Client,
    url: &str,
    session: &str,
    want: &str,
) -> Vec<String> {
    let mut id = 99;
    eventually(&format!("{want} listed"), async || {
        id += 1;
        let listed = names(
            &request(client, url, session, id, tools_list(id)).await,
            "tools",
        );
        if listed.iter().any(|n| n == want) {
            Ok(listed)
        } else {
            Err(format!("{listed:?}"))
        }
    })
    .await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unprefixed_server_keeps_its_tool_and_prompt_names_through_serve_http() {
    let dir = Dir::with_config(&format!(
        "[settings]\nexposure = \"all\"\n\n{}\n{}",
        // `grow` adds a tool at runtime: held with the default `trust = "pin"`.
        fixture(
            "fx",
            &["--prompt", "brief"],
            "prefix = \"\"\ntrust = \"off\""
        ),
        fixture("other", &[], ""),
    ));
    let server = Server::start(&dir, &[]);
    let client = reqwest::Client::new();
    let url = &server.url;
    let session = open_session(&client, url, &[]).await;

    let listed = listed_with(&client, url, &session, "other__echo").await;
    let listed = if listed.iter().any(|n| n == "echo") {
        listed
    } else {
        listed_with(&client, url, &session, "echo").await
    };
    assert!(listed.contains(&"add".to_owned()), "{listed:?}");
    assert!(
        !listed.iter().any(|n| n.starts_with("fx__")),
        "the unprefixed server's tools keep their names: {listed:?}"
    );

    let echoed = request(
        &client,
        url,
        &session,
        2,
        json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
               "params": {"name": "echo", "arguments": {"said": "bare"}}}),
    )
    .await;
    assert_eq!(
        echoed["structuredContent"],
        json!({"said": "bare"}),
        "{echoed}"
    );
    let other = request(
        &client,
        url,
        &session,
        3,
        json!({"jsonrpc": "2.0", "id": 3, "method": "tools/call",
               "params": {"name": "other__add", "arguments": {"a": 2, "b": 3}}}),
    )
    .await;
    assert_eq!(other["structuredContent"], json!({"sum": 5.0}), "{other}");

    let prompts = request(
        &client,
        url,
        &session,
        4,
        json!({"jsonrpc": "2.0", "id": 4, "method": "prompts/list"}),
    )
    .await;
    assert_eq!(names(&prompts, "prompts"), ["brief"], "{prompts}");
    let prompt = request(
        &client,
        url,
        &session,
        5,
        json!({"jsonrpc": "2.0", "id": 5, "method": "prompts/get",
               "params": {"name": "brief", "arguments": {"topic": "names"}}}),
    )
    .await;
    assert!(prompt["messages"].is_array(), "{prompt}");

    // A tool the server adds later under a meta tool's name cannot have it: it gets the hash
    // suffix (the same every run), the warning says why, and the meta tool is untouched.
    request(
        &client,
        url,
        &session,
        6,
        json!({"jsonrpc": "2.0", "id": 6, "method": "tools/call",
               "params": {"name": "grow", "arguments": {"name": "search_tools"}}}),
    )
    .await;
    server.wait_for_log("cannot keep its own name");
    let renamed = eventually("search_tools_<hash> listed", async || {
        let listed = names(
            &request(&client, url, &session, 7, tools_list(7)).await,
            "tools",
        );
        let renamed = listed.iter().find(|n| n.starts_with("search_tools_"));
        renamed.cloned().ok_or_else(|| format!("{listed:?}"))
    })
    .await;
    assert_eq!(renamed.len(), "search_tools_".len() + 8, "{renamed}");
    let log = server.log();
    assert_contains_all(&log, &[&format!("name={renamed}")]);
}

#[test]
fn two_unprefixed_servers_are_refused_naming_both_tables() {
    let dir = Dir::with_config(&format!(
        "{}\n{}",
        fixture("everything", &[], "prefix = \"\""),
        fixture("time", &[], "prefix = \"\""),
    ));
    let out = dir.run(&["check"]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    let err = stderr(&out);
    for part in [
        "[mcp_servers.time]",
        "[mcp_servers.everything]",
        "only one server can keep its own tool and prompt names",
        "set `prefix = \"...\"` in one of the two tables",
    ] {
        assert!(err.contains(part), "{part:?} missing from: {err}");
    }
}

/// Issue 35 item 10: with `prefix = ""`, a tool named like a meta tool but for its case
/// (`Search_Tools`) was listed as it is, a twin of `search_tools`; one with an invisible
/// or non-ASCII character became `ech_`, `call_tool_` without the hash docs/config.md
/// promises. Through a real `serve` (stdio): each gets its name plus `_` and 8 hex digits,
/// is called by it, and the meta tools are listed once.
#[tokio::test]
async fn unprefixed_names_that_cannot_be_kept_get_the_hash_through_serve() {
    let dir = Dir::new();
    let odd = [
        "Search_Tools",
        "CALL_TOOL",
        "ech\u{200b}",
        "call_tool\u{feff}",
        "echó",
    ];
    let tools: Vec<Value> = (odd.iter().chain(&["echo"]))
        .map(|name| json!({"name": name, "inputSchema": {"type": "object"}}))
        .collect();
    let tools_file = dir.file("tools.json");
    std::fs::write(&tools_file, Value::Array(tools).to_string()).unwrap();
    // `trust = "off"`: names with hidden characters are held under the default `pin`
    // (tests/trust.rs); what they are called is tested here.
    let path = dir.config(&format!(
        "[settings]\nexposure = \"all\"\n\n{}",
        fixture(
            "fx",
            &["--tools", &tools_file.to_string_lossy()],
            "prefix = \"\"\ntrust = \"off\""
        ),
    ));
    let session = crate::support::session::Session::start(&path).await;
    let listed = eventually("echo listed", async || {
        let listed = crate::support::session::names(&session.list().await);
        if listed.iter().any(|n| n == "echo") {
            Ok(listed)
        } else {
            Err(format!("{listed:?}"))
        }
    })
    .await;
    for meta in ["search_tools", "select_tools", "call_tool"] {
        let twins: Vec<&String> = listed
            .iter()
            .filter(|n| n.eq_ignore_ascii_case(meta))
            .collect();
        assert_eq!(twins, [meta], "{listed:?}");
    }
    let hashed = |stem: &str| -> String {
        let found: Vec<&String> = listed
            .iter()
            .filter(|n| {
                n.strip_prefix(stem)
                    .and_then(|rest| rest.strip_prefix('_'))
                    .is_some_and(|hex| hex.len() == 8 && hex.chars().all(|c| c.is_ascii_hexdigit()))
            })
            .collect();
        assert_eq!(found.len(), 1, "one {stem}_<hash> in {listed:?}");
        found[0].clone()
    };
    hashed("Search_Tools");
    hashed("CALL_TOOL");
    hashed("call_tool");
    assert_eq!(
        listed.iter().filter(|n| n.starts_with("ech_")).count(),
        2,
        "ech\\u{{200b}} and echó each hashed: {listed:?}"
    );
    assert!(
        !listed.iter().any(|n| n.contains("__")),
        "no unprefixed name in the prefixed space: {listed:?}"
    );
    // Called by its new name, the server gets the name it listed.
    let zero_width = listed
        .iter()
        .find(|n| n.starts_with("ech_"))
        .unwrap()
        .clone();
    let called = session.call(&zero_width, json!({})).await;
    assert_ne!(called.is_error, Some(true), "{called:?}");
    let said = crate::support::session::text(&called);
    assert!(
        said == "ech\u{200b} called" || said == "echó called",
        "{said:?}"
    );
    session.close().await;
}
