//! A dense layer with int8 weights and f32 activations.
//!
//! The weights are int8, one scale per output and run of [`GROUP`] inputs (12 MB for
//! all-MiniLM-L6-v2's six layers instead of 42 MB of f32), packed in panels of `PANEL`
//! outputs. A panel is widened to f32 once per block of [`BLOCK`] tokens, then every token
//! of the block passes over it: a query's tokens share one read of each weight, and the
//! product runs in f32 (activations are not quantized), a tile of `TILE` tokens by one panel
//! at a time.

use std::ops::Range;

use super::{GROUP, Kernels, PANEL, TILE, multiply, quantize, widen};

/// Multiply-adds from which a query's dense product is split over two threads: a 20-token
/// query's smallest product (384 x 384) is 2.9 M, ~0.2 ms on one core, against tens of
/// microseconds to hand half to another thread.
const SPLIT_MACS: usize = 1 << 21;
/// Tokens per block: each panel is widened once per block (a query is one block), and a
/// block's inputs (at most 48 x 1,536 f32, 295 KB) stay in the core's cache while the
/// panels pass.
const BLOCK: usize = 48;

/// A dense layer `y = x Wᵀ + b` with int8 weights.
pub struct Dense {
    inputs: usize,
    outputs: usize,
    /// Panel `p`, input `k`, output `16p + j` at `(p * inputs + k) * PANEL + j`; outputs
    /// past `outputs` (the last panel's padding) are zero.
    weights: Vec<i8>,
    /// Panel `p`, group `g` of [`GROUP`] inputs, output `16p + j` at
    /// `(p * groups + g) * PANEL + j`.
    scales: Vec<f32>,
    /// Padded with zeros to whole panels.
    bias: Vec<f32>,
}

impl std::fmt::Debug for Dense {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Dense")
            .field("inputs", &self.inputs)
            .field("outputs", &self.outputs)
            .finish_non_exhaustive()
    }
}

impl Dense {
    /// From a row-major `[outputs, inputs]` weight matrix (PyTorch's `Linear` layout) and
    /// its bias, quantized by [`quantize`] a run of [`GROUP`] inputs at a time.
    ///
    /// # Panics
    /// When `inputs` is 0 or the lengths disagree with the shape (the caller checks the
    /// tensors' shapes first).
    pub fn new(weight: &[f32], bias: &[f32], outputs: usize, inputs: usize) -> Dense {
        assert!(inputs > 0, "a dense layer needs inputs");
        assert_eq!(
            weight.len(),
            outputs * inputs,
            "weights for {outputs} x {inputs}"
        );
        assert_eq!(bias.len(), outputs, "a bias for each of {outputs} outputs");
        let panels = outputs.div_ceil(PANEL);
        let groups = inputs.div_ceil(GROUP);
        let mut weights = vec![0i8; panels * inputs * PANEL];
        let mut scales = vec![0f32; panels * groups * PANEL];
        let mut q = Vec::with_capacity(inputs);
        for (o, row) in weight.chunks_exact(inputs).enumerate() {
            let (p, j) = (o / PANEL, o % PANEL);
            q.clear();
            for (g, run) in row.chunks(GROUP).enumerate() {
                scales[(p * groups + g) * PANEL + j] = quantize(run, &mut q);
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

    pub fn inputs(&self) -> usize {
        self.inputs
    }

    pub fn outputs(&self) -> usize {
        self.outputs
    }

    /// `y` (rows of `outputs`) from `x` (rows of `inputs`), as many rows as `x` holds.
    /// With `split`, a product of at least [`SPLIT_MACS`] multiply-adds runs half its
    /// panels on rayon's pool while the caller runs the other half; the results are the
    /// same bits either way (each output is computed whole on one thread).
    ///
    /// # Panics
    /// When `x` is not whole rows or `y` is not as many rows of `outputs`.
    pub fn forward(&self, kernels: Kernels, x: &[f32], y: &mut [f32], split: bool) {
        let (k, n) = (self.inputs, self.outputs);
        assert!(x.len().is_multiple_of(k), "inputs in rows of {k}");
        let rows = x.len() / k;
        assert_eq!(y.len(), rows * n, "outputs for {rows} rows of {n}");
        let panels = n.div_ceil(PANEL);
        if !split || panels < 2 || rows * k * n < SPLIT_MACS {
            self.panels(kernels, x, 0..panels, y);
            return;
        }
        let half = panels / 2;
        let width = n - half * PANEL;
        let mut other = vec![0f32; rows * width];
        rayon::in_place_scope(|scope| {
            let other = &mut other;
            scope.spawn(move |_| self.panels(kernels, x, half..panels, other));
            let mut mine = vec![0f32; rows * half * PANEL];
            self.panels(kernels, x, 0..half, &mut mine);
            for (out, a) in y.chunks_exact_mut(n).zip(mine.chunks_exact(half * PANEL)) {
                out[..a.len()].copy_from_slice(a);
            }
        });
        for (out, b) in y.chunks_exact_mut(n).zip(other.chunks_exact(width)) {
            out[n - width..].copy_from_slice(b);
        }
    }

    /// Outputs of `panels` into `y`, rows as wide as those panels' outputs.
    fn panels(&self, kernels: Kernels, x: &[f32], panels: Range<usize>, y: &mut [f32]) {
        let (k, n) = (self.inputs, self.outputs);
        let rows = x.len() / k;
        let first = panels.start * PANEL;
        let stride = (panels.end * PANEL).min(n) - first;
        debug_assert_eq!(y.len(), rows * stride);
        let groups = k.div_ceil(GROUP);
        let mut panel = vec![0f32; k * PANEL];
        let mut tile = [[0f32; PANEL]; TILE];
        for block in (0..rows).step_by(BLOCK) {
            let end = (block + BLOCK).min(rows);
            for p in panels.clone() {
                let q = &self.weights[p * k * PANEL..(p + 1) * k * PANEL];
                let scales = &self.scales[p * groups * PANEL..(p + 1) * groups * PANEL];
                widen(kernels, q, scales, &mut panel);
                let bias = &self.bias[p * PANEL..(p + 1) * PANEL];
                let width = PANEL.min(n - p * PANEL);
                let mut r = block;
                while r < end {
                    let m = TILE.min(end - r);
                    let xs = &x[r * k..(r + m) * k];
                    multiply(kernels, m, xs, k, &panel, &mut tile);
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
