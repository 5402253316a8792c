//! A top-k collector with a total order: score descending, then catalog order ascending.
//!
//! tantivy's `TopDocs` breaks ties by document address, which depends on indexing history;
//! ours breaks them by `(server_index, id)` from a fast field, so equal scores always come
//! out in catalog order.

use std::cmp::Ordering;
use std::collections::BinaryHeap;

use tantivy::collector::{Collector, SegmentCollector};
use tantivy::columnar::Column;
use tantivy::{DocId, Score, SegmentOrdinal, SegmentReader};

use crate::catalog::EntryId;

/// A scored document and its tie-break key; `Ord` puts the better one *first* (smaller).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Ranked {
    pub score: Score,
    pub order: u64,
}

impl Ranked {
    /// The catalog entry: the low half of the order key (see `fields::order_key`).
    pub(crate) fn entry_id(self) -> EntryId {
        EntryId((self.order & u64::from(u32::MAX)) as u32)
    }

    fn cmp_rank(&self, other: &Ranked) -> Ordering {
        other
            .score
            .total_cmp(&self.score)
            .then(self.order.cmp(&other.order))
    }
}

impl PartialEq for Ranked {
    fn eq(&self, other: &Self) -> bool {
        self.cmp_rank(other) == Ordering::Equal
    }
}
impl Eq for Ranked {}
impl PartialOrd for Ranked {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}
impl Ord for Ranked {
    /// Worse ranks are greater, so a max-heap keeps the worst kept hit on top.
    fn cmp(&self, other: &Self) -> Ordering {
        self.cmp_rank(other)
    }
}

pub(crate) struct TopRanked {
    pub limit: usize,
    pub order_field: &'static str,
}

pub(crate) struct TopRankedSegment {
    limit: usize,
    order: Column<u64>,
    heap: BinaryHeap<Ranked>,
}

impl Collector for TopRanked {
    type Fruit = Vec<Ranked>;
    type Child = TopRankedSegment;

    fn for_segment(
        &self,
        _segment_local_id: SegmentOrdinal,
        segment: &SegmentReader,
    ) -> tantivy::Result<TopRankedSegment> {
        Ok(TopRankedSegment {
            limit: self.limit,
            order: segment.fast_fields().u64(self.order_field)?,
            heap: BinaryHeap::with_capacity(self.limit + 1),
        })
    }

    fn requires_scoring(&self) -> bool {
        true
    }

    fn merge_fruits(&self, fruits: Vec<Vec<Ranked>>) -> tantivy::Result<Vec<Ranked>> {
        let mut all: Vec<Ranked> = fruits.into_iter().flatten().collect();
        all.sort();
        all.truncate(self.limit);
        Ok(all)
    }
}

impl SegmentCollector for TopRankedSegment {
    type Fruit = Vec<Ranked>;

    fn collect(&mut self, doc: DocId, score: Score) {
        if self.limit == 0 {
            return;
        }
        let ranked = Ranked {
            score,
            order: self.order.first(doc).unwrap_or(u64::MAX),
        };
        if self.heap.len() < self.limit {
            self.heap.push(ranked);
        } else if let Some(worst) = self.heap.peek()
            && ranked < *worst
        {
            self.heap.pop();
            self.heap.push(ranked);
        }
    }

    fn harvest(self) -> Vec<Ranked> {
        self.heap.into_vec()
    }
}
