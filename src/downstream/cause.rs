//! An error as one line for the model and the log: supervisor and session watch both tell
//! why a connection failed, and the useful words sit a few sources down.

/// An error and every source under it, on one line: HTTP errors hide the status or
/// "connection refused" a few levels down.
pub(crate) fn chain(err: &dyn std::error::Error) -> String {
    let mut text = err.to_string();
    let mut source = err.source();
    while let Some(err) = source {
        let next = err.to_string();
        if !text.contains(&next) {
            text.push_str(": ");
            text.push_str(&next);
        }
        source = err.source();
    }
    text
}
