//! Ranking tools for `search_tools`: an in-RAM tantivy index over the catalog's tools.
//!
//! A pure function of the documents it is fed: the server upserts catalog entries as they
//! arrive or change, and the index never reaches into the catalog or downstream itself. Equal
//! scores rank in catalog order (DESIGN.md invariant 2). Must not import `downstream` or
//! `server`. The rules and their measured gains are logged in `docs/search.md`.
//!
//! Beside the words, meaning: each tool also gets a vector from a static embedding model
//! built into the binary (`semantic`), and a query's lexical and vector scores are
//! normalised per query and fused ([`SearchIndex::explain`]), so "salary worth" finds a tool
//! about "financial insights" that shares no word with it. With `semantic = "model"` a
//! transformer (`transformer`) embeds the tools on a thread of its own and its vectors
//! replace the static ones once every tool has one; until then the static tier answers.

use std::collections::{BTreeMap, HashMap};
use std::fmt;

use rmcp::model::Tool;
use tantivy::index::SegmentId;
use tantivy::indexer::NoMergePolicy;
use tantivy::query::{BooleanQuery, BoostQuery, ConstScoreQuery, Occur, Query, TermQuery};
use tantivy::schema::{Field, IndexRecordOption};
use tantivy::tokenizer::TextAnalyzer;
use tantivy::{Index, IndexReader, IndexWriter, ReloadPolicy, Searcher, TantivyDocument, Term};

use crate::catalog::EntryId;

mod analysis;
mod collector;
mod concepts;
mod fields;
mod semantic;
#[cfg(test)]
mod tests;
#[cfg(feature = "model")]
pub mod transformer;
/// Built without the `model` feature: no transformer can exist (config validation refuses
/// `semantic = "model"`), so every use below is unreachable.
#[cfg(not(feature = "model"))]
pub mod transformer {
    use super::semantic::Vectors;
    use crate::catalog::EntryId;

    pub use super::EmbedJob as Job;

