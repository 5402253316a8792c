//! `max_output_tokens`: results over the budget are cut with a note, through real
//! processes; a server's own limit wins over `[settings]`.

use serde_json::json;

use crate::support::session::*;
use crate::support::{Dir, assert_contains_all, fixture};

#[tokio::test]
async fn results_over_the_budget_are_cut_with_a_note() {
    let dir = Dir::with_config(&format!(
        "[settings]\nmax_output_tokens = 300\n\n{}{}",
        fixture("fx", &["--big-tool"], "max_output_tokens = 200"),
        fixture("gx", &["--big-tool"], ""),
    ));
    let session = Session::start(&dir.file("servers.toml")).await;

    // Per server: 200 tokens ≈ 800 bytes.
    let cut = session
        .call("fx__big", json!({"chars": 5000, "items": 100, "images": 1}))
        .await;
    assert_ne!(cut.is_error, Some(true));
    let blocks: Vec<_> = cut.content.iter().collect();
    assert_eq!(
        blocks.len(),
        2,
        "text, then the note; the image is dropped: {blocks:?}"
    );
    let text = &blocks[0].as_text().unwrap().text;
    let full: String = "héllo ".chars().cycle().take(5000).collect();
    assert!(text.len() <= 800 && text.len() > 790, "{}", text.len());
    assert!(
        full.starts_with(text.as_str()),
        "cut at a character boundary, not changed"
    );
    let note = &blocks[1].as_text().unwrap().text;
    let kept_chars = text.chars().count();
    for part in [
        "longer than max_output_tokens = 200".to_owned(),
        format!("{} of 5000 characters of text", 5000 - kept_chars),
        "1 image, audio or binary block".to_owned(),
        "of 100 items of the structured result's lists".to_owned(),
        "a page, cursor, offset or limit".to_owned(),
    ] {
        assert!(note.contains(&part), "{part:?} not in {note}");
    }
    let shaped = structured(&cut);
    assert_eq!(shaped["count"], 100, "keys are kept");
    let items = shaped["items"].as_array().unwrap();
    assert!(!items.is_empty() && items.len() < 100, "{}", items.len());
    assert_eq!(
        items.last().unwrap(),
        &json!({"id": items.len() - 1, "name": format!("item {}", items.len() - 1)})
    );
    assert!(serde_json::to_string(&shaped).unwrap().len() <= 800);

    // From [settings]: 300 tokens. A small result is untouched.
    let small = session
        .call("gx__big", json!({"chars": 100, "items": 3}))
        .await;
    assert_eq!(small.content.len(), 1);
    assert_eq!(
        structured(&small)["items"].as_array().map(Vec::len),
        Some(3)
    );
    let over = session.call("gx__big", json!({"chars": 2000})).await;
    let note = &over.content.last().unwrap().as_text().unwrap().text;
    assert_contains_all(note, &["max_output_tokens = 300"]);
    assert!(over.content[0].as_text().unwrap().text.len() <= 1200);

    // call_tool goes through the same limit.
    let via_meta = session
        .call_through("fx__big", json!({"chars": 5000}))
        .await;
    let note = &via_meta.content.last().unwrap().as_text().unwrap().text;
    assert_contains_all(note, &["max_output_tokens = 200"]);
    session.close().await;
}

/// Issue 24 (a): resource links count against the budget. Ten links with 100 KB
/// descriptions went through a 400-byte budget whole (1,000,790 bytes).
#[tokio::test]
async fn resource_links_count_against_the_budget() {
    let dir = Dir::with_config(&fixture("fx", &["--big-tool"], "max_output_tokens = 100"));
    let session = Session::start(&dir.file("servers.toml")).await;
    let cut = session
        .call(
            "fx__big",
            json!({"chars": 0, "links": 10, "link_chars": 100_000}),
        )
        .await;
    assert_ne!(cut.is_error, Some(true));
    let (links, note): (Vec<_>, Vec<_>) = cut
        .content
        .iter()
        .partition(|b| b.as_resource_link().is_some());
    let size: usize = links
        .iter()
        .map(|b| serde_json::to_vec(b).unwrap().len())
        .sum();
    assert!(
        size <= 400,
        "{size} bytes of links through a 400-byte budget"
    );
    assert!(!links.is_empty(), "the links that fit bare are kept");
    for (i, link) in links.iter().enumerate() {
        let link = link.as_resource_link().unwrap();
        assert_eq!(link.uri, format!("file:///big/{i}.txt"), "in order");
        assert!(link.description.is_none(), "kept bare: {link:?}");
    }
    let note = note
        .iter()
        .filter_map(|b| b.as_text())
        .map(|t| t.text.as_str())
        .find(|t| t.contains("max_output_tokens = 100"))
        .unwrap_or_else(|| panic!("no note: {:?}", cut.content));
    assert_contains_all(note, &["resource link"]);
    session.close().await;
}
