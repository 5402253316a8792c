//! `serve --http` in front of a team (issue 19): connection limits against slowloris,
//! sessions per token, sessions bound to their token, the protocol details a hostile or
//! careless client tries, probes and metrics. Real processes: mcp-defer, the fixture
//! server, clients over TCP (raw sockets where the test is about bytes on the wire,
//! reqwest where it is about HTTP answers).

use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::support::http::{
    ACCEPT, Server, initialize, open_session, post, result_of, session_headers, tools_list,
};
use crate::support::wait::{eventually, poll};
use crate::support::{Dir, assert_contains_all, fixture, recorded_calls};

const TOKEN: &str = "team-token-aaaaaaaa";
const OTHER: &str = "team-token-bbbbbbbb";

fn with_tokens(dir: &Dir, http: &str, servers: &str) -> Server {
    dir.config(&format!(
        "[settings.http]\ntokens_env = \"MCP_DEFER_TEST_TOKENS\"\n{http}\n\n{servers}"
    ));
    Server::start(
        dir,
        &[("MCP_DEFER_TEST_TOKENS", &format!("{TOKEN},{OTHER}"))],
    )
}

fn host_port(url: &str) -> String {
    url.trim_start_matches("http://")
        .split('/')
        .next()
        .unwrap()
        .to_owned()
}

/// Whether the server closes `stream` within `within`: a read returns EOF, a reset, or a
/// response (hyper answers a header timeout with 408 before closing).
fn closed_within(stream: &mut TcpStream, within: Duration) -> bool {
    stream.set_read_timeout(Some(within)).unwrap();
    let mut buf = [0u8; 512];
    loop {
        match stream.read(&mut buf) {
            Ok(0) => return true,
            Ok(_) => continue,
            Err(e)
                if matches!(
                    e.kind(),
                    std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
                ) =>
            {
                return false;
            }
            Err(_) => return true,
        }
    }
}

/// Asserts the server closes each of `streams` within 20 s in all (a bound, not a
/// measurement); `what` they are, for the failure.
fn assert_all_closed<'a>(streams: impl IntoIterator<Item = &'a mut TcpStream>, what: &str) {
    let deadline = Instant::now() + Duration::from_secs(20);
    for (i, s) in streams.into_iter().enumerate() {
        let left = deadline.saturating_duration_since(Instant::now());
        assert!(
            closed_within(s, left.max(Duration::from_millis(1))),
            "{what} connection {i} still open after 20 s"
        );
    }
}

const SLOW: usize = 200;

