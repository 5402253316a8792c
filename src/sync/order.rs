//! The order of every lock in `server/`, `ingest/` and `downstream/`, written once (issue
//! 23; completed in issue 32, when it had missed `Session::trail`, `Notifier::relists_how`
//! and the HTTP locks). All but one are std locks taken through [`crate::sync`], held for a
//! few lines and never across `.await`: a std guard is not `Send`, so a handler future that
//! held one over an `.await` would not compile (rmcp needs `Send` handler futures).
//!
//! A lock may be taken while holding locks of earlier rows only; the locks of one row are
//! never held together. Each lock is named `Type::field` (a field), or `Type` (a tuple
//! struct, a type alias or a static that is the lock): the test below reads the source and
//! fails when a lock is not named here, so a new one is placed in the order when it is
//! added.
//!
//! 1. `Shared::sessions`, the live sessions: held only to clone them out
//!    (`Shared::live_sessions`; each one's `LogLevel` is read after).
//! 2. `Subscriptions`, the downstream subscriptions of all sessions
//!    (`passthrough/subscriptions.rs`): held while a session counts its hold
//!    (`Holds::subscribed`).
//! 3. The registry's catalogs (`ingest::Registry`): `Registry::catalog`, then
//!    `Registry::index` (a search holds both) or `Registry::trust` (a name that resolved
//!    to nothing is explained from both: `Shared::explain_unknown`); `Registry::prompts`;
//!    `Registry::resources`. While a list is entered (`Registry::apply`),
//!    `Registry::trust`, `Registry::pending` and `Registry::instructions` are each taken
//!    alone, let go before `Registry::catalog` is taken.
//! 4. One session's lists (`server/session/`), each after its registry catalog:
//!    `Session::exposed` (after `Registry::catalog` and `Registry::index`:
//!    `meta/search_tools.rs`, `meta/select_tools.rs`, `publish.rs`, `handler.rs`'s
//!    `tools/list`), then the lists it was shown (`passthrough/shown.rs`): `Prompts`,
//!    `ResourceLists`; and its subscriptions, `Holds::subscribed`.
//! 5. Innermost, nothing is taken while one is held:
//!    - server: `Shared::running` (a snapshot, cloned out at once: `view::Servers`),
//!      `Shared::reload_problem`, `LogLevel`, `Tasks` (`task_wire.rs`),
//!      `SessionUsage::trail` (what search learns from the session, `usage.rs`), the `Notifier`'s `Notifier::legacy`,
//!      `Notifier::subscriptions` and `Notifier::relists_how`, `ClientRequests`'
//!      `Inner::session`, `Inner::downstream_level`, `Inner::calls` and `Inner::parked`,
//!      `Validators` (`meta/validate.rs`), `ToolLists` (`stdio/tool_lists.rs`) and
//!      `Calls::running` (`thin_calls.rs`; `Begun::running`
//!      is the same table);
//!    - HTTP (`server/http/`): `Tokens::accepted` (the bearer tokens), `Gate::stateless`
//!      (stateless requests in flight per principal), `Connections::inner`,
//!      `Sessions::live` (open sessions), `Holdings` (alias `Reservation::held`: sessions
//!      per principal), `Counters::requests` (the metrics) and `Diversions` (the thin calls
//!      of a session in flight, `thin.rs`);
//!    - ingest: `Registry::searchable`, `Registry::screened_changes`,
//!      `Registry::pending` and `Registry::instructions`;
//!    - downstream, each shared by one server's handle, supervisor and connection:
//!      `ServerHandle::live` and `Supervisor::live` (its connection), `Listed` (the names
//!      it lists), `Subscriptions`, `Demand::counts` (calls in flight, idle stop decided
//!      under it), `StopCause`, `BrokenCause`, `InFlight`, `ProgressRoutes`, `Stash`
//!      (`http_raw.rs`), `RawCalls` (the raw calls of a stdio connection waiting for their
//!      answer lines, `raw_answers.rs`), `StderrLog::inner`, and the watchdog's `PIPE`.
//!
//! The one async lock is the reload's pool (`Reloader::pool`, `server/reload.rs`), held
//! across `.await` on purpose and never on a request's path.

#[cfg(test)]
mod tests {
    use std::path::{Path, PathBuf};

    /// The folders whose locks this page orders.
    const ORDERED: [&str; 3] = ["src/server", "src/ingest", "src/downstream"];

