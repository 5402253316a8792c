//! A tool through mcp-defer is the tool the server offers: the same definition (title,
//! annotations, icons, `outputSchema`, its own `_meta`) and the same results (structured
//! content, images, resource links, embedded resources, annotated content, `isError`).
//! Compared against a direct connection to the real `server-everything`.

use rmcp::ServiceExt;
use rmcp::model::{CallToolRequestParams, CallToolResult, Tool};
use rmcp::transport::TokioChildProcess;
use serde_json::{Value, json};

use crate::support::session::*;
use crate::support::wait::poll;
use crate::support::{Dir, peers};

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
    mask_clock_times(&mut value);
    value
}

/// server-everything stamps the resources it returns with the time of day ("created at
/// 1:01:49 AM"), so the direct answer and the proxied one differ when a second passes between
/// them: every `H:MM:SS` is masked before the two are compared.
fn mask_clock_times(value: &mut Value) {
    match value {
        Value::String(text) => *text = masked(text),
        Value::Array(items) => items.iter_mut().for_each(mask_clock_times),
        Value::Object(fields) => fields.values_mut().for_each(mask_clock_times),
        _ => {}
    }
}

fn masked(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = String::with_capacity(text.len());
    let mut i = 0;
    while i < bytes.len() {
        let digits = |at: usize| {
            bytes[at..]
                .iter()
                .take_while(|b| b.is_ascii_digit())
                .count()
        };
        let hours = digits(i);
        let is_time = (1..=2).contains(&hours)
            && bytes.get(i + hours) == Some(&b':')
            && digits(i + hours + 1) == 2
            && bytes.get(i + hours + 3) == Some(&b':')
            && digits(i + hours + 4) == 2;
        if is_time {
            out.push_str("H:MM:SS");
            i += hours + 6;
        } else {
            let c = text[i..].chars().next().expect("i is on a char boundary");
            out.push(c);
            i += c.len_utf8();
        }
    }
    out
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

/// A stdio MCP server spoken to in raw lines, as mcp-defer's client would speak to it
/// directly: what the server offers, before any SDK's types drop a field.
struct RawServer {
    _child: tokio::process::Child,
    stdin: tokio::process::ChildStdin,
    lines: tokio::io::Lines<tokio::io::BufReader<tokio::process::ChildStdout>>,
    next_id: i64,
}

impl RawServer {
    fn spawn(program: &std::path::Path, args: &[&str]) -> RawServer {
        let mut child = tokio::process::Command::new(program)
            .args(args)
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::null())
            .kill_on_drop(true)
            .spawn()
            .expect("spawn the server");
        let stdin = child.stdin.take().expect("piped stdin");
        let stdout = child.stdout.take().expect("piped stdout");
        use tokio::io::AsyncBufReadExt;
        RawServer {
            _child: child,
            stdin,
            lines: tokio::io::BufReader::new(stdout).lines(),
            next_id: 0,
        }
    }

    async fn send(&mut self, message: &Value) {
        use tokio::io::AsyncWriteExt;
        let line = format!("{message}\n");
        self.stdin.write_all(line.as_bytes()).await.expect("write");
        self.stdin.flush().await.expect("flush");
    }

    async fn request(&mut self, method: &str, params: Value) -> Value {
        self.next_id += 1;
        let id = self.next_id;
        self.send(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}))
            .await;
        loop {
            let line =
                tokio::time::timeout(std::time::Duration::from_secs(30), self.lines.next_line())
                    .await
                    .expect("an answer within 30 s")
                    .expect("read")
                    .expect("the server closed stdout");
            let message: Value = serde_json::from_str(&line).expect("JSON line");
            if message.get("method").is_none() && message["id"] == json!(id) {
                return message;
            }
        }
    }
}

const TASKS_ERA: &str = "2025-11-25";

fn initialize_params() -> Value {
    json!({"protocolVersion": TASKS_ERA, "capabilities": {"tasks": {}},
           "clientInfo": {"name": "raw", "version": "0"}})
}

/// How long a task of `simulate-research-query` (four stages of 1 s) may take to finish:
/// generous, a bound on a hang, not a timing assertion.
const TASK_WAIT: std::time::Duration = std::time::Duration::from_secs(120);

/// The tool named `name` in a `tools/list` answer, whole as it was listed.
fn listed_tool(listed: &Value, name: &str) -> Value {
    listed["result"]["tools"]
        .as_array()
        .and_then(|tools| tools.iter().find(|t| t["name"] == name))
        .cloned()
        .unwrap_or_else(|| panic!("{name} not listed: {listed}"))
}

/// A task-augmented call of server-everything's `simulate-research-query`, through mcp-defer.
fn research_call() -> Value {
    json!({"name": "everything__simulate-research-query",
           "arguments": {"topic": "tides"}, "task": {"ttl": 60000}})
}

