//! `mcp-defer report`: what the user's own agent sessions paid for tools and for the prompt
//! cache, read from the transcripts their clients already write (Claude Code's
//! `~/.claude/projects/**/*.jsonl`, Codex's `~/.codex/sessions/**/rollout-*.jsonl`).
//!
//! A pure function of the transcript bytes: it reads the files it is given and sends nothing
//! anywhere. It imports nothing from `server` or `downstream`; [`claude`] and [`codex`] parse
//! one format each into a [`Session`], [`analyse`] finds the cache re-writes, [`render`]
//! prints them (table with sparklines, or JSON).

use serde::Serialize;

pub(crate) mod claude;
pub(crate) mod codex;
pub(crate) mod render;
mod time;

/// A cache loss smaller than this is not called a re-write: providers cache nothing below
/// 1024 tokens (Anthropic's minimum for Sonnet/Opus, OpenAI's automatic caching minimum),
/// so smaller drops are noise from moving breakpoints, not a re-billed prefix.
pub(crate) const MIN_REWRITE_TOKENS: u64 = 1024;

/// How long a cached prefix lives when the transcript does not say: Anthropic's default
/// ephemeral TTL, and the low end of OpenAI's in-memory retention. A re-write after a
/// longer pause may be plain expiry, and is labelled so.
pub(crate) const DEFAULT_CACHE_TTL_SECS: u64 = 5 * 60;

/// Which client wrote a transcript; decides what "cached after a request" means.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub(crate) enum Client {
    /// Anthropic: the prefix up to the last cache breakpoint is cached (read + written).
    Claude,
    /// OpenAI: automatic prefix caching of the whole prompt.
    Codex,
}

impl Client {
    pub(crate) fn name(self) -> &'static str {
        match self {
            Client::Claude => "claude",
            Client::Codex => "codex",
        }
    }
}

/// Something that changed the tools the model sees, seen between two requests.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub(crate) enum ToolChange {
    /// mcp-defer's `select_tools` answered (it appends tools and sends list_changed).
    SelectTools { names: Vec<String> },
    /// The client's own tool search loaded schemas (Claude Code `ToolSearch`, Codex
    /// `tool_search`).
    NativeLoad { names: Vec<String> },
    /// The client was told of added or removed tools after the session started (a server's
    /// list_changed reached it: Claude Code's `deferred_tools_delta`).
    ListChanged {
        added: Vec<String>,
        removed: Vec<String>,
    },
    /// The tools sent with this request differ from those of the previous one (Claude Code
    /// records them per request).
    RequestTools {
        added: Vec<String>,
        removed: Vec<String>,
    },
}

impl ToolChange {
    /// One short phrase for the table.
    pub(crate) fn describe(&self) -> String {
        let list = |names: &[String]| {
            let mut text = names.iter().take(3).cloned().collect::<Vec<_>>().join(", ");
            if names.len() > 3 {
                text.push_str(&format!(" +{}", names.len() - 3));
            }
            text
        };
        match self {
            ToolChange::SelectTools { names } => format!("select_tools [{}]", list(names)),
            ToolChange::NativeLoad { names } => format!("native tool load [{}]", list(names)),
            ToolChange::ListChanged { added, removed } => {
                format!("list_changed (+{} -{})", added.len(), removed.len())
            }
            ToolChange::RequestTools { added, removed } => {
                let mut parts = Vec::new();
                if !added.is_empty() {
                    parts.push(format!("+{}", list(added)));
                }
                if !removed.is_empty() {
                    parts.push(format!("-{}", list(removed)));
                }
                if parts.is_empty() {
                    parts.push("same names; order or schema".into());
                }
                format!("request tools changed ({})", parts.join(" "))
            }
        }
    }
}

/// One model request, as the provider's usage reported it.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub(crate) struct Request {
    /// When the client logged it (RFC 3339), if it did.
    pub timestamp: Option<String>,
    /// Input tokens billed at the full rate: neither read from the cache nor written to it.
    /// (Codex reports input including cached tokens; this is the uncached part.)
    pub input: u64,
    pub cache_read: u64,
    pub cache_write: u64,
    pub output: u64,
    /// Tokens of the tool schemas sent with the request (non-deferred tools, counted with
    /// [`crate::tokens::ENCODING`]); `None` when the transcript does not record them.
    pub tool_tokens: Option<u64>,
    /// What happened to the tool list since the previous request.
    pub changes: Vec<ToolChange>,
    /// The cache lifetime the client asked for, in seconds, if it says.
    #[serde(skip)]
    pub cache_ttl_secs: Option<u64>,
}

impl Request {
    /// Every prompt token of the request.
    pub(crate) fn prompt(&self) -> u64 {
        self.input + self.cache_read + self.cache_write
    }
}

