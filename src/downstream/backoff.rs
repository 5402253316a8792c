//! When to restart a crashed server: jittered exponential backoff, capped, reset after health.
//!
//! Pure arithmetic over durations and a caller-supplied uniform sample, so the policy is
//! tested without sleeping and without a random source. The supervisor owns the clock and
//! the RNG ([`SplitMix`]) and feeds both in.

use std::time::Duration;

/// First restart delay: fast enough that a one-off crash is barely noticed.
pub(super) const DEFAULT_MIN_DELAY: Duration = Duration::from_millis(250);
/// Longest delay: a server that keeps crashing is retried twice a minute, not hammered.
pub(super) const DEFAULT_MAX_DELAY: Duration = Duration::from_secs(30);
/// Up to half of each delay is random, so servers that died together do not restart in lockstep.
pub(super) const DEFAULT_JITTER: f64 = 0.5;
/// A connection that stayed up this long counts as healthy: the next crash starts over.
pub(super) const DEFAULT_HEALTHY_AFTER: Duration = Duration::from_secs(120);

#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum InvalidBackoff {
    #[error("backoff minimum {min:?} is larger than its maximum {max:?}")]
    MinAboveMax { min: Duration, max: Duration },
    #[error("backoff maximum must be positive")]
    ZeroMax,
    #[error("backoff jitter must be a finite number in 0..=1, got {0}")]
    Jitter(f64),
}

/// A validated delay schedule: `min * 2^(attempt-1)`, capped at `max`, minus up to
/// `jitter` of itself.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Backoff {
    min: Duration,
    max: Duration,
    jitter: f64,
}

impl Default for Backoff {
    fn default() -> Self {
        Backoff {
            min: DEFAULT_MIN_DELAY,
            max: DEFAULT_MAX_DELAY,
            jitter: DEFAULT_JITTER,
        }
    }
}

impl Backoff {
    /// # Errors
    /// [`InvalidBackoff`] unless `0 < max`, `min <= max` and `jitter` is in `0..=1`.
    pub fn try_new(min: Duration, max: Duration, jitter: f64) -> Result<Backoff, InvalidBackoff> {
        if max.is_zero() {
            return Err(InvalidBackoff::ZeroMax);
        }
        if min > max {
            return Err(InvalidBackoff::MinAboveMax { min, max });
        }
        if !(0.0..=1.0).contains(&jitter) {
            return Err(InvalidBackoff::Jitter(jitter));
        }
        Ok(Backoff { min, max, jitter })
    }

    /// The delay before restart number `attempt` (1-based). `sample` is uniform in `[0, 1)`;
    /// values outside are clamped, so a bad RNG can never produce a delay above `max`.
    pub fn delay(&self, attempt: u32, sample: f64) -> Duration {
        let doublings = attempt.saturating_sub(1).min(31);
        let base = self
            .min
            .checked_mul(1u32 << doublings)
            .unwrap_or(self.max)
            .min(self.max);
        let sample = if sample.is_finite() {
            sample.clamp(0.0, 1.0)
        } else {
            0.0
        };
        base.mul_f64(1.0 - self.jitter * sample)
    }
}

/// Counts restarts and decides each delay; forgets the count after a healthy run.
#[derive(Debug, Clone)]
pub struct Restarts {
    backoff: Backoff,
    healthy_after: Duration,
    attempt: u32,
}

impl Restarts {
    pub fn new(backoff: Backoff, healthy_after: Duration) -> Restarts {
        Restarts {
            backoff,
            healthy_after,
            attempt: 0,
        }
    }

    /// A connection ended after running for `ran_for`: the attempt number of the restart
    /// and how long to wait before it.
    pub fn next(&mut self, ran_for: Duration, sample: f64) -> (u32, Duration) {
        if ran_for >= self.healthy_after {
            self.attempt = 0;
        }
        self.attempt = self.attempt.saturating_add(1);
        (self.attempt, self.backoff.delay(self.attempt, sample))
    }
}

/// A tiny seeded PRNG (SplitMix64) for jitter: no dependency, and deterministic in tests.
#[derive(Debug, Clone)]
pub struct SplitMix(u64);

impl SplitMix {
    pub fn new(seed: u64) -> SplitMix {
        SplitMix(seed)
    }

