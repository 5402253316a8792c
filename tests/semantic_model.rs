//! The transformer tier (`[settings.search] semantic = "model"`) through real processes:
//! `serve` over fixture servers that list the 50 real tools of the reference set finds a
//! tool by meaning that the lexical engine misses, answers before the vectors are ready, and
//! a second run takes every vector from the disk cache; bad model settings are config
//! errors naming the fix.

use std::path::Path;
use std::time::Duration;

use serde_json::{Value, json};

use crate::support::reference::{model, reference_servers};
use crate::support::session::Session;
use crate::support::wait::poll_sync;
use crate::support::{Dir, assert_contains_all, fixture, stderr, stdout, toml_str};

/// The query: by meaning the memory server's `add_observations`; measured, the lexical
/// engine ranks it 6th (behind file readers that share `read`-like words and `create`), the
/// static tier below its first ten, the transformer first.
const QUERY: &str = "note down a fact about a person";
const WANTED: &str = "memory__add_observations";

/// The tool names `search_tools` returns for `query`.
async fn search(session: &Session, query: &str) -> Vec<String> {
    let found = session.call("search_tools", json!({"query": query})).await;
    let value = serde_json::to_value(&found.structured_content).unwrap();
    crate::support::session::found_names(&value)
}

/// The `transformer vectors ready` log lines once one covers all 50 tools: (embedded,
/// cached) of each. A bound, not a timing: the first run embeds 50 tools in a few seconds.
fn ready_lines(log: &Path) -> Vec<(usize, usize)> {
    let field = |line: &str, name: &str| -> usize {
        line.split_whitespace()
            .find_map(|w| w.strip_prefix(&format!("{name}=")))
            .and_then(|v| v.parse().ok())
            .unwrap_or_else(|| panic!("no {name}= in {line}"))
    };
    poll_sync(Duration::from_secs(300), || {
        let text = std::fs::read_to_string(log).unwrap_or_default();
        let lines: Vec<&str> = text
            .lines()
            .filter(|l| l.contains("transformer vectors ready"))
            .collect();
        if lines.iter().any(|l| field(l, "tools") == 50) {
            return Ok(lines
                .iter()
                .map(|l| (field(l, "embedded"), field(l, "cached")))
                .collect());
        }
        assert!(
            !text.contains("failed to load"),
            "no ready line for 50 tools:\n{text}"
        );
        Err(text)
    })
    .unwrap_or_else(|text| panic!("no ready line for 50 tools:\n{text}"))
}

