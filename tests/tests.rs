//! The one integration target: drives the built binaries over real stdio.

mod interop;
mod serve;
mod session;
