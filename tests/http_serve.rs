//! `serve --http`: many clients, one set of downstream servers, each session its own list;
//! stateless 2026-07-28 requests; expiry; tokens, Origin, size and concurrency limits.
//! Clients are the official Python SDK (tests/python/http_sessions.py) and plain HTTP
//! (reqwest) where a test needs to see status codes.

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Command, Stdio};

use serde_json::{Value, json};

#[cfg(target_os = "linux")]
use crate::support::FIXTURE;
#[cfg(target_os = "linux")]
use crate::support::http::result_of;
use crate::support::http::{
    ACCEPT, Server, initialize, open_session, post, session_headers, tools_list,
};
use crate::support::{BIN, Dir, Killed, assert_contains_all, fixture, fixture_with_pids, peers};

/// The processes running the fixture with `marker` among their arguments (Linux: /proc).
#[cfg(target_os = "linux")]
fn fixture_processes(marker: &Path) -> usize {
    let marker = marker.to_string_lossy().into_owned();
    std::fs::read_dir("/proc")
        .unwrap()
        .filter_map(|e| e.ok())
        .filter(|e| e.file_name().to_string_lossy().parse::<u32>().is_ok())
        .filter_map(|e| std::fs::read(e.path().join("cmdline")).ok())
        .map(|c| String::from_utf8_lossy(&c).replace('\0', " "))
        .filter(|c| c.starts_with(FIXTURE) && c.contains(&marker))
        .count()
}

fn python(mode: &str, url: &str, args: &[&str]) -> Option<Value> {
    let peers = peers()?;
    let mut all: Vec<&std::ffi::OsStr> = vec![mode.as_ref(), url.as_ref()];
    all.extend(args.iter().map(|a| std::ffi::OsStr::new(*a)));
    let out = peers.python("http_sessions.py", &all);
    let line = out.lines().last().unwrap_or_default();
    Some(serde_json::from_str(line).unwrap_or_else(|e| panic!("{e}: {out}")))
}

#[cfg(target_os = "linux")]
#[test]
fn two_sessions_each_see_only_their_own_tools_over_one_server_process() {
    let dir = Dir::new();
    let pids = dir.file("fx.pids");
    dir.config(&fixture_with_pids("fx", &pids, ""));
    let server = Server::start(&dir, &[]);
    let Some(seen) = python("two", &server.url, &["fx__echo", "fx__add"]) else {
        return;
    };
    let meta = ["search_tools", "select_tools", "call_tool"];
    let with = |tool: &str| {
        let mut names: Vec<Value> = meta.iter().map(|m| json!(m)).collect();
        names.push(json!(tool));
        Value::Array(names)
    };
    assert_eq!(seen["a"], with("fx__echo"), "{seen}");
    assert_eq!(seen["b"], with("fx__add"), "{seen}");
    assert_eq!(seen["b_notifications_before_its_select"], 0, "{seen}");
    assert_eq!(
        fixture_processes(&pids),
        1,
        "one fixture process serves both sessions"
    );
}

#[test]
fn a_stateless_2026_07_28_request_gets_the_fixed_list() {
    let (_dir, server) = Server::serving(&fixture("fx", &[], "always_load = [\"add\"]"));
    let Some(seen) = python("stateless", &server.url, &["fx__echo"]) else {
        return;
    };
    let fixed = json!(["search_tools", "select_tools", "call_tool", "fx__add"]);
    assert_eq!(seen["first"], fixed, "{seen}");
    assert_eq!(
        seen["again"], fixed,
        "select_tools appended nothing: {seen}"
    );
    assert_eq!(seen["same_bytes"], true);
    assert_eq!(
        seen["loaded"],
        json!(["fx__echo"]),
        "schemas returned: {seen}"
    );
    assert!(
        seen["select_description"]
            .as_str()
            .unwrap()
            .starts_with("Get the full schemas"),
        "proxy wording: {seen}"
    );
}

