//! Index upkeep: adding and removing documents, the exact-name keys, and the commit policy
//! that keeps BM25 statistics independent of segment layout (DESIGN.md invariant 2: scores
//! and so ties depend only on what was fed, in what order).

use std::collections::HashSet;

use tantivy::index::{Segment, SegmentId};
use tantivy::indexer::{AddOperation, NoMergePolicy, SegmentWriter};
use tantivy::{IndexWriter, TantivyDocument, Term};

use super::analysis::{key_hash, name_key};
use super::embedding::{EMBED_CHUNK, EmbedWorker, Embedded, embed_in_background};
use super::{
    Document, SearchError, SearchIndex, Semantic, StaticModel, ToolDoc, fields, transformer,
};
use crate::catalog::EntryId;

/// A batch's segment is closed once it holds this much (tantivy's own writer flushes at its
/// budget less 1 MB): large enough that a 10k-tool first load is one segment, not several
/// that must then be merged.
const SEGMENT_MEMORY: usize = 63_000_000;
/// What sizes a batch's term table (tantivy: the largest power of two slots, 8 bytes each,
/// under a third of it): 2^15 slots, 256 KiB, doubling as terms come. tantivy's
/// `IndexWriter` sizes it by its budget, whose minimum (15 MB) gives 2^19 slots, 4 MiB
/// written at creation, so resident for each batch however small.
const TABLE_BUDGET: usize = 1_000_000;
/// The writer that deletes and commits: it indexes no document (they are written into
/// segments on the caller's thread, [`Building`]), so its arena is never made; tantivy's
/// minimum.
const WRITER_MEMORY: usize = 15_000_000;
/// When a commit leaves more segments than this, the small ones are merged (all of them into
/// the largest once they hold 1/[`MERGE_ALL_RATIO`] of its documents). Every term clause
/// costs per segment (MetaTool p50 ~125 µs with one segment, ~220 µs with four); merging
/// everything after each upsert made adding one server to a 10k index cost ~200 ms, merging
/// the small ones costs what they hold, and the occasional full merge is amortised over the
/// growth that triggered it. Merging is synchronous and depends only on the upsert sequence.
const MAX_SEGMENTS: usize = 2;
const MERGE_ALL_RATIO: u32 = 8;