    #[derive(Debug)]
    pub enum Transformer {}
    #[derive(Debug, Clone)]
    pub enum QueryEncoder {}
    impl QueryEncoder {
        pub fn embed(&self, _: &str) -> Option<Vec<f32>> {
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

pub use semantic::{ModelError, Semantic, StaticModel};
pub use transformer::Transformer;

use analysis::{name_key, part_count, tokens};
use collector::{Ranked, TopRanked};
use fields::Fields;
use semantic::Vectors;

/// In a large catalog a topic held by more than 1/this of the tools is skipped at query time:
/// its IDF is at most ln 4, so it barely ranks, and walking its postings was most of the
/// topics' cost (10k tools: p50 311 µs with every topic, 145 µs without these; MetaTool
/// recall unchanged). "Large" is more than [`TOPIC_POSTINGS_FREE`] tools holding it.
const MAX_TOPIC_SHARE: u64 = 4;
/// Posting lists this short cost nothing worth saving, so small catalogs keep every topic.
const TOPIC_POSTINGS_FREE: u64 = 256;

/// Queries are cut to this many characters: a query is a request, not a document.
pub const MAX_QUERY_CHARS: usize = 512;
/// At most this many distinct terms per analyzer are looked up.
pub const MAX_QUERY_TERMS: usize = 64;
/// Longest run of query words joined into one candidate exact name (`github create issue`).
const MAX_NAME_WORDS: usize = 4;
/// Score of a whole-name match: above anything text matching reaches, so it ranks first.
const EXACT_NAME_SCORE: f32 = 100.0;
/// Writer arena: large enough that a 10k-tool first load is one segment, not several that
/// must then be merged.
const WRITER_MEMORY: usize = 64_000_000;
/// When a commit leaves more segments than this, the small ones are merged (all of them into
/// the largest once they hold 1/[`MERGE_ALL_RATIO`] of its documents). Every term clause
/// costs per segment (MetaTool p50 ~125 µs with one segment, ~220 µs with four); merging
/// everything after each upsert made adding one server to a 10k index cost ~200 ms, merging
/// the small ones costs what they hold, and the occasional full merge is amortised over the
/// growth that triggered it. Merging is synchronous and depends only on the upsert sequence.
const MAX_SEGMENTS: usize = 2;
const MERGE_ALL_RATIO: u32 = 8;
/// Fusion looks at the best this many tools of each ranking (more if the caller asks for
/// more): a tool below both lists' first hundred cannot reach a page of results.
const FUSION_DEPTH: usize = 100;
/// A tool that shares no word with the query is a hit only when its cosine reaches this.
/// Min-max normalisation puts the best vector at 1 whatever it is, so without a floor every
/// query, "zeppelin" included, would fill `limit` with the nearest unrelated tools (and
/// `search_tools` could never say "no tools match"). Measured on the test catalogs:
/// unrelated tools stay under 0.15, tools the query means reach 0.28 and more.
const VECTOR_ONLY_FLOOR: f32 = 0.2;
/// The same floor for the transformer's cosines (all-MiniLM-L6-v2 puts unrelated short
/// texts at 0.0-0.25 and paraphrases above 0.4). Measured with the three-way fusion
/// (docs/search.md): 0.2 beats 0.3 by +0.013 single R@5 and +0.018 on the reference set;
/// 0.1 adds +0.03 more on the reference set but lets unrelated tools through.
const MODEL_VECTOR_ONLY_FLOOR: f32 = 0.2;

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

/// What the index needs of one catalog entry.
#[derive(Debug, Clone, Copy)]
pub struct ToolDoc<'a> {
    pub id: EntryId,
    /// Config position of the server: ties rank in catalog order.
    pub server_index: usize,
    pub qualified_name: &'a str,
    pub server: &'a str,
    /// The server's `description` and `search_hints` from the config and the `instructions`
    /// from its handshake, joined.
    pub server_text: &'a str,
    pub tool: &'a Tool,
}

/// Something [`SearchIndex::upsert`] can index: a [`ToolDoc`], or what makes one when the
/// index gets to it. A caller that keeps tools as text parses each one there, so a batch
/// never holds all its tools parsed at once (10k tools: ~60 MB of `Tool` trees).
pub trait Document {
    /// Calls `f` with the document.
    fn with_doc<R>(&self, f: impl FnOnce(&ToolDoc<'_>) -> R) -> R;
}

impl Document for ToolDoc<'_> {
    fn with_doc<R>(&self, f: impl FnOnce(&ToolDoc<'_>) -> R) -> R {
        f(self)
    }
}

/// One ranked result.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Hit {
    pub id: EntryId,
    pub score: f32,
}

/// One ranked result and how it got there (`mcp-defer search --explain`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Explained {
    pub id: EntryId,
    /// The score ranked by: the fused one, or the lexical one when vectors are off.
    pub score: f32,
    /// BM25 score and 1-based rank in the lexical ranking (`None`: not in its first
    /// [`FUSION_DEPTH`]).
    pub lexical: Option<(f32, usize)>,
    /// Cosine with the query and 1-based rank by cosine (rank `None`: below the first
    /// [`FUSION_DEPTH`]); `None` when no vector was compared.
    pub vector: Option<(f32, Option<usize>)>,
}

#[derive(Debug, thiserror::Error)]
pub enum SearchError {
    /// tantivy could not create, write or reload the in-RAM index.
    #[error("search index: {0}")]
    Index(#[from] tantivy::TantivyError),
}

/// Per-field weights of a query term's BM25 score (BM25F-style; tantivy's k1 and b are fixed,
/// so the field layout and these weights are the tuning knobs).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Boosts {
    pub name: f32,
    pub name_prefix: f32,
    pub title: f32,
    pub description: f32,
    pub description_plain: f32,
    pub description_prefix: f32,
    pub params: f32,
    pub param_text: f32,
    pub enums: f32,
    pub server: f32,
    pub server_text: f32,
    /// Topics shared by query and tool (see `concepts`).
    pub topics: f32,
    /// Take each term's IDF over the whole tool rather than per field (BM25F).
    pub shared_idf: bool,
    /// Drop request framing words ("can you help me") from queries.
    pub drop_filler: bool,
    /// Share of the vector score in the fused score (0: lexical order, 1: vectors alone);
    /// both scores are min-max normalised per query first. Unused with `Semantic::Off`.
    pub vector: f32,
    /// The same share for the transformer tier's vectors.
    pub model_vector: f32,
    /// Fuse the transformer tier's scores as z-scores (true) or min-max (false).
    pub model_zscore: bool,
    /// Share of the static tier's cosine (as a z-score) in the transformer tier's fusion:
    /// three-way fusion, lexical share `1 - model_vector - model_static` (the static
    /// share is cut to fit when the two exceed 1).
    pub model_static: f32,
    /// Least cosine of a tool found by the transformer's vector alone.
    pub model_floor: f32,
}

impl Default for Boosts {
    fn default() -> Self {
        Boosts {
            name: 1.5,
            name_prefix: 1.0,
            title: 2.0,
            description: 1.0,
            description_plain: 0.5,
            description_prefix: 0.3,
            params: 1.0,
            param_text: 0.5,
            enums: 0.5,
            server: 1.5,
            server_text: 0.5,
            topics: 0.5,
            shared_idf: true,
            drop_filler: true,
            vector: 0.5,
            model_vector: 0.5,
            model_zscore: true,
            model_static: 0.3,
            model_floor: MODEL_VECTOR_ONLY_FLOOR,
        }
    }
}

/// A query's terms under one analyzer, the field giving their whole-tool document frequency,
/// and the (field, boost) pairs they are looked up in.
type QueryGroup<'a> = (Vec<String>, Field, &'a [(Field, f32)]);

struct Analyzers {
    /// The document-side text analyzer, for the topics of a tool.
    index_text: TextAnalyzer,
    ident: TextAnalyzer,
    text: TextAnalyzer,
    plain: TextAnalyzer,
    prefix: TextAnalyzer,
}

pub struct SearchIndex {
    fields: Fields,
    boosts: Boosts,
    semantic: Semantic,
    /// One vector per tool (empty with `Semantic::Off`).
    vectors: Vectors,
    /// The transformer tier's embedding thread and vectors (`Semantic::Model` only).
    transformer: Option<Transformer>,
    analyzers: Analyzers,
    /// Kept only while a batch is written: an idle writer holds its indexing thread and
    /// arena, and a session mostly searches.
    index: Index,
    reader: IndexReader,
    /// Compact whole names (see `analysis::name_key`) of every document, so a query only
    /// builds exact-name clauses for keys that exist.
    keys_by_doc: BTreeMap<EntryId, Vec<String>>,
    key_counts: HashMap<String, usize>,
}

impl fmt::Debug for SearchIndex {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SearchIndex")
            .field("docs", &self.keys_by_doc.len())
            .field("boosts", &self.boosts)
            .field("semantic", &self.semantic)
            .field("vectors", &self.vectors.len())
            .finish_non_exhaustive()
    }
}

