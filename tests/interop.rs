//! Real third-party servers and clients: the npm and PyPI reference servers behind
//! mcp-defer, driven by rmcp's client and by the official Python SDK.

use std::path::{Path, PathBuf};

use serde_json::json;

use crate::session::*;

/// Where `.ci/install-peers` puts the real servers and clients.
fn peers() -> Option<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join(".peers");
    let ready = dir
        .join("node/node_modules/.bin/mcp-server-everything")
        .exists()
        && dir.join("py/bin/mcp-server-time").exists();
    if ready {
        Some(dir)
    } else if std::env::var_os("CI").is_some() {
        panic!("the interop peers are missing in CI: .ci/install-peers must install them");
    } else {
        eprintln!("skipped: run .ci/install-peers to install the real MCP servers this test uses");
        None
    }
}

fn peers_config(peers: &Path) -> String {
    format!(
        "[mcp_servers.everything]\ncommand = {:?}\nargs = [\"stdio\"]\ndescription = \"MCP reference server exercising every protocol feature\"\n\n\
         [mcp_servers.time]\ncommand = {:?}\ndescription = \"Current time and timezone conversion\"\n",
        peers.join("node/node_modules/.bin/mcp-server-everything"),
        peers.join("py/bin/mcp-server-time"),
    )
}

#[test]
fn the_python_sdk_searches_selects_and_calls_through_mcp_defer() {
    let Some(peers) = peers() else { return };
    let setup = Setup::new(&peers_config(&peers));
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/python/defer_session.py");
    let output = std::process::Command::new(peers.join("py/bin/python"))
        .arg(script)
        .arg(DEFER)
        .arg(setup.config())
        .output()
        .unwrap_or_else(|e| panic!("run the python client: {e}"));
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        output.status.success(),
        "python session failed:\n{stdout}\n{stderr}"
    );
    assert!(
        stdout.contains("\"selected\": \"time__get_current_time\""),
        "{stdout}"
    );
}

#[tokio::test]
async fn rmcp_client_loads_and_calls_a_real_npm_server_tool() {
    let Some(peers) = peers() else { return };
    let setup = Setup::new(&peers_config(&peers));
    let session = Session::start(&setup.config()).await;
    let before = session.list().await;
    let found = session
        .call("search_tools", json!({"query": "add two numbers together"}))
        .await;
    let top = structured(&found)["tools"][0]["name"]
        .as_str()
        .unwrap_or_default()
        .to_owned();
    assert_eq!(top, "everything__get-sum", "{}", text(&found));
    session.call("select_tools", json!({"names": [top]})).await;
    let after = session.list().await;
    assert_extends(&before, &after);
    let sum = session.call(&top, json!({"a": 19, "b": 23})).await;
    assert!(text(&sum).contains("42"), "{}", text(&sum));
    session.close().await;
}
