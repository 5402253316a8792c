//! The forward pass's arithmetic on plain slices: int8 dense layers, LayerNorm, GELU.
//!
//! A dense layer keeps its weights in int8, one scale per output and run of 32 inputs (12 MB for all-MiniLM-L6-v2's
//! six layers instead of 42 MB of f32), packed in panels of [`PANEL`] outputs. A panel is
//! widened to f32 once per block of [`BLOCK`] tokens, then every token of the block passes
//! over it: a query's tokens share one read of each weight, and the product runs in f32
//! (activations are not quantized). On x86-64 with AVX2 and FMA (detected at run time) a
//! tile of [`TILE`] tokens by one panel is kept in registers; elsewhere the same loops in
//! plain Rust.

/// Outputs per packed panel: two AVX registers of f32.
const PANEL: usize = 16;
/// Multiply-adds from which a query's dense product is split over two threads: a 20-token
/// query's smallest product (384 x 384) is 2.9 M, ~0.2 ms on one core, against tens of
/// microseconds to hand half to another thread.
const SPLIT_MACS: usize = 1 << 21;
/// Inputs sharing one scale: per output row, a scale for each run of 32 weights.
const GROUP: usize = 32;
/// Tokens per register tile (12 accumulators, 2 weight registers, 1 broadcast: 15 of 16).
const TILE: usize = 6;
/// Tokens per block: each panel is widened once per block (a query is one block), and a
/// block's inputs (at most 48 x 1,536 f32, 295 KB) stay in the core's cache while the
/// panels pass.
const BLOCK: usize = 48;

/// Whether the AVX2 + FMA kernels can run (checked once by the standard library).
fn avx2() -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        std::arch::is_x86_feature_detected!("avx2") && std::arch::is_x86_feature_detected!("fma")
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        false
    }
}

/// A dense layer `y = x Wᵀ + b` with int8 weights, one symmetric scale per output.
pub(super) struct Dense {
    inputs: usize,
    outputs: usize,
    /// Panel `p`, input `k`, output `16p + j` at `(p * inputs + k) * PANEL + j`; outputs
    /// past `outputs` (the last panel's padding) are zero.
    weights: Vec<i8>,
    /// Panel `p`, group `g` of [`GROUP`] inputs, output `16p + j` at
    /// `(p * groups + g) * PANEL + j`.
    scales: Vec<f32>,
    bias: Vec<f32>,
}

impl Dense {
    /// From a row-major `[outputs, inputs]` weight matrix (PyTorch's `Linear` layout) and
    /// its bias.
    pub(super) fn new(weight: &[f32], bias: &[f32], outputs: usize, inputs: usize) -> Dense {
        debug_assert_eq!(weight.len(), outputs * inputs);
        debug_assert_eq!(bias.len(), outputs);
        let panels = outputs.div_ceil(PANEL);
        let groups = inputs.div_ceil(GROUP);
        let mut weights = vec![0i8; panels * inputs * PANEL];
        let mut scales = vec![0f32; panels * groups * PANEL];
        let mut q = Vec::with_capacity(inputs);
        for (o, row) in weight.chunks_exact(inputs).enumerate() {
            let (p, j) = (o / PANEL, o % PANEL);
            q.clear();
            for (g, run) in row.chunks(GROUP).enumerate() {
                scales[(p * groups + g) * PANEL + j] = super::weights::quantize_row(run, &mut q);
            }
            for (k, &v) in q.iter().enumerate() {
                weights[(p * inputs + k) * PANEL + j] = v;
            }
        }
        let mut padded = bias.to_vec();
        padded.resize(panels * PANEL, 0.0);
        Dense {
            inputs,
            outputs,
            weights,
            scales,
            bias: padded,
        }
    }

    pub(super) fn outputs(&self) -> usize {
        self.outputs
    }

