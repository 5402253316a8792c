//! The AVX2 kernels against the scalar ones, bit for bit, on random and edge inputs (odd
//! lengths, part groups and panels, part tiles, -128 and 127, huge and tiny values); the
//! scalar ones against plain f64 arithmetic. Where the CPU lacks AVX2 + FMA the comparisons
//! say so and check the scalar kernels alone.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use super::*;

/// splitmix64: a seeded stream, so a failure names inputs that come back.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// Uniform in [-1, 1).
    fn unit(&mut self) -> f32 {
        (self.next() >> 40) as f32 / (1u64 << 23) as f32 - 1.0
    }

    /// Mostly ordinary values, sometimes an edge: 0, -0, ±huge, ±tiny, subnormal.
    fn value(&mut self) -> f32 {
        match self.next() % 16 {
            0 => 0.0,
            1 => -0.0,
            2 => 1e30 * self.unit(),
            3 => 1e-30 * self.unit(),
            4 => f32::from_bits(1 + (self.next() % 1000) as u32),
            _ => 8.0 * self.unit(),
        }
    }

    fn values(&mut self, n: usize) -> Vec<f32> {
        (0..n).map(|_| self.value()).collect()
    }

    /// Any int8, with the ends (-128, -127, 127) and 0 more often than chance.
    fn int8(&mut self) -> i8 {
        match self.next() % 8 {
            0 => -128,
            1 => 127,
            2 => -127,
            3 => 0,
            _ => self.next() as i8,
        }
    }
}

/// The AVX2 kernels when this CPU has them; `None` with a notice otherwise.
fn simd() -> Option<Kernels> {
    let found = Kernels::avx2_fma();
    if found.is_none() {
        eprintln!("no AVX2 + FMA here: the scalar kernels are checked alone");
    }
    found
}

fn bits(v: &[f32]) -> Vec<u32> {
    v.iter().map(|v| v.to_bits()).collect()
}

#[test]
fn detect_picks_avx2_exactly_when_the_cpu_has_it() {
    let detected = Kernels::detect();
    assert_eq!(Kernels::avx2_fma().unwrap_or(Kernels::scalar()), detected);
    #[cfg(target_arch = "x86_64")]
    assert_eq!(
        detected.name() == "avx2+fma",
        std::arch::is_x86_feature_detected!("avx2") && std::arch::is_x86_feature_detected!("fma")
    );
    #[cfg(not(target_arch = "x86_64"))]
    assert_eq!(detected, Kernels::scalar());
    assert_eq!(Kernels::scalar().name(), "scalar");
}

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
        let got = f64::from(scalar::erf(x as f32));
        assert!((got - want).abs() < 1e-6, "erf({x}) = {got}, want {want}");
    }
    assert_eq!(scalar::erf(10.0), scalar::erf(4.0));
    assert_eq!(scalar::erf(-1e30), scalar::erf(-4.0));
}

#[test]
fn gelu_is_the_same_bits_on_both_kernels() {
    let mut rng = Rng(1);
    // Lengths around the 8-lane chunks, and the values where erf's clamp starts.
    for len in [0, 1, 7, 8, 9, 15, 16, 17, 63, 1536] {
        let mut x = rng.values(len);
        x.extend([
            4.0 * std::f32::consts::SQRT_2,
            -5.657,
            5.657,
            f32::MAX,
            f32::MIN,
        ]);
        let mut scalar_out = x.clone();
        gelu(Kernels::scalar(), &mut scalar_out);
        for (&v, &g) in x.iter().zip(&scalar_out) {
            let want = 0.5 * f64::from(v) * (1.0 + f64::from(scalar::erf(v / 2f32.sqrt())));
            assert!(
                (f64::from(g) - want).abs() <= 1e-6 * want.abs().max(1.0),
                "gelu({v}) = {g}, want {want}"
            );
        }
        if let Some(simd) = simd() {
            let mut simd_out = x.clone();
            gelu(simd, &mut simd_out);
            assert_eq!(bits(&simd_out), bits(&scalar_out), "length {len}: {x:?}");
        }
    }
}

