//! The meta tools driven through a [`Context`] of the test's own: a real registry fed real
//! lists, and a session that is only what the trait says (its list, how its client
//! re-lists, what it learnt), so each test sets the one thing it is about.

use std::path::Path;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use rmcp::RoleServer;
use rmcp::model::{CallToolRequestParams, CallToolResponse, CallToolResult, Tool};
use rmcp::service::RequestContext;
use serde_json::{Value, json};

use super::{Context, SearchDeadlines};
use crate::catalog::EntryId;
use crate::config::{Config, ExposureMode};
use crate::downstream::Event;
use crate::exposure::ExposedList;
use crate::ingest::{Batch, Registry};
use crate::search::usage::{Kind, Usage};
use crate::server::meta::validate::Validators;
use crate::server::meta::{Relists, error_result, search_tools, select_tools};
use crate::server::view::{Servers, Unknown};
use crate::server_tool::ServerTool;

/// A request state with nothing behind it but a registry: no server runs, no client is
/// connected. Lists in `arriving` enter the registry on the first wait for an arrival,
/// as a server that was still starting would list them.
struct FakeContext {
    config: Arc<Config>,
    registry: Arc<Registry>,
    validators: Validators,
    exposure: ExposureMode,
    exposed: Mutex<ExposedList>,
    relists: Relists,
    /// Whether the client re-lists while a result is held.
    relisted: bool,
    arriving: Mutex<Vec<Event>>,
    /// How many list-changed notifications the client was sent.
    told: AtomicUsize,
    searches: Mutex<Vec<String>>,
    choices: Mutex<Vec<(String, Kind)>>,
}

impl FakeContext {
    /// Servers `a` and `b`; `a` has listed `tools`, `b` is still starting.
    fn new(tools: Vec<Tool>, relists: Relists) -> FakeContext {
        let text = "[mcp_servers.a]\ncommand = \"true\"\n[mcp_servers.b]\ncommand = \"true\"\n";
        let config = Config::parse_with_env(text, Path::new("servers.toml"), &|_| None)
            .unwrap_or_else(|e| panic!("{e}"));
        let registry = Registry::new(&config).unwrap_or_else(|e| panic!("{e}"));
        let context = FakeContext {
            config: Arc::new(config),
            registry: Arc::new(registry),
            validators: Validators::default(),
            exposure: ExposureMode::Deferred,
            exposed: Mutex::new(ExposedList::new()),
            relists,
            relisted: true,
            arriving: Mutex::new(Vec::new()),
            told: AtomicUsize::new(0),
            searches: Mutex::new(Vec::new()),
            choices: Mutex::new(Vec::new()),
        };
        context.enter(vec![listed(0, tools)]);
        context
    }

    fn enter(&self, events: Vec<Event>) {
        let mut batch = Batch::default();
        for event in events {
            assert!(batch.add(event).is_none());
        }
        self.registry.apply(&self.config, batch);
    }

    fn listed_names(&self) -> Vec<String> {
        let exposed = self.exposed.lock().unwrap_or_else(|e| e.into_inner());
        let tools: Vec<Value> = (exposed.snapshot().iter())
            .map(|t| serde_json::from_str(t.json()).unwrap_or_default())
            .collect();
        tools
            .iter()
            .map(|t| t["name"].as_str().unwrap_or_default().to_owned())
            .collect()
    }
}

fn tool(name: &str, description: &str) -> Tool {
    serde_json::from_value(json!({
        "name": name,
        "description": description,
        "inputSchema": {"type": "object", "properties": {"city": {"type": "string"}}}
    }))
    .unwrap_or_else(|e| panic!("{e}"))
}

fn listed(server: usize, tools: Vec<Tool>) -> Event {
    Event::Tools {
        server,
        tools: tools.into_iter().map(ServerTool::from).collect(),
        instructions: None,
        changes: 0,
    }
}

impl Context for FakeContext {
    fn registry(&self) -> &Arc<Registry> {
        &self.registry
    }

    fn view(&self) -> Servers {
        Servers {
            config: self.config.clone(),
            handles: Vec::new().into(),
        }
    }

    fn validators(&self) -> &Validators {
        &self.validators
    }

    fn exposure(&self) -> ExposureMode {
        self.exposure
    }

    fn with_exposed<R>(&self, f: impl FnOnce(&mut ExposedList) -> R) -> R {
        f(&mut self.exposed.lock().unwrap_or_else(|e| e.into_inner()))
    }

    fn reload_problem(&self) -> Option<String> {
        None
    }

    fn starting_servers(&self) -> Vec<String> {
        let arriving = self.arriving.lock().unwrap_or_else(|e| e.into_inner());
        if arriving.is_empty() {
            Vec::new()
        } else {
            vec!["b".to_owned()]
        }
    }

