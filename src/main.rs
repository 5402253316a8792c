/// mimalloc, not glibc's allocator: the search index builds documents on this thread and
/// tantivy frees them on its indexing thread, and glibc serialises such cross-thread frees on
/// an arena lock (a quarter of a 10k-tool build was spent waiting on it). Measured with
/// `cargo bench --bench search`: 10k build 3.3 s → 1.8 s, search p50 147 → 124 µs.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// `mi_option_purge_delay` in mimalloc 3's `mi_option_e` (the binding has no constant for it).
const MI_OPTION_PURGE_DELAY: libmimalloc_sys::mi_option_t = 15;
/// `mi_option_allow_thp`, likewise.
const MI_OPTION_ALLOW_THP: libmimalloc_sys::mi_option_t = 43;

fn main() -> std::process::ExitCode {
    // Return freed pages to the OS at once rather than after mimalloc's default 10 ms: the
    // index build frees a large arena once, and a long-lived server should not keep it.
    // With 10k catalog tools: resident 141 → 118 MiB after load (glibc: 128 MiB).
    // SAFETY: sets a process-wide option of the allocator; valid at any time, no pointers.
    unsafe { libmimalloc_sys::mi_option_set(MI_OPTION_PURGE_DELAY, 0) };
    // No transparent huge pages: mimalloc asks for them on its arenas (`MADV_HUGEPAGE`), and
    // a 2 MiB page is resident as a whole however little of it is used. With 1k tools listed
    // (`exposure = "all"`): peak 83 → 61 MiB, resident 58 → 42 MiB; 10k: peak 193 → 154.
    // mimalloc reads its option at start-up, before `main`, when its first arena is already
    // reserved: the process-wide switch covers that arena too (all but the one 2 MiB page
    // touched before `main`, which `AnonHugePages` in smaps shows).
    // On Linux `prctl(PR_SET_THP_DISABLE)` (in `platform`); elsewhere nothing.
    mcp_defer::platform::tune_process();
    // SAFETY: as above.
    unsafe { libmimalloc_sys::mi_option_set(MI_OPTION_ALLOW_THP, 0) };
    mcp_defer::cli::main()
}
