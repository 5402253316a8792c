//! Training and cross-validation of the learned rule (`src/trust/learned.rs`): logistic
//! regression over its hashed features, fitted by AdaGrad stochastic gradient descent with
//! L2 and the two classes weighted equally, in a fixed order from a fixed seed (the same
//! data gives the same weights, byte for byte: `scripts/train_trust.sh --check`).
//!
//! The threshold is chosen on out-of-fold scores of a k-fold cross-validation over the
//! training data: the lowest score that keeps at most [`MAX_FALSE`] of the real definitions
//! at or over it. No held-out set is read here.

use mcp_defer::trust::learned::{Model, unit};

/// One training definition: its features, whether it is poisoned, the group it is kept
/// with when folds are drawn (a real server's tools stay together; each poisoned case is
/// its own), and the data set it came from.
pub struct Doc {
    pub features: Vec<u32>,
    pub poisoned: bool,
    pub group: String,
    pub set: usize,
    /// Made for training (a benign twin), not a real definition: not counted when the
    /// threshold is chosen.
    pub made: bool,
}

/// What the fit uses; fixed, chosen by cross-validation on the training data.
#[derive(Clone, Copy, Debug)]
pub struct Params {
    pub bits: u32,
    pub epochs: usize,
    pub rate: f64,
    pub l2: f64,
    pub seed: u64,
    /// Spliced copies of each poisoned doc ([`splice`]).
    pub spliced: usize,
}

/// Chosen by `-- --sweep` (5-fold CV catch at the CV threshold): rate 0.05 over 0.2 and
/// 0.5, L2 1e-4 over 0 and 1e-5, 3 spliced copies over 0, 1 and 6 (40%, 53%, 60%, 56% of
/// the poisoned caught), word pairs, character 4-grams and field-words kept (without them
/// 42% with none spliced, 51% with 3). With the benign twins (`benches/trust.rs`), added
/// after, 56% at the same share of real over the threshold.
pub const PARAMS: Params = Params {
    bits: 16,
    epochs: 20,
    rate: 0.05,
    l2: 1e-4,
    seed: 30,
    spliced: 3,
};

/// The share of real definitions the threshold lets over it in cross-validation.
pub const MAX_FALSE: f64 = 0.005;

/// Folds of the cross-validation.
pub const FOLDS: usize = 5;

/// xorshift64*: a seeded generator the same on every platform.
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Rng {
        Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1)
    }

    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    /// `items` in a random order (Fisher-Yates).
    pub fn shuffle<T>(&mut self, items: &mut [T]) {
        for i in (1..items.len()).rev() {
            let j = (self.next() % (i as u64 + 1)) as usize;
            items.swap(i, j);
        }
    }
}

/// The model fitted to `docs` (threshold left at 0.5: [`threshold`] sets it).
pub fn train(docs: &[&Doc], params: &Params) -> Model {
    let spliced = splice(docs, params);
    let docs: Vec<&Doc> = docs.iter().copied().chain(spliced.iter()).collect();
    let docs = &docs[..];
    let size = 1usize << params.bits;
    let mut w = vec![0f64; size];
    let mut g2 = vec![0f64; size];
    let (mut bias, mut bias_g2) = (0f64, 0f64);
    let positives = docs.iter().filter(|d| d.poisoned).count().max(1) as f64;
    let negatives = docs.iter().filter(|d| !d.poisoned).count().max(1) as f64;
    let total = positives + negatives;
    let weight = |poisoned: bool| {
        if poisoned {
            total / (2.0 * positives)
        } else {
            total / (2.0 * negatives)
        }
    };
    let mut order: Vec<usize> = (0..docs.len()).collect();
    let mut rng = Rng::new(params.seed);
    for _ in 0..params.epochs {
        rng.shuffle(&mut order);
        for &k in &order {
            let doc = docs[k];
            let x = f64::from(unit(doc.features.len()));
            let z = bias + x * doc.features.iter().map(|&i| w[i as usize]).sum::<f64>();
            let p = 1.0 / (1.0 + (-z).exp());
            let y = if doc.poisoned { 1.0 } else { 0.0 };
            let g = (p - y) * weight(doc.poisoned);
            for &i in &doc.features {
                let i = i as usize;
                let grad = g * x + params.l2 * w[i];
                g2[i] += grad * grad;
                w[i] -= params.rate * grad / (g2[i].sqrt() + 1e-9);
            }
            bias_g2 += g * g;
            bias -= params.rate * g / (bias_g2.sqrt() + 1e-9);
        }
    }
    Model {
        bits: params.bits,
        bias: bias as f32,
        threshold: 0.5,
        weights: w.into_iter().map(|v| v as f32).collect(),
    }
}

