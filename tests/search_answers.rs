//! Search users can feel (issue 21), through real `serve` over fixture servers: a query
//! that names a server finds its tool first, `search_tools` says which tier ranked and how
//! many tools wait for vectors, a request no tool serves gets "no tool fits" and the nearest
//! servers instead of wrong tools, and the first search does not wait for a slow server.

use std::time::Duration;

use serde_json::{Value, json};

use crate::support::reference::{model, reference_servers};
use crate::support::session::{Session, structured, text};
use crate::support::wait::poll;
use crate::support::{Dir, assert_contains_all, fixture, toml_str};

/// The fixture binary (a real MCP server).
const FIXTURE: &str = env!("CARGO_BIN_EXE_mcp-defer-fixture");

/// A server named like a product ("heygen") whose one tool makes videos, among servers
/// with video tools of their own: what a user names when they write "Hey Gen".
fn video_servers(dir: &Dir) -> String {
    let mut toml = String::new();
    let servers = [
        (
            "heygen",
            json!([{"name": "generate", "description": "Generate a talking avatar clip from a script.",
                    "inputSchema": {"type": "object", "properties": {"script": {"type": "string"}}}}]),
        ),
        (
            "studio",
            json!([{"name": "make_video", "description": "Make a video from a text prompt: an avatar presenter reads your script.",
                    "inputSchema": {"type": "object", "properties": {"prompt": {"type": "string"}}}},
                   {"name": "edit_video", "description": "Trim and caption a video.",
                    "inputSchema": {"type": "object", "properties": {"path": {"type": "string"}}}}]),
        ),
        (
            "clips",
            json!([{"name": "avatar_video", "description": "Create an AI avatar video that speaks a script.",
                    "inputSchema": {"type": "object", "properties": {"text": {"type": "string"}}}}]),
        ),
    ];
    for (name, tools) in servers {
        let file = dir.file(&format!("{name}.json"));
        std::fs::write(&file, tools.to_string()).unwrap();
        toml.push_str(&fixture(
            name,
            &["--tools", file.to_str().unwrap(), "--name", name],
            "",
        ));
    }
    toml
}

async fn search(session: &Session, query: &str) -> Value {
    let found = session.call("search_tools", json!({"query": query})).await;
    structured(&found)
}

fn names(found: &Value) -> Vec<String> {
    crate::support::session::found_names(found)
}

/// Items 2 and 4 with the transformer tier: until every tool has its vector the answer
/// says `words+static` and how many wait; then `words+transformer`. "Hey Gen" names the
/// `heygen` server (two words joined); its tool ranks first in the fused model tier
/// although two other servers describe avatar videos in more of the query's words.
#[tokio::test(flavor = "multi_thread")]
async fn a_query_naming_a_server_finds_its_tool_first_in_the_model_tier() {
    let Some(model) = model() else { return };
    let dir = Dir::new();
    let toml = format!(
        "[settings.search]\nsemantic = \"model\"\nmodel = {}\n{}",
        toml_str(model.to_str().unwrap()),
        video_servers(&dir)
    );
    let config = dir.config(&toml);
    let cache = dir.file("cache");
    let session = Session::start_with(&config, |c| {
        c.env("MCP_DEFER_CACHE_DIR", &cache);
    })
    .await;
    let query = "make an avatar video with Hey Gen that reads my script";
    // A bound, not a timing: the model loads and embeds four tools in seconds.
    let found = poll(Duration::from_secs(120), async || {
        let found = search(&session, query).await;
        if found["ranked_by"] == "words+transformer" {
            return Ok(found);
        }
        assert_eq!(found["ranked_by"], "words+static", "{found:#}");
        let pending = found["vectors_pending"].as_u64().unwrap_or(0);
        assert!(pending <= 4, "{found:#}");
        Err(found)
    })
    .await
    .unwrap_or_else(|found| found);
    assert_eq!(found["ranked_by"], "words+transformer", "{found:#}");
    assert!(found.get("vectors_pending").is_none(), "{found:#}");
    assert_eq!(
        names(&found).first().map(String::as_str),
        Some("heygen__generate"),
        "{found:#}"
    );
    session.close().await;
}

