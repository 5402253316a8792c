//! A `mcp-defer serve --http` the test starts, and the plain-HTTP (reqwest) requests tests
//! send it: JSON-RPC posts, the handshake, the answer with an id in an SSE or JSON body.

use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::support::{BIN, Dir, Killed};

/// A running `mcp-defer serve --http 127.0.0.1:0` and everything it logged so far.
pub struct Server {
    _child: Killed,
    pub url: String,
    log: Arc<Mutex<String>>,
}

impl Server {
    pub fn start(dir: &Dir, envs: &[(&str, &str)]) -> Server {
        Server::try_start(dir, "127.0.0.1:0", envs).unwrap_or_else(|log| panic!("{log}"))
    }

    /// Starts it and waits for the URL it serves at; on exit, the log.
    pub fn try_start(dir: &Dir, addr: &str, envs: &[(&str, &str)]) -> Result<Server, String> {
        Server::try_start_with(dir, addr, &[], envs)
    }

    /// [`Server::try_start`] with more arguments after `serve` (`--log-format json`: the
    /// URL is then found in its JSON form too).
    pub fn try_start_with(
        dir: &Dir,
        addr: &str,
        args: &[&str],
        envs: &[(&str, &str)],
    ) -> Result<Server, String> {
        // MCP_DEFER_TEST_BIN: run these tests against another build (a base commit's, to
        // see a test fail before its fix).
        let bin = std::env::var("MCP_DEFER_TEST_BIN").unwrap_or_else(|_| BIN.to_owned());
        let mut child = Command::new(bin)
            .args(["serve", "--http", addr])
            .args(args)
            .arg("--config")
            .arg(dir.file("servers.toml"))
            .current_dir(dir.path())
            .env("RUST_LOG", "warn,mcp_defer=debug")
            .envs(envs.iter().copied())
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .expect("start mcp-defer");
        let stderr = child.stderr.take().expect("stderr");
        let log = Arc::new(Mutex::new(String::new()));
        let writer = log.clone();
        std::thread::spawn(move || {
            for line in BufReader::new(stderr).lines().map_while(Result::ok) {
                let mut log = writer.lock().unwrap();
                log.push_str(&line);
                log.push('\n');
            }
        });
        let child = Killed(child);
        let deadline = Instant::now() + Duration::from_secs(20);
        let mut child = child;
        loop {
            let text = log.lock().unwrap().clone();
            let found = (text.find("url=http://").map(|i| i + 4))
                .or_else(|| text.find("\"url\":\"http://").map(|i| i + 7));
            if let Some(start) = found {
                let url = text[start..]
                    .split(|c: char| c.is_whitespace() || c == '"')
                    .next()
                    .unwrap()
                    .to_owned();
                return Ok(Server {
                    _child: child,
                    url,
                    log,
                });
            }
            if let Ok(Some(status)) = child.0.try_wait() {
                std::thread::sleep(Duration::from_millis(100));
                return Err(format!("exited {status}: {}", log.lock().unwrap()));
            }
            assert!(Instant::now() < deadline, "no URL logged: {text}");
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    pub fn log(&self) -> String {
        self.log.lock().unwrap().clone()
    }

    /// Waits until the log contains `needle`.
    pub fn wait_for_log(&self, needle: &str) {
        self.wait_for_log_times(needle, 1);
    }

    /// Waits until the log contains `needle` at least `times` times.
    pub fn wait_for_log_times(&self, needle: &str, times: usize) {
        let deadline = Instant::now() + Duration::from_secs(20);
        while self.log().matches(needle).count() < times {
            assert!(
                Instant::now() < deadline,
                "{needle:?} not logged {times} times:\n{}",
                self.log()
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

pub const ACCEPT: &str = "application/json, text/event-stream";

/// A JSON-RPC POST; returns the status, the session id header and the JSON-RPC message in
/// the body (SSE or JSON), if any.
pub async fn post(
    client: &reqwest::Client,
    url: &str,
    headers: &[(&str, &str)],
    body: &Value,
) -> (u16, Option<String>, String) {
    let mut request = client
        .post(url)
        .header("content-type", "application/json")
        .header("accept", ACCEPT)
        .body(serde_json::to_vec(body).unwrap());
    for (name, value) in headers {
        request = request.header(*name, *value);
    }
    let response = request.send().await.expect("POST");
    let status = response.status().as_u16();
    let session = response
        .headers()
        .get("mcp-session-id")
        .and_then(|v| v.to_str().ok())
        .map(str::to_owned);
    let text = response.text().await.unwrap_or_default();
    (status, session, text)
}

pub fn initialize() -> Value {
    json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {},
        "clientInfo": {"name": "reqwest", "version": "1"}}})
}

/// Opens a handshake-era session; returns its id.
pub async fn open_session(client: &reqwest::Client, url: &str, headers: &[(&str, &str)]) -> String {
    let (status, session, body) = post(client, url, headers, &initialize()).await;
    assert_eq!(status, 200, "initialize: {body}");
    let session = session.expect("Mcp-Session-Id");
    let mut with = headers.to_vec();
    with.push(("mcp-session-id", &session));
    let (status, _, _) = post(
        client,
        url,
        &with,
        &json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
    )
    .await;
    assert_eq!(status, 202);
    session
}

pub fn tools_list(id: u64) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": "tools/list"})
}
/// The `result` of the JSON-RPC answer with `id` in an SSE or JSON body.
pub fn result_of(body: &str, id: u64) -> Value {
    body.lines()
        .map(|l| l.strip_prefix("data: ").unwrap_or(l))
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .find(|m| m["id"] == id)
        .unwrap_or_else(|| panic!("no answer {id} in {body}"))["result"]
        .clone()
}
