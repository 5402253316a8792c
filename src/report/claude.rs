//! Claude Code transcripts (`~/.claude/projects/<project>/<session>.jsonl`): one JSON object
//! per line. What is read:
//! - `assistant` lines: `message.usage` (`input_tokens`, `cache_read_input_tokens`,
//!   `cache_creation_input_tokens`, `output_tokens`). One API response is often written as
//!   several lines (one per content block) with the same `message.id`: counted once.
//!   `isSidechain` lines (subagents, with their own cache) are left out of a main session's
//!   file, and are the session in a subagent's own file; `<synthetic>` messages (local
//!   errors) are left out.
//! - `api-request` / `api-request-shape` lines (Claude Code 2.1.3xx): the tools sent with each
//!   request (`requestRef` -> `shapeHash` -> `shape.tools`). Tools with `defer_loading` are
//!   not in the prompt and are not counted. Older transcripts lack them: tool-schema tokens
//!   are then unknown, and the report says so.
//! - What changes the tool list: `tool_use`/`tool_result` of mcp-defer's `select_tools`,
//!   `tool_reference` blocks (Claude Code's ToolSearch loading schemas), and
//!   `deferred_tools_delta` attachments after the first request (a list_changed reached it).

use std::collections::{BTreeSet, HashMap};

use serde_json::Value;

use super::{
    Client, Request, Session, ToolChange, each_json_line, each_json_line_where, is_meta_tool, num,
};
use crate::tokens;

/// The tools of one request shape: names in the prompt and their tokens.
struct Shape {
    names: Vec<String>,
    tokens: u64,
    /// The serialized tools, to see a change that keeps the names (order, schema).
    bytes: String,
}

/// Parses one transcript, read twice line by line from what `open` gives (the request
/// shapes first, then the requests: a shape may be written after the response that used
/// it); lines that are not JSON are skipped and counted in the notes.
///
/// # Errors
/// When `open` or a read fails.
pub(crate) fn parse<R: std::io::BufRead>(
    path: &str,
    open: impl Fn() -> std::io::Result<R>,
) -> std::io::Result<Session> {
    // Pass 1: the request shapes (tools), which request used which shape, and whether the
    // file has a main chain.
    let mut shapes: HashMap<String, Shape> = HashMap::new();
    let mut request_shape: HashMap<String, String> = HashMap::new();
    // A subagent's own file (`<session>/subagents/agent-*.jsonl`) holds only sidechain
    // lines: there they are the session.
    let mut main_chain = false;
    // Only these kinds of line matter here; a line that names neither cannot be one.
    let wanted = |text: &str| text.contains("api-request") || text.contains("assistant");
    each_json_line_where(open()?, wanted, |line| match line["type"].as_str() {
        Some("api-request-shape") => {
            if let Some(hash) = line["shapeHash"].as_str() {
                shapes.insert(hash.to_owned(), shape(&line["shape"]));
            }
        }
        Some("api-request") => {
            if let (Some(id), Some(hash)) = (line["id"].as_str(), line["shapeHash"].as_str()) {
                request_shape.insert(id.to_owned(), hash.to_owned());
            }
        }
        Some("assistant") if line["isSidechain"].as_bool() != Some(true) => main_chain = true,
        _ => {}
    })?;

    // Pass 2: requests in order, with what changed the tools before each.
    let mut requests = Requests {
        shapes: &shapes,
        request_shape: &request_shape,
        main_chain,
        session: Session {
            client: Client::Claude,
            id: String::new(),
            path: path.to_owned(),
            mcp_defer: false,
            requests: Vec::new(),
            notes: Vec::new(),
        },
        message_index: HashMap::new(),
        select_calls: HashMap::new(),
        pending: Vec::new(),
        previous_tools: None,
        sidechain: 0,
    };
    let bad_lines = each_json_line(open()?, |line| requests.line(&line))?;
    let (mut session, sidechain) = (requests.session, requests.sidechain);
    if session.id.is_empty() {
        session.id = file_stem(path);
    }
    if shapes.is_empty() && !session.requests.is_empty() {
        session.notes.push(
            "this transcript does not record the tools sent (Claude Code before 2.1.3xx): \
             tool-schema tokens unknown"
                .into(),
        );
    }
    if sidechain > 0 {
        session.notes.push(format!(
            "{sidechain} subagent (sidechain) responses left out: they use their own cache"
        ));
    }
    if bad_lines > 0 {
        session
            .notes
            .push(format!("{bad_lines} lines were not JSON and were skipped"));
    }
    Ok(session)
}

