//! MCP logging through mcp-defer (issue 24 item 6): a handshake-era client is offered
//! `logging`, its `logging/setLevel` reaches every server (one that is still starting
//! too), and each server's `notifications/message` reaches it before the call's result,
//! with the server's name in `logger`. A 2026-07-28 request gets its call's messages only
//! when its `_meta` asks (`io.modelcontextprotocol/logLevel`), over stdio and over
//! `serve --http` (on its own response stream; after a parked call's retry, on the retry's).
//! Real processes throughout: mcp-defer, the rmcp fixture (`--log-tool`, which filters by
//! the level it was set to, as a real server does) and server-everything.

use serde_json::{Value, json};

use crate::support::raw::{RawClient, claude_envelope, result_text};
use crate::support::{self, Dir, fixture};

/// `initialize` as a 2025-06-18 client; returns the result.
/// Answers a 2026-07-28 client in its era over stdio (the default sends it back to
/// `initialize` where tools load on request).
const ERA_ANY: &str = "[settings]\nclient_era = \"any\"\n\n";

/// Calls `tool` through `call_tool`; returns the response and the `notifications/message`
/// params written before it, in order.
async fn call_logged(raw: &mut RawClient, tool: &str) -> (Value, Vec<Value>) {
    let before = raw.received.len();
    let response = raw.call_through(tool, json!({})).await;
    let logs = raw.received[before..]
        .iter()
        .take_while(|m| m.get("id").is_none() || m.get("method").is_some())
        .filter(|m| m["method"] == "notifications/message")
        .map(|m| m["params"].clone())
        .collect();
    (response, logs)
}

fn log(level: &str, logger: &str, data: &str) -> Value {
    json!({"level": level, "logger": logger, "data": data})
}

/// What the fixture `alpha` logs at warning and above, as `notifications/message` params.
fn alphas_warnings() -> Vec<Value> {
    vec![
        log("warning", "alpha/fixture", "warning from alpha"),
        log("error", "alpha/fixture", "error from alpha"),
    ]
}

/// The params of the `notifications/message` among `messages`, in order.
fn logged<'a>(messages: impl IntoIterator<Item = &'a Value>) -> Vec<Value> {
    (messages.into_iter())
        .filter(|m| m["method"] == "notifications/message")
        .map(|m| m["params"].clone())
        .collect()
}

/// The Python client's last line (`tests/python/logging_*.py`) says the call answered
/// `text` and that alpha's warning and error reached it, in `era`.
fn assert_python_saw_alphas_log(era: &str, text: &str, out: &str) {
    let seen: Value = serde_json::from_str(out.lines().last().unwrap_or_default())
        .unwrap_or_else(|e| panic!("{e}: {out}"));
    assert_eq!(seen["text"], text, "{era}: {seen}");
    assert_eq!(seen["logs"], json!(alphas_warnings()), "{era}: {seen}");
}

#[tokio::test]
async fn handshake_clients_get_every_servers_log_at_the_level_they_set() {
    let dir = Dir::with_config(&format!(
        "{}{}",
        fixture("alpha", &["--log-tool", "--name", "alpha"], ""),
        // Still starting when the level is set: it is asked in its handshake.
        fixture(
            "beta",
            &["--log-tool", "--name", "beta", "--slow-start-ms", "1500"],
            ""
        ),
    ));
    let mut raw = RawClient::start(&dir.file("servers.toml"));
    let init = raw.handshake("2025-06-18").await;
    assert_eq!(init["capabilities"]["logging"], json!({}), "{init}");

    // No level set: the server sends what it chooses (all four), tagged with its name.
    let (response, logs) = call_logged(&mut raw, "alpha__log").await;
    assert_eq!(result_text(&response), "level unset", "{response}");
    assert_eq!(
        logs,
        vec![
            log("debug", "alpha/fixture", "debug from alpha"),
            log("info", "alpha/fixture", "info from alpha"),
            log("warning", "alpha/fixture", "warning from alpha"),
            log("error", "alpha/fixture", "error from alpha"),
        ]
    );

    let set = raw
        .request("logging/setLevel", json!({"level": "warning"}))
        .await;
    assert_eq!(set["result"], json!({}), "{set}");
    for server in ["alpha", "beta"] {
        let (response, logs) = call_logged(&mut raw, &format!("{server}__log")).await;
        assert_eq!(result_text(&response), "level warning", "{response}");
        let logger = format!("{server}/fixture");
        assert_eq!(
            logs,
            vec![
                log("warning", &logger, &format!("warning from {server}")),
                log("error", &logger, &format!("error from {server}")),
            ],
            "{server}"
        );
    }
    raw.no_strays().await;
    raw.close().await;
}

