//! The forward pass's other steps: self-attention, LayerNorm, GELU.

use std::ops::Range;

use super::{Isa, Kernels, scalar};

/// Self-attention over texts laid end to end: `qkv` holds each token's query, key and
/// value (`3 · width` per token), `spans` each text's tokens, and a token attends to its own
/// text's tokens only. Writes each token's context (`width` per token, heads side by side).
///
/// # Panics
/// When `qkv` is shorter than the spans' tokens need or `heads` does not divide the width.
pub fn attention(
    kernels: Kernels,
    qkv: &[f32],
    spans: &[Range<usize>],
    heads: usize,
    context: &mut [f32],
) {
    match kernels.0 {
        Isa::Scalar => attend(qkv, spans, heads, context, scalar::dot, scalar::axpy),
        #[cfg(target_arch = "x86_64")]
        // SAFETY: AVX2 and FMA are there (`Kernels::avx2_fma`); `avx2::attention` indexes
        // its slices with bounds checks only.
        Isa::Avx2Fma => unsafe { super::avx2::attention(qkv, spans, heads, context) },
    }
}

/// [`attention`] with its dot product and `out += p · v` given: inlined into each caller, so
/// in the AVX2 one both are inlined too (a call for each pair of tokens cost ~15% of a
/// tool text's time).
#[inline(always)]
pub(super) fn attend(
    qkv: &[f32],
    spans: &[Range<usize>],
    heads: usize,
    context: &mut [f32],
    dot: impl Fn(&[f32], &[f32]) -> f32,
    axpy: impl Fn(&mut [f32], f32, &[f32]),
) {
    let tokens = spans.last().map_or(0, |s| s.end);
    let width = context.len() / tokens.max(1);
    let head = width / heads.max(1);
    assert!(qkv.len() >= tokens * 3 * width && head * heads == width);
    let stride = 3 * width;
    let scale = 1.0 / (head as f32).sqrt();
    let mut scores = Vec::new();
    for span in spans {
        scores.resize(span.len(), 0f32);
        for h in 0..heads {
            let at = h * head;
            for i in span.clone() {
                let q = &qkv[i * stride + at..][..head];
                let mut max = f32::NEG_INFINITY;
                for (s, j) in scores.iter_mut().zip(span.clone()) {
                    *s = dot(q, &qkv[j * stride + width + at..][..head]) * scale;
                    max = max.max(*s);
                }
                let mut sum = 0f32;
                for s in scores.iter_mut() {
                    *s = (*s - max).exp();
                    sum += *s;
                }
                let out = &mut context[i * width + at..][..head];
                out.fill(0.0);
                for (s, j) in scores.iter().zip(span.clone()) {
                    axpy(out, s / sum, &qkv[j * stride + 2 * width + at..][..head]);
                }
            }
        }
    }
}

/// LayerNorm over each row of `x` (`weight.len()` wide), in place.
pub fn layer_norm(x: &mut [f32], weight: &[f32], bias: &[f32], eps: f32) {
    let n = weight.len();
    if n == 0 {
        return;
    }
    for row in x.chunks_exact_mut(n) {
        let mean = row.iter().sum::<f32>() / n as f32;
        let var = row.iter().map(|v| (v - mean) * (v - mean)).sum::<f32>() / n as f32;
        let inv = 1.0 / (var + eps).sqrt();
        for ((v, w), b) in row.iter_mut().zip(weight).zip(bias) {
            *v = (*v - mean) * inv * w + b;
        }
    }
}

/// GELU with the exact (erf) form, as BERT and candle's `gelu_erf`, in place; erf by a
/// rational fit within 1e-7.
pub fn gelu(kernels: Kernels, x: &mut [f32]) {
    match kernels.0 {
        Isa::Scalar => x.iter_mut().for_each(|v| *v = scalar::gelu(*v)),
        #[cfg(target_arch = "x86_64")]
        // SAFETY: AVX2 and FMA are there (`Kernels::avx2_fma`); `avx2::gelu` touches the
        // slice it is given only.
        Isa::Avx2Fma => unsafe { super::avx2::gelu(x) },
    }
}
