//! `serve --http` for whoever runs it for a team (issue 19): the JSON log a collector
//! reads, and the search latency `/metrics` shows. Real processes: mcp-defer, the fixture
//! server, plain HTTP clients (reqwest).

use std::time::Duration;

use serde_json::{Value, json};

use crate::support::http::{Server, open_session, post, result_of, session_headers, tools_list};
use crate::support::{Dir, assert_contains_all, fixture};

const TOKEN: &str = "ops-token-cccccccc";

fn search(id: u64, query: &str) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {
        "name": "search_tools", "arguments": {"query": query}}})
}

#[tokio::test]
async fn json_logs_are_one_object_a_line_and_still_mask_tokens_and_session_ids() {
    let dir = Dir::with_config(&format!(
        "[settings.http]\ntokens_env = \"MCP_DEFER_TEST_TOKENS\"\n\n{}",
        fixture("fx", &[], "")
    ));
    let server = Server::try_start_with(
        &dir,
        "127.0.0.1:0",
        &["--log-format", "json"],
        &[("MCP_DEFER_TEST_TOKENS", TOKEN), ("RUST_LOG", "debug")],
    )
    .unwrap_or_else(|log| panic!("{log}"));
    let client = reqwest::Client::new();
    let bearer = format!("Bearer {TOKEN}");
    let auth = [("authorization", bearer.as_str())];
    let session = open_session(&client, &server.url, &auth).await;
    let headers = [auth[0], ("mcp-session-id", session.as_str())];
    let (status, _, _) = post(&client, &server.url, &headers, &tools_list(2)).await;
    assert_eq!(status, 200);
    let response = client
        .delete(&server.url)
        .header("authorization", &bearer)
        .header("mcp-session-id", &session)
        .send()
        .await
        .unwrap();
    assert_eq!(response.status().as_u16(), 202);
    server.wait_for_log("\"tools listed\"");
    // Its whole log, to its last line: the session's close is in it.
    let url = server.url.clone();
    let log = server.stop();
    let mut serving = false;
    for line in log.lines().filter(|l| !l.trim().is_empty()) {
        let value: Value = serde_json::from_str(line)
            .unwrap_or_else(|e| panic!("not a JSON line ({e}): {line}\nlog:\n{log}"));
        for key in ["timestamp", "level", "target", "fields"] {
            assert!(value.get(key).is_some(), "no {key}: {line}");
        }
        serving |= value["fields"]["message"] == "serving MCP over Streamable HTTP"
            && value["fields"]["url"] == url.as_str();
    }
    assert!(serving, "no serving line with its url:\n{log}");
    assert!(log.contains("create new session"), "rmcp logged: {log}");
    assert!(
        !log.contains(&session[8..]),
        "the session id is in the log:\n{log}"
    );
    assert!(!log.contains(TOKEN), "the token is in the log:\n{log}");
}

#[test]
fn an_unknown_log_format_is_refused_with_the_choices() {
    let dir = Dir::with_config(&fixture("fx", &[], ""));
    let out = dir.run(&["--log-format", "yaml", "check"]);
    assert_eq!(out.status.code(), Some(2));
    let text = crate::support::stderr(&out);
    assert_contains_all(&text, &["[possible values: text, json]"]);
}

#[tokio::test]
async fn metrics_show_search_latency_and_meta_tool_calls() {
    let (_dir, server) = Server::serving(&fixture("fx", &[], "required = true"));
    server.wait_for_log("tools listed");
    let client = reqwest::Client::new();
    let session = open_session(&client, &server.url, &[]).await;
    let headers = [("mcp-session-id", session.as_str())];
    for id in [2, 3] {
        let (status, _, body) = post(&client, &server.url, &headers, &search(id, "echo")).await;
        assert_eq!(status, 200, "{body}");
        assert!(result_of(&body, id)["structuredContent"]["tools"].is_array());
    }
    let metrics = server.metrics(&[]).await;
    assert_contains_all(
        &metrics,
        &[
            "# TYPE mcp_defer_search_duration_seconds histogram",
            "mcp_defer_search_duration_seconds_bucket{le=\"+Inf\"} 2",
            "mcp_defer_search_duration_seconds_count 2",
            "mcp_defer_http_requests_total{method=\"tools/call\",server=\"mcp-defer\"} 2",
            "mcp_defer_http_request_errors_total{method=\"tools/call\",server=\"mcp-defer\"} 0",
            "mcp_defer_downstream_up{server=\"fx\",state=\"ready\"} 1",
            "mcp_defer_downstream_restart_attempt{server=\"fx\"} 0",
        ],
    );
}