/// 2026-07-28 (SEP-2577 deprecates logging there, and drops `logging/setLevel`): a request
/// gets the log messages of its call only when its `_meta` carries
/// `io.modelcontextprotocol/logLevel`, at or above that level, before its result. Claude
/// Code's envelope carries none, so it gets none.
#[tokio::test]
async fn a_2026_request_gets_its_calls_log_only_when_its_meta_asks() {
    let dir = Dir::with_config(&format!(
        "{ERA_ANY}{}",
        fixture("alpha", &["--log-tool", "--name", "alpha"], "")
    ));
    let mut raw = RawClient::start(&dir.file("servers.toml"));
    let discovered = raw
        .request("server/discover", json!({"_meta": claude_envelope()}))
        .await;
    assert_eq!(
        discovered["result"]["capabilities"]["logging"],
        json!({}),
        "{discovered}"
    );
    let before = raw.received.len();
    let response = raw
        .call_tool(
            "call_tool",
            json!({"name": "alpha__log", "arguments": {}}),
            json!({}),
        )
        .await;
    assert_eq!(result_text(&response), "level unset", "{response}");
    assert!(
        raw.received[before..]
            .iter()
            .all(|m| m["method"] != "notifications/message"),
        "{:#?}",
        raw.received
    );
    let before = raw.received.len();
    let response = raw
        .call_tool(
            "call_tool",
            json!({"name": "alpha__log", "arguments": {}}),
            json!({"io.modelcontextprotocol/logLevel": "warning"}),
        )
        .await;
    // The server was never given a level (there is no setLevel in this era): it sends all
    // four, and the request's level lets two through.
    assert_eq!(result_text(&response), "level unset", "{response}");
    let notes = raw.received[before..].iter();
    let logs = logged(notes.take_while(|m| m.get("method").is_some()));
    assert_eq!(logs, alphas_warnings());
    raw.close().await;
}

/// server-everything's own logging: `toggle-simulated-logging` sends a message at once
/// (a random level; debug admits them all), with no `logger`, so it is tagged `everything`.
#[tokio::test]
async fn server_everythings_log_messages_reach_the_client_tagged_with_its_name() {
    let Some(peers) = support::peers() else {
        return;
    };
    let dir = Dir::with_config(&format!(
        "[mcp_servers.everything]\ncommand = {}\nargs = [\"stdio\"]\nstartup_timeout_sec = 30\n",
        support::toml_str(&peers.everything.to_string_lossy())
    ));
    let mut raw = RawClient::start(&dir.file("servers.toml"));
    raw.handshake("2025-06-18").await;
    let set = raw
        .request("logging/setLevel", json!({"level": "debug"}))
        .await;
    assert_eq!(set["result"], json!({}), "{set}");
    let response = raw
        .request(
            "tools/call",
            json!({"name": "call_tool",
                   "arguments": {"name": "everything__toggle-simulated-logging", "arguments": {}}}),
        )
        .await;
    assert!(response["result"]["isError"] != json!(true), "{response}");
    let mut seen = raw
        .received
        .iter()
        .find(|m| m["method"] == "notifications/message")
        .cloned();
    while seen.is_none() {
        let message = raw.next().await;
        if message["method"] == "notifications/message" {
            seen = Some(message);
        }
    }
    let params = &seen.unwrap_or_default()["params"];
    assert_eq!(params["logger"], "everything", "{params}");
    assert!(
        params["data"]
            .as_str()
            .is_some_and(|d| d.contains("message")),
        "{params}"
    );
    raw.close().await;
}

