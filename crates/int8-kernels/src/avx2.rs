//! The AVX2 + FMA kernels, written with intrinsics (x86-64 only). Each does what its
//! `scalar.rs` namesake does, in the same order, so the two give the same bits.
//!
//! Every function here is `#[target_feature(enable = "avx2,fma")]`: calling it on a CPU
//! without both is undefined behaviour, so each is `unsafe` to call and reached only through
//! a [`super::Kernels`] built by `Kernels::avx2_fma`, which asks the CPU first. The pointer
//! arithmetic's bounds are asserted by the dispatching function in `lib.rs`, named in each
//! `# Safety` section, and repeated beside each `unsafe` block.

use std::arch::x86_64::{
    __m256, _mm_add_ps, _mm_cvtss_f32, _mm_hadd_ps, _mm_loadl_epi64, _mm256_add_ps,
    _mm256_castps256_ps128, _mm256_cvtepi8_epi32, _mm256_cvtepi32_ps, _mm256_div_ps,
    _mm256_extractf128_ps, _mm256_fmadd_ps, _mm256_loadu_ps, _mm256_max_ps, _mm256_min_ps,
    _mm256_mul_ps, _mm256_set1_ps, _mm256_setzero_ps, _mm256_storeu_ps,
};

use super::{ERF_P, ERF_Q, GROUP, PANEL, TILE, scalar};

/// [`super::widen`].
///
/// # Safety
/// The CPU has AVX2 and FMA; `out` is as long as `q`, a multiple of PANEL, and `scales`
/// holds PANEL values for each GROUP rows of the panel (rounded up).
#[target_feature(enable = "avx2,fma")]
pub(super) unsafe fn widen(q: &[i8], scales: &[f32], out: &mut [f32]) {
    let (q, s, o) = (q.as_ptr(), scales.as_ptr(), out.as_mut_ptr());
    for row in 0..out.len() / PANEL {
        let at = row * PANEL;
        let group = row / GROUP * PANEL;
        // SAFETY: row < out.len() / PANEL, so the two 8-byte loads of `q` (as long as `out`)
        // and the two 8-float stores end at (row + 1)·PANEL <= out.len(); group + PANEL <=
        // scales.len() by the caller's bound (row / GROUP < ceil(rows / GROUP)). Unaligned
        // loads and stores throughout (`loadl_epi64`, `loadu`, `storeu`).
        unsafe {
            let lo = _mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(_mm_loadl_epi64(q.add(at).cast())));
            let hi =
                _mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(_mm_loadl_epi64(q.add(at + 8).cast())));
            _mm256_storeu_ps(o.add(at), _mm256_mul_ps(lo, _mm256_loadu_ps(s.add(group))));
            _mm256_storeu_ps(
                o.add(at + 8),
                _mm256_mul_ps(hi, _mm256_loadu_ps(s.add(group + 8))),
            );
        }
    }
}

/// [`super::multiply`]: six rows by one panel in twelve registers. Rows past `m` read the
/// last row again (computed, not stored).
///
/// # Safety
/// The CPU has AVX2 and FMA; 1 <= m <= TILE, `xs` holds at least `m * k` values and `panel`
/// at least `k * PANEL`.
#[target_feature(enable = "avx2,fma")]
pub(super) unsafe fn tile(
    m: usize,
    xs: &[f32],
    k: usize,
    panel: &[f32],
    tile: &mut [[f32; PANEL]; TILE],
) {
    // Row i's first value; slicing is bounds-checked, and (m - 1)·k <= xs.len().
    let row = |i: usize| xs[i.min(m - 1) * k..].as_ptr();
    let (x0, x1, x2, x3, x4, x5) = (row(0), row(1), row(2), row(3), row(4), row(5));
    let w = panel.as_ptr();
    let z = _mm256_setzero_ps();
    let (mut a0, mut b0, mut a1, mut b1, mut a2, mut b2) = (z, z, z, z, z, z);
    let (mut a3, mut b3, mut a4, mut b4, mut a5, mut b5) = (z, z, z, z, z, z);
    for kk in 0..k {
        // SAFETY: kk < k: the panel's two 8-float loads end at (kk + 1)·PANEL <= k·PANEL
        // <= panel.len(); each row pointer starts at min(i, m - 1)·k and reads its kk-th
        // value, below m·k <= xs.len() (the caller's bounds).
        unsafe {
            let w0 = _mm256_loadu_ps(w.add(kk * PANEL));
            let w1 = _mm256_loadu_ps(w.add(kk * PANEL + 8));
            let x = _mm256_set1_ps(*x0.add(kk));
            a0 = _mm256_fmadd_ps(x, w0, a0);
            b0 = _mm256_fmadd_ps(x, w1, b0);
            let x = _mm256_set1_ps(*x1.add(kk));
            a1 = _mm256_fmadd_ps(x, w0, a1);
            b1 = _mm256_fmadd_ps(x, w1, b1);
            let x = _mm256_set1_ps(*x2.add(kk));
            a2 = _mm256_fmadd_ps(x, w0, a2);
            b2 = _mm256_fmadd_ps(x, w1, b2);
            let x = _mm256_set1_ps(*x3.add(kk));
            a3 = _mm256_fmadd_ps(x, w0, a3);
            b3 = _mm256_fmadd_ps(x, w1, b3);
            let x = _mm256_set1_ps(*x4.add(kk));
            a4 = _mm256_fmadd_ps(x, w0, a4);
            b4 = _mm256_fmadd_ps(x, w1, b4);
            let x = _mm256_set1_ps(*x5.add(kk));
            a5 = _mm256_fmadd_ps(x, w0, a5);
            b5 = _mm256_fmadd_ps(x, w1, b5);
        }
    }
    let rows: [(__m256, __m256); TILE] =
        [(a0, b0), (a1, b1), (a2, b2), (a3, b3), (a4, b4), (a5, b5)];
    for (out, (a, b)) in tile.iter_mut().zip(rows).take(m) {
        // SAFETY: `out` is a `[f32; PANEL]`, 16 values: two unaligned 8-float stores.
        unsafe {
            _mm256_storeu_ps(out.as_mut_ptr(), a);
            _mm256_storeu_ps(out.as_mut_ptr().add(8), b);
        }
    }
}

