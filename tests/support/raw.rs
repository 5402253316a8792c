//! A client that writes JSON-RPC lines itself: what a real client sends, byte for byte,
//! including what SDK clients never send (the 2026-07-28 envelope as Claude Code writes it,
//! extension `_meta` keys). Every line mcp-defer writes is kept, in order, so tests can
//! assert on ordering across messages (progress before its result).

use std::path::Path;
use std::process::Stdio;
use std::time::Duration;

use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader, Lines};
use tokio::process::{Child, ChildStdin, ChildStdout};

/// How long one answer may take: servers start behind mcp-defer on the first call.
const ANSWER_WAIT: Duration = Duration::from_secs(30);

/// The 2026-07-28 envelope Claude Code 2.1.332 puts in the `_meta` of every request, as
/// recorded on the wire (`../shared/clients` kit, wiretap of a real session).
pub fn claude_envelope() -> Value {
    json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientInfo": {
            "name": "claude-code",
            "title": "Claude Code",
            "version": "2.1.332",
            "description": "Anthropic's agentic coding tool",
            "websiteUrl": "https://claude.com/claude-code"
        },
        "io.modelcontextprotocol/clientCapabilities": {
            "roots": {"listChanged": true},
            "elicitation": {"form": {}, "url": {}}
        },
    })
}

pub struct RawClient {
    child: Child,
    stdin: ChildStdin,
    lines: Lines<BufReader<ChildStdout>>,
    next_id: i64,
    /// Every message received, in order.
    pub received: Vec<Value>,
    /// Answers read while [`RawClient::response`] waited for another id: kept, not dropped,
    /// until their own `response` claims them; [`RawClient::no_strays`] fails on any left.
    unclaimed: Vec<Value>,
}

impl RawClient {
    /// Starts `mcp-defer serve --config <config>`; no handshake is sent.
    pub fn start(config: &Path) -> RawClient {
        RawClient::start_with(config, |_| {})
    }

    /// As [`RawClient::start`], with `configure` setting the command's environment (or
    /// where its stderr goes).
    pub fn start_with(
        config: &Path,
        configure: impl FnOnce(&mut tokio::process::Command),
    ) -> RawClient {
        RawClient::spawn(crate::support::serve_command(config), configure)
    }

    /// As [`RawClient::start_with`], run by `program`: another build of mcp-defer.
    pub fn start_program(
        program: &Path,
        config: &Path,
        configure: impl FnOnce(&mut tokio::process::Command),
    ) -> RawClient {
        RawClient::spawn(crate::support::serve_command_of(program, config), configure)
    }

    fn spawn(
        mut command: tokio::process::Command,
        configure: impl FnOnce(&mut tokio::process::Command),
    ) -> RawClient {
        command
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .kill_on_drop(true);
        configure(&mut command);
        let mut child = command
            .spawn()
            .unwrap_or_else(|e| panic!("spawn mcp-defer: {e}"));
        let (Some(stdin), Some(stdout)) = (child.stdin.take(), child.stdout.take()) else {
            panic!("mcp-defer without piped stdio");
        };
        RawClient {
            child,
            stdin,
            lines: BufReader::new(stdout).lines(),
            next_id: 0,
            received: Vec::new(),
            unclaimed: Vec::new(),
        }
    }

    /// Starts mcp-defer and opens a 2026-07-28 session as Claude Code does:
    /// `server/discover`, then a `subscriptions/listen` stream for list changes.
    pub async fn claude(config: &Path) -> RawClient {
        let mut client = RawClient::start(config);
        let discovered = client
            .request("server/discover", json!({"_meta": claude_envelope()}))
            .await;
        assert!(
            discovered["result"]["supportedVersions"]
                .as_array()
                .is_some_and(|v| v.contains(&json!("2026-07-28"))),
            "server/discover: {discovered}"
        );
        client
            .send_request(
                "subscriptions/listen",
                json!({"_meta": claude_envelope(), "notifications": {
                    "toolsListChanged": true,
                    "promptsListChanged": true,
                    "resourcesListChanged": true,
                }}),
            )
            .await;
        client
    }

    /// Starts mcp-defer and opens a handshake-era session (`initialize` 2025-06-18).
    pub async fn legacy(config: &Path) -> RawClient {
        let mut client = RawClient::start(config);
        client.handshake("2025-06-18").await;
        client
    }

    /// `initialize` in protocol `version`, then `notifications/initialized`; the
    /// `initialize` result.
    pub async fn handshake(&mut self, version: &str) -> Value {
        self.try_handshake(version)
            .await
            .unwrap_or_else(|answer| panic!("initialize: {answer}"))
    }