#[tokio::test]
async fn slow_connections_without_a_token_are_closed_and_do_not_delay_a_client() {
    let dir = Dir::new();
    let server = with_tokens(&dir, "header_timeout_sec = 2", &fixture("fx", &[], ""));
    let addr = host_port(&server.url);
    // A slowloris flood: connections that start a request and never finish its headers.
    let mut slow: Vec<TcpStream> = (0..SLOW)
        .map(|_| {
            let mut s = TcpStream::connect(&addr).unwrap();
            s.write_all(b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ")
                .unwrap();
            s
        })
        .collect();
    // An authorized client is served while they hang.
    let client = reqwest::Client::new();
    let bearer = format!("Bearer {TOKEN}");
    let auth = [("authorization", bearer.as_str())];
    let session = open_session(&client, &server.url, &auth).await;
    let headers = [auth[0], ("mcp-session-id", session.as_str())];
    let (status, _, body) = post(&client, &server.url, &headers, &tools_list(2)).await;
    assert_eq!(status, 200, "{body}");
    // Every slow connection is closed by the server after the header timeout (2 s);
    // without one they stay open for good. 20 s is a bound, not a measurement.
    assert_all_closed(&mut slow, "slow");
}

#[tokio::test]
async fn a_kept_alive_idle_connection_is_closed_after_the_header_timeout() {
    let (_dir, server) = Server::serving(&format!(
        "[settings.http]\nheader_timeout_sec = 1\n\n{}",
        fixture("fx", &[], "")
    ));
    let mut s = TcpStream::connect(host_port(&server.url)).unwrap();
    s.write_all(b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
        .unwrap();
    let mut buf = [0u8; 256];
    let n = s.read(&mut buf).unwrap();
    assert!(
        String::from_utf8_lossy(&buf[..n]).starts_with("HTTP/1.1 200"),
        "{}",
        String::from_utf8_lossy(&buf[..n])
    );
    assert!(
        closed_within(&mut s, Duration::from_secs(15)),
        "an idle kept-alive connection stays open"
    );
}

#[tokio::test]
async fn connections_past_max_connections_are_closed_at_once() {
    let (_dir, server) = Server::serving(&format!(
        "[settings.http]\nmax_connections = 4\nheader_timeout_sec = 60\n\n{}",
        fixture("fx", &[], "")
    ));
    let addr = host_port(&server.url);
    // Four are served: a request through the gate on each is answered (no tokens are
    // configured, so each counts as authorized from then on)...
    let mut held = Vec::new();
    for _ in 0..4 {
        let mut stream = TcpStream::connect(&addr).unwrap();
        stream
            .write_all(b"GET /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
            .unwrap();
        let mut buf = [0u8; 256];
        let n = stream.read(&mut buf).unwrap();
        assert!(
            String::from_utf8_lossy(&buf[..n]).starts_with("HTTP/1.1 "),
            "{}",
            String::from_utf8_lossy(&buf[..n])
        );
        held.push(stream);
    }
    // ...and a fifth is closed without an answer.
    let mut fifth = TcpStream::connect(&addr).unwrap();
    let _ = fifth.write_all(b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n");
    assert!(
        closed_within(&mut fifth, Duration::from_secs(10)),
        "a connection past max_connections was kept"
    );
    drop(held);
}

/// Issue 35 item 7: sockets that never send a token held every place under
/// `max_connections` (16 idle ones made 33 of 40 calls of a valid session fail). Now they
/// may hold half of it, and a new connection closes the oldest of them: a token holder's
/// calls all go through, from the same address as the idle sockets.
#[tokio::test(flavor = "multi_thread")]
async fn idle_connections_without_a_token_do_not_lock_out_a_token_holder() {
    let dir = Dir::new();
    let server = with_tokens(
        &dir,
        "max_connections = 16\nheader_timeout_sec = 60",
        &fixture("fx", &[], ""),
    );
    let addr = host_port(&server.url);
    // More idle sockets than max_connections, connected (and so accepted) before the
    // token holder's.
    let mut idle: Vec<TcpStream> = (0..40)
        .map(|_| TcpStream::connect(&addr).unwrap())
        .collect();
    let client = reqwest::Client::new();
    let bearer = format!("Bearer {TOKEN}");
    let auth = [("authorization", bearer.as_str())];
    let session = open_session(&client, &server.url, &auth).await;
    let headers = [auth[0], ("mcp-session-id", session.as_str())];
    for id in 10..50 {
        let call = json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {
            "name": "call_tool", "arguments": {"name": "fx__echo", "arguments": {"message": "hi"}}}});
        let (status, _, body) = post(&client, &server.url, &headers, &call).await;
        assert_eq!(status, 200, "call {id}: {body}");
        assert_ne!(result_of(&body, id)["isError"], json!(true), "{body}");
    }
    // The idle sockets were closed, oldest first, down to their share (8 of 16): the 32
    // oldest are gone well before the header timeout (60 s).
    assert_all_closed(idle.iter_mut().take(32), "idle");
}

#[tokio::test]
async fn one_token_is_refused_sessions_past_its_cap_with_the_setting_named() {
    let dir = Dir::new();
    let server = with_tokens(&dir, "max_sessions_per_token = 3", &fixture("fx", &[], ""));
    let client = reqwest::Client::new();
    let mine = format!("Bearer {TOKEN}");
    let auth = [("authorization", mine.as_str())];
    let mut sessions = Vec::new();
    for _ in 0..3 {
        sessions.push(open_session(&client, &server.url, &auth).await);
    }
    let (status, session, body) = post(&client, &server.url, &auth, &initialize()).await;
    assert_eq!(status, 429, "{body}");
    assert!(session.is_none());
    assert_contains_all(&body, &["max_sessions_per_token", "3 open sessions"]);
    // Another token has its own cap.
    let theirs = format!("Bearer {OTHER}");
    open_session(&client, &server.url, &[("authorization", &theirs)]).await;
    // Closing one gives its place back.
    let response = client
        .delete(&server.url)
        .header("authorization", &mine)
        .header("mcp-session-id", &sessions[0])
        .send()
        .await
        .unwrap();
    assert!(response.status().is_success(), "{}", response.status());
    open_session(&client, &server.url, &auth).await;
}

/// Session ownership seen a second way (issue 35 item 13): another token can neither
/// append to a session's list through it nor open its stream, and the owner's list is
/// untouched.
#[tokio::test]
async fn another_token_cannot_select_into_a_session_nor_open_its_stream() {
    let dir = Dir::new();
    let server = with_tokens(&dir, "", &fixture("fx", &[], ""));
    let client = reqwest::Client::new();
    let mine = format!("Bearer {TOKEN}");
    let theirs = format!("Bearer {OTHER}");
    let session = open_session(&client, &server.url, &[("authorization", &mine)]).await;
    let select = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {
        "name": "select_tools", "arguments": {"names": ["fx__add"]}}});
    let as_them = [
        ("authorization", theirs.as_str()),
        ("mcp-session-id", session.as_str()),
    ];
    let (status, _, body) = post(&client, &server.url, &as_them, &select).await;
    assert_eq!(status, 404, "{body}");
    let stream = client
        .get(&server.url)
        .header("accept", "text/event-stream")
        .header("authorization", &theirs)
        .header("mcp-session-id", &session)
        .send()
        .await
        .unwrap();
    assert_eq!(stream.status().as_u16(), 404);
    let as_me = [
        ("authorization", mine.as_str()),
        ("mcp-session-id", session.as_str()),
    ];
    let (status, _, body) = post(&client, &server.url, &as_me, &tools_list(3)).await;
    assert_eq!(status, 200, "{body}");
    let listed: Vec<String> = (result_of(&body, 3)["tools"].as_array().unwrap().iter())
        .map(|t| t["name"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(listed, ["search_tools", "select_tools", "call_tool"]);
}

#[tokio::test]
async fn a_session_is_404_to_another_token_and_to_delete_once_gone() {
    let dir = Dir::new();
    let server = with_tokens(&dir, "", &fixture("fx", &[], ""));
    let client = reqwest::Client::new();
    let mine = format!("Bearer {TOKEN}");
    let theirs = format!("Bearer {OTHER}");
    let session = open_session(&client, &server.url, &[("authorization", &mine)]).await;
    let as_them = [
        ("authorization", theirs.as_str()),
        ("mcp-session-id", session.as_str()),
    ];
    let (status, _, body) = post(&client, &server.url, &as_them, &tools_list(2)).await;
    assert_eq!(
        status, 404,
        "another token's request into the session: {body}"
    );
    let delete = |auth: &str| {
        client
            .delete(&server.url)
            .header("authorization", auth)
            .header("mcp-session-id", &session)
            .header("mcp-protocol-version", "2025-06-18")
            .send()
    };
    assert_eq!(delete(&theirs).await.unwrap().status().as_u16(), 404);
    // Still the owner's.
    let as_me = [
        ("authorization", mine.as_str()),
        ("mcp-session-id", session.as_str()),
    ];
    let (status, _, _) = post(&client, &server.url, &as_me, &tools_list(3)).await;
    assert_eq!(status, 200);
    assert_eq!(delete(&mine).await.unwrap().status().as_u16(), 202);
    assert_eq!(
        delete(&mine).await.unwrap().status().as_u16(),
        404,
        "DELETE of a session that is gone"
    );
}

#[tokio::test]
async fn session_ids_never_reach_the_log_at_debug() {
    let dir = Dir::with_config(&fixture("fx", &[], ""));
    let server = Server::start(&dir, &[("RUST_LOG", "debug")]);
    let client = reqwest::Client::new();
    let session = open_session(&client, &server.url, &[]).await;
    let headers = [("mcp-session-id", session.as_str())];
    let (status, _, _) = post(&client, &server.url, &headers, &tools_list(2)).await;
    assert_eq!(status, 200);
    let response = client
        .delete(&server.url)
        .header("mcp-session-id", &session)
        .send()
        .await
        .unwrap();
    assert_eq!(response.status().as_u16(), 202);
    // Its whole log, to its last line: the session's close is in it.
    let log = server.stop();
    assert!(log.contains("create new session"), "rmcp logged: {log}");
    let tail = &session[8..];
    assert!(!log.contains(tail), "the session id is in the log:\n{log}");
}

#[tokio::test]
async fn the_bearer_scheme_is_matched_in_any_case() {
    let dir = Dir::new();
    let server = with_tokens(&dir, "", &fixture("fx", &[], ""));
    let client = reqwest::Client::new();
    for scheme in ["bearer", "BEARER", "Bearer"] {
        let auth = format!("{scheme} {TOKEN}");
        let (status, _, body) = post(
            &client,
            &server.url,
            &[("authorization", &auth)],
            &initialize(),
        )
        .await;
        assert_eq!(status, 200, "{scheme}: {body}");
    }
}

fn raw_post(
    client: &reqwest::Client,
    url: &str,
    headers: &[(&str, &str)],
    body: Vec<u8>,
) -> reqwest::RequestBuilder {
    let mut request = client
        .post(url)
        .header("content-type", "application/json")
        .header("accept", ACCEPT)
        .body(body);
    for (name, value) in headers {
        request = request.header(*name, *value);
    }
    request
}

#[tokio::test]
async fn invalid_json_is_a_400_parse_error_and_a_lone_surrogate_becomes_u_fffd() {
    let (_dir, server) = Server::serving(&fixture("fx", &[], ""));
    let client = reqwest::Client::new();
    let session = open_session(&client, &server.url, &[]).await;
    let headers = session_headers(&session);
    let response = raw_post(
        &client,
        &server.url,
        &headers,
        b"{\"jsonrpc\": \"2.0\", \"id\": 2, ".to_vec(),
    )
    .send()
    .await
    .unwrap();
    assert_eq!(response.status().as_u16(), 400);
    let body: Value = response.json().await.unwrap();
    assert_eq!(body["error"]["code"], -32700, "{body}");

    // `\ud83d` alone: what JavaScript writes for an emoji cut in half.
    let call = r#"{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"call_tool","arguments":{"name":"fx__echo","arguments":{"message":"tokyo \ud83d"}}}}"#;
    let response = raw_post(&client, &server.url, &headers, call.as_bytes().to_vec())
        .send()
        .await
        .unwrap();
    assert_eq!(response.status().as_u16(), 200);
    let text = response.text().await.unwrap();
    let result = result_of(&text, 3);
    assert!(
        result.to_string().contains("tokyo \u{fffd}")
            || result.to_string().contains("tokyo \\ufffd"),
        "{result}"
    );
}

fn sleep_call(id: u64, ms: u64) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {
        "name": "call_tool", "arguments": {"name": "fx__sleep", "arguments": {"ms": ms}}}})
}

