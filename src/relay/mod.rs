//! The session side of the hub (issue 29): `mcp-defer serve` over stdio joins the hub of its
//! user and config ([`join`]: connect, else start it under a lock) and relays the client's
//! lines to it and the hub's back, unchanged. The hub serves each connection as a session of
//! its own over one shared set of servers (`server/hub.rs`).
//!
//! When the hub goes away (killed, crashed), every request it had unanswered gets an answer
//! naming the cause, a new hub is started at once, and the session is taken over: the
//! relay replays the client's `initialize`, `notifications/initialized` and log level, and
//! selects again the tools the client had been listed, so its list stays the one it saw,
//! with tools only appended (DESIGN.md invariant 1); a pending `subscriptions/listen` is
//! sent again as it was. [`memory`] is what the relay remembers for that.
//!
//! Imports `platform` and `lines`, never `server` or `downstream`: the caller (`cli`)
//! decides whether a hub is used at all.

use std::io;
use std::time::Duration;

use serde_json::{Value, json};
use tokio::io::{AsyncWrite, AsyncWriteExt, BufReader};

mod join;
mod memory;
mod place;

pub(crate) use join::{Hub, JoinError};
pub(crate) use place::Place;

use crate::lines::{Line, LineReader, scan_id};
use crate::platform::hub::Channel;
use memory::{Memory, RELAY_ID_PREFIX, Route, listed_names, lost_answer};

/// How long the take-over of a session by a new hub may take: its selections wait for
/// servers to start (their tools come from the tool cache at once when warm).
const RESTORE_TIMEOUT: Duration = Duration::from_secs(60);
/// Attempts after the first to take a session over when the hub reached closes at once.
const TAKE_OVER_RETRIES: u32 = 3;
/// The pause before each, times the attempt: a dying hub's socket is gone within that.
const TAKE_OVER_BACKOFF: Duration = Duration::from_millis(50);
/// Names per `select_tools` call (its limit).
const SELECT_CHUNK: usize = 20;
/// How long the relay waits with nothing to copy before it gives back the pages of the
/// binary its last exchange touched (`platform::trim_resident_set`): a session is idle most
/// of its life (the model thinking, the user reading), and those pages are the hub's too.
/// The next line faults back the few it needs, in well under a millisecond.
const IDLE_TRIM: Duration = Duration::from_secs(5);

/// The hub's side of the relay: its lines, and where ours go.
struct Link {
    reader: LineReader<BufReader<Box<dyn tokio::io::AsyncRead + Send + Unpin>>>,
    writer: Box<dyn AsyncWrite + Send + Unpin>,
}

impl Link {
    fn new(channel: Channel) -> Link {
        Link {
            // The hub is our own user's process and bounds what it sends itself.
            reader: LineReader::new(BufReader::new(channel.reader), usize::MAX),
            writer: channel.writer,
        }
    }

    async fn send(&mut self, line: &[u8]) -> io::Result<()> {
        write_line(&mut self.writer, line).await
    }
}