/// Creates a research task with `ask` (a JSON-RPC request, its whole answer back), follows
/// it with `tasks/get` until it ends (bounded by TASK_WAIT, nothing asserted on how long it
/// took), checks it completed with the tool's own result, and returns the task's id as the
/// client knows it and `tasks/result`'s answer.
async fn run_research_task(mut ask: impl AsyncFnMut(&str, Value) -> Value) -> (Value, Value) {
    let created = ask("tools/call", research_call()).await;
    let task_id = created["result"]["task"]["taskId"].clone();
    assert!(
        task_id
            .as_str()
            .is_some_and(|id| id.starts_with("everything:")),
        "a task is created: {created}"
    );
    let status = poll(TASK_WAIT, async || {
        let got = ask("tasks/get", json!({"taskId": task_id})).await;
        assert_eq!(got["result"]["taskId"], task_id, "{got}");
        let status = got["result"]["status"]
            .as_str()
            .unwrap_or_default()
            .to_owned();
        if status != "working" {
            Ok(status)
        } else {
            Err(status)
        }
    })
    .await
    .unwrap_or_else(|status| status);
    assert_eq!(status, "completed");
    let result = ask("tasks/result", json!({"taskId": task_id})).await;
    assert!(
        crate::support::raw::result_text(&result).contains("Research Report: tides"),
        "the tool's own result: {result}"
    );
    (task_id, result)
}

/// `select_tools` of server-everything's research tool (a task tool) through `raw`.
async fn select_research_tool(raw: &mut crate::support::raw::RawClient) -> Value {
    let names = json!({"names": ["everything__simulate-research-query"]});
    raw.request(
        "tools/call",
        json!({"name": "select_tools", "arguments": names}),
    )
    .await
}

/// Issue 24 item 7: server-everything's `simulate-research-query` is a 2025-11-25 task tool
/// (`execution.taskSupport: "required"`). Through mcp-defer it works as it does directly:
/// a 2025-11-25 client is offered `tasks`, sees the tool's `execution`, a call with `task`
/// creates a task (named `everything:<id>`), `tasks/get` follows it to `completed`,
/// `tasks/result` gives the tool's result, `tasks/list` lists it and `tasks/cancel`
/// cancels another. docs/design.md section 12 says so.
#[tokio::test]
async fn a_2025_11_25_task_tool_runs_as_a_task_through_mcp_defer() {
    let Some(peers) = peers() else { return };
    let mut direct = RawServer::spawn(&peers.everything, &["stdio"]);
    let init = direct.request("initialize", initialize_params()).await;
    let direct_tasks = init["result"]["capabilities"]["tasks"].clone();
    assert!(direct_tasks.is_object(), "{init}");
    direct
        .send(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}))
        .await;
    let listed = direct.request("tools/list", json!({})).await;
    let tool = listed_tool(&listed, "simulate-research-query");
    assert_eq!(
        tool["execution"],
        json!({"taskSupport": "required"}),
        "{tool}"
    );

    let setup = Dir::new();
    let config = setup.config(&format!(
        "[mcp_servers.everything]\ncommand = {:?}\nargs = [\"stdio\"]\nstartup_timeout_sec = 30\n",
        peers.everything
    ));
    let mut raw = crate::support::raw::RawClient::start(&config);
    let init = raw.request("initialize", initialize_params()).await;
    assert_eq!(
        init["result"]["capabilities"]["tasks"],
        json!({"list": {}, "cancel": {}, "requests": {"tools": {"call": {}}}}),
        "{init}"
    );
    raw.send(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}))
        .await;
    let selected = select_research_tool(&mut raw).await;
    assert_eq!(
        selected["result"]["structuredContent"]["schemas"][0]["execution"], tool["execution"],
        "select_tools returns the schema as listed: {selected}"
    );
    let listed = raw.request("tools/list", json!({})).await;
    let through = listed_tool(&listed, "everything__simulate-research-query");
    assert_eq!(through["execution"], tool["execution"], "{through}");

    let (task_id, result) =
        run_research_task(async |method: &str, params: Value| raw.request(method, params).await)
            .await;
    assert_eq!(
        result["result"]["_meta"]["io.modelcontextprotocol/related-task"]["taskId"], task_id,
        "{result}"
    );
    // The server's status notifications reach the client, the task named as it knows it.
    let is_status =
        |m: &Value| m["method"] == "notifications/tasks/status" && m["params"]["taskId"] == task_id;
    while !raw.received.iter().any(is_status) {
        raw.next_within(TASK_WAIT)
            .await
            .unwrap_or_else(|| panic!("no notifications/tasks/status for {task_id}"));
    }
    let tasks = raw.request("tasks/list", json!({})).await;
    assert!(
        tasks["result"]["tasks"]
            .as_array()
            .is_some_and(|tasks| tasks.iter().any(|t| t["taskId"] == task_id)),
        "{tasks}"
    );

    let second = raw.request("tools/call", research_call()).await;
    let second_id = second["result"]["task"]["taskId"].clone();
    assert!(second_id.is_string(), "{second}");
    let cancelled = raw
        .request("tasks/cancel", json!({"taskId": second_id}))
        .await;
    assert_eq!(
        cancelled["result"]["status"],
        json!("cancelled"),
        "{cancelled}"
    );
    assert_eq!(cancelled["result"]["taskId"], second_id, "{cancelled}");

    let unknown = raw.request("tasks/get", json!({"taskId": "nowhere"})).await;
    assert_eq!(unknown["error"]["code"], json!(-32602), "{unknown}");
    raw.close().await;
}