#[tokio::test]
async fn a_request_reusing_an_in_flight_id_is_refused_and_the_first_is_answered() {
    let (_dir, server) = Server::serving(&fixture("fx", &[], ""));
    let client = reqwest::Client::new();
    let session = open_session(&client, &server.url, &[]).await;
    let headers = session_headers(&session);
    let first = raw_post(
        &client,
        &server.url,
        &headers,
        serde_json::to_vec(&sleep_call(7, 1500)).unwrap(),
    )
    .send()
    .await
    .unwrap();
    assert_eq!(first.status().as_u16(), 200);
    let (status, _, body) = post(&client, &server.url, &headers, &tools_list(7)).await;
    assert_eq!(status, 400, "{body}");
    assert_contains_all(&body, &["-32600", "already in flight"]);
    let answer = tokio::time::timeout(Duration::from_secs(30), first.text())
        .await
        .expect("the first request is answered")
        .unwrap();
    assert!(result_of(&answer, 7).is_object(), "{answer}");
    // Its id is free again.
    let (status, _, _) = post(&client, &server.url, &headers, &tools_list(7)).await;
    assert_eq!(status, 200);
}

fn stateless_sleep_call(id: u64, ms: u64) -> Value {
    let mut call = sleep_call(id, ms);
    call["params"]["_meta"] = crate::support::raw::claude_envelope();
    call
}

