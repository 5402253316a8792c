//! The arithmetic of mcp-defer's transformer search tier on plain slices: int8 dense layers,
//! self-attention, LayerNorm and GELU.
//!
//! A crate of its own so that it is built at `opt-level = 3` in every profile (the root
//! `Cargo.toml`): it is the tier's whole query cost, and unoptimized in `cargo test` a forward
//! pass took seconds. mcp-defer itself is built for size in release.
//!
//! Layout:
//! - [`Kernels`]: which instruction set runs, chosen at run time; its only unchecked
//!   constructor is private, so holding [`Kernels::avx2_fma`] proves the CPU has AVX2 + FMA.
//! - `dense.rs`: [`Dense`], a dense layer with int8 weights (one scale per output and run of
//!   [`GROUP`] inputs) and f32 activations.
//! - `ops.rs`: [`attention`], [`layer_norm`], [`gelu`].
//! - `scalar.rs` and `avx2.rs`: the same kernels twice. The scalar ones are the definition;
//!   the AVX2 ones do the same operations in the same order (fused multiply-adds, the same
//!   eight-lane sums), so both give the same bits, which `tests.rs` checks on random and edge
//!   inputs. The `unsafe` functions are all in `avx2.rs` (x86-64 only); the dispatching
//!   functions here and in `ops.rs` call them in `unsafe` blocks that say why each holds.

mod dense;
mod ops;
mod scalar;

#[cfg(target_arch = "x86_64")]
mod avx2;

#[cfg(test)]
mod tests;

pub use dense::Dense;
pub use ops::{attention, gelu, layer_norm};

/// Inputs sharing one scale: per output row, a scale for each run of 32 weights.
pub const GROUP: usize = 32;
/// Outputs per packed panel: two AVX registers of f32.
const PANEL: usize = 16;
/// Tokens per register tile (12 accumulators, 2 weight registers, 1 broadcast: 15 of 16).
const TILE: usize = 6;

/// The instruction set the kernels run on. Every value is valid on the CPU running the
/// process: the AVX2 one is only built after the CPU said it has AVX2 and FMA.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Kernels(Isa);

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Isa {
    /// Plain Rust, every target; `f32::mul_add` for each multiply-add, so the results are
    /// the AVX2 kernels' to the bit.
    Scalar,
    /// Intrinsics with `#[target_feature(enable = "avx2,fma")]`.
    #[cfg(target_arch = "x86_64")]
    Avx2Fma,
}

impl Kernels {
    /// The fastest this CPU runs: AVX2 + FMA on an x86-64 that has both (the standard
    /// library caches the CPUID answer), else scalar.
    pub fn detect() -> Kernels {
        Kernels::avx2_fma().unwrap_or(Kernels::scalar())
    }

    /// The portable kernels, on any CPU.
    pub fn scalar() -> Kernels {
        Kernels(Isa::Scalar)
    }

    /// The AVX2 + FMA kernels, when this CPU has both; `None` elsewhere (other
    /// architectures always).
    pub fn avx2_fma() -> Option<Kernels> {
        #[cfg(target_arch = "x86_64")]
        if std::arch::is_x86_feature_detected!("avx2") && std::arch::is_x86_feature_detected!("fma")
        {
            return Some(Kernels(Isa::Avx2Fma));
        }
        None
    }

    /// `"avx2+fma"` or `"scalar"`, for logs and benches.
    pub fn name(self) -> &'static str {
        match self.0 {
            Isa::Scalar => "scalar",
            #[cfg(target_arch = "x86_64")]
            Isa::Avx2Fma => "avx2+fma",
        }
    }
}

/// Quantizes `row` to int8 with a symmetric scale, appending to `out`; returns the scale.
/// The row's largest magnitude maps to ±127 (never -128), an all-zero row to zeros with
/// scale 1.
pub fn quantize(row: &[f32], out: &mut Vec<i8>) -> f32 {
    let max = row.iter().fold(0f32, |m, v| m.max(v.abs()));
    let scale = if max > 0.0 { max / 127.0 } else { 1.0 };
    // In [-127, 127] by construction of `scale` (a NaN or infinite weight gives 0: `as`
    // saturates and maps NaN to 0, never undefined).
    out.extend(row.iter().map(|v| (v / scale).round() as i8));
    scale
}

/// One panel of int8 weights (`PANEL` outputs per input) as f32, each group's scale
/// applied: `out[r·PANEL + j] = q[r·PANEL + j] · scales[(r / GROUP)·PANEL + j]`.
fn widen(kernels: Kernels, q: &[i8], scales: &[f32], out: &mut [f32]) {
    assert!(out.len() == q.len() && q.len().is_multiple_of(PANEL));
    assert!(scales.len() >= q.len().div_ceil(GROUP * PANEL) * PANEL);
    match kernels.0 {
        Isa::Scalar => scalar::widen(q, scales, out),
        #[cfg(target_arch = "x86_64")]
        // SAFETY: an `Avx2Fma` value exists only once the CPU reported AVX2 and FMA
        // (`Kernels::avx2_fma`); the lengths `avx2::widen` relies on are asserted above.
        Isa::Avx2Fma => unsafe { avx2::widen(q, scales, out) },
    }
}

/// `tile[i][j] = Σ_kk xs[i·k + kk] · panel[kk·PANEL + j]` for the first `m` rows, summed
/// in order of `kk` by fused multiply-adds; rows past `m` are left as they were.
fn multiply(
    kernels: Kernels,
    m: usize,
    xs: &[f32],
    k: usize,
    panel: &[f32],
    tile: &mut [[f32; PANEL]; TILE],
) {
    assert!((1..=TILE).contains(&m) && xs.len() >= m * k && panel.len() >= k * PANEL);
    match kernels.0 {
        Isa::Scalar => scalar::tile(m, xs, k, panel, tile),
        #[cfg(target_arch = "x86_64")]
        // SAFETY: AVX2 and FMA are there (`Kernels::avx2_fma`); the bounds `avx2::tile`
        // relies on (1 <= m <= TILE, m·k inputs, k·PANEL weights) are asserted above.
        Isa::Avx2Fma => unsafe { avx2::tile(m, xs, k, panel, tile) },
    }
}

/// `a · b`: eight running sums (value `i` into sum `i % 8`) by fused multiply-adds, added
/// pairwise as AVX's horizontal adds do, then any tail past the last eight in order.
/// (The attention inlines each kernel's own; this is the tests' way to both.)
#[cfg(test)]
fn dot(kernels: Kernels, a: &[f32], b: &[f32]) -> f32 {
    assert_eq!(a.len(), b.len());
    match kernels.0 {
        Isa::Scalar => scalar::dot(a, b),
        #[cfg(target_arch = "x86_64")]
        // SAFETY: AVX2 and FMA are there (`Kernels::avx2_fma`); `avx2::dot` reads within
        // the shorter slice only.
        Isa::Avx2Fma => unsafe { avx2::dot(a, b) },
    }
}

/// `out[i] = p · v[i] + out[i]`, fused. (The tests' way to both kernels, as [`dot`].)
#[cfg(test)]
fn axpy(kernels: Kernels, out: &mut [f32], p: f32, v: &[f32]) {
    assert_eq!(out.len(), v.len());
    match kernels.0 {
        Isa::Scalar => scalar::axpy(out, p, v),
        #[cfg(target_arch = "x86_64")]
        // SAFETY: AVX2 and FMA are there (`Kernels::avx2_fma`); `avx2::axpy` touches the
        // shorter slice's length only.
        Isa::Avx2Fma => unsafe { avx2::axpy(out, p, v) },
    }
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
