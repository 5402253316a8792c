//! The static embedding tier: meaning without a shared word, the built-in model, int8
//! vectors, and fused ranks that do not depend on upsert history.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use super::*;

/// Meaning without a shared word or topic: names newer than any lexicon (`DeFi`), a
/// language for "translate", `nameserver` for DNS. With `semantic = "off"` the lexical
/// engine alone has nothing to go on.
#[test]
fn static_embeddings_find_a_tool_without_a_shared_word_or_topic() {
    let s = spec;
    let specs = vec![
        s("weather", 0, "forecast", "Weather forecast for a city"),
        s(
            "translate",
            1,
            "translate",
            "Translate text between languages",
        ),
        s("repo", 2, "commit", "Record changes to the repository"),
        s(
            "crypto",
            3,
            "coin_prices",
            "Prices of Bitcoin, Ethereum and other cryptocurrencies",
        ),
        s("dns", 4, "lookup", "Resolve a hostname through DNS"),
    ];
    let off = index_opts(&specs, Boosts::default(), Semantic::Off);
    let fused = index_of(&specs);
    for (query, want) in [
        ("DeFi tokens", 3),
        ("spanish", 1),
        ("nameserver", 4),
        ("git push", 2),
    ] {
        assert!(
            off.search(query, 5, None).is_empty(),
            "{query}: lexical found it"
        );
        assert_eq!(first(&fused, query), Some(want), "{query}");
        let explained = fused.explain_with(query, 5, None, None);
        assert_eq!(explained[0].lexical, None);
        assert_eq!(explained[0].vector.map(|(_, rank)| rank), Some(Some(1)));
    }
}

#[test]
fn the_built_in_model_loads_and_embeds_deterministically() {
    let model = StaticModel::get().expect("embedded model parses");
    assert_eq!(model.dims(), 256);
    let a = model.embed("create a GitHub issue").unwrap();
    let b = model.embed("create a GitHub issue").unwrap();
    assert_eq!(a, b);
    let norm: f32 = a.iter().map(|x| x * x).sum::<f32>().sqrt();
    assert!((norm - 1.0).abs() < 1e-4, "{norm}");
    assert!(model.embed("").is_none());
    assert!(model.embed("   ").is_none());
    // Related texts are closer than unrelated ones.
    let cos = |x: &[f32], y: &[f32]| x.iter().zip(y).map(|(p, q)| p * q).sum::<f32>();
    let bug = model.embed("report a bug in the repository").unwrap();
    let rain = model.embed("will it rain tomorrow").unwrap();
    assert!(cos(&a, &bug) > cos(&a, &rain));
}

#[test]
fn int8_round_trip_is_within_half_a_step() {
    let v: Vec<f32> = (0..256)
        .map(|i| ((i * 37 % 101) as f32 - 50.0) / 97.0)
        .collect();
    let (q, scale) = quantize(&v);
    for (x, q) in v.iter().zip(&q) {
        assert!((f32::from(*q) * scale - x).abs() <= scale / 2.0 + 1e-6);
    }
    let (zeros, zero_scale) = quantize(&[0.0; 8]);
    assert_eq!((zeros, zero_scale), (vec![0; 8], 0.0));
    // A stored vector comes back as the cosine with itself.
    let norm: f32 = v.iter().map(|x| x * x).sum::<f32>().sqrt();
    let unit: Vec<f32> = v.iter().map(|x| x / norm).collect();
    let mut vectors = Vectors::default();
    vectors.set(EntryId(7), 7, "s", Some(&unit));
    let c = vectors.cosines(&unit, None);
    assert!((c[0] - 1.0).abs() < 0.01, "{}", c[0]);
    assert!(vectors.cosines(&unit, Some("other")).is_empty());
    vectors.remove(EntryId(7));
    assert!(vectors.cosines(&unit, None).is_empty());
}

/// Fused ranks and scores do not depend on the order tools arrived in or on removals that
/// were undone: vector rows move, ranks must not.
#[test]
fn fused_ranks_do_not_depend_on_upsert_history() {
    let specs = catalog();
    let forward = index_of(&specs);
    let mut shuffled = SearchIndex::new().unwrap();
    let names = qualified_names(&specs);
    let doc = |i: usize| doc(&specs, &names, i);
    let n = specs.len();
    shuffled.upsert((0..n).rev().map(doc)).unwrap();
    shuffled.remove([EntryId(0), EntryId(3)]).unwrap();
    shuffled.upsert([doc(3), doc(0)]).unwrap();
    for q in [
        "create issue",
        "merge a branch",
        "what time is it",
        "read a file",
        "something unrelated entirely",
    ] {
        let a = forward.search(q, 10, None);
        let b = shuffled.search(q, 10, None);
        assert_eq!(a, b, "{q}");
        let filtered = forward.search(q, 10, Some("github"));
        assert!(filtered.iter().all(|h| h.id.0 <= 2), "{q}: {filtered:?}");
    }
}