/// Expiry by events, not by a margin on the clock: an idle session is waited for until the
/// log says it expired; a session with a call in flight is the one "in use", and must
/// outlive it whatever time passes; once its call ends it expires too.
#[tokio::test]
async fn an_idle_session_expires_its_state_is_dropped_and_its_id_gets_404() {
    let (_dir, server) = Server::serving(&format!(
        "[settings]\nsession_idle_sec = 1\n\n{}",
        fixture("fx", &[], "")
    ));
    let client = reqwest::Client::new();
    let busy = open_session(&client, &server.url, &[]).await;
    let busy_headers = [("mcp-session-id", busy.as_str())];
    // In use for as long as the test needs: a call that runs until it is cancelled. Its
    // answer's stream is open (status 200) once the session has admitted it.
    let call = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {
        "name": "call_tool", "arguments": {"name": "fx__sleep", "arguments": {"ms": 600_000}}}});
    let mut request = client
        .post(&server.url)
        .header("content-type", "application/json")
        .header("accept", ACCEPT)
        .body(serde_json::to_vec(&call).unwrap());
    for (name, value) in busy_headers {
        request = request.header(name, value);
    }
    let in_flight = request.send().await.expect("POST");
    assert_eq!(in_flight.status().as_u16(), 200);

    let idle = open_session(&client, &server.url, &[]).await;
    let idle_headers = [("mcp-session-id", idle.as_str())];
    let (status, _, body) = post(&client, &server.url, &idle_headers, &tools_list(3)).await;
    assert_eq!(status, 200);
    assert_contains_all(&body, &["select_tools"]);
    // The log masks session ids; the first to expire can only be the idle one.
    server.wait_for_log("session expired");
    server.wait_for_log("session state dropped mode=Some(Connection)");
    let (status, _, body) = post(&client, &server.url, &idle_headers, &tools_list(4)).await;
    assert_eq!(status, 404, "{body}");
    assert_contains_all(&body, &["Session not found"]);

    // The busy session outlived it: its call holds it, however long the sweep took.
    let (status, _, body) = post(&client, &server.url, &busy_headers, &tools_list(5)).await;
    assert_eq!(
        status, 200,
        "a session with a call in flight does not expire: {body}"
    );
    assert_eq!(server.log().matches("session expired").count(), 1);
    // Its call ends (cancelled, its stream dropped): now idle, it expires too.
    let cancel = json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
        "params": {"requestId": 2, "reason": "test"}});
    let (status, _, body) = post(&client, &server.url, &busy_headers, &cancel).await;
    assert_eq!(status, 202, "{body}");
    drop(in_flight);
    server.wait_for_log_times("session expired", 2);
    let (status, _, body) = post(&client, &server.url, &busy_headers, &tools_list(6)).await;
    assert_eq!(status, 404, "{body}");
}

#[tokio::test]
async fn tokens_are_required_when_configured_and_never_logged() {
    let dir = Dir::new();
    let token = "s3cret-token-value";
    dir.config(&format!(
        "[settings.http]\ntokens_env = \"MCP_DEFER_TEST_TOKENS\"\n\n{}",
        fixture("fx", &[], "")
    ));
    let tokens = format!("other-token,{token}");
    let server = Server::start(&dir, &[("MCP_DEFER_TEST_TOKENS", &tokens)]);
    let client = reqwest::Client::new();
    let (status, _, body) = post(&client, &server.url, &[], &initialize()).await;
    assert_eq!(status, 401, "{body}");
    assert!(
        body.contains("Authorization: Bearer"),
        "says what to send: {body}"
    );
    let wrong = [("authorization", "Bearer s3cret-token-valuf")];
    let (status, _, _) = post(&client, &server.url, &wrong, &initialize()).await;
    assert_eq!(status, 401);
    let right = format!("Bearer {token}");
    open_session(&client, &server.url, &[("authorization", &right)]).await;
    if let Some(seen) = python("token", &server.url, &[token]) {
        assert_eq!(seen["tools"][0], "search_tools", "{seen}");
    }
    assert!(!server.log().contains(token), "{}", server.log());
}

#[test]
fn a_non_loopback_bind_without_auth_is_refused_with_the_fix() {
    let dir = Dir::with_config(&fixture("fx", &[], ""));
    let err = match Server::try_start(&dir, "0.0.0.0:0", &[]) {
        Ok(_) => panic!("served on 0.0.0.0 without auth"),
        Err(log) => log,
    };
    assert_contains_all(&err, &["exited exit status: 2"]);
    assert_contains_all(
        &err,
        &["refusing to serve on 0.0.0.0:0 without auth", "tokens_env"],
    );
}