/// [`super::gelu`], eight values at a time, the tail by [`scalar::gelu`].
#[target_feature(enable = "avx2,fma")]
pub(super) fn gelu(x: &mut [f32]) {
    let mut chunks = x.chunks_exact_mut(8);
    let (half, one, root) = (
        _mm256_set1_ps(0.5),
        _mm256_set1_ps(1.0),
        _mm256_set1_ps(std::f32::consts::FRAC_1_SQRT_2),
    );
    let (lo, hi) = (_mm256_set1_ps(-4.0), _mm256_set1_ps(4.0));
    for chunk in &mut chunks {
        // SAFETY: a chunk holds 8 values.
        let v = unsafe { _mm256_loadu_ps(chunk.as_ptr()) };
        let e = _mm256_min_ps(_mm256_max_ps(_mm256_mul_ps(v, root), lo), hi);
        let e2 = _mm256_mul_ps(e, e);
        let mut p = _mm256_set1_ps(ERF_P[0]);
        for &c in &ERF_P[1..] {
            p = _mm256_fmadd_ps(p, e2, _mm256_set1_ps(c));
        }
        let mut q = _mm256_set1_ps(ERF_Q[0]);
        for &c in &ERF_Q[1..] {
            q = _mm256_fmadd_ps(q, e2, _mm256_set1_ps(c));
        }
        let erf = _mm256_div_ps(_mm256_mul_ps(e, p), q);
        let out = _mm256_mul_ps(_mm256_mul_ps(half, v), _mm256_add_ps(one, erf));
        // SAFETY: a chunk holds 8 values.
        unsafe { _mm256_storeu_ps(chunk.as_mut_ptr(), out) };
    }
    for v in chunks.into_remainder() {
        *v = scalar::gelu(*v);
    }
}

/// [`super::attention`], with [`dot`] and [`axpy`] inlined.
#[target_feature(enable = "avx2,fma")]
pub(super) fn attention(
    qkv: &[f32],
    spans: &[std::ops::Range<usize>],
    heads: usize,
    context: &mut [f32],
) {
    super::ops::attend(
        qkv,
        spans,
        heads,
        context,
        |a, b| dot(a, b),
        |o, p, v| axpy(o, p, v),
    );
}

/// [`super::dot`] over the shorter of `a` and `b`.
#[target_feature(enable = "avx2,fma")]
pub(super) fn dot(a: &[f32], b: &[f32]) -> f32 {
    let len = a.len().min(b.len());
    let whole = len / 8 * 8;
    let mut sum = _mm256_setzero_ps();
    for i in (0..whole).step_by(8) {
        // SAFETY: i + 8 <= whole <= len, the shorter slice's length.
        unsafe {
            sum = _mm256_fmadd_ps(
                _mm256_loadu_ps(a.as_ptr().add(i)),
                _mm256_loadu_ps(b.as_ptr().add(i)),
                sum,
            );
        }
    }
    let half = _mm_add_ps(_mm256_castps256_ps128(sum), _mm256_extractf128_ps::<1>(sum));
    let pair = _mm_hadd_ps(half, half);
    let sum = _mm_cvtss_f32(_mm_hadd_ps(pair, pair));
    scalar::tail(sum, &a[whole..len], &b[whole..len])
}

/// [`super::axpy`] over the shorter of `out` and `v`.
#[target_feature(enable = "avx2,fma")]
pub(super) fn axpy(out: &mut [f32], p: f32, v: &[f32]) {
    let len = out.len().min(v.len());
    let whole = len / 8 * 8;
    let pv = _mm256_set1_ps(p);
    for i in (0..whole).step_by(8) {
        // SAFETY: i + 8 <= whole <= len, the shorter slice's length.
        unsafe {
            let o = out.as_mut_ptr().add(i);
            let sum = _mm256_fmadd_ps(pv, _mm256_loadu_ps(v.as_ptr().add(i)), _mm256_loadu_ps(o));
            _mm256_storeu_ps(o, sum);
        }
    }
    scalar::axpy(&mut out[whole..len], p, &v[whole..len]);
}
