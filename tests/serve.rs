//! `mcp-defer serve` end to end: a real client, real fixture servers, real stdio.

use std::time::{Duration, Instant};

use rmcp::ClientServiceExt;
use rmcp::model::{ProtocolVersion, ServerNotification, SubscriptionFilter};
use rmcp::transport::TokioChildProcess;
use serde_json::json;

use crate::support::session::*;
use crate::support::wait::{eventually, poll};
use crate::support::{BIN, Dir, assert_contains_all, fixture};

/// A temp dir whose `servers.toml` is `toml`.
fn with_config(toml: &str) -> Dir {
    Dir::with_config(toml)
}

const META: [&str; 3] = ["search_tools", "select_tools", "call_tool"];

fn one_fixture(settings: &str) -> Dir {
    with_config(&format!(
        "[settings]\n{settings}\n\n{}",
        fixture(
            "fx",
            &[],
            "description = \"Test fixture: echo, arithmetic, sleeping\""
        )
    ))
}

#[tokio::test]
async fn the_first_list_is_the_meta_tools_then_core_tools_in_config_order() {
    // `alpha` comes first in the file but answers last: its core tool must still come first.
    // The first list waits for core servers only until they have listed, so a long
    // `core_wait_ms` costs nothing here and keeps a loaded machine from deciding the test.
    let setup = with_config(&format!(
        "[settings]\ncore_wait_ms = 20000\n\n{}{}{}",
        fixture(
            "alpha",
            &["--slow-start-ms", "200"],
            "always_load = [\"add\"]\ndescription = \"Slow one\""
        ),
        fixture(
            "beta",
            &[],
            "always_load = [\"echo\", \"fail\"]\ndescription = \"Fast one\""
        ),
        fixture("gamma", &[], "description = \"Nothing pinned\""),
    ));
    let session = Session::start(&setup.file("servers.toml")).await;
    let tools = session.list().await;
    assert_eq!(
        names(&tools),
        [
            "search_tools",
            "select_tools",
            "call_tool",
            "alpha__add",
            "beta__echo",
            "beta__fail"
        ]
    );
    for tool in &tools {
        let always = tool
            .meta
            .as_ref()
            .and_then(|m| m.0.get("anthropic/alwaysLoad"))
            .cloned();
        assert_eq!(always, Some(json!(true)), "{} lacks alwaysLoad", tool.name);
    }
    let instructions = session.instructions();
    session.close().await;

    let again = Session::start(&setup.file("servers.toml")).await;
    assert_eq!(
        again.instructions(),
        instructions,
        "instructions must not vary between runs"
    );
    assert_eq!(
        bytes(&again.list().await),
        bytes(&tools),
        "the first list must not vary"
    );
    again.close().await;
    assert_contains_all(
        &instructions,
        &[
            "- alpha: Slow one",
            "- beta: Fast one",
            "- gamma: Nothing pinned",
            "search_tools",
        ],
    );
}