    /// As [`RawClient::handshake`]; `Err` with the answer when `initialize` fails.
    pub async fn try_handshake(&mut self, version: &str) -> Result<Value, Value> {
        let init = self
            .request(
                "initialize",
                json!({"protocolVersion": version, "capabilities": {},
                       "clientInfo": {"name": "raw", "version": "0"}}),
            )
            .await;
        let Some(result) = init.get("result").cloned() else {
            return Err(init);
        };
        self.send(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}))
            .await;
        Ok(result)
    }

    /// `tools/call` of mcp-defer's `call_tool` meta tool, calling `name` with `arguments`.
    pub async fn call_through(&mut self, name: &str, arguments: Value) -> Value {
        self.request(
            "tools/call",
            json!({"name": "call_tool", "arguments": {"name": name, "arguments": arguments}}),
        )
        .await
    }

    pub async fn send(&mut self, message: &Value) {
        self.send_line(message.to_string().as_bytes()).await;
    }

    /// Writes `line` and a newline, whatever the bytes are.
    pub async fn send_line(&mut self, line: &[u8]) {
        let written = async {
            self.stdin.write_all(line).await?;
            self.stdin.write_all(b"\n").await?;
            self.stdin.flush().await
        };
        written
            .await
            .unwrap_or_else(|e| panic!("write to mcp-defer: {e}"));
    }

    /// Writes `line` and returns the next message that is not a notification or request:
    /// the one answer to it.
    pub async fn exchange(&mut self, line: &[u8]) -> Value {
        self.send_line(line).await;
        loop {
            let message = self.next().await;
            if message.get("method").is_none() {
                return message;
            }
        }
    }

    /// Sends a request without waiting; returns its id.
    pub async fn send_request(&mut self, method: &str, params: Value) -> i64 {
        self.next_id += 1;
        let id = self.next_id;
        self.send(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}))
            .await;
        id
    }

    /// Sends a request and reads until its response, which it returns.
    pub async fn request(&mut self, method: &str, params: Value) -> Value {
        let id = self.send_request(method, params).await;
        self.response(id).await
    }

    /// The response to `id`: one read earlier and kept, or the next to come. Answers to
    /// other ids read meanwhile are kept for their own `response` (or for
    /// [`RawClient::no_strays`] to report), never dropped.
    pub async fn response(&mut self, id: i64) -> Value {
        let id = json!(id);
        if let Some(at) = self.unclaimed.iter().position(|m| m.get("id") == Some(&id)) {
            return self.unclaimed.remove(at);
        }
        loop {
            let message = self.next().await;
            if message.get("method").is_some() {
                continue;
            }
            if message.get("id") == Some(&id) {
                return message;
            }
            self.unclaimed.push(message);
        }
    }

    /// Ends a test's exchange with a sentinel: sends a `ping` and reads until its answer.
    /// Returns every answer nobody claimed: those kept by [`RawClient::response`] and any
    /// that came before the sentinel's answer (a late duplicate, an answer to an id never
    /// sent). Notifications and server requests are not answers and are left out.
    pub async fn strays(&mut self) -> Vec<Value> {
        let sentinel = json!(self.send_request("ping", json!({})).await);
        let mut strays = std::mem::take(&mut self.unclaimed);
        loop {
            let message = self.next().await;
            if message.get("method").is_some() {
                continue;
            }
            if message.get("id") == Some(&sentinel) {
                assert!(
                    message.get("result").is_some(),
                    "the sentinel ping failed: {message}"
                );
                return strays;
            }
            strays.push(message);
        }
    }

    /// [`RawClient::strays`], failing the test when there is any.
    pub async fn no_strays(&mut self) {
        let strays = self.strays().await;
        assert!(
            strays.is_empty(),
            "answers nobody asked for (a duplicate, or an unknown id) came before the \
             sentinel's: {strays:#?}"
        );
    }

    /// The next message mcp-defer writes.
    pub async fn next(&mut self) -> Value {
        self.next_within(ANSWER_WAIT)
            .await
            .unwrap_or_else(|| panic!("no message within {ANSWER_WAIT:?}"))
    }

    /// The next message mcp-defer writes, or `None` when it writes none within `wait`.
    pub async fn next_within(&mut self, wait: Duration) -> Option<Value> {
        let line = self.line_within(wait).await?;
        self.received.last().cloned().or_else(|| panic!("{line}"))
    }

    /// The next line mcp-defer writes, byte for byte (also kept, parsed, in `received`).
    pub async fn next_line(&mut self) -> String {
        self.line_within(ANSWER_WAIT)
            .await
            .unwrap_or_else(|| panic!("no message within {ANSWER_WAIT:?}"))
    }

    async fn line_within(&mut self, wait: Duration) -> Option<String> {
        let line = tokio::time::timeout(wait, self.lines.next_line())
            .await
            .ok()?
            .unwrap_or_else(|e| panic!("read from mcp-defer: {e}"))
            .unwrap_or_else(|| panic!("mcp-defer closed stdout"));
        let message: Value = serde_json::from_str(&line)
            .unwrap_or_else(|e| panic!("mcp-defer wrote a line that is not JSON ({e}): {line}"));
        self.received.push(message);
        Some(line)
    }

    /// `tools/call` with the Claude Code envelope plus `extra` `_meta` keys.
    pub async fn call_tool(&mut self, name: &str, arguments: Value, extra_meta: Value) -> Value {
        let mut meta = claude_envelope();
        if let (Some(meta), Value::Object(extra)) = (meta.as_object_mut(), extra_meta) {
            meta.extend(extra);
        }
        self.request(
            "tools/call",
            json!({"_meta": meta, "name": name, "arguments": arguments}),
        )
        .await
    }

    /// mcp-defer's process id, while it runs (the Linux-only soak test reads its memory).
    #[cfg(target_os = "linux")]
    pub fn pid(&self) -> Option<u32> {
        self.child.id()
    }

    pub async fn close(mut self) {
        drop(self.stdin);
        let _ = tokio::time::timeout(Duration::from_secs(10), self.child.wait()).await;
    }
}

/// The text blocks of a `tools/call` response, joined.
pub fn result_text(response: &Value) -> String {
    response["result"]["content"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|c| c["text"].as_str())
        .collect::<Vec<_>>()
        .join("\n")
}
