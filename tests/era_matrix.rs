//! The era matrix: every client era against every kind of downstream server, each cell a real
//! call whose real result reaches the client, directly and through `call_tool`.
//!
//! Clients: rmcp in the handshake era (2025-06-18, 2025-11-25) and in the 2026-07-28 era
//! (`server/discover`, envelope on every request), the official Python SDK in both eras, and
//! raw lines written the way Claude Code writes them. Servers: the Python SDK
//! (`mcp-server-time`, which speaks both eras and refuses a 2026-07-28 envelope on a
//! handshake-era connection), the TypeScript SDK (`server-everything`) and rmcp (the
//! fixture, which also answers `server/discover`). mcp-defer opens every downstream
//! connection in the handshake era (docs/design.md says why).

use rmcp::model::ProtocolVersion;
use serde_json::{Value, json};

use crate::support::raw::{RawClient, claude_envelope, result_text};
use crate::support::session::*;
use crate::support::{BIN, Dir, Peers, fixture, peers};

/// One downstream tool of each SDK, and what its real answer contains.
struct Cell {
    name: &'static str,
    arguments: Value,
    answer: &'static str,
}

fn cells() -> Vec<Cell> {
    vec![
        Cell {
            name: "time__get_current_time",
            arguments: json!({"timezone": "Asia/Tokyo"}),
            answer: "Asia/Tokyo",
        },
        Cell {
            name: "everything__echo",
            arguments: json!({"message": "across the eras"}),
            answer: "across the eras",
        },
        Cell {
            name: "fx__echo",
            arguments: json!({"word": "fixture-reached"}),
            answer: "fixture-reached",
        },
    ]
}

/// The servers of every cell; `client_era = "any"` so that a 2026-07-28 client is answered
/// in its era (the default sends it back to `initialize` where tools load on request).
fn matrix_config(setup: &Dir, peers: &Peers) -> std::path::PathBuf {
    setup.config(&format!(
        "[settings]\nclient_era = \"any\"\n\n[mcp_servers.time]\ncommand = {:?}\n\n\
         [mcp_servers.everything]\ncommand = {:?}\nargs = [\"stdio\"]\n\n{}",
        peers.time,
        peers.everything,
        fixture("fx", &["--echo-meta"], ""),
    ))
}

fn assert_answered(cell: &Cell, path: &str, is_error: bool, text: &str) {
    assert!(
        !is_error && text.contains(cell.answer),
        "{} via {path}: expected the server's answer containing {:?}, got error={is_error}: {text}",
        cell.name,
        cell.answer
    );
}

async fn rmcp_client_calls_every_server(era: Era) {
    let Some(peers) = peers() else { return };
    let setup = Dir::new();
    let session = Session::start_in(&matrix_config(&setup, &peers), era.clone()).await;
    for cell in cells() {
        let proxied = session
            .call(
                "call_tool",
                json!({"name": cell.name, "arguments": cell.arguments}),
            )
            .await;
        assert_answered(
            &cell,
            &format!("call_tool ({era:?})"),
            proxied.is_error == Some(true),
            &text(&proxied),
        );
    }
    let names: Vec<&str> = cells().iter().map(|c| c.name).collect();
    let before = names_of(&session.list().await);
    let selected = session.call("select_tools", json!({"names": names})).await;
    assert_ne!(selected.is_error, Some(true), "{}", text(&selected));
    let listed = names_of(&session.list().await);
    if matches!(era, Era::Discover) {
        // 2026-07-28: no request changes the list (DESIGN.md 7c); `call_tool` was the path.
        assert_eq!(listed, before, "select_tools changed a 2026-07-28 list");
        session.close().await;
        return;
    }
    for cell in cells() {
        assert!(listed.iter().any(|n| n == cell.name), "{listed:?}");
        let direct = session.call(cell.name, cell.arguments.clone()).await;
        assert_answered(
            &cell,
            &format!("a direct call ({era:?})"),
            direct.is_error == Some(true),
            &text(&direct),
        );
    }
    session.close().await;
}

fn names_of(tools: &[rmcp::model::Tool]) -> Vec<String> {
    names(tools)
}

#[tokio::test]
async fn rmcp_client_in_the_2025_06_18_handshake_era() {
    rmcp_client_calls_every_server(Era::Handshake(ProtocolVersion::V_2025_06_18)).await;
}

#[tokio::test]
async fn rmcp_client_in_the_2025_11_25_handshake_era() {
    rmcp_client_calls_every_server(Era::Handshake(ProtocolVersion::V_2025_11_25)).await;
}

#[tokio::test]
async fn rmcp_client_in_the_2026_07_28_era() {
    rmcp_client_calls_every_server(Era::Discover).await;
}

fn python_client_calls_every_server(mode: &str, era: &str) {
    let Some(peers) = peers() else { return };
    let setup = Dir::new();
    let config = matrix_config(&setup, &peers);
    let calls: Vec<Value> = cells()
        .iter()
        .map(|c| json!({"name": c.name, "arguments": c.arguments}))
        .collect();
    let calls = Value::Array(calls).to_string();
    let stdout = peers.python(
        "era_matrix.py",
        &[
            mode.as_ref(),
            BIN.as_ref(),
            config.as_os_str(),
            calls.as_ref(),
        ],
    );
    let report: Value = serde_json::from_str(stdout.trim())
        .unwrap_or_else(|e| panic!("python printed no report ({e}): {stdout}"));
    assert_eq!(report["era"], era, "{report}");
    let done = report["calls"].as_array().cloned().unwrap_or_default();
    assert_eq!(done.len(), 2 * cells().len(), "{report}");
    for call in done {
        let cell = cells()
            .into_iter()
            .find(|c| call["name"] == c.name)
            .unwrap_or_else(|| panic!("unexpected call {call}"));
        assert_answered(
            &cell,
            &format!("{} (python, {era})", call["path"]),
            call["is_error"] == true,
            call["text"].as_str().unwrap_or_default(),
        );
    }
}