#[tokio::test]
async fn search_select_and_call_append_a_tool_and_notify() {
    // Loading by search is its own test (`search_loads_its_best_hits`): here `select_tools`
    // loads.
    let setup = one_fixture("relist_wait_ms = 3000\nsearch_loads = 0");
    let mut session = Session::start(&setup.file("servers.toml")).await;
    let before = session.list().await;
    assert_eq!(names(&before), META);

    let found = session
        .call("search_tools", json!({"query": "sum of two numbers"}))
        .await;
    let hits = structured(&found)["tools"].clone();
    assert_eq!(hits[0]["name"], "fx__add", "search results: {hits:#}");
    assert_eq!(hits[0]["loaded"], false);

    // Re-list on the notification, as Claude Code does, while select_tools is held.
    let peer = session.client.peer().clone();
    let mut changed = std::mem::replace(
        &mut session.changed,
        tokio::sync::mpsc::unbounded_channel().1,
    );
    let relist = tokio::spawn(async move {
        changed.recv().await?;
        peer.list_tools(None).await.ok()
    });
    let started = Instant::now();
    let selected = session
        .call("select_tools", json!({"names": ["fx__add"]}))
        .await;
    let held = started.elapsed();
    assert_ne!(selected.is_error, Some(true), "{}", text(&selected));
    let selection = structured(&selected);
    assert_eq!(selection["loaded"], json!(["fx__add"]));
    // The client re-listed while the result was held: it has the definition, so the
    // result does not repeat it (issue 34).
    assert!(selection.get("schemas").is_none(), "{selection:#}");
    let relisted = relist
        .await
        .ok()
        .flatten()
        .map(|r| r.tools)
        .unwrap_or_default();
    assert!(
        held < Duration::from_millis(2500),
        "held {held:?}: the re-list should release it"
    );

    assert_extends(&before, &relisted);
    assert_eq!(names(&relisted[before.len()..]), ["fx__add"]);

    let sum = session.call("fx__add", json!({"a": 2, "b": 3})).await;
    assert_ne!(sum.is_error, Some(true));
    assert!(text(&sum).contains('5'), "{}", text(&sum));

    let again = session
        .call(
            "select_tools",
            json!({"names": ["fx__add", "fx/echo", "nope"]}),
        )
        .await;
    let again = structured(&again);
    assert_eq!(again["already_loaded"], json!(["fx__add"]));
    assert_eq!(again["loaded"][0], "fx__echo", "server/tool names resolve");
    assert_eq!(again["unknown"][0]["name"], "nope");
    assert_extends(&relisted, &session.list().await);
    session.close().await;
}

#[tokio::test]
async fn a_client_that_never_relists_is_held_once_only() {
    let setup = one_fixture("relist_wait_ms = 4000");
    let session = Session::start(&setup.file("servers.toml")).await;
    session.list().await;
    let started = Instant::now();
    session
        .call("select_tools", json!({"names": ["fx__add"]}))
        .await;
    let first = started.elapsed();
    let started = Instant::now();
    session
        .call("select_tools", json!({"names": ["fx__echo"]}))
        .await;
    let second = started.elapsed();
    assert!(
        first >= Duration::from_millis(3900),
        "first select returned after {first:?}"
    );
    assert!(
        // Held again, it would take the 4 s once more; no load makes an unheld select
        // take half of that.
        second < Duration::from_secs(2),
        "second select held for {second:?}"
    );
    eprintln!("held {first:?} the first time, {second:?} the second");
    session.close().await;
}

#[tokio::test]
async fn call_tool_validates_arguments_and_calls_unloaded_tools() {
    let setup = one_fixture("");
    let session = Session::start(&setup.file("servers.toml")).await;
    let bad = session.call_through("fx__add", json!({"a": "two"})).await;
    assert_eq!(bad.is_error, Some(true));
    let message = text(&bad);
    assert_contains_all(&message, &["/a"]);
    assert_contains_all(&message, &["\"b\""]);

    let good = session.call_through("add", json!({"a": 20, "b": 22})).await;
    assert_ne!(good.is_error, Some(true), "{}", text(&good));
    assert!(text(&good).contains("42"), "{}", text(&good));

    let unknown = session.call_through("fx__addd", json!({})).await;
    assert_eq!(unknown.is_error, Some(true));
    assert!(
        text(&unknown).contains("did you mean fx__add"),
        "{}",
        text(&unknown)
    );

    let err = session.try_call("fx__nothing", json!({})).await;
    assert!(format!("{:?}", err.err()).contains("search_tools"));
    assert_eq!(
        names(&session.list().await),
        META,
        "call_tool never changes the list"
    );
    session.close().await;
}