    /// `y` (rows of `outputs`) from `x` (rows of `inputs`), as many rows as `x` holds.
    /// With `split`, a product of at least [`SPLIT_MACS`] runs half its panels on
    /// rayon's pool while the caller runs the other half.
    pub(super) fn forward(&self, x: &[f32], y: &mut [f32], split: bool) {
        let (k, n) = (self.inputs, self.outputs);
        let rows = x.len() / k;
        assert_eq!(y.len(), rows * n);
        let panels = n.div_ceil(PANEL);
        if !split || panels < 2 || rows * k * n < SPLIT_MACS {
            self.panels(x, 0..panels, y);
            return;
        }
        let half = panels / 2;
        let width = n - half * PANEL;
        let mut other = vec![0f32; rows * width];
        rayon::in_place_scope(|scope| {
            let other = &mut other;
            scope.spawn(move |_| self.panels(x, half..panels, other));
            let mut mine = vec![0f32; rows * half * PANEL];
            self.panels(x, 0..half, &mut mine);
            for (out, a) in y.chunks_exact_mut(n).zip(mine.chunks_exact(half * PANEL)) {
                out[..a.len()].copy_from_slice(a);
            }
        });
        for (out, b) in y.chunks_exact_mut(n).zip(other.chunks_exact(width)) {
            out[n - width..].copy_from_slice(b);
        }
    }

    /// Outputs of `panels` into `y`, rows as wide as those panels' outputs.
    fn panels(&self, x: &[f32], panels: std::ops::Range<usize>, y: &mut [f32]) {
        let (k, n) = (self.inputs, self.outputs);
        let rows = x.len() / k;
        let first = panels.start * PANEL;
        let stride = (panels.end * PANEL).min(n) - first;
        debug_assert_eq!(y.len(), rows * stride);
        let avx = avx2();
        let groups = k.div_ceil(GROUP);
        let mut panel = vec![0f32; k * PANEL];
        let mut tile = [[0f32; PANEL]; TILE];
        for block in (0..rows).step_by(BLOCK) {
            let end = (block + BLOCK).min(rows);
            for p in panels.clone() {
                let q = &self.weights[p * k * PANEL..(p + 1) * k * PANEL];
                let scales = &self.scales[p * groups * PANEL..(p + 1) * groups * PANEL];
                widen(q, scales, &mut panel, avx);
                let bias = &self.bias[p * PANEL..(p + 1) * PANEL];
                let width = PANEL.min(n - p * PANEL);
                let mut r = block;
                while r < end {
                    let m = TILE.min(end - r);
                    let xs = &x[r * k..(r + m) * k];
                    multiply(m, xs, k, &panel, &mut tile, avx);
                    for (i, acc) in tile.iter().take(m).enumerate() {
                        let out = &mut y[(r + i) * stride + p * PANEL - first..][..width];
                        for ((o, a), b) in out.iter_mut().zip(acc).zip(bias) {
                            *o = a + b;
                        }
                    }
                    r += m;
                }
            }
        }
    }
}

/// One panel of int8 weights as f32, each group's scale applied.
fn widen(q: &[i8], scales: &[f32], out: &mut [f32], avx: bool) {
    assert!(out.len() == q.len() && q.len().is_multiple_of(PANEL));
    assert!(scales.len() >= q.len().div_ceil(GROUP * PANEL) * PANEL);
    #[cfg(target_arch = "x86_64")]
    if avx {
        // SAFETY: the CPU has AVX2 and FMA (`avx2()`); the lengths are asserted above.
        unsafe { avx::widen(q, scales, out) };
        return;
    }
    let _ = avx;
    let (out, q) = (out.chunks_mut(GROUP * PANEL), q.chunks(GROUP * PANEL));
    for ((out, q), scales) in out.zip(q).zip(scales.chunks_exact(PANEL)) {
        for (o, q) in out.chunks_exact_mut(PANEL).zip(q.chunks_exact(PANEL)) {
            for ((o, &q), &s) in o.iter_mut().zip(q).zip(scales) {
                *o = f32::from(q) * s;
            }
        }
    }
}