    /// Every `.rs` file under `dir`, test files left out.
    fn sources(dir: &Path, into: &mut Vec<PathBuf>) {
        let Ok(entries) = std::fs::read_dir(dir) else {
            panic!("cannot read {}", dir.display());
        };
        for entry in entries.flatten() {
            let path = entry.path();
            let name = entry.file_name();
            if name == "tests" || name == "tests.rs" {
                continue;
            }
            if path.is_dir() {
                sources(&path, into);
            } else if path.extension().is_some_and(|e| e == "rs") {
                into.push(path);
            }
        }
    }

    fn is_lock(text: &str) -> bool {
        text.contains("Mutex<") || text.contains("RwLock<")
    }

    /// The name of the item a line declares after `keyword` (`struct`, `type`,
    /// `static`), visibility and all.
    fn declared<'a>(line: &'a str, keyword: &str) -> Option<&'a str> {
        let mut words = line.split_whitespace();
        let mut word = words.next()?;
        if word.starts_with("pub") {
            word = words.next()?;
        }
        if word != keyword {
            return None;
        }
        let rest = words.next()?;
        let end = rest
            .find(|c: char| !c.is_alphanumeric() && c != '_')
            .unwrap_or(rest.len());
        Some(&rest[..end])
    }

    /// The locks `source` declares: `Type::field` for a field, `Type` for a tuple struct,
    /// a type alias or a static that is one. Test modules written inline end the scan.
    fn locks_in(source: &str) -> Vec<String> {
        let mut found = Vec::new();
        // The struct whose fields are being read, and the indent its `}` closes at.
        let mut body: Option<(String, String)> = None;
        for line in source.lines() {
            let text = line.trim_start();
            if text.starts_with("//") {
                continue;
            }
            if text.starts_with("mod tests {") {
                break;
            }
            if let Some(name) = declared(text, "struct") {
                if text.ends_with('{') {
                    let indent = &line[..line.len() - text.len()];
                    body = Some((name.to_owned(), format!("{indent}}}")));
                } else if is_lock(text) {
                    found.push(name.to_owned());
                }
                continue;
            }
            if let Some((name, close)) = &body {
                if line.trim_end() == close {
                    body = None;
                } else if let Some((field, ty)) = text.split_once(':')
                    && is_lock(ty)
                {
                    let field = field.trim_start_matches("pub(crate) ");
                    let field = field.trim_start_matches("pub(super) ");
                    let field = field.trim_start_matches("pub ");
                    found.push(format!("{name}::{field}"));
                }
                continue;
            }
            for keyword in ["type", "static"] {
                if let Some(name) = declared(text, keyword)
                    && is_lock(text)
                {
                    found.push(name.to_owned());
                }
            }
        }
        found
    }

    #[test]
    fn every_lock_has_its_place_in_the_order() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR"));
        let order = std::fs::read_to_string(root.join("src/sync/order.rs"))
            .unwrap_or_else(|e| panic!("cannot read the order: {e}"));
        let order = order.split("#[cfg(test)]").next().unwrap_or_default();
        let mut files = Vec::new();
        for dir in ORDERED {
            sources(&root.join(dir), &mut files);
        }
        files.sort();
        let mut all = Vec::new();
        let mut missing = Vec::new();
        for file in &files {
            let source = std::fs::read_to_string(file)
                .unwrap_or_else(|e| panic!("cannot read {}: {e}", file.display()));
            for lock in locks_in(&source) {
                if !order.contains(&format!("`{lock}`")) {
                    let file = file.strip_prefix(root).unwrap_or(file);
                    missing.push(format!("{lock} ({})", file.display()));
                }
                all.push(lock);
            }
        }
        // The scan itself works: the locks known to be there are found.
        for known in [
            "Shared::sessions",
            "Registry::catalog",
            "SessionUsage::trail",
            "PIPE",
        ] {
            assert!(all.iter().any(|l| l == known), "{known} not found: {all:?}");
        }
        assert!(
            missing.is_empty(),
            "locks missing from src/sync/order.rs; add each to its row: {missing:#?}"
        );
    }

    #[test]
    fn the_scan_reads_fields_tuples_aliases_and_statics() {
        let source = "\
pub(crate) struct A {
    plain: u8,
    pub(super) held: Arc<Mutex<u8>>,
    pub read: std::sync::RwLock<u8>,
}
struct B(Mutex<u8>);
type C = Arc<Mutex<u8>>;
static D: OnceLock<Mutex<u8>> = OnceLock::new();
fn e(f: &Mutex<u8>) {}
mod tests {
    struct F { g: Mutex<u8> }
}
";
        assert_eq!(locks_in(source), ["A::held", "A::read", "B", "C", "D"]);
    }
}
