use std::path::Path;

use rmcp::model::{Prompt, Resource, Tool};
use serde_json::json;

use super::*;

fn config(servers: &[&str]) -> Arc<Config> {
    let text: String = servers
        .iter()
        .map(|name| format!("[mcp_servers.{name}]\ncommand = \"true\"\n"))
        .collect();
    let config = Config::parse_with_env(&text, Path::new("servers.toml"), &|_| None)
        .unwrap_or_else(|e| panic!("{e}"));
    Arc::new(config)
}

fn tool(name: &str, description: &str) -> Tool {
    serde_json::from_value(json!({
        "name": name,
        "description": description,
        "inputSchema": {"type": "object"}
    }))
    .unwrap_or_else(|e| panic!("{e}"))
}

fn tools(server: usize, tools: Vec<Tool>, instructions: Option<&str>) -> Event {
    Event::Tools {
        server,
        tools: tools.into_iter().map(ServerTool::from).collect(),
        instructions: instructions.map(str::to_owned),
        changes: 0,
    }
}

fn apply(registry: &Registry, config: &Config, events: Vec<Event>) -> Update {
    let mut batch = Batch::default();
    for event in events {
        assert!(batch.add(event).is_none());
    }
    registry.apply(config, batch)
}

fn found(registry: &Registry, query: &str) -> Vec<String> {
    let catalog = registry.catalog();
    (registry.index().search(query, 10, None).iter())
        .filter_map(|hit| catalog.get(hit.id))
        .map(|entry| entry.name.to_string())
        .collect()
}

#[test]
fn a_batch_of_lists_is_catalogued_and_searchable_in_one_apply() {
    let config = config(&["a", "b"]);
    let registry = Registry::new(&config).unwrap_or_else(|e| panic!("{e}"));
    assert!(!registry.is_searchable(0) && !registry.is_searchable(1));
    let update = apply(
        &registry,
        &config,
        vec![
            tools(1, vec![tool("weather", "Forecast for a city.")], None),
            tools(0, vec![tool("clock", "The current time in a zone.")], None),
        ],
    );
    let servers: Vec<usize> = update.tools.iter().map(|(s, _)| *s).collect();
    assert_eq!(servers, [1, 0], "in the order the lists came");
    assert!(registry.is_searchable(0) && registry.is_searchable(1));
    assert_eq!(found(&registry, "forecast"), ["b__weather"]);
    assert_eq!(found(&registry, "current time"), ["a__clock"]);
    let names: Vec<String> = (registry.catalog().iter())
        .map(|e| e.name.to_string())
        .collect();
    assert_eq!(names, ["a__clock", "b__weather"], "config order");
}

#[test]
fn new_handshake_instructions_reindex_every_tool_of_the_server() {
    let config = config(&["a"]);
    let registry = Registry::new(&config).unwrap_or_else(|e| panic!("{e}"));
    apply(
        &registry,
        &config,
        vec![tools(0, vec![tool("t", "Does things.")], None)],
    );
    assert!(found(&registry, "zeppelin").is_empty());
    let update = apply(
        &registry,
        &config,
        vec![tools(
            0,
            vec![tool("t", "Does things.")],
            Some("Zeppelin fleet."),
        )],
    );
    assert!(
        update.tools[0].1.is_empty(),
        "the tool itself did not change"
    );
    assert_eq!(found(&registry, "zeppelin"), ["a__t"]);
}

#[test]
fn lists_of_unknown_servers_are_skipped_and_others_reported() {
    let config = config(&["a"]);
    let registry = Registry::new(&config).unwrap_or_else(|e| panic!("{e}"));
    let update = apply(
        &registry,
        &config,
        vec![
            Event::Prompts {
                server: 0,
                prompts: vec![Prompt::new("p", Some("a prompt"), None)],
            },
            Event::Resources {
                server: 0,
                resources: vec![Resource::new("a://r", "r")],
                templates: vec![],
            },
            tools(7, vec![tool("x", "")], None),
        ],
    );
    assert!(update.tools.is_empty());
    assert_eq!(update.prompts, [0]);
    assert_eq!(update.resources, [0]);
    assert!(registry.prompts().by_name("a__p").is_some());
    assert_eq!(registry.resources().resources().count(), 1);
    assert!(registry.catalog().is_empty());
}

#[test]
fn a_resource_update_is_not_ingested() {
    let mut batch = Batch::default();
    let event = Event::ResourceUpdated {
        server: 0,
        uri: "a://r".to_owned(),
    };
    assert!(batch.add(event).is_some());
    assert!(batch.is_empty());
}

/// The catalog keeps the text a list came as, and the index is fed that same text (parsed
/// one document at a time), never a copy or a tree per tool.
#[test]
fn the_listed_text_is_kept_and_indexed_without_a_copy() {
    let config = config(&["a"]);
    let registry = Registry::new(&config).unwrap_or_else(|e| panic!("{e}"));
    let listed = ServerTool::from(tool("clock", "The current time in a zone."));
    let event = Event::Tools {
        server: 0,
        tools: vec![listed.clone()],
        instructions: None,
        changes: 0,
    };
    apply(&registry, &config, vec![event]);
    let catalog = registry.catalog();
    let entry = catalog
        .by_name("a__clock")
        .unwrap_or_else(|| panic!("catalogued"));
    assert!(entry.tool.same(listed.json()));
    assert!(Indexed::of(entry).tool.same(listed.json()));
    drop(catalog);
    assert_eq!(found(&registry, "time zone"), ["a__clock"]);
}

/// A wait for a list wakes on the registry's generation (`server::shared`): it must
/// change once an apply has put its lists in place, and only then.
#[test]
fn the_generation_changes_when_an_applied_list_is_in_place() {
    let config = config(&["a"]);
    let registry = Registry::new(&config).unwrap_or_else(|e| panic!("{e}"));
    let mut generation = registry.generation();
    assert!(
        !generation.has_changed().unwrap_or(true),
        "nothing applied yet"
    );
    apply(
        &registry,
        &config,
        vec![tools(
            0,
            vec![tool("clock", "The current time in a zone.")],
            None,
        )],
    );
    assert!(
        generation.has_changed().unwrap_or(false),
        "an apply bumps it"
    );
    generation.mark_unchanged();
    // What the waiting side sees at the wake: the list searchable and screened.
    assert!(registry.is_searchable(0));
    assert_eq!(registry.screened_changes(0), 0);
    assert_eq!(found(&registry, "current time"), ["a__clock"]);
    assert!(
        !generation.has_changed().unwrap_or(true),
        "and only an apply"
    );
}