/// Why the hub could not take the session over.
#[derive(Debug, thiserror::Error)]
enum RestoreError {
    #[error(transparent)]
    Join(#[from] JoinError),
    #[error("the new hub closed the connection")]
    Closed,
    #[error("the new hub did not answer within {} s", RESTORE_TIMEOUT.as_secs())]
    Timeout,
    #[error("{0}")]
    Io(#[from] io::Error),
}

struct Relay<W> {
    hub: Hub,
    out: W,
    memory: Memory,
    next_id: u64,
    max: usize,
}

/// Relays the client's stdin and stdout to the hub through `first` (a connection made by
/// [`Hub::join`]) until the client goes away; lines over `max` bytes are answered here.
///
/// # Errors
/// When the client's stdout cannot be written.
pub(crate) async fn relay(hub: Hub, first: Channel, max: usize) -> io::Result<()> {
    let (stdin, stdout) = crate::platform::client_stdio();
    let mut client = LineReader::new(BufReader::new(stdin), max);
    let mut relay = Relay {
        hub,
        out: stdout,
        memory: Memory::default(),
        next_id: 0,
        max,
    };
    let mut link = Some(Link::new(first));
    // Whether a line went by since the last trim (`cli::hub` trims before the first).
    let mut touched = false;
    loop {
        let event = {
            let from_hub = async {
                match link.as_mut() {
                    Some(link) => link.reader.next().await,
                    None => std::future::pending().await,
                }
            };
            // Both reads are cancel-safe (`LineReader`): the one that loses keeps its part.
            tokio::select! {
                line = client.next() => Event::Client(line),
                line = from_hub => Event::Hub(line),
                () = tokio::time::sleep(IDLE_TRIM), if touched => Event::Idle,
            }
        };
        touched = !matches!(event, Event::Idle);
        match event {
            Event::Idle => crate::platform::trim_resident_set(),
            Event::Client(Ok(Some(Line::Text(line)))) => relay.client_line(&mut link, line).await?,
            Event::Client(Ok(Some(Line::TooLong { size, head }))) => {
                relay.too_long(size, &head).await?;
            }
            Event::Client(Ok(None)) => return Ok(()),
            Event::Client(Err(err)) => {
                tracing::warn!(error = %err, "cannot read from the client; ending the session");
                return Ok(());
            }
            Event::Hub(Ok(Some(Line::Text(line)))) => {
                if relay.memory.note_hub(&line) == Route::Forward {
                    relay.write_client(&line).await?;
                }
            }
            Event::Hub(Ok(Some(Line::TooLong { .. }))) => {}
            Event::Hub(Ok(None)) => link = relay.lost("the hub closed the connection").await?,
            Event::Hub(Err(err)) => link = relay.lost(&err.to_string()).await?,
        }
    }
}

/// Writes `line` and its newline in one write (two would be two system calls on a pipe or
/// socket, and the reader woken twice).
async fn write_line(out: &mut (impl AsyncWrite + Unpin + ?Sized), line: &[u8]) -> io::Result<()> {
    let mut framed = Vec::with_capacity(line.len() + 1);
    framed.extend_from_slice(line);
    framed.push(b'\n');
    out.write_all(&framed).await?;
    out.flush().await
}

/// Whether `line` is `notifications/tools/list_changed`.
fn is_tools_changed(line: &[u8]) -> bool {
    serde_json::from_slice::<Value>(line).is_ok_and(|m| {
        m.get("method").and_then(Value::as_str) == Some(crate::protocol::method::TOOLS_LIST_CHANGED)
    })
}

/// What came first: a line of the client's, or of the hub's, or [`IDLE_TRIM`] of neither.
enum Event {
    Client(io::Result<Option<Line>>),
    Hub(io::Result<Option<Line>>),
    Idle,
}

impl<W: AsyncWrite + Unpin> Relay<W> {
    async fn write_client(&mut self, line: &[u8]) -> io::Result<()> {
        write_line(&mut self.out, line).await
    }

    async fn answer(&mut self, answer: &Value) -> io::Result<()> {
        self.write_client(answer.to_string().as_bytes()).await
    }

    /// A client line: noted, then sent to the hub (a new one first when it is gone).
    async fn client_line(&mut self, link: &mut Option<Link>, line: Vec<u8>) -> io::Result<()> {
        self.memory.note_client(&line);
        if link.is_none() {
            match self.take_over().await {
                Ok(new) => *link = Some(new),
                Err(cause) => return self.unanswerable(&cause.to_string()).await,
            }
        }
        let Some(hub) = link.as_mut() else {
            return Ok(());
        };
        if let Err(err) = hub.send(&line).await {
            // The line went nowhere: it is among the requests `lost` answers.
            *link = self.lost(&err.to_string()).await?;
        }
        Ok(())
    }

    /// A line over `max_message_bytes`: answered here, as the hub would.
    async fn too_long(&mut self, size: usize, head: &[u8]) -> io::Result<()> {
        let id = scan_id(head).map_or(Value::Null, |id| {
            serde_json::to_value(id).unwrap_or_default()
        });
        let answer = json!({
            "jsonrpc": "2.0",
            "id": id,
            "error": {"code": -32700, "message": format!(
                "Parse error: the message is {size} bytes, over max_message_bytes ({}); \
                 send a smaller one or raise [settings] max_message_bytes", self.max)},
        });
        self.answer(&answer).await
    }

    /// No hub could take the session: its pending requests are told why.
    async fn unanswerable(&mut self, cause: &str) -> io::Result<()> {
        tracing::warn!(cause, "no hub serves this session");
        for pending in self.memory.take_pending() {
            let answer = lost_answer(&pending, cause);
            self.answer(&answer).await?;
        }
        Ok(())
    }

    /// The hub went away: its unanswered requests are told so, and a new hub takes over.
    /// `None` when none could (the next client line tries again).
    async fn lost(&mut self, cause: &str) -> io::Result<Option<Link>> {
        tracing::warn!(cause, "the hub went away; starting a new one");
        let pending = self.memory.take_pending();
        let mut resend = Vec::new();
        for mut pending in pending {
            match pending.resend.take() {
                Some(line) => resend.push((pending, line)),
                None => {
                    let answer = lost_answer(&pending, cause);
                    self.answer(&answer).await?;
                }
            }
        }
        match self.take_over().await {
            Ok(mut link) => {
                for (mut pending, line) in resend {
                    if link.send(&line).await.is_ok() {
                        pending.resend = Some(line);
                        self.memory.pending.insert(pending.id.to_string(), pending);
                    }
                }
                Ok(Some(link))
            }
            Err(err) => {
                let cause = err.to_string();
                for (pending, _) in resend {
                    let answer = lost_answer(&pending, &cause);
                    self.answer(&answer).await?;
                }
                tracing::warn!(cause, "no new hub yet; the next request tries again");
                Ok(None)
            }
        }
    }

    /// A new hub, given this session as the client had it; tried again when the hub it
    /// reached went away at once (the socket of a hub still dying takes a connection and
    /// resets it).
    async fn take_over(&mut self) -> Result<Link, RestoreError> {
        let mut attempt = 0;
        loop {
            match self.take_over_once().await {
                Err(RestoreError::Closed | RestoreError::Io(_)) if attempt < TAKE_OVER_RETRIES => {
                    attempt += 1;
                    tokio::time::sleep(TAKE_OVER_BACKOFF * attempt).await;
                }
                done => return done,
            }
        }
    }

    async fn take_over_once(&mut self) -> Result<Link, RestoreError> {
        let channel = self.hub.join().await?;
        let mut link = Link::new(channel);
        tokio::time::timeout(RESTORE_TIMEOUT, self.restore(&mut link))
            .await
            .map_err(|_| RestoreError::Timeout)??;
        tracing::info!(
            tools = self.memory.seen.len(),
            "a new hub took the session over"
        );
        Ok(link)
    }

    async fn restore(&mut self, link: &mut Link) -> Result<(), RestoreError> {
        if let Some(initialize) = self.memory.initialize.clone() {
            self.ask(link, initialize).await?;
            if let Some(initialized) = self.memory.initialized.clone() {
                link.send(&initialized).await?;
            }
        }
        if let Some(level) = self.memory.set_level.clone() {
            self.ask(link, level).await?;
        }
        if self.memory.seen.is_empty() {
            return Ok(());
        }
        let list = json!({"jsonrpc": "2.0", "method": "tools/list", "params": {}});
        let listed = listed_names(&self.ask(link, list.clone()).await?);
        let missing: Vec<String> = (self.memory.seen.iter())
            .filter(|name| !listed.contains(name))
            .cloned()
            .collect();
        for names in missing.chunks(SELECT_CHUNK) {
            self.select_again(link, names).await?;
        }
        let now = listed_names(&self.ask(link, list).await?);
        if !now.starts_with(&self.memory.seen) {
            tracing::warn!(
                before = self.memory.seen.len(),
                now = now.len(),
                "the new hub lists this session's tools in another order"
            );
        }
        if now.len() > self.memory.seen.len() {
            // Tools arrived that the client has not seen: it lists again when told.
            let changed = json!({"jsonrpc": "2.0", "method": "notifications/tools/list_changed"});
            self.answer(&changed).await?;
        }
        Ok(())
    }

    /// `select_tools` of `names` on the new hub. It holds its answer until the client lists
    /// after the list_changed it sends, so the relay lists when told, as a client does. The
    /// list_changed is not passed on: the client's list is the one it had.
    async fn select_again(
        &mut self,
        link: &mut Link,
        names: &[String],
    ) -> Result<(), RestoreError> {
        let select = json!({"jsonrpc": "2.0", "method": "tools/call", "params": {
            "name": "select_tools", "arguments": {"names": names}}});
        let list = json!({"jsonrpc": "2.0", "method": "tools/list", "params": {}});
        let select_id = self.send_ours(link, select).await?;
        let mut listed = false;
        loop {
            let line = match link.reader.next().await? {
                Some(Line::Text(line)) => line,
                Some(Line::TooLong { .. }) => continue,
                None => return Err(RestoreError::Closed),
            };
            if !listed && is_tools_changed(&line) {
                listed = true;
                // Its answer is the relay's own and goes nowhere (`Route::Ours`).
                self.send_ours(link, list.clone()).await?;
                continue;
            }
            match self.memory.note_hub(&line) {
                Route::Ours(ours) if ours == select_id => return Ok(()),
                Route::Ours(_) => {}
                Route::Forward => self.write_client(&line).await?,
            }
        }
    }

    /// Sends `request` under a relay id and waits for its answer.
    async fn ask(&mut self, link: &mut Link, request: Value) -> Result<Value, RestoreError> {
        let id = self.send_ours(link, request).await?;
        self.await_ours(link, &id).await
    }

    async fn send_ours(
        &mut self,
        link: &mut Link,
        mut request: Value,
    ) -> Result<String, RestoreError> {
        self.next_id += 1;
        let id = format!("{RELAY_ID_PREFIX}{}", self.next_id);
        request["id"] = Value::String(id.clone());
        link.send(request.to_string().as_bytes()).await?;
        Ok(id)
    }

    /// Reads the hub until the answer to `id`; what else comes on the way goes to the client.
    async fn await_ours(&mut self, link: &mut Link, id: &str) -> Result<Value, RestoreError> {
        loop {
            let line = match link.reader.next().await? {
                Some(Line::Text(line)) => line,
                Some(Line::TooLong { .. }) => continue,
                None => return Err(RestoreError::Closed),
            };
            match self.memory.note_hub(&line) {
                Route::Ours(ours) if ours == id => {
                    return Ok(serde_json::from_slice(&line).unwrap_or_default());
                }
                Route::Ours(_) => {}
                Route::Forward => self.write_client(&line).await?,
            }
        }
    }
}
