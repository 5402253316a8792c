//! Every suspicious-content rule at once: the hand-written patterns (`rules.rs`) and the
//! learned one (`learned.rs`). What `decide`, a broken lock and `mcp-defer trust` ask; the
//! bench asks each part alone to compare them.

use super::definition::Definition;
use super::rules::{self, Hit};

/// Every rule that fires on `definition`, the patterns' in rule order, then `learned`.
/// `previous` is the approved definition, for the rules about a change.
pub fn check(definition: &Definition, previous: Option<&Definition>) -> Vec<Hit> {
    let mut hits = rules::check(definition, previous);
    hits.extend(super::learned::check(definition));
    hits
}
