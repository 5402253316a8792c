//! `mcp-defer-fixture`: a real MCP stdio server whose faults are chosen by flags.
//!
//! The integration tests aggregate several of these at once to exercise what real servers
//! do wrong: start slowly, die at start with a message, print junk on stdout, paginate,
//! fork grandchildren, crash mid-call, change their tool list. It can also serve prompts and
//! resources, so tests can put two servers' prompts and resources side by side. Its
//! `ServerHandler` is written by hand, like ours, so the order is exactly the order given.

use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use clap::Parser;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock as Content,
    GetPromptRequestParams, GetPromptResponse, GetPromptResult, Implementation, JsonObject,
    ListPromptsResult, ListResourcesResult, ListToolsResult, PaginatedRequestParams,
    ProgressNotificationParam, Prompt, PromptArgument, PromptMessage, PromptsCapability,
    ReadResourceRequestParams, ReadResourceResponse, ReadResourceResult, Resource,
    ResourceContents, ResourcesCapability, Role, ServerCapabilities, ServerConfig, Tool,
};
#[expect(
    deprecated,
    reason = "acting a pre-2026-07-28 server that logs over MCP"
)]
use rmcp::model::{LoggingLevel, LoggingMessageNotificationParam, SetLevelRequestParams};
use rmcp::service::{RequestContext, RoleServer};
use rmcp::{ErrorData, ServerHandler, ServiceExt};
use serde_json::{Value, json};

#[derive(Debug, Parser)]
#[command(
    name = "mcp-defer-fixture",
    about = "An MCP test server with faults chosen by flags"
)]
struct Args {
    /// A JSON array of Tool objects to serve instead of the defaults.
    #[arg(long, value_name = "PATH")]
    tools: Option<PathBuf>,
    /// The server name announced in the handshake.
    #[arg(long, default_value = "fixture")]
    name: String,
    /// The `instructions` of the handshake.
    #[arg(long, value_name = "TEXT")]
    instructions: Option<String>,
    /// Sleep this long before serving.
    #[arg(long, value_name = "N", default_value_t = 0)]
    slow_start_ms: u64,
    /// Write MESSAGE to stderr and exit with `--exit-code` before serving.
    #[arg(long, value_name = "MESSAGE")]
    fail_start: Option<String>,
    #[arg(long, value_name = "N", default_value_t = 1)]
    exit_code: i32,
    /// Print lines that are not JSON on stdout before serving.
    #[arg(long)]
    garbage_stdout: bool,
    /// Answer tools/list in pages of N tools, linked by nextCursor.
    #[arg(long, value_name = "N")]
    page_size: Option<usize>,
    /// Spawn a long `sleep` grandchild and write our pid and its pid to PATH, one a line.
    #[arg(long, value_name = "PATH")]
    grandchild_pid_file: Option<PathBuf>,
    /// Log a few lines to stderr while starting and on each call.
    #[arg(long)]
    stderr_chatter: bool,
    /// Send TEXT as a `notifications/message` (level warning, logger `fixture`) before
    /// answering each tools/list, declaring the `logging` capability. Sent first on the same
    /// pipe, so the client has it before the list.
    #[arg(long, value_name = "TEXT")]
    log_before_list: Option<String>,
    /// Also list `log`, which sends `notifications/message` at debug, info, warning and
    /// error (logger `fixture`, data `<level> from <name>`), each only when at or above
    /// the level set with `logging/setLevel` as a real server filters, then answers
    /// `level <set level>` (or `level unset`). Declares `logging`. With `--ask-tool`,
    /// `ask` also logs each answer it gets.
    #[arg(long)]
    log_tool: bool,
    /// `echo` also returns the `_meta` of the request as it arrived, under `"_meta"`: what
    /// a proxy forwarded, for the tests to read.
    #[arg(long)]
    echo_meta: bool,
    /// Serve a prompt named NAME (repeatable), with one required argument `topic`; declares
    /// `prompts` and adds the tool `drop-prompt`.
    #[arg(long = "prompt", value_name = "NAME")]
    prompts: Vec<String>,
    /// Serve a text resource at URI (repeatable) whose text names this server; declares
    /// `resources`.
    #[arg(long = "resource", value_name = "URI")]
    resources: Vec<String>,
    /// Also list `ask`, which sends its client the requests named in `asks` (`sampling`,
    /// `elicitation`, `url-elicitation`, `roots`) one after another, whatever the client
    /// declared, and returns each answer or error.
    #[arg(long)]
    ask_tool: bool,
    /// Print every environment variable to stderr as `NAME=value` before anything else,
    /// as a careless server might: what mcp-defer passes on, and what its log must redact.
    #[arg(long)]
    print_env: bool,
    /// Skip rmcp and speak raw JSON-RPC lines: answer `tools/list` with this JSON verbatim
    /// (`{"tools": [...]}` as the result, or `{"error": {...}}` as the error), to act servers
    /// that send what rmcp's types would refuse.
    #[arg(long, value_name = "JSON")]
    raw_list: Option<String>,
    /// In raw mode, answer every `tools/call` with one text of N bytes.
    #[arg(long, value_name = "N", default_value_t = 16)]
    raw_call_bytes: usize,
    /// In raw mode, close stdout after answering `tools/list` and keep running (ignoring
    /// stdin's end), as a server whose output pipe broke would.
    #[arg(long)]
    raw_close_stdout: bool,
    /// Also list `big`, whose result is as large as asked: `chars` characters of text (with
    /// two-byte characters in it), `items` items in `structuredContent`, `images` images,
    /// `links` resource links with descriptions of `link_chars` characters.
    #[arg(long)]
    big_tool: bool,
    /// Serve Streamable HTTP at http://ADDR/mcp (one session per client) instead of stdio:
    /// the direct reference of the HTTP benchmark. Prints `listening on URL` to stderr.
    #[arg(long, value_name = "ADDR")]
    http: Option<std::net::SocketAddr>,
}

