//! A client session against `mcp-defer serve`, spoken with rmcp's client over real stdio.

use std::path::Path;

use rmcp::model::{
    CallToolRequestParams, CallToolResult, JsonObject, ProgressNotificationParam, Tool,
};
use rmcp::service::{NotificationContext, RunningService};
use rmcp::transport::TokioChildProcess;
use rmcp::{ClientHandler, RoleClient, ServiceExt};
use serde_json::Value;
use tokio::sync::mpsc;

/// Records every list-changed notification; optionally re-lists on each, as Claude Code does.
#[derive(Clone)]
pub struct Recorder {
    changed: mpsc::UnboundedSender<()>,
    progress: mpsc::UnboundedSender<ProgressNotificationParam>,
}

impl ClientHandler for Recorder {
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
}

pub struct Session {
    pub client: RunningService<RoleClient, Recorder>,
    pub changed: mpsc::UnboundedReceiver<()>,
    pub progress: mpsc::UnboundedReceiver<ProgressNotificationParam>,
}

impl Session {
    /// Starts `mcp-defer serve --config <config>` and does the legacy handshake.
    pub async fn start(config: &Path) -> Session {
        Session::start_with(config, |command| {
            command.env(
                "RUST_LOG",
                std::env::var("TEST_RUST_LOG").unwrap_or("mcp_defer=debug".into()),
            );
        })
        .await
    }

    /// As [`Session::start`], with `configure` setting the command's environment, and the
    /// server's stderr written to `stderr` when given (it is inherited otherwise).
    pub async fn start_logged(
        config: &Path,
        stderr: Option<std::fs::File>,
        configure: impl FnOnce(&mut tokio::process::Command),
    ) -> Session {
        let mut command = tokio::process::Command::new(crate::util::BIN);
        command.arg("serve").arg("--config").arg(config);
        configure(&mut command);
        let mut builder = TokioChildProcess::builder(command);
        if let Some(file) = stderr {
            builder = builder.stderr(file);
        }
        let (transport, _) = builder
            .spawn()
            .unwrap_or_else(|e| panic!("spawn mcp-defer: {e}"));
        Session::over(transport).await
    }

    pub async fn start_with(
        config: &Path,
        configure: impl FnOnce(&mut tokio::process::Command),
    ) -> Session {
        let mut command = tokio::process::Command::new(crate::util::BIN);
        command.arg("serve").arg("--config").arg(config);
        configure(&mut command);
        let transport =
            TokioChildProcess::new(command).unwrap_or_else(|e| panic!("spawn mcp-defer: {e}"));
        Session::over(transport).await
    }

    async fn over(transport: TokioChildProcess) -> Session {
        let (tx, rx) = mpsc::unbounded_channel();
        let (progress_tx, progress) = mpsc::unbounded_channel();
        let client = Recorder {
            changed: tx,
            progress: progress_tx,
        }
        .serve(transport)
        .await
        .unwrap_or_else(|e| panic!("handshake with mcp-defer: {e}"));
        Session {
            client,
            changed: rx,
            progress,
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