/// `tile[i][j] = Σ_k xs[i·k_len + k] · panel[k·PANEL + j]` for the first `m` rows.
fn multiply(
    m: usize,
    xs: &[f32],
    k: usize,
    panel: &[f32],
    tile: &mut [[f32; PANEL]; TILE],
    avx: bool,
) {
    assert!((1..=TILE).contains(&m) && xs.len() >= m * k && panel.len() >= k * PANEL);
    #[cfg(target_arch = "x86_64")]
    if avx {
        // SAFETY: the CPU has AVX2 and FMA (`avx2()`); the bounds the kernel relies on
        // are asserted above.
        unsafe { avx::tile(m, xs, k, panel, tile) };
        return;
    }
    let _ = avx;
    for (i, acc) in tile.iter_mut().take(m).enumerate() {
        *acc = [0.0; PANEL];
        let x = &xs[i * k..(i + 1) * k];
        for (&xv, w) in x.iter().zip(panel.chunks_exact(PANEL)) {
            for (a, &w) in acc.iter_mut().zip(w) {
                *a += xv * w;
            }
        }
    }
}

/// The AVX2 + FMA kernels, written with intrinsics: the crate is built for size
/// (`opt-level = "s"`), which leaves plain loops unvectorized.
#[cfg(target_arch = "x86_64")]
mod avx {
    use std::arch::x86_64::{
        __m256, _mm_add_ps, _mm_cvtss_f32, _mm_hadd_ps, _mm_loadl_epi64, _mm256_add_ps,
        _mm256_castps256_ps128, _mm256_cvtepi8_epi32, _mm256_cvtepi32_ps, _mm256_div_ps,
        _mm256_extractf128_ps, _mm256_fmadd_ps, _mm256_loadu_ps, _mm256_max_ps, _mm256_min_ps,
        _mm256_mul_ps, _mm256_set1_ps, _mm256_setzero_ps, _mm256_storeu_ps,
    };

    use super::{ERF_P, ERF_Q, GROUP, PANEL, TILE};

    /// [`super::widen`].
    ///
    /// # Safety
    /// The CPU has AVX2 and FMA; `out` is as long as `q`, a multiple of PANEL, and `scales`
    /// holds PANEL values per GROUP rows of the panel.
    #[target_feature(enable = "avx2,fma")]
    pub(super) unsafe fn widen(q: &[i8], scales: &[f32], out: &mut [f32]) {
        let (q, s, o) = (q.as_ptr(), scales.as_ptr(), out.as_mut_ptr());
        for row in 0..out.len() / PANEL {
            let at = row * PANEL;
            let group = row / GROUP * PANEL;
            // SAFETY: row < len / PANEL, so every read and write ends within the slices,
            // and group < scales.len() / PANEL (the caller's bound).
            unsafe {
                let lo =
                    _mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(_mm_loadl_epi64(q.add(at).cast())));
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

    /// [`super::multiply`]: six rows by one panel in twelve registers. Rows past `m`
    /// repeat the last row (computed, not stored).
    ///
    /// # Safety
    /// The CPU has AVX2 and FMA; 1 <= m <= TILE, `xs` holds `m * k` values and `panel`
    /// `k * PANEL`.
    #[target_feature(enable = "avx2,fma")]
    pub(super) unsafe fn tile(
        m: usize,
        xs: &[f32],
        k: usize,
        panel: &[f32],
        tile: &mut [[f32; PANEL]; TILE],
    ) {
        let row = |i: usize| xs[i.min(m - 1) * k..].as_ptr();
        let (x0, x1, x2, x3, x4, x5) = (row(0), row(1), row(2), row(3), row(4), row(5));
        let w = panel.as_ptr();
        let z = _mm256_setzero_ps();
        let (mut a0, mut b0, mut a1, mut b1, mut a2, mut b2) = (z, z, z, z, z, z);
        let (mut a3, mut b3, mut a4, mut b4, mut a5, mut b5) = (z, z, z, z, z, z);
        for kk in 0..k {
            // SAFETY: kk < k: the panel reads end at k * PANEL, each row's at its k-th
            // value (the caller's bounds).
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
            // SAFETY: each row of the tile holds PANEL = 16 values.
            unsafe {
                _mm256_storeu_ps(out.as_mut_ptr(), a);
                _mm256_storeu_ps(out.as_mut_ptr().add(8), b);
            }
        }
    }

    /// [`super::gelu`], eight values at a time (the tail by the scalar form).
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
            // SAFETY: as above.
            unsafe { _mm256_storeu_ps(chunk.as_mut_ptr(), out) };
        }
        for v in chunks.into_remainder() {
            *v = super::gelu_one(*v);
        }
    }

