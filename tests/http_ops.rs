//! `serve --http` for whoever runs it for a team (issue 19): the JSON log a collector
//! reads, and the search latency `/metrics` shows. Real processes: mcp-defer, the fixture
//! server, plain HTTP clients (reqwest).

use std::time::Duration;

use serde_json::{Value, json};

use crate::http::{Server, open_session, post, result_of, tools_list};
use crate::util::{Dir, fixture};

const TOKEN: &str = "ops-token-cccccccc";

fn search(id: u64, query: &str) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {
        "name": "search_tools", "arguments": {"query": query}}})
}

#[tokio::test]
async fn json_logs_are_one_object_a_line_and_still_mask_tokens_and_session_ids() {
    let dir = Dir::new();
    dir.config(&format!(
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
    std::thread::sleep(Duration::from_millis(300));
    let log = server.log();
    let mut serving = false;
    for line in log.lines().filter(|l| !l.trim().is_empty()) {
        let value: Value = serde_json::from_str(line)
            .unwrap_or_else(|e| panic!("not a JSON line ({e}): {line}\nlog:\n{log}"));
        for key in ["timestamp", "level", "target", "fields"] {
            assert!(value.get(key).is_some(), "no {key}: {line}");
        }
        serving |= value["fields"]["message"] == "serving MCP over Streamable HTTP"
            && value["fields"]["url"] == server.url.as_str();
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
    let dir = Dir::new();
    dir.config(&fixture("fx", &[], ""));
    let out = dir.run(&["--log-format", "yaml", "check"]);
    assert_eq!(out.status.code(), Some(2));
    let text = crate::util::stderr(&out);
    assert!(text.contains("[possible values: text, json]"), "{text}");
}

#[tokio::test]
async fn metrics_show_search_latency_and_meta_tool_calls() {
    let dir = Dir::new();
    dir.config(&fixture("fx", &[], "required = true"));
    let server = Server::start(&dir, &[]);
    server.wait_for_log("tools listed");
    let client = reqwest::Client::new();
    let session = open_session(&client, &server.url, &[]).await;
    let headers = [("mcp-session-id", session.as_str())];
    for id in [2, 3] {
        let (status, _, body) = post(&client, &server.url, &headers, &search(id, "echo")).await;
        assert_eq!(status, 200, "{body}");
        assert!(result_of(&body, id)["structuredContent"]["tools"].is_array());
    }
    let base = server.url.trim_end_matches("/mcp");
    let metrics = client
        .get(format!("{base}/metrics"))
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    for line in [
        "# TYPE mcp_defer_search_duration_seconds histogram",
        "mcp_defer_search_duration_seconds_bucket{le=\"+Inf\"} 2",
        "mcp_defer_search_duration_seconds_count 2",
        "mcp_defer_http_requests_total{method=\"tools/call\",server=\"mcp-defer\"} 2",
        "mcp_defer_http_request_errors_total{method=\"tools/call\",server=\"mcp-defer\"} 0",
        "mcp_defer_downstream_up{server=\"fx\",state=\"ready\"} 1",
        "mcp_defer_downstream_restart_attempt{server=\"fx\"} 0",
    ] {
        assert!(metrics.contains(line), "{line} missing:\n{metrics}");
    }
}

