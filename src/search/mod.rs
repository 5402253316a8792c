//! Ranking tools for `search_tools`: an in-RAM tantivy index over the catalog's tools.
//!
//! A pure function of the documents it is fed: the server upserts catalog entries as they
//! arrive or change, and the index never reaches into the catalog or downstream itself. Equal
//! scores rank in catalog order (DESIGN.md invariant 2). Must not import `downstream` or
//! `server`. The rules and their measured gains are logged in `docs/search.md`.
//!
//! Beside the words, meaning: each tool also gets a vector from a static embedding model
//! built into the binary (`semantic`), and a query's lexical and vector scores are
//! normalised per query and fused ([`SearchIndex::explain_with`]), so "salary worth" finds a tool
//! about "financial insights" that shares no word with it. With `semantic = "model"` a
//! transformer (`transformer`) embeds the tools on a thread of its own and its vectors
//! replace the static ones once every tool has one; until then the static tier answers.

use std::collections::{BTreeMap, HashMap};
use std::fmt;

use rmcp::model::Tool;
use tantivy::tokenizer::TextAnalyzer;
use tantivy::{Index, IndexReader, ReloadPolicy};

use crate::catalog::EntryId;

mod analysis;
mod boosts;
mod collector;
mod concepts;
mod confidence;
mod embedding;
mod fields;
mod fusion;
mod index;
mod named;
mod needs;
mod query;
mod ranking;
mod semantic;
#[cfg(test)]
mod tests;
#[cfg(feature = "model")]
pub mod transformer;
pub mod usage;
mod wordpiece;
#[cfg(not(feature = "model"))]
pub use embedding::shim as transformer;

pub use boosts::{Boosts, FIT_TOP};
pub use confidence::Calibration;
pub use embedding::EmbedJob;
pub use needs::{MAX_NEEDS, QueryVectors, SplitRules, needs, needs_with};
pub use query::{MAX_QUERY_CHARS, MAX_QUERY_TERMS};
pub use ranking::{Explained, Hit, Parts, Ranking, Tier};
pub use semantic::{ModelError, Semantic, StaticModel};
pub use transformer::Transformer;

use boosts::VECTOR_ONLY_FLOOR;
use fields::Fields;
use fusion::{FUSION_DEPTH, Fusion, Static, fuse, shares};
use query::bounded;
use semantic::Vectors;

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

#[derive(Debug, thiserror::Error)]
pub enum SearchError {
    /// tantivy could not create, write or reload the in-RAM index.
    #[error("search index: {0}")]
    Index(#[from] tantivy::TantivyError),
}

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
    keys_by_doc: BTreeMap<EntryId, Box<[u64]>>,
    /// How many documents have each key, by [`analysis::key_hash`].
    key_counts: HashMap<u64, u32>,
    /// What was learnt from use (`usage`); `None` with `learn = false`.
    usage: Option<std::sync::Arc<usage::Usage>>,
    /// Each document's qualified name, which use is learnt by.
    names: HashMap<EntryId, String>,
    /// How a hit's confidence is computed, and the least that fits.
    calibration: Calibration,
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
            usage: None,
            names: HashMap::new(),
            calibration: Calibration::default(),
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

    /// Replaces the confidence model (for tuning: benches fit it outside the index).
    pub fn set_calibration(&mut self, calibration: Calibration) {
        self.calibration = calibration;
    }