/// In 2026-07-28 no request of the client grows its list (DESIGN.md 7c), but a server's own
/// change does, announced on the subscription with its id: `exposure = "all"` (whose list
/// never grows on request, so `client_era = "auto"` answers discover) shows the tool the
/// fixture's `grow` adds.
#[tokio::test]
async fn the_2026_07_28_path_notifies_a_servers_change_on_the_subscription() {
    // The grown tool is new to a known server, which the default `trust = "pin"` holds
    // until approved (tests/trust.rs); the notification is what is tested here.
    let setup = one_fixture("exposure = \"all\"\nrelist_wait_ms = 300\ntrust = \"off\"");
    let mut command = tokio::process::Command::new(BIN);
    command
        .arg("serve")
        .arg("--config")
        .arg(setup.file("servers.toml"));
    let transport = TokioChildProcess::new(command).unwrap_or_else(|e| panic!("{e}"));
    let client = ()
        .serve_with_lifecycle(
            transport,
            rmcp::ClientLifecycleMode::Discover {
                preferred_versions: vec![ProtocolVersion::V_2026_07_28],
            },
        )
        .await
        .unwrap_or_else(|e| panic!("discover: {e}"));
    let mut subscription = client
        .listen(SubscriptionFilter::builder().tools_list_changed().build())
        .await
        .unwrap_or_else(|e| panic!("subscriptions/listen: {e}"));
    assert_eq!(
        subscription.acknowledged(),
        &SubscriptionFilter::builder().tools_list_changed().build()
    );
    // Until the fixture's tools are listed (in `all` they arrive with the server).
    let before = poll(Duration::from_secs(10), async || {
        let before = client.list_all_tools().await.unwrap_or_default();
        if names(&before).iter().any(|n| n == "fx__grow") {
            Ok(before)
        } else {
            Err(before)
        }
    })
    .await
    .unwrap_or_else(|before| before);
    // What the arrival announced is not what this test is after.
    while let Ok(Ok(Some(_))) =
        tokio::time::timeout(Duration::from_millis(300), subscription.next()).await
    {}
    let mut params = rmcp::model::CallToolRequestParams::new("select_tools");
    params.arguments = Some(object(json!({"names": ["fx__echo"]})));
    client
        .call_tool(params)
        .await
        .unwrap_or_else(|e| panic!("select_tools: {e}"));
    assert_eq!(
        client.list_all_tools().await.unwrap_or_default(),
        before,
        "select_tools changed a 2026-07-28 list"
    );
    let mut params = rmcp::model::CallToolRequestParams::new("fx__grow");
    params.arguments = Some(object(json!({"name": "fresh"})));
    client
        .call_tool(params)
        .await
        .unwrap_or_else(|e| panic!("fx__grow: {e}"));
    let notification = tokio::time::timeout(Duration::from_secs(5), subscription.next())
        .await
        .ok()
        .and_then(Result::ok)
        .flatten()
        .unwrap_or_else(|| panic!("no notification on the subscription"));
    assert!(matches!(
        notification,
        ServerNotification::ToolListChangedNotification(_)
    ));
    use rmcp::model::GetMeta;
    assert_eq!(
        notification.get_meta().subscription_id(),
        Some(subscription.id().clone())
    );
    let after = client.list_all_tools().await.unwrap_or_default();
    assert_extends(&before, &after);
    assert_eq!(names(&after[before.len()..]), ["fx__fresh"]);
    let _ = client.cancel().await;
}

#[tokio::test]
async fn proxy_mode_never_changes_the_list() {
    let setup = one_fixture("exposure = \"proxy\"");
    let session = Session::start(&setup.file("servers.toml")).await;
    assert_eq!(names(&session.list().await), META);
    let selected = session
        .call("select_tools", json!({"names": ["fx__add"]}))
        .await;
    let selection = structured(&selected);
    assert_eq!(selection["loaded"][0], "fx__add");
    assert_eq!(selection["schemas"][0]["name"], "fx__add");
    assert_eq!(names(&session.list().await), META);
    let sum = session
        .call_through("fx__add", json!({"a": 1, "b": 1}))
        .await;
    assert!(text(&sum).contains('2'), "{}", text(&sum));
    session.close().await;
}

#[tokio::test]
async fn all_mode_lists_every_tool_in_server_order() {
    let setup = with_config(&format!(
        "[settings]\nexposure = \"all\"\ncore_wait_ms = 0\n{}",
        fixture("fx", &[], "")
    ));
    let session = Session::start(&setup.file("servers.toml")).await;
    // The fixture may not be in yet; wait for its tools to be appended.
    let tools = poll(Duration::from_secs(5), async || {
        let tools = session.list().await;
        if tools.len() > 3 {
            Ok(tools)
        } else {
            Err(tools)
        }
    })
    .await
    .unwrap_or_else(|tools| tools);
    let names = names(&tools);
    assert_eq!(names[..3], META);
    for expected in ["fx__echo", "fx__add", "fx__sleep"] {
        assert!(names.contains(&expected.to_owned()), "{names:?}");
    }
    session.close().await;
}