    /// `a · b` over `len` values (a multiple of 8).
    ///
    /// # Safety
    /// The CPU has AVX2 and FMA; `a` and `b` point at `len` values each.
    #[target_feature(enable = "avx2,fma")]
    pub(super) unsafe fn dot(a: *const f32, b: *const f32, len: usize) -> f32 {
        let mut sum = _mm256_setzero_ps();
        for i in (0..len).step_by(8) {
            // SAFETY: i + 8 <= len (the caller's bound).
            unsafe {
                sum = _mm256_fmadd_ps(_mm256_loadu_ps(a.add(i)), _mm256_loadu_ps(b.add(i)), sum);
            }
        }
        let half = _mm_add_ps(_mm256_castps256_ps128(sum), _mm256_extractf128_ps::<1>(sum));
        let pair = _mm_hadd_ps(half, half);
        _mm_cvtss_f32(_mm_hadd_ps(pair, pair))
    }

    /// `out += p · v` over `len` values (a multiple of 8).
    ///
    /// # Safety
    /// The CPU has AVX2 and FMA; `out` and `v` point at `len` values each.
    #[target_feature(enable = "avx2,fma")]
    pub(super) unsafe fn axpy(out: *mut f32, p: f32, v: *const f32, len: usize) {
        let p = _mm256_set1_ps(p);
        for i in (0..len).step_by(8) {
            // SAFETY: i + 8 <= len (the caller's bound).
            unsafe {
                let o = _mm256_fmadd_ps(p, _mm256_loadu_ps(v.add(i)), _mm256_loadu_ps(out.add(i)));
                _mm256_storeu_ps(out.add(i), o);
            }
        }
    }
}

