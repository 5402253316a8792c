//! A client session against `mcp-defer serve`, spoken with rmcp's client over real stdio.

use std::path::Path;
use std::time::Duration;

use rmcp::model::{
    CallToolRequestParams, CallToolResult, ClientConfig, JsonObject, ProgressNotificationParam,
    ProtocolVersion, ResourceUpdatedNotificationParam, Tool,
};
use rmcp::service::{ClientLifecycleMode, ClientServiceExt, NotificationContext, RunningService};
use rmcp::transport::TokioChildProcess;
use rmcp::{ClientHandler, RoleClient};
use serde_json::Value;
use tokio::sync::mpsc;

use crate::support::wait::{eventually_within, poll};

/// Records every list-changed notification; optionally re-lists on each, as Claude Code does.
#[derive(Clone)]
pub struct Recorder {
    changed: mpsc::UnboundedSender<()>,
    progress: mpsc::UnboundedSender<ProgressNotificationParam>,
    prompts_changed: mpsc::UnboundedSender<()>,
    updated: mpsc::UnboundedSender<String>,
    version: ProtocolVersion,
}

/// How a session opens, and so which protocol era it speaks.
#[derive(Debug, Clone)]
pub enum Era {
    /// `initialize` with this handshake-era version.
    Handshake(ProtocolVersion),
    /// `server/discover`, then the 2026-07-28 envelope on every request.
    Discover,
}

impl ClientHandler for Recorder {
    fn get_info(&self) -> ClientConfig {
        let mut info = ClientConfig::default();
        info.protocol_version = self.version.clone();
        info
    }

    async fn on_tool_list_changed(&self, _context: NotificationContext<RoleClient>) {
        let _ = self.changed.send(());
    }

    async fn on_progress(
        &self,
        params: ProgressNotificationParam,
        _context: NotificationContext<RoleClient>,
    ) {
        let _ = self.progress.send(params);
    }

    async fn on_prompt_list_changed(&self, _context: NotificationContext<RoleClient>) {
        let _ = self.prompts_changed.send(());
    }

    async fn on_resource_updated(
        &self,
        params: ResourceUpdatedNotificationParam,
        _context: NotificationContext<RoleClient>,
    ) {
        let _ = self.updated.send(params.uri);
    }
}

pub struct Session {
    pub client: RunningService<RoleClient, Recorder>,
    pub changed: mpsc::UnboundedReceiver<()>,
    pub progress: mpsc::UnboundedReceiver<ProgressNotificationParam>,
    /// `notifications/prompts/list_changed`, one `()` each.
    pub prompts_changed: mpsc::UnboundedReceiver<()>,
    /// The URI of each `notifications/resources/updated`.
    pub updated: mpsc::UnboundedReceiver<String>,
    /// mcp-defer's process id, to wait for its exit.
    pid: Option<u32>,
}

impl Session {
    /// Starts `mcp-defer serve --config <config>` and does the legacy handshake.
    pub async fn start(config: &Path) -> Session {
        Session::start_in(config, Era::Handshake(ProtocolVersion::V_2025_11_25)).await
    }

    /// Starts `mcp-defer serve --config <config>` and opens the session in `era`.
    pub async fn start_in(config: &Path, era: Era) -> Session {
        Session::launch(config, era, None, |_| {}).await
    }

    /// As [`Session::start`], with `configure` setting the command's environment.
    pub async fn start_with(
        config: &Path,
        configure: impl FnOnce(&mut tokio::process::Command),
    ) -> Session {
        Session::start_logged(config, None, configure).await
    }

    /// As [`Session::start_with`], with the server's stderr written to `stderr` when given
    /// (it is inherited otherwise).
    pub async fn start_logged(
        config: &Path,
        stderr: Option<std::fs::File>,
        configure: impl FnOnce(&mut tokio::process::Command),
    ) -> Session {
        let era = Era::Handshake(ProtocolVersion::V_2025_11_25);
        Session::launch(config, era, stderr, configure).await
    }

    /// Logs at `mcp_defer=debug`, or at `TEST_RUST_LOG` when set, unless `configure` says
    /// otherwise; the server's stderr goes to `stderr` when given.
    pub async fn launch(
        config: &Path,
        era: Era,
        stderr: Option<std::fs::File>,
        configure: impl FnOnce(&mut tokio::process::Command),
    ) -> Session {
        let mut command = crate::support::serve_command(config);
        // What search learns from use stays in the test's directory, so no test ranks by
        // another's choices (or the user's).
        if let Some(dir) = config.parent() {
            command.env("MCP_DEFER_DATA_DIR", dir.join("data"));
        }
        configure(&mut command);
        let mut builder = TokioChildProcess::builder(command);
        if let Some(file) = stderr {
            builder = builder.stderr(file);
        }
        let (transport, _) = builder
            .spawn()
            .unwrap_or_else(|e| panic!("spawn mcp-defer: {e}"));
        let pid = transport.id();
        let (tx, rx) = mpsc::unbounded_channel();
        let (progress_tx, progress) = mpsc::unbounded_channel();
        let (version, lifecycle) = match era {
            Era::Handshake(version) => (version, ClientLifecycleMode::Initialize),
            Era::Discover => (
                ProtocolVersion::V_2026_07_28,
                ClientLifecycleMode::Discover {
                    preferred_versions: vec![ProtocolVersion::V_2026_07_28],
                },
            ),
        };
        let (prompts_tx, prompts_changed) = mpsc::unbounded_channel();
        let (updated_tx, updated) = mpsc::unbounded_channel();
        let recorder = Recorder {
            changed: tx,
            progress: progress_tx,
            prompts_changed: prompts_tx,
            updated: updated_tx,
            version,
        };
        let client = recorder
            .serve_with_lifecycle(transport, lifecycle)
            .await
            .unwrap_or_else(|e| panic!("handshake with mcp-defer: {e}"));
        Session {
            client,
            changed: rx,
            progress,
            prompts_changed,
            updated,
            pid,
        }
    }

