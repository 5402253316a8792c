//! The transformer tier (`[settings.search] semantic = "model"`): tool vectors from a
//! sentence-embedding transformer, computed on a thread of their own and kept on disk.
//!
//! [`Transformer::start`] spawns one embedding thread that loads the model, then embeds
//! what [`Transformer::submit`] queues, taking each text's vector from the disk cache
//! (`cache`) when it is there. Search never waits for it: until every indexed tool has its
//! transformer vector, [`Transformer::fuse`] answers `None` and the index ranks with the
//! static tier. Vectors of two models are not comparable, so the tiers never mix within a
//! query. Part of `search`: fed by the index, never reaching into the catalog.

mod cache;
mod encoder;
mod error;
mod home;
mod weights;

use std::collections::HashMap;
use std::sync::mpsc::{self, Receiver, Sender};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, OnceLock};
use std::time::{Duration, Instant};

pub use cache::CACHE_DIR_ENV;
pub use encoder::{Encoder, EncoderError, FILES, ModelDir};
pub use home::{MODEL_NAME, default_dir, default_dir_in};

use super::semantic::Vectors;
use crate::catalog::EntryId;

/// Texts embedded in one forward pass: sorted by length first, so padding stays small.
const BATCH: usize = 16;
/// Texts are cut to this many characters before tokenizing (the model reads at most 256
/// tokens, ~1,200 characters of English).
const MAX_CHARS: usize = 3_000;

pub use super::EmbedJob as Job;

/// What the embedding thread has done: the counters `stats` and the tests read.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Progress {
    /// Tools indexed (each wants a vector).
    pub tools: usize,
    /// Tools with their vector.
    pub ready: usize,
    /// Texts run through the model since start.
    pub embedded: usize,
    /// Texts whose vector came from the disk cache.
    pub cached: usize,
    /// Whether the model is loaded (false while loading, and for good if it failed).
    pub loaded: bool,
    pub failed: bool,
}

struct State {
    /// Per indexed tool, the key of the text its vector must be of.
    wanted: HashMap<EntryId, cache::Key>,
    vectors: Vectors,
    progress: Progress,
}

struct Shared {
    dir: ModelDir,
    encoder: OnceLock<Option<Encoder>>,
    state: Mutex<State>,
    /// Signalled whenever vectors land or loading ends (for [`Transformer::wait_ready`]).
    changed: Condvar,
}

impl Shared {
    fn new(dir: ModelDir) -> Arc<Shared> {
        Arc::new(Shared {
            dir,
            encoder: OnceLock::new(),
            state: Mutex::new(State {
                wanted: HashMap::new(),
                vectors: Vectors::default(),
                progress: Progress::default(),
            }),
            changed: Condvar::new(),
        })
    }

    /// The state; a poisoned lock (a panic on the embedding thread) still holds valid
    /// maps, each update being one insert or remove.
    fn state(&self) -> MutexGuard<'_, State> {
        crate::sync::lock(&self.state)
    }
}

/// Handle on the embedding thread; dropping it ends the thread after its current batch.
pub struct Transformer {
    shared: Arc<Shared>,
    jobs: Sender<Vec<Job>>,
}

impl std::fmt::Debug for Transformer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Transformer")
            .field("dir", &self.shared.dir.path())
            .field("progress", &self.progress())
            .finish()
    }
}

impl Transformer {
    /// Starts the embedding thread, which loads the model from `dir` (checked) and opens
    /// the vector cache under `cache_root` (`None`: [`cache::cache_root`]).
    pub fn start(dir: ModelDir, cache_root: Option<std::path::PathBuf>) -> Transformer {
        let shared = Shared::new(dir);
        let (jobs, queue) = mpsc::channel();
        let worker = Arc::clone(&shared);
        let root = cache_root.or_else(cache::cache_root);
        let spawned = std::thread::Builder::new()
            .name("mcp-defer-embed".to_owned())
            .spawn(move || run(&worker, &queue, root));
        if let Err(error) = spawned {
            tracing::error!(%error, "cannot start the embedding thread; search stays on the static tier");
            shared.state().progress.failed = true;
        }
        Transformer { shared, jobs }
    }

    /// A handle whose embedding thread never runs (the queue is returned, unread): the
    /// state search is in while the model loads or embeds, held still for a test.
    #[cfg(test)]
    pub(crate) fn idle(dir: ModelDir) -> (Transformer, Receiver<Vec<Job>>) {
        let shared = Shared::new(dir);
        let (jobs, queue) = mpsc::channel();
        (Transformer { shared, jobs }, queue)
    }