fn big_tool() -> Value {
    json!({
        "name": "big",
        "description": "Return a result of the requested size: text, structured items and images.",
        "inputSchema": {
            "type": "object",
            "properties": {
                "chars": {"type": "integer", "minimum": 0},
                "items": {"type": "integer", "minimum": 0},
                "images": {"type": "integer", "minimum": 0},
                "links": {"type": "integer", "minimum": 0},
                "link_chars": {"type": "integer", "minimum": 0}
            }
        }
    })
}

/// The result of `big`: "héllo " repeated to `chars` characters, `items` objects, and
/// `images` blocks of 4000 base64 characters each.
fn big_result(args: &JsonObject) -> CallToolResult {
    let count = |key: &str| args.get(key).and_then(Value::as_u64).unwrap_or(0) as usize;
    let text: String = "héllo ".chars().cycle().take(count("chars")).collect();
    let items: Vec<Value> = (0..count("items"))
        .map(|i| json!({"id": i, "name": format!("item {i}")}))
        .collect();
    let mut content = vec![Content::text(text)];
    for _ in 0..count("images") {
        content.push(Content::image("iVBORw0K".repeat(500), "image/png"));
    }
    for i in 0..count("links") {
        let mut link =
            rmcp::model::Resource::new(format!("file:///big/{i}.txt"), format!("{i}.txt"));
        link.mime_type = Some("text/plain".to_owned());
        link.description = Some("d".repeat(count("link_chars")));
        content.push(Content::resource_link(link));
    }
    let mut result = CallToolResult::success(content);
    result.structured_content = Some(json!({"count": items.len(), "items": items}));
    result
}

fn ask_tool() -> Value {
    json!({
        "name": "ask",
        "description": "Send the client each request named in asks, in order, and return the answers.",
        "inputSchema": {
            "type": "object",
            "properties": {"asks": {"type": "array", "items": {"type": "string", "enum": ["sampling", "elicitation", "url-elicitation", "roots"]}}},
            "required": ["asks"]
        }
    })
}

