//! Issue 31 over `serve --http`: a plain `tools/call` of a handshake-era session skips
//! rmcp's session worker (`server/http/thin.rs`). A quick answer comes back as JSON; what
//! the call sends the client before it (progress, an elicitation) comes first on the
//! call's own SSE stream, and the client's answer to the elicitation reaches the server;
//! a call the client cancels is not answered, and one whose client hangs up is cancelled;
//! a request rmcp must check (a browser's
//! `Origin`) goes rmcp's way. Real processes: mcp-defer, the fixture server, reqwest.

use std::time::Duration;

use serde_json::{Value, json};

use crate::support::http::{ACCEPT, Server, post, result_of, session_headers};
use crate::support::{assert_contains_all, fixture};

const THIN: &str = "tools/call over HTTP on the thin path";

fn call(id: u64, name: &str, arguments: Value) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
        "params": {"name": name, "arguments": arguments}})
}

/// A handshake-era session whose client can answer an elicitation; its id.
async fn open(client: &reqwest::Client, url: &str) -> String {
    let initialize = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {"elicitation": {}},
        "clientInfo": {"name": "reqwest", "version": "1"}}});
    let (status, session, body) = post(client, url, &[], &initialize).await;
    assert_eq!(status, 200, "initialize: {body}");
    let session = session.unwrap_or_else(|| panic!("no Mcp-Session-Id: {body}"));
    let initialized = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
    let (status, _, _) = post(client, url, &session_headers(&session), &initialized).await;
    assert_eq!(status, 202);
    session
}

/// Sends `body` in `session`; the response, headers read.
async fn send(
    client: &reqwest::Client,
    url: &str,
    session: &str,
    body: &Value,
    extra: &[(&str, &str)],
) -> reqwest::Response {
    let mut request = client
        .post(url)
        .header("content-type", "application/json")
        .header("accept", ACCEPT)
        .body(body.to_string());
    for (name, value) in session_headers(session).iter().chain(extra) {
        request = request.header(*name, *value);
    }
    request.send().await.unwrap_or_else(|e| panic!("POST: {e}"))
}

fn content_type(response: &reqwest::Response) -> String {
    (response.headers().get("content-type"))
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default()
        .to_owned()
}

/// The JSON-RPC messages of an SSE response, one a `data:` line, as they come.
struct Events {
    response: reqwest::Response,
    buffer: String,
    ready: std::collections::VecDeque<Value>,
}

impl Events {
    fn new(response: reqwest::Response) -> Events {
        Events {
            response,
            buffer: String::new(),
            ready: Default::default(),
        }
    }

    /// The next message, or `None` when the stream ends (or says nothing for 30 s).
    async fn next(&mut self) -> Option<Value> {
        loop {
            if let Some(message) = self.ready.pop_front() {
                return Some(message);
            }
            let chunk = tokio::time::timeout(Duration::from_secs(30), self.response.chunk());
            let chunk = chunk.await.ok()?.ok()??;
            self.buffer.push_str(&String::from_utf8_lossy(&chunk));
            while let Some(end) = self.buffer.find("\n\n") {
                let event: String = self.buffer.drain(..end + 2).collect();
                let data = event.lines().filter_map(|l| l.strip_prefix("data: "));
                self.ready
                    .extend(data.filter_map(|d| serde_json::from_str(d).ok()));
            }
        }
    }
}