/// Item 4: the result says which engines ranked.
#[tokio::test(flavor = "multi_thread")]
async fn search_tools_says_which_tier_ranked() {
    for (setting, tier) in [
        ("semantic = \"off\"", "words"),
        ("semantic = \"static\"", "words+static"),
    ] {
        let dir = Dir::new();
        let config = reference_servers(&dir, setting, "");
        let session = Session::start(&config).await;
        let found = search(&session, "read a file").await;
        assert_eq!(found["ranked_by"], tier, "{setting}: {found:#}");
        assert!(found.get("vectors_pending").is_none(), "{found:#}");
        assert!(!names(&found).is_empty(), "{found:#}");
        session.close().await;
    }
}

/// Item 7: a request none of the 50 tools serves gets `no_tool_fits` and the servers whose
/// tools came nearest, not a page of wrong tools; a request one serves still gets it.
#[tokio::test(flavor = "multi_thread")]
async fn a_request_no_tool_serves_gets_no_tool_fits_and_the_nearest_servers() {
    let dir = Dir::new();
    let config = reference_servers(&dir, "semantic = \"static\"", "");
    let session = Session::start(&config).await;
    let found = search(&session, "book two tickets to a zeppelin concert").await;
    assert_eq!(found["no_tool_fits"], true, "{found:#}");
    assert!(names(&found).is_empty(), "{found:#}");
    let nearest = found["nearest_servers"].as_array().unwrap();
    assert!(!nearest.is_empty() && nearest.len() <= 3, "{found:#}");
    let text = crate::support::session::text(
        &session
            .call(
                "search_tools",
                json!({"query": "book two tickets to a zeppelin concert"}),
            )
            .await,
    );
    assert!(
        text.starts_with("No tool fits this request. Nearest servers: "),
        "{text}"
    );

    let served = search(&session, "what time is it in Tokyo").await;
    assert!(served.get("no_tool_fits").is_none(), "{served:#}");
    assert!(
        names(&served).iter().any(|n| n.starts_with("time__")),
        "{served:#}"
    );
    session.close().await;
}

/// Item 5: a server that sleeps a minute before serving does not hold the first search:
/// it answers with what is indexed and names the server still starting. Without the bound
/// the search would wait for the server (its `startup_timeout_sec` is 120) and find it
/// ready, so `starting` would be empty: the test fails on content, not on time.
#[tokio::test(flavor = "multi_thread")]
async fn the_first_search_names_a_slow_server_instead_of_waiting_for_it() {
    let dir = Dir::new();
    let script = format!("sleep 60; exec {} --name slow", toml_str(FIXTURE));
    let slow = format!(
        "[mcp_servers.slow]\ncommand = \"sh\"\nargs = [\"-c\", {}]\nstartup_timeout_sec = 120\n",
        toml_str(&script)
    );
    let config = reference_servers(&dir, "semantic = \"static\"", &slow);
    let session = Session::start(&config).await;
    let found = search(&session, "read a file").await;
    assert!(
        (found["starting"].as_array()).is_some_and(|s| s.contains(&json!("slow"))),
        "{found:#}"
    );
    // The fast servers are searched as soon as they have listed (a bound, not a timing:
    // on a loaded machine they may still be starting at the first search).
    let found = poll(Duration::from_secs(20), async || {
        let found = search(&session, "read a file").await;
        if names(&found).iter().any(|n| n.starts_with("filesystem__"))
            && found["starting"] == json!(["slow"])
        {
            Ok(found)
        } else {
            Err(found)
        }
    })
    .await
    .unwrap_or_else(|found| found);
    assert!(
        names(&found).iter().any(|n| n.starts_with("filesystem__")),
        "{found:#}"
    );
    assert_eq!(found["starting"], json!(["slow"]), "{found:#}");
    let text = crate::support::session::text(
        &session
            .call("search_tools", json!({"query": "read a file"}))
            .await,
    );
    assert_contains_all(&text, &["Still starting, not searched yet: slow."]);
    session.close().await;
}

