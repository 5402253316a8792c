//! Search that learns from use: which tool the agent selected or called after which query,
//! kept locally ([`store`]), lifts that tool for the next similar query.
//!
//! What is kept, per event: its time, whether the tool was selected or called, the query
//! text and the tool's qualified name; never arguments, never results. Which query a
//! choice belongs to is the session's business ([`Trail`]). At search, the stored queries
//! similar to this one (static-embedding cosine, or shared words when `semantic = "off"`)
//! give their tools evidence: a call counts 1, a selection never followed by a call
//! [`Boosts::usage_selected`](super::Boosts::usage_selected), each scaled by how similar the
//! query is. The evidence lifts a tool by at most [`Boosts::usage`](super::Boosts::usage)
//! of the query's best score, saturating, so use can bring a tool into the first results
//! but one stray event cannot bury the right answer (figures: docs/search.md, "Learning
//! from use"). Only tools the query already ranks (the first
//! [`FUSION_DEPTH`](super::fusion::FUSION_DEPTH) of words or meaning) are lifted: use
//! never drags in a tool unrelated to what is asked.
//!
//! Each principal (the local user, each HTTP token) learns from its own use only, in a
//! store of its own ([`principals`]); `[settings.search] learn = "shared"` pools them,
//! `learn = false` turns learning off: no [`Usage`] is made, nothing is read or written. Like the rest of `search`, it must not import `downstream` or `server`.

use std::collections::{BTreeMap, HashMap, HashSet, VecDeque};
use std::path::PathBuf;
use std::sync::Mutex;

use serde::{Deserialize, Serialize};

use crate::sync::lock;

mod lift;
mod principals;
mod store;
#[cfg(test)]
mod tests;

pub use principals::{Learn, PRINCIPALS_DIR, Principal, Stores};
pub use store::{DATA_DIR_ENV, FILE_NAME, MAX_EVENTS, default_path};

/// Longest query text kept (characters): the query itself is bounded to 512 when ranked.
const MAX_QUERY_CHARS: usize = 512;
/// Longest tool name kept (bytes): qualified names are at most 64 by default, 128 at most.
const MAX_TOOL_BYTES: usize = 256;
/// Searches a session remembers to attribute choices to.
const TRAIL_SEARCHES: usize = 16;

/// How the agent chose a tool.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Kind {
    /// Loaded with `select_tools`.
    Selected,
    /// Called, through `call_tool` or directly.
    Called,
}

/// One choice: the query it followed and the tool chosen. Nothing else is kept.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Event {
    /// Seconds since the Unix epoch.
    #[serde(rename = "t")]
    pub time: u64,
    #[serde(rename = "k")]
    pub kind: Kind,
    #[serde(rename = "q")]
    pub query: String,
    /// The tool's qualified name.
    pub tool: String,
}

impl Event {
    /// An event now. A secret in the query (a configured one, a token by its shape) is
    /// masked before it is kept, as in a log line.
    pub fn now(kind: Kind, query: &str, tool: &str) -> Event {
        let time = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_secs());
        Event {
            time,
            kind,
            query: crate::redact::redact(query)
                .chars()
                .take(MAX_QUERY_CHARS)
                .collect(),
            tool: tool.to_owned(),
        }
    }

    /// Whether a read event is one we could have written.
    fn is_valid(&self) -> bool {
        !self.query.trim().is_empty()
            && self.query.chars().count() <= MAX_QUERY_CHARS
            && !self.tool.is_empty()
            && self.tool.len() <= MAX_TOOL_BYTES
    }

    /// The event as one line of the file.
    fn line(&self) -> Vec<u8> {
        // Serializing a struct of strings and integers cannot fail.
        let mut line = serde_json::to_vec(self).unwrap_or_default();
        line.push(b'\n');
        line
    }
}

/// How a query is compared with the stored ones.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum QueryKey {
    /// Its static-embedding vector (unit length): compared by cosine.
    Vector(Vec<f32>),
    /// Its analyzed words, sorted and without duplicates (`semantic = "off"`): compared by
    /// Jaccard overlap.
    Words(Vec<String>),
}

