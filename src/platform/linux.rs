//! Linux only: the parent-death signal and the transparent-huge-page switch (`prctl`).

/// `prctl(PR_SET_THP_DISABLE)`: see `main.rs` for why and the figures.
pub(super) fn disable_transparent_huge_pages() {
    // SAFETY: `prctl(PR_SET_THP_DISABLE, 1, 0, 0, 0)` only sets a flag of this process; a
    // kernel without it returns an error, which changes nothing.
    unsafe {
        libc::prctl(libc::PR_SET_THP_DISABLE, 1, 0, 0, 0);
    }
}

/// The child gets SIGKILL when we die, however we die. The parent check closes the race
/// where we died before `prctl` took effect.
pub(super) fn kill_with_parent(command: &mut tokio::process::Command) {
    let parent = std::process::id();
    // SAFETY: the closure runs between fork and exec and only makes async-signal-safe calls
    // (prctl, getppid, raise).
    unsafe {
        command.pre_exec(move || {
            if libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            if libc::getppid() as u32 != parent {
                libc::raise(libc::SIGKILL);
            }
            Ok(())
        });
    }
}
