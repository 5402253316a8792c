//! Issue 21, item 3, through real `serve`: a two-need task ("news articles ..., and also
//! recommend me some music") over a fixture server listing MetaTool's 199 real tools gets
//! both tools in its first five, and says which needs it ranked. That ranked whole (needs
//! off) it finds only one is pinned by the unit test
//! `search::tests::quality::a_two_need_task_finds_both_tools_need_by_need`.

use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use crate::support::session::Session;
use crate::support::{Dir, fixture};

/// The task of the unit test (`src/search/tests/quality.rs`, `TWO_NEEDS`), from
/// `benches/data/metatool/queries_multi.jsonl`.
const TWO_NEEDS: &str = "I'm looking for trending news articles in the tech industry, and \
also recommend me some music to listen to while I read them.";

/// One fixture server `metatool` listing every MetaTool tool.
fn metatool_server(dir: &Dir, search: &str) -> PathBuf {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("benches/data/metatool/servers.json");
    let servers: Vec<Value> =
        serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    let tools: Vec<Value> = (servers.iter())
        .flat_map(|s| s["tools"].as_array().cloned().unwrap_or_default())
        .collect();
    let file = dir.file("metatool.json");
    std::fs::write(&file, Value::Array(tools).to_string()).unwrap();
    let toml = format!(
        "[settings.search]\n{search}\n{}",
        fixture(
            "metatool",
            &["--tools", file.to_str().unwrap(), "--name", "metatool"],
            ""
        )
    );
    dir.config(&toml)
}

#[tokio::test(flavor = "multi_thread")]
async fn a_two_need_task_gets_both_tools_in_its_first_five() {
    let dir = Dir::new();
    let config = metatool_server(&dir, "semantic = \"static\"");
    let session = Session::start(&config).await;
    let found = session
        .call("search_tools", json!({"query": TWO_NEEDS, "limit": 5}))
        .await;
    let found = serde_json::to_value(&found.structured_content).unwrap();
    assert_eq!(found["ranked_by"], "words+static", "{found:#}");
    let names: Vec<&str> = (found["tools"].as_array().unwrap().iter())
        .map(|t| t["tool"].as_str().unwrap_or_default())
        .collect();
    assert!(
        names.contains(&"NewsTool") && names.contains(&"MusicTool"),
        "{names:?}"
    );
    session.close().await;
}