#[tokio::test(flavor = "multi_thread")]
async fn serve_finds_by_meaning_what_words_miss_and_a_restart_embeds_nothing() {
    let Some(model) = model() else { return };
    let dir = Dir::new();
    let cache = dir.file("cache");
    let search_lines = format!(
        "semantic = \"model\"\nmodel = {}",
        toml_str(model.to_str().unwrap())
    );
    let config = reference_servers(&dir, &search_lines, "");

    let log = dir.file("serve-1.log");
    let session = Session::start_logged(&config, Some(std::fs::File::create(&log).unwrap()), |c| {
        c.env("MCP_DEFER_CACHE_DIR", &cache);
    })
    .await;
    // Answers at once, whatever the embedding thread is doing (static tier meanwhile).
    assert!(!search(&session, "read a file").await.is_empty());
    let ready = ready_lines(&log);
    let embedded: usize = ready.iter().map(|r| r.0).sum();
    assert_eq!(embedded, 50, "{ready:?}");
    let hits = search(&session, QUERY).await;
    assert_eq!(hits.first().map(String::as_str), Some(WANTED), "{hits:?}");
    session.close().await;
    let files: Vec<_> = std::fs::read_dir(cache.join("vectors")).unwrap().collect();
    assert_eq!(files.len(), 1, "one vector file for the one model");

    // A restart over the same cache: nothing is embedded, every vector is read back.
    let log = dir.file("serve-2.log");
    let session = Session::start_logged(&config, Some(std::fs::File::create(&log).unwrap()), |c| {
        c.env("MCP_DEFER_CACHE_DIR", &cache);
    })
    .await;
    let ready = ready_lines(&log);
    let (embedded, cached) = ready.iter().fold((0, 0), |a, r| (a.0 + r.0, a.1 + r.1));
    assert_eq!((embedded, cached), (0, 50), "{ready:?}");
    let hits = search(&session, QUERY).await;
    assert_eq!(hits.first().map(String::as_str), Some(WANTED), "{hits:?}");
    // A query no tool serves still finds nothing: the vector-only floor holds for the
    // transformer's cosines too, so the model can say "no tools match".
    let none = search(&session, "zeppelin").await;
    assert!(
        none.is_empty(),
        "unrelated tools for a query no tool serves: {none:?}"
    );
    session.close().await;

    // The lexical engine alone does not have it in its first five.
    let plain = Dir::new();
    reference_servers(&plain, "semantic = \"off\"", "");
    let out = plain.run(&["search", QUERY, "--json", "--limit", "5"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let found: Value = serde_json::from_str(&stdout(&out)).unwrap();
    let names: Vec<&str> = (found["tools"].as_array().unwrap().iter())
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert!(!names.contains(&WANTED), "{names:?}");
}

#[test]
fn search_explain_and_check_report_the_transformer() {
    let Some(model) = model() else { return };
    let dir = Dir::new();
    let search_lines = format!(
        "semantic = \"model\"\nmodel = {}",
        toml_str(model.to_str().unwrap())
    );
    reference_servers(&dir, &search_lines, "");
    let cache = dir.file("cache");
    let out = dir
        .command(&["search", QUERY, "--explain", "--limit", "3"])
        .env("MCP_DEFER_CACHE_DIR", &cache)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let text = stdout(&out);
    let mut lines = text.lines();
    let state = lines.next().unwrap();
    assert!(
        state.contains("transformer") && state.contains("ranking, 50 tool vectors"),
        "{text}"
    );
    // Each engine's share of the fused score (issue 21, item 4).
    let shares = lines.next().unwrap();
    assert!(
        shares.starts_with(
            "ranked by words+transformer: shares words 0.20, vector 0.50, static 0.30"
        ),
        "{text}"
    );
    assert!(lines.next().unwrap().contains("lexical"), "{text}");
    let first = lines.next().unwrap();
    assert!(first.contains(WANTED), "{text}");

    let out = dir.run_with_env(&["check"], &[("MCP_DEFER_CACHE_DIR", &cache)]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let table = stdout(&out);
    assert_contains_all(
        &table,
        &["ranking, 50 tool vectors (0 embedded, 50 from the disk cache)"],
    );
}

#[test]
fn bad_model_settings_are_config_errors_naming_the_fix() {
    let dir = Dir::new();
    let cases = [
        (
            "semantic = \"model\"",
            vec![
                "mcp-defer/models/all-MiniLM-L6-v2 does not exist",
                "mcp-defer model fetch",
            ],
        ),
        (
            "semantic = \"model\"\nmodel = \"no-such-dir\"",
            vec!["no-such-dir does not exist", "mcp-defer model fetch"],
        ),
        (
            "model = \"x\"",
            vec!["only read with `semantic = \"model\"`"],
        ),
    ];
    for (lines, wants) in cases {
        dir.config(&format!(
            "[settings.search]\n{lines}\n{}",
            fixture("fx", &[], "")
        ));
        // Nothing fetched there: the default model directory does not exist.
        let out = dir
            .command(&["check"])
            .env("XDG_DATA_HOME", dir.path())
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "{lines}: {}", stderr(&out));
        let err = stderr(&out);
        for want in wants {
            assert!(err.contains(want), "{lines}: {err}");
        }
    }
    // A directory without the weights names the missing file.
    let model = dir.file("model");
    std::fs::create_dir_all(&model).unwrap();
    std::fs::write(model.join("config.json"), "{}").unwrap();
    std::fs::write(model.join("tokenizer.json"), "{}").unwrap();
    dir.config(&format!(
        "[settings.search]\nsemantic = \"model\"\nmodel = \"model\"\n{}",
        fixture("fx", &[], "")
    ));
    let out = dir.run(&["check"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("has no model.safetensors"),
        "{}",
        stderr(&out)
    );
}