#[test]
fn python_sdk_client_in_the_handshake_era() {
    python_client_calls_every_server("initialize", "2025-11-25");
}

#[test]
fn python_sdk_client_in_the_2026_07_28_era() {
    python_client_calls_every_server("discover", "2026-07-28");
}

/// The defect that blocked Claude Code: its envelope was copied into every downstream
/// request, and handshake-era Python servers refuse such requests.
#[tokio::test]
async fn claude_codes_envelope_stays_with_its_connection_and_its_own_keys_go_through() {
    let Some(peers) = peers() else { return };
    let setup = Dir::new();
    let mut client = RawClient::claude(&matrix_config(&setup, &peers)).await;
    let names: Vec<&str> = cells().iter().map(|c| c.name).collect();
    let selected = client
        .call_tool("select_tools", json!({"names": names}), json!({}))
        .await;
    assert_ne!(selected["result"]["isError"], true, "{selected}");
    let extra = json!({"claudecode/toolUseId": "toolu_01matrix", "progressToken": "claude-7"});
    for cell in cells() {
        for (path, response) in [
            (
                "a direct call",
                client
                    .call_tool(cell.name, cell.arguments.clone(), extra.clone())
                    .await,
            ),
            (
                "call_tool",
                client
                    .call_tool(
                        "call_tool",
                        json!({"name": cell.name, "arguments": cell.arguments}),
                        extra.clone(),
                    )
                    .await,
            ),
        ] {
            let is_error = response.get("error").is_some() || response["result"]["isError"] == true;
            assert_answered(&cell, path, is_error, &format!("{response}"));
            if cell.name == "fx__echo" {
                let seen = &response["result"]["structuredContent"]["_meta"];
                let keys: Vec<&String> = seen
                    .as_object()
                    .map(|m| m.keys().collect())
                    .unwrap_or_default();
                assert!(
                    !keys
                        .iter()
                        .any(|k| k.starts_with("io.modelcontextprotocol/")),
                    "the client's envelope reached a handshake-era server via {path}: {seen}"
                );
                assert_eq!(seen["claudecode/toolUseId"], "toolu_01matrix", "{seen}");
                assert_ne!(
                    seen["progressToken"], "claude-7",
                    "the downstream request needs a progress token of its own connection: {seen}"
                );
            }
        }
    }
    // 2026-07-28: the list is fixed (DESIGN.md 7c), so select_tools returns schemas.
    assert!(
        result_text(&selected).contains("Schemas"),
        "{selected} with envelope {}",
        claude_envelope()
    );
    client.close().await;
}

/// Every progress notification of a call is written before that call's result: clients
/// drop progress for a request that has already been answered.
#[tokio::test]
async fn progress_reaches_the_client_before_the_result() {
    let setup = Dir::new();
    let config = setup.config(&format!(
        "[settings]\nclient_era = \"any\"\n\n{}",
        fixture("fx", &[], "")
    ));
    let mut client = RawClient::claude(&config).await;
    for round in 0..5 {
        let token = format!("sleep-{round}");
        let response = client
            .call_tool(
                "call_tool",
                json!({"name": "fx__sleep", "arguments": {"ms": 50}}),
                json!({"progressToken": token}),
            )
            .await;
        assert!(result_text(&response).contains("slept 50 ms"), "{response}");
        let answered_at = client.received.len() - 1;
        let progress: Vec<usize> = (client.received.iter().enumerate())
            .filter(|(_, m)| {
                m["method"] == "notifications/progress" && m["params"]["progressToken"] == token
            })
            .map(|(i, _)| i)
            .collect();
        assert_eq!(progress.len(), 10, "round {round}: {:#?}", client.received);
        // Nothing may follow: read on briefly and see that no late progress arrives.
        assert!(progress.iter().all(|&i| i < answered_at));
    }
    let late = tokio::time::timeout(std::time::Duration::from_millis(300), client.next()).await;
    assert!(late.is_err(), "a message after the last result: {late:?}");
    client.close().await;
}

/// `client_era = "handshake"`: `server/discover` is refused as unknown, so Claude Code falls
/// back to `initialize` (2025-11-25), and the session then works in the handshake era.
#[tokio::test]
async fn a_handshake_only_mcp_defer_sends_a_2026_07_28_client_back_to_initialize() {
    let setup = Dir::new();
    let config = setup.config(&format!(
        "[settings]\nclient_era = \"handshake\"\n\n{}",
        fixture("fx", &[], "")
    ));
    let mut client = RawClient::start(&config);
    let refused = client
        .request("server/discover", json!({"_meta": claude_envelope()}))
        .await;
    assert_eq!(refused["error"]["code"], -32601, "{refused}");
    let init = client
        .request(
            "initialize",
            json!({"protocolVersion": "2025-11-25",
                   "capabilities": {"roots": {"listChanged": true}, "elicitation": {}},
                   "clientInfo": {"name": "claude-code", "version": "2.1.332"}}),
        )
        .await;
    assert_eq!(init["result"]["protocolVersion"], "2025-11-25", "{init}");
    client
        .send(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}))
        .await;
    let echoed = client
        .call_through("fx__echo", json!({"back": "home"}))
        .await;
    assert!(result_text(&echoed).contains("home"), "{echoed}");
    client.close().await;
}