/// The second pass: the session as its lines come, with what pass 1 found.
struct Requests<'a> {
    shapes: &'a HashMap<String, Shape>,
    request_shape: &'a HashMap<String, String>,
    main_chain: bool,
    session: Session,
    message_index: HashMap<String, usize>,
    select_calls: HashMap<String, Vec<String>>,
    pending: Vec<ToolChange>,
    previous_tools: Option<&'a Shape>,
    sidechain: usize,
}

impl Requests<'_> {
    fn line(&mut self, line: &Value) {
        let skip = self.main_chain && line["isSidechain"].as_bool() == Some(true);
        let session = &mut self.session;
        if session.id.is_empty()
            && let Some(id) = line["sessionId"].as_str()
        {
            session.id = id.to_owned();
        }
        match line["type"].as_str() {
            Some("assistant") => {
                if skip {
                    self.sidechain += 1;
                    return;
                }
                let message = &line["message"];
                if message["model"].as_str() == Some("<synthetic>") {
                    return;
                }
                note_tool_uses(message, &mut session.mcp_defer, &mut self.select_calls);
                let usage = &message["usage"];
                if !usage.is_object() {
                    return;
                }
                let id = message["id"].as_str().unwrap_or_default().to_owned();
                let request = Request {
                    timestamp: line["timestamp"].as_str().map(str::to_owned),
                    input: num(usage, "input_tokens"),
                    cache_read: num(usage, "cache_read_input_tokens"),
                    cache_write: num(usage, "cache_creation_input_tokens"),
                    output: num(usage, "output_tokens"),
                    tool_tokens: None,
                    changes: Vec::new(),
                    cache_ttl_secs: match line["promptCacheRequested"].as_str() {
                        Some("1h") => Some(3600),
                        Some("5m") => Some(300),
                        _ => None,
                    },
                };
                if let Some(&i) = self.message_index.get(&id).filter(|_| !id.is_empty()) {
                    // A later line of the same response: its usage is the more complete one.
                    let r = &mut session.requests[i];
                    r.output = r.output.max(request.output);
                    return;
                }
                let mut request = request;
                request.changes = std::mem::take(&mut self.pending);
                let used = (line["requestRef"].as_str())
                    .and_then(|r| self.request_shape.get(r))
                    .and_then(|h| self.shapes.get(h));
                if let Some(used) = used {
                    request.tool_tokens = Some(used.tokens);
                    if used.names.iter().any(|n| is_meta_tool(n)) {
                        session.mcp_defer = true;
                    }
                    if let Some(before) = self.previous_tools
                        && before.bytes != used.bytes
                    {
                        let (added, removed) = diff(&before.names, &used.names);
                        request
                            .changes
                            .push(ToolChange::RequestTools { added, removed });
                    }
                    self.previous_tools = Some(used);
                }
                // Only a response that may come again in a later line is remembered.
                if !id.is_empty() {
                    self.message_index.insert(id, session.requests.len());
                }
                session.requests.push(request);
            }
            Some("user") => {
                if skip {
                    return;
                }
                note_tool_results(line, &self.select_calls, &mut self.pending);
            }
            Some("attachment") => {
                let attachment = &line["attachment"];
                if attachment["type"].as_str() != Some("deferred_tools_delta") {
                    return;
                }
                let added = strings(&attachment["addedNames"]);
                let removed = strings(&attachment["removedNames"]);
                if added.iter().any(|n| is_meta_tool(n)) {
                    session.mcp_defer = true;
                }
                // The first delta announces the tools the session starts with.
                if !session.requests.is_empty() && (!added.is_empty() || !removed.is_empty()) {
                    self.pending
                        .push(ToolChange::ListChanged { added, removed });
                }
            }
            _ => {}
        }
    }
}

