//! Requests downstream servers send their client (sampling, elicitation, roots) reach
//! mcp-defer's client and the answers go back: real servers (server-everything,
//! server-filesystem, the fixture's `ask`) behind mcp-defer, driven by the official Python
//! SDK in both eras (`tests/python/client_requests.py`) and by rmcp's client.

use std::path::Path;
use std::time::Duration;

use rmcp::model::{
    CallToolRequestParams, ClientCapabilities, ClientConfig, ElicitRequestParams, ElicitResult,
    ElicitationAction, ElicitationCapability, FormElicitationCapability, Implementation,
};
use rmcp::service::{RequestContext, RoleClient};
use rmcp::transport::TokioChildProcess;
use rmcp::{ClientHandler, ErrorData, ServiceExt};
use serde_json::{Value, json};
use tokio::sync::mpsc;

use crate::support::session::{object, text};
use crate::support::{BIN, Dir, Peers, fixture, peers};

/// server-everything and the fixture with its `ask` tool.
fn everything_and_fixture(peers: &Peers) -> String {
    format!(
        "[mcp_servers.everything]\ncommand = {:?}\nargs = [\"stdio\"]\n\n{}",
        peers.everything,
        fixture("fixture", &["--ask-tool"], "")
    )
}

/// Runs `client_requests.py MODE` against `config` and returns its JSON summary.
fn python(peers: &Peers, mode: &str, config: &Path, extra: &[&Path]) -> Value {
    let mut args = vec![mode.as_ref(), BIN.as_ref(), config.as_os_str()];
    args.extend(extra.iter().map(|p| p.as_os_str()));
    let stdout = peers.python("client_requests.py", &args);
    serde_json::from_str(stdout.trim())
        .unwrap_or_else(|e| panic!("python {mode} printed no JSON ({e}):\n{stdout}"))
}

#[test]
fn a_legacy_client_answers_sampling_elicitation_and_roots_of_real_servers() {
    let Some(peers) = peers() else { return };
    let setup = Dir::new();
    let config = setup.config(&everything_and_fixture(&peers));
    // The script asserts each answer reached the tool result; here: each request reached
    // the client's callback, in order, with what the server asked. (server-everything may
    // also fetch roots on its own when it starts, so roots are counted apart.)
    let seen = python(&peers, "legacy", &config, &[])["seen"].clone();
    let seen = seen.as_array().cloned().unwrap_or_default();
    let (roots, asked): (Vec<Value>, Vec<Value>) =
        seen.into_iter().partition(|s| s.get("roots").is_some());
    assert_eq!(
        asked,
        [
            json!({"sampling": "Resource trigger-sampling-request context: tell a joke"}),
            json!({"elicitation": "form", "message": "Please provide inputs for the following fields:"}),
            json!({"elicitation": "url", "message": "open it"}),
            json!({"sampling": "fixture asks for a sample"}),
            json!({"elicitation": "form", "message": "fixture asks for a name"}),
        ],
    );
    assert!(
        roots.len() >= 2,
        "get-roots-list and the fixture asked for roots: {roots:?}"
    );
    assert!(
        roots.iter().all(|r| r["roots"] == json!(["/tmp"])),
        "{roots:?}"
    );
}

#[test]
fn a_client_without_sampling_is_not_offered_it_and_a_server_that_asks_gets_a_clear_error() {
    let Some(peers) = peers() else { return };
    let setup = Dir::new();
    let config = setup.config(&everything_and_fixture(&peers));
    let out = python(&peers, "no-sampling", &config, &[]);
    let error = out["answers"][0]["error"].as_str().unwrap_or_default();
    assert_eq!(
        error,
        "the client did not declare the sampling capability, so it cannot answer sampling/createMessage"
    );
}

#[test]
fn the_clients_roots_decide_what_server_filesystem_may_read_and_changes_reach_it() {
    let Some(peers) = peers() else { return };
    let filesystem = peers.everything.with_file_name("mcp-server-filesystem");
    let setup = Dir::new();
    let (a, b) = (setup.file("a"), setup.file("b"));
    std::fs::create_dir_all(&a).unwrap();
    std::fs::create_dir_all(&b).unwrap();
    std::fs::write(a.join("inside.txt"), "inside the root").unwrap();
    std::fs::write(b.join("outside.txt"), "outside the first root").unwrap();
    // No directory arguments: the server may touch only what the client's roots allow.
    let config = setup.config(&format!("[mcp_servers.fs]\ncommand = {filesystem:?}\n"));
    let out = python(&peers, "roots", &config, &[&a, &b]);
    let asked: Vec<Value> = out["seen"].as_array().cloned().unwrap_or_default();
    assert!(
        asked.len() >= 2,
        "the server asked for roots at start and after list_changed: {asked:?}"
    );
}

