//! Every resource and resource template we know, and which server a URI belongs to.
//!
//! URIs are never renamed: a URI is the resource's identity, and clients and models pass it
//! back verbatim. So two servers can list the same URI; the first server in config order
//! owns it, whatever order they connected in (DESIGN.md invariant 2), and the clash is logged
//! once. A URI that no server lists is routed by the templates that match it, in config
//! order. The catalog only grows: a resource a server drops stays known and still routes to
//! the server that listed it. Must not import `downstream`.

use std::collections::{BTreeSet, HashMap, HashSet};
use std::sync::Arc;

use rmcp::model::{Resource, ResourceTemplate};

use super::uri_template;

/// Which servers list (or listed) a URI or a template.
#[derive(Debug, Default)]
struct Owners {
    /// Config indexes of the servers whose latest list has it.
    current: BTreeSet<usize>,
    /// Config indexes of every server that ever listed it.
    ever: BTreeSet<usize>,
}

impl Owners {
    /// The first server in config order that lists it now, else the first that listed it.
    fn owner(&self) -> Option<usize> {
        self.current.first().or_else(|| self.ever.first()).copied()
    }
}

/// One server's latest lists, in its order.
#[derive(Debug, Default, Clone)]
struct Listing {
    resources: Vec<Arc<Resource>>,
    templates: Vec<Arc<ResourceTemplate>>,
}

/// Where a `resources/read` (or subscribe) for one URI goes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Route {
    /// A server lists the URI: the first in config order.
    Listed(usize),
    /// No server lists it; this server's template matches it (the first in config order).
    Template(usize),
    /// Nothing claims it: try the servers that offer resources, in config order.
    Unclaimed,
}

#[derive(Debug, Default)]
pub struct ResourceCatalog {
    /// Per config index; `None` until the server lists resources (it may never: only servers
    /// that declare the capability are asked).
    servers: Vec<Option<Listing>>,
    uris: HashMap<String, Owners>,
    templates: HashMap<String, Owners>,
    /// URIs and templates whose clash between servers was already logged.
    warned: HashSet<String>,
}

impl ResourceCatalog {
    pub fn new() -> ResourceCatalog {
        ResourceCatalog::default()
    }

    /// Takes a server's complete current lists of resources and templates.
    pub fn update_server(
        &mut self,
        server: usize,
        resources: Vec<Resource>,
        templates: Vec<ResourceTemplate>,
    ) {
        if self.servers.len() <= server {
            self.servers.resize_with(server + 1, || None);
        }
        let listing = Listing {
            resources: resources.into_iter().map(Arc::new).collect(),
            templates: templates.into_iter().map(Arc::new).collect(),
        };
        let uris = listing.resources.iter().map(|r| r.uri.as_str());
        record(&mut self.uris, &mut self.warned, server, uris, "resource");
        let templates = listing.templates.iter().map(|t| t.uri_template.as_str());
        record(
            &mut self.templates,
            &mut self.warned,
            server,
            templates,
            "resource template",
        );
        self.servers[server] = Some(listing);
    }

    /// Whether the server has listed resources: it declared the capability.
    pub fn offers_resources(&self, server: usize) -> bool {
        self.servers.get(server).is_some_and(Option::is_some)
    }

    /// Config indexes of the servers that offer resources, in config order.
    pub fn servers(&self) -> impl Iterator<Item = usize> + '_ {
        (0..self.servers.len()).filter(|&i| self.offers_resources(i))
    }

    /// Where a request about `uri` goes (see the module doc).
    pub fn route(&self, uri: &str) -> Route {
        if let Some(owner) = self.uris.get(uri).and_then(Owners::owner) {
            return Route::Listed(owner);
        }
        for (index, listing) in self.servers.iter().enumerate() {
            let Some(listing) = listing else { continue };
            if listing
                .templates
                .iter()
                .any(|t| uri_template::matches(&t.uri_template, uri))
            {
                return Route::Template(index);
            }
        }
        Route::Unclaimed
    }

    /// The server that owns a template (by its URI template), for `completion/complete`.
    pub fn template_owner(&self, template: &str) -> Option<usize> {
        self.templates.get(template).and_then(Owners::owner)
    }

    /// Every server's latest resources, in config order (a URI listed twice comes twice).
    pub fn resources(&self) -> impl Iterator<Item = &Resource> {
        self.servers
            .iter()
            .flatten()
            .flat_map(|l| l.resources.iter().map(|r| &**r))
    }

    /// One server's latest resources, in its order.
    pub fn server_resources(&self, server: usize) -> impl Iterator<Item = &Resource> {
        self.servers
            .get(server)
            .into_iter()
            .flatten()
            .flat_map(|l| l.resources.iter().map(|r| &**r))
    }

    /// Every server's latest templates, in config order.
    pub fn templates(&self) -> impl Iterator<Item = &ResourceTemplate> {
        self.servers
            .iter()
            .flatten()
            .flat_map(|l| l.templates.iter().map(|t| &**t))
    }

    /// One server's latest templates, in its order.
    pub fn server_templates(&self, server: usize) -> impl Iterator<Item = &ResourceTemplate> {
        self.servers
            .get(server)
            .into_iter()
            .flatten()
            .flat_map(|l| l.templates.iter().map(|t| &**t))
    }
}

