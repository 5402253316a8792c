//! The rmcp transport over a stdio server's pipes, read with [`crate::lines`]'s bound.
//!
//! rmcp's child-process transport logs an over-long answer ("exceeded the maximum line
//! length") and drops it, so the call waits out its whole `tool_timeout` and then reports
//! a timeout. Here the line is drained, its id read from its head, and rmcp gets an error
//! answer for that id at once, naming the size and the `max_message_bytes` limit. Lines that
//! are not JSON-RPC (a server printing a banner on stdout) are skipped, as rmcp does.
//! Answers to `tools/list` and to task requests are handed on raw (`tasks.rs`): rmcp's
//! decoding would drop their 2025-11-25 fields. Answers to the calls sent around rmcp's
//! loop (`raw_call.rs`) go back to their own task as the line read.

use rmcp::RoleClient;
use rmcp::model::{ErrorCode, ErrorData, JsonRpcError, JsonRpcMessage, ServerJsonRpcMessage};
use rmcp::service::{RxJsonRpcMessage, TxJsonRpcMessage};
use tokio::io::{AsyncWriteExt, BufReader};
use tokio::process::{ChildStdin, ChildStdout};
use tokio::sync::mpsc;

use super::raw_answers::{RawAnswer, RawAnswers, Taken};
use super::raw_call::RawLink;
use crate::lines::{Line, LineReader, repair_surrogates, scan_id};

/// One stdio server's connection.
pub(super) struct ChildTransport {
    reader: LineReader<BufReader<ChildStdout>>,
    /// Lines for the writer task; `None` once closed, which closes the child's stdin.
    out: Option<mpsc::UnboundedSender<Vec<u8>>>,
    /// Requests whose answers are handed on raw (`raw_answers.rs`). Declared after `out`, so it
    /// drops after it: a raw call sent while the transport drops either finds stdin closed
    /// or is failed by this table's drop.
    raw: RawAnswers,
}

/// Why a message could not reach the server.
#[derive(Debug, thiserror::Error)]
pub(super) enum ChildTransportError {
    #[error("the server's stdin is closed")]
    Closed,
    #[error("cannot encode a message: {0}")]
    Encode(#[from] serde_json::Error),
}

impl ChildTransport {
    /// Frames the child's pipes with answers of at most `max` bytes. Writing runs on its own
    /// task, so a server that stops reading never blocks a caller.
    pub(super) fn new(stdin: ChildStdin, stdout: ChildStdout, max: usize) -> ChildTransport {
        let (out, lines) = mpsc::unbounded_channel();
        tokio::spawn(write_lines(stdin, lines));
        ChildTransport {
            reader: LineReader::new(BufReader::new(stdout), max),
            out: Some(out),
            raw: RawAnswers::default(),
        }
    }

    /// The way for a call's task to write to this server and get its answer line back
    /// (`raw_call.rs`). It does not keep the server's stdin open once rmcp closes it.
    pub(super) fn raw_link(&self) -> Option<RawLink> {
        let out = self.out.as_ref()?.downgrade();
        Some(RawLink::new(self.raw.calls(), out))
    }
}

async fn write_lines(mut stdin: ChildStdin, mut lines: mpsc::UnboundedReceiver<Vec<u8>>) {
    while let Some(line) = lines.recv().await {
        if stdin.write_all(&line).await.is_err() || stdin.flush().await.is_err() {
            return;
        }
    }
}

impl rmcp::transport::Transport<RoleClient> for ChildTransport {
    type Error = ChildTransportError;

    fn send(
        &mut self,
        item: TxJsonRpcMessage<RoleClient>,
    ) -> impl Future<Output = Result<(), Self::Error>> + Send + 'static {
        self.raw.note(&item);
        let sent = serde_json::to_vec(&item)
            .map_err(ChildTransportError::from)
            .and_then(|mut bytes| {
                bytes.push(b'\n');
                self.out
                    .as_ref()
                    .ok_or(ChildTransportError::Closed)?
                    .send(bytes)
                    .map_err(|_| ChildTransportError::Closed)
            });
        std::future::ready(sent)
    }

    async fn receive(&mut self) -> Option<RxJsonRpcMessage<RoleClient>> {
        loop {
            let line = match self.reader.next().await {
                Ok(Some(line)) => line,
                Ok(None) => return None,
                Err(err) => {
                    tracing::debug!(error = %err, "cannot read the server's stdout");
                    return None;
                }
            };
            match line {
                Line::Text(bytes) => {
                    let text = String::from_utf8_lossy(&bytes);
                    let text = repair_surrogates(&text);
                    match self.raw.take_line(&text) {
                        Taken::Rmcp(message) => return Some(*message),
                        Taken::Call(call) => {
                            let _ = call.send(RawAnswer::Line(text.into_owned()));
                            continue;
                        }
                        Taken::No => {}
                    }
                    match serde_json::from_str::<ServerJsonRpcMessage>(&text) {
                        Ok(message) => return Some(message),
                        Err(err) if !text.trim().is_empty() => {
                            tracing::debug!(error = %err, "skipping a stdout line that is not JSON-RPC");
                        }
                        Err(_) => {}
                    }
                }
                Line::TooLong { size, head } => {
                    let message = format!(
                        "the server's answer is {size} bytes, over the limit of {} bytes \
                         ([settings] max_message_bytes)",
                        self.reader.max()
                    );
                    let id = scan_id(&head);
                    if let Some(call) = id.as_ref().and_then(|id| self.raw.take_call(id)) {
                        tracing::warn!(
                            size,
                            limit = self.reader.max(),
                            "an answer over the limit; failing its call"
                        );
                        let error = ErrorData::new(ErrorCode::INTERNAL_ERROR, message, None);
                        let _ = call.send(RawAnswer::TooLong(error));
                        continue;
                    }
                    match id {
                        Some(id) => {
                            tracing::warn!(
                                size,
                                limit = self.reader.max(),
                                "an answer over the limit; failing its request"
                            );
                            return Some(JsonRpcMessage::Error(JsonRpcError {
                                jsonrpc: Default::default(),
                                id: Some(id),
                                error: ErrorData::new(ErrorCode::INTERNAL_ERROR, message, None),
                            }));
                        }
                        None => tracing::warn!(
                            size,
                            limit = self.reader.max(),
                            "a message over the limit without a readable id; dropped"
                        ),
                    }
                }
            }
        }
    }

    async fn close(&mut self) -> Result<(), Self::Error> {
        self.out = None;
        Ok(())
    }
}
