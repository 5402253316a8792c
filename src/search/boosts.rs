//! The tuning knobs of a query: per-field BM25F weights, fusion shares, the named-thing
//! bonus and the shift of shares for a query of names, each default with the measurement that chose it
//! (docs/search.md).

/// A tool that shares no word with the query is a hit only when its cosine reaches this.
/// Min-max normalisation puts the best vector at 1 whatever it is, so without a floor every
/// query, "zeppelin" included, would fill `limit` with the nearest unrelated tools (and
/// `search_tools` could never say "no tools match"). Measured on the test catalogs:
/// unrelated tools stay under 0.15, tools the query means reach 0.28 and more.
pub(super) const VECTOR_ONLY_FLOOR: f32 = 0.2;
/// The same floor for the transformer's cosines (all-MiniLM-L6-v2 puts unrelated short
/// texts at 0.0-0.25 and paraphrases above 0.4). Measured with the three-way fusion
/// (docs/search.md): 0.2 beats 0.3 by +0.013 single R@5 and +0.018 on the reference set;
/// 0.1 adds +0.03 more on the reference set but lets unrelated tools through.
pub(super) const MODEL_VECTOR_ONLY_FLOOR: f32 = 0.2;
/// The named-thing bonus of the transformer tier (z units). Picked on MetaTool single; see
/// docs/search.md ("Named things") for the sweep and the held-out figures.
const NAMED_BONUS: f32 = 1.0;
/// The same in the static tier (min-max units): off, as 0.2 cost the reference set R@1
/// 0.588 → 0.571 and MRR 0.687 → 0.670 at equal R@5 (docs/search.md).
const STATIC_NAMED_BONUS: f32 = 0.0;
/// Weight of a tool's best score over a query's needs beside its whole-query score, in the
/// transformer tier (`needs`; 0 turns the split off). Picked on the even half of MetaTool
/// multi (R@5 0.779 -> 0.793); the odd half 0.795 -> 0.807; MetaTool single R@5 0.805 ->
/// 0.804, R@1 0.562 -> 0.557 (docs/search.md, "Two-need queries").
const NEEDS_WEIGHT: f32 = 0.5;
/// The same in the static tier: 0.5 and 1 both took the tuning half of MetaTool multi
/// from R@5 0.783 to 0.797; 1 cost MetaTool single 0.002, 0.5 nothing.
const STATIC_NEEDS_WEIGHT: f32 = 0.5;
/// How much of meaning's share in the fusion moves to words for a query of names alone
/// (issue 33, item 4): the share is scaled by `1 - NAME_SHIFT x nameness`, nameness being
/// the query's named things over its content words. Picked on MetaTool single (0 kept
/// until measured; docs/search.md, "Per-query fusion").
const NAME_SHIFT: f32 = 0.0;
/// How many of the best hits the fit signal looks at: what a model reads first (the
/// confidence a hit must reach is [`Calibration`](super::Calibration)'s).
pub const FIT_TOP: usize = 5;
/// The most learnt use lifts a tool, as a share of the query's best score (see `usage`).
/// Picked on MetaTool single replayed as usage (docs/search.md, "Learning from use"): 1.0
/// gained +0.005 R@5 more, but one call after the very same query would then lift a tool
/// at half the best score level with it; at 0.7 that tool needs 65% of the best.
const USAGE_LIFT: f32 = 0.7;
/// Weight of a selection never followed by a call, against 1 for a call.
const USAGE_SELECTED: f32 = 0.25;
/// Least static-embedding cosine between a stored query and this one for its choices to
/// count (shared words, Jaccard, with `semantic = "off"`).
/// 0.4 on MetaTool single: +0.078 R@5 (0.5: +0.071, 0.6: +0.023, 0.3: +0.058).
const USAGE_FLOOR: f32 = 0.4;
/// The same floor for shared words (Jaccard of the analyzed words), when queries are
/// compared by words (`semantic = "off"`). On MetaTool single: 0.15 +0.016 R@5, 0.25 and
/// 0.35 +0.000, 0.5 +0.000 (few paraphrases share many words; meaning is the static
/// tier's).
const USAGE_WORDS_FLOOR: f32 = 0.15;