#[tokio::test]
async fn stateless_requests_count_under_max_concurrent_requests() {
    let dir = Dir::new();
    let calls = dir.file("calls");
    dir.config(&format!(
        "[settings.http]\nmax_concurrent_requests = 1\n\n{}",
        fixture("fx", &["--record-calls", &calls.to_string_lossy()], "")
    ));
    let server = Server::start(&dir, &[]);
    let client = reqwest::Client::new();
    let headers = [
        ("mcp-protocol-version", "2026-07-28"),
        ("mcp-method", "tools/call"),
        ("mcp-name", "call_tool"),
    ];
    // rmcp sends a stateless answer's headers with its first message, so the first call
    // runs in its own task while the second is tried until it meets the first in flight.
    let first = tokio::spawn(
        raw_post(
            &client,
            &server.url,
            &headers,
            serde_json::to_vec(&stateless_sleep_call(1, 4000)).unwrap(),
        )
        .send(),
    );
    // In flight once the server has it; each request below holds the limit for a
    // millisecond only, so one of them meets the first.
    eventually("the first call reaches the server", async || {
        recorded_calls(&calls, "sleep") > 0
    })
    .await;
    let mut id = 1;
    let refused = poll(Duration::from_secs(4), async || {
        id += 1;
        let call = stateless_sleep_call(id, 1);
        let (status, _, body) = post(&client, &server.url, &headers, &call).await;
        if status == 429 {
            return Some(body);
        }
        assert_eq!(status, 200, "{body}");
        None
    })
    .await;
    let Ok(body) = refused else {
        let first = first.await.unwrap().unwrap();
        panic!(
            "never refused; the first: {} {}",
            first.status(),
            first.text().await.unwrap()
        );
    };
    assert_contains_all(&body, &["max_concurrent_requests"]);
    let answer = first.await.unwrap().unwrap().text().await.unwrap();
    assert_contains_all(&answer, &["\"id\":1", "slept"]);
    let (status, _, body) =
        post(&client, &server.url, &headers, &stateless_sleep_call(3, 10)).await;
    assert_eq!(status, 200, "{body}");
}