/// The walk from a fresh clone (issue 35): a new user's first search, while `uvx` was
/// still starting the only server with the tool, found nothing and the model gave up. A
/// search that finds nothing fitting waits for the servers still starting (up to their
/// `startup_timeout_sec`, 15 s at most) and ranks again as each arrives. The weather server
/// here serves after 7 s, past the 5 s a search used to wait: the test fails on content
/// (`no_tool_fits`, `starting: ["weather"]`), not on time.
#[tokio::test(flavor = "multi_thread")]
async fn a_search_with_nothing_fitting_waits_for_the_server_still_starting() {
    let dir = Dir::new();
    let tools = dir.file("weather.json");
    let forecast = json!([{"name": "forecast", "description": "Weather forecast for a city: temperature, rain and wind for the next days.",
                           "inputSchema": {"type": "object", "properties": {"city": {"type": "string"}}}}]);
    std::fs::write(&tools, forecast.to_string()).unwrap();
    let script = format!(
        "sleep 7; exec {} --tools {} --name weather",
        toml_str(FIXTURE),
        toml_str(tools.to_str().unwrap())
    );
    let slow = format!(
        "[mcp_servers.weather]\ncommand = \"sh\"\nargs = [\"-c\", {}]\nstartup_timeout_sec = 30\n",
        toml_str(&script)
    );
    let config = reference_servers(&dir, "semantic = \"static\"", &slow);
    let session = Session::start(&config).await;
    let found = search(&session, "weather forecast for Paris").await;
    assert_eq!(
        names(&found).first().map(String::as_str),
        Some("weather__forecast"),
        "{found:#}"
    );
    assert!(found.get("starting").is_none(), "{found:#}");
    session.close().await;
}

/// Issue 33, item 5, as a new user tried it over the example servers' tools: "weather
/// forecast" (no weather tool among the 50) is told no tool fits, where the fused score
/// had put `filesystem__edit_file` first at 0.85; "current time" gets a time tool first,
/// surer than any git tool the vectors bring in, each score a confidence in [0, 1].
#[tokio::test(flavor = "multi_thread")]
async fn weather_finds_no_fit_and_current_time_finds_the_time_tools_first() {
    let dir = Dir::new();
    let config = reference_servers(&dir, "semantic = \"static\"\nlearn = false", "");
    let session = Session::start(&config).await;
    let weather = search(&session, "weather forecast").await;
    assert_eq!(weather["no_tool_fits"], true, "{weather:#}");
    assert!(names(&weather).is_empty(), "{weather:#}");

    let time = search(&session, "current time").await;
    assert!(time.get("no_tool_fits").is_none(), "{time:#}");
    let tools = time["tools"].as_array().unwrap();
    assert!(
        tools[0]["name"].as_str().unwrap().starts_with("time__"),
        "{time:#}"
    );
    let score = |t: &Value| t["score"].as_f64().unwrap();
    assert!(
        tools.iter().all(|t| (0.0..=1.0).contains(&score(t))),
        "a score is a confidence in [0, 1]: {time:#}"
    );
    let surest_git = (tools.iter())
        .filter(|t| t["server"] == "git")
        .map(score)
        .fold(0.0, f64::max);
    assert!(score(&tools[0]) > surest_git, "{time:#}");
    session.close().await;
}

/// Issue 10 item 7: many servers joining at once are ingested in batches, not one index commit each,
/// and the first search finds their tools. How long it takes is a figure of `cargo bench
/// --bench e2e -- handshake` (20 servers), not asserted here: on a loaded machine 60 servers
/// start slowly however the ingest behaves (one by one, ingest alone took ~95 ms a server in
/// a debug build: 8.5 s for 100).
#[tokio::test]
async fn sixty_servers_are_searchable_at_once() {
    let dir = Dir::new();
    let toml: String = (0..60)
        .map(|i| fixture(&format!("s{i}"), &[], "startup_timeout_sec = 60"))
        .collect();
    dir.config(&toml);
    let session = Session::start(&dir.file("servers.toml")).await;
    let found = session
        .call(
            "search_tools",
            json!({"query": "add two numbers", "limit": 3}),
        )
        .await;
    assert_eq!(
        structured(&found)["tools"][0]["tool"],
        "add",
        "{}",
        text(&found)
    );
    session.close().await;
}