impl SearchIndex {
    /// # Errors
    /// When the index cannot be created.
    pub fn new() -> Result<SearchIndex, SearchError> {
        SearchIndex::with_boosts(Boosts::default())
    }

    /// An index with the given semantic tier and default weights.
    ///
    /// # Errors
    /// When the index cannot be created.
    pub fn with_semantic(semantic: Semantic) -> Result<SearchIndex, SearchError> {
        SearchIndex::with_options(Boosts::default(), semantic)
    }

    /// An index with non-default field weights (for tuning).
    ///
    /// # Errors
    /// When the index cannot be created.
    pub fn with_boosts(boosts: Boosts) -> Result<SearchIndex, SearchError> {
        SearchIndex::with_options(boosts, Semantic::default())
    }

    /// # Errors
    /// When the index cannot be created.
    pub fn with_options(boosts: Boosts, semantic: Semantic) -> Result<SearchIndex, SearchError> {
        let (schema, fields) = Fields::schema();
        let index = Index::create_in_ram(schema);
        let manager = index.tokenizers();
        manager.register(analysis::IDENT, analysis::ident_analyzer(false));
        manager.register(analysis::TEXT, analysis::text_analyzer(false));
        manager.register(analysis::PLAIN, analysis::plain_analyzer(false));
        manager.register(analysis::PREFIX, analysis::prefix_analyzer(false));
        manager.register(analysis::TOPICS, analysis::topics_analyzer());
        let q = boosts.drop_filler;
        let analyzers = Analyzers {
            index_text: analysis::text_analyzer(false),
            ident: analysis::ident_analyzer(q),
            text: analysis::text_analyzer(q),
            plain: analysis::plain_analyzer(q),
            prefix: analysis::prefix_analyzer(q),
        };
        let reader = index
            .reader_builder()
            .reload_policy(ReloadPolicy::Manual)
            .try_into()?;
        Ok(SearchIndex {
            fields,
            boosts,
            semantic,
            vectors: Vectors::default(),
            transformer: None,
            analyzers,
            index,
            reader,
            keys_by_doc: BTreeMap::new(),
            key_counts: HashMap::new(),
        })
    }

    /// Replaces the weights (for tuning: benches rank one index under several fusions).
    /// `drop_filler` keeps the value the index was built with (it shapes the analyzers).
    pub fn set_boosts(&mut self, boosts: Boosts) {
        self.boosts = Boosts {
            drop_filler: self.boosts.drop_filler,
            ..boosts
        };
    }

    /// Hands the index the transformer tier: from now on upserts queue their tools on its
    /// thread, and queries rank with its vectors once every tool has one.
    pub fn set_transformer(&mut self, transformer: Transformer) {
        self.transformer = Some(transformer);
    }

    pub fn transformer(&self) -> Option<&Transformer> {
        self.transformer.as_ref()
    }

    /// With the transformer tier, what embeds a query for [`SearchIndex::explain_with`]
    /// without holding the index.
    pub fn query_encoder(&self) -> Option<transformer::QueryEncoder> {
        self.transformer.as_ref().map(Transformer::query_encoder)
    }

    /// One line on which tier ranks and its state, for `check` and `search --explain`.
    pub fn describe_semantic(&self) -> String {
        match (self.semantic, &self.transformer) {
            (Semantic::Off, _) => "search: words only (semantic = \"off\")".to_owned(),
            (Semantic::Model, Some(t)) => t.describe(),
            (Semantic::Model, None) => {
                "search: words + static embeddings (the transformer model is unusable)".to_owned()
            }
            (Semantic::Static, _) => {
                "search: words + static embeddings (semantic = \"static\")".to_owned()
            }
        }
    }