    /// Queues tools for embedding; a tool already queued or embedded under another text
    /// is replaced. Never blocks on the model.
    pub fn submit(&self, jobs: Vec<Job>) {
        if jobs.is_empty() {
            return;
        }
        {
            let mut state = self.shared.state();
            for job in &jobs {
                let key = cache::key(bounded(&job.text));
                if state.wanted.insert(job.id, key) != Some(key) {
                    state.vectors.remove(job.id);
                }
            }
            state.progress.tools = state.wanted.len();
            state.progress.ready = state.vectors.len();
        }
        // A send fails only once the thread has ended (model failed to load): the tools
        // then rank with the static tier, as they would while waiting.
        let _ = self.jobs.send(jobs);
    }

    /// Forgets tools removed from the index.
    pub fn remove(&self, ids: &[EntryId]) {
        let mut state = self.shared.state();
        for id in ids {
            state.wanted.remove(id);
            state.vectors.remove(*id);
        }
        state.progress.tools = state.wanted.len();
        state.progress.ready = state.vectors.len();
    }

    /// The tier's state in one line: which model, whether it ranks, how many vectors came
    /// from the model and how many from the disk cache.
    pub fn describe(&self) -> String {
        let p = self.progress();
        let dir = self.shared.dir.path().display();
        let state = if p.failed {
            "failed to load (see the log); the static tier ranks".to_owned()
        } else if !p.loaded {
            "loading; the static tier ranks meanwhile".to_owned()
        } else if p.ready < p.tools {
            format!(
                "{}/{} tool vectors; the static tier ranks until all are ready",
                p.ready, p.tools
            )
        } else {
            format!("ranking, {} tool vectors", p.ready)
        };
        format!(
            "search: words + transformer {dir} ({} layers, {} dims): {state} ({} embedded, {} \
             from the disk cache)",
            self.shared.dir.layers(),
            self.shared.dir.dims(),
            p.embedded,
            p.cached
        )
    }

    pub fn progress(&self) -> Progress {
        self.shared.state().progress
    }

    /// A handle that embeds queries without the index: `search_tools` embeds on the
    /// blocking pool before it takes any lock, then ranks with the vector.
    pub fn query_encoder(&self) -> QueryEncoder {
        QueryEncoder(Arc::clone(&self.shared))
    }

    /// The model's directory.
    pub fn dir(&self) -> &ModelDir {
        &self.shared.dir
    }

    /// The loaded model, `None` while loading or if it failed.
    pub fn encoder(&self) -> Option<&Encoder> {
        self.shared.encoder.get().and_then(Option::as_ref)
    }

    /// Blocks until every submitted tool has its vector or loading failed, at most
    /// `timeout`; true when ready. For benches, tests and one-shot commands (`search`),
    /// never for `search_tools`.
    pub fn wait_ready(&self, timeout: Duration) -> bool {
        let deadline = Instant::now() + timeout;
        let mut state = self.shared.state();
        loop {
            let p = state.progress;
            if p.failed {
                return false;
            }
            if p.loaded && state.vectors.len() == state.wanted.len() {
                return true;
            }
            let now = Instant::now();
            if now >= deadline {
                return false;
            }
            state = crate::sync::wait_timeout(&self.shared.changed, state, deadline - now);
        }
    }

    /// Runs `fuse` over the transformer vectors and the query's cosines with them, if the
    /// model is loaded and every indexed tool has its vector; `None` otherwise (the caller
    /// ranks with the static tier). The query is embedded before the lock is taken; the
    /// lock is held for the cosines and `fuse` only.
    pub(crate) fn fuse<T>(
        &self,
        query: &str,
        query_vector: Option<&[f32]>,
        server: Option<&str>,
        fuse: impl FnOnce(&Vectors, &[f32]) -> T,
    ) -> Option<T> {
        let encoder = self.encoder()?;
        {
            let state = self.shared.state();
            if state.vectors.len() != state.wanted.len() || state.wanted.is_empty() {
                return None;
            }
        }
        let owned;
        let vector = match query_vector {
            Some(v) => v,
            None => {
                owned = encoder
                    .embed(query)
                    .inspect_err(|error| tracing::warn!(%error, "query embedding failed"))
                    .ok()?;
                &owned
            }
        };
        let state = self.shared.state();
        if state.vectors.len() != state.wanted.len() {
            return None;
        }
        let cosines = state.vectors.cosines(vector, server);
        Some(fuse(&state.vectors, &cosines))
    }
}

/// Embeds queries with the loaded model (see [`Transformer::query_encoder`]).
#[derive(Clone)]
pub struct QueryEncoder(Arc<Shared>);

impl std::fmt::Debug for QueryEncoder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_tuple("QueryEncoder").finish_non_exhaustive()
    }
}