#[tokio::test]
async fn origins_not_on_the_allow_list_get_403() {
    let (_dir, server) = Server::serving(&format!(
        "[settings.http]\nallowed_origins = [\"http://localhost:*\"]\n\n{}",
        fixture("fx", &[], "")
    ));
    let client = reqwest::Client::new();
    let evil = [("origin", "http://evil.example")];
    let (status, _, body) = post(&client, &server.url, &evil, &initialize()).await;
    assert_eq!(status, 403, "{body}");
    let rebinding = [("origin", "http://localhost.evil.example:8080")];
    let (status, _, _) = post(&client, &server.url, &rebinding, &initialize()).await;
    assert_eq!(status, 403);
    let allowed = [("origin", "http://localhost:3000")];
    let (status, _, body) = post(&client, &server.url, &allowed, &initialize()).await;
    assert_eq!(status, 200, "{body}");
}

#[tokio::test]
async fn oversized_bodies_and_too_many_requests_in_flight_get_clear_errors() {
    let (_dir, server) = Server::serving(&format!(
        "[settings]\nmax_message_bytes = 65536\n\n[settings.http]\nmax_concurrent_requests = 1\n\n{}",
        fixture("fx", &[], "")
    ));
    let client = reqwest::Client::new();
    let session = open_session(&client, &server.url, &[]).await;
    let headers = session_headers(&session);
    let big = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {
        "name": "call_tool", "arguments": {"name": "fx__echo", "arguments": {"message": "x".repeat(70_000)}}}});
    let (status, _, body) = post(&client, &server.url, &headers, &big).await;
    assert_eq!(status, 413, "{body}");
    assert_contains_all(&body, &["exceeds 65536 bytes"]);

    // One call in flight (its SSE stream open), then a second request is refused.
    let slow = json!({"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {
        "name": "fx__sleep", "arguments": {"ms": 1500}}});
    let mut request = client
        .post(&server.url)
        .header("content-type", "application/json")
        .header("accept", ACCEPT)
        .body(serde_json::to_vec(&slow).unwrap());
    for (name, value) in headers {
        request = request.header(name, value);
    }
    let pending = request.send().await.expect("POST");
    assert_eq!(pending.status().as_u16(), 200);
    let (status, _, body) = post(&client, &server.url, &headers, &tools_list(4)).await;
    assert_eq!(status, 429, "{body}");
    assert_contains_all(&body, &["max_concurrent_requests"]);
    let answer = pending.text().await.unwrap();
    assert_contains_all(&answer, &["\"id\":3"]);
    // The finished call gave its place back.
    let (status, _, _) = post(&client, &server.url, &headers, &tools_list(5)).await;
    assert_eq!(status, 200);
}

fn search(id: u64, query: &str) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {
        "name": "search_tools", "arguments": {"query": query}}})
}

fn hit_servers(result: &Value) -> Vec<String> {
    let mut servers: Vec<String> = result["structuredContent"]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["server"].as_str().unwrap().to_owned())
        .collect();
    servers.sort();
    servers.dedup();
    servers
}

fn profile_config(dir: &Dir) -> std::path::PathBuf {
    let pids = dir.file("a.pids");
    let mut toml = fixture_with_pids("alpha", &pids, "description = \"the alpha server\"");
    toml += &fixture("beta", &[], "description = \"the beta server\"");
    toml += "[profiles.one]\nservers = [\"alpha\"]\n";
    dir.config(&toml);
    pids
}