    /// Adds documents, replacing any with the same id: one commit and one reader reload per
    /// call. CPU-bound (analysis, and each tool's embedding): callers on an async runtime
    /// run it on the blocking pool. Documents are made one at a time ([`Document`]); each
    /// chunk of their embedding texts goes to a worker thread as soon as it is full, while
    /// this thread goes on with the lexical documents (and tantivy indexes them on its own).
    ///
    /// # Errors
    /// When the index cannot be written.
    pub fn upsert<D: Document>(
        &mut self,
        docs: impl IntoIterator<Item = D>,
    ) -> Result<(), SearchError> {
        let docs: Vec<D> = docs.into_iter().collect();
        // The transformer tier's jobs, made in the same pass and sent to its thread after.
        let mut jobs: Option<Vec<transformer::Job>> = self
            .transformer
            .as_ref()
            .map(|_| Vec::with_capacity(docs.len()));
        let model = self.model();
        let writer = self.writer()?;
        let threads = std::thread::available_parallelism().map_or(1, |n| n.get().min(4));
        let chunk = docs.len().div_ceil(threads).max(EMBED_CHUNK);
        // Per document, what its vector is filed under once its worker is done.
        let mut filed: Vec<(EntryId, u64, String)> = Vec::with_capacity(docs.len());
        std::thread::scope(|scope| -> Result<(), SearchError> {
            let mut workers: Vec<EmbedWorker<'_>> = Vec::new();
            let mut texts: Vec<String> = Vec::new();
            for doc in &docs {
                doc.with_doc(|doc| -> Result<(), SearchError> {
                    writer.delete_term(self.id_term(doc.id));
                    let document = self.fields.document(doc, &mut self.analyzers.index_text);
                    writer.add_document(document)?;
                    self.set_name_keys(doc);
                    let order = fields::order_key(doc.server_index, doc.id.0);
                    if let Some(jobs) = &mut jobs {
                        jobs.push(transformer::Job {
                            id: doc.id,
                            order,
                            server: doc.server.to_owned(),
                            text: fields::embedding_text(doc),
                        });
                    }
                    if model.is_some() {
                        texts.push(fields::embedding_text(doc));
                        filed.push((doc.id, order, doc.server.to_owned()));
                    }
                    Ok(())
                })?;
                if let Some(model) = model
                    && texts.len() == chunk
                {
                    workers.push(embed_in_background(
                        scope,
                        model,
                        std::mem::take(&mut texts),
                    ));
                }
            }
            if let Some(model) = model
                && !texts.is_empty()
            {
                workers.push(embed_in_background(scope, model, texts));
            }
            if let (Some(transformer), Some(jobs)) = (&self.transformer, jobs.take()) {
                transformer.submit(jobs);
            }
            let mut filed = filed.iter();
            for (len, worker) in workers {
                let vectors = worker.join().unwrap_or_else(|_| {
                    tracing::error!("embedding worker panicked; those tools rank by words only");
                    vec![None; len]
                });
                for ((id, order, server), vector) in filed.by_ref().take(len).zip(vectors) {
                    self.vectors.set(*id, *order, server, vector.as_deref());
                }
            }
            Ok(())
        })?;
        self.commit(writer)
    }

    /// A writer for one batch. One indexing thread: documents get ids in the order they
    /// were given.
    fn writer(&self) -> Result<IndexWriter<TantivyDocument>, SearchError> {
        let writer = self.index.writer_with_num_threads(1, WRITER_MEMORY)?;
        writer.set_merge_policy(Box::new(NoMergePolicy));
        Ok(writer)
    }

    /// Records the compact names of `doc` for exact-name matching.
    fn set_name_keys(&mut self, doc: &ToolDoc<'_>) {
        let mut keys: Vec<String> = [
            name_key(&doc.tool.name),
            name_key(doc.qualified_name),
            name_key(&format!("{}{}", doc.server, doc.tool.name)),
        ]
        .into_iter()
        .filter(|k| !k.is_empty())
        .collect();
        keys.sort();
        keys.dedup();
        self.set_keys(doc.id, Some(keys));
    }

    /// Removes documents by id (unknown ids are ignored).
    ///
    /// # Errors
    /// When the index cannot be written.
    pub fn remove(&mut self, ids: impl IntoIterator<Item = EntryId>) -> Result<(), SearchError> {
        let writer = self.writer()?;
        let ids: Vec<EntryId> = ids.into_iter().collect();
        for &id in &ids {
            writer.delete_term(self.id_term(id));
            self.set_keys(id, None);
            self.vectors.remove(id);
        }
        if let Some(transformer) = &self.transformer {
            transformer.remove(&ids);
        }
        self.commit(writer)
    }

    /// Number of documents in the index.
    pub fn len(&self) -> usize {
        self.keys_by_doc.len()
    }

    pub fn is_empty(&self) -> bool {
        self.keys_by_doc.is_empty()
    }