/// Sends the client one request of the kind `what` and describes the answer.
/// With `--log-tool`, `ask` logs each answer (at error, logger `fixture`, data `<what>
/// answered`): for a 2026-07-28 client, after its retry.
#[expect(
    deprecated,
    reason = "acting a pre-2026-07-28 server that logs over MCP"
)]
async fn log_answered(context: &RequestContext<RoleServer>, what: &str) {
    let data = json!(format!("{what} answered"));
    let mut message = LoggingMessageNotificationParam::new(LoggingLevel::Error, data);
    message.logger = Some("fixture".to_owned());
    let _ = context.peer.notify_logging_message(message).await;
}

async fn ask(context: &RequestContext<RoleServer>, what: &str) -> Value {
    let request = match what {
        "sampling" => json!({"method": "sampling/createMessage", "params": {
            "messages": [{"role": "user", "content": {"type": "text", "text": "fixture asks for a sample"}}],
            "maxTokens": 10
        }}),
        "elicitation" => json!({"method": "elicitation/create", "params": {
            "mode": "form",
            "message": "fixture asks for a name",
            "requestedSchema": {"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]}
        }}),
        "url-elicitation" => json!({"method": "elicitation/create", "params": {
            "mode": "url", "message": "fixture asks to open a page",
            "url": "https://example.com/fixture", "elicitationId": "fixture-1"
        }}),
        _ => json!({"method": "roots/list"}),
    };
    let request: rmcp::model::ServerRequest = match serde_json::from_value(request) {
        Ok(request) => request,
        Err(err) => return json!({"error": err.to_string()}),
    };
    match context.peer.send_request(request).await {
        Ok(answer) => json!({ "answer": answer }),
        Err(rmcp::ServiceError::McpError(err)) => json!({"error": err.message}),
        Err(err) => json!({"error": err.to_string()}),
    }
}

fn default_tools() -> Value {
    json!([
        {
            "name": "echo",
            "description": "Echo the given arguments back unchanged.\nUseful for checking that a tool call reaches the server and what arguments arrived.",
            "inputSchema": {"type": "object", "additionalProperties": true}
        },
        {
            "name": "add",
            "description": "Add two numbers and return their sum.",
            "inputSchema": {
                "type": "object",
                "properties": {
                    "a": {"type": "number", "description": "The first addend"},
                    "b": {"type": "number", "description": "The second addend"}
                },
                "required": ["a", "b"]
            }
        },
        {
            "name": "sleep",
            "description": "Wait for the given number of milliseconds, reporting progress while waiting. Stops early when the call is cancelled.",
            "inputSchema": {
                "type": "object",
                "properties": {"ms": {"type": "integer", "minimum": 0, "description": "How long to wait"}},
                "required": ["ms"]
            }
        },
        {
            "name": "crash",
            "description": "Terminate the server process immediately, in the middle of the call, with exit code 3.",
            "inputSchema": {"type": "object"}
        },
        {
            "name": "grow",
            "description": "Add a new tool with the given name to this server's tool list (or redefine it, when it exists) and announce the change.",
            "inputSchema": {
                "type": "object",
                "properties": {
                    "name": {"type": "string", "description": "Name of the tool to add"},
                    "description": {"type": "string", "description": "Its description"}
                },
                "required": ["name"]
            }
        },
        {
            "name": "shrink",
            "description": "Remove the tool with the given name from this server's tool list and announce the change.",
            "inputSchema": {
                "type": "object",
                "properties": {"name": {"type": "string", "description": "Name of the tool to remove"}},
                "required": ["name"]
            }
        },
        {
            "name": "fail",
            "description": "Always fail: returns an error result explaining that the operation could not be completed.",
            "inputSchema": {"type": "object"}
        }
    ])
}

struct Fixture {
    name: String,
    instructions: Option<String>,
    page_size: Option<usize>,
    chatter: bool,
    log_before_list: Option<String>,
    /// Set by `logging/setLevel`; `None` until then (everything is sent).
    #[expect(
        deprecated,
        reason = "acting a pre-2026-07-28 server that logs over MCP"
    )]
    log_level: Mutex<Option<LoggingLevel>>,
    log_tool: bool,
    echo_meta: bool,
    tools: Mutex<Vec<Tool>>,
    prompts: Mutex<Vec<String>>,
    /// Whether `prompts` was declared (it stays declared when the last prompt is dropped).
    serves_prompts: bool,
    resources: Vec<String>,
}

