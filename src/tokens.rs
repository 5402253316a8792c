//! The one token estimate mcp-defer uses (`stats`, `max_output_tokens`): bytes of text or
//! serialized JSON / 4, the usual rule of thumb for English and JSON with BPE tokenizers.
//! Good for comparing and for budgets, not for billing; no tokenizer is bundled because
//! each provider's differs and the limits only need to be roughly right.

/// Bytes per token, roughly.
pub const BYTES_PER_TOKEN: usize = 4;

/// Estimated tokens of `bytes` bytes of text or JSON.
pub fn estimate(bytes: usize) -> usize {
    bytes.div_ceil(BYTES_PER_TOKEN)
}

/// The bytes `tokens` tokens stand for: the inverse of [`estimate`].
pub fn bytes_for(tokens: usize) -> usize {
    tokens.saturating_mul(BYTES_PER_TOKEN)
}