    /// The embedding model of this index's tier, loaded on first use.
    fn model(&self) -> Option<&'static StaticModel> {
        match self.semantic {
            // The transformer tier ranks with the static model until its vectors exist.
            Semantic::Static | Semantic::Model => StaticModel::get(),
            Semantic::Off => None,
        }
    }

    fn id_term(&self, id: EntryId) -> Term {
        Term::from_field_u64(self.fields.id, u64::from(id.0))
    }

    fn set_keys(&mut self, id: EntryId, keys: Option<Vec<String>>) {
        if let Some(old) = self.keys_by_doc.remove(&id) {
            for key in old {
                if let Some(count) = self.key_counts.get_mut(&key) {
                    *count -= 1;
                    if *count == 0 {
                        self.key_counts.remove(&key);
                    }
                }
            }
        }
        if let Some(keys) = keys {
            for key in &keys {
                *self.key_counts.entry(key.clone()).or_default() += 1;
            }
            self.keys_by_doc.insert(id, keys);
        }
    }

    /// Commits, then keeps two invariants. No segment carries deleted documents: tantivy's
    /// BM25 statistics (document frequency, document count, average length) count deleted
    /// documents until a merge purges them, so with them scores would depend on segment
    /// layout; without them every statistic is an exact sum and layout cannot change a score
    /// (ties break by catalog order, never by address). And at most [`MAX_SEGMENTS`].
    fn commit(&mut self, mut writer: IndexWriter<TantivyDocument>) -> Result<(), SearchError> {
        writer.commit()?;
        let mut metas = self.index.searchable_segment_metas()?;
        metas.sort_by_key(|m| std::cmp::Reverse(m.max_doc()));
        let mut merge: Vec<SegmentId> = Vec::new();
        if metas.len() > MAX_SEGMENTS {
            let largest = metas.first().map_or(0, |m| m.max_doc());
            let small: u32 = metas.iter().skip(1).map(|m| m.max_doc()).sum();
            let skip = usize::from(small.saturating_mul(MERGE_ALL_RATIO) < largest);
            // The largest is kept unless the rest has grown enough or it carries deletes.
            merge.extend(metas.iter().skip(skip).map(|m| m.id()));
        }
        for m in &metas {
            if m.has_deletes() && !merge.contains(&m.id()) {
                merge.push(m.id());
            }
        }
        if !merge.is_empty() {
            writer.merge(&merge).wait()?;
        }
        // Its thread is joined before the next batch starts one.
        writer.wait_merging_threads()?;
        self.reader.reload()?;
        Ok(())
    }

    /// The best `limit` documents for `query`, optionally of one server only. Any text is a
    /// valid query (no query syntax); an empty query lists the filtered server's tools in
    /// catalog order, or nothing without a filter.
    pub fn search(&self, query: &str, limit: usize, server: Option<&str>) -> Vec<Hit> {
        self.search_with(query, limit, server, None)
    }

    /// [`SearchIndex::search`] with the query's transformer vector given (see
    /// [`SearchIndex::query_encoder`]); `None`: embedded here if the tier needs it.
    pub fn search_with(
        &self,
        query: &str,
        limit: usize,
        server: Option<&str>,
        model_query: Option<&[f32]>,
    ) -> Vec<Hit> {
        self.explain_with(query, limit, server, model_query)
            .into_iter()
            .map(|e| Hit {
                id: e.id,
                score: e.score,
            })
            .collect()
    }

    /// [`SearchIndex::search`] with each hit's lexical and vector evidence.
    ///
    /// Fusion: the lexical (BM25F) and vector (cosine) rankings each give their best
    /// [`FUSION_DEPTH`] tools; each score is min-max normalised over the query's own
    /// results (lexical: divided by the best, as a tool matching no word scores 0; cosine:
    /// between the lowest and highest over the catalog), and the fused score is their
    /// weighted sum ([`Boosts::vector`]). Normalising per query is what makes the two
    /// scales comparable: BM25 grows with query length, cosine does not. Score fusion, not
    /// rank fusion: RRF lost points on held-out data in the measurements behind issue 14.
    ///
    /// With the transformer tier ready, three scores are fused as per-query z-scores
    /// ([`Boosts::model_zscore`]): lexical 0.2, transformer cosine 0.5
    /// ([`Boosts::model_vector`]), static cosine 0.3 ([`Boosts::model_static`]). The
    /// static vectors are kept because they err differently from the transformer's (a
    /// token bag against a sentence meaning): adding them took MetaTool single R@5 from
    /// 0.791 to 0.804 and multi from 0.739 to 0.764 (`docs/search.md`, frontier table).
    /// The query is then embedded by the transformer on the caller's thread (~5-30 ms):
    /// callers on an async runtime embed it first on the blocking pool
    /// ([`SearchIndex::query_encoder`]) and pass it to [`SearchIndex::explain_with`].
    pub fn explain(&self, query: &str, limit: usize, server: Option<&str>) -> Vec<Explained> {
        self.explain_with(query, limit, server, None)
    }

    /// [`SearchIndex::explain`] with the query's transformer vector given (benches embed
    /// each query once and rank it under several weights).
    pub fn explain_with(
        &self,
        query: &str,
        limit: usize,
        server: Option<&str>,
        model_query: Option<&[f32]>,
    ) -> Vec<Explained> {
        if limit == 0 {
            return Vec::new();
        }
        let query = bounded(query);
        if let Some(transformer) = &self.transformer {
            let depth = limit.max(FUSION_DEPTH);
            let lexical = self.lexical(query, depth, server);
            let fusion = Fusion {
                weight: self.boosts.model_vector,
                zscore: self.boosts.model_zscore,
                floor: self.boosts.model_floor,
            };
            let statics = if self.boosts.model_static > 0.0 && self.vectors.len() > 0 {
                self.model()
                    .and_then(|m| m.embed(query))
                    .map(|v| self.vectors.cosines(&v, server))
            } else {
                None
            };
            let fused = transformer.fuse(query, model_query, server, |vectors, cosines| {
                let statics = statics.as_deref().map(|c| Static {
                    vectors: &self.vectors,
                    cosines: c,
                    weight: self.boosts.model_static,
                });
                fuse(&lexical, vectors, cosines, fusion, statics, depth, limit)
            });
            if let Some(fused) = fused {
                return fused;
            }
        }
        let vector = if self.vectors.len() > 0 {
            self.model().and_then(|m| m.embed(query))
        } else {
            None
        };
        let Some(vector) = vector else {
            return self
                .lexical(query, limit, server)
                .into_iter()
                .enumerate()
                .map(|(rank, r)| Explained {
                    id: ranked_id(r),
                    score: r.score,
                    lexical: Some((r.score, rank + 1)),
                    vector: None,
                })
                .collect();
        };
        let depth = limit.max(FUSION_DEPTH);
        let lexical = self.lexical(query, depth, server);
        let cosines = self.vectors.cosines(&vector, server);
        let fusion = Fusion {
            weight: self.boosts.vector,
            zscore: false,
            floor: VECTOR_ONLY_FLOOR,
        };
        fuse(
            &lexical,
            &self.vectors,
            &cosines,
            fusion,
            None,
            depth,
            limit,
        )
    }

    /// The lexical ranking: BM25F over the fields, topics and exact names.
    fn lexical(&self, query: &str, limit: usize, server: Option<&str>) -> Vec<Ranked> {
        let searcher = self.reader.searcher();
        let mut clauses = self.text_clauses(&searcher, query);
        clauses.extend(self.name_clauses(query));
        let filter = server.map(|s| {
            let term = Term::from_field_text(self.fields.server_exact, s);
            let q: Box<dyn Query> = Box::new(ConstScoreQuery::new(
                Box::new(TermQuery::new(term, IndexRecordOption::Basic)),
                0.0,
            ));
            q
        });
        let query: Box<dyn Query> = match (clauses.is_empty(), filter) {
            (true, None) => return Vec::new(),
            (true, Some(filter)) => filter,
            (false, None) => Box::new(BooleanQuery::new(clauses)),
            (false, Some(filter)) => Box::new(BooleanQuery::new(vec![
                (
                    Occur::Must,
                    Box::new(BooleanQuery::new(clauses)) as Box<dyn Query>,
                ),
                (Occur::Must, filter),
            ])),
        };
        let collector = TopRanked {
            limit,
            order_field: "order",
        };
        match searcher.search(query.as_ref(), &collector) {
            Ok(ranked) => ranked,
            Err(error) => {
                tracing::warn!(%error, "search failed");
                Vec::new()
            }
        }
    }

    /// One SHOULD clause per (field, distinct query term) that occurs in that field, weighted
    /// by the field's boost and, with `shared_idf`, rescaled so the term's IDF is the one over
    /// whole tools.
    fn text_clauses(&self, searcher: &Searcher, query: &str) -> Vec<(Occur, Box<dyn Query>)> {
        let b = &self.boosts;
        let f = &self.fields;
        let a = &self.analyzers;
        let docs = searcher.num_docs();
        let df = |term: &Term| searcher.doc_freq(term).unwrap_or(0).min(docs);
        // Stemmed words serve both their fields and the topics.
        let text_terms = tokens(&a.text, query);
        let topics = if b.topics > 0.0 {
            concepts::query_topics(&text_terms)
        } else {
            Vec::new()
        };
        let groups: [QueryGroup<'_>; 4] = [
            (
                tokens(&a.ident, query),
                f.all_ident,
                &[(f.name, b.name), (f.params, b.params), (f.server, b.server)],
            ),
            (
                text_terms,
                f.all_ident,
                &[
                    (f.title, b.title),
                    (f.description, b.description),
                    (f.param_text, b.param_text),
                    (f.enums, b.enums),
                    (f.server_text, b.server_text),
                ],
            ),
            (
                tokens(&a.plain, query),
                f.all_plain,
                &[(f.description_plain, b.description_plain)],
            ),
            (
                tokens(&a.prefix, query),
                f.all_prefix,
                &[
                    (f.name_prefix, b.name_prefix),
                    (f.description_prefix, b.description_prefix),
                ],
            ),
        ];
        let mut clauses: Vec<(Occur, Box<dyn Query>)> = Vec::new();
        for (terms, all, targets) in groups {
            for text in distinct(terms) {
                let df_all = df(&Term::from_field_text(all, &text));
                for &(field, boost) in targets {
                    if boost <= 0.0 {
                        continue;
                    }
                    let term = Term::from_field_text(field, &text);
                    let df_field = df(&term);
                    if df_field == 0 {
                        continue;
                    }
                    let boost = if b.shared_idf && df_all >= df_field {
                        boost * idf(df_all, docs) / idf(df_field, docs)
                    } else {
                        boost
                    };
                    let q = TermQuery::new(term, IndexRecordOption::WithFreqs);
                    clauses.push((Occur::Should, Box::new(BoostQuery::new(Box::new(q), boost))));
                }
            }
        }
        // A topic several query words name weighs more, sublinearly.
        for (topic, count) in topics {
            let term = Term::from_field_text(f.topics, topic);
            let n = df(&term);
            if n == 0 || (n > TOPIC_POSTINGS_FREE && n.saturating_mul(MAX_TOPIC_SHARE) > docs) {
                continue;
            }
            let q = TermQuery::new(term, IndexRecordOption::WithFreqs);
            let boost = b.topics * (count as f32).sqrt();
            clauses.push((Occur::Should, Box::new(BoostQuery::new(Box::new(q), boost))));
        }
        clauses
    }

    /// Whole-name matches: runs of up to [`MAX_NAME_WORDS`] query words, joined without
    /// separators, that equal a tool's name, qualified name or `server` + `tool`. A run must
    /// hold at least two name parts (`create_issue`, `github create issue`) unless it is the
    /// whole query, so a common word (`time`) does not outrank everything else.
    fn name_clauses(&self, query: &str) -> Vec<(Occur, Box<dyn Query>)> {
        let words: Vec<&str> = query
            .split_whitespace()
            .filter(|w| !name_key(w).is_empty())
            .take(MAX_QUERY_TERMS)
            .collect();
        let mut seen: Vec<String> = Vec::new();
        for start in 0..words.len() {
            let mut key = String::new();
            let mut parts = 0;
            for (n, word) in words[start..].iter().take(MAX_NAME_WORDS).enumerate() {
                key.push_str(&name_key(word));
                parts += part_count(word);
                let whole = start == 0 && n + 1 == words.len();
                if (parts >= 2 || whole)
                    && self.key_counts.contains_key(&key)
                    && !seen.contains(&key)
                {
                    seen.push(key.clone());
                }
            }
        }
        seen.into_iter()
            .map(|key| {
                let term = Term::from_field_text(self.fields.name_key, &key);
                let q = TermQuery::new(term, IndexRecordOption::Basic);
                let q: Box<dyn Query> =
                    Box::new(ConstScoreQuery::new(Box::new(q), EXACT_NAME_SCORE));
                (Occur::Should, q)
            })
            .collect()
    }
}

