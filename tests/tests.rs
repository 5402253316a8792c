//! The one integration target: drives the built binaries over real stdio.

mod serve;
mod session;
