//! The token counts mcp-defer uses.
//!
//! - [`count`]: a real BPE count with OpenAI's `o200k_base` encoding (GPT-4o, GPT-4.1,
//!   GPT-5), built into the binary so it works offline. `stats`
//!   and `report` count tool schemas with it. Anthropic's tokenizer is not public: for
//!   Claude the same count is an approximation (Claude's tokenizer usually yields somewhat
//!   more tokens for the same JSON), good for comparing setups, not for billing.
//! - [`estimate`]: serialized bytes / 4, for the hot path (`max_output_tokens` budgets),
//!   where a rough bound is enough and a BPE pass over every result would cost time.

use std::sync::LazyLock;

use tiktoken_rs::{CoreBPE, Rank};

/// The encoding [`count`] uses, by its public name (printed beside every count).
pub(crate) const ENCODING: &str = "o200k_base";

/// o200k_base's table, packed by `scripts/pack_o200k.py` from the file tiktoken-rs ships:
/// one length byte and the token's bytes per rank, in rank order. tiktoken-rs's own
/// constructor embeds the table as base64 text (3.6 MB of the binary, parsed through
/// base64 on first use); this is the same table in 1.6 MB.
static O200K_BASE: &[u8] = include_bytes!("o200k_base.bin");

/// o200k_base's special tokens, as tiktoken-rs declares them (never produced by
/// [`count`], which encodes ordinary text).
const SPECIAL: [(&str, Rank); 2] = [("<|endoftext|>", 199_999), ("<|endofprompt|>", 200_018)];

/// The encoder, built on first use (`None` if the embedded table were broken, which the
/// unit tests rule out for every build).
static BPE: LazyLock<Option<CoreBPE>> = LazyLock::new(|| match bpe(O200K_BASE) {
    Ok(bpe) => Some(bpe),
    Err(error) => {
        tracing::error!(%error, "o200k_base table unusable; token counts fall back to bytes / 4");
        None
    }
});

#[derive(Debug, thiserror::Error)]
enum TableError {
    #[error("token {0} is cut short at the end of the table")]
    Cut(usize),
    #[error("more tokens than ranks")]
    TooMany(#[from] std::num::TryFromIntError),
    #[error("tiktoken-rs refused the table: {0}")]
    Encoder(String),
}

/// The table of `packed` (see [`O200K_BASE`]) as tiktoken-rs's encoder.
fn bpe(packed: &[u8]) -> Result<CoreBPE, TableError> {
    let mut encoder = rustc_hash::FxHashMap::default();
    let mut rest = packed;
    while let Some((&len, tail)) = rest.split_first() {
        let Some((token, tail)) = tail.split_at_checked(usize::from(len)) else {
            return Err(TableError::Cut(encoder.len()));
        };
        let rank = Rank::try_from(encoder.len())?;
        encoder.insert(token.to_vec(), rank);
        rest = tail;
    }
    let special = SPECIAL.iter().map(|&(s, r)| (s.to_owned(), r)).collect();
    CoreBPE::new(encoder, special, tiktoken_rs::O200K_BASE_PAT_STR)
        .map_err(|e| TableError::Encoder(e.to_string()))
}

/// Bytes per token, roughly.
pub(crate) const BYTES_PER_TOKEN: usize = 4;

/// Tokens of `text` in [`ENCODING`]. The first call builds the encoder from the embedded
/// table; later calls reuse it.
pub(crate) fn count(text: &str) -> usize {
    match &*BPE {
        Some(bpe) => bpe.encode_ordinary(text).len(),
        None => estimate(text.len()),
    }
}

/// Estimated tokens of `bytes` bytes of text or JSON.
pub(crate) fn estimate(bytes: usize) -> usize {
    bytes.div_ceil(BYTES_PER_TOKEN)
}

/// The bytes `tokens` tokens stand for: the inverse of [`estimate`].
pub(crate) fn bytes_for(tokens: usize) -> usize {
    tokens.saturating_mul(BYTES_PER_TOKEN)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_known_strings_in_o200k_base() {
        // Reference values from OpenAI's tiktoken (o200k_base).
        assert_eq!(count("hello world"), 2);
        assert_eq!(count(""), 0);
        let schema = serde_json::json!({"type": "object", "properties": {"q": {"type": "string"}}});
        let n = count(&schema.to_string());
        assert!(n > 5 && n < 30, "{n}");
    }

    /// The packed table is tiktoken-rs's own, rank for rank (the crate's constructor is
    /// used here only, so its base64 copy stays out of the binary).
    #[test]
    fn the_packed_table_is_tiktoken_rs_o200k_base() {
        let ours = bpe(O200K_BASE).unwrap_or_else(|e| panic!("{e}"));
        let theirs = tiktoken_rs::o200k_base().unwrap_or_else(|e| panic!("{e}"));
        for rank in 0..199_998 {
            assert_eq!(
                ours.decode_bytes(&[rank]).ok(),
                theirs.decode_bytes(&[rank]).ok(),
                "rank {rank}"
            );
        }
        let text = "Searches the web for `query` and returns {\"results\": [...]} 日本語 ok.";
        assert_eq!(ours.encode_ordinary(text), theirs.encode_ordinary(text));
    }

    #[test]
    fn a_cut_table_is_an_error_not_a_panic() {
        assert!(bpe(&[5, b'a', b'b']).is_err());
        assert!(bpe(&[]).is_ok());
    }
}