/// BM25's IDF, as tantivy computes it.
fn idf(doc_freq: u64, docs: u64) -> f32 {
    let x = (docs.saturating_sub(doc_freq) as f32 + 0.5) / (doc_freq as f32 + 0.5);
    (1.0 + x).ln()
}

/// Below this many tools an upsert embeds on one worker: a thread per few tools costs more
/// than it saves.
const EMBED_CHUNK: usize = 64;

/// A worker thread handle that returns the vectors of its chunk, and the chunk's length.
type EmbedWorker<'scope> = (
    usize,
    std::thread::ScopedJoinHandle<'scope, Vec<Option<Vec<f32>>>>,
);

/// Embeds one chunk of tool texts on a scoped thread. An upsert splits its tools over up
/// to `available_parallelism` (at most 4) chunks, in order: 10k tools embed in about 1 s
/// of CPU, which one thread would add to the first load in full.
fn embed_in_background<'scope>(
    scope: &'scope std::thread::Scope<'scope, '_>,
    model: &'static StaticModel,
    texts: Vec<String>,
) -> EmbedWorker<'scope> {
    let len = texts.len();
    let worker = scope.spawn(move || texts.iter().map(|t| model.embed(t)).collect());
    (len, worker)
}

/// The entry id is the low half of the order key (see `fields::order_key`).
fn ranked_id(r: Ranked) -> EntryId {
    EntryId((r.order & u64::from(u32::MAX)) as u32)
}