#[tokio::test]
async fn a_loopback_origin_is_allowed_by_default_on_loopback() {
    let (_dir, server) = Server::serving(&fixture("fx", &[], ""));
    let client = reqwest::Client::new();
    let local = [("origin", "http://localhost:6274")];
    let (status, _, body) = post(&client, &server.url, &local, &initialize()).await;
    assert_eq!(status, 200, "{body}");
    let evil = [("origin", "http://localhost.evil.example")];
    let (status, _, _) = post(&client, &server.url, &evil, &initialize()).await;
    assert_eq!(status, 403);
}

#[tokio::test]
async fn probes_answer_and_metrics_count_calls_behind_the_token() {
    let dir = Dir::new();
    let server = with_tokens(&dir, "", &fixture("fx", &[], "required = true"));
    let client = reqwest::Client::new();
    let base = server.url.trim_end_matches("/mcp").to_owned();
    let health = client.get(format!("{base}/healthz")).send().await.unwrap();
    assert_eq!(health.status().as_u16(), 200);
    // Ready once the required server is connected.
    eventually("/readyz says ready", async || {
        let ready = client.get(format!("{base}/readyz")).send().await.unwrap();
        if ready.status().as_u16() == 200 {
            return Ok(());
        }
        assert_eq!(ready.status().as_u16(), 503);
        Err(ready.text().await.unwrap())
    })
    .await;
    let bearer = format!("Bearer {TOKEN}");
    let auth = [("authorization", bearer.as_str())];
    let session = open_session(&client, &server.url, &auth).await;
    let headers = [
        auth[0],
        ("mcp-session-id", session.as_str()),
        ("mcp-protocol-version", "2025-06-18"),
    ];
    let (status, _, body) = post(&client, &server.url, &headers, &sleep_call(2, 1)).await;
    assert_eq!(status, 200, "{body}");
    let refused = client.get(format!("{base}/metrics")).send().await.unwrap();
    assert_eq!(refused.status().as_u16(), 401);
    let metrics = server.metrics(&[("authorization", &bearer)]).await;
    assert_contains_all(
        &metrics,
        &[
            "mcp_defer_http_sessions_open 1",
            "mcp_defer_http_requests_total{method=\"tools/call\",server=\"fx\"} 1",
            "mcp_defer_http_request_duration_seconds_count{method=\"tools/call\",server=\"fx\"} 1",
            "mcp_defer_downstream_up{server=\"fx\",state=\"ready\"} 1",
        ],
    );
}

