//! macOS only. There is no parent-death signal: the watchdog (`downstream::watchdog`, a
//! process reading a pipe from us that kills every registered process group when the
//! pipe reaches end of file) is what stops servers and their children when mcp-defer dies
//! without cleaning up. Everything else is the Unix code in `unix.rs`.
