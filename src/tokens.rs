//! The token counts mcp-defer uses.
//!
//! - [`count`]: a real BPE count with OpenAI's `o200k_base` encoding (GPT-4o, GPT-4.1,
//!   GPT-5; the table ships inside the `tiktoken-rs` crate, so it works offline). `stats`
//!   and `report` count tool schemas with it. Anthropic's tokenizer is not public: for
//!   Claude the same count is an approximation (Claude's tokenizer usually yields somewhat
//!   more tokens for the same JSON), good for comparing setups, not for billing.
//! - [`estimate`]: serialized bytes / 4, for the hot path (`max_output_tokens` budgets),
//!   where a rough bound is enough and a BPE pass over every result would cost time.

/// The encoding [`count`] uses, by its public name (printed beside every count).
pub const ENCODING: &str = "o200k_base";

/// Bytes per token, roughly.
pub const BYTES_PER_TOKEN: usize = 4;

/// Tokens of `text` in [`ENCODING`]. The first call parses the embedded table (~0.1-0.3 s);
/// later calls reuse it.
pub fn count(text: &str) -> usize {
    tiktoken_rs::o200k_base_singleton()
        .encode_ordinary(text)
        .len()
}

/// Tokens of `value` serialized as compact JSON, the way clients send tool schemas.
pub fn count_json(value: &serde_json::Value) -> usize {
    count(&value.to_string())
}

/// Estimated tokens of `bytes` bytes of text or JSON.
pub fn estimate(bytes: usize) -> usize {
    bytes.div_ceil(BYTES_PER_TOKEN)
}

/// The bytes `tokens` tokens stand for: the inverse of [`estimate`].
pub fn bytes_for(tokens: usize) -> usize {
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
        let n = count_json(&schema);
        assert!(n > 5 && n < 30, "{n}");
    }
}