/// Per-field weights of a query term's BM25 score (BM25F-style; tantivy's k1 and b are fixed,
/// so the field layout and these weights are the tuning knobs).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Boosts {
    pub name: f32,
    pub name_prefix: f32,
    pub title: f32,
    pub description: f32,
    pub description_plain: f32,
    pub description_prefix: f32,
    pub params: f32,
    pub param_text: f32,
    pub enums: f32,
    pub server: f32,
    pub server_text: f32,
    /// Topics shared by query and tool (see `concepts`).
    pub topics: f32,
    /// Take each term's IDF over the whole tool rather than per field (BM25F).
    pub shared_idf: bool,
    /// Drop request framing words ("can you help me") from queries.
    pub drop_filler: bool,
    /// Share of the vector score in the fused score (0: lexical order, 1: vectors alone);
    /// both scores are min-max normalised per query first. Unused with `Semantic::Off`.
    pub vector: f32,
    /// The same share for the transformer tier's vectors.
    pub model_vector: f32,
    /// Fuse the transformer tier's scores as z-scores (true) or min-max (false).
    pub model_zscore: bool,
    /// Share of the static tier's cosine (as a z-score) in the transformer tier's fusion:
    /// three-way fusion, lexical share `1 - model_vector - model_static` (the static
    /// share is cut to fit when the two exceed 1).
    pub model_static: f32,
    /// Least cosine of a tool found by the transformer's vector alone.
    pub model_floor: f32,
    /// Bonus (in z-score units) of a tool holding all of the query's named things, in the
    /// transformer tier's fusion; a share of them gets the same share of it.
    pub named: f32,
    /// How much of meaning's share moves to words for a query of names alone (the share
    /// is scaled by `1 - name_shift x nameness`; see [`Ranking::nameness`](super::Ranking::nameness)).
    pub name_shift: f32,
    /// The same bonus in the static tier's fusion (min-max units: 1 is the best score).
    pub static_named: f32,
    /// A query of two or more needs (`needs`) ranks each need too: a tool scores its
    /// whole-query score plus this times its best score over the needs (transformer tier).
    pub needs: f32,
    /// The same in the static tier's fusion.
    pub static_needs: f32,
    /// The most learnt use (`usage`) lifts a tool, as a share of the query's best score;
    /// 0: use is not looked at.
    pub usage: f32,
    /// Weight of a selection never followed by a call (a call weighs 1); below 0 it
    /// pushes the tool down.
    pub usage_selected: f32,
    /// Least similarity of a stored query to this one for its choices to count (static
    /// cosine).
    pub usage_floor: f32,
    /// The same with `semantic = "off"` (Jaccard of the analyzed words).
    pub usage_words_floor: f32,
}

impl Default for Boosts {
    fn default() -> Self {
        Boosts {
            name: 1.5,
            name_prefix: 1.0,
            title: 2.0,
            description: 1.0,
            description_plain: 0.5,
            description_prefix: 0.3,
            params: 1.0,
            param_text: 0.5,
            enums: 0.5,
            server: 1.5,
            server_text: 0.5,
            topics: 0.5,
            shared_idf: true,
            drop_filler: true,
            vector: 0.5,
            model_vector: 0.5,
            model_zscore: true,
            model_static: 0.3,
            model_floor: MODEL_VECTOR_ONLY_FLOOR,
            named: NAMED_BONUS,
            name_shift: NAME_SHIFT,
            static_named: STATIC_NAMED_BONUS,
            needs: NEEDS_WEIGHT,
            static_needs: STATIC_NEEDS_WEIGHT,
            usage: USAGE_LIFT,
            usage_selected: USAGE_SELECTED,
            usage_floor: USAGE_FLOOR,
            usage_words_floor: USAGE_WORDS_FLOOR,
        }
    }
}
