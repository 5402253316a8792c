//! Issue 10 item 2: every line a client sends gets exactly one answer, spoken over raw stdio.

use std::io::{BufRead, BufReader, Read, Write};
use std::process::{ChildStdout, Command, Stdio};
use std::time::Duration;

use serde_json::{Value, json};

#[cfg(unix)]
use crate::support::os;
use crate::support::raw::{RawClient, claude_envelope, result_text};
use crate::support::wait::{eventually, poll_sync};
use crate::support::{BIN, Dir, assert_contains_all, fixture};

fn code(reply: &Value) -> Option<i64> {
    reply["error"]["code"].as_i64()
}

#[tokio::test]
async fn every_line_gets_exactly_one_answer() {
    let dir = Dir::with_config(&format!(
        "[settings]\nmax_message_bytes = 65536\n\n{}",
        fixture("fx", &[], "")
    ));
    let mut raw = RawClient::legacy(&dir.file("servers.toml")).await;
    let deep = format!(
        r#"{{"jsonrpc":"2.0","id":3,"method":"ping","params":{{"x":{}1{}}}}}"#,
        "[".repeat(200),
        "]".repeat(200)
    );
    let long = format!(
        r#"{{"jsonrpc":"2.0","id":4,"method":"ping","params":{{"pad":"{}"}}}}"#,
        "x".repeat(100_000)
    );
    let mut bad_utf8 = br#"{"jsonrpc":"2.0","id":5,"method":"ping","params":{"s":""#.to_vec();
    bad_utf8.extend([0xff, 0xfe]);
    bad_utf8.extend(br#""}}"#);
    let cases: Vec<(Vec<u8>, i64, Value)> = vec![
        (deep.into_bytes(), -32700, json!(3)),
        (long.into_bytes(), -32700, json!(4)),
        (bad_utf8, -32700, json!(5)),
        (br#"{"jsonrpc":"2.0","id":6,"method":"ping"} trailing"#.to_vec(), -32700, json!(6)),
        (br#"{"jsonrpc":"2.0","id":7,"method":"ping"}{"jsonrpc":"2.0","id":8,"method":"ping"}"#.to_vec(), -32700, json!(7)),
        (b"not json at all".to_vec(), -32700, Value::Null),
        (br#"{"jsonrpc":"1.0","id":9,"method":"ping"}"#.to_vec(), -32600, json!(9)),
        (br#"{"jsonrpc":"2.0","id":10}"#.to_vec(), -32600, json!(10)),
        (br#"{"jsonrpc":"2.0","id":11,"method":"ping","params":"x"}"#.to_vec(), -32600, json!(11)),
        (br#"{"jsonrpc":"2.0","id":12,"method":"tools/call","params":{}}"#.to_vec(), -32602, json!(12)),
        (br#"{"jsonrpc":"2.0","id":13,"method":"tools/call","params":{"name":"fx__echo","arguments":"x"}}"#.to_vec(), -32602, json!(13)),
    ];
    for (line, expected, id) in cases {
        let reply = raw.exchange(&line).await;
        let shown = String::from_utf8_lossy(&line[..line.len().min(80)]).into_owned();
        assert_eq!(code(&reply), Some(expected), "{shown}: {reply}");
        assert_eq!(reply.get("id"), Some(&id), "{shown}: {reply}");
    }
    // A lone surrogate, as JavaScript writes a cut emoji: accepted and answered.
    let reply = raw.exchange(
        br#"{"jsonrpc":"2.0","id":14,"method":"tools/call","params":{"name":"call_tool","arguments":{"name":"fx__echo","arguments":{"q":"tokyo \ud83d"}}}}"#,
    ).await;
    assert_eq!(reply["id"], 14, "{reply}");
    assert!(reply.get("result").is_some(), "{reply}");
    assert!(reply.to_string().contains("tokyo \u{fffd}"), "{reply}");
    // Still serving.
    let reply = raw
        .exchange(br#"{"jsonrpc":"2.0","id":15,"method":"ping"}"#)
        .await;
    assert_eq!(reply["id"], 15, "{reply}");
    assert!(reply.get("result").is_some(), "{reply}");
    // Exactly one: no second answer to any line came before a sentinel's.
    raw.no_strays().await;
    raw.close().await;
}

/// A request that reuses the id of one still in flight is refused with that id; the first
/// is answered as usual, and the id is free again once answered (or cancelled).
#[tokio::test]
async fn a_request_reusing_an_id_in_flight_is_refused_and_the_first_is_answered() {
    let dir = Dir::with_config(&fixture("fx", &[], ""));
    let mut raw = RawClient::legacy(&dir.file("servers.toml")).await;
    let sleep_request = |ms: u64| {
        json!({"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": {
            "name": "call_tool", "arguments": {"name": "fx__sleep", "arguments": {"ms": ms}}}})
    };
    raw.send(&sleep_request(500)).await;
    let refused = raw.exchange(sleep_request(0).to_string().as_bytes()).await;
    assert_eq!(refused["id"], 7, "{refused}");
    assert_eq!(code(&refused), Some(-32600), "{refused}");
    assert!(
        refused["error"]["message"]
            .as_str()
            .is_some_and(|m| m.contains("in use")),
        "{refused}"
    );
    let first = raw.response(7).await;
    assert!(first.to_string().contains("slept 500 ms"), "{first}");
    // Answered: the id may be used again.
    let again = raw.exchange(sleep_request(0).to_string().as_bytes()).await;
    assert!(again.to_string().contains("slept 0 ms"), "{again}");
    // Cancelled by the client: free again too, with no answer to the cancelled one.
    raw.send(&sleep_request(5000)).await;
    raw.send(
        &json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
                     "params": {"requestId": 7, "reason": "test"}}),
    )
    .await;
    let after_cancel = raw.exchange(sleep_request(0).to_string().as_bytes()).await;
    assert_eq!(after_cancel["id"], 7, "{after_cancel}");
    assert!(
        after_cancel.to_string().contains("slept 0 ms"),
        "the answer is the new request's, not the cancelled one's: {after_cancel}"
    );
    // Nothing else: no answer to the cancelled request, no second answer to any.
    raw.no_strays().await;
    raw.close().await;
}

/// When the client closes its read end, mcp-defer ends instead of writing into a broken pipe.
#[test]
fn a_client_that_stops_reading_ends_the_session() {
    let dir = Dir::with_config(&fixture("fx", &[], ""));
    let mut child = Command::new(BIN)
        .args(["serve", "--config"])
        .arg(dir.file("servers.toml"))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let stdout: ChildStdout = child.stdout.take().unwrap();
    let mut stdout = BufReader::new(stdout);
    let init = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {},
        "clientInfo": {"name": "raw", "version": "0"}}});
    writeln!(stdin, "{init}").unwrap();
    let mut answer = String::new();
    stdout.read_line(&mut answer).unwrap();
    assert_contains_all(&answer, &["\"id\":0"]);
    writeln!(
        stdin,
        r#"{{"jsonrpc":"2.0","method":"notifications/initialized"}}"#
    )
    .unwrap();
    // The client stops reading, and keeps sending.
    drop(stdout);
    for id in 1..=3 {
        let _ = writeln!(stdin, r#"{{"jsonrpc":"2.0","id":{id},"method":"ping"}}"#);
        let _ = stdin.flush();
        std::thread::sleep(Duration::from_millis(50));
    }
    let status =
        poll_sync(Duration::from_secs(10), || child.try_wait().unwrap()).unwrap_or_else(|_| {
            let _ = child.kill();
            panic!("mcp-defer kept running with nobody reading its stdout");
        });
    let mut log = String::new();
    let _ = child.stderr.take().unwrap().read_to_string(&mut log);
    assert!(status.success(), "{status:?}\n{log}");
    assert!(log.matches("Broken pipe").count() <= 1, "{log}");
}

/// Issue 31: a plain `tools/call` skips rmcp's decoding and service loop (the thin path of
/// `server/thin_calls.rs`), in both eras, for routed tools and meta tools alike; the
/// answers are what the general path gives (the rest of the suite runs its calls through
/// it). Progress still reaches the client under its own token before the result.
#[tokio::test]
async fn plain_calls_take_the_thin_path_in_both_eras() {
    use crate::support::session::{Era, Session, object, text};
    use rmcp::model::{CallToolRequestParams, ProtocolVersion};
    // `any`: a 2026-07-28 client is served in its own era.
    let dir = Dir::with_config(&format!(
        "[settings]\nclient_era = \"any\"\n\n{}",
        fixture("fx", &[], "")
    ));
    for (i, era) in [
        Era::Handshake(ProtocolVersion::V_2025_06_18),
        Era::Handshake(ProtocolVersion::V_2025_11_25),
        Era::Discover,
    ]
    .into_iter()
    .enumerate()
    {
        let log_path = dir.file(&format!("serve{i}.log"));
        let log = std::fs::File::create(&log_path).unwrap();
        let mut session = Session::launch(&dir.file("servers.toml"), era, Some(log), |command| {
            command.env("RUST_LOG", "mcp_defer::server::thin_calls=debug");
        })
        .await;
        // The first request after the handshake may still meet the path closed.
        session.list().await;
        let echoed = session.call("fx__echo", json!({"said": "routed"})).await;
        assert!(text(&echoed).contains("routed"), "{echoed:?}");
        let echoed = session
            .call_through("fx__echo", json!({"said": "by call_tool"}))
            .await;
        assert!(text(&echoed).contains("by call_tool"), "{echoed:?}");
        // rmcp's client puts its own progress token on the request and routes by it.
        let mut params = CallToolRequestParams::new("fx__sleep");
        params.arguments = Some(object(json!({"ms": 50})));
        let slept = session.client.call_tool(params).await.unwrap();
        assert!(text(&slept).contains("slept 50 ms"), "{slept:?}");
        let progress = tokio::time::timeout(Duration::from_secs(5), session.progress.recv()).await;
        assert!(
            progress.ok().flatten().is_some_and(|p| p.total.is_some()),
            "era {i}: the server's progress reached the client"
        );
        session.close_and_wait_exit(Duration::from_secs(30)).await;
        let log = std::fs::read_to_string(&log_path).unwrap();
        let thin = log.matches("tools/call on the thin path").count();
        assert_eq!(thin, 3, "era {i}: every call after the first list:\n{log}");
    }
}

/// Issue 31, item 1: on the thin path a downstream's answer reaches a handshake-era client
/// as the server wrote it (its own keys, its spelling of numbers, escapes) under the
/// client's id. What must work on the result gets it decoded as before: the `call_tool`
/// fallback, a result that the output limit might cut, a 2026-07-28 client.
#[tokio::test]
async fn a_plain_calls_answer_reaches_the_client_as_the_server_wrote_it() {
    let result = r#"{"content":[{"type":"text","text":"as \"written\"\n"}],"structuredContent":{"z":1e15,"a":[0.10]},"isError":false,"serverOwn":{"kept":true}}"#;
    let list = json!({"tools": [{"name": "echo", "inputSchema": {"type": "object"}}]});
    let server = |name: &str, extra: &str| {
        let args = ["--raw-list", &list.to_string(), "--raw-call-result", result];
        fixture(name, &args, extra)
    };
    let dir = Dir::with_config(&format!(
        "[settings]\nclient_era = \"any\"\n\n{}{}",
        server("rw", ""),
        // A budget of 100 tokens (400 bytes): the result is over a fifth of it.
        server("cut", "max_output_tokens = 100"),
    ));
    let mut raw = RawClient::start(&dir.file("servers.toml"));
    raw.handshake("2025-06-18").await;
    raw.request("tools/list", json!({})).await;
    let call = |id: i64, name: &str| {
        json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
            "params": {"name": name, "arguments": {}}})
    };
    raw.send(&call(7, "rw__echo")).await;
    let line = raw.next_line().await;
    assert_eq!(
        line,
        format!(r#"{{"jsonrpc":"2.0","id":7,"result":{result}}}"#)
    );
    // Decoded: rmcp's result type has no place for the server's own key.
    let decoded = |answer: &Value| {
        assert_eq!(
            answer["result"]["content"][0]["text"], "as \"written\"\n",
            "{answer}"
        );
        answer["result"].get("serverOwn").is_none()
    };
    let through = raw.call_through("rw__echo", json!({})).await;
    assert!(decoded(&through), "call_tool decodes: {through}");
    raw.send(&call(8, "cut__echo")).await;
    let cut = raw.response(8).await;
    assert!(decoded(&cut), "near its budget a result is decoded: {cut}");
    raw.close().await;

    let mut claude = RawClient::claude(&dir.file("servers.toml")).await;
    let params = json!({"_meta": claude_envelope(), "name": "rw__echo", "arguments": {}});
    let id = claude.send_request("tools/call", params).await;
    let line = loop {
        let line = claude.next_line().await;
        if !line.contains(r#""method":"#) {
            break line;
        }
    };
    let complete = format!(r#"{{"resultType":"complete",{}"#, &result[1..]);
    assert_eq!(
        line,
        format!(r#"{{"jsonrpc":"2.0","id":{id},"result":{complete}}}"#)
    );
    let through = json!({"name": "rw__echo", "arguments": {}});
    let answer = claude.call_tool("call_tool", through, json!({})).await;
    assert!(decoded(&answer), "call_tool decodes: {answer}");
    assert_eq!(answer["result"]["resultType"], "complete", "{answer}");
    claude.close().await;
}

/// Issue 31: calls to a stdio server go around rmcp's client loop under ids of our own, and
/// each still gets its own answer and its own progress when the server answers out of order
/// with progress between; a cancelled one reaches the server as cancelled and is not answered.
#[tokio::test]
async fn calls_answered_out_of_order_keep_their_answers_progress_and_cancellation() {
    let dir = Dir::with_config(&fixture("fx", &[], ""));
    let log_path = dir.file("serve.log");
    let log = std::fs::File::create(&log_path).unwrap();
    let mut raw = RawClient::start_with(&dir.file("servers.toml"), |command| {
        command.stderr(log).env(
            "RUST_LOG",
            "mcp_defer::downstream::raw_call=debug,mcp_defer::downstream::stderr=debug",
        );
    });
    raw.handshake("2025-06-18").await;
    let call = |id: i64, name: &str, arguments: Value, token: &str| {
        json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {
            "name": name, "arguments": arguments, "_meta": {"progressToken": token}}})
    };
    let progress_of = |message: &Value| {
        (message["method"] == "notifications/progress")
            .then(|| {
                message["params"]["progressToken"]
                    .as_str()
                    .map(str::to_owned)
            })
            .flatten()
    };
    // The slow call is under way (its first progress is here) when the fast one goes.
    raw.send(&call(101, "fx__sleep", json!({"ms": 400}), "slow"))
        .await;
    let mut seen = Vec::new();
    while seen.is_empty() {
        let message = raw.next().await;
        if progress_of(&message).is_some() {
            seen.push(message);
        }
    }
    raw.send(&call(102, "fx__add", json!({"a": 1, "b": 2}), "fast"))
        .await;
    let answered = |seen: &[Value], id: i64| seen.iter().position(|m| m["id"] == id);
    while answered(&seen, 101).is_none() || answered(&seen, 102).is_none() {
        seen.push(raw.next().await);
    }
    let (slow, fast) = (answered(&seen, 101).unwrap(), answered(&seen, 102).unwrap());
    assert!(
        fast < slow,
        "the server answered the fast call first: {seen:#?}"
    );
    assert_eq!(
        seen[fast]["result"]["structuredContent"]["sum"], 3.0,
        "{seen:#?}"
    );
    assert!(
        result_text(&seen[slow]).contains("slept 400 ms"),
        "{seen:#?}"
    );
    let progress: Vec<_> = seen.iter().filter_map(progress_of).collect();
    assert_eq!(
        progress,
        vec!["slow"; 10],
        "all of its progress, only its own: {seen:#?}"
    );
    let last_progress = seen.iter().rposition(|m| progress_of(m).is_some()).unwrap();
    assert!(
        last_progress < slow,
        "progress before its answer: {seen:#?}"
    );

    // Cancelled once the server has it: the server is told, the client gets no answer.
    raw.send(&call(103, "fx__sleep", json!({"ms": 20000}), "cancelled"))
        .await;
    while progress_of(&raw.next().await).is_none() {}
    raw.send(
        &json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
                     "params": {"requestId": 103, "reason": "test"}}),
    )
    .await;
    eventually("the server is told of the cancel", async || {
        let log = std::fs::read_to_string(&log_path).unwrap_or_default();
        log.contains(": sleep cancelled")
    })
    .await;
    raw.no_strays().await;
    raw.close().await;
    let log = std::fs::read_to_string(&log_path).unwrap();
    let sent_raw = log.matches("tools/call sent around rmcp's loop").count();
    assert_eq!(sent_raw, 3, "every call went around rmcp's loop:\n{log}");
}

/// Node's `child_process` (so Claude Code, Copilot CLI and the TypeScript SDK) starts a
/// server on socket pairs, not pipes. They go through the IO reactor (tokio's blocking
/// handles cost a thread hand-off a line: 2-6x the CPU a call), lines larger than the
/// sockets' buffers go both ways whole, and the session ends when the client closes.
#[cfg(unix)]
#[test]
fn a_client_on_socket_pairs_is_served_through_the_reactor() {
    let dir = Dir::with_config(&fixture("fx", &[], ""));
    let stderr = dir.file("stderr.txt");
    let mut command = Command::new(BIN);
    command
        .args(["serve", "--config"])
        .arg(dir.file("servers.toml"))
        .env("RUST_LOG", "mcp_defer=debug")
        .stderr(std::fs::File::create(&stderr).expect("stderr file"));
    let (mut to, from) = os::stdio_on_socket_pairs(&mut command);
    let mut child = command.spawn().expect("spawn mcp-defer");
    let mut lines = BufReader::new(from).lines();
    let mut send = |message: Value| {
        writeln!(to, "{message}").expect("write to mcp-defer");
    };
    let mut answer = |id: i64| loop {
        let line = (lines.next())
            .unwrap_or_else(|| panic!("stdout ended before answer {id}"))
            .unwrap_or_else(|e| panic!("reading answer {id}: {e}"));
        let message: Value = serde_json::from_str(&line).expect("a JSON line");
        if message["id"] == id {
            return message;
        }
    };
    send(
        json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {},
        "clientInfo": {"name": "node-like", "version": "1"}}}),
    );
    assert!(answer(1)["result"].is_object());
    send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
    // Over the 208 KB a Unix socket buffers by default on Linux, each way.
    let big = "x".repeat(600_000);
    for id in 2..5 {
        send(
            json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {
            "name": "call_tool", "arguments": {"name": "fx__echo", "arguments": {"said": big}}}}),
        );
        let echoed = answer(id);
        assert_eq!(echoed["result"]["isError"], false, "call {id}");
        assert_eq!(
            echoed["result"]["structuredContent"]["said"]
                .as_str()
                .map(str::len),
            Some(big.len()),
            "call {id}"
        );
    }
    drop(to);
    let exited = poll_sync(Duration::from_secs(30), || child.try_wait().ok().flatten()).ok();
    let log = std::fs::read_to_string(&stderr).unwrap_or_default();
    assert!(
        exited.is_some_and(|s| s.success()),
        "exit: {exited:?}\n{log}"
    );
    assert_contains_all(
        &log,
        &["stdio: the client's sockets, through the IO reactor"],
    );
}
