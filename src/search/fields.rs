//! The index schema and how one [`ToolDoc`] becomes a tantivy document.
//!
//! Each kind of text gets its own field so it gets its own analyzer, its own length
//! normalisation and its own boost at query time (BM25F in spirit).

use serde_json::Value;
use tantivy::TantivyDocument;
use tantivy::schema::{
    FAST, Field, INDEXED, IndexRecordOption, STRING, Schema, TextFieldIndexing, TextOptions,
};
use tantivy::tokenizer::TextAnalyzer;

use super::ToolDoc;
use super::analysis::{IDENT, PLAIN, PREFIX, TEXT, TOPICS, ident_words, name_key};
use super::concepts;

/// How deep into an `inputSchema` parameters are collected.
const MAX_SCHEMA_DEPTH: usize = 6;
/// Cap on collected schema strings per tool, so a huge schema cannot bloat the index.
const MAX_SCHEMA_ITEMS: usize = 512;

#[derive(Debug, Clone, Copy)]
pub(crate) struct Fields {
    /// `EntryId`, for delete-by-term.
    pub id: Field,
    /// `(server_index << 32) | id`: the tie-break order.
    pub order: Field,
    /// The server name, untokenized, for the `server` filter.
    pub server_exact: Field,
    /// Compact whole names (see [`name_key`]): original, qualified, `server` + `tool`.
    pub name_key: Field,
    /// Name parts of the original and qualified names, stemmed.
    pub name: Field,
    /// Name parts cut to a prefix.
    pub name_prefix: Field,
    pub title: Field,
    pub description: Field,
    /// The description unstemmed.
    pub description_plain: Field,
    /// The description cut to prefixes.
    pub description_prefix: Field,
    pub params: Field,
    pub param_text: Field,
    pub enums: Field,
    pub server: Field,
    pub server_text: Field,
    /// Every text above, per analyzer, only for document frequencies: a term's IDF is taken
    /// over the whole tool, not one field (BM25F), so a word common in descriptions is not
    /// rare just because few names contain it.
    pub all_ident: Field,
    pub all_plain: Field,
    pub all_prefix: Field,
    /// Topics of the tool's words (see `concepts`), one token per mention.
    pub topics: Field,
}

fn text(tokenizer: &str) -> TextOptions {
    TextOptions::default().set_indexing_options(
        TextFieldIndexing::default()
            .set_tokenizer(tokenizer)
            .set_index_option(IndexRecordOption::WithFreqs),
    )
}

fn basic(tokenizer: &str) -> TextOptions {
    TextOptions::default().set_indexing_options(
        TextFieldIndexing::default()
            .set_tokenizer(tokenizer)
            .set_fieldnorms(false)
            .set_index_option(IndexRecordOption::Basic),
    )
}

impl Fields {
    pub(super) fn schema() -> (Schema, Fields) {
        let mut b = Schema::builder();
        let fields = Fields {
            id: b.add_u64_field("id", INDEXED),
            order: b.add_u64_field("order", FAST),
            server_exact: b.add_text_field("server_exact", STRING),
            name_key: b.add_text_field("name_key", STRING),
            name: b.add_text_field("name", text(IDENT)),
            name_prefix: b.add_text_field("name_prefix", text(PREFIX)),
            title: b.add_text_field("title", text(TEXT)),
            description: b.add_text_field("description", text(TEXT)),
            description_plain: b.add_text_field("description_plain", text(PLAIN)),
            description_prefix: b.add_text_field("description_prefix", text(PREFIX)),
            params: b.add_text_field("params", text(IDENT)),
            param_text: b.add_text_field("param_text", text(TEXT)),
            enums: b.add_text_field("enums", text(TEXT)),
            server: b.add_text_field("server", text(IDENT)),
            server_text: b.add_text_field("server_text", text(TEXT)),
            all_ident: b.add_text_field("all_ident", basic(IDENT)),
            all_plain: b.add_text_field("all_plain", basic(PLAIN)),
            all_prefix: b.add_text_field("all_prefix", basic(PREFIX)),
            topics: b.add_text_field("topics", text(TOPICS)),
        };
        (b.build(), fields)
    }

    /// `text` is the index-side text analyzer, whose stems the topic lexicon is keyed by.
    pub(super) fn document(&self, doc: &ToolDoc<'_>, text: &mut TextAnalyzer) -> TantivyDocument {
        let mut d = self.fields_document(doc);
        let mut all = String::new();
        for (field, value) in d.field_values() {
            if [
                self.id,
                self.order,
                self.server_exact,
                self.name_key,
                self.description_plain,
                self.description_prefix,
                self.name_prefix,
            ]
            .contains(&field)
            {
                continue;
            }
            if let Some(text) = tantivy::schema::Value::as_str(&value) {
                all.push_str(text);
                all.push_str(" \n ");
            }
        }
        d.add_text(self.all_ident, &all);
        d.add_text(self.all_plain, &all);
        d.add_text(self.all_prefix, &all);
        d.add_text(self.topics, concepts::document_topics(text, &all));
        d
    }

