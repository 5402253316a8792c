//! What a query answers: ranked hits, how each got its score, and which engines ranked it
//! (`mcp-defer search --explain`, and the tier `search_tools` shows the model).

use crate::catalog::EntryId;

/// One ranked result.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Hit {
    pub id: EntryId,
    pub score: f32,
}

/// One ranked result and how it got there (`mcp-defer search --explain`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Explained {
    pub id: EntryId,
    /// The score ranked by: the fused one, or the lexical one when vectors are off.
    pub score: f32,
    /// BM25 score and 1-based rank in the lexical ranking (`None`: not in its first
    /// [`FUSION_DEPTH`](super::fusion::FUSION_DEPTH)).
    pub lexical: Option<(f32, usize)>,
    /// Cosine with the query and 1-based rank by cosine (rank `None`: below the first
    /// [`FUSION_DEPTH`](super::fusion::FUSION_DEPTH)); `None` when no vector was compared.
    pub vector: Option<(f32, Option<usize>)>,
    /// Each engine's part of `score` (words only: all of it is `lexical`).
    pub parts: Parts,
    /// The estimated chance, in [0, 1], that this is a tool the query asks for (see
    /// `confidence`): what `search_tools` shows as the score. Not the ranking order: a hit
    /// ranked lower by `score` can be surer.
    pub confidence: f32,
}

impl Explained {
    /// A hit whose score is the sum of its parts.
    pub(super) fn of(
        id: EntryId,
        parts: Parts,
        lexical: Option<(f32, usize)>,
        vector: Option<(f32, Option<usize>)>,
    ) -> Explained {
        Explained {
            id,
            score: parts.lexical + parts.vector + parts.statics + parts.named + parts.usage,
            lexical,
            vector,
            parts,
            confidence: 0.0,
        }
    }
}

/// The engines of a fusion: each one's share of a query's fused score ([`Ranking::shares`])
/// or its part of one hit's score ([`Explained::parts`]).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Parts {
    /// Words (BM25F, topics, exact names).
    pub lexical: f32,
    /// The ranking tier's cosine: the static vectors', or the transformer's.
    pub vector: f32,
    /// The static cosine beside the transformer's (three-way fusion).
    pub statics: f32,
    /// The bonus of tools holding the query's named things (see `named`).
    pub named: f32,
    /// The lift of tools chosen before for similar queries (see `usage`): in a query's
    /// shares, the most it can be, as a share of the best score.
    pub usage: f32,
}

/// Which engines ranked a query: the model reads it in `search_tools` answers, so it
/// knows whether meaning was searched or only words.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Tier {
    /// Words only (`semantic = "off"`, or no vector could be made).
    Words,
    /// Words and the built-in static embeddings.
    Static,
    /// Words, the transformer's vectors and the static ones.
    Transformer,
}

impl Tier {
    /// The name `search_tools` shows.
    pub fn as_str(self) -> &'static str {
        match self {
            Tier::Words => "words",
            Tier::Static => "words+static",
            Tier::Transformer => "words+transformer",
        }
    }
}

/// A query's ranking and how it was made.
#[derive(Debug, Clone, PartialEq)]
pub struct Ranking {
    pub hits: Vec<Explained>,
    pub tier: Tier,
    /// Each engine's share of the fused score for this query.
    pub shares: Parts,
    /// The query's named things (words that name a tool, server or parameter, or rare
    /// words written as names), which lift the tools holding them.
    pub named: Vec<String>,
    /// Tools still waiting for their transformer vector (0 without that tier): until none
    /// is, the static tier ranks.
    pub waiting: usize,
    /// The query's needs when it has two or more (see `needs`), each ranked too; empty
    /// otherwise.
    pub needs: Vec<String>,
    /// Whether any hit fits the query: one of the first [`FIT_TOP`](super::FIT_TOP) reaches
    /// the tier's confidence threshold ([`Calibration::threshold`](super::Calibration::threshold));
    /// false: the hits are only the nearest, and none does what was asked.
    pub fits: bool,
    /// How much of the query names things (0: a description of intent, 1: only names;
    /// see `Boosts::name_shift`): meaning's share in the fusion shrinks by it.
    pub nameness: f32,
}
