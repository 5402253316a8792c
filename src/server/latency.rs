//! Latency histograms the process keeps whatever its transport, for `/metrics` to show
//! (`serve --http`): today `search_tools`, timed from its call to its result. Atomics
//! only, so recording never waits for a scrape.

use std::fmt::Write as _;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

/// Upper bounds of the buckets, in seconds: a search over a few thousand tools takes about
/// a millisecond, one that waits for starting servers seconds.
const BOUNDS: [f64; 12] = [
    0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 5.0,
];

/// A Prometheus histogram: cumulative bucket counts, the sum and the count.
pub(crate) struct Histogram {
    buckets: [AtomicU64; BOUNDS.len()],
    count: AtomicU64,
    /// In nanoseconds: an integer adds atomically.
    sum_nanos: AtomicU64,
}

/// `search_tools`, from the call to its result (waits for starting servers included).
pub(crate) static SEARCH: Histogram = Histogram::new();

impl Histogram {
    const fn new() -> Histogram {
        Histogram {
            buckets: [const { AtomicU64::new(0) }; BOUNDS.len()],
            count: AtomicU64::new(0),
            sum_nanos: AtomicU64::new(0),
        }
    }

    /// Times until the returned guard drops.
    pub(super) fn start(&'static self) -> Timer {
        Timer {
            histogram: self,
            started: Instant::now(),
        }
    }

    pub(super) fn record(&self, elapsed: Duration) {
        let seconds = elapsed.as_secs_f64();
        for (bucket, bound) in self.buckets.iter().zip(BOUNDS) {
            if seconds <= bound {
                bucket.fetch_add(1, Ordering::Relaxed);
            }
        }
        let nanos = u64::try_from(elapsed.as_nanos()).unwrap_or(u64::MAX);
        self.sum_nanos.fetch_add(nanos, Ordering::Relaxed);
        self.count.fetch_add(1, Ordering::Relaxed);
    }

    /// The histogram in Prometheus' text format under `name`.
    pub(super) fn render(&self, out: &mut String, name: &str, help: &str) {
        let count = self.count.load(Ordering::Relaxed);
        let _ = writeln!(out, "# HELP {name} {help}\n# TYPE {name} histogram");
        for (bucket, bound) in self.buckets.iter().zip(BOUNDS) {
            let n = bucket.load(Ordering::Relaxed);
            let _ = writeln!(out, "{name}_bucket{{le=\"{bound}\"}} {n}");
        }
        let sum = self.sum_nanos.load(Ordering::Relaxed) as f64 / 1e9;
        let _ = writeln!(
            out,
            "{name}_bucket{{le=\"+Inf\"}} {count}\n{name}_sum {sum}\n{name}_count {count}"
        );
    }
}

/// Records the time since it was made into its histogram when dropped.
pub(crate) struct Timer {
    histogram: &'static Histogram,
    started: Instant,
}

impl Drop for Timer {
    fn drop(&mut self) {
        self.histogram.record(self.started.elapsed());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn buckets_are_cumulative_and_the_sum_is_in_seconds() {
        let histogram = Histogram::new();
        histogram.record(Duration::from_micros(800));
        histogram.record(Duration::from_millis(30));
        let mut out = String::new();
        histogram.render(&mut out, "x", "help");
        for line in [
            "x_bucket{le=\"0.0005\"} 0",
            "x_bucket{le=\"0.001\"} 1",
            "x_bucket{le=\"0.05\"} 2",
            "x_bucket{le=\"+Inf\"} 2",
            "x_sum 0.0308",
            "x_count 2",
        ] {
            assert!(out.contains(line), "{line}:\n{out}");
        }
    }
}