/// Over `serve --http`, the Python SDK's client in both eras: a handshake-era session sets
/// its level and gets the messages a call logs (rmcp sends them on the session's GET stream);
/// a 2026-07-28 client opts in with `log_level` and has the call's messages, on the call's own
/// stream, by the time its result arrives.
#[test]
fn the_python_sdk_gets_server_logs_over_http_in_both_eras() {
    let Some(peers) = support::peers() else {
        return;
    };
    let dir = Dir::with_config(&fixture("alpha", &["--log-tool", "--name", "alpha"], ""));
    let server = crate::support::http::Server::start(&dir, &[]);
    // The 2026-07-28 client first: the legacy one's setLevel reaches the shared server.
    for (era, text) in [("2026-07-28", "level unset"), ("legacy", "level warning")] {
        let out = peers.python(
            "logging_http.py",
            &[
                server.url.as_ref(),
                "alpha__log".as_ref(),
                "warning".as_ref(),
                "2".as_ref(),
                era.as_ref(),
            ],
        );
        assert_python_saw_alphas_log(era, text, &out);
    }
}

/// The Python SDK's client over stdio in both eras: `logging/setLevel` in the handshake era,
/// the `log_level` opt-in in 2026-07-28; either way the call's messages at or above the
/// level have arrived by the time its result does.
#[test]
fn the_python_sdk_gets_a_calls_log_over_stdio_in_both_eras() {
    let Some(peers) = support::peers() else {
        return;
    };
    let dir = Dir::new();
    let config = dir.config(&format!(
        "{ERA_ANY}{}",
        fixture("alpha", &["--log-tool", "--name", "alpha"], "")
    ));
    let bin = support::bin_under_test();
    for (era, text) in [("legacy", "level warning"), ("2026-07-28", "level unset")] {
        let out = peers.python(
            "logging_stdio.py",
            &[
                bin.as_ref(),
                config.as_os_str(),
                era.as_ref(),
                "alpha__log".as_ref(),
                "warning".as_ref(),
            ],
        );
        assert_python_saw_alphas_log(era, text, &out);
    }
}

/// Over `serve --http`, a 2026-07-28 request (stateless: no session, its envelope in
/// `_meta`) that asks with `io.modelcontextprotocol/logLevel` gets its call's messages on its
/// own response stream, before its result; raw HTTP, the SSE body read whole.
#[tokio::test]
async fn a_2026_request_over_http_gets_its_calls_log_on_its_stream() {
    let dir = Dir::with_config(&fixture("alpha", &["--log-tool", "--name", "alpha"], ""));
    let server = crate::support::http::Server::start(&dir, &[]);
    server.wait_for_log("tools listed");
    let client = reqwest::Client::new();
    let version = ("mcp-protocol-version", "2026-07-28");
    let headers = [
        version,
        ("mcp-method", "tools/call"),
        ("mcp-name", "call_tool"),
    ];
    let call = |id: u64, meta: Value| {
        let mut meta_all = claude_envelope();
        meta_all
            .as_object_mut()
            .unwrap()
            .extend(meta.as_object().unwrap().clone());
        json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {
            "name": "call_tool", "arguments": {"name": "alpha__log", "arguments": {}},
            "_meta": meta_all}})
    };
    let messages = messages_of;
    let (status, _, body) = crate::support::http::post(
        &client,
        &server.url,
        &[version, ("mcp-method", "server/discover")],
        &json!({"jsonrpc": "2.0", "id": 1, "method": "server/discover",
                "params": {"_meta": claude_envelope()}}),
    )
    .await;
    assert_eq!(status, 200, "{body}");
    let discovered = messages(&body).pop().unwrap_or_default();
    assert_eq!(
        discovered["result"]["capabilities"]["logging"],
        json!({}),
        "{body}"
    );

    let (status, _, body) =
        crate::support::http::post(&client, &server.url, &headers, &call(2, json!({}))).await;
    assert_eq!(status, 200, "{body}");
    let got = messages(&body);
    assert_eq!(got.len(), 1, "only the result when it did not ask: {body}");
    assert_eq!(result_text(&got[0]), "level unset", "{body}");

    let asked = json!({"io.modelcontextprotocol/logLevel": "warning"});
    let (status, _, body) =
        crate::support::http::post(&client, &server.url, &headers, &call(3, asked)).await;
    assert_eq!(status, 200, "{body}");
    let got = messages(&body);
    let (result, logs) = got.split_last().unwrap_or_else(|| panic!("{body}"));
    assert_eq!(result["id"], 3, "the result comes last: {body}");
    assert_eq!(result_text(result), "level unset", "{body}");
    assert_eq!(logged(logs), alphas_warnings(), "{body}");
}

