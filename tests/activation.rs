//! How a found tool becomes usable (issue 34): `search_tools` loads its best hits itself
//! where the session's list may grow on request, so the model calls a found tool in the
//! request after the search, as with the clients' own tool search; a client that will not
//! have it by name gets its schema in the result, for `call_tool`. And the 2026-07-28 rule
//! (DESIGN.md 7c): a connection's tool list never changes because of a request on it.
//!
//! Driven by raw lines written as the real clients write them (their `clientInfo` names
//! decide how a grown list reaches them), against the fixture server over real stdio.

use serde_json::{Value, json};

use crate::support::raw::{RawClient, claude_envelope, result_text};
use crate::support::{Dir, fixture};

/// One fixture server `fx` (echo, add, ...) behind mcp-defer with `settings`.
fn config(settings: &str) -> Dir {
    Dir::with_config(&format!(
        "[settings]\n{settings}\n\n{}",
        fixture(
            "fx",
            &[],
            "description = \"Test fixture: echo, arithmetic\""
        )
    ))
}

/// `initialize` in `version` as the client `name`, then `notifications/initialized`.
async fn handshake(config: &Dir, version: &str, name: &str) -> RawClient {
    let mut client = RawClient::start(&config.file("servers.toml"));
    let init = client
        .request(
            "initialize",
            json!({"protocolVersion": version, "capabilities": {},
                   "clientInfo": {"name": name, "version": "0"}}),
        )
        .await;
    assert!(init.get("result").is_some(), "initialize: {init}");
    client
        .send(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}))
        .await;
    client
}

fn tool_names(listed: &Value) -> Vec<String> {
    (listed["result"]["tools"].as_array().into_iter().flatten())
        .filter_map(|t| t["name"].as_str().map(str::to_owned))
        .collect()
}

fn is_list_changed(message: &Value) -> bool {
    message["method"] == "notifications/tools/list_changed"
}

/// Claude Code: discover is refused where tools load on request (`client_era = "auto"`, the
/// default), it falls back to `initialize` 2025-11-25; a search loads `fx__add`, the client
/// re-lists on the notification while the result is held, and the next step calls the
/// tool by its own name. The result does not repeat a schema the client now has.
#[tokio::test]
async fn claude_code_calls_a_tool_its_search_loaded_by_name() {
    let dir = config("relist_wait_ms = 5000");
    let mut client = RawClient::start(&dir.file("servers.toml"));
    let refused = client
        .request("server/discover", json!({"_meta": claude_envelope()}))
        .await;
    assert_eq!(refused["error"]["code"], -32601, "{refused}");
    drop(client);
    let mut client = handshake(&dir, "2025-11-25", "claude-code").await;
    let before = client.request("tools/list", json!({})).await;
    assert_eq!(
        tool_names(&before),
        ["search_tools", "select_tools", "call_tool"]
    );

    let search = client
        .send_request(
            "tools/call",
            json!({"name": "search_tools", "arguments": {"query": "add two numbers, their sum"}}),
        )
        .await;
    // The notification comes while the search is held; re-list as Claude Code does.
    loop {
        let message = client.next().await;
        assert_ne!(
            message["id"],
            json!(search),
            "the search answered before the client re-listed: {message}"
        );
        if is_list_changed(&message) {
            break;
        }
    }
    let after = client.request("tools/list", json!({})).await;
    let found = client.response(search).await;
    let hits = found["result"]["structuredContent"]["tools"].clone();
    assert_eq!(hits[0]["name"], "fx__add", "{hits:#}");
    assert_eq!(hits[0]["loaded"], true, "{hits:#}");
    assert!(
        hits[0].get("input_schema").is_none(),
        "a client that has the tool is not sent its schema again: {hits:#}"
    );
    let names = tool_names(&after);
    assert_eq!(
        names[..3],
        tool_names(&before)[..],
        "appended, never inserted"
    );
    assert_eq!(names[3], "fx__add", "{names:?}");
    let before_bytes = serde_json::to_string(&before["result"]["tools"][0]).ok();
    let after_bytes = serde_json::to_string(&after["result"]["tools"][0]).ok();
    assert_eq!(before_bytes, after_bytes, "listed tools keep their bytes");

    let sum = client
        .request(
            "tools/call",
            json!({"name": "fx__add", "arguments": {"a": 2, "b": 3}}),
        )
        .await;
    assert!(result_text(&sum).contains('5'), "{sum}");
    client.no_strays().await;
    client.close().await;
}