impl QueryEncoder {
    /// The vectors of the query and, when it has two or more needs
    /// ([`needs`](super::needs())), of each need, in one forward pass; `None` while the
    /// model loads, if it failed, or if the forward pass fails (logged). ~3-11 ms of
    /// CPU: not on an async runtime's threads. A need costs about what its words cost in
    /// the query.
    pub fn embed_query(&self, query: &str) -> Option<super::QueryVectors> {
        let encoder = self.0.encoder.get().and_then(Option::as_ref)?;
        let query = super::bounded(query);
        let needs = super::needs(super::query::bounded(query));
        let mut texts = vec![query];
        if needs.len() > 1 {
            texts.extend(needs);
        }
        let mut vectors = encoder
            .embed_batch(&texts)
            .inspect_err(|error| tracing::warn!(%error, "query embedding failed"))
            .ok()?;
        if vectors.len() != texts.len() {
            return None;
        }
        let needs = vectors.split_off(1);
        Some(super::QueryVectors {
            whole: vectors.pop()?,
            needs,
        })
    }
}

fn bounded(text: &str) -> &str {
    match text.char_indices().nth(MAX_CHARS) {
        Some((end, _)) => &text[..end],
        None => text,
    }
}

/// The embedding thread: load, then embed queued tools until the handle is dropped.
fn run(shared: &Shared, queue: &Receiver<Vec<Job>>, root: Option<std::path::PathBuf>) {
    let started = Instant::now();
    let loaded = Encoder::load(&shared.dir);
    let encoder = match loaded {
        Ok(encoder) => encoder,
        Err(error) => {
            tracing::error!(dir = %shared.dir.path().display(), %error, "transformer model failed to load; search stays on the static tier");
            let _ = shared.encoder.set(None);
            shared.state().progress.failed = true;
            shared.changed.notify_all();
            return;
        }
    };
    tracing::info!(
        dir = %shared.dir.path().display(),
        model = encoder.id(),
        ms = started.elapsed().as_millis() as u64,
        "transformer model loaded"
    );
    let mut cache = cache::VectorCache::open(root.as_deref(), encoder.id(), encoder.dims());
    let encoder = shared.encoder.get_or_init(|| Some(encoder)).as_ref();
    let Some(encoder) = encoder else { return };
    {
        shared.state().progress.loaded = true;
        shared.changed.notify_all();
    }
    while let Ok(first) = queue.recv() {
        let mut jobs = first;
        while let Ok(more) = queue.try_recv() {
            jobs.extend(more);
        }
        let started = Instant::now();
        let before = shared.state().progress;
        embed_jobs(shared, encoder, &mut cache, jobs);
        let after = shared.state().progress;
        if after.ready == after.tools {
            tracing::info!(
                tools = after.tools,
                embedded = after.embedded - before.embedded,
                cached = after.cached - before.cached,
                ms = started.elapsed().as_millis() as u64,
                "transformer vectors ready"
            );
        }
    }
}

/// Embeds the jobs still wanted (latest text only), cache first, misses in batches of
/// similar length.
fn embed_jobs(shared: &Shared, encoder: &Encoder, cache: &mut cache::VectorCache, jobs: Vec<Job>) {
    // The last job of a tool wins; a tool removed or re-submitted since is skipped.
    let mut latest: HashMap<EntryId, (cache::Key, Job)> = HashMap::new();
    for job in jobs {
        let key = cache::key(bounded(&job.text));
        latest.insert(job.id, (key, job));
    }
    let mut misses: Vec<(cache::Key, Job)> = Vec::new();
    {
        let mut state = shared.state();
        for (_, (key, job)) in latest {
            if state.wanted.get(&job.id) != Some(&key) {
                continue;
            }
            match cache.get(&key) {
                Some(vector) => {
                    state
                        .vectors
                        .set(job.id, job.order, &job.server, Some(vector));
                    state.progress.cached += 1;
                }
                None => misses.push((key, job)),
            }
        }
        state.progress.ready = state.vectors.len();
    }
    shared.changed.notify_all();
    misses.sort_by_key(|(_, job)| (job.text.len(), job.order));
    for batch in misses.chunks(BATCH) {
        let texts: Vec<&str> = batch.iter().map(|(_, job)| bounded(&job.text)).collect();
        let vectors = match encoder.embed_batch(&texts) {
            Ok(vectors) => vectors,
            Err(error) => {
                tracing::warn!(%error, tools = batch.len(), "embedding failed; those tools keep the static tier");
                continue;
            }
        };
        for ((key, _), vector) in batch.iter().zip(&vectors) {
            cache.put(*key, vector);
        }
        let mut state = shared.state();
        for ((key, job), vector) in batch.iter().zip(&vectors) {
            if state.wanted.get(&job.id) == Some(key) {
                state
                    .vectors
                    .set(job.id, job.order, &job.server, Some(vector));
            }
        }
        state.progress.embedded += batch.len();
        state.progress.ready = state.vectors.len();
        drop(state);
        shared.changed.notify_all();
    }
}

#[cfg(test)]
mod tests;