/// Extra poisoned docs: each poisoned doc's features joined with those of real docs
/// drawn from the seed (a real tool's text with the poison added to it), so a long real
/// description does not outweigh the words that poison it.
fn splice(docs: &[&Doc], params: &Params) -> Vec<Doc> {
    let copies = params.spliced;
    let real: Vec<&Doc> = docs.iter().copied().filter(|d| !d.poisoned).collect();
    let mut rng = Rng::new(params.seed ^ 0x5a5a);
    let mut out = Vec::new();
    if real.is_empty() {
        return out;
    }
    for doc in docs.iter().filter(|d| d.poisoned) {
        for _ in 0..copies {
            let with = real[(rng.next() % real.len() as u64) as usize];
            let mut features: Vec<u32> =
                doc.features.iter().chain(&with.features).copied().collect();
            features.sort_unstable();
            features.dedup();
            out.push(Doc {
                features,
                poisoned: true,
                group: doc.group.clone(),
                set: doc.set,
                made: true,
            });
        }
    }
    out
}

/// The fold of each doc: groups shuffled from the seed and dealt round-robin, poisoned and
/// real groups apart (so each fold has its share of both); a real doc of a poisoned
/// group (a benign twin) goes with it.
pub fn folds(docs: &[&Doc], k: usize, seed: u64) -> Vec<usize> {
    let mut rng = Rng::new(seed);
    let mut fold_of = std::collections::BTreeMap::new();
    for poisoned in [true, false] {
        let mut groups: Vec<&str> = (docs.iter())
            .filter(|d| d.poisoned == poisoned)
            .map(|d| d.group.as_str())
            .filter(|g| !fold_of.contains_key(g))
            .collect();
        groups.sort_unstable();
        groups.dedup();
        rng.shuffle(&mut groups);
        for (i, g) in groups.into_iter().enumerate() {
            fold_of.insert(g, i % k);
        }
    }
    docs.iter().map(|d| fold_of[d.group.as_str()]).collect()
}

/// Out-of-fold scores of `docs`: each scored by the model fitted to the other folds.
pub fn out_of_fold(docs: &[&Doc], params: &Params, k: usize) -> Vec<f32> {
    let fold = folds(docs, k, params.seed);
    let mut scores = vec![0f32; docs.len()];
    for f in 0..k {
        let training: Vec<&Doc> = (docs.iter().zip(&fold))
            .filter(|(_, g)| **g != f)
            .map(|(d, _)| *d)
            .collect();
        let model = train(&training, params);
        for (i, doc) in docs.iter().enumerate() {
            if fold[i] == f {
                scores[i] = model.score_features(&doc.features);
            }
        }
    }
    scores
}

/// The lowest threshold with at most [`MAX_FALSE`] of the real definitions at or over it:
/// halfway between the last real score let over and the first kept under.
pub fn threshold(docs: &[&Doc], scores: &[f32]) -> f32 {
    let mut real: Vec<f32> = (docs.iter().zip(scores))
        .filter(|(d, _)| !d.poisoned && !d.made)
        .map(|(_, s)| *s)
        .collect();
    real.sort_by(|a, b| b.total_cmp(a));
    let allowed = (MAX_FALSE * real.len() as f64).floor() as usize;
    match (allowed.checked_sub(1).map(|i| real[i]), real.get(allowed)) {
        (Some(over), Some(&under)) => (over + under) / 2.0,
        (None, Some(&under)) => (under + 1.0) / 2.0,
        _ => 0.5,
    }
}