/// One session (one transcript file).
#[derive(Debug, Clone, Serialize)]
pub(crate) struct Session {
    pub client: Client,
    pub id: String,
    pub path: String,
    /// mcp-defer's meta tools were offered or called in this session.
    pub mcp_defer: bool,
    pub requests: Vec<Request>,
    /// What the transcript could not tell (said in the output, never guessed).
    pub notes: Vec<String>,
}

impl Session {
    /// The prefix a caching provider holds after request `i`: Anthropic caches up to the
    /// last breakpoint (what was read plus what was written); OpenAI caches the whole
    /// prompt automatically.
    fn cached_after(&self, i: usize) -> u64 {
        let r = &self.requests[i];
        match self.client {
            Client::Claude => r.cache_read + r.cache_write,
            Client::Codex => r.prompt(),
        }
    }
}

/// A cache re-write: request `request` (1-based) read `lost` fewer tokens from the cache
/// than the previous request of the same session left there, so those tokens were billed
/// again (as a cache write on Anthropic, as uncached input on OpenAI).
///
/// Precisely: with `before` = the previous request's cache read + cache write (Claude) or
/// its whole prompt (Codex), request i is a re-write when `before - cache_read(i) >=`
/// [`MIN_REWRITE_TOKENS`]; `rebilled = before - cache_read(i)`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub(crate) struct Rewrite {
    pub request: usize,
    pub cached_before: u64,
    pub cache_read: u64,
    pub cache_write: u64,
    pub rebilled: u64,
    /// The tool-list changes seen since the previous request (the likely cause).
    pub after: Vec<ToolChange>,
    /// Seconds since the previous request, when both have timestamps.
    pub idle_secs: Option<u64>,
    /// The pause was longer than the cache lifetime: plain expiry is a sufficient cause.
    pub expired: bool,
}

impl Rewrite {
    /// Follows a tool-list change (and not a pause longer than the cache lifetime).
    pub(crate) fn after_tool_change(&self) -> bool {
        !self.after.is_empty() && !self.expired
    }
}

/// Sums over requests, and what the re-writes cost.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub(crate) struct Totals {
    pub sessions: usize,
    pub requests: usize,
    pub input: u64,
    pub cache_read: u64,
    pub cache_write: u64,
    pub output: u64,
    /// Tool-schema tokens summed over the requests that record them (each request carries
    /// its tools again, mostly read from cache).
    pub tool_tokens: u64,
    /// Requests whose tool schemas are unknown.
    pub requests_without_tools: usize,
    pub rewrites: usize,
    pub rebilled: u64,
    pub rewrites_after_tool_change: usize,
    pub rebilled_after_tool_change: u64,
}

impl Totals {
    fn add(&mut self, other: &Totals) {
        self.sessions += other.sessions;
        self.requests += other.requests;
        self.input += other.input;
        self.cache_read += other.cache_read;
        self.cache_write += other.cache_write;
        self.output += other.output;
        self.tool_tokens += other.tool_tokens;
        self.requests_without_tools += other.requests_without_tools;
        self.rewrites += other.rewrites;
        self.rebilled += other.rebilled;
        self.rewrites_after_tool_change += other.rewrites_after_tool_change;
        self.rebilled_after_tool_change += other.rebilled_after_tool_change;
    }
}

/// A session with its re-writes and totals.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct Analysed {
    #[serde(flatten)]
    pub session: Session,
    pub rewrites: Vec<Rewrite>,
    pub totals: Totals,
}

/// Finds the re-writes of `session` (see [`Rewrite`]) and sums it up.
pub(crate) fn analyse(session: Session) -> Analysed {
    let mut rewrites = Vec::new();
    for i in 1..session.requests.len() {
        let (prev, this) = (&session.requests[i - 1], &session.requests[i]);
        let before = session.cached_after(i - 1);
        let lost = before.saturating_sub(this.cache_read);
        if lost < MIN_REWRITE_TOKENS {
            continue;
        }
        let idle_secs = match (&prev.timestamp, &this.timestamp) {
            (Some(a), Some(b)) => time::seconds_between(a, b),
            _ => None,
        };
        let ttl = prev.cache_ttl_secs.unwrap_or(DEFAULT_CACHE_TTL_SECS);
        rewrites.push(Rewrite {
            request: i + 1,
            cached_before: before,
            cache_read: this.cache_read,
            cache_write: this.cache_write,
            rebilled: lost,
            after: this.changes.clone(),
            idle_secs,
            expired: idle_secs.is_some_and(|s| s > ttl),
        });
    }
    let mut totals = Totals {
        sessions: 1,
        requests: session.requests.len(),
        ..Totals::default()
    };
    for r in &session.requests {
        totals.input += r.input;
        totals.cache_read += r.cache_read;
        totals.cache_write += r.cache_write;
        totals.output += r.output;
        match r.tool_tokens {
            Some(t) => totals.tool_tokens += t,
            None => totals.requests_without_tools += 1,
        }
    }
    for w in &rewrites {
        totals.rewrites += 1;
        totals.rebilled += w.rebilled;
        if w.after_tool_change() {
            totals.rewrites_after_tool_change += 1;
            totals.rebilled_after_tool_change += w.rebilled;
        }
    }
    Analysed {
        session,
        rewrites,
        totals,
    }
}