    fn search_deadlines(&self) -> SearchDeadlines {
        let later = tokio::time::Instant::now() + Duration::from_secs(60);
        SearchDeadlines {
            grace: later,
            nothing_fits: later,
        }
    }

    async fn wait_for_arrival(&self, _before: &[String], _deadline: tokio::time::Instant) {
        let arriving =
            std::mem::take(&mut *self.arriving.lock().unwrap_or_else(|e| e.into_inner()));
        self.enter(arriving);
    }

    async fn wait_for_servers_unless(&self, _found: impl Fn() -> bool) {}

    async fn explain_unknown(&self, names: Vec<String>) -> Vec<Unknown> {
        let (servers, catalog, trust) =
            (self.view(), self.registry.catalog(), self.registry.trust());
        (names.iter())
            .map(|name| servers.explain(&catalog, &trust, name))
            .collect()
    }

    async fn route(
        &self,
        _id: EntryId,
        _request: CallToolRequestParams,
        _client_tool: &str,
        _context: &RequestContext<RoleServer>,
    ) -> CallToolResponse {
        error_result("no server runs in these tests").into()
    }

    fn relist_count(&self) -> u64 {
        0
    }

    async fn tools_changed(&self) -> bool {
        self.told.fetch_add(1, Ordering::Relaxed);
        true
    }

    async fn hold_until_relist(&self, _seen: u64, _max: Duration) -> bool {
        self.relisted
    }

    fn relists(&self) -> Relists {
        self.relists
    }

    fn note_search(&self, query: &str, _listed: Vec<String>) {
        (self.searches.lock().unwrap_or_else(|e| e.into_inner())).push(query.to_owned());
    }

    fn note_choice(&self, name: &str, kind: Kind) {
        (self.choices.lock().unwrap_or_else(|e| e.into_inner())).push((name.to_owned(), kind));
    }

    fn usage(&self) -> Option<Arc<Usage>> {
        None
    }
}

fn structured(result: &CallToolResult) -> Value {
    result.structured_content.clone().unwrap_or_default()
}

#[tokio::test]
async fn a_selection_is_appended_announced_and_held_so_its_schemas_are_left_out() {
    let context = FakeContext::new(
        vec![tool("weather", "Forecast for a city.")],
        Relists::WhileHeld,
    );
    let args = select_tools::Args {
        names: vec!["a__weather".to_owned(), "a__nope".to_owned()],
    };
    let answer = structured(&select_tools::apply(&context, &args).await);
    assert_eq!(answer["loaded"], json!(["a__weather"]));
    assert!(
        answer.get("schemas").is_none(),
        "the client re-listed: {answer:#}"
    );
    assert_eq!(answer["unknown"][0]["name"], "a__nope");
    assert_eq!(context.listed_names(), ["a__weather"]);
    assert_eq!(context.told.load(Ordering::Relaxed), 1);
    let choices = context
        .choices
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .clone();
    assert_eq!(choices, [("a__weather".to_owned(), Kind::Selected)]);
}

#[tokio::test]
async fn a_client_that_never_relists_gets_schemas_and_no_append() {
    let context = FakeContext::new(
        vec![tool("weather", "Forecast for a city.")],
        Relists::Never,
    );
    let args = search_tools::Args {
        query: "weather forecast".to_owned(),
        limit: None,
        server: None,
    };
    let answer = structured(&search_tools::apply(&context, &args).await);
    assert_eq!(answer["tools"][0]["name"], "a__weather", "{answer:#}");
    assert_eq!(answer["tools"][0]["loaded"], false);
    assert_eq!(answer["tools"][0]["input_schema"]["type"], "object");
    assert!(context.listed_names().is_empty());
    assert_eq!(context.told.load(Ordering::Relaxed), 0);
    let searches = context
        .searches
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .clone();
    assert_eq!(searches, ["weather forecast"]);
}

#[tokio::test]
async fn a_search_ranks_again_when_a_starting_server_lists() {
    let context = FakeContext::new(vec![tool("clock", "The current time.")], Relists::WhileHeld);
    context
        .arriving
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .push(listed(1, vec![tool("weather", "Forecast for a city.")]));
    let args = search_tools::Args {
        query: "weather forecast".to_owned(),
        limit: None,
        server: None,
    };
    let answer = structured(&search_tools::apply(&context, &args).await);
    assert_eq!(answer["tools"][0]["name"], "b__weather", "{answer:#}");
    assert!(answer.get("starting").is_none(), "b has listed: {answer:#}");
    assert_eq!(
        context.listed_names(),
        ["b__weather"],
        "loaded for a client that re-lists"
    );
}