impl Fixture {
    /// The `log` tool (see `--log-tool`).
    #[expect(
        deprecated,
        reason = "acting a pre-2026-07-28 server that logs over MCP"
    )]
    async fn log_each_level(&self, context: &RequestContext<RoleServer>) -> CallToolResult {
        let level = self.log_level.lock().ok().and_then(|l| *l);
        for at in [
            LoggingLevel::Debug,
            LoggingLevel::Info,
            LoggingLevel::Warning,
            LoggingLevel::Error,
        ] {
            if level.is_none_or(|least| severity(at) >= severity(least)) {
                let data = json!(format!("{} from {}", level_name(at), self.name));
                let mut message = LoggingMessageNotificationParam::new(at, data);
                message.logger = Some("fixture".to_owned());
                let _ = context.peer.notify_logging_message(message).await;
            }
        }
        let set = level.map_or("unset", level_name);
        CallToolResult::success(vec![Content::text(format!("level {set}"))])
    }

    fn snapshot(&self) -> Vec<Tool> {
        self.tools.lock().map(|t| t.clone()).unwrap_or_default()
    }
}

fn text_and_structured(text: String, structured: Value) -> CallToolResult {
    let mut result = CallToolResult::success(vec![Content::text(text)]);
    result.structured_content = Some(structured);
    result
}

impl ServerHandler for Fixture {
    fn get_info(&self) -> ServerConfig {
        let mut capabilities = ServerCapabilities::builder()
            .enable_tools()
            .enable_tool_list_changed()
            .build();
        if self.log_before_list.is_some() || self.log_tool {
            capabilities.logging = Some(JsonObject::new());
        }
        if self.serves_prompts {
            let mut prompts = PromptsCapability::default();
            prompts.list_changed = Some(true);
            capabilities.prompts = Some(prompts);
        }
        if !self.resources.is_empty() {
            capabilities.resources = Some(ResourcesCapability::default());
        }
        let mut info = ServerConfig::new(capabilities)
            .with_server_info(Implementation::new(self.name.clone(), "0.0.0"));
        if let Some(text) = &self.instructions {
            info = info.with_instructions(text.clone());
        }
        info
    }

