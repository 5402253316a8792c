//! Real third-party servers and clients: the npm and PyPI reference servers behind
//! mcp-defer, driven by rmcp's client and by the official Python SDK.

use serde_json::json;

use crate::support::session::*;
use crate::support::{BIN, Dir, Peers, assert_contains_all, peers};

fn peers_config(peers: &Peers) -> String {
    format!(
        "[mcp_servers.everything]\ncommand = {:?}\nargs = [\"stdio\"]\ndescription = \"MCP reference server exercising every protocol feature\"\n\n\
         [mcp_servers.time]\ncommand = {:?}\ndescription = \"Current time and timezone conversion\"\n",
        peers.everything, peers.time,
    )
}

#[test]
fn the_python_sdk_searches_selects_and_calls_through_mcp_defer() {
    let Some(peers) = peers() else { return };
    let setup = Dir::with_config(&peers_config(&peers));
    let config = setup.file("servers.toml");
    let stdout = peers.python("defer_session.py", &[BIN.as_ref(), config.as_os_str()]);
    assert_contains_all(&stdout, &["\"selected\": \"time__get_current_time\""]);
}

#[tokio::test]
async fn rmcp_client_loads_and_calls_a_real_npm_server_tool() {
    let Some(peers) = peers() else { return };
    let setup = Dir::with_config(&peers_config(&peers));
    let session = Session::start(&setup.file("servers.toml")).await;
    let before = session.list().await;
    let found = session
        .search(json!({"query": "add two numbers together"}))
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