fn call(id: u64, name: &str, arguments: Value) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {
        "name": name, "arguments": arguments}})
}

fn text_of(result: &Value) -> String {
    result["content"][0]["text"]
        .as_str()
        .unwrap_or_default()
        .to_owned()
}

fn filtered_profile(dir: &Dir) {
    let mut toml = fixture("alpha", &[], "");
    toml += &fixture("beta", &[], "");
    toml += "[profiles.safe]\nservers = [\"alpha\", \"beta\"]\n\
             allow_tools = [\"alpha__*\", \"beta__echo\"]\n\
             deny_tools = [\"*__crash\", \"alpha__sleep\"]\n";
    dir.config(&toml);
}

#[tokio::test]
async fn a_profile_filter_hides_tools_from_search_select_list_and_call() {
    let dir = Dir::new();
    filtered_profile(&dir);
    let server = Server::start(&dir, &[]);
    let safe = format!("{}/safe", server.url);
    server.wait_for_log(&format!("url={safe}"));
    let client = reqwest::Client::new();
    let session = open_session(&client, &safe, &[]).await;
    let headers = session_headers(&session);
    // Search: every allowed tool can be found, no filtered one.
    let mut found = Vec::new();
    for (id, query) in [
        (2, "add two numbers"),
        (3, "crash the server"),
        (4, "echo sleep"),
    ] {
        let (_, _, body) = post(&client, &safe, &headers, &search(id, query)).await;
        let result = result_of(&body, id);
        for hit in result["structuredContent"]["tools"].as_array().unwrap() {
            found.push(hit["name"].as_str().unwrap().to_owned());
        }
    }
    assert!(found.iter().any(|n| n == "alpha__add"), "{found:?}");
    for hidden in [
        "beta__add",
        "alpha__crash",
        "beta__crash",
        "alpha__sleep",
        "beta__sleep",
    ] {
        assert!(
            !found.iter().any(|n| n == hidden),
            "{hidden} found: {found:?}"
        );
    }
    // Select: a filtered tool is unknown; an allowed one loads and is listed.
    let select = call(
        5,
        "select_tools",
        json!({"names": ["beta__add", "beta__echo"]}),
    );
    let (_, _, body) = post(&client, &safe, &headers, &select).await;
    let selected = result_of(&body, 5);
    assert_eq!(
        selected["structuredContent"]["unknown"][0]["name"], "beta__add",
        "{selected}"
    );
    let (_, _, body) = post(&client, &safe, &headers, &tools_list(6)).await;
    let listed: Vec<String> = (result_of(&body, 6)["tools"].as_array().unwrap().iter())
        .map(|t| t["name"].as_str().unwrap().to_owned())
        .collect();
    assert!(listed.contains(&"beta__echo".to_owned()), "{listed:?}");
    assert!(!listed.contains(&"beta__add".to_owned()), "{listed:?}");
    // Call, through call_tool and directly: refused as unknown; an allowed one runs.
    let through = call(
        7,
        "call_tool",
        json!({"name": "beta__add", "arguments": {"a": 1, "b": 2}}),
    );
    let (_, _, body) = post(&client, &safe, &headers, &through).await;
    let refused = result_of(&body, 7);
    assert_eq!(refused["isError"], true, "{refused}");
    assert!(text_of(&refused).contains("Unknown tool"), "{refused}");
    let (_, _, body) = post(
        &client,
        &safe,
        &headers,
        &call(8, "alpha__crash", json!({})),
    )
    .await;
    // Refused as unknown (-32602 naming the tool), not any error: a denied tool
    // must look exactly like one that does not exist.
    let error = (body.lines())
        .map(|l| l.strip_prefix("data: ").unwrap_or(l))
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .find(|m| m["id"] == 8)
        .unwrap_or_else(|| panic!("no answer 8 in {body}"))["error"]
        .clone();
    assert_eq!(error["code"], -32602, "{body}");
    assert!(
        (error["message"].as_str().unwrap_or_default()).starts_with("Unknown tool 'alpha__crash'"),
        "{body}"
    );
    let allowed = call(
        9,
        "call_tool",
        json!({"name": "alpha__add", "arguments": {"a": 1, "b": 2}}),
    );
    let (_, _, body) = post(&client, &safe, &headers, &allowed).await;
    let added = result_of(&body, 9);
    assert_ne!(added["isError"], true, "{added}");
    assert!(text_of(&added).contains('3'), "{added}");
    // The whole file's view at /mcp still has every tool.
    let session = open_session(&client, &server.url, &[]).await;
    let headers = session_headers(&session);
    let (_, _, body) = post(&client, &server.url, &headers, &through).await;
    let result = result_of(&body, 7);
    assert_ne!(result["isError"], true, "{result}");
}