/// The report over many sessions.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct Report {
    /// The encoding tool schemas are counted with.
    pub encoding: &'static str,
    pub sessions: Vec<Analysed>,
    pub total: Totals,
    /// Files that were read but held no model request (summaries, empty sessions).
    pub skipped_files: usize,
}

impl Report {
    /// Analyses `sessions`; those without any request only count as skipped.
    pub(crate) fn new(sessions: Vec<Session>) -> Report {
        let mut total = Totals::default();
        let mut analysed = Vec::new();
        let mut skipped_files = 0;
        for session in sessions {
            if session.requests.is_empty() {
                skipped_files += 1;
                continue;
            }
            let a = analyse(session);
            total.add(&a.totals);
            analysed.push(a);
        }
        Report {
            encoding: crate::tokens::ENCODING,
            sessions: analysed,
            total,
            skipped_files,
        }
    }
}

/// Calls `each` with every line of a JSON-lines transcript that is JSON, one line at a
/// time, and returns how many non-empty lines were not (a transcript cut mid-write, or a
/// line a newer client version changed). Only the line being read is held: a transcript
/// of 500,000 lines held as values took 499 MB (issue 35).
///
/// # Errors
/// When reading fails.
pub(crate) fn each_json_line(
    reader: impl std::io::BufRead,
    each: impl FnMut(serde_json::Value),
) -> std::io::Result<usize> {
    each_json_line_where(reader, |_| true, each)
}

/// [`each_json_line`] over the lines `wanted` keeps, judged on their text before they are
/// parsed (a substring test costs far less than parsing): for a pass that needs a few kinds
/// of line. The count is of the kept lines that were not JSON.
///
/// # Errors
/// When reading fails.
pub(crate) fn each_json_line_where(
    mut reader: impl std::io::BufRead,
    wanted: impl Fn(&str) -> bool,
    mut each: impl FnMut(serde_json::Value),
) -> std::io::Result<usize> {
    let mut bad_lines = 0;
    let mut line = Vec::new();
    loop {
        line.clear();
        if reader.read_until(b'\n', &mut line)? == 0 {
            return Ok(bad_lines);
        }
        let text = String::from_utf8_lossy(&line);
        let text = text.trim();
        if text.is_empty() || !wanted(text) {
            continue;
        }
        match serde_json::from_str(text) {
            Ok(value) => each(value),
            Err(_) => bad_lines += 1,
        }
    }
}

/// The names mcp-defer's meta tools carry in a client (`mcp__<server>__search_tools`, or a
/// bare name inside a Codex `mcp__<server>` namespace).
pub(crate) fn is_meta_tool(name: &str) -> bool {
    ["search_tools", "select_tools", "call_tool"]
        .iter()
        .any(|m| name == *m || name.ends_with(&format!("__{m}")))
}

/// A `u64` at `key` of a JSON object, 0 when absent or not a number.
pub(crate) fn num(value: &serde_json::Value, key: &str) -> u64 {
    value
        .get(key)
        .and_then(serde_json::Value::as_u64)
        .unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn req(input: u64, read: u64, write: u64) -> Request {
        Request {
            input,
            cache_read: read,
            cache_write: write,
            ..Request::default()
        }
    }

    fn session(client: Client, requests: Vec<Request>) -> Session {
        Session {
            client,
            id: "s".into(),
            path: "p".into(),
            mcp_defer: false,
            requests,
            notes: vec![],
        }
    }

    #[test]
    fn a_drop_of_the_cache_read_after_a_tool_change_is_a_rewrite() {
        let mut third = req(3, 0, 120_845);
        third.changes = vec![ToolChange::NativeLoad {
            names: vec!["mcp__x__y".into()],
        }];
        let a = analyse(session(
            Client::Claude,
            vec![req(3, 80_000, 4_858), req(3, 84_858, 200), third],
        ));
        assert_eq!(a.rewrites.len(), 1);
        let w = &a.rewrites[0];
        assert_eq!(
            (w.request, w.cached_before, w.rebilled),
            (3, 85_058, 85_058)
        );
        assert!(w.after_tool_change());
        assert_eq!(a.totals.rebilled_after_tool_change, 85_058);
    }

    #[test]
    fn codex_caches_the_whole_prompt_and_small_drops_are_not_rewrites() {
        // 5000-token prompt, then a read of 4992 (128-token steps): no re-write.
        let a = analyse(session(
            Client::Codex,
            vec![req(5000, 0, 0), req(200, 4992, 0), req(6000, 0, 0)],
        ));
        assert_eq!(a.rewrites.len(), 1, "{:?}", a.rewrites);
        assert_eq!(a.rewrites[0].rebilled, 5192);
        assert!(!a.rewrites[0].after_tool_change());
    }
}
