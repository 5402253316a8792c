//! The benches' only OS-specific calls (`.ci/check-platform` allows them here alone). The
//! figures they feed are read from /proc on Linux; elsewhere these return neutral values so
//! the benches still build.

#![allow(dead_code)]

use std::time::Duration;

/// Clock ticks per second (`_SC_CLK_TCK`), the unit of /proc's CPU times.
pub fn clock_ticks_per_second() -> f64 {
    #[cfg(unix)]
    {
        // SAFETY: sysconf has no preconditions.
        (unsafe { libc::sysconf(libc::_SC_CLK_TCK) }) as f64
    }
    #[cfg(not(unix))]
    {
        100.0
    }
}

/// User plus system CPU time of this whole process; zero where unknown.
pub fn process_cpu() -> Duration {
    #[cfg(unix)]
    {
        // SAFETY: getrusage only writes the struct it is given.
        let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
        // SAFETY: as above; RUSAGE_SELF is always valid.
        unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut usage) };
        let tv = |t: libc::timeval| Duration::new(t.tv_sec as u64, t.tv_usec as u32 * 1000);
        tv(usage.ru_utime) + tv(usage.ru_stime)
    }
    #[cfg(not(unix))]
    {
        Duration::ZERO
    }
}

/// CPU time of the calling thread alone; zero where unknown.
pub fn thread_cpu() -> Duration {
    #[cfg(target_os = "linux")]
    {
        // SAFETY: clock_gettime only writes the struct it is given.
        let mut t: libc::timespec = unsafe { std::mem::zeroed() };
        // SAFETY: as above; CLOCK_THREAD_CPUTIME_ID is always valid on Linux.
        unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut t) };
        Duration::new(t.tv_sec as u64, t.tv_nsec as u32)
    }
    #[cfg(not(target_os = "linux"))]
    {
        Duration::ZERO
    }
}
