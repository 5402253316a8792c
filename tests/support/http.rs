//! A `mcp-defer serve --http` the test starts, and the plain-HTTP (reqwest) requests tests
//! send it: JSON-RPC posts, the handshake, the answer with an id in an SSE or JSON body.

use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::{Value, json};

use crate::support::wait::{eventually_sync, poll_sync};
use crate::support::{Dir, Killed};

/// A running `mcp-defer serve --http 127.0.0.1:0` and everything it logged so far.
pub struct Server {
    _child: Killed,
    pub url: String,
    log: Arc<Mutex<String>>,
    /// The thread that reads its stderr into `log`; it ends when the server's stderr closes.
    reader: std::thread::JoinHandle<()>,
}

impl Server {
    /// A new directory whose `servers.toml` is `toml`, and the server over it.
    pub fn serving(toml: &str) -> (Dir, Server) {
        let dir = Dir::with_config(toml);
        let server = Server::start(&dir, &[]);
        (dir, server)
    }

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
        let bin = crate::support::bin_under_test();
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
        let reader = std::thread::spawn(move || {
            for line in BufReader::new(stderr).lines().map_while(Result::ok) {
                let mut log = writer.lock().unwrap();
                log.push_str(&line);
                log.push('\n');
            }
        });
        let mut child = Killed(child);
        let started = eventually_sync("serve --http logs the URL it serves at", || {
            let text = log.lock().unwrap().clone();
            if let Some(url) = served_url(&text) {
                return Ok(Ok(url));
            }
            match child.0.try_wait() {
                Ok(Some(status)) => Ok(Err(status)),
                _ => Err(text),
            }
        });
        match started {
            Ok(url) => Ok(Server {
                _child: child,
                url,
                log,
                reader,
            }),
            Err(status) => {
                // Its last lines explain the exit: read to the end of its stderr first.
                let _ = poll_sync(LOG_END, || reader.is_finished());
                Err(format!("exited {status}: {}", log.lock().unwrap()))
            }
        }
    }

    /// Stops the server as a service manager does (SIGTERM; elsewhere it is killed) and
    /// returns everything it logged, to its last line.
    pub fn stop(self) -> String {
        let Server {
            _child: mut child,
            log,
            reader,
            ..
        } = self;
        #[cfg(unix)]
        crate::support::os::send(child.0.id() as i32, crate::support::os::Signal::Term);
        #[cfg(not(unix))]
        let _ = child.0.kill();
        eventually_sync("serve --http exits", || {
            child.0.try_wait().ok().flatten().is_some()
        });
        let _ = poll_sync(LOG_END, || reader.is_finished());
        log.lock().unwrap().clone()
    }

    /// The text of its `/metrics`, asked with `headers` (a token where one is required).
    pub async fn metrics(&self, headers: &[(&str, &str)]) -> String {
        let base = self.url.trim_end_matches("/mcp");
        let mut request = reqwest::Client::new().get(format!("{base}/metrics"));
        for (name, value) in headers {
            request = request.header(*name, *value);
        }
        let response = request.send().await.expect("GET /metrics");
        response.text().await.expect("the /metrics body")
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
        eventually_sync(&format!("{needle:?} logged {times} times"), || {
            let log = self.log();
            if log.matches(needle).count() >= times {
                Ok(())
            } else {
                Err(log)
            }
        });
    }
}

/// How long the reader of a server's stderr may take to read its last lines once the
/// server exited (a child of it that still holds the pipe would hold the reader longer).
const LOG_END: Duration = Duration::from_secs(2);

/// The URL a `serve --http` log names (`url=http://...` or, in JSON, `"url":"http://..."`).
fn served_url(log: &str) -> Option<String> {
    let start = (log.find("url=http://").map(|i| i + 4))
        .or_else(|| log.find("\"url\":\"http://").map(|i| i + 7))?;
    let url = log[start..]
        .split(|c: char| c.is_whitespace() || c == '"')
        .next()?;
    Some(url.to_owned())
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

/// The headers of a request in the handshake-era session `id` (protocol 2025-06-18).
pub fn session_headers(id: &str) -> [(&'static str, &str); 2] {
    [
        ("mcp-session-id", id),
        ("mcp-protocol-version", "2025-06-18"),
    ]
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