#[tokio::test]
async fn downstream_progress_reaches_the_client_under_its_token() {
    let setup = one_fixture("");
    let mut session = Session::start(&setup.file("servers.toml")).await;
    let mut params = rmcp::model::CallToolRequestParams::new("fx__sleep");
    params.arguments = Some(object(json!({"ms": 200})));
    // rmcp's client puts its own progress token on the request and routes by it.
    let mut meta = rmcp::model::RequestMetaObject::default();
    let token = rmcp::model::ProgressToken(rmcp::model::NumberOrString::String("tok-7".into()));
    meta.set_progress_token(token);
    params.meta = Some(meta);
    let slept = session
        .client
        .call_tool(params)
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    assert!(text(&slept).contains("slept 200 ms"), "{}", text(&slept));
    let first = tokio::time::timeout(Duration::from_secs(5), session.progress.recv())
        .await
        .ok()
        .flatten()
        .unwrap_or_else(|| panic!("no progress reached the client"));
    assert!(first.total.is_some(), "{first:?}");
    session.close().await;
}

/// Waits until `search_tools` with `query` on server `fx` shows `name` (or not).
async fn wait_searchable(session: &Session, query: &str, name: &str, present: bool) {
    let what = format!("{name} {}searchable", if present { "" } else { "un" });
    eventually(&what, async || {
        let found = session
            .call(
                "search_tools",
                json!({"query": query, "server": "fx", "limit": 50}),
            )
            .await;
        let hit = structured(&found)["tools"]
            .as_array()
            .is_some_and(|tools| tools.iter().any(|t| t["name"] == name));
        hit == present
    })
    .await;
}

/// Waits until the fixture answers again after a crash.
async fn wait_restarted(session: &Session) {
    eventually("the fixture comes back after its crash", async || {
        let echo = session
            .call_through("fx__echo", json!({"text": "up?"}))
            .await;
        echo.is_error != Some(true)
    })
    .await;
}

#[tokio::test]
async fn downstream_changes_never_rewrite_the_list() {
    // Its waits search for the changed tool: loading what they find on the way is not what
    // this test is about; nor is approving the tools the server changes at runtime
    // (tests/trust.rs).
    let setup = one_fixture("relist_wait_ms = 200\nsearch_loads = 0\ntrust = \"off\"");
    let session = Session::start(&setup.file("servers.toml")).await;
    session.list().await;
    session
        .call_through("fx__grow", json!({"name": "fresh_tool"}))
        .await;
    wait_searchable(&session, "fresh_tool", "fx__fresh_tool", true).await;
    session
        .call("select_tools", json!({"names": ["fx__fresh_tool"]}))
        .await;
    let with_fresh = session.list().await;
    assert_eq!(
        names(&with_fresh).last().map(String::as_str),
        Some("fx__fresh_tool")
    );

    session
        .call_through("fx__shrink", json!({"name": "fresh_tool"}))
        .await;
    wait_searchable(&session, "fresh_tool", "fx__fresh_tool", false).await;
    assert_eq!(
        bytes(&session.list().await),
        bytes(&with_fresh),
        "a removed tool stays listed"
    );
    let gone = session.call("fx__fresh_tool", json!({})).await;
    assert_eq!(gone.is_error, Some(true));
    assert!(text(&gone).contains("no longer offers"), "{}", text(&gone));

    // A crash mid-call is an error result naming the server; the session goes on.
    let crashed = session.call_through("fx__crash", json!({})).await;
    assert_eq!(crashed.is_error, Some(true));
    assert!(text(&crashed).contains("fx"), "{}", text(&crashed));
    wait_restarted(&session).await;
    assert_extends(&with_fresh, &session.list().await);
    session.close().await;
}