/// A 2026-07-28 call parked on `InputRequiredResult` logs after the client's retry: the
/// message goes on the retry's stream (the first request's ended with the parked result),
/// at the retry's level. Raw HTTP; the fixture's `ask` logs each answer it gets.
#[tokio::test]
async fn a_parked_2026_call_logs_to_the_retry_over_http() {
    let dir = Dir::with_config(&fixture(
        "alpha",
        &["--log-tool", "--ask-tool", "--name", "alpha"],
        "",
    ));
    let server = crate::support::http::Server::start(&dir, &[]);
    server.wait_for_log("tools listed");
    let client = reqwest::Client::new();
    let headers = [
        ("mcp-protocol-version", "2026-07-28"),
        ("mcp-method", "tools/call"),
        ("mcp-name", "call_tool"),
    ];
    let mut meta = claude_envelope();
    meta["io.modelcontextprotocol/logLevel"] = json!("warning");
    let arguments = json!({"name": "alpha__ask", "arguments": {"asks": ["elicitation"]}});
    let first = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {
        "name": "call_tool", "arguments": arguments, "_meta": meta}});
    let (status, _, body) =
        crate::support::http::post(&client, &server.url, &headers, &first).await;
    assert_eq!(status, 200, "{body}");
    let got = messages_of(&body);
    let parked = &got.last().unwrap_or_else(|| panic!("{body}"))["result"];
    let state = parked["requestState"]
        .as_str()
        .unwrap_or_else(|| panic!("not parked: {body}"));
    let key = parked["inputRequests"]
        .as_object()
        .and_then(|r| r.keys().next())
        .unwrap_or_else(|| panic!("{body}"));
    let retry = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {
        "name": "call_tool", "arguments": arguments, "_meta": meta,
        "requestState": state,
        "inputResponses": {key: {"action": "accept", "content": {"name": "Ada"}}}}});
    let (status, _, body) =
        crate::support::http::post(&client, &server.url, &headers, &retry).await;
    assert_eq!(status, 200, "{body}");
    let got = messages_of(&body);
    let (result, before) = got.split_last().unwrap_or_else(|| panic!("{body}"));
    assert_eq!(result["id"], 2, "{body}");
    assert!(
        result["result"]["structuredContent"]["answers"].is_array(),
        "{body}"
    );
    let logs: Vec<&Value> = before
        .iter()
        .filter(|m| m["method"] == "notifications/message")
        .map(|m| &m["params"])
        .collect();
    assert_eq!(
        logs,
        [&log("error", "alpha/fixture", "elicitation answered")],
        "{body}"
    );
}

/// The JSON-RPC messages of a response body, in order: one per SSE `data:` line, or the
/// JSON body itself (a call answered before it sent anything else may be answered so).
fn messages_of(body: &str) -> Vec<Value> {
    if let Ok(message) = serde_json::from_str(body) {
        return vec![message];
    }
    body.lines()
        .filter_map(|l| l.strip_prefix("data:"))
        .filter_map(|d| serde_json::from_str(d.trim()).ok())
        .collect()
}
