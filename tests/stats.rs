//! `mcp-defer stats --compare A,B`: the first tool list of two exposure modes, counted with
//! the o200k_base tokenizer, side by side.

use crate::support::{Dir, assert_contains_all, fixture, line_where, stderr, stdout};

fn two_fixtures() -> Dir {
    Dir::with_config(&format!(
        "{}{}",
        fixture("fx", &[], "always_load = [\"echo\"]"),
        fixture("other", &["--name", "other"], ""),
    ))
}

/// The numbers of the row that starts with `name`.
fn numbers(text: &str, name: &str) -> Vec<usize> {
    text.lines()
        .find(|l| l.starts_with(name))
        .unwrap_or_else(|| panic!("no row {name} in:\n{text}"))
        .split_whitespace()
        .filter_map(|w| w.parse().ok())
        .collect()
}

#[test]
fn stats_compares_any_two_modes_in_tokens() {
    let dir = two_fixtures();
    let out = dir.run(&["stats", "--compare", "all,deferred"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let text = stdout(&out);
    let header: Vec<&str> = text.lines().next().unwrap().split_whitespace().collect();
    assert_eq!(header, ["server", "tools", "all", "deferred"], "{text}");
    assert_contains_all(&text, &["total (o200k_base tokens)"]);
    let [tools, all, deferred] = numbers(&text, "total")[..] else {
        panic!("{text}")
    };
    assert_eq!(tools, 14, "{text}");
    // other pins nothing: listed in all, absent in deferred.
    let other = numbers(&text, "other ");
    assert!(other[1] > 100 && other[2] == 0, "{text}");
    // fx pins echo: in both, and more of it in all.
    let fx = numbers(&text, "fx ");
    assert!(fx[2] > 0 && fx[1] > fx[2], "{text}");
    // The meta tools are listed in both modes, with the same text.
    let meta = numbers(&text, "meta tools");
    assert_eq!(meta[1], meta[2], "{text}");
    assert!(meta[1] > 100, "{text}");
    assert_eq!(all, other[1] + fx[1] + meta[1], "{text}");
    assert_eq!(deferred, fx[2] + meta[2], "{text}");
    assert_contains_all(&text, &["the first tools/list in deferred is"]);

    // Directly registered, a server's tools keep their own names and no _meta: fewer tokens
    // than mcp-defer's listed form of the same tools, and no meta tools.
    let out = dir.run(&["stats", "--compare", "direct,all"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let text = stdout(&out);
    let other = numbers(&text, "other ");
    assert!(other[1] > 100 && other[1] < other[2], "{text}");
    assert_eq!(numbers(&text, "meta tools")[1], 0, "{text}");
}

#[test]
fn stats_names_the_modes_it_knows() {
    let dir = two_fixtures();
    let out = dir.run(&["stats", "--compare", "all,lazy"]);
    assert_eq!(out.status.code(), Some(2));
    let err = stderr(&out);
    assert_contains_all(
        &err,
        &["unknown mode 'lazy'", "direct, all, deferred or proxy"],
    );
}

/// The way in as a new user met it (issue 35, item 12).
#[test]
fn stats_shows_a_failed_server_as_failed() {
    let dir = Dir::with_config(&format!(
        "{}\n[mcp_servers.broken]\ncommand = \"mcp-server-that-does-not-exist\"\n",
        crate::support::fixture("fx", &[], "")
    ));
    let out = dir.run(&["stats"]);
    let table = stdout(&out);
    let broken = line_where(&table, |l| l.starts_with("broken "));
    assert!(broken.contains("failed"), "{table}");
    assert!(!broken.contains(" 0 "), "{table}");
}
