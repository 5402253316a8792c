//! 2025-11-25 tasks (SEP-1686) through mcp-defer: a task-augmented `tools/call` goes to the
//! tool's server with its `task`, and `tasks/get`, `tasks/result`, `tasks/cancel` go to the
//! server that made the task; `tasks/list` gathers every connected server's tasks.
//!
//! rmcp 3.11 knows none of these shapes (its tasks are the 2026-07-28 SEP-2663 ones, its
//! `CallToolRequestParams` has no `task`), so each request reaches the handler as rmcp's
//! `CustomRequest` with the client's method and params as written (`stdio/` frames them
//! so, [`as_custom`](super::task_wire::as_custom); over HTTP the gate renames the method, `http/tasks.rs`), and each
//! answer leaves as `CustomResult`, the server's JSON with only task ids changed. The
//! `tasks` capability is added to a 2025-11-25 `initialize` answer on the same wire
//! ([`offer`](super::task_wire::offer), `http/tasks.rs`): rmcp's `ServerCapabilities` has no field for it.
//!
//! Over HTTP many clients share one connection to each server, so one task space on it: a
//! session reaches only the tasks it created ([`Tasks`](super::task_wire::Tasks)); over stdio the one client
//! reaches every task. Status notifications reach the stdio client only (they are
//! optional in SEP-1686; over HTTP a client polls `tasks/get`).
//!
//! A task id is `<server>:<the server's id>` ([`outward`](super::task_wire::outward)): the client's id names the server
//! that holds the task, so `tasks/get` after a reload, for a task listed by `tasks/list`
//! and never created through this session, or from another session routes without a
//! table to keep, expire or lose. Server names have no `:` (config validation), so the
//! first `:` splits it.

use rmcp::model::{CustomRequest, CustomResult, ErrorCode};
use rmcp::service::RequestContext;
use rmcp::{ErrorData as McpError, RoleServer};
use serde_json::{Value, json};

use super::forwarded::downstream_error;
use super::shared::Shared;
use super::task_wire::{RELATED_TASK, TASK_METHOD_PREFIX, Tasks, inward, rename};
use super::{meta, route};
use crate::downstream::tasks::TASK_METHODS;
use crate::downstream::{DownstreamError, ServerHandle};

/// The most `tasks/list` pages read from one server for one client `tasks/list`.
const MAX_LIST_PAGES: usize = 100;

/// A task request of the session whose tasks are `mine`.
struct Asked<'a> {
    shared: &'a Shared,
    mine: &'a Tasks,
}

/// Answers a task request ([`as_custom`](super::task_wire::as_custom)) of the session whose tasks are `mine`; `None`
/// for any other custom method.
pub(super) async fn answer(
    shared: &Shared,
    mine: &Tasks,
    request: &CustomRequest,
    context: &RequestContext<RoleServer>,
) -> Option<Result<CustomResult, McpError>> {
    Asked { shared, mine }.answer(request, context).await
}