#[test]
fn a_2026_07_28_client_answers_server_requests_through_input_required_rounds() {
    let Some(peers) = peers() else { return };
    let setup = Dir::new();
    let config = setup.config(&everything_and_fixture(&peers));
    let out = python(&peers, "modern", &config, &[]);
    assert_eq!(
        out["seen"],
        json!([
            {"elicitation": "form", "message": "fixture asks for a name"},
            {"sampling": "fixture asks for a sample"},
            {"elicitation": "form", "message": "Please provide inputs for the following fields:"},
        ]),
    );
}

/// A client that declares form elicitation and never answers: it reports each request and
/// whether it was withdrawn.
struct Hesitant {
    asked: mpsc::UnboundedSender<&'static str>,
}

impl ClientHandler for Hesitant {
    fn get_info(&self) -> ClientConfig {
        let mut capabilities = ClientCapabilities::default();
        capabilities.elicitation =
            Some(ElicitationCapability::new().with_form(FormElicitationCapability::default()));
        ClientConfig::new(capabilities, Implementation::new("hesitant", "0"))
    }

    async fn create_elicitation(
        &self,
        _request: ElicitRequestParams,
        context: RequestContext<RoleClient>,
    ) -> Result<ElicitResult, ErrorData> {
        let _ = self.asked.send("asked");
        context.ct.cancelled().await;
        let _ = self.asked.send("withdrawn");
        Ok(ElicitResult::new(ElicitationAction::Cancel))
    }
}

#[tokio::test]
async fn cancelling_a_call_withdraws_the_request_waiting_on_the_client() {
    let setup = Dir::new();
    let config = setup.config(&fixture("fixture", &["--ask-tool"], ""));
    let mut command = tokio::process::Command::new(BIN);
    command.arg("serve").arg("--config").arg(&config);
    let transport = TokioChildProcess::new(command).unwrap();
    let (tx, mut asked) = mpsc::unbounded_channel();
    let client = Hesitant { asked: tx }.serve(transport).await.unwrap();
    let mut params = CallToolRequestParams::new("fixture__ask");
    params.arguments = Some(object(json!({"asks": ["elicitation"]})));
    let request =
        rmcp::model::ClientRequest::CallToolRequest(rmcp::model::CallToolRequest::new(params));
    let handle = client
        .send_cancellable_request(request, rmcp::service::PeerRequestOptions::no_options())
        .await
        .unwrap();
    let within = Duration::from_secs(20);
    let first = tokio::time::timeout(within, asked.recv()).await;
    assert_eq!(
        first.ok().flatten(),
        Some("asked"),
        "the elicitation reached the client"
    );
    handle.cancel(Some("changed my mind".into())).await.unwrap();
    let second = tokio::time::timeout(within, asked.recv()).await;
    assert_eq!(
        second.ok().flatten(),
        Some("withdrawn"),
        "the client was told the elicitation is withdrawn"
    );
    let _ = client.cancel().await;
}

#[tokio::test]
async fn a_2026_07_28_client_without_roots_gets_a_clear_error_not_a_hang() {
    // rmcp's client in discover mode (no `initialize`), declaring nothing: the fixture's
    // roots request during the call is refused at once with the reason, which the fixture
    // puts in its result; nothing is parked waiting for an answer that cannot come.
    let setup = Dir::new();
    let config = setup.config(&format!(
        "[settings]\nclient_era = \"any\"\n\n{}",
        fixture("fixture", &["--ask-tool"], "")
    ));
    let mut command = tokio::process::Command::new(BIN);
    command.arg("serve").arg("--config").arg(&config);
    let transport = TokioChildProcess::new(command).unwrap();
    let client = rmcp::service::ClientServiceExt::serve_with_lifecycle(
        ClientConfig::new(
            ClientCapabilities::default(),
            Implementation::new("modern", "0"),
        ),
        transport,
        rmcp::service::ClientLifecycleMode::Discover {
            preferred_versions: vec![rmcp::model::ProtocolVersion::V_2026_07_28],
        },
    )
    .await
    .unwrap();
    let mut params = CallToolRequestParams::new("fixture__ask");
    params.arguments = Some(object(json!({"asks": ["roots"]})));
    let result = tokio::time::timeout(Duration::from_secs(20), client.call_tool(params))
        .await
        .expect("answered, not hanging")
        .unwrap();
    assert!(
        text(&result).contains("the client did not declare the roots capability"),
        "{}",
        text(&result)
    );
    let _ = client.cancel().await;
}