/// Records that `server` now lists exactly `keys`, and logs each key first found on a
/// second server.
fn record<'a>(
    owners: &mut HashMap<String, Owners>,
    warned: &mut HashSet<String>,
    server: usize,
    keys: impl Iterator<Item = &'a str>,
    what: &str,
) {
    let listed: HashSet<&str> = keys.collect();
    for known in owners.values_mut() {
        known.current.remove(&server);
    }
    for key in &listed {
        let entry = owners.entry((*key).to_owned()).or_default();
        entry.current.insert(server);
        entry.ever.insert(server);
        if entry.ever.len() > 1 && warned.insert((*key).to_owned()) {
            tracing::warn!(
                uri = key,
                servers = ?entry.ever,
                owner = ?entry.owner(),
                "{what} listed by more than one server; the first in config order owns it"
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn resource(uri: &str) -> Resource {
        Resource::new(uri, uri)
    }

    fn template(uri_template: &str) -> ResourceTemplate {
        ResourceTemplate::new(uri_template, uri_template)
    }

    #[test]
    fn the_first_server_in_config_order_owns_a_shared_uri_whatever_the_arrival_order() {
        let mut late_first = ResourceCatalog::new();
        late_first.update_server(2, vec![resource("file:///a")], vec![]);
        late_first.update_server(1, vec![resource("file:///a")], vec![]);
        let mut early_first = ResourceCatalog::new();
        early_first.update_server(1, vec![resource("file:///a")], vec![]);
        early_first.update_server(2, vec![resource("file:///a")], vec![]);
        assert_eq!(late_first.route("file:///a"), Route::Listed(1));
        assert_eq!(early_first.route("file:///a"), Route::Listed(1));
    }

    #[test]
    fn a_server_that_drops_a_shared_uri_hands_it_to_the_next_one() {
        let mut catalog = ResourceCatalog::new();
        catalog.update_server(0, vec![resource("file:///a")], vec![]);
        catalog.update_server(1, vec![resource("file:///a")], vec![]);
        catalog.update_server(0, vec![], vec![]);
        assert_eq!(catalog.route("file:///a"), Route::Listed(1));
        // Dropped everywhere: still routed to the first server that listed it.
        catalog.update_server(1, vec![], vec![]);
        assert_eq!(catalog.route("file:///a"), Route::Listed(0));
    }

    #[test]
    fn unlisted_uris_go_to_the_first_matching_template_then_nowhere() {
        let mut catalog = ResourceCatalog::new();
        catalog.update_server(0, vec![], vec![template("notes://{id}")]);
        catalog.update_server(1, vec![], vec![template("demo://text/{id}")]);
        catalog.update_server(2, vec![], vec![template("demo://{+path}")]);
        assert_eq!(catalog.route("demo://text/7"), Route::Template(1));
        assert_eq!(catalog.route("demo://blob/7"), Route::Template(2));
        assert_eq!(catalog.route("other://7"), Route::Unclaimed);
        assert_eq!(catalog.template_owner("demo://text/{id}"), Some(1));
        assert_eq!(catalog.template_owner("demo://text/{x}"), None);
    }

    #[test]
    fn only_servers_that_listed_offer_resources() {
        let mut catalog = ResourceCatalog::new();
        catalog.update_server(2, vec![], vec![]);
        catalog.update_server(0, vec![resource("a://1")], vec![]);
        assert_eq!(catalog.servers().collect::<Vec<_>>(), [0, 2]);
        assert!(!catalog.offers_resources(1));
        let uris: Vec<&str> = catalog.resources().map(|r| r.uri.as_str()).collect();
        assert_eq!(uris, ["a://1"]);
    }
}