/// The profile filter where it is applied (tools entering the profile's catalog), seen a
/// second way (issue 35 item 13): over stdio with `serve --profile`, by a server's
/// `prefix`ed names, a denied tool is neither found, selected, listed nor called.
#[tokio::test]
async fn a_profile_filter_holds_over_stdio_by_the_prefixed_name() {
    use crate::support::session::{Session, structured};
    let dir = Dir::new();
    let mut toml = fixture("alpha", &[], "prefix = \"al\"");
    toml += "[profiles.safe]\nservers = [\"alpha\"]\ndeny_tools = [\"al__add\"]\n";
    let config = dir.config(&toml);
    let session = Session::start_with(&config, |command| {
        command.args(["--profile", "safe"]);
    })
    .await;
    let found = structured(&session.search(json!({"query": "add two numbers"})).await);
    let names: Vec<&str> = (found["tools"].as_array().into_iter().flatten())
        .filter_map(|t| t["name"].as_str())
        .collect();
    assert!(!names.contains(&"al__add"), "{found}");
    let echo = structured(&session.search(json!({"query": "echo a message"})).await);
    assert!(echo.to_string().contains("al__echo"), "{echo}");
    let selected = session
        .call("select_tools", json!({"names": ["al__add"]}))
        .await;
    assert_eq!(selected.is_error, Some(true), "{selected:?}");
    let called = session
        .call_through("al__add", json!({"a": 1, "b": 2}))
        .await;
    assert_eq!(called.is_error, Some(true), "{called:?}");
    let text = format!("{called:?}");
    assert!(
        text.contains("Unknown tool") && !text.contains('3'),
        "{text}"
    );
    let listed: Vec<String> = (session.list().await.iter())
        .map(|t| t.name.to_string())
        .collect();
    assert!(!listed.iter().any(|n| n == "al__add"), "{listed:?}");
    session.close().await;
}

#[test]
fn a_profile_pattern_that_cannot_match_is_a_config_error_with_the_fix() {
    let dir = Dir::new();
    let mut toml = fixture("alpha", &[], "");
    toml += "[profiles.safe]\nservers = [\"alpha\"]\nallow_tools = [\"alpha/echo\"]\n";
    dir.config(&toml);
    let out = dir.run(&["check"]);
    assert_eq!(
        out.status.code(),
        Some(2),
        "{}",
        crate::support::stderr(&out)
    );
    let text = crate::support::stderr(&out);
    assert_contains_all(
        &text,
        &[
            "[profiles.safe] allow_tools: `alpha/echo` has `/`",
            "write `alpha__echo`",
        ],
    );
    toml = fixture("alpha", &[], "");
    toml += "[profiles.safe]\nservers = [\"alpha\"]\ndeny_tools = [\"echo\"]\n";
    dir.config(&toml);
    let text = crate::support::stderr(&dir.run(&["check"]));
    assert_contains_all(
        &text,
        &[
            "`echo` matches no tool of the profile's servers",
            "write e.g. `alpha__echo` or `*__echo`",
        ],
    );
}