/// Codex never re-lists: the search answers at once (no hold) and its best hits carry their
/// input schemas, so the next step is `call_tool`.
#[tokio::test]
async fn codex_gets_the_schemas_of_the_best_hits_and_calls_through_call_tool() {
    let dir = config("relist_wait_ms = 30000");
    let mut client = handshake(&dir, "2025-06-18", "codex-mcp-client").await;
    client.request("tools/list", json!({})).await;
    let started = std::time::Instant::now();
    let found = client
        .request(
            "tools/call",
            json!({"name": "search_tools", "arguments": {"query": "add two numbers, their sum"}}),
        )
        .await;
    assert!(
        started.elapsed() < std::time::Duration::from_secs(20),
        "held for a re-list Codex never sends"
    );
    let hits = found["result"]["structuredContent"]["tools"].clone();
    assert_eq!(hits[0]["name"], "fx__add", "{hits:#}");
    assert_eq!(
        hits[0]["input_schema"]["properties"]["a"]["type"], "number",
        "{hits:#}"
    );
    assert!(
        result_text(&found).contains("input_schema"),
        "the text carries it too"
    );
    let sum = client
        .call_through("fx__add", json!({"a": 2, "b": 3}))
        .await;
    assert!(result_text(&sum).contains('5'), "{sum}");
    client.close().await;
}

/// `search_loads = 0`: a search loads nothing and carries no schemas (the select path).
#[tokio::test]
async fn search_loads_zero_leaves_loading_to_select_tools() {
    let dir = config("search_loads = 0");
    let mut client = handshake(&dir, "2025-11-25", "claude-code").await;
    let before = client.request("tools/list", json!({})).await;
    let found = client
        .request(
            "tools/call",
            json!({"name": "search_tools", "arguments": {"query": "add two numbers"}}),
        )
        .await;
    let hits = found["result"]["structuredContent"]["tools"].clone();
    assert_eq!(hits[0]["loaded"], false, "{hits:#}");
    assert!(hits[0].get("input_schema").is_none(), "{hits:#}");
    assert!(!client.received.iter().any(is_list_changed));
    let after = client.request("tools/list", json!({})).await;
    assert_eq!(before["result"], after["result"]);
    client.close().await;
}

async fn list(client: &mut RawClient) -> Value {
    let listed = client
        .request("tools/list", json!({"_meta": claude_envelope()}))
        .await;
    listed["result"]["tools"].clone()
}

/// 2026-07-28 (`client_era = "any"` answers discover): the list of a connection is the same
/// before and after a search and a select, and the same on a second connection with the
/// same (no) credentials; the best hits and the selected tool come with their schemas, and
/// `call_tool` calls them.
#[tokio::test]
async fn a_2026_07_28_list_never_changes_because_of_a_request() {
    let dir = config("client_era = \"any\"\nrelist_wait_ms = 30000");
    let mut first = RawClient::claude(&dir.file("servers.toml")).await;
    let before = list(&mut first).await;
    let started = std::time::Instant::now();
    let found = first
        .call_tool(
            "search_tools",
            json!({"query": "add two numbers, their sum"}),
            json!({}),
        )
        .await;
    let hits = found["result"]["structuredContent"]["tools"].clone();
    assert_eq!(hits[0]["name"], "fx__add", "{hits:#}");
    assert_eq!(hits[0]["loaded"], false, "nothing is loaded: {hits:#}");
    assert!(hits[0]["input_schema"].is_object(), "{hits:#}");
    let selected = first
        .call_tool("select_tools", json!({"names": ["fx__echo"]}), json!({}))
        .await;
    let selection = &selected["result"]["structuredContent"];
    assert_eq!(selection["loaded"], json!(["fx__echo"]), "{selected}");
    assert_eq!(selection["schemas"][0]["name"], "fx__echo", "{selected}");
    assert!(
        started.elapsed() < std::time::Duration::from_secs(20),
        "nothing grew, so nothing was held"
    );
    let after = list(&mut first).await;
    assert_eq!(before, after, "a request changed the 2026-07-28 list");
    assert!(
        !first.received.iter().any(|m| m["method"]
            .as_str()
            .is_some_and(|m| m.ends_with("list_changed"))),
        "no list change was announced"
    );
    let sum = first
        .call_tool(
            "call_tool",
            json!({"name": "fx__add", "arguments": {"a": 2, "b": 3}}),
            json!({}),
        )
        .await;
    assert!(result_text(&sum).contains('5'), "{sum}");

    let mut second = RawClient::claude(&dir.file("servers.toml")).await;
    assert_eq!(
        list(&mut second).await,
        after,
        "two connections with the same credentials see one list"
    );
    first.close().await;
    second.close().await;
}

/// The era rule per setting: `auto` answers discover where the list never grows on request
/// (`exposure = "proxy"`, `"all"`), `handshake` never does.
#[tokio::test]
async fn auto_answers_discover_where_no_request_grows_the_list() {
    for (settings, answered) in [
        ("exposure = \"proxy\"", true),
        ("exposure = \"all\"", true),
        ("exposure = \"deferred\"", false),
        ("exposure = \"proxy\"\nclient_era = \"handshake\"", false),
        ("client_era = \"any\"", true),
    ] {
        let dir = config(settings);
        let mut client = RawClient::start(&dir.file("servers.toml"));
        let discovered = client
            .request("server/discover", json!({"_meta": claude_envelope()}))
            .await;
        assert_eq!(
            discovered.get("result").is_some(),
            answered,
            "{settings}: {discovered}"
        );
        client.close().await;
    }
}
