//! A tool through mcp-defer is the tool the server offers: the same definition (title,
//! annotations, icons, `outputSchema`, its own `_meta`) and the same results (structured
//! content, images, resource links, embedded resources, annotated content, `isError`).
//! Compared against a direct connection to the real `server-everything`.

use rmcp::ServiceExt;
use rmcp::model::{CallToolRequestParams, CallToolResult, Tool};
use rmcp::transport::TokioChildProcess;
use serde_json::{Value, json};

use crate::session::*;
use crate::util::{Dir, peers};

/// Tools whose results exercise every content kind, with arguments.
fn calls() -> Vec<(&'static str, Value)> {
    vec![
        (
            "get-annotated-message",
            json!({"messageType": "error", "includeImage": true}),
        ),
        ("get-resource-links", json!({"count": 3})),
        ("get-resource-reference", json!({"resourceId": 2})),
        ("get-structured-content", json!({"location": "Chicago"})),
        ("get-tiny-image", json!({})),
        ("get-sum", json!({"a": 2, "b": 3})),
    ]
}

/// The listed tool as the server defined it: our name and our `_meta` key taken off.
fn as_defined(tool: &Tool, original: &str) -> Value {
    let mut value = serde_json::to_value(tool).expect("tool");
    value["name"] = json!(original);
    if let Some(meta) = value.get_mut("_meta").and_then(Value::as_object_mut) {
        meta.remove(mcp_defer::exposure::ALWAYS_LOAD_KEY);
        if meta.is_empty() {
            value.as_object_mut().expect("object").remove("_meta");
        }
    }
    value
}

fn result_value(result: &CallToolResult) -> Value {
    let mut value = serde_json::to_value(result).expect("result");
    // Present or absent by protocol era, not by tool: not part of what is compared.
    value.as_object_mut().expect("object").remove("resultType");
    value
}

#[tokio::test]
async fn tools_and_results_pass_through_unchanged() {
    let Some(peers) = peers() else { return };
    let mut command = tokio::process::Command::new(&peers.everything);
    command.arg("stdio");
    let direct =
        ().serve(TokioChildProcess::new(command).expect("spawn server-everything"))
            .await
            .expect("handshake with server-everything");
    let offered = direct.list_all_tools().await.expect("tools/list");

    let setup = Dir::new();
    let config = setup.config(&format!(
        "[mcp_servers.everything]\ncommand = {:?}\nargs = [\"stdio\"]\n",
        peers.everything
    ));
    let session = Session::start(&config).await;
    let names: Vec<String> = offered
        .iter()
        .map(|t| format!("everything__{}", t.name))
        .collect();
    let selected = session.call("select_tools", json!({"names": names})).await;
    assert_ne!(selected.is_error, Some(true), "{}", text(&selected));
    let listed = session.list().await;
    for tool in &offered {
        let qualified = format!("everything__{}", tool.name);
        let through = listed
            .iter()
            .find(|t| t.name == qualified)
            .unwrap_or_else(|| panic!("{qualified} not listed: {:?}", names_of(&listed)));
        assert_eq!(
            as_defined(through, &tool.name),
            serde_json::to_value(tool).expect("tool"),
            "{qualified} changed on its way through"
        );
    }

    for (tool, arguments) in calls() {
        let mut params = CallToolRequestParams::new(tool);
        params.arguments = Some(object(arguments.clone()));
        let expected = direct.call_tool(params).await.expect("direct call");
        for (path, through) in [
            (
                "direct",
                session
                    .call(&format!("everything__{tool}"), arguments.clone())
                    .await,
            ),
            (
                "call_tool",
                session
                    .call(
                        "call_tool",
                        json!({"name": format!("everything__{tool}"), "arguments": arguments}),
                    )
                    .await,
            ),
        ] {
            assert_eq!(
                result_value(&through),
                result_value(&expected),
                "{tool} via {path}: the result changed on its way through"
            );
        }
    }
    session.close().await;
    let _ = direct.cancel().await;
}

fn names_of(tools: &[Tool]) -> Vec<String> {
    names(tools)
}