/// Over stdio a request may reuse the id of one the client cancelled
/// (`server/reused_ids/`); over HTTP the same client sees the same.
#[tokio::test]
async fn a_request_reusing_a_cancelled_id_gets_its_own_answer() {
    let (_dir, server) = Server::serving(&fixture("fx", &[], ""));
    server.wait_for_log("tools listed");
    let client = reqwest::Client::new();
    let session = open_session(&client, &server.url, &[]).await;
    let headers = session_headers(&session);
    let sleep = call(
        7,
        "call_tool",
        json!({"name": "fx__sleep", "arguments": {"ms": 3000}}),
    );
    let mut first = client
        .post(&server.url)
        .header("content-type", "application/json")
        .header("accept", crate::support::http::ACCEPT)
        .header("mcp-session-id", &session)
        .header("mcp-protocol-version", "2025-06-18")
        .body(sleep.to_string())
        .send()
        .await
        .unwrap();
    assert_eq!(first.status().as_u16(), 200);
    let cancel = json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
        "params": {"requestId": 7, "reason": "user"}});
    let (status, _, body) = post(&client, &server.url, &headers, &cancel).await;
    assert_eq!(status, 202, "{body}");
    let add = call(
        7,
        "call_tool",
        json!({"name": "fx__add", "arguments": {"a": 2, "b": 3}}),
    );
    let (status, _, body) = post(&client, &server.url, &headers, &add).await;
    assert_eq!(status, 200, "{body}");
    let added = result_of(&body, 7);
    assert_ne!(added["isError"], true, "{added}");
    assert!(text_of(&added).contains('5'), "{added}");
    // The cancelled call is not answered on its own stream either.
    let mut rest = String::new();
    while let Ok(Ok(Some(chunk))) =
        tokio::time::timeout(Duration::from_secs(10), first.chunk()).await
    {
        rest.push_str(&String::from_utf8_lossy(&chunk));
    }
    assert!(!rest.contains("\"result\""), "{rest}");
}

/// Issue 24: `/metrics` labels a call with the server that owns the name in the catalog,
/// not the text before `__`: a tool of a `prefix = ""` server was counted under `unknown`,
/// one of a `prefix = "gh"` server under `gh`. A name no server has is `unknown`, so a
/// client cannot add labels by inventing names.
#[tokio::test]
async fn metrics_label_a_call_with_the_server_that_owns_the_name() {
    let (_dir, server) = Server::serving(&format!(
        "{}\n{}",
        fixture("bare", &[], "prefix = \"\""),
        fixture("github", &[], "prefix = \"gh\""),
    ));
    server.wait_for_log_times("tools listed", 2);
    let client = reqwest::Client::new();
    let session = open_session(&client, &server.url, &[]).await;
    let headers = [("mcp-session-id", session.as_str())];
    for (id, name) in [
        (2, "echo"),
        (3, "gh__echo"),
        (4, "gh__echo"),
        (5, "made__up"),
    ] {
        let (status, _, body) = post(
            &client,
            &server.url,
            &headers,
            &call(id, name, json!({"said": "hi"})),
        )
        .await;
        assert_eq!(status, 200, "{body}");
    }
    let metrics = server.metrics(&[]).await;
    assert_contains_all(
        &metrics,
        &[
            "mcp_defer_http_requests_total{method=\"tools/call\",server=\"bare\"} 1",
            "mcp_defer_http_requests_total{method=\"tools/call\",server=\"github\"} 2",
            "mcp_defer_http_requests_total{method=\"tools/call\",server=\"unknown\"} 1",
        ],
    );
    for label in ["server=\"gh\"", "server=\"made\"", "server=\"echo\""] {
        assert!(!metrics.contains(label), "{label}:\n{metrics}");
    }
}
