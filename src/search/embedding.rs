//! Embedding off the caller's path: the static tier's scoped worker threads (an upsert's
//! tools split in chunks while tantivy indexes), the job the transformer tier's own thread
//! takes, and the stand-in for that tier when the `model` feature is off.

use super::StaticModel;
use super::semantic::quantize;
use crate::catalog::EntryId;

/// One tool for the transformer tier to embed (see `transformer`).
#[derive(Debug)]
pub struct EmbedJob {
    pub id: EntryId,
    /// Tie-break order, as in the lexical index.
    pub order: u64,
    pub server: String,
    /// What is embedded (`fields::embedding_text`).
    pub text: String,
}

/// Below this many tools an upsert embeds on one worker: a thread per few tools costs more
/// than it saves.
pub(super) const EMBED_CHUNK: usize = 64;

/// What a worker gives back for its chunk: each tool's vector as int8 (`dims` wide, one
/// after the other) with its scale, `None` for a tool without one. Quantized on the
/// worker: a chunk's f32 vectors (10k tools x 256 dims: 10 MB, one allocation each) were
/// held until the upsert filed them.
#[derive(Debug, Default)]
pub(super) struct Embedded {
    pub(super) rows: Vec<i8>,
    pub(super) scales: Vec<Option<f32>>,
}

impl Embedded {
    /// The `i`-th tool's row and scale.
    pub(super) fn get(&self, i: usize, dims: usize) -> Option<(&[i8], f32)> {
        let scale = (*self.scales.get(i)?)?;
        Some((self.rows.get(i * dims..(i + 1) * dims)?, scale))
    }
}

/// A worker thread handle that returns the vectors of its chunk, and the chunk's length.
pub(super) type EmbedWorker<'scope> = (usize, std::thread::ScopedJoinHandle<'scope, Embedded>);

/// Embeds one chunk of tool texts on a scoped thread. An upsert splits its tools over up
/// to `available_parallelism` (at most 4) chunks, in order: 10k tools embed in about 1 s
/// of CPU, which one thread would add to the first load in full. Each text is dropped as
/// soon as its vector is made.
pub(super) fn embed_in_background<'scope>(
    scope: &'scope std::thread::Scope<'scope, '_>,
    model: &'static StaticModel,
    texts: Vec<String>,
) -> EmbedWorker<'scope> {
    let len = texts.len();
    let worker = scope.spawn(move || {
        let dims = model.dims();
        let mut embedded = Embedded {
            rows: vec![0; len * dims],
            scales: Vec::with_capacity(len),
        };
        for (i, text) in texts.into_iter().enumerate() {
            let vector = model.embed(&text);
            drop(text);
            let scale = vector.map(|v| {
                let (q, scale) = quantize(&v);
                embedded.rows[i * dims..(i + 1) * dims].copy_from_slice(&q);
                scale
            });
            embedded.scales.push(scale);
        }
        embedded
    });
    (len, worker)
}

/// Built without the `model` feature: no transformer can exist (config validation refuses
/// `semantic = "model"`), so every use below is unreachable.
#[cfg(not(feature = "model"))]
pub mod shim {
    use crate::catalog::EntryId;
    use crate::search::semantic::Vectors;

    /// What the embedding thread has done (never anything here).
    #[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
    pub struct Progress {
        pub tools: usize,
        pub ready: usize,
    }

    pub use super::EmbedJob as Job;

    #[derive(Debug)]
    pub enum Transformer {}
    #[derive(Debug, Clone)]
    pub enum QueryEncoder {}
    impl QueryEncoder {
        pub fn embed(&self, _: &str) -> Option<Vec<f32>> {
            match *self {}
        }
        pub fn embed_query(&self, _: &str) -> Option<crate::search::QueryVectors> {
            match *self {}
        }
    }
    impl Transformer {
        pub fn submit(&self, _: Vec<Job>) {
            match *self {}
        }
        pub fn remove(&self, _: &[EntryId]) {
            match *self {}
        }
        pub fn describe(&self) -> String {
            match *self {}
        }
        pub fn progress(&self) -> Progress {
            match *self {}
        }
        pub fn query_encoder(&self) -> QueryEncoder {
            match *self {}
        }
        pub fn wait_ready(&self, _: std::time::Duration) -> bool {
            match *self {}
        }
        pub(crate) fn fuse<T>(
            &self,
            _: &str,
            _: Option<&[f32]>,
            _: Option<&str>,
            _: impl FnOnce(&Vectors, &[f32]) -> T,
        ) -> Option<T> {
            match *self {}
        }
    }
}
