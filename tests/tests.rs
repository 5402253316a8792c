// Tests may panic on broken setup; the crate-wide unwrap/expect denial is for the library.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod util;

mod check;
mod downstream;
mod list;
mod shutdown;