impl QueryKey {
    /// Similarity in 0..=1 (cosine below 0 counts 0); keys of different kinds: 0.
    fn similarity(&self, other: &QueryKey) -> f32 {
        match (self, other) {
            (QueryKey::Vector(a), QueryKey::Vector(b)) if a.len() == b.len() => {
                a.iter().zip(b).map(|(x, y)| x * y).sum::<f32>().max(0.0)
            }
            (QueryKey::Words(a), QueryKey::Words(b)) => {
                // Both sorted and without duplicates: one merge counts what they share.
                let (mut i, mut j, mut shared) = (0, 0, 0usize);
                while i < a.len() && j < b.len() {
                    match a[i].cmp(&b[j]) {
                        std::cmp::Ordering::Less => i += 1,
                        std::cmp::Ordering::Greater => j += 1,
                        std::cmp::Ordering::Equal => {
                            shared += 1;
                            i += 1;
                            j += 1;
                        }
                    }
                }
                let union = a.len() + b.len() - shared;
                if union == 0 {
                    0.0
                } else {
                    shared as f32 / union as f32
                }
            }
            _ => 0.0,
        }
    }
}

/// The choices after one stored query, per tool.
#[derive(Debug, Default)]
struct Choices {
    /// Computed on first use (and again if the index compares by another kind of key).
    key: Option<QueryKey>,
    /// Per tool: sessions that called it, and that selected it.
    tools: BTreeMap<String, Counts>,
}

#[derive(Debug, Default, Clone, Copy)]
struct Counts {
    called: u32,
    selected: u32,
}

/// What was learnt: the newest [`MAX_EVENTS`] events, and per distinct query the tools
/// chosen after it.
#[derive(Debug, Default)]
struct Learnt {
    events: VecDeque<Event>,
    /// By query text: a `BTreeMap`, so evidence sums in the same order every run.
    queries: BTreeMap<String, Choices>,
}

impl Learnt {
    fn add(&mut self, event: Event) {
        if self.events.len() == MAX_EVENTS
            && let Some(old) = self.events.pop_front()
        {
            self.count(&old, false);
        }
        self.count(&event, true);
        self.events.push_back(event);
    }

    /// Counts `event` in (or, `add` false, out of) its query's choices.
    fn count(&mut self, event: &Event, add: bool) {
        let choices = self.queries.entry(event.query.clone()).or_default();
        let counts = choices.tools.entry(event.tool.clone()).or_default();
        let slot = match event.kind {
            Kind::Called => &mut counts.called,
            Kind::Selected => &mut counts.selected,
        };
        *slot = if add {
            slot.saturating_add(1)
        } else {
            slot.saturating_sub(1)
        };
        if counts.called == 0 && counts.selected == 0 {
            choices.tools.remove(&event.tool);
        }
        if choices.tools.is_empty() {
            self.queries.remove(&event.query);
        }
    }
}

/// How learnt choices weigh in a query's ranking (from [`super::Boosts`]).
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Weights {
    /// Least similarity of a stored query to count.
    pub floor: f32,
    /// Weight of a selection never followed by a call (a call weighs 1).
    pub selected: f32,
}

/// What was learnt from use, shared by the index (which reads it at each search) and the
/// server (which records each choice). Interior mutability: recording takes a short lock,
/// never the index's.
#[derive(Debug)]
pub struct Usage {
    learnt: Mutex<Learnt>,
    /// Where new events go; `None`: memory only (benches, tests, no data directory).
    file: Mutex<Option<store::Appender>>,
}

impl Usage {
    /// Learning in memory only: nothing is read or written.
    pub fn in_memory() -> Usage {
        Usage {
            learnt: Mutex::new(Learnt::default()),
            file: Mutex::new(None),
        }
    }

    /// What the file at `path` holds (see [`store`]), new events appended to it. A file
    /// that cannot be read is logged and learning starts empty: never an error.
    pub fn open(path: PathBuf) -> Usage {
        let usage = Usage::in_memory();
        match store::load(&path) {
            Ok((events, skipped)) => {
                if skipped > 0 {
                    tracing::warn!(path = %path.display(), skipped, "unreadable lines in the usage file were skipped");
                }
                let mut learnt = lock(&usage.learnt);
                for event in events {
                    learnt.add(event);
                }
            }
            Err(error) => {
                tracing::warn!(path = %path.display(), %error, "cannot read the usage file; learning starts empty");
            }
        }
        *lock(&usage.file) = Some(store::Appender::new(path));
        usage
    }