/// One step of the property test below.
#[derive(Debug, Clone)]
enum Step {
    Select(&'static str),
    Grow(u8),
    Shrink(u8),
    Crash,
}

async fn run_steps(steps: &[Step]) -> Vec<String> {
    // The searches that wait for a grown tool must not load what they find on the way
    // (how many there are depends on timing): selecting is what this property is about,
    // not approving the grown tools (tests/trust.rs).
    let setup = one_fixture("relist_wait_ms = 100\nsearch_loads = 0\ntrust = \"off\"");
    let session = Session::start(&setup.file("servers.toml")).await;
    let mut previous = session.list().await;
    for step in steps {
        match step {
            Step::Select(name) => {
                session.call("select_tools", json!({"names": [name]})).await;
            }
            Step::Grow(n) => {
                let name = format!("grown_{n}");
                session
                    .call_through("fx__grow", json!({"name": name}))
                    .await;
                wait_searchable(&session, &name, &format!("fx__{name}"), true).await;
                session
                    .call("select_tools", json!({"names": [format!("fx__{name}")]}))
                    .await;
            }
            Step::Shrink(n) => {
                let name = format!("grown_{n}");
                session
                    .call_through("fx__shrink", json!({"name": name}))
                    .await;
                wait_searchable(&session, &name, &format!("fx__{name}"), false).await;
            }
            Step::Crash => {
                session.call_through("fx__crash", json!({})).await;
                wait_restarted(&session).await;
            }
        }
        let now = session.list().await;
        assert_extends(&previous, &now);
        previous = now;
    }
    session.close().await;
    bytes(&previous)
}

mod properties {
    use super::*;
    use proptest::prelude::*;

    fn step() -> impl Strategy<Value = Step> {
        prop_oneof![
            prop::sample::select(vec!["fx__add", "fx__echo", "fx__sleep", "fx__fail"])
                .prop_map(Step::Select),
            (0u8..3).prop_map(Step::Grow),
            (0u8..3).prop_map(Step::Shrink),
            Just(Step::Crash),
        ]
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 4, failure_persistence: None, ..ProptestConfig::default() })]
        /// Whatever happens, each list extends the one before, and the same steps give the
        /// same bytes in a second run.
        #[test]
        fn any_sequence_only_appends_and_is_deterministic(steps in prop::collection::vec(step(), 1..7)) {
            let runtime = tokio::runtime::Runtime::new().unwrap_or_else(|e| panic!("{e}"));
            let first = runtime.block_on(run_steps(&steps));
            let second = runtime.block_on(run_steps(&steps));
            prop_assert_eq!(first, second);
        }
    }
}

#[tokio::test]
async fn long_names_are_refused_at_once_and_names_follow_one_rule() {
    let dir = Dir::with_config(&fixture("fx", &[], ""));
    let session = Session::start(&dir.file("servers.toml")).await;
    let long = "n".repeat(100_000);
    let said = text(&session.call("call_tool", json!({"name": long})).await);
    assert!(
        said.contains("at most 256"),
        "{}",
        &said[..said.len().min(300)]
    );
    let said = text(&session.call("select_tools", json!({"names": [long]})).await);
    assert!(
        said.contains("at most 256"),
        "{}",
        &said[..said.len().min(300)]
    );
    let direct = session.try_call(&long, json!({})).await;
    let direct = format!("{direct:?}");
    assert!(
        direct.contains("at most 256"),
        "{}",
        &direct[..direct.len().min(300)]
    );

    // One whitespace rule for all three paths.
    let padded = " fx__echo \n";
    let called = session.call_through(padded, json!({"a": 1})).await;
    assert_ne!(called.is_error, Some(true), "{}", text(&called));
    let direct = session.try_call(padded, json!({"a": 1})).await;
    assert!(direct.is_ok_and(|r| r.is_error != Some(true)));

    // select_tools: no names, too many names.
    let empty = session.call("select_tools", json!({"names": []})).await;
    assert_eq!(empty.is_error, Some(true));
    assert!(
        text(&empty).contains("at least one name"),
        "{}",
        text(&empty)
    );
    let many: Vec<String> = (0..21).map(|i| format!("fx__t{i}")).collect();
    let many = session.call("select_tools", json!({"names": many})).await;
    assert_eq!(many.is_error, Some(true));
    assert!(text(&many).contains("at most 20"), "{}", text(&many));
    session.close().await;
}
