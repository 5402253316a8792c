//! What the process benches (`e2e`, `http`) share: the call they time, and how they read a
//! list of latencies.

#![allow(dead_code)]

use std::time::Duration;

use rmcp::model::{CallToolRequestParams, JsonObject};
use serde_json::{Value, json};

/// The fixture's `add` with arguments that differ per call.
pub fn add_params(name: &str, i: usize) -> CallToolRequestParams {
    let mut params = CallToolRequestParams::new(name.to_owned());
    let arguments: JsonObject = match json!({"a": i, "b": 2}) {
        Value::Object(map) => map,
        _ => unreachable!("a literal object"),
    };
    params.arguments = Some(arguments);
    params
}

/// The `p` quantile (0-1) of sorted latencies, nearest rank; zero for none.
pub fn percentile(sorted: &[Duration], p: f64) -> Duration {
    if sorted.is_empty() {
        return Duration::ZERO;
    }
    let rank = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[rank.min(sorted.len() - 1)]
}

pub fn us(d: Duration) -> f64 {
    d.as_secs_f64() * 1e6
}

pub fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}