#[test]
fn widen_is_the_same_bits_on_both_kernels_with_128() {
    let mut rng = Rng(2);
    // Rows of a panel: 1, a part group, a whole group, a group and one, several.
    for rows in [1, 5, 31, 32, 33, 64, 100, 384] {
        let q: Vec<i8> = (0..rows * PANEL).map(|_| rng.int8()).collect();
        let groups = rows.div_ceil(GROUP);
        let scales: Vec<f32> = (0..groups * PANEL).map(|_| rng.value().abs()).collect();
        let mut scalar_out = vec![f32::NAN; q.len()];
        widen(Kernels::scalar(), &q, &scales, &mut scalar_out);
        for (i, (&o, &q)) in scalar_out.iter().zip(&q).enumerate() {
            let (row, j) = (i / PANEL, i % PANEL);
            assert_eq!(o, f32::from(q) * scales[row / GROUP * PANEL + j]);
        }
        if let Some(simd) = simd() {
            let mut simd_out = vec![f32::NAN; q.len()];
            widen(simd, &q, &scales, &mut simd_out);
            assert_eq!(bits(&simd_out), bits(&scalar_out), "{rows} rows");
        }
    }
    // -128 and 127 exactly, with a scale of 1.
    let mut q = vec![0i8; PANEL];
    q[0] = -128;
    q[15] = 127;
    let mut out = vec![0f32; PANEL];
    for kernels in [Some(Kernels::scalar()), simd()].into_iter().flatten() {
        widen(kernels, &q, &[1.0; PANEL], &mut out);
        assert_eq!((out[0], out[15]), (-128.0, 127.0), "{}", kernels.name());
    }
}

#[test]
fn a_tile_is_the_same_bits_on_both_kernels() {
    let mut rng = Rng(3);
    for k in [0, 1, 7, 8, 31, 32, 33, 100, 384] {
        for m in 1..=TILE {
            // Longer than m·k: the kernels read m rows and no more.
            let xs = rng.values(TILE * k + 3);
            let panel = rng.values(k * PANEL);
            let mut scalar_tile = [[f32::NAN; PANEL]; TILE];
            multiply(Kernels::scalar(), m, &xs, k, &panel, &mut scalar_tile);
            for (i, row) in scalar_tile.iter().enumerate() {
                if i >= m {
                    assert!(
                        row.iter().all(|v| v.is_nan()),
                        "row {i} past m = {m} written"
                    );
                    continue;
                }
                for (j, &got) in row.iter().enumerate() {
                    let terms = (0..k)
                        .map(|kk| f64::from(xs[i * k + kk]) * f64::from(panel[kk * PANEL + j]));
                    let want: f64 = terms.clone().sum();
                    let size: f64 = terms.map(f64::abs).sum();
                    // Past f32's range a partial sum overflows, legitimately: bits only.
                    assert!(
                        size > 1e37 || (f64::from(got) - want).abs() <= size * 1e-5 + 1e-30,
                        "k {k} m {m} [{i}][{j}]: {got} vs {want}"
                    );
                }
            }
            if let Some(simd) = simd() {
                let mut simd_tile = [[f32::NAN; PANEL]; TILE];
                multiply(simd, m, &xs, k, &panel, &mut simd_tile);
                for (a, b) in simd_tile.iter().zip(&scalar_tile) {
                    assert_eq!(bits(a), bits(b), "k {k} m {m}");
                }
            }
        }
    }
}

#[test]
fn dot_and_axpy_are_the_same_bits_on_both_kernels() {
    let mut rng = Rng(4);
    for len in 0..=41 {
        let (a, b) = (rng.values(len), rng.values(len));
        let s = dot(Kernels::scalar(), &a, &b);
        let want: f64 = a
            .iter()
            .zip(&b)
            .map(|(&x, &y)| f64::from(x) * f64::from(y))
            .sum();
        let size: f64 = a
            .iter()
            .zip(&b)
            .map(|(&x, &y)| (f64::from(x) * f64::from(y)).abs())
            .sum();
        assert!(
            size > 1e37 || (f64::from(s) - want).abs() <= size * 1e-5 + 1e-30,
            "{len}: {s} vs {want}"
        );
        let p = rng.value();
        let mut scalar_out = rng.values(len);
        let mut simd_out = scalar_out.clone();
        axpy(Kernels::scalar(), &mut scalar_out, p, &a);
        if let Some(simd) = simd() {
            assert_eq!(
                dot(simd, &a, &b).to_bits(),
                s.to_bits(),
                "dot, length {len}"
            );
            axpy(simd, &mut simd_out, p, &a);
            assert_eq!(bits(&simd_out), bits(&scalar_out), "axpy, length {len}");
        }
    }
}

/// A weight matrix with the quantizer's edges: a row of one huge weight among small ones
/// (they round to 0), a row of equal weights (all ±127), a zero row (scale 1).
fn weights(rng: &mut Rng, outputs: usize, inputs: usize) -> Vec<f32> {
    let mut w: Vec<f32> = (0..outputs * inputs).map(|_| rng.unit()).collect();
    if outputs >= 3 {
        w[inputs..2 * inputs].fill(1e-4);
        w[inputs] = 1e4;
        w[2 * inputs..3 * inputs]
            .iter_mut()
            .enumerate()
            .for_each(|(i, v)| *v = if i % 2 == 0 { 0.5 } else { -0.5 });
        w[..inputs].fill(0.0);
    }
    w
}

