//! Ranking tools for `search_tools`. PLACEHOLDER: token overlap, replaced by the tantivy index.
//!
//! A pure function of the documents it is fed: the server feeds it catalog entries as they
//! arrive or change, and it never reaches into the catalog or downstream itself.

use std::collections::BTreeMap;

use rmcp::model::Tool;

use crate::catalog::EntryId;

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

/// One ranked result.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Hit {
    pub id: EntryId,
    pub score: f32,
}

#[derive(Debug, thiserror::Error)]
#[error("search index: {0}")]
pub struct SearchError(String);

#[derive(Debug, Default)]
pub struct SearchIndex {
    docs: BTreeMap<EntryId, (usize, String, String)>,
}

impl SearchIndex {
    /// # Errors
    /// When the index cannot be created.
    pub fn new() -> Result<SearchIndex, SearchError> {
        Ok(SearchIndex::default())
    }

    /// Adds documents, replacing any with the same id.
    ///
    /// # Errors
    /// When the index cannot be written.
    pub fn upsert<'a>(
        &mut self,
        docs: impl IntoIterator<Item = ToolDoc<'a>>,
    ) -> Result<(), SearchError> {
        for doc in docs {
            let text = format!(
                "{} {} {} {}",
                doc.qualified_name,
                doc.tool.description.as_deref().unwrap_or(""),
                serde_json::Value::Object((*doc.tool.input_schema).clone()),
                doc.server_text
            )
            .to_lowercase();
            self.docs
                .insert(doc.id, (doc.server_index, doc.server.to_owned(), text));
        }
        Ok(())
    }

    /// The best `limit` documents for `query`, optionally of one server only.
    pub fn search(&self, query: &str, limit: usize, server: Option<&str>) -> Vec<Hit> {
        let terms: Vec<String> = query
            .to_lowercase()
            .split(|c: char| !c.is_alphanumeric())
            .filter(|t| t.len() > 2)
            .map(str::to_owned)
            .collect();
        let mut hits: Vec<(usize, EntryId, f32)> = self
            .docs
            .iter()
            .filter(|(_, (_, s, _))| server.is_none_or(|want| want == s))
            .map(|(&id, (index, _, text))| {
                let score = terms.iter().filter(|t| text.contains(t.as_str())).count() as f32;
                (*index, id, score)
            })
            .filter(|(_, _, score)| *score > 0.0)
            .collect();
        hits.sort_by(|a, b| b.2.total_cmp(&a.2).then((a.0, a.1).cmp(&(b.0, b.1))));
        hits.into_iter()
            .take(limit)
            .map(|(_, id, score)| Hit { id, score })
            .collect()
    }
}