/// How [`fuse`] combines the two scores.
#[derive(Debug, Clone, Copy)]
struct Fusion {
    /// Share of the vector score, clamped to 0..=1.
    weight: f32,
    /// z-scores (true) or min-max (false).
    zscore: bool,
    /// Least cosine of a tool found by its vector alone.
    floor: f32,
}

/// A third score for [`fuse`]: the static tier's cosines beside the transformer's.
#[derive(Debug, Clone, Copy)]
struct Static<'a> {
    /// The static tier's vectors (their own row order).
    vectors: &'a Vectors,
    /// Cosine per row of `vectors`, NaN for rows filtered out.
    cosines: &'a [f32],
    /// Share of the static z-score (taken from the lexical share).
    weight: f32,
}

/// Fuses a lexical ranking with every tool's cosine (`cosines`, row order of `vectors`, NaN
/// for rows filtered out; see [`SearchIndex::explain`]).
fn fuse(
    lexical: &[Ranked],
    vectors: &Vectors,
    cosines: &[f32],
    fusion: Fusion,
    statics: Option<Static<'_>>,
    depth: usize,
    limit: usize,
) -> Vec<Explained> {
    let weight = fusion.weight.clamp(0.0, 1.0);
    let static_weight = statics.map_or(0.0, |s| s.weight.clamp(0.0, 1.0 - weight));
    let lexical_weight = 1.0 - weight - static_weight;
    // The static cosine of a tool as a z-score over the compared tools (0 when unknown).
    let static_z = statics.map(|s| {
        let compared = s.cosines.iter().filter(|c| !c.is_nan());
        let n = compared.clone().count().max(1) as f64;
        let mean = compared.clone().map(|&c| f64::from(c)).sum::<f64>() / n;
        let var = compared
            .map(|&c| (f64::from(c) - mean).powi(2))
            .sum::<f64>()
            / n;
        (s, mean as f32, var.sqrt() as f32)
    });
    let static_score = |id: EntryId| -> f32 {
        let Some((s, mean, sd)) = static_z else {
            return 0.0;
        };
        match s.vectors.row_of(id).and_then(|row| s.cosines.get(row)) {
            Some(&c) if !c.is_nan() && sd > 0.0 => static_weight * (c - mean) / sd,
            _ => 0.0,
        }
    };
    // The best `depth` rows by cosine, best first (ties by catalog order).
    let mut by_cosine: Vec<usize> = (0..cosines.len())
        .filter(|&row| !cosines[row].is_nan())
        .collect();
    let by_rank = |&a: &usize, &b: &usize| {
        cosines[b]
            .total_cmp(&cosines[a])
            .then(vectors.entry(a).1.cmp(&vectors.entry(b).1))
    };
    if by_cosine.len() > depth {
        by_cosine.select_nth_unstable_by(depth, by_rank);
        by_cosine.truncate(depth);
    }
    by_cosine.sort_unstable_by(by_rank);
    // Min-max per query. Lexical: the lowest is 0 (a tool matching no word), so divide by
    // the best. Cosine: between the lowest and highest compared. Measured against z-scores
    // and against min-max over only the first `depth` of each list: z-scores within ±0.005
    // R@5, first-`depth` min-max 0.02 lower on MetaTool.
    let best_lexical = lexical.first().map_or(0.0, |r| r.score);
    let (low, high) = cosines
        .iter()
        .filter(|c| !c.is_nan())
        .fold((f32::INFINITY, f32::NEG_INFINITY), |(lo, hi), &c| {
            (lo.min(c), hi.max(c))
        });
    // z-scores (the transformer tier; measured best for it in issue 14): each score minus
    // its mean over the compared tools, over its standard deviation. Lexical scores of
    // tools outside the list count as 0, and the shift of the lexical mean is the same for
    // every tool, so it is left out: a tool with no word and an average cosine scores 0.
    let (mean, spread) = if fusion.zscore {
        let compared = cosines.iter().filter(|c| !c.is_nan());
        let n = compared.clone().count().max(1) as f64;
        let mean_cos = compared.clone().map(|&c| f64::from(c)).sum::<f64>() / n;
        let var_cos = compared
            .map(|&c| (f64::from(c) - mean_cos).powi(2))
            .sum::<f64>()
            / n;
        let lex_n = n.max(lexical.len() as f64);
        let lex_mean = lexical.iter().map(|r| f64::from(r.score)).sum::<f64>() / lex_n;
        let lex_sq = lexical
            .iter()
            .map(|r| f64::from(r.score).powi(2))
            .sum::<f64>()
            / lex_n;
        let lex_sd = (lex_sq - lex_mean * lex_mean).max(0.0).sqrt();
        (mean_cos as f32, (lex_sd as f32, var_cos.sqrt() as f32))
    } else {
        (0.0, (0.0, 0.0))
    };
    let lex_norm = |score: f32| {
        if fusion.zscore {
            if spread.0 > 0.0 {
                score / spread.0
            } else {
                0.0
            }
        } else if best_lexical > 0.0 {
            score / best_lexical
        } else {
            0.0
        }
    };
    let vec_norm = |cosine: f32| {
        if fusion.zscore {
            if spread.1 > 0.0 {
                (cosine - mean) / spread.1
            } else {
                0.0
            }
        } else if high > low {
            (cosine - low) / (high - low)
        } else {
            0.0
        }
    };
    let vector_rank: HashMap<usize, usize> = by_cosine
        .iter()
        .enumerate()
        .map(|(rank, &row)| (row, rank + 1))
        .collect();
    let mut in_lexical: Vec<usize> = Vec::with_capacity(lexical.len());
    let mut out: Vec<(u64, Explained)> = Vec::with_capacity(lexical.len() + by_cosine.len());
    for (rank, r) in lexical.iter().enumerate() {
        let id = ranked_id(*r);
        let row = vectors.row_of(id).filter(|&row| row < cosines.len());
        let vector = row
            .map(|row| (cosines[row], vector_rank.get(&row).copied()))
            .filter(|(c, _)| !c.is_nan());
        if let Some(row) = row {
            in_lexical.push(row);
        }
        let v = vector.map_or(0.0, |(c, _)| vec_norm(c));
        out.push((
            r.order,
            Explained {
                id,
                score: lexical_weight * lex_norm(r.score) + weight * v + static_score(id),
                lexical: Some((r.score, rank + 1)),
                vector,
            },
        ));
    }
    for (rank, &row) in by_cosine.iter().enumerate() {
        if in_lexical.contains(&row) || cosines[row] < fusion.floor {
            continue;
        }
        let (id, order) = vectors.entry(row);
        out.push((
            order,
            Explained {
                id,
                score: weight * vec_norm(cosines[row]) + static_score(id),
                lexical: None,
                vector: Some((cosines[row], Some(rank + 1))),
            },
        ));
    }
    out.sort_unstable_by(|(ao, a), (bo, b)| b.score.total_cmp(&a.score).then(ao.cmp(bo)));
    out.truncate(limit);
    out.into_iter().map(|(_, e)| e).collect()
}

/// The query cut to [`MAX_QUERY_CHARS`] characters.
fn bounded(query: &str) -> &str {
    match query.char_indices().nth(MAX_QUERY_CHARS) {
        Some((end, _)) => &query[..end],
        None => query,
    }
}

/// Terms in first-seen order without repeats, at most [`MAX_QUERY_TERMS`].
fn distinct(terms: Vec<String>) -> Vec<String> {
    let mut out: Vec<String> = Vec::with_capacity(terms.len().min(MAX_QUERY_TERMS));
    for t in terms {
        if out.len() == MAX_QUERY_TERMS {
            break;
        }
        if !out.contains(&t) {
            out.push(t);
        }
    }
    out
}