    pub fn instructions(&self) -> String {
        self.client
            .peer_info()
            .and_then(|info| info.instructions.clone())
            .unwrap_or_default()
    }

    pub async fn list(&self) -> Vec<Tool> {
        self.client
            .list_tools(None)
            .await
            .unwrap_or_else(|e| panic!("tools/list: {e}"))
            .tools
    }

    pub async fn call(&self, name: &str, arguments: Value) -> CallToolResult {
        self.try_call(name, arguments)
            .await
            .unwrap_or_else(|e| panic!("tools/call {name}: {e}"))
    }

    /// `call_tool` (the meta tool) calling `name` with `arguments`.
    pub async fn call_through(&self, name: &str, arguments: Value) -> CallToolResult {
        let arguments = serde_json::json!({"name": name, "arguments": arguments});
        self.call("call_tool", arguments).await
    }

    /// `search_tools` as a model is told to use it: a search answers within a few seconds
    /// with what is indexed and names the servers still starting ("Search again shortly"),
    /// so a real server slow to start on a loaded machine is searched again (60 s at most).
    pub async fn search(&self, arguments: Value) -> CallToolResult {
        let found = poll(Duration::from_secs(60), async || {
            let found = self.call("search_tools", arguments.clone()).await;
            let starting = structured(&found)["starting"]
                .as_array()
                .is_some_and(|s| !s.is_empty());
            if starting { Err(found) } else { Ok(found) }
        })
        .await;
        // Still starting after that: the caller asserts on what was found so far.
        found.unwrap_or_else(|found| found)
    }

    pub async fn try_call(
        &self,
        name: &str,
        arguments: Value,
    ) -> Result<CallToolResult, rmcp::ServiceError> {
        let mut params = CallToolRequestParams::new(name.to_owned());
        params.arguments = Some(object(arguments));
        self.client.call_tool(params).await
    }

    pub async fn close(self) {
        let _ = self.client.cancel().await;
    }

    /// Closes the session and waits until mcp-defer has exited, so everything it writes on
    /// the way out (its log, its children's) is written. Fails the test when it still runs
    /// after `wait`.
    pub async fn close_and_wait_exit(self, wait: Duration) {
        let pid = self.pid.expect("mcp-defer's pid, taken right after spawn");
        self.close().await;
        let what = format!("mcp-defer (pid {pid}) exits after its client closed");
        eventually_within(wait, &what, async || crate::support::is_gone(pid as i32)).await;
    }

    /// Forgets the `tools/list_changed` notifications received so far, so the next
    /// [`Session::expect_changed`] waits for one sent after this point.
    pub fn forget_changes(&mut self) {
        while self.changed.try_recv().is_ok() {}
    }

    /// Waits for the next `notifications/tools/list_changed`; fails the test, saying `what`
    /// should have sent it, when none comes within `wait`.
    pub async fn expect_changed(&mut self, wait: Duration, what: &str) {
        match tokio::time::timeout(wait, self.changed.recv()).await {
            Ok(Some(())) => {}
            Ok(None) => panic!("the session ended before the tools/list_changed of {what}"),
            Err(_) => panic!("no tools/list_changed within {wait:?} after {what}"),
        }
    }
}

pub fn object(value: Value) -> JsonObject {
    match value {
        Value::Object(map) => map,
        other => panic!("expected a JSON object, got {other}"),
    }
}

/// Each tool serialized, to compare lists byte for byte.
pub fn bytes(tools: &[Tool]) -> Vec<String> {
    tools
        .iter()
        .map(|t| serde_json::to_string(t).unwrap_or_else(|e| panic!("serialize: {e}")))
        .collect()
}

pub fn names(tools: &[Tool]) -> Vec<String> {
    tools.iter().map(|t| t.name.to_string()).collect()
}

/// Asserts `after` is `before` plus tools at the end, byte for byte.
pub fn assert_extends(before: &[Tool], after: &[Tool]) {
    let (before, after) = (bytes(before), bytes(after));
    assert!(
        after.len() >= before.len() && after[..before.len()] == before[..],
        "the list must only grow at the end:\nbefore: {before:#?}\nafter: {after:#?}"
    );
}

/// The names of the tools in a `search_tools` answer (its structured content), best first;
/// fails the test when it has no `tools`.
pub fn found_names(found: &Value) -> Vec<String> {
    found["tools"]
        .as_array()
        .unwrap_or_else(|| panic!("no tools in {found:#}"))
        .iter()
        .map(|t| t["name"].as_str().unwrap_or_default().to_owned())
        .collect()
}

pub fn structured(result: &CallToolResult) -> Value {
    result.structured_content.clone().unwrap_or(Value::Null)
}

pub fn text(result: &CallToolResult) -> String {
    result
        .content
        .iter()
        .filter_map(|c| c.as_text().map(|t| t.text.clone()))
        .collect::<Vec<_>>()
        .join("\n")
}