impl SearchIndex {
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
        // Written here, not through an `IndexWriter`: its indexing thread takes documents
        // through a 10,000-slot channel (made at creation and again at commit, ~2 MiB each,
        // written), faster made than indexed (10.4 MiB of them waiting at the 10k peak), into
        // a segment writer whose term table is 4 MiB however few the documents.
        let mut building = Building::new(&self.index)?;
        // Segments closed before the batch ends (at their budget, or at an id given twice):
        // written out, so a batch holds one segment writer at a time.
        let mut built: Vec<Built> = Vec::new();
        let threads = std::thread::available_parallelism().map_or(1, |n| n.get().min(4));
        let chunk = docs.len().div_ceil(threads).max(EMBED_CHUNK);
        // Per document, what its vector is filed under once its worker is done.
        let mut filed: Vec<(EntryId, u64, String)> = Vec::with_capacity(docs.len());
        std::thread::scope(|scope| -> Result<(), SearchError> {
            let mut workers: Vec<EmbedWorker<'_>> = Vec::new();
            let mut texts: Vec<String> = Vec::new();
            for doc in &docs {
                doc.with_doc(|doc| -> Result<(), SearchError> {
                    let replaces = self.keys_by_doc.contains_key(&doc.id);
                    // Ids are unique within a segment, and a segment stops at its budget.
                    if building.ids.contains(&doc.id)
                        || building.writer.mem_usage() >= SEGMENT_MEMORY
                    {
                        let next = Building::new(&self.index)?;
                        built.extend(std::mem::replace(&mut building, next).finish()?);
                    }
                    let document = self.fields.document(doc, &mut self.analyzers.index_text);
                    building.add(doc.id, replaces, document)?;
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
            let dims = model.map_or(0, StaticModel::dims);
            for (len, worker) in workers {
                let vectors = worker.join().unwrap_or_else(|_| {
                    tracing::error!("embedding worker panicked; those tools rank by words only");
                    Embedded::default()
                });
                for (i, (id, order, server)) in filed.by_ref().take(len).enumerate() {
                    (self.vectors).set_quantized(*id, *order, server, vectors.get(i, dims));
                }
            }
            Ok(())
        })?;
        built.extend(building.finish()?);
        for segment in built {
            self.publish(segment)?;
        }
        Ok(())
    }

    /// Lays `built` on the index: first the deletes of the documents it replaces, with one
    /// writer, committed; then the segment, with a writer of its own (a writer's delete queue
    /// would apply deletes issued before the segment was added to it too), committed with
    /// [`SearchIndex::commit`]'s merges and reader reload.
    fn publish(&mut self, built: Built) -> Result<(), SearchError> {
        if !built.replaced.is_empty() {
            let mut writer = self.writer()?;
            for &id in &built.replaced {
                writer.delete_term(self.id_term(id));
            }
            writer.commit()?;
            writer.wait_merging_threads()?;
        }
        let writer = self.writer()?;
        writer.add_segment(built.segment)?;
        self.commit(writer)
    }

    /// A writer for one batch's deletes, commit and merges.
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
        (self.names).insert(doc.id, doc.qualified_name.to_owned());
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
            self.names.remove(&id);
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
    pub(super) fn model(&self) -> Option<&'static StaticModel> {
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
            let keys: Box<[u64]> = keys.iter().map(|k| key_hash(k)).collect();
            for &key in &keys {
                *self.key_counts.entry(key).or_default() += 1;
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
}

/// One segment of a batch, written on the caller's thread in the order given: documents get
/// ids in that order, as with one indexing thread.
struct Building {
    writer: SegmentWriter,
    segment: Segment,
    /// The ids in this segment, each once.
    ids: HashSet<EntryId>,
    /// Those that replace a document already in the index (or in an earlier segment of the
    /// batch): deleted before this segment is added.
    replaced: Vec<EntryId>,
}

/// A written segment, and the ids it replaces. Its files are tantivy's to collect only once
/// its `SegmentMeta` is dropped (tantivy keeps every live one's files), so a commit in
/// between leaves them.
struct Built {
    segment: tantivy::index::SegmentMeta,
    replaced: Vec<EntryId>,
}

impl Building {
    fn new(index: &tantivy::Index) -> Result<Building, SearchError> {
        let segment = index.new_segment();
        Ok(Building {
            writer: SegmentWriter::for_segment(TABLE_BUDGET, segment.clone())?,
            segment,
            ids: HashSet::new(),
            replaced: Vec::new(),
        })
    }

    /// `replaces`: a document with this id is in the index. One in an earlier segment of the
    /// batch started this one, so it replaces too.
    fn add(
        &mut self,
        id: EntryId,
        replaces: bool,
        document: TantivyDocument,
    ) -> Result<(), SearchError> {
        self.ids.insert(id);
        if replaces {
            self.replaced.push(id);
        }
        // Opstamps order a writer's deletes against its documents; this segment is added
        // after its deletes are committed, so none applies to it.
        (self.writer).add_document(AddOperation {
            opstamp: 0,
            document,
        })?;
        Ok(())
    }

    /// Writes the segment's files; `None` when it has no document.
    fn finish(self) -> Result<Option<Built>, SearchError> {
        let max_doc = self.writer.max_doc();
        if max_doc == 0 {
            return Ok(None);
        }
        self.writer.finalize()?;
        let segment = self.segment.with_max_doc(max_doc).meta().clone();
        // As tantivy's indexing thread does: the store is written in place, no temp file.
        segment.untrack_temp_docstore();
        Ok(Some(Built {
            segment,
            replaced: self.replaced,
        }))
    }
}