impl Asked<'_> {
    async fn answer(
        &self,
        request: &CustomRequest,
        context: &RequestContext<RoleServer>,
    ) -> Option<Result<CustomResult, McpError>> {
        let method = request.method.as_str();
        let method = method.strip_prefix(TASK_METHOD_PREFIX).unwrap_or(method);
        let params = request.params.clone().unwrap_or_else(|| json!({}));
        let answer = match method {
            "tools/call" => self.task_call(params, context).await,
            "tasks/list" => Ok(self.task_list(context).await),
            method if TASK_METHODS.contains(&method) => {
                self.task_method(method, params, context).await
            }
            _ => return None,
        };
        Some(answer.map(CustomResult))
    }

    /// A task-augmented `tools/call`: the server's answer (its `CreateTaskResult`, or the
    /// plain result of a server that ignored `task`) with the task's id made ours.
    async fn task_call(
        &self,
        mut params: Value,
        context: &RequestContext<RoleServer>,
    ) -> Result<Value, McpError> {
        let name = params
            .get("name")
            .and_then(Value::as_str)
            .ok_or_else(|| McpError::invalid_params("tools/call needs a `name`", None))?;
        let name = meta::clean_name(name)
            .map_err(|err| McpError::invalid_params(err.to_string(), None))?
            .to_owned();
        if meta::MetaTool::from_name(&name).is_some() {
            // SEP-1686: a tool without `taskSupport` called as a task is -32601.
            return Err(McpError::new(
                ErrorCode::METHOD_NOT_FOUND,
                format!("{name} does not run as a task; call it without `task`"),
                None,
            ));
        }
        let entry = route::entry_waiting(self.shared, &name)
            .await
            .and_then(|id| {
                let catalog = self.shared.registry().catalog();
                let entry = catalog.get(id).filter(|e| !e.gone)?;
                Some((entry.server_index, entry.original_name().to_owned()))
            });
        let Some((server, original)) = entry else {
            let message = self.shared.unknown_message(&name).await;
            return Err(McpError::invalid_params(message, None));
        };
        let Some(handle) = self.shared.handle(server) else {
            return Err(McpError::invalid_params("Unknown server.", None));
        };
        set(&mut params, "name", original);
        let mut answer = match handle
            .forward("tools/call", Some(params), context.ct.clone())
            .await
        {
            Ok(answer) => answer,
            Err(err @ DownstreamError::Service { code: Some(_), .. }) => {
                return Err(downstream_error(err));
            }
            // What went wrong on the way is a result naming the server, as for any call
            // (DESIGN.md invariant 4).
            Err(err) => {
                let result =
                    meta::error_result(crate::redact::redact(&err.to_string()).into_owned());
                return Ok(serde_json::to_value(result).unwrap_or_default());
            }
        };
        if let Some(id) = answer.pointer_mut("/task/taskId") {
            rename(id, handle.name());
            if let Value::String(id) = id {
                self.mine.insert(id.clone());
            }
        }
        Ok(answer)
    }

    /// `tasks/get`, `tasks/result` or `tasks/cancel`, sent to the task's server under its
    /// own id; the answer names the task by our id again.
    async fn task_method(
        &self,
        method: &str,
        mut params: Value,
        context: &RequestContext<RoleServer>,
    ) -> Result<Value, McpError> {
        let ours = params
            .get("taskId")
            .and_then(Value::as_str)
            .ok_or_else(|| McpError::invalid_params(format!("{method} needs a `taskId`"), None))?
            .to_owned();
        // What the errors echo of the id: a caller's id may be any length.
        let shown = crate::printable::excerpt(&ours);
        let unknown = || {
            McpError::invalid_params(
                format!(
                    "Unknown task {shown:?}: mcp-defer names each task `<server>:<id>`; \
                     take the id from the task's CreateTaskResult or tasks/list"
                ),
                None,
            )
        };
        if !self.sees_task(&ours) {
            return Err(unknown());
        }
        let (server, theirs) = inward(&ours).ok_or_else(unknown)?;
        let handle = self.handle_named(server).ok_or_else(unknown)?;
        if !handle.is_connected() {
            return Err(McpError::invalid_params(
                format!(
                    "Unknown task {shown:?}: server '{server}' is not running now, and its \
                     tasks ended with it"
                ),
                None,
            ));
        }
        set(&mut params, "taskId", theirs.to_owned());
        let mut answer = handle
            .forward(method, Some(params), context.ct.clone())
            .await
            .map_err(downstream_error)?;
        if let Some(id) = answer.get_mut("taskId") {
            rename(id, server);
        }
        if let Some(id) = answer
            .get_mut("_meta")
            .and_then(|m| m.get_mut(RELATED_TASK))
            .and_then(|t| t.get_mut("taskId"))
        {
            rename(id, server);
        }
        Ok(answer)
    }

    /// Every connected server's tasks, each server's pages read to the end, in server
    /// order. A server without `tasks/list` (it answers an error) has none to show.
    async fn task_list(&self, context: &RequestContext<RoleServer>) -> Value {
        let mut tasks = Vec::new();
        for handle in self.shared.handles().iter().filter(|h| h.is_connected()) {
            let mut cursor: Option<Value> = None;
            for _ in 0..MAX_LIST_PAGES {
                let params = match &cursor {
                    Some(cursor) => json!({"cursor": cursor}),
                    None => json!({}),
                };
                let page = match handle
                    .forward("tasks/list", Some(params), context.ct.clone())
                    .await
                {
                    Ok(page) => page,
                    Err(err) => {
                        tracing::debug!(server = handle.name(), error = %err, "no tasks/list");
                        break;
                    }
                };
                if let Some(Value::Array(page_tasks)) = page.get("tasks") {
                    for task in page_tasks {
                        let mut task = task.clone();
                        if let Some(id) = task.get_mut("taskId") {
                            rename(id, handle.name());
                        }
                        if task["taskId"].as_str().is_some_and(|id| self.sees_task(id)) {
                            tasks.push(task);
                        }
                    }
                }
                cursor = page.get("nextCursor").filter(|c| !c.is_null()).cloned();
                if cursor.is_none() {
                    break;
                }
            }
        }
        json!({"tasks": tasks})
    }

    /// Whether this session may reach the task `ours`: over stdio, every task (one
    /// client); over HTTP, where many clients share one connection to each server (and so
    /// one task space on it), only the tasks this session created.
    fn sees_task(&self, ours: &str) -> bool {
        self.shared.client().one_client() || self.mine.contains(ours)
    }

    fn handle_named(&self, name: &str) -> Option<ServerHandle> {
        self.shared
            .handles()
            .iter()
            .find(|h| h.name() == name)
            .cloned()
    }
}

/// Sets `key` of the params object `params` (checked to be one by the caller's `get`).
fn set(params: &mut Value, key: &str, value: String) {
    if let Some(object) = params.as_object_mut() {
        object.insert(key.to_owned(), Value::String(value));
    }
}