    fn fields_document(&self, doc: &ToolDoc<'_>) -> TantivyDocument {
        let tool = doc.tool;
        let mut d = TantivyDocument::default();
        d.add_u64(self.id, u64::from(doc.id.0));
        d.add_u64(self.order, order_key(doc.server_index, doc.id.0));
        d.add_text(self.server_exact, doc.server);

        let original: &str = &tool.name;
        let mut keys = vec![
            name_key(original),
            name_key(doc.qualified_name),
            name_key(&format!("{}{}", doc.server, original)),
        ];
        keys.sort();
        keys.dedup();
        for key in keys.iter().filter(|k| !k.is_empty()) {
            d.add_text(self.name_key, key);
        }

        d.add_text(self.name, original);
        d.add_text(self.name_prefix, original);

        let mut title = String::new();
        if let Some(t) = &tool.title {
            title.push_str(t);
        }
        if let Some(t) = tool.annotations.as_ref().and_then(|a| a.title.as_ref())
            && t != &title
        {
            title.push_str(" \n ");
            title.push_str(t);
        }
        if let Some(hint) = tool
            .meta
            .as_ref()
            .and_then(|m| m.get("anthropic/searchHint"))
            .and_then(Value::as_str)
        {
            title.push_str(" \n ");
            title.push_str(hint);
        }
        if !title.is_empty() {
            d.add_text(self.title, &title);
        }

        if let Some(description) = tool.description.as_deref() {
            d.add_text(self.description, description);
            d.add_text(self.description_plain, description);
            d.add_text(self.description_prefix, description);
        }

        let mut schema = SchemaText::default();
        if let Some(props) = tool.input_schema.get("properties") {
            schema.properties(props, 0);
        }
        for def in ["$defs", "definitions"] {
            if let Some(Value::Object(defs)) = tool.input_schema.get(def) {
                for v in defs.values() {
                    schema.node(v, 1);
                }
            }
        }
        if !schema.names.is_empty() {
            d.add_text(self.params, schema.names.join(" \n "));
        }
        if !schema.text.is_empty() {
            d.add_text(self.param_text, schema.text.join(" \n "));
        }
        if !schema.enums.is_empty() {
            d.add_text(self.enums, schema.enums.join(" \n "));
        }

        d.add_text(self.server, doc.server);
        // A configured `prefix` replaces the server name in qualified names: index it too.
        if let Some((prefix, _)) = doc.qualified_name.split_once(crate::catalog::SEPARATOR)
            && prefix != doc.server
        {
            d.add_text(self.server, prefix);
        }
        if !doc.server_text.is_empty() {
            d.add_text(self.server_text, doc.server_text);
        }
        d
    }
}

/// The text a tool's vector is computed from: what the lexical index holds of the tool
/// itself (name parts, title, description, parameter names and texts) and the server's
/// name, as words. Not the server's text: shared by all its tools and often long, it pulls
/// their mean vectors together (MetaTool multi R@5 0.768 with it, 0.778 without; reference
/// 0.810 / 0.814), and the lexical side still indexes it.
pub(crate) fn embedding_text(doc: &ToolDoc<'_>) -> String {
    let tool = doc.tool;
    let mut parts: Vec<String> = vec![ident_words(&tool.name)];
    if let Some(t) = &tool.title {
        parts.push(t.to_string());
    }
    if let Some(d) = tool.description.as_deref() {
        parts.push(d.to_owned());
    }
    let mut schema = SchemaText::default();
    if let Some(props) = tool.input_schema.get("properties") {
        schema.properties(props, 0);
    }
    parts.extend(schema.names.iter().map(|n| ident_words(n)));
    parts.extend(schema.text);
    parts.push(ident_words(doc.server));
    parts.join(" \n ")
}

pub(crate) fn order_key(server_index: usize, id: u32) -> u64 {
    ((server_index.min(u32::MAX as usize) as u64) << 32) | u64::from(id)
}

/// Strings collected from an `inputSchema`.
#[derive(Default)]
struct SchemaText {
    names: Vec<String>,
    text: Vec<String>,
    enums: Vec<String>,
}

impl SchemaText {
    fn full(&self) -> bool {
        self.names.len() + self.text.len() + self.enums.len() >= MAX_SCHEMA_ITEMS
    }

    fn properties(&mut self, props: &Value, depth: usize) {
        let Value::Object(props) = props else { return };
        for (name, node) in props {
            if self.full() {
                return;
            }
            self.names.push(name.clone());
            self.node(node, depth + 1);
        }
    }

    fn node(&mut self, node: &Value, depth: usize) {
        if depth > MAX_SCHEMA_DEPTH || self.full() {
            return;
        }
        let Value::Object(node) = node else { return };
        for key in ["description", "title"] {
            if let Some(Value::String(s)) = node.get(key) {
                self.text.push(s.clone());
            }
        }
        if let Some(Value::Array(values)) = node.get("enum") {
            self.enums
                .extend(values.iter().filter_map(Value::as_str).map(str::to_owned));
        }
        if let Some(Value::String(c)) = node.get("const") {
            self.enums.push(c.clone());
        }
        if let Some(props) = node.get("properties") {
            self.properties(props, depth);
        }
        match node.get("items") {
            Some(items @ Value::Object(_)) => self.node(items, depth + 1),
            Some(Value::Array(items)) => items.iter().for_each(|i| self.node(i, depth + 1)),
            _ => {}
        }
        for key in ["anyOf", "oneOf", "allOf"] {
            if let Some(Value::Array(alts)) = node.get(key) {
                alts.iter().for_each(|a| self.node(a, depth + 1));
            }
        }
    }
}