#[tokio::test]
async fn plain_calls_skip_rmcps_worker_and_keep_progress_and_requests_on_their_stream() {
    let (_dir, server) = Server::serving(&fixture("fx", &["--ask-tool"], ""));
    server.wait_for_log("tools listed");
    let client = reqwest::Client::new();
    let session = open(&client, &server.url).await;

    // A quick answer is the response, as JSON.
    let added = send(
        &client,
        &server.url,
        &session,
        &call(2, "fx__add", json!({"a": 2, "b": 3})),
        &[],
    )
    .await;
    assert_eq!(added.status().as_u16(), 200);
    assert_eq!(content_type(&added), "application/json");
    let body = added.text().await.unwrap_or_default();
    assert!(result_of(&body, 2).to_string().contains('5'), "{body}");

    // Progress under the call's own token, all of it before the answer, on its stream.
    let mut sleep = call(3, "fx__sleep", json!({"ms": 300}));
    sleep["params"]["_meta"] = json!({"progressToken": "p3"});
    let slept = send(&client, &server.url, &session, &sleep, &[]).await;
    assert_eq!(content_type(&slept), "text/event-stream");
    let mut events = Events::new(slept);
    let mut progress = Vec::new();
    let answer = loop {
        let message = events
            .next()
            .await
            .unwrap_or_else(|| panic!("{progress:#?}"));
        if message.get("method").is_none() {
            break message;
        }
        progress.push(message);
    };
    assert_eq!(answer["id"], 3, "{answer}");
    assert!(
        answer["result"].to_string().contains("slept 300 ms"),
        "{answer}"
    );
    assert_eq!(progress.len(), 10, "{progress:#?}");
    for message in &progress {
        assert_eq!(message["method"], "notifications/progress", "{message}");
        assert_eq!(message["params"]["progressToken"], "p3", "{message}");
    }

    // The server's elicitation comes on the call's stream; the client's answer, POSTed
    // as usual, reaches the server, and the call's answer follows on the same stream.
    let ask = call(4, "fx__ask", json!({"asks": ["elicitation"]}));
    let asked = send(&client, &server.url, &session, &ask, &[]).await;
    assert_eq!(content_type(&asked), "text/event-stream");
    let mut events = Events::new(asked);
    let elicit = events
        .next()
        .await
        .unwrap_or_else(|| panic!("no elicitation"));
    assert_eq!(elicit["method"], "elicitation/create", "{elicit}");
    let reply = json!({"jsonrpc": "2.0", "id": elicit["id"],
        "result": {"action": "accept", "content": {"name": "Ada"}}});
    let (status, _, body) = post(&client, &server.url, &session_headers(&session), &reply).await;
    assert_eq!(status, 202, "{body}");
    let answer = events.next().await.unwrap_or_else(|| panic!("no answer"));
    assert_eq!(answer["id"], 4, "{answer}");
    assert_contains_all(&answer["result"].to_string(), &["accept", "Ada"]);

    // A call the client cancels reaches the server as cancelled and is not answered.
    let long = call(5, "fx__sleep", json!({"ms": 20000}));
    let running = send(&client, &server.url, &session, &long, &[]).await;
    let cancel = json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
        "params": {"requestId": 5, "reason": "changed my mind"}});
    let (status, _, body) = post(&client, &server.url, &session_headers(&session), &cancel).await;
    assert_eq!(status, 202, "{body}");
    server.wait_for_log("sleep cancelled");
    let mut events = Events::new(running);
    assert_eq!(
        events.next().await,
        None,
        "the cancelled call is not answered"
    );

    // A client that hangs up before the answer's headers cancels its call: the server is
    // told (hyper drops the response when the connection closes mid-request).
    let hung_up = call(7, "fx__sleep", json!({"ms": 20000})).to_string();
    let host = server.url.trim_start_matches("http://");
    let (address, path) = host.split_once('/').unwrap_or((host, ""));
    let mut socket = std::net::TcpStream::connect(address).unwrap_or_else(|e| panic!("{e}"));
    let request = format!(
        "POST /{path} HTTP/1.1\r\nHost: {address}\r\nContent-Type: application/json\r\n\
         Accept: {ACCEPT}\r\nMcp-Session-Id: {session}\r\nContent-Length: {}\r\n\r\n{hung_up}",
        hung_up.len()
    );
    std::io::Write::write_all(&mut socket, request.as_bytes()).unwrap_or_else(|e| panic!("{e}"));
    tokio::time::sleep(Duration::from_millis(30)).await;
    drop(socket);
    server.wait_for_log_times("sleep cancelled", 2);

    // A browser's request is rmcp's to check (its Origin): answered there, as before.
    let origin = [("origin", "http://localhost:5173")];
    let by_rmcp = send(
        &client,
        &server.url,
        &session,
        &call(6, "fx__add", json!({"a": 1, "b": 1})),
        &origin,
    )
    .await;
    assert_eq!(content_type(&by_rmcp), "text/event-stream");
    let body = by_rmcp.text().await.unwrap_or_default();
    assert!(result_of(&body, 6).to_string().contains('2'), "{body}");
    let log = server.log();
    assert_eq!(
        log.matches(THIN).count(),
        5,
        "calls 2 to 5 and 7 only:\n{log}"
    );
}