    /// Seeded from the clock and a salt, so two servers do not share a sequence.
    pub fn from_time(salt: u64) -> SplitMix {
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos() as u64);
        SplitMix(nanos ^ salt.wrapping_mul(0x9E37_79B9_7F4A_7C15))
    }

    /// Uniform in `[0, 1)`.
    pub fn sample(&mut self) -> f64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^= z >> 31;
        (z >> 11) as f64 / (1u64 << 53) as f64
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    const MS: fn(u64) -> Duration = Duration::from_millis;

    #[test]
    fn rejects_invalid_schedules() {
        assert_eq!(
            Backoff::try_new(MS(10), MS(5), 0.1),
            Err(InvalidBackoff::MinAboveMax {
                min: MS(10),
                max: MS(5)
            })
        );
        assert_eq!(
            Backoff::try_new(MS(0), MS(0), 0.1),
            Err(InvalidBackoff::ZeroMax)
        );
        assert!(matches!(
            Backoff::try_new(MS(1), MS(5), f64::NAN),
            Err(InvalidBackoff::Jitter(_))
        ));
        assert!(matches!(
            Backoff::try_new(MS(1), MS(5), 1.5),
            Err(InvalidBackoff::Jitter(_))
        ));
        assert!(Backoff::try_new(MS(0), MS(5), 0.0).is_ok());
    }

    #[test]
    fn doubles_then_caps() {
        let b = Backoff::try_new(MS(250), Duration::from_secs(30), 0.0).unwrap();
        let delays: Vec<_> = (1..=10).map(|a| b.delay(a, 0.5)).collect();
        assert_eq!(
            delays,
            [250, 500, 1000, 2000, 4000, 8000, 16000, 30000, 30000, 30000].map(MS)
        );
        // Huge attempt numbers saturate instead of overflowing.
        assert_eq!(b.delay(u32::MAX, 0.0), Duration::from_secs(30));
    }

    #[test]
    fn jitter_stays_within_its_range() {
        let b = Backoff::default();
        let mut rng = SplitMix::new(7);
        for attempt in 1..=40 {
            let full = b.delay(attempt, 0.0);
            for _ in 0..200 {
                let d = b.delay(attempt, rng.sample());
                assert!(d <= full, "{d:?} above {full:?}");
                assert!(d >= full.mul_f64(1.0 - DEFAULT_JITTER), "{d:?} too small");
                assert!(d <= DEFAULT_MAX_DELAY);
            }
        }
        // A broken sample cannot push the delay outside the range either.
        assert_eq!(b.delay(1, f64::NAN), DEFAULT_MIN_DELAY);
        assert_eq!(b.delay(1, 7.0), DEFAULT_MIN_DELAY.mul_f64(0.5));
    }

    #[test]
    fn samples_are_uniform_enough() {
        let mut rng = SplitMix::new(1);
        let samples: Vec<f64> = (0..10_000).map(|_| rng.sample()).collect();
        assert!(samples.iter().all(|s| (0.0..1.0).contains(s)));
        let mean = samples.iter().sum::<f64>() / samples.len() as f64;
        assert!((mean - 0.5).abs() < 0.02, "mean {mean}");
    }

    #[test]
    fn resets_after_a_healthy_run() {
        let b = Backoff::try_new(MS(100), MS(1000), 0.0).unwrap();
        let mut r = Restarts::new(b, Duration::from_secs(60));
        assert_eq!(r.next(MS(10), 0.0), (1, MS(100)));
        assert_eq!(r.next(MS(10), 0.0), (2, MS(200)));
        assert_eq!(r.next(Duration::from_secs(59), 0.0), (3, MS(400)));
        assert_eq!(r.next(Duration::from_secs(60), 0.0), (1, MS(100)));
        assert_eq!(r.next(MS(0), 0.0), (2, MS(200)));
    }

    #[tokio::test(start_paused = true)]
    async fn delays_elapse_on_paused_time() {
        let mut r = Restarts::new(Backoff::default(), DEFAULT_HEALTHY_AFTER);
        let start = tokio::time::Instant::now();
        for _ in 0..12 {
            let (_, delay) = r.next(Duration::ZERO, 0.999);
            tokio::time::sleep(delay).await;
        }
        // 12 restarts without health: the sum is bounded by the cap and the jitter.
        let waited = start.elapsed();
        assert!(waited <= Duration::from_secs(30 * 12));
        // Full delays sum to 181.75 s; a sample near 1 halves each.
        assert!(waited >= Duration::from_secs(90));
    }
}
