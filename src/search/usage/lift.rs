//! Where learnt use meets a ranking: the query's key, the evidence of its similar stored
//! queries, and the lift of the ranked tools they chose.

use std::collections::HashMap;
use std::sync::Arc;

use super::{QueryKey, Usage, Weights, saturate};
use crate::search::query::bounded;
use crate::search::{Explained, SearchIndex, analysis};

impl SearchIndex {
    /// Hands the index what was learnt from use: from now on it lifts the tools chosen for
    /// queries like the one ranked ([`super`]).
    pub fn set_usage(&mut self, usage: Arc<Usage>) {
        self.usage = Some(usage);
    }

    /// What was learnt from use, if this index looks at it.
    pub fn usage(&self) -> Option<&Arc<Usage>> {
        self.usage.as_ref()
    }

    /// How `text` is compared with stored queries: its static vector, or its words when
    /// this index has no static model (`semantic = "off"`).
    fn usage_key(&self, text: &str) -> Option<QueryKey> {
        let text = bounded(text);
        match self.model() {
            Some(model) => model.embed(text).map(QueryKey::Vector),
            None => {
                let mut words = analysis::tokens(&self.analyzers.text, text);
                words.sort();
                words.dedup();
                (!words.is_empty()).then_some(QueryKey::Words(words))
            }
        }
    }

    /// Per tool (qualified name), the evidence in `usage` for `query`; `None` when use is
    /// not looked at or says nothing about it.
    pub(in crate::search) fn usage_evidence(
        &self,
        usage: &Usage,
        query: &str,
    ) -> Option<HashMap<String, f32>> {
        if self.boosts.usage == 0.0 || usage.is_empty() {
            return None;
        }
        let key = self.usage_key(query)?;
        let floor = match key {
            QueryKey::Vector(_) => self.boosts.usage_floor,
            QueryKey::Words(_) => self.boosts.usage_words_floor,
        };
        let weights = Weights {
            floor,
            selected: self.boosts.usage_selected,
        };
        let evidence = usage.evidence(&key, weights, |text| self.usage_key(text));
        (!evidence.is_empty()).then_some(evidence)
    }

    /// Lifts each of `hits` (best first) that use chose by its saturated evidence, at most
    /// [`Boosts::usage`](crate::search::Boosts::usage) of the best score, re-ranks (ties
    /// keep their order) and keeps the first `limit`.
    pub(in crate::search) fn lift(
        &self,
        hits: &mut Vec<Explained>,
        evidence: &HashMap<String, f32>,
        limit: usize,
    ) {
        let best = hits.first().map_or(0.0, |h| h.score);
        if best > 0.0 {
            let most = self.boosts.usage * best;
            for hit in hits.iter_mut() {
                let chosen = (self.names.get(&hit.id)).and_then(|name| evidence.get(name));
                if let Some(&e) = chosen {
                    hit.parts.usage = most * saturate(e);
                    hit.score += hit.parts.usage;
                }
            }
            hits.sort_by(|a, b| b.score.total_cmp(&a.score));
        }
        hits.truncate(limit);
    }
}