#[cfg(target_os = "linux")]
#[tokio::test]
async fn a_profile_at_mcp_name_sees_only_its_servers_which_run_once() {
    let dir = Dir::new();
    let pids = profile_config(&dir);
    let server = Server::start(&dir, &[]);
    let profile_url = format!("{}/one", server.url);
    server.wait_for_log(&format!("url={profile_url}"));
    let client = reqwest::Client::new();
    for (url, servers) in [
        (&profile_url, vec!["alpha"]),
        (&server.url, vec!["alpha", "beta"]),
    ] {
        let (status, session, body) = post(&client, url, &[], &initialize()).await;
        assert_eq!(status, 200, "{body}");
        let instructions = result_of(&body, 1)["instructions"]
            .as_str()
            .unwrap()
            .to_owned();
        assert_contains_all(&instructions, &["the alpha server"]);
        assert_eq!(
            instructions.contains("the beta server"),
            servers.contains(&"beta"),
            "{url}: {instructions}"
        );
        let session = session.unwrap();
        let headers = session_headers(&session);
        let (_, _, body) = post(&client, url, &headers, &search(2, "echo a message")).await;
        let found = hit_servers(&result_of(&body, 2));
        assert_eq!(found, servers, "{url}: {body}");
    }
    assert_eq!(
        fixture_processes(&pids),
        1,
        "alpha runs once for /mcp and /mcp/one"
    );
}

#[test]
fn serve_profile_on_stdio_sees_only_its_servers() {
    use std::io::Write;
    let dir = Dir::new();
    profile_config(&dir);
    let mut child = Command::new(BIN)
        .args(["serve", "--profile", "one", "--config"])
        .arg(dir.file("servers.toml"))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let stdout = BufReader::new(child.stdout.take().unwrap());
    let _child = Killed(child);
    for message in [
        initialize(),
        json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
        search(2, "echo a message"),
    ] {
        writeln!(stdin, "{message}").unwrap();
    }
    let mut answers = stdout
        .lines()
        .map_while(Result::ok)
        .filter_map(|l| serde_json::from_str::<Value>(&l).ok());
    let init = answers.next().unwrap();
    let instructions = init["result"]["instructions"].as_str().unwrap();
    assert_contains_all(instructions, &["the alpha server"]);
    assert!(!instructions.contains("beta"), "{instructions}");
    let found = answers.find(|m| m["id"] == 2).unwrap();
    assert_eq!(hit_servers(&found["result"]), ["alpha"], "{found}");

    let unknown = dir.run(&["serve", "--profile", "onee"]);
    let text = crate::support::stderr(&unknown);
    assert_contains_all(&text, &["no `[profiles.onee]` table; did you mean `one`?"]);
}

#[test]
fn the_typescript_sdk_sees_its_own_list_per_session() {
    let sdk = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join(".peers/node/node_modules/@modelcontextprotocol/sdk");
    if peers().is_none() {
        return;
    }
    if !sdk.exists() {
        crate::support::missing_peer(
            &format!("the TypeScript SDK is missing ({})", sdk.display()),
            "run .ci/install-peers",
        );
        return;
    }
    let (_dir, server) = Server::serving(&fixture("fx", &[], ""));
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/node/http_sessions.mjs");
    let out = Command::new("node")
        .arg(script)
        .arg(&sdk)
        .args([server.url.as_str(), "fx__echo", "fx__add"])
        .output()
        .expect("run node");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let seen: Value = serde_json::from_str(stdout.lines().last().unwrap()).unwrap();
    assert_eq!(
        seen["a"],
        json!(["search_tools", "select_tools", "call_tool", "fx__echo"])
    );
    assert_eq!(
        seen["b"],
        json!(["search_tools", "select_tools", "call_tool", "fx__add"])
    );
    assert_eq!(seen["b_notifications_before_its_select"], 0, "{seen}");
    assert_eq!(seen["a_notifications"], 1, "{seen}");
}

#[test]
fn serve_http_takes_a_host_name() {
    let dir = Dir::with_config("");
    let mut child = Command::new(BIN)
        .args(["serve", "--http", "localhost:0", "--config"])
        .arg(dir.file("servers.toml"))
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let lines = BufReader::new(child.stderr.take().unwrap()).lines();
    let mut seen = Vec::new();
    for line in lines {
        let line = line.unwrap();
        let serving = line.contains("serving MCP over Streamable HTTP");
        seen.push(line);
        if serving {
            break;
        }
    }
    let _ = child.kill();
    let _ = child.wait();
    let last = seen.last().cloned().unwrap_or_default();
    assert!(
        last.contains("url=http://127.0.0.1:"),
        "localhost resolves to the IPv4 loopback:\n{}",
        seen.join("\n")
    );
}