    async fn list_tools(
        &self,
        request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        if let Some(text) = &self.log_before_list {
            log_warning(&context, text).await;
        }
        let tools = self.snapshot();
        let Some(size) = self.page_size.filter(|s| *s > 0) else {
            return Ok(ListToolsResult::with_all_items(tools));
        };
        let start = match request.and_then(|r| r.cursor) {
            Some(cursor) => cursor
                .parse::<usize>()
                .map_err(|_| ErrorData::invalid_params("bad cursor", None))?,
            None => 0,
        };
        let end = (start + size).min(tools.len());
        let mut page = ListToolsResult::with_all_items(tools[start.min(end)..end].to_vec());
        if end < tools.len() {
            page.next_cursor = Some(end.to_string());
        }
        Ok(page)
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        if self.chatter {
            eprintln!("fixture {}: call {}", self.name, request.name);
        }
        let args = request.arguments.clone().unwrap_or_default();
        let number = |key: &str| {
            args.get(key)
                .and_then(Value::as_f64)
                .ok_or_else(|| ErrorData::invalid_params(format!("{key} must be a number"), None))
        };
        let name_arg = || {
            args.get("name")
                .and_then(Value::as_str)
                .map(str::to_owned)
                .ok_or_else(|| ErrorData::invalid_params("name must be a string", None))
        };
        let result = match request.name.as_ref() {
            "log" if self.log_tool => self.log_each_level(&context).await,
            "echo" => {
                let mut value = args.clone();
                if self.echo_meta {
                    value.insert("_meta".into(), json!(context.meta));
                }
                let value = Value::Object(value);
                text_and_structured(value.to_string(), value)
            }
            "add" => {
                let sum = number("a")? + number("b")?;
                text_and_structured(sum.to_string(), json!({ "sum": sum }))
            }
            "sleep" => {
                let ms = args.get("ms").and_then(Value::as_u64).unwrap_or(0);
                let token = context.meta.get_progress_token();
                let steps = 10u32;
                let step = Duration::from_millis(ms) / steps;
                for i in 1..=steps {
                    tokio::select! {
                        () = context.ct.cancelled() => {
                            eprintln!("fixture {}: sleep cancelled", self.name);
                            return Ok(CallToolResult::error(vec![Content::text("cancelled")]).into());
                        }
                        () = tokio::time::sleep(step) => {}
                    }
                    if let Some(token) = &token {
                        let mut progress =
                            ProgressNotificationParam::new(token.clone(), f64::from(i));
                        progress.total = Some(f64::from(steps));
                        let _ = context.peer.notify_progress(progress).await;
                    }
                }
                CallToolResult::success(vec![Content::text(format!("slept {ms} ms"))])
            }
            "crash" => {
                eprintln!("fixture {}: crashing on request", self.name);
                std::process::exit(3);
            }
            "grow" | "shrink" => {
                let name = name_arg()?;
                let grow = request.name == "grow";
                if let Ok(mut tools) = self.tools.lock() {
                    if grow {
                        let description =
                            args.get("description").and_then(Value::as_str).map_or_else(
                                || {
                                    format!(
                                        "A tool named {name}, added while the server was running."
                                    )
                                },
                                str::to_owned,
                            );
                        let tool: Tool = serde_json::from_value(json!({
                            "name": name,
                            "description": description,
                            "inputSchema": {"type": "object"}
                        }))
                        .map_err(|e| ErrorData::internal_error(e.to_string(), None))?;
                        match tools.iter_mut().find(|t| t.name == tool.name) {
                            Some(existing) => *existing = tool,
                            None => tools.push(tool),
                        }
                    } else {
                        tools.retain(|t| t.name != name);
                    }
                }
                let _ = context.peer.notify_tool_list_changed().await;
                let verb = if grow { "added" } else { "removed" };
                CallToolResult::success(vec![Content::text(format!("{verb} {name}"))])
            }
            "big" => big_result(&args),
            "ask" => {
                let asks: Vec<String> = args
                    .get("asks")
                    .and_then(|v| serde_json::from_value(v.clone()).ok())
                    .unwrap_or_default();
                let mut answers = Vec::new();
                for what in &asks {
                    answers.push(ask(&context, what).await);
                    if self.log_tool {
                        log_answered(&context, what).await;
                    }
                }
                let answers = Value::Array(answers);
                text_and_structured(answers.to_string(), json!({ "answers": answers }))
            }
            "fail" => {
                CallToolResult::error(vec![Content::text("the operation could not be completed")])
            }
            "drop-prompt" => {
                let name = name_arg()?;
                if let Ok(mut prompts) = self.prompts.lock() {
                    prompts.retain(|p| *p != name);
                }
                let _ = context.peer.notify_prompt_list_changed().await;
                CallToolResult::success(vec![Content::text(format!("dropped prompt {name}"))])
            }
            other => {
                if self.snapshot().iter().any(|t| t.name == other) {
                    CallToolResult::success(vec![Content::text(format!("{other} called"))])
                } else {
                    return Err(ErrorData::invalid_params(
                        format!("unknown tool {other}"),
                        None,
                    ));
                }
            }
        };
        Ok(result.into())
    }
}