    /// The confidence model and its thresholds: a hit is a fit at
    /// [`Calibration::threshold`] or above.
    pub fn calibration(&self) -> &Calibration {
        &self.calibration
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

    /// The best `limit` documents for `query`, optionally of one server only. Any text is a
    /// valid query (no query syntax); an empty query lists the filtered server's tools in
    /// catalog order, or nothing without a filter. The ranking entry points are this (the
    /// hits), [`SearchIndex::explain_with`] (each hit's evidence), [`SearchIndex::rank`]
    /// (the tier, shares and needs too) and [`SearchIndex::rank_learnt`] (lifted by what a
    /// principal chose before): each is the next one with defaults.
    pub fn search(&self, query: &str, limit: usize, server: Option<&str>) -> Vec<Hit> {
        (self.explain_with(query, limit, server, None).into_iter())
            .map(|e| Hit {
                id: e.id,
                score: e.score,
            })
            .collect()
    }

    /// [`SearchIndex::search`] with each hit's lexical and vector evidence, and the query's
    /// transformer vectors when given (see [`SearchIndex::query_encoder`]; benches embed
    /// each query once and rank it under several weights); `None`: embedded here, on the
    /// caller's thread (~2-10 ms), if the tier needs them.
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
    pub fn explain_with(
        &self,
        query: &str,
        limit: usize,
        server: Option<&str>,
        model_query: Option<&QueryVectors>,
    ) -> Vec<Explained> {
        self.rank(query, limit, server, model_query).hits
    }

    /// [`SearchIndex::explain_with`], saying which tier ranked, each engine's share, the
    /// query's named things and needs, how many tools still wait for a transformer
    /// vector, and whether any hit fits. Tools chosen before for similar queries are
    /// lifted last (`usage`), over the first [`FUSION_DEPTH`] of the ranking by content
    /// (need by need for a query of two or more needs: `needs`).
    pub fn rank(
        &self,
        query: &str,
        limit: usize,
        server: Option<&str>,
        model_query: Option<&QueryVectors>,
    ) -> Ranking {
        self.rank_learnt(query, limit, server, model_query, self.usage.as_deref())
    }

    /// [`SearchIndex::rank`] lifting by what `usage` learnt instead of the index's own
    /// (`None`: no lift): each principal's searches see its own use
    /// (`usage::Stores`).
    pub fn rank_learnt(
        &self,
        query: &str,
        limit: usize,
        server: Option<&str>,
        model_query: Option<&QueryVectors>,
        usage: Option<&usage::Usage>,
    ) -> Ranking {
        let evidence = usage.and_then(|usage| self.usage_evidence(usage, query));
        let Some(evidence) = evidence.filter(|_| limit > 0) else {
            return self.rank_by_content(query, limit, server, model_query);
        };
        let depth = limit.max(FUSION_DEPTH);
        let mut ranking = self.rank_by_content(query, depth, server, model_query);
        let best = ranking.hits.first().map_or(0.0, |h| h.score);
        self.lift(&mut ranking.hits, &evidence, limit);
        ranking.shares.usage = self.boosts.usage;
        // The most use lifts a tool by is `usage` x the best content score: a lift's share
        // of that is its saturated evidence, which raises the confidence.
        let most = self.boosts.usage * best;
        for hit in ranking.hits.iter_mut().filter(|h| h.parts.usage > 0.0) {
            if most > 0.0 {
                hit.confidence = confidence::with_use(hit.confidence, hit.parts.usage / most);
            }
        }
        ranking.fits = self.any_fit(ranking.tier, &ranking.hits);
        ranking
    }

    /// One need's ranking by the tools' text alone: words, meaning, named things (the whole
    /// query's when it has one need; see `SearchIndex::rank_by_content` in `needs`). The
    /// best tier that can rank does: the transformer's once every tool has its vector,
    /// else the static vectors fused with the words, else the words alone.
    fn rank_one(
        &self,
        query: &str,
        limit: usize,
        server: Option<&str>,
        model_query: Option<&[f32]>,
    ) -> Ranking {
        let mut ranking = self.unranked();
        if limit == 0 {
            return ranking;
        }
        let query = bounded(query);
        let searcher = self.reader.searcher();
        let named = self.named(&searcher, query);
        ranking.named = named.words();
        // Meaning's share shrinks for a query of names (see `Boosts::name_shift`).
        ranking.nameness = self.nameness(&named, query);
        let depth = limit.max(FUSION_DEPTH);
        let need = Need {
            query,
            limit,
            depth,
            server,
            meaning: 1.0 - self.boosts.name_shift * ranking.nameness,
            share: self.named_share(&searcher, &named, server, depth),
            any_named: !named.is_empty(),
        };
        let ranked = self.rank_by_transformer(&need, &mut ranking, model_query)
            || self.rank_by_static(&need, &mut ranking);
        if !ranked {
            self.rank_by_words(&need, &mut ranking);
        }
        self.judge(&mut ranking, query);
        ranking
    }

    /// A ranking with no hits yet: the words' tier, and how many tools still wait for a
    /// transformer vector.
    fn unranked(&self) -> Ranking {
        let waiting = self.transformer.as_ref().map_or(0, |t| {
            let p = t.progress();
            p.tools.saturating_sub(p.ready)
        });
        Ranking {
            hits: Vec::new(),
            tier: Tier::Words,
            shares: Parts {
                lexical: 1.0,
                ..Parts::default()
            },
            named: Vec::new(),
            needs: Vec::new(),
            waiting,
            fits: false,
            nameness: 0.0,
        }
    }

    /// Words, the transformer's cosines and the static tier's fused as z-scores
    /// ([`SearchIndex::explain_with`]); `false` (nothing ranked) unless the transformer is
    /// loaded and every tool has its vector.
    fn rank_by_transformer(
        &self,
        need: &Need<'_>,
        ranking: &mut Ranking,
        model_query: Option<&[f32]>,
    ) -> bool {
        let Some(transformer) = &self.transformer else {
            return false;
        };
        let Need {
            query,
            limit,
            depth,
            server,
            meaning,
            ..
        } = *need;
        let lexical = self.lexical(query, depth, server);
        let fusion = Fusion {
            weight: self.boosts.model_vector * meaning,
            zscore: self.boosts.model_zscore,
            floor: self.boosts.model_floor,
            named: Some((&need.share, self.boosts.named)),
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
                weight: self.boosts.model_static * meaning,
            });
            let hits = fuse(&lexical, vectors, cosines, fusion, statics, depth, limit);
            (hits, statics.map_or(0.0, |s| s.weight))
        });
        let Some((hits, static_weight)) = fused else {
            return false;
        };
        ranking.tier = Tier::Transformer;
        // The last vectors may have landed since `waiting` was read: the transformer
        // ranks only once every tool has one.
        ranking.waiting = 0;
        ranking.shares = shares(fusion, static_weight, need.named(self.boosts.named));
        ranking.hits = hits;
        true
    }

    /// Words and the static tier's cosines fused min-max; `false` (nothing ranked) when
    /// there are no static vectors or the query has none.
    fn rank_by_static(&self, need: &Need<'_>, ranking: &mut Ranking) -> bool {
        let vector = if self.vectors.len() > 0 {
            self.model().and_then(|m| m.embed(need.query))
        } else {
            None
        };
        let Some(vector) = vector else {
            return false;
        };
        let lexical = self.lexical(need.query, need.depth, need.server);
        let cosines = self.vectors.cosines(&vector, need.server);
        let fusion = Fusion {
            weight: self.boosts.vector * need.meaning,
            zscore: false,
            floor: VECTOR_ONLY_FLOOR,
            named: Some((&need.share, self.boosts.static_named)),
        };
        ranking.hits = fuse(
            &lexical,
            &self.vectors,
            &cosines,
            fusion,
            None,
            need.depth,
            need.limit,
        );
        ranking.tier = Tier::Static;
        ranking.shares = shares(fusion, 0.0, need.named(self.boosts.static_named));
        true
    }

    /// The words alone (BM25F), each hit's lexical score its evidence.
    fn rank_by_words(&self, need: &Need<'_>, ranking: &mut Ranking) {
        ranking.hits = (self
            .lexical(need.query, need.limit, need.server)
            .into_iter())
        .enumerate()
        .map(|(rank, r)| {
            let parts = Parts {
                lexical: r.score,
                ..Parts::default()
            };
            Explained::of(r.entry_id(), parts, Some((r.score, rank + 1)), None)
        })
        .collect();
    }
}

/// One need as [`SearchIndex::rank_one`]'s tiers rank it.
struct Need<'a> {
    query: &'a str,
    limit: usize,
    /// How deep each engine looks before fusing (at least [`FUSION_DEPTH`]).
    depth: usize,
    server: Option<&'a str>,
    /// Meaning's share, shrunk for a query of names (see `Boosts::name_shift`).
    meaning: f32,
    /// Per tool, its share of the query's named things.
    share: named::NamedShare,
    any_named: bool,
}

impl Need<'_> {
    /// The named things' share in the shares shown: `weight`, when the query names any.
    fn named(&self, weight: f32) -> f32 {
        if self.any_named { weight } else { 0.0 }
    }
}