/// Self-attention over texts laid end to end: `qkv` holds each token's query, key and
/// value (`3 · width` per token), `spans` each text's tokens, and a token attends to its own
/// text's tokens only. Writes each token's context (`width` per token, heads side by side).
pub(super) fn attention(
    qkv: &[f32],
    spans: &[std::ops::Range<usize>],
    heads: usize,
    context: &mut [f32],
) {
    let tokens = spans.last().map_or(0, |s| s.end);
    let width = context.len() / tokens.max(1);
    let head = width / heads;
    assert!(qkv.len() >= tokens * 3 * width && head * heads == width);
    let stride = 3 * width;
    let scale = 1.0 / (head as f32).sqrt();
    #[cfg(target_arch = "x86_64")]
    let avx = avx2() && head.is_multiple_of(8);
    let dot = |a: &[f32], b: &[f32]| -> f32 {
        #[cfg(target_arch = "x86_64")]
        if avx {
            // SAFETY: AVX2 and FMA are there; both slices hold `head` values, a
            // multiple of 8.
            return unsafe { avx::dot(a.as_ptr(), b.as_ptr(), head) };
        }
        a.iter().zip(b).map(|(x, y)| x * y).sum()
    };
    let axpy = |out: &mut [f32], p: f32, v: &[f32]| {
        #[cfg(target_arch = "x86_64")]
        if avx {
            // SAFETY: as for `dot`.
            unsafe { avx::axpy(out.as_mut_ptr(), p, v.as_ptr(), head) };
            return;
        }
        for (o, v) in out.iter_mut().zip(v) {
            *o += p * v;
        }
    };
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
pub(super) fn layer_norm(x: &mut [f32], weight: &[f32], bias: &[f32], eps: f32) {
    let n = weight.len();
    for row in x.chunks_exact_mut(n) {
        let mean = row.iter().sum::<f32>() / n as f32;
        let var = row.iter().map(|v| (v - mean) * (v - mean)).sum::<f32>() / n as f32;
        let inv = 1.0 / (var + eps).sqrt();
        for ((v, w), b) in row.iter_mut().zip(weight).zip(bias) {
            *v = (*v - mean) * inv * w + b;
        }
    }
}

/// GELU with the exact (erf) form, as BERT and candle's `gelu_erf`, in place.
pub(super) fn gelu(x: &mut [f32]) {
    #[cfg(target_arch = "x86_64")]
    if avx2() {
        // SAFETY: the CPU has AVX2 and FMA; the function touches the slice only.
        unsafe { avx::gelu(x) };
        return;
    }
    for v in x {
        *v = gelu_one(*v);
    }
}

fn gelu_one(v: f32) -> f32 {
    0.5 * v * (1.0 + erf(v * std::f32::consts::FRAC_1_SQRT_2))
}

/// erf's rational fit on [-4, 4], outside which erf is ±1 in f32 (Eigen's
/// `generic_fast_erf_float`): `x · P(x²) / Q(x²)`, coefficients from the highest power.
const ERF_P: [f32; 7] = [
    -2.726_142_3e-10,
    2.770_681_4e-8,
    -2.101_024e-6,
    -5.692_506_4e-5,
    -7.349_906_3e-4,
    -2.954_6e-3,
    -1.609_603_3e-2,
];
const ERF_Q: [f32; 5] = [
    -1.456_607_2e-5,
    -2.133_740_6e-4,
    -1.682_827e-3,
    -7.373_329e-3,
    -1.426_474e-2,
];

/// erf to within 1e-7 ([`ERF_P`], [`ERF_Q`]).
fn erf(x: f32) -> f32 {
    let x = x.clamp(-4.0, 4.0);
    let x2 = x * x;
    let p = ERF_P.iter().fold(0.0, |p, &c| p * x2 + c);
    let q = ERF_Q.iter().fold(0.0, |q, &c| q * x2 + c);
    x * p / q
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn erf_is_within_1e_6_of_the_series() {
        // erf(x) = 2/√π Σ (-1)^n x^(2n+1) / (n! (2n+1)), summed in f64 where it converges.
        for i in -300..=300 {
            let x = f64::from(i) / 100.0;
            let (mut term, mut sum) = (x, 0.0);
            for n in 0..200 {
                sum += term / f64::from(2 * n + 1);
                term *= -x * x / f64::from(n + 1);
            }
            let want = sum * 2.0 / std::f64::consts::PI.sqrt();
            let got = f64::from(erf(x as f32));
            assert!((got - want).abs() < 1e-6, "erf({x}) = {got}, want {want}");
        }
        assert_eq!(erf(10.0), erf(4.0));
        let mut x: Vec<f32> = (-50..=50).map(|i| i as f32 / 7.0).collect();
        let want: Vec<f32> = x.iter().map(|&v| gelu_one(v)).collect();
        gelu(&mut x);
        for (got, want) in x.iter().zip(&want) {
            assert!((got - want).abs() < 1e-6, "{got} vs {want}");
        }
    }

    #[test]
    fn a_dense_layer_matches_its_f32_product() {
        // 405 outputs (a part panel), 401 inputs (a part group), 13 rows (two tiles and a
        // part tile): enough multiply-adds to be split over two threads.
        let (n, k, rows) = (405, 401, 13);
        assert!(n * k * rows >= SPLIT_MACS);
        let weight: Vec<f32> = (0..n * k)
            .map(|i| ((i * 7919 % 211) as f32 - 105.0) / 97.0)
            .collect();
        let bias: Vec<f32> = (0..n).map(|i| i as f32 / 10.0).collect();
        let x: Vec<f32> = (0..rows * k)
            .map(|i| ((i * 104_729 % 97) as f32 - 48.0) / 31.0)
            .collect();
        let dense = Dense::new(&weight, &bias, n, k);
        let mut y = vec![0.0; rows * n];
        dense.forward(&x, &mut y, false);
        let mut split = vec![0.0; rows * n];
        dense.forward(&x, &mut split, true);
        assert_eq!(y, split, "two threads give the same products");
        for r in 0..rows {
            for o in 0..n {
                let want: f32 = (0..k)
                    .map(|i| x[r * k + i] * weight[o * k + i])
                    .sum::<f32>()
                    + bias[o];
                // int8 weights: each off by at most half a step of its row's scale.
                let step = weight[o * k..(o + 1) * k]
                    .iter()
                    .fold(0f32, |m, v| m.max(v.abs()))
                    / 127.0;
                let bound: f32 =
                    (0..k).map(|i| x[r * k + i].abs()).sum::<f32>() * step / 2.0 + 1e-4;
                let got = y[r * n + o];
                assert!(
                    (got - want).abs() <= bound,
                    "row {r} output {o}: {got} vs {want}"
                );
            }
        }
    }
}
