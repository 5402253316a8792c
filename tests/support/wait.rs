//! Waiting for an event: a test polls a condition until it holds, with a deadline and a
//! failure that names what never happened. This is the one place tests pause; a fixed sleep
//! never stands in for an event (a pause that is part of what a test checks, such as the
//! spacing of calls around a timer, is the test's own).
//!
//! A probe says whether the event came: `true`, `Some(value)` or `Ok(value)`; `false`,
//! `None` or `Err(last)` while it has not (`last`, what it saw instead, goes into the
//! failure). [`eventually`] in async tests, [`eventually_sync`] in plain ones, [`poll`]
//! where a test goes on with what it saw last when the deadline passes.

use std::fmt::Display;
use std::time::Duration;

/// How long an event may take: a process starting or going on a loaded machine, a server's
/// tools arriving, a file another thread writes. It bounds a broken build; no test measures it.
pub const DEADLINE: Duration = Duration::from_secs(30);

/// The first pause between two probes; each next one doubles, up to [`MAX_PAUSE`], so a
/// quick event is seen at once and a slow one is not asked about hundreds of times.
const FIRST_PAUSE: Duration = Duration::from_millis(10);
const MAX_PAUSE: Duration = Duration::from_millis(250);

/// What a probe answers: the event's value once it came, or what was seen instead.
pub trait Outcome {
    type Ready;
    type Missing;
    fn into_result(self) -> Result<Self::Ready, Self::Missing>;
}

/// What a `false` or `None` probe saw: nothing worth printing.
pub struct Nothing;

impl Display for Nothing {
    fn fmt(&self, _: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        Ok(())
    }
}

impl Outcome for bool {
    type Ready = ();
    type Missing = Nothing;
    fn into_result(self) -> Result<(), Nothing> {
        if self { Ok(()) } else { Err(Nothing) }
    }
}

impl<T> Outcome for Option<T> {
    type Ready = T;
    type Missing = Nothing;
    fn into_result(self) -> Result<T, Nothing> {
        self.ok_or(Nothing)
    }
}

impl<T, E> Outcome for Result<T, E> {
    type Ready = T;
    type Missing = E;
    fn into_result(self) -> Result<T, E> {
        self
    }
}

/// The pauses between probes: each twice the one before, up to [`MAX_PAUSE`], until the
/// deadline (on tokio's clock, so a test with paused time waits no real time).
struct Pauses {
    deadline: tokio::time::Instant,
    next: Duration,
}

impl Pauses {
    fn within(within: Duration) -> Pauses {
        let deadline = tokio::time::Instant::now() + within;
        Pauses {
            deadline,
            next: FIRST_PAUSE,
        }
    }

    /// The pause before the next probe, or `None` once the deadline has passed.
    fn next(&mut self) -> Option<Duration> {
        let pause = self.next;
        self.next = (pause * 2).min(MAX_PAUSE);
        (tokio::time::Instant::now() < self.deadline).then_some(pause)
    }
}

/// Polls `probe` until the event comes, at most `within`: its value, or what the last probe
/// saw instead.
pub async fn poll<P: Outcome>(
    within: Duration,
    mut probe: impl AsyncFnMut() -> P,
) -> Result<P::Ready, P::Missing> {
    let mut pauses = Pauses::within(within);
    loop {
        match (probe().await.into_result(), pauses.next()) {
            (Err(_), Some(pause)) => tokio::time::sleep(pause).await,
            (outcome, _) => return outcome,
        }
    }
}

/// Waits until `probe` says the event came, within [`DEADLINE`]; fails the test naming
/// `what` (and what the last probe saw) otherwise.
pub async fn eventually<P>(what: &str, probe: impl AsyncFnMut() -> P) -> P::Ready
where
    P: Outcome<Missing: Display>,
{
    eventually_within(DEADLINE, what, probe).await
}

/// [`eventually`] with a deadline of its own, for an event known to take longer (a model
/// loading, a server slow to start by design).
pub async fn eventually_within<P: Outcome<Missing: Display>>(
    within: Duration,
    what: &str,
    probe: impl AsyncFnMut() -> P,
) -> P::Ready {
    poll(within, probe)
        .await
        .unwrap_or_else(|last| fail(within, what, &last))
}

/// [`eventually`] for a test without a runtime: the thread blocks between probes.
pub fn eventually_sync<P: Outcome<Missing: Display>>(
    what: &str,
    probe: impl FnMut() -> P,
) -> P::Ready {
    poll_sync(DEADLINE, probe).unwrap_or_else(|last| fail(DEADLINE, what, &last))
}

/// [`poll`] for a test without a runtime: the thread sleeps between probes.
pub fn poll_sync<P: Outcome>(
    within: Duration,
    mut probe: impl FnMut() -> P,
) -> Result<P::Ready, P::Missing> {
    let mut pauses = Pauses::within(within);
    let mut outcome = probe().into_result();
    while let (Err(_), Some(pause)) = (&outcome, pauses.next()) {
        std::thread::sleep(pause);
        outcome = probe().into_result();
    }
    outcome
}

fn fail(within: Duration, what: &str, last: &dyn Display) -> ! {
    let last = last.to_string();
    if last.is_empty() {
        panic!("not within {within:?}: {what}");
    }
    panic!("not within {within:?}: {what}; last seen:\n{last}");
}