impl Fixture {
    fn prompt_list(&self) -> ListPromptsResult {
        let names = self.prompts.lock().map(|p| p.clone()).unwrap_or_default();
        let prompts = names
            .into_iter()
            .map(|name| {
                let mut topic = PromptArgument::new("topic");
                topic.description = Some("What the prompt is about".to_owned());
                topic.required = Some(true);
                Prompt::new(
                    name.clone(),
                    Some(format!("The {name} prompt of {}", self.name)),
                    Some(vec![topic]),
                )
            })
            .collect();
        ListPromptsResult::with_all_items(prompts)
    }

    fn prompt(&self, request: &GetPromptRequestParams) -> Result<GetPromptResult, ErrorData> {
        let known = self.prompts.lock().is_ok_and(|p| p.contains(&request.name));
        if !known {
            return Err(ErrorData::invalid_params(
                format!("unknown prompt {}", request.name),
                None,
            ));
        }
        let topic = request
            .arguments
            .as_ref()
            .and_then(|a| a.get("topic"))
            .and_then(Value::as_str)
            .unwrap_or("nothing");
        let text = format!("{} about {topic}, from {}", request.name, self.name);
        Ok(GetPromptResult::new(vec![PromptMessage::new_text(
            Role::User,
            text,
        )]))
    }

    fn resource(&self, uri: &str) -> Result<ReadResourceResult, ErrorData> {
        if !self.resources.iter().any(|r| r == uri) {
            return Err(ErrorData::resource_not_found(
                format!("unknown resource {uri}"),
                None,
            ));
        }
        Ok(ReadResourceResult::new(vec![ResourceContents::text(
            format!("{uri} served by {}", self.name),
            uri,
        )]))
    }
}

fn spawn_grandchild(path: &PathBuf) -> std::io::Result<std::process::Child> {
    let child = std::process::Command::new("sleep")
        .arg("1000")
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()?;
    std::fs::write(path, format!("{}\n{}\n", std::process::id(), child.id()))?;
    Ok(child)
}

#[tokio::main]
async fn main() -> std::process::ExitCode {
    let args = Args::parse();
    if args.print_env {
        for (name, value) in std::env::vars_os() {
            eprintln!("{}={}", name.to_string_lossy(), value.to_string_lossy());
        }
    }
    if let Some(list) = &args.raw_list {
        return raw_server(list, args.raw_call_bytes, args.raw_close_stdout);
    }
    if args.stderr_chatter {
        eprintln!("fixture {}: starting", args.name);
        eprintln!("fixture {}: loading configuration", args.name);
    }
    if let Some(message) = &args.fail_start {
        eprintln!("{message}");
        std::process::exit(args.exit_code);
    }
    // Kept alive (not waited on) so the grandchild outlives nothing but us.
    let _grandchild = match &args.grandchild_pid_file {
        Some(path) => match spawn_grandchild(path) {
            Ok(child) => Some(child),
            Err(err) => {
                eprintln!("fixture: cannot spawn grandchild: {err}");
                return std::process::ExitCode::from(1);
            }
        },
        None => None,
    };
    if args.slow_start_ms > 0 {
        tokio::time::sleep(Duration::from_millis(args.slow_start_ms)).await;
    }
    if args.garbage_stdout {
        println!("this is not JSON-RPC");
        println!("Server starting... {{ not json either");
    }
    let tools_json = match &args.tools {
        Some(path) => match std::fs::read_to_string(path)
            .map_err(|e| e.to_string())
            .and_then(|t| serde_json::from_str::<Value>(&t).map_err(|e| e.to_string()))
        {
            Ok(value) => value,
            Err(err) => {
                eprintln!("fixture: cannot read tools from {}: {err}", path.display());
                return std::process::ExitCode::from(1);
            }
        },
        None => default_tools(),
    };
    let tools_json = match tools_json {
        Value::Array(mut tools) if args.ask_tool || args.big_tool || args.log_tool => {
            if args.log_tool {
                tools.push(log_tool());
            }
            if args.ask_tool {
                tools.push(ask_tool());
            }
            if args.big_tool {
                tools.push(big_tool());
            }
            Value::Array(tools)
        }
        other => other,
    };
    let tools: Vec<Tool> = match serde_json::from_value(tools_json) {
        Ok(tools) => tools,
        Err(err) => {
            eprintln!("fixture: tools must be a JSON array of Tool objects: {err}");
            return std::process::ExitCode::from(1);
        }
    };
    if args.stderr_chatter {
        eprintln!("fixture {}: serving {} tools", args.name, tools.len());
    }
    let mut tools = tools;
    if !args.prompts.is_empty() {
        let drop: Tool = match serde_json::from_value(json!({
            "name": "drop-prompt",
            "description": "Remove the prompt with the given name from this server's prompt list and announce the change.",
            "inputSchema": {
                "type": "object",
                "properties": {"name": {"type": "string", "description": "Name of the prompt to remove"}},
                "required": ["name"]
            }
        })) {
            Ok(tool) => tool,
            Err(err) => {
                eprintln!("fixture: drop-prompt definition: {err}");
                return std::process::ExitCode::from(1);
            }
        };
        tools.push(drop);
    }
    let fixture = Fixture {
        serves_prompts: !args.prompts.is_empty(),
        prompts: Mutex::new(args.prompts),
        resources: args.resources,
        name: args.name,
        instructions: args.instructions,
        page_size: args.page_size,
        chatter: args.stderr_chatter,
        log_before_list: args.log_before_list,
        log_level: Mutex::new(None),
        log_tool: args.log_tool,
        echo_meta: args.echo_meta,
        tools: Mutex::new(tools),
    };
    let fixture = Arc::new(fixture);
    if let Some(addr) = args.http {
        return serve_http(fixture, addr).await;
    }
    match ArcHandler(fixture).serve(rmcp::transport::stdio()).await {
        Ok(running) => {
            let _ = running.waiting().await;
            std::process::ExitCode::SUCCESS
        }
        Err(err) => {
            eprintln!("fixture: handshake failed: {err}");
            std::process::ExitCode::from(1)
        }
    }
}

