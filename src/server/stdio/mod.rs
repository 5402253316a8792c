//! The client's stdio, framed by us: every line the client sends gets exactly one answer.
//!
//! rmcp's stdio transport drops a line it cannot decode (a lone surrogate, invalid UTF-8,
//! deep nesting, trailing junk, an over-long line) without answering, so the client waits
//! forever; and its `-32600` for invalid JSON-RPC carries no id. This transport reads the
//! lines itself ([`crate::lines`]), answers what is broken (`-32700` with the request's id
//! when it can be read, else `id: null`; `-32600` for valid JSON that is not JSON-RPC, with
//! its id; `-32602` for a known method with malformed params) and hands rmcp only valid
//! messages. It also ends the session when the client stops reading (stdout broken pipe)
//! instead of writing into the void, and refuses a request whose id is still in use by an
//! unanswered one (rmcp would run both and answer only one).
//!
//! A 2025-11-25 task request (a `tools/call` with `task`, `tasks/*`) is handed to rmcp as a
//! custom request with its params as written, and a 2025-11-25 `initialize` answer gets
//! the `tasks` capability: rmcp has neither shape (`tasks.rs`).
//!
//! A `tools/list` answer is written from the exposed list's bytes ([`ToolLists`]): each
//! listed tool was serialized once when it was appended, and here its text is copied into
//! the answer, never parsed or serialized again per request.
//!
//! A plain `tools/call` skips rmcp's decoding and service loop: read as one typed shape and
//! handed to the handler's dispatch on a task of its own (`server/thin_calls.rs`, the thin call path).
//!
//! Here: the transport (ids in flight, the writer task); `judge.rs` decides what a line is
//! and answers a broken one, `tool_lists.rs` splices the listed bytes into `tools/list`,
//! `server/thin_calls.rs` runs plain calls.

use std::collections::HashSet;
use std::io;

use rmcp::RoleServer;
use rmcp::model::{ClientJsonRpcMessage, ClientNotification, ErrorCode, JsonRpcMessage, RequestId};
use rmcp::service::{RxJsonRpcMessage, TxJsonRpcMessage};
use serde_json::Value;
use tokio::io::{AsyncBufRead, AsyncWrite, AsyncWriteExt};
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use super::reused_ids::ReusedIds;
use crate::lines::{Line, LineReader};

mod judge;
mod tool_lists;

use super::thin_calls::Calls;
use judge::{Verdict, error_reply, judge};
pub(super) use tool_lists::ToolLists;
use tool_lists::encode;

/// The rmcp transport over `reader` (the client's stdin) and `writer` (its stdout).
pub(super) struct Framed<R> {
    reader: LineReader<R>,
    lists: ToolLists,
    /// Plain `tools/call`s, run past rmcp's loop.
    calls: Calls,
    out: mpsc::UnboundedSender<Vec<u8>>,
    /// Cancelled when stdout breaks: the session is over.
    gone: CancellationToken,
    /// Ids of the client's requests not answered yet (nor cancelled by the client).
    in_flight: HashSet<RequestId>,
    /// A request reusing a cancelled id goes to rmcp under an alias.
    reused: ReusedIds,
}

/// Why a message could not be sent to the client.
#[derive(Debug, thiserror::Error)]
pub(super) enum FramedError {
    #[error("the client stopped reading")]
    Closed,
    #[error("cannot encode a message: {0}")]
    Encode(#[from] serde_json::Error),
}

impl<R: AsyncBufRead + Unpin + Send + 'static> Framed<R> {
    /// Frames `reader`/`writer` with lines of at most `max` bytes; `tools/list` answers
    /// take their tools from `lists`, plain calls go to `calls`. The writer runs on its own
    /// task, so a slow client never blocks a handler.
    pub(super) fn new<W: AsyncWrite + Unpin + Send + 'static>(
        reader: R,
        writer: W,
        max: usize,
        lists: ToolLists,
        calls: Calls,
    ) -> Self {
        let (out, lines) = mpsc::unbounded_channel();
        let gone = CancellationToken::new();
        tokio::spawn(write_lines(writer, lines, gone.clone()));
        Framed {
            reader: LineReader::new(reader, max),
            lists,
            calls,
            out,
            gone,
            in_flight: HashSet::new(),
            reused: ReusedIds::default(),
        }
    }

    /// Tracks the ids of requests in flight. Returns the message to pass on, or `None` when
    /// it reuses the id of a request still in flight, which this answers itself.
    fn admit(&mut self, message: ClientJsonRpcMessage) -> Option<ClientJsonRpcMessage> {
        match &message {
            JsonRpcMessage::Request(request)
                if self.calls.is_running(&request.id)
                    || !self.in_flight.insert(request.id.clone()) =>
            {
                self.answer(error_reply(
                    Some(request.id.clone()),
                    ErrorCode::INVALID_REQUEST,
                    format!(
                        "Invalid request: the id {} is in use by a request that has not been \
                         answered yet; give each request in flight its own id",
                        request.id
                    ),
                ));
                return None;
            }
            // A request the client cancelled is not answered: its id is free again.
            JsonRpcMessage::Notification(notification) => {
                if let ClientNotification::CancelledNotification(cancelled) =
                    &notification.notification
                    && let Some(id) = &cancelled.params.request_id
                {
                    self.in_flight.remove(id);
                    self.lists.take(id);
                    self.calls.cancel(id);
                }
            }
            _ => {}
        }
        let mut message = message;
        self.reused.inbound(&mut message);
        Some(message)
    }

    fn answer(&self, reply: Value) {
        let mut bytes = reply.to_string().into_bytes();
        bytes.push(b'\n');
        let _ = self.out.send(bytes);
    }
}