/// The same through an HTTP downstream server (server-everything over Streamable HTTP,
/// which answers in SSE streams): its tool is listed with `execution.taskSupport`, a
/// task-augmented call creates `<server>:<id>`, `tasks/get` sees it end and `tasks/result`
/// returns the tool's result. rmcp's HTTP transport would decode these answers and drop
/// their 2025-11-25 fields (`http_raw.rs`).
#[tokio::test]
async fn a_2025_11_25_task_tool_of_an_http_server_runs_as_a_task() {
    let Some(peers) = peers() else { return };
    let port = crate::support::free_port();
    let _server = peers.http_everything(port);
    let setup = Dir::new();
    let config = setup.config(&format!(
        "[mcp_servers.everything]\nurl = \"http://127.0.0.1:{port}/mcp\"\nstartup_timeout_sec = 30\n"
    ));
    let mut raw = crate::support::raw::RawClient::start(&config);
    let init = raw.request("initialize", initialize_params()).await;
    assert!(
        init["result"]["capabilities"]["tasks"].is_object(),
        "{init}"
    );
    raw.send(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}))
        .await;
    let selected = select_research_tool(&mut raw).await;
    assert_eq!(
        selected["result"]["structuredContent"]["schemas"][0]["execution"],
        json!({"taskSupport": "required"}),
        "select_tools returns the schema as the HTTP server lists it: {selected}"
    );
    let listed = raw.request("tools/list", json!({})).await;
    let through = listed_tool(&listed, "everything__simulate-research-query");
    assert_eq!(
        through["execution"],
        json!({"taskSupport": "required"}),
        "{through}"
    );

    let (task_id, result) =
        run_research_task(async |method: &str, params: Value| raw.request(method, params).await)
            .await;
    assert_eq!(
        result["result"]["_meta"]["io.modelcontextprotocol/related-task"]["taskId"], task_id,
        "{result}"
    );
}