    /// The file events are appended to, if any.
    pub fn path(&self) -> Option<PathBuf> {
        lock(&self.file).as_ref().map(|f| f.path().to_owned())
    }

    /// Learns `event`, and queues it for the file.
    pub fn record(&self, event: Event) {
        if !event.is_valid() {
            return;
        }
        lock(&self.learnt).add(event.clone());
        if let Some(file) = lock(&self.file).as_mut() {
            file.append(event);
        }
    }

    /// How many events are kept.
    pub fn len(&self) -> usize {
        lock(&self.learnt).events.len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Per tool (qualified name), the evidence that it serves a query whose key is
    /// `query`: each similar stored query's choices, scaled by how far its similarity is
    /// above the floor (1 for the same query). `key` makes a stored query's key, once.
    pub(crate) fn evidence(
        &self,
        query: &QueryKey,
        weights: Weights,
        key: impl Fn(&str) -> Option<QueryKey>,
    ) -> HashMap<String, f32> {
        let mut evidence: HashMap<String, f32> = HashMap::new();
        let floor = weights.floor.clamp(0.0, 0.99);
        let mut learnt = lock(&self.learnt);
        for (text, choices) in &mut learnt.queries {
            let fresh = match &choices.key {
                Some(k) => std::mem::discriminant(k) != std::mem::discriminant(query),
                None => true,
            };
            if fresh {
                choices.key = key(text);
            }
            let Some(stored) = &choices.key else { continue };
            let similarity = query.similarity(stored);
            if similarity < floor {
                continue;
            }
            let scale = ((similarity - floor) / (1.0 - floor)).min(1.0);
            for (tool, counts) in &choices.tools {
                let unfollowed = counts.selected.saturating_sub(counts.called);
                let e = counts.called as f32 + weights.selected * unfollowed as f32;
                *evidence.entry(tool.clone()).or_default() += scale * e;
            }
        }
        evidence
    }
}

/// Evidence as a share of the most a tool can be lifted: `e / (1 + |e|)`, so one call of
/// the same query is half the lift, two are two thirds, and negative evidence (selections
/// never called, when they weigh below 0) pushes down as much at most.
pub(crate) fn saturate(evidence: f32) -> f32 {
    evidence / (1.0 + evidence.abs())
}

/// One session's recent searches and choices: which query a selection or call belongs to,
/// and which have been recorded (each query, tool and kind once per session, so an agent
/// calling a tool fifty times teaches what one call does).
#[derive(Debug, Default)]
pub struct Trail {
    /// The newest [`TRAIL_SEARCHES`] searches: the query and the tools its answer listed.
    searches: VecDeque<(String, Vec<String>)>,
    /// Per tool chosen through the meta tools, the query it was attributed to.
    chosen: HashMap<String, String>,
    recorded: HashSet<(String, String, Kind)>,
}

impl Trail {
    /// Notes a search and the tools its answer listed.
    pub fn searched(&mut self, query: &str, listed: Vec<String>) {
        if query.trim().is_empty() {
            return;
        }
        if self.searches.len() == TRAIL_SEARCHES {
            self.searches.pop_front();
        }
        self.searches.push_back((query.to_owned(), listed));
    }

    /// The event to record for choosing `tool` (`None`: nothing to learn). The query is the
    /// newest search whose answer listed the tool; else, for a choice through the meta
    /// tools (`meta`), the newest search, and the query a meta choice of the tool was
    /// attributed to before. A direct `tools/call` of a tool no search listed and no meta
    /// tool chose (a core tool, used whatever was searched) teaches nothing.
    pub fn chose(&mut self, tool: &str, kind: Kind, meta: bool) -> Option<Event> {
        let listed = (self.searches.iter().rev())
            .find(|(_, listed)| listed.iter().any(|t| t == tool))
            .map(|(q, _)| q.clone());
        let query = match listed {
            Some(q) => q,
            None => match self.chosen.get(tool) {
                Some(q) => q.clone(),
                None if meta => self.searches.back()?.0.clone(),
                None => return None,
            },
        };
        if meta {
            self.chosen.insert(tool.to_owned(), query.clone());
        }
        let fresh = self.recorded.insert((query.clone(), tool.to_owned(), kind));
        fresh.then(|| Event::now(kind, &query, tool))
    }
}