/// Issue 31, item 1, over HTTP: a plain call's answer is the JSON-RPC response carrying the
/// downstream's `result` as its server wrote it (its own key, its spelling of a number).
#[tokio::test]
async fn a_plain_calls_answer_is_the_servers_bytes() {
    let result =
        r#"{"content":[{"type":"text","text":"ok"}],"structuredContent":{"z":1e15},"serverOwn":1}"#;
    let list = json!({"tools": [{"name": "echo", "inputSchema": {"type": "object"}}]});
    let args = ["--raw-list", &list.to_string(), "--raw-call-result", result];
    let (_dir, server) = Server::serving(&fixture("rw", &args, ""));
    server.wait_for_log("tools listed");
    let client = reqwest::Client::new();
    let session = open(&client, &server.url).await;
    let echoed = send(
        &client,
        &server.url,
        &session,
        &call(2, "rw__echo", json!({})),
        &[],
    )
    .await;
    assert_eq!(content_type(&echoed), "application/json");
    let body = echoed.text().await.unwrap_or_default();
    assert_eq!(
        body,
        format!(r#"{{"jsonrpc":"2.0","id":2,"result":{result}}}"#)
    );
}

/// A 2026-07-28 request without a session, with the headers its era has.
fn sessionless(client: &reqwest::Client, url: &str, body: &Value) -> reqwest::RequestBuilder {
    let name = body["params"]["name"]
        .as_str()
        .unwrap_or_default()
        .to_owned();
    client
        .post(url)
        .header("content-type", "application/json")
        .header("accept", ACCEPT)
        .header("mcp-protocol-version", "2026-07-28")
        .header("mcp-method", "tools/call")
        .header("mcp-name", name)
        .body(body.to_string())
}

/// `call` with the 2026-07-28 envelope in its `_meta`, and `meta` besides.
fn enveloped(mut call: Value, meta: Value) -> Value {
    let mut envelope = crate::support::raw::claude_envelope();
    if let (Some(envelope), Some(meta)) = (envelope.as_object_mut(), meta.as_object()) {
        envelope.extend(meta.clone());
    }
    call["params"]["_meta"] = envelope;
    call
}

/// Issue 31, item 1, for the 2026-07-28 era over HTTP: a plain call without a session
/// skips rmcp's per-request server and loop. Its answer is JSON, `resultType` first; two
/// clients using one id and one progress token at once each get their own progress, under
/// their own token, and their own answer; a client that hangs up cancels its call; a
/// request whose headers rmcp must judge (no `Mcp-Name`, a name that is not the body's)
/// gets rmcp's 400, as before.
#[tokio::test]
async fn sessionless_calls_skip_rmcps_server_per_request_and_keep_their_progress_apart() {
    const SESSIONLESS: &str = "tools/call without a session on the thin path";
    let (_dir, server) = Server::serving(&fixture("fx", &[], ""));
    server.wait_for_log("tools listed");
    let client = reqwest::Client::new();

    let add = enveloped(call(2, "fx__add", json!({"a": 2, "b": 3})), json!({}));
    let added = (sessionless(&client, &server.url, &add).send().await)
        .unwrap_or_else(|e| panic!("POST: {e}"));
    assert_eq!(added.status().as_u16(), 200);
    assert_eq!(content_type(&added), "application/json");
    let body = added.text().await.unwrap_or_default();
    assert!(
        body.starts_with(r#"{"jsonrpc":"2.0","id":2,"result":{"resultType":"complete","#),
        "{body}"
    );
    assert!(result_of(&body, 2).to_string().contains('5'), "{body}");

    // Two clients, one id, one token, at once: each its own progress and answer.
    let sleeps = [300, 400].map(|ms| {
        let sleep = call(3, "fx__sleep", json!({"ms": ms}));
        let sleep = enveloped(sleep, json!({"progressToken": "p"}));
        let request = sessionless(&client, &server.url, &sleep);
        async move {
            let response = request.send().await.unwrap_or_else(|e| panic!("POST: {e}"));
            assert_eq!(content_type(&response), "text/event-stream");
            let mut events = Events::new(response);
            let mut progress = Vec::new();
            loop {
                let message = (events.next().await).unwrap_or_else(|| panic!("{progress:#?}"));
                if message.get("method").is_none() {
                    return (ms, progress, message);
                }
                progress.push(message);
            }
        }
    });
    let [first, second] = sleeps;
    let (first, second) = tokio::join!(first, second);
    for (ms, progress, answer) in [first, second] {
        assert_eq!(answer["id"], 3, "{answer}");
        let text = answer["result"]["content"][0]["text"].clone();
        assert_eq!(text, format!("slept {ms} ms"), "{answer}");
        assert_eq!(progress.len(), 10, "{ms} ms: {progress:#?}");
        for message in &progress {
            assert_eq!(message["method"], "notifications/progress", "{message}");
            assert_eq!(message["params"]["progressToken"], "p", "{message}");
        }
    }

    // A client that hangs up before its answer cancels its call; the server is told.
    let long = enveloped(call(4, "fx__sleep", json!({"ms": 20000})), json!({})).to_string();
    let host = server.url.trim_start_matches("http://");
    let (address, path) = host.split_once('/').unwrap_or((host, ""));
    let mut socket = std::net::TcpStream::connect(address).unwrap_or_else(|e| panic!("{e}"));
    let request = format!(
        "POST /{path} HTTP/1.1\r\nHost: {address}\r\nContent-Type: application/json\r\n\
         Accept: {ACCEPT}\r\nMCP-Protocol-Version: 2026-07-28\r\nMcp-Method: tools/call\r\n\
         Mcp-Name: fx__sleep\r\nContent-Length: {}\r\n\r\n{long}",
        long.len()
    );
    std::io::Write::write_all(&mut socket, request.as_bytes()).unwrap_or_else(|e| panic!("{e}"));
    tokio::time::sleep(Duration::from_millis(30)).await;
    drop(socket);
    server.wait_for_log("sleep cancelled");

    // Headers rmcp must judge: its 400, as before (SEP-2243).
    let mut no_name = sessionless(&client, &server.url, &add).build();
    if let Ok(request) = &mut no_name {
        request.headers_mut().remove("mcp-name");
    }
    let no_name = client
        .execute(no_name.unwrap_or_else(|e| panic!("{e}")))
        .await;
    let no_name = no_name.unwrap_or_else(|e| panic!("POST: {e}"));
    assert_eq!(no_name.status().as_u16(), 400);
    let body = no_name.text().await.unwrap_or_default();
    assert!(body.contains("Mcp-Name"), "{body}");
    let other = sessionless(&client, &server.url, &add)
        .header("mcp-name", "fx__sleep")
        .send()
        .await
        .unwrap_or_else(|e| panic!("POST: {e}"));
    assert_eq!(other.status().as_u16(), 400);

    let log = server.log();
    assert_eq!(
        log.matches(SESSIONLESS).count(),
        4,
        "calls 2, 3 (twice) and 4 only:\n{log}"
    );
}