/// The same task over `serve --http` (docs/design.md section 12): a 2025-11-25 session is
/// offered `tasks`, sees `execution`, creates a task, polls it to `completed`, reads its
/// result, lists and cancels; another session, sharing the one connection to the server,
/// neither lists nor reaches that session's tasks.
#[tokio::test]
async fn a_2025_11_25_task_runs_over_http_and_stays_in_its_session() {
    use crate::support::http::{Server, post, result_of};
    let Some(peers) = peers() else { return };
    let (_dir, server) = Server::serving(&format!(
        "[mcp_servers.everything]\ncommand = {:?}\nargs = [\"stdio\"]\nstartup_timeout_sec = 30\n",
        peers.everything
    ));
    let client = reqwest::Client::new();
    let open = || async {
        let init = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize",
                          "params": initialize_params()});
        let (status, session, body) = post(&client, &server.url, &[], &init).await;
        assert_eq!(status, 200, "{body}");
        assert_eq!(
            result_of(&body, 1)["capabilities"]["tasks"],
            json!({"list": {}, "cancel": {}, "requests": {"tools": {"call": {}}}}),
            "{body}"
        );
        let session = session.unwrap_or_else(|| panic!("no Mcp-Session-Id: {body}"));
        let initialized = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
        let headers = [
            ("mcp-session-id", session.as_str()),
            ("mcp-protocol-version", TASKS_ERA),
        ];
        post(&client, &server.url, &headers, &initialized).await;
        session
    };
    let session = open().await;
    let headers = [
        ("mcp-session-id", session.as_str()),
        ("mcp-protocol-version", TASKS_ERA),
    ];
    let mut id = 1;
    let mut ask = async |method: &str, params: Value| {
        id += 1;
        let request = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
        let (_, _, body) = post(&client, &server.url, &headers, &request).await;
        body.lines()
            .map(|l| l.strip_prefix("data: ").unwrap_or(l))
            .filter_map(|l| serde_json::from_str::<Value>(l).ok())
            .find(|m| m["id"] == id)
            .unwrap_or_else(|| panic!("no answer to {method}: {body}"))
    };
    let selected = ask(
        "tools/call",
        json!({"name": "select_tools",
               "arguments": {"names": ["everything__simulate-research-query"]}}),
    )
    .await;
    assert_eq!(
        selected["result"]["structuredContent"]["schemas"][0]["execution"],
        json!({"taskSupport": "required"}),
        "{selected}"
    );
    let listed = ask("tools/list", json!({})).await;
    let tool = listed_tool(&listed, "everything__simulate-research-query");
    assert_eq!(
        tool["execution"],
        json!({"taskSupport": "required"}),
        "{tool}"
    );
    assert_eq!(
        tool["_meta"].get(mcp_defer::exposure::EXTRA_KEY),
        None,
        "{tool}"
    );

    let (task_id, _) = run_research_task(&mut ask).await;
    let tasks = ask("tasks/list", json!({})).await;
    assert!(
        tasks["result"]["tasks"]
            .as_array()
            .is_some_and(|tasks| tasks.iter().any(|t| t["taskId"] == task_id)),
        "{tasks}"
    );
    let second = ask("tools/call", research_call()).await;
    let second_id = second["result"]["task"]["taskId"].clone();
    let cancelled = ask("tasks/cancel", json!({"taskId": second_id})).await;
    assert_eq!(
        cancelled["result"]["status"],
        json!("cancelled"),
        "{cancelled}"
    );

    // Another client's session shares the connection to the server, not its tasks.
    let other = open().await;
    let other_headers = [
        ("mcp-session-id", other.as_str()),
        ("mcp-protocol-version", TASKS_ERA),
    ];
    let get = json!({"jsonrpc": "2.0", "id": 2, "method": "tasks/get",
                     "params": {"taskId": task_id}});
    let (_, _, body) = post(&client, &server.url, &other_headers, &get).await;
    assert!(
        body.contains("-32602"),
        "another session's task is unknown: {body}"
    );
    let list = json!({"jsonrpc": "2.0", "id": 3, "method": "tasks/list", "params": {}});
    let (_, _, body) = post(&client, &server.url, &other_headers, &list).await;
    assert_eq!(result_of(&body, 3)["tasks"], json!([]), "{body}");
}

/// MCP Apps: a tool's `_meta.ui` (its `resourceUri`) and the `ui://` resource it names
/// arrive as the server gives them, through the rmcp fixture.
#[tokio::test]
async fn mcp_apps_ui_metadata_and_ui_resources_arrive_unchanged() {
    let setup = Dir::new();
    let ui = json!({"resourceUri": "ui://fx/app.html", "visibility": ["model", "app"]});
    let tools = json!([{
        "name": "show",
        "description": "Show the app.",
        "inputSchema": {"type": "object"},
        "_meta": {"ui": ui, "vendor/key": 7}
    }]);
    let tools_file = setup.file("tools.json");
    std::fs::write(&tools_file, tools.to_string()).expect("write tools");
    let config = setup.config(&crate::support::fixture(
        "fx",
        &[
            "--tools",
            &tools_file.to_string_lossy(),
            "--resource",
            "ui://fx/app.html",
        ],
        "",
    ));
    let mut raw = crate::support::raw::RawClient::legacy(&config).await;
    let selected = raw
        .request(
            "tools/call",
            json!({"name": "select_tools", "arguments": {"names": ["fx__show"]}}),
        )
        .await;
    assert!(selected.get("result").is_some(), "{selected}");
    let listed = raw.request("tools/list", json!({})).await;
    let show = listed_tool(&listed, "fx__show");
    assert_eq!(show["_meta"]["ui"], ui, "{show}");
    assert_eq!(show["_meta"]["vendor/key"], json!(7), "{show}");
    let resources = raw.request("resources/list", json!({})).await;
    assert!(
        resources["result"]["resources"]
            .as_array()
            .is_some_and(|r| r.iter().any(|r| r["uri"] == "ui://fx/app.html")),
        "{resources}"
    );
    let read = raw
        .request("resources/read", json!({"uri": "ui://fx/app.html"}))
        .await;
    assert_eq!(
        read["result"]["contents"][0]["uri"], "ui://fx/app.html",
        "{read}"
    );
    raw.no_strays().await;
    raw.close().await;
}

#[test]
fn clock_times_are_masked_and_nothing_else() {
    assert_eq!(
        masked("Resource 2: created at 1:01:49 AM, id 12:3, é 23:59:59"),
        "Resource 2: created at H:MM:SS AM, id 12:3, é H:MM:SS"
    );
}
