use std::time::{Duration, Instant};

use super::*;

fn event(kind: Kind, query: &str, tool: &str) -> Event {
    Event {
        time: 1,
        kind,
        query: query.to_owned(),
        tool: tool.to_owned(),
    }
}

fn words(text: &str) -> Option<QueryKey> {
    let mut words: Vec<String> = text.split_whitespace().map(str::to_owned).collect();
    words.sort();
    words.dedup();
    Some(QueryKey::Words(words))
}

const WEIGHTS: Weights = Weights {
    floor: 0.3,
    selected: 0.25,
};

/// Waits (bounded) until the writer thread has put `lines` lines in the file.
fn wait_for_lines(path: &std::path::Path, lines: usize) -> String {
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let text = std::fs::read_to_string(path).unwrap_or_default();
        if text.lines().count() >= lines || Instant::now() > deadline {
            return text;
        }
        std::thread::sleep(Duration::from_millis(5));
    }
}

#[test]
fn events_survive_a_reopen_and_a_torn_last_line_is_skipped() {
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let path = dir.path().join("sub").join(FILE_NAME);
    let usage = Usage::open(path.clone());
    assert!(!path.exists(), "nothing learnt, no file");
    usage.record(event(
        Kind::Selected,
        "send the weekly report",
        "mail__send",
    ));
    usage.record(event(Kind::Called, "send the weekly report", "mail__send"));
    let text = wait_for_lines(&path, 2);
    assert_eq!(text.lines().count(), 2, "{text}");
    assert!(!text.contains("arguments"), "{text}");
    if let Some(mode) = crate::platform::mode_of(&path) {
        assert_eq!(mode & 0o777, 0o600, "the file is the user's alone");
    }
    drop(usage);
    // A crash mid-write leaves half a line.
    let mut torn = text.clone();
    torn.push_str("{\"t\":3,\"k\":\"called\",\"q\":\"send the");
    std::fs::write(&path, torn).unwrap_or_else(|e| panic!("{e}"));
    let reopened = Usage::open(path.clone());
    assert_eq!(reopened.len(), 2);
    let key = words("send the weekly report").unwrap_or_else(|| unreachable!());
    let evidence = reopened.evidence(&key, WEIGHTS, words);
    // One call, and the selection it followed is no unfollowed selection.
    assert_eq!(evidence.get("mail__send"), Some(&1.0), "{evidence:?}");
}

#[test]
fn a_corrupt_file_starts_empty_and_an_unreadable_one_too() {
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let path = dir.path().join(FILE_NAME);
    std::fs::write(&path, b"\xff\xfe not json\n{\"t\":1}\n").unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(Usage::open(path).len(), 0);
    // A directory where the file should be: cannot be read, never a failure.
    let usage = Usage::open(dir.path().to_owned());
    assert_eq!(usage.len(), 0);
    usage.record(event(Kind::Called, "q", "t"));
    assert_eq!(usage.len(), 1, "learning goes on in memory");
}

#[test]
fn only_the_newest_events_are_kept_and_a_long_file_is_compacted() {
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let path = dir.path().join(FILE_NAME);
    let total = MAX_EVENTS + MAX_EVENTS / 2;
    let mut text = Vec::new();
    for i in 0..total {
        text.extend(event(Kind::Called, &format!("query {i}"), "s__t").line());
    }
    std::fs::write(&path, text).unwrap_or_else(|e| panic!("{e}"));
    let usage = Usage::open(path.clone());
    assert_eq!(usage.len(), MAX_EVENTS);
    let kept = std::fs::read_to_string(&path).unwrap_or_default();
    assert_eq!(kept.lines().count(), MAX_EVENTS, "compacted on open");
    assert!(kept.starts_with(&format!(
        "{{\"t\":1,\"k\":\"called\",\"q\":\"query {}\"",
        total - MAX_EVENTS
    )));
    // In memory too: one more pushes the oldest out, and its evidence with it.
    let oldest = format!("query {}", total - MAX_EVENTS);
    let key = words(&oldest).unwrap_or_else(|| unreachable!());
    let exact = Weights {
        floor: 0.99,
        ..WEIGHTS
    };
    assert!(usage.evidence(&key, exact, words).contains_key("s__t"));
    usage.record(event(Kind::Called, "another", "s__u"));
    assert_eq!(usage.len(), MAX_EVENTS);
    assert!(usage.evidence(&key, exact, words).is_empty());
}

#[test]
fn calls_weigh_more_than_selections_and_similarity_scales_them() {
    let usage = Usage::in_memory();
    usage.record(event(Kind::Called, "send the weekly report", "mail__send"));
    usage.record(event(
        Kind::Selected,
        "send the weekly report",
        "mail__draft",
    ));
    usage.record(event(Kind::Called, "weather in paris", "weather__now"));
    let query = words("send the weekly report").unwrap_or_else(|| unreachable!());
    let evidence = usage.evidence(&query, WEIGHTS, words);
    assert_eq!(evidence.get("mail__send"), Some(&1.0));
    assert_eq!(evidence.get("mail__draft"), Some(&0.25));
    assert!(!evidence.contains_key("weather__now"), "{evidence:?}");
    // A query sharing 3 of 5 words (Jaccard 0.6) gets (0.6 - 0.3) / 0.7 of it.
    let similar = words("send the monthly report").unwrap_or_else(|| unreachable!());
    let e = usage.evidence(&similar, WEIGHTS, words)["mail__send"];
    assert!((e - 0.3 / 0.7).abs() < 1e-5, "{e}");
    // Saturating: one call is half the lift, never more than all of it.
    assert_eq!(saturate(1.0), 0.5);
    assert!(saturate(1e9) <= 1.0 && saturate(-1e9) >= -1.0);
}

#[test]
fn a_token_in_a_query_is_masked_before_it_is_kept() {
    let e = Event::now(
        Kind::Called,
        "fetch https://api.example/x?api_key=abc123def456",
        "s__t",
    );
    assert!(!e.query.contains("abc123def456"), "{}", e.query);
}

#[test]
fn a_choice_belongs_to_the_search_that_listed_the_tool() {
    let mut trail = Trail::default();
    assert_eq!(
        trail.chose("s__a", Kind::Called, true),
        None,
        "no search yet"
    );
    trail.searched("first", vec!["s__a".into()]);
    trail.searched("second", vec!["s__b".into()]);
    let e = trail.chose("s__a", Kind::Selected, true);
    assert_eq!(
        e.map(|e| (e.query, e.kind)),
        Some(("first".into(), Kind::Selected))
    );
    // Not listed by any search: the newest query, through a meta tool only.
    assert_eq!(trail.chose("core__read", Kind::Called, false), None);
    let e = trail.chose("s__c", Kind::Selected, true);
    assert_eq!(e.map(|e| e.query), Some("second".into()));
    // A later direct call of what was selected upgrades the same pair, once.
    let e = trail.chose("s__c", Kind::Called, false);
    assert_eq!(
        e.map(|e| (e.query, e.kind)),
        Some(("second".into(), Kind::Called))
    );
    assert_eq!(
        trail.chose("s__c", Kind::Called, false),
        None,
        "once per session"
    );
}