async fn write_lines<W: AsyncWrite + Unpin>(
    mut writer: W,
    mut lines: mpsc::UnboundedReceiver<Vec<u8>>,
    gone: CancellationToken,
) {
    while let Some(line) = lines.recv().await {
        let written = async {
            writer.write_all(&line).await?;
            writer.flush().await
        };
        if let Err(err) = written.await {
            if err.kind() == io::ErrorKind::BrokenPipe {
                tracing::info!("the client closed its end of stdout; ending the session");
            } else {
                tracing::warn!(error = %err, "cannot write to the client; ending the session");
            }
            gone.cancel();
            return;
        }
    }
}

impl<R: AsyncBufRead + Unpin + Send + 'static> rmcp::transport::Transport<RoleServer>
    for Framed<R>
{
    type Error = FramedError;

    fn send(
        &mut self,
        mut item: TxJsonRpcMessage<RoleServer>,
    ) -> impl Future<Output = Result<(), Self::Error>> + Send + 'static {
        let mut tools = None;
        match &item {
            JsonRpcMessage::Response(response) => tools = self.lists.take(&response.id),
            JsonRpcMessage::Error(error) => {
                if let Some(id) = &error.id {
                    self.lists.take(id);
                }
            }
            _ => {}
        }
        self.reused.outbound(&mut item);
        match &item {
            JsonRpcMessage::Response(response) => {
                self.in_flight.remove(&response.id);
            }
            JsonRpcMessage::Error(error) => {
                if let Some(id) = &error.id {
                    self.in_flight.remove(id);
                }
            }
            _ => {}
        }
        let encoded = match super::task_wire::offer(&item) {
            Some(bytes) => Ok(bytes),
            None => encode(item, tools),
        };
        let sent = encoded.map_err(FramedError::from).and_then(|mut bytes| {
            bytes.push(b'\n');
            if self.gone.is_cancelled() {
                return Err(FramedError::Closed);
            }
            self.out.send(bytes).map_err(|_| FramedError::Closed)
        });
        std::future::ready(sent)
    }

    async fn receive(&mut self) -> Option<RxJsonRpcMessage<RoleServer>> {
        loop {
            let line = tokio::select! {
                () = self.gone.cancelled() => return None,
                line = self.reader.next() => line,
            };
            let line = match line {
                Ok(Some(line)) => line,
                Ok(None) => return None,
                Err(err) => {
                    tracing::warn!(error = %err, "cannot read from the client; ending the session");
                    return None;
                }
            };
            if let Line::Text(bytes) = &line
                && let Some(call) = self.calls.read(bytes)
            {
                // An id in use goes the general way, which refuses it.
                if !self.in_flight.contains(&call.id) && !self.calls.is_running(&call.id) {
                    self.calls.start(call, self.out.clone());
                    continue;
                }
            }
            match judge(line, self.reader.max()) {
                Verdict::Pass(message) => {
                    if let Some(message) = self.admit(*message) {
                        return Some(message);
                    }
                }
                Verdict::Answer(reply) => self.answer(reply),
                Verdict::Skip => {}
            }
        }
    }

    async fn close(&mut self) -> Result<(), Self::Error> {
        Ok(())
    }
}