#[test]
fn a_dense_layer_is_the_same_bits_on_both_kernels_and_threads() {
    let mut rng = Rng(5);
    // Outputs: under a panel, a panel and one; inputs: a part group, a group and one;
    // rows: a part tile, a tile and one, past a block (48).
    for (outputs, inputs, rows) in [
        (1, 1, 1),
        (15, 31, 5),
        (17, 33, 7),
        (48, 64, 49),
        (405, 401, 13),
    ] {
        let weight = weights(&mut rng, outputs, inputs);
        let bias = rng.values(outputs);
        let x: Vec<f32> = (0..rows * inputs).map(|_| 4.0 * rng.unit()).collect();
        let dense = Dense::new(&weight, &bias, outputs, inputs);
        let mut scalar_out = vec![0.0; rows * outputs];
        dense.forward(Kernels::scalar(), &x, &mut scalar_out, false);
        let mut split = vec![0.0; rows * outputs];
        dense.forward(Kernels::scalar(), &x, &mut split, true);
        assert_eq!(
            bits(&split),
            bits(&scalar_out),
            "two threads give the same products"
        );
        if let Some(simd) = simd() {
            for threads in [false, true] {
                let mut simd_out = vec![0.0; rows * outputs];
                dense.forward(simd, &x, &mut simd_out, threads);
                assert_eq!(
                    bits(&simd_out),
                    bits(&scalar_out),
                    "{outputs} x {inputs}, {rows} rows"
                );
            }
        }
    }
}

#[test]
fn a_dense_layer_matches_its_f32_product() {
    // 405 outputs (a part panel), 401 inputs (a part group), 13 rows (two tiles and a
    // part tile): enough multiply-adds to be split over two threads.
    let (n, k, rows) = (405, 401, 13);
    assert!(n * k * rows >= 1 << 21);
    let weight: Vec<f32> = (0..n * k)
        .map(|i| ((i * 7919 % 211) as f32 - 105.0) / 97.0)
        .collect();
    let bias: Vec<f32> = (0..n).map(|i| i as f32 / 10.0).collect();
    let x: Vec<f32> = (0..rows * k)
        .map(|i| ((i * 104_729 % 97) as f32 - 48.0) / 31.0)
        .collect();
    let dense = Dense::new(&weight, &bias, n, k);
    for kernels in [Some(Kernels::scalar()), simd()].into_iter().flatten() {
        let mut y = vec![0.0; rows * n];
        dense.forward(kernels, &x, &mut y, true);
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
                    "{} row {r} output {o}: {got} vs {want}",
                    kernels.name()
                );
            }
        }
    }
}

#[test]
fn attention_is_the_same_bits_on_both_kernels() {
    let mut rng = Rng(6);
    // Head widths of 8 lanes, of a part lane (12, 5) and under one (3); texts of 1 to 9
    // tokens laid end to end.
    for (heads, head) in [(2, 8), (3, 12), (4, 5), (1, 3), (12, 32)] {
        let width = heads * head;
        let spans = [0..1, 1..9, 9..12, 12..13];
        let tokens = 13;
        let qkv: Vec<f32> = (0..tokens * 3 * width).map(|_| 3.0 * rng.unit()).collect();
        let mut scalar_out = vec![f32::NAN; tokens * width];
        attention(Kernels::scalar(), &qkv, &spans, heads, &mut scalar_out);
        assert!(scalar_out.iter().all(|v| v.is_finite()));
        if let Some(simd) = simd() {
            let mut simd_out = vec![f32::NAN; tokens * width];
            attention(simd, &qkv, &spans, heads, &mut simd_out);
            assert_eq!(
                bits(&simd_out),
                bits(&scalar_out),
                "{heads} heads of {head}"
            );
        }
        // A one-token text attends to itself alone: its context is its value.
        let value = &qkv[2 * width..3 * width];
        for (got, want) in scalar_out[..width].iter().zip(value) {
            assert!(
                (got - want).abs() <= 1e-6 * want.abs().max(1.0),
                "{got} vs {want}"
            );
        }
    }
}

#[test]
fn quantize_maps_the_largest_magnitude_to_127() {
    let row = [0.5f32, -1.27, 0.0, 1e-3, 0.9];
    let mut q = Vec::new();
    let scale = quantize(&row, &mut q);
    assert_eq!(
        q[1], -127,
        "the largest magnitude maps to the end of the range"
    );
    for (v, q) in row.iter().zip(&q) {
        assert!((f32::from(*q) * scale - v).abs() <= scale / 2.0 + f32::EPSILON);
    }
    let mut zero = Vec::new();
    assert_eq!(quantize(&[0.0; 4], &mut zero), 1.0);
    assert_eq!(zero, [0; 4]);
    let mut odd = Vec::new();
    quantize(&[f32::NAN, 1.0, f32::INFINITY], &mut odd);
    assert!(odd.iter().all(|&q| q != -128), "never -128: {odd:?}");
}