/// `--http ADDR`: the same handler over rmcp's Streamable HTTP server transport.
async fn serve_http(fixture: Arc<Fixture>, addr: std::net::SocketAddr) -> std::process::ExitCode {
    use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
    use rmcp::transport::streamable_http_server::{
        StreamableHttpServerConfig, StreamableHttpService,
    };
    let service = StreamableHttpService::new(
        move || Ok(ArcHandler(fixture.clone())),
        Arc::new(LocalSessionManager::default()),
        StreamableHttpServerConfig::default(),
    );
    let listener = match tokio::net::TcpListener::bind(addr).await {
        Ok(listener) => listener,
        Err(err) => {
            eprintln!("fixture: cannot listen on {addr}: {err}");
            return std::process::ExitCode::from(1);
        }
    };
    let bound = listener.local_addr().unwrap_or(addr);
    eprintln!("listening on http://{bound}/mcp");
    let app = axum::Router::new().route_service("/mcp", service);
    match axum::serve(listener, app).await {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(err) => {
            eprintln!("fixture: {err}");
            std::process::ExitCode::from(1)
        }
    }
}

/// The raw mode of `--raw-list`: one JSON-RPC answer per request line, written by hand.
fn raw_server(list: &str, call_bytes: usize, close_stdout: bool) -> std::process::ExitCode {
    use std::io::{BufRead, Write};
    let list: Value = match serde_json::from_str(list) {
        Ok(list) => list,
        Err(err) => {
            eprintln!("fixture: --raw-list is not JSON: {err}");
            return std::process::ExitCode::from(1);
        }
    };
    let stdin = std::io::stdin();
    let mut stdout = std::io::stdout().lock();
    for line in stdin.lock().lines() {
        let Ok(line) = line else { break };
        let Ok(request) = serde_json::from_str::<Value>(&line) else {
            continue;
        };
        let Some(id) = request.get("id").cloned() else {
            continue;
        };
        let answer = match request["method"].as_str().unwrap_or_default() {
            "initialize" => json!({"jsonrpc": "2.0", "id": id, "result": {
                "protocolVersion": request["params"]["protocolVersion"].clone(),
                "capabilities": {"tools": {}},
                "serverInfo": {"name": "raw-fixture", "version": "0"}
            }}),
            "tools/list" => match list.get("error") {
                Some(error) => json!({"jsonrpc": "2.0", "id": id, "error": error}),
                None => json!({"jsonrpc": "2.0", "id": id, "result": list}),
            },
            "tools/call" => json!({"jsonrpc": "2.0", "id": id, "result": {
                "content": [{"type": "text", "text": "x".repeat(call_bytes)}]
            }}),
            _ => json!({"jsonrpc": "2.0", "id": id, "result": {}}),
        };
        if writeln!(stdout, "{answer}")
            .and_then(|()| stdout.flush())
            .is_err()
        {
            break;
        }
        if close_stdout && request["method"] == "tools/list" {
            // Nothing writes to stdout after this.
            mcp_defer::platform::close_stdout();
            std::thread::sleep(Duration::from_secs(1000));
        }
    }
    std::process::ExitCode::SUCCESS
}