/// Reads SSE `data:` messages from `response` until one satisfies `wanted`.
async fn next_message(
    response: &mut reqwest::Response,
    buffer: &mut String,
    wanted: impl Fn(&Value) -> bool,
) -> Option<Value> {
    loop {
        while let Some(end) = buffer.find('\n') {
            let line: String = buffer.drain(..=end).collect();
            if let Some(data) = line.trim_end().strip_prefix("data: ")
                && let Ok(message) = serde_json::from_str::<Value>(data)
                && wanted(&message)
            {
                return Some(message);
            }
        }
        let chunk = response.chunk().await.ok()??;
        buffer.push_str(&String::from_utf8_lossy(&chunk));
    }
}

#[tokio::test]
async fn an_elicitation_during_a_call_arrives_on_that_calls_stream() {
    let (_dir, server) = Server::serving(&fixture("fx", &["--ask-tool"], ""));
    let client = reqwest::Client::new();
    let init = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {"elicitation": {}},
        "clientInfo": {"name": "no-get-stream", "version": "1"}}});
    let (status, session, body) = post(&client, &server.url, &[], &init).await;
    assert_eq!(status, 200, "{body}");
    let session = session.unwrap();
    let headers = session_headers(&session);
    let (status, _, _) = post(
        &client,
        &server.url,
        &headers,
        &json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
    )
    .await;
    assert_eq!(status, 202);
    // This client never opens the GET stream: the call's own stream is all it reads.
    let call = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {
        "name": "call_tool", "arguments": {"name": "fx__ask", "arguments": {"asks": ["elicitation"]}}}});
    let mut stream = raw_post(
        &client,
        &server.url,
        &headers,
        serde_json::to_vec(&call).unwrap(),
    )
    .send()
    .await
    .unwrap();
    assert_eq!(stream.status().as_u16(), 200);
    let mut buffer = String::new();
    let asked = tokio::time::timeout(
        Duration::from_secs(20),
        next_message(&mut stream, &mut buffer, |m| {
            m["method"] == "elicitation/create"
        }),
    )
    .await
    .unwrap_or_else(|_| panic!("no elicitation on the call's stream:\n{}", server.log()))
    .expect("the call's stream ended without the elicitation");
    let answer = json!({"jsonrpc": "2.0", "id": asked["id"], "result": {
        "action": "accept", "content": {"name": "Ada"}}});
    let (status, _, body) = post(&client, &server.url, &headers, &answer).await;
    assert_eq!(status, 202, "{body}");
    let result = tokio::time::timeout(
        Duration::from_secs(20),
        next_message(&mut stream, &mut buffer, |m| m["id"] == 2),
    )
    .await
    .expect("the call is answered")
    .expect("the call's stream ended without its answer");
    assert!(result.to_string().contains("Ada"), "{result}");
}