/// The tools in the prompt of a request shape and their tokens.
fn shape(shape: &Value) -> Shape {
    let mut names = Vec::new();
    let mut bytes = String::new();
    for tool in shape["tools"].as_array().into_iter().flatten() {
        if tool["defer_loading"].as_bool() == Some(true) {
            continue;
        }
        names.push(tool["name"].as_str().unwrap_or_default().to_owned());
        bytes.push_str(&tool.to_string());
    }
    // One pass over the concatenation: the same count as tool by tool, give or take a
    // token at each seam.
    let tokens = tokens::count(&bytes) as u64;
    Shape {
        names,
        tokens,
        bytes,
    }
}

/// Records mcp-defer's meta tools among the tool calls of an assistant message, and the
/// names each `select_tools` call asked for.
fn note_tool_uses(
    message: &Value,
    mcp_defer: &mut bool,
    select_calls: &mut HashMap<String, Vec<String>>,
) {
    for block in message["content"].as_array().into_iter().flatten() {
        if block["type"].as_str() != Some("tool_use") {
            continue;
        }
        let name = block["name"].as_str().unwrap_or_default();
        if name.starts_with("mcp__") && is_meta_tool(name) {
            *mcp_defer = true;
            if name.ends_with("select_tools")
                && let Some(id) = block["id"].as_str()
            {
                select_calls.insert(id.to_owned(), strings(&block["input"]["names"]));
            }
        }
    }
}

/// The tool-list changes a user line carries: answered `select_tools` calls and
/// `tool_reference` blocks (schemas loaded by ToolSearch).
fn note_tool_results(
    line: &Value,
    select_calls: &HashMap<String, Vec<String>>,
    pending: &mut Vec<ToolChange>,
) {
    for block in line["message"]["content"].as_array().into_iter().flatten() {
        if block["type"].as_str() != Some("tool_result") {
            continue;
        }
        if let Some(names) = (block["tool_use_id"].as_str()).and_then(|id| select_calls.get(id)) {
            pending.push(ToolChange::SelectTools {
                names: names.clone(),
            });
        }
        let loaded: Vec<String> = (block["content"].as_array().into_iter().flatten())
            .filter(|b| b["type"].as_str() == Some("tool_reference"))
            .filter_map(|b| b["tool_name"].as_str().map(str::to_owned))
            .collect();
        if !loaded.is_empty() {
            pending.push(ToolChange::NativeLoad { names: loaded });
        }
    }
}

fn strings(value: &Value) -> Vec<String> {
    (value.as_array().into_iter().flatten())
        .filter_map(|v| v.as_str().map(str::to_owned))
        .collect()
}

/// Names added and removed from `before` to `after`, each in `after`'s/`before`'s order.
fn diff(before: &[String], after: &[String]) -> (Vec<String>, Vec<String>) {
    let (b, a): (BTreeSet<&String>, BTreeSet<&String>) =
        (before.iter().collect(), after.iter().collect());
    let added = after.iter().filter(|n| !b.contains(n)).cloned().collect();
    let removed = before.iter().filter(|n| !a.contains(n)).cloned().collect();
    (added, removed)
}

pub(crate) fn file_stem(path: &str) -> String {
    std::path::Path::new(path)
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    // A test fails loudly on broken setup; the crate-wide denial is for the library.
    #![allow(clippy::unwrap_used)]

    use super::*;

    fn assistant(id: &str, sidechain: bool, read: u64) -> String {
        serde_json::json!({
            "type": "assistant", "isSidechain": sidechain, "sessionId": "s",
            "message": {"id": id, "model": "m", "content": [],
                "usage": {"input_tokens": 1, "cache_read_input_tokens": read,
                          "cache_creation_input_tokens": 0, "output_tokens": 1}}
        })
        .to_string()
    }

    #[test]
    fn sidechain_lines_count_only_in_a_subagents_own_file() {
        let main = [assistant("a", false, 10), assistant("b", true, 20)].join("\n");
        let s = parse("main.jsonl", || Ok(main.as_bytes())).unwrap();
        assert_eq!(s.requests.len(), 1);
        assert!(s.notes[1].starts_with("1 subagent"), "{:?}", s.notes);
        let agent = [assistant("c", true, 30), assistant("d", true, 40)].join("\n");
        let s = parse("agent-1.jsonl", || Ok(agent.as_bytes())).unwrap();
        let reads: Vec<u64> = s.requests.iter().map(|r| r.cache_read).collect();
        assert_eq!(reads, [30, 40]);
    }
}