#[expect(
    deprecated,
    reason = "acting a pre-2026-07-28 server that logs over MCP"
)]
async fn log_warning(context: &RequestContext<RoleServer>, text: &str) {
    let mut message = LoggingMessageNotificationParam::new(LoggingLevel::Warning, json!(text));
    message.logger = Some("fixture".to_owned());
    let _ = context.peer.notify_logging_message(message).await;
}

fn log_tool() -> Value {
    json!({
        "name": "log",
        "description": "Send a log message at each of debug, info, warning and error, as the client's level allows.",
        "inputSchema": {"type": "object"}
    })
}

/// RFC 5424 order: debug is the least severe.
#[expect(
    deprecated,
    reason = "acting a pre-2026-07-28 server that logs over MCP"
)]
fn severity(level: LoggingLevel) -> u8 {
    level as u8
}

#[expect(
    deprecated,
    reason = "acting a pre-2026-07-28 server that logs over MCP"
)]
fn level_name(level: LoggingLevel) -> &'static str {
    match level {
        LoggingLevel::Debug => "debug",
        LoggingLevel::Info => "info",
        LoggingLevel::Notice => "notice",
        LoggingLevel::Warning => "warning",
        LoggingLevel::Error => "error",
        LoggingLevel::Critical => "critical",
        LoggingLevel::Alert => "alert",
        LoggingLevel::Emergency => "emergency",
    }
}

/// rmcp wants the handler by value; the state is shared with nothing else, but an `Arc`
/// keeps `Fixture` free of `Clone` bounds.
struct ArcHandler(Arc<Fixture>);

impl ServerHandler for ArcHandler {
    fn get_info(&self) -> ServerConfig {
        self.0.get_info()
    }

    async fn list_tools(
        &self,
        request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        self.0.list_tools(request, context).await
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        self.0.call_tool(request, context).await
    }

    #[expect(
        deprecated,
        reason = "acting a pre-2026-07-28 server that logs over MCP"
    )]
    async fn set_level(
        &self,
        request: SetLevelRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        if let Ok(mut level) = self.0.log_level.lock() {
            *level = Some(request.level);
        }
        Ok(())
    }

    async fn list_prompts(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListPromptsResult, ErrorData> {
        Ok(self.0.prompt_list())
    }

    async fn get_prompt(
        &self,
        request: GetPromptRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<GetPromptResponse, ErrorData> {
        self.0.prompt(&request).map(Into::into)
    }

    async fn list_resources(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, ErrorData> {
        let resources = (self.0.resources.iter())
            .map(|uri| Resource::new(uri.clone(), uri.clone()))
            .collect();
        Ok(ListResourcesResult::with_all_items(resources))
    }

    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, ErrorData> {
        self.0.resource(&request.uri).map(Into::into)
    }
}
