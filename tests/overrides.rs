//! `[mcp_servers.x.tools.NAME]` overrides: what the model reads is the replacement, in
//! search results, in `tools/list` and in `select_tools`'s schemas; `check` warns about an
//! override whose tool the server does not list.

use std::time::Duration;

use serde_json::json;

use crate::support::session::*;
use crate::support::{Dir, assert_contains_all, fixture, stderr, stdout};

const OVERRIDE: &str = "Total a shopping basket: the sum of two prices.";
/// How long a notification may take, at most: it is sent at once; this bounds a broken
/// build (a hang becomes a failure), it is not what the test measures.
const WAIT: Duration = Duration::from_secs(30);

fn config(extra: &str) -> Dir {
    Dir::with_config(&format!(
        "[settings]\nrelist_wait_ms = 100\nsearch_loads = 0\n\n{}[mcp_servers.fx.tools.add]\ndescription = \"{OVERRIDE}\"\ntitle = \"Basket total\"\n{extra}",
        fixture(
            "fx",
            &[],
            "description = \"Test fixture\"\nsearch_hints = \"checkout\""
        ),
    ))
}

#[tokio::test]
async fn an_overridden_description_is_what_search_list_and_select_show() {
    let dir = config("");
    let mut session = Session::start(&dir.file("servers.toml")).await;
    let before = session.list().await;

    let found = session
        .call("search_tools", json!({"query": "shopping basket"}))
        .await;
    let hits = structured(&found)["tools"].clone();
    assert_eq!(hits[0]["name"], "fx__add", "{hits:#}");
    assert_eq!(hits[0]["description"], OVERRIDE);

    // The server's own words are gone from the index.
    let old = session
        .call(
            "search_tools",
            json!({"query": "add two numbers return their sum"}),
        )
        .await;
    let old = structured(&old)["tools"].clone();
    assert!(
        old.as_array().is_some_and(|hits| hits
            .iter()
            .all(|h| h["description"] != "Add two numbers and return their sum.")),
        "{old:#}"
    );

    session.forget_changes();
    let selected = session
        .call("select_tools", json!({"names": ["fx__add"]}))
        .await;
    let loaded = structured(&selected)["schemas"][0].clone();
    assert_eq!(loaded["description"], OVERRIDE);
    assert_eq!(loaded["title"], "Basket total");
    // The client re-lists on the notification.
    session
        .expect_changed(WAIT, "select_tools loaded fx__add")
        .await;
    let after = session.list().await;
    assert_extends(&before, &after);
    let listed = after.last().cloned().unwrap();
    assert_eq!(listed.name, "fx__add");
    assert_eq!(listed.description.as_deref(), Some(OVERRIDE));
    assert_eq!(listed.title.as_deref(), Some("Basket total"));

    let sum = session.call("fx__add", json!({"a": 2, "b": 3})).await;
    assert!(text(&sum).contains('5'), "the tool itself is unchanged");
    session.close().await;
}

#[test]
fn check_warns_about_an_override_the_server_does_not_list() {
    let dir = config("[mcp_servers.fx.tools.ad]\ntitle = \"Typo\"\n");
    let out = dir.run(&["check"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(stdout(&out).contains("ready"), "{}", stdout(&out));
    let err = stderr(&out);
    assert_contains_all(
        &err,
        &[
            "warning: [mcp_servers.fx.tools.ad] overrides a tool fx does not list, so it does \
             nothing; did you mean `add`?",
        ],
    );
    assert!(!err.contains("tools.add]"), "{err}");

    let list = dir.run(&["list", "--json"]);
    assert!(stdout(&list).contains(OVERRIDE), "{}", stdout(&list));
}
