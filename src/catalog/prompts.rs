//! Every prompt we know, from every server, keyed by the same [`QualifiedName`] rule as tools.
//!
//! Like the tool catalog it only grows: a prompt a server stops listing is marked gone, keeps
//! its name, and `prompts/get` on it answers an error naming the server. Prompt names are
//! their own namespace (a prompt may share its qualified name with a tool). Iteration is in
//! config order. Must not import `downstream`.

use std::collections::{HashMap, HashSet};
use std::sync::Arc;

use rmcp::model::Prompt;

use super::{QualifiedName, ServerKey};

/// One downstream prompt.
#[derive(Debug, Clone)]
pub struct PromptEntry {
    pub name: QualifiedName,
    /// The server's position in the config.
    pub server_index: usize,
    /// The prompt exactly as the server last listed it (its original name included).
    pub prompt: Arc<Prompt>,
    /// The server no longer lists it.
    pub gone: bool,
}

impl PromptEntry {
    /// The prompt's name on its own server.
    pub fn original_name(&self) -> &str {
        &self.prompt.name
    }

    /// The prompt as the client sees it: the downstream definition with only `name`
    /// replaced by its qualified name.
    pub fn listed_form(&self) -> Prompt {
        let mut prompt = (*self.prompt).clone();
        prompt.name = self.name.as_str().to_owned();
        prompt
    }
}

#[derive(Debug, Default)]
pub struct PromptCatalog {
    max_name_length: usize,
    entries: Vec<PromptEntry>,
    by_name: HashMap<QualifiedName, usize>,
    by_original: HashMap<(usize, String), usize>,
    /// Per config index, the server's entries in the order it first listed them.
    servers: Vec<Vec<usize>>,
}

impl PromptCatalog {
    pub fn new(max_name_length: usize) -> PromptCatalog {
        PromptCatalog {
            max_name_length,
            ..PromptCatalog::default()
        }
    }

    /// Takes a server's complete current prompt list. Returns how many prompts are new.
    /// Names are assigned in the server's list order, so the same lists give the same names.
    pub fn update_server(&mut self, server: ServerKey<'_>, prompts: Vec<Prompt>) -> usize {
        if self.servers.len() <= server.index {
            self.servers.resize_with(server.index + 1, Vec::new);
        }
        let mut added = 0;
        let mut listed = HashSet::with_capacity(prompts.len());
        for prompt in prompts {
            let key = (server.index, prompt.name.clone());
            match self.by_original.get(&key).copied() {
                Some(at) => {
                    let entry = &mut self.entries[at];
                    entry.gone = false;
                    if *entry.prompt != prompt {
                        entry.prompt = Arc::new(prompt);
                    }
                    listed.insert(at);
                }
                None => {
                    let name = QualifiedName::assign(
                        server.name,
                        server.prefix,
                        &prompt.name,
                        self.max_name_length,
                        |candidate| self.by_name.contains_key(candidate),
                    );
                    super::warn_if_renamed(server, "prompt", &prompt.name, &name);
                    let at = self.entries.len();
                    self.by_name.insert(name.clone(), at);
                    self.by_original.insert(key, at);
                    self.entries.push(PromptEntry {
                        name,
                        server_index: server.index,
                        prompt: Arc::new(prompt),
                        gone: false,
                    });
                    self.servers[server.index].push(at);
                    listed.insert(at);
                    added += 1;
                }
            }
        }
        for &at in &self.servers[server.index] {
            if !listed.contains(&at) {
                self.entries[at].gone = true;
            }
        }
        added
    }

    pub fn by_name(&self, name: &str) -> Option<&PromptEntry> {
        self.by_name.get(name).map(|&at| &self.entries[at])
    }

    /// Every entry, gone ones included, in config order.
    pub fn iter(&self) -> impl Iterator<Item = &PromptEntry> {
        self.servers.iter().flatten().map(|&at| &self.entries[at])
    }

    /// One server's entries, in the order it first listed them.
    pub fn server_entries(&self, index: usize) -> impl Iterator<Item = &PromptEntry> {
        self.servers
            .get(index)
            .into_iter()
            .flatten()
            .map(|&at| &self.entries[at])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn prompt(name: &str) -> Prompt {
        Prompt::new(name, Some("a prompt"), None)
    }

    fn key(name: &'static str, index: usize) -> ServerKey<'static> {
        ServerKey {
            name,
            prefix: name,
            index,
        }
    }

    fn names(catalog: &PromptCatalog) -> Vec<(String, bool)> {
        catalog
            .iter()
            .map(|e| (e.name.to_string(), e.gone))
            .collect()
    }

    #[test]
    fn names_follow_the_tool_rule_and_iterate_in_config_order() {
        let mut catalog = PromptCatalog::new(64);
        catalog.update_server(key("b", 1), vec![prompt("review code")]);
        catalog.update_server(key("a", 0), vec![prompt("simple-prompt")]);
        assert_eq!(
            names(&catalog),
            [
                ("a__simple-prompt".to_owned(), false),
                ("b__review_code".to_owned(), false)
            ]
        );
        let entry = catalog.by_name("b__review_code");
        assert_eq!(entry.map(PromptEntry::original_name), Some("review code"));
        assert_eq!(
            entry.map(|e| e.listed_form().name).as_deref(),
            Some("b__review_code")
        );
    }

    #[test]
    fn a_dropped_prompt_is_gone_but_keeps_its_name() {
        let mut catalog = PromptCatalog::new(64);
        assert_eq!(
            catalog.update_server(key("s", 0), vec![prompt("one"), prompt("two")]),
            2
        );
        assert_eq!(catalog.update_server(key("s", 0), vec![prompt("two")]), 0);
        assert_eq!(
            names(&catalog),
            [("s__one".to_owned(), true), ("s__two".to_owned(), false)]
        );
        catalog.update_server(key("s", 0), vec![prompt("one"), prompt("two")]);
        assert_eq!(catalog.by_name("s__one").map(|e| e.gone), Some(false));
    }

    #[test]
    fn long_names_get_the_hash_suffix() {
        let mut catalog = PromptCatalog::new(24);
        catalog.update_server(key("srv", 0), vec![prompt(&"p".repeat(40))]);
        let name = catalog.iter().map(|e| e.name.to_string()).next();
        assert_eq!(name.map(|n| n.len()), Some(24));
    }
}
