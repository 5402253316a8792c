//! The kernels in plain Rust, on every target: the definition the AVX2 ones match to the bit.
//!
//! Each multiply-add is `f32::mul_add` (one rounding, as `vfmadd`), sums run in the order the
//! AVX2 registers run them. On aarch64 `mul_add` is one `fmadd`/`fmla` instruction; on an
//! x86-64 without FMA (only then is this path taken there) it is libm's `fmaf`, correct but
//! several times slower than a plain multiply and add.

use super::{ERF_P, ERF_Q, GROUP, PANEL, TILE};

/// [`super::widen`], lengths checked by the caller.
pub(super) fn widen(q: &[i8], scales: &[f32], out: &mut [f32]) {
    let (out, q) = (out.chunks_mut(GROUP * PANEL), q.chunks(GROUP * PANEL));
    for ((out, q), scales) in out.zip(q).zip(scales.chunks_exact(PANEL)) {
        for (o, q) in out.chunks_exact_mut(PANEL).zip(q.chunks_exact(PANEL)) {
            for ((o, &q), &s) in o.iter_mut().zip(q).zip(scales) {
                *o = f32::from(q) * s;
            }
        }
    }
}

/// [`super::multiply`], bounds checked by the caller.
pub(super) fn tile(m: usize, xs: &[f32], k: usize, panel: &[f32], tile: &mut [[f32; PANEL]; TILE]) {
    for (i, acc) in tile.iter_mut().take(m).enumerate() {
        *acc = [0.0; PANEL];
        for (&xv, w) in xs[i * k..(i + 1) * k].iter().zip(panel.chunks_exact(PANEL)) {
            for (a, &w) in acc.iter_mut().zip(w) {
                *a = xv.mul_add(w, *a);
            }
        }
    }
}

/// [`super::dot`] over the shorter of `a` and `b`.
pub(super) fn dot(a: &[f32], b: &[f32]) -> f32 {
    let len = a.len().min(b.len());
    let (a, b) = (&a[..len], &b[..len]);
    let mut lanes = [0f32; 8];
    let (chunks_a, chunks_b) = (a.chunks_exact(8), b.chunks_exact(8));
    let (tail_a, tail_b) = (chunks_a.remainder(), chunks_b.remainder());
    for (a, b) in chunks_a.zip(chunks_b) {
        for ((s, &x), &y) in lanes.iter_mut().zip(a).zip(b) {
            *s = x.mul_add(y, *s);
        }
    }
    let sum = reduce(lanes);
    tail(sum, tail_a, tail_b)
}

/// Eight lanes to one sum in AVX's order: the upper four added to the lower four, then
/// `(h0 + h1) + (h2 + h3)` (two `hadd`s).
pub(super) fn reduce(s: [f32; 8]) -> f32 {
    let h = [s[0] + s[4], s[1] + s[5], s[2] + s[6], s[3] + s[7]];
    (h[0] + h[1]) + (h[2] + h[3])
}

/// `sum` plus the products of a tail shorter than eight, in order, fused.
pub(super) fn tail(sum: f32, a: &[f32], b: &[f32]) -> f32 {
    a.iter().zip(b).fold(sum, |s, (&x, &y)| x.mul_add(y, s))
}

/// [`super::axpy`] over the shorter of `out` and `v`.
pub(super) fn axpy(out: &mut [f32], p: f32, v: &[f32]) {
    for (o, &v) in out.iter_mut().zip(v) {
        *o = p.mul_add(v, *o);
    }
}

/// GELU of one value (exact form, erf by [`erf`]).
pub(super) fn gelu(v: f32) -> f32 {
    0.5 * v * (1.0 + erf(v * std::f32::consts::FRAC_1_SQRT_2))
}

/// erf to within 1e-7 ([`ERF_P`], [`ERF_Q`]), Horner's rule by fused multiply-adds.
pub(super) fn erf(x: f32) -> f32 {
    let x = x.clamp(-4.0, 4.0);
    let x2 = x * x;
    let p = ERF_P[1..].iter().fold(ERF_P[0], |p, &c| p.mul_add(x2, c));
    let q = ERF_Q[1..].iter().fold(ERF_Q[0], |q, &c| q.mul_add(x2, c));
    x * p / q
}
