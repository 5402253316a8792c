//! Linux only: the parent-death signal, the transparent-huge-page switch (`prctl`), and
//! trimming what a process mapped to start.

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

/// Unmaps from this process the pages of its own program file that it only read: they stay
/// in the page cache (the hub maps the same binary) and fault back in if used again. Only
/// the program's image: it is mapped for the life of the process, so no other mapping can
/// take its place between reading `smaps` and the `madvise` (a library or a model file could
/// be unmapped meanwhile, and the range reused for memory in use). A mapping holding a
/// changed page (relocated read-only data, anything writable) is left whole: dropping a
/// private page it changed would lose the change.
pub(super) fn trim_resident_set() {
    let (Ok(program), Ok(smaps)) = (
        std::env::current_exe(),
        std::fs::read_to_string("/proc/self/smaps"),
    ) else {
        return;
    };
    let Some(program) = program.to_str() else {
        return;
    };
    for mapping in clean_mappings_of(program, &smaps) {
        // SAFETY: `mapping` is a whole mapping of the program's file in this process,
        // read-only, with no anonymous (changed) page, and never unmapped while we run:
        // `MADV_DONTNEED` drops its page table entries, and the next read faults the same
        // bytes back from the file. Nothing can write to it meanwhile.
        unsafe {
            libc::madvise(
                mapping.start as *mut libc::c_void,
                mapping.end - mapping.start,
                libc::MADV_DONTNEED,
            );
        }
    }
}

/// A range of this process's address space, as `/proc/self/smaps` names it.
#[derive(Debug, PartialEq)]
struct Mapping {
    start: usize,
    end: usize,
}

/// The read-only mappings of the file `path` in `smaps` whose pages are all the file's own:
/// no anonymous or swapped page.
fn clean_mappings_of(path: &str, smaps: &str) -> Vec<Mapping> {
    let mut clean = Vec::new();
    let mut current: Option<Mapping> = None;
    for line in smaps.lines() {
        if let Some(mapping) = mapping_header(path, line) {
            clean.extend(current.take());
            current = mapping;
            continue;
        }
        let Some((field, value)) = line.split_once(':') else {
            continue;
        };
        // A changed page of a private file mapping is anonymous (or swapped out); a dirty
        // page that is not is the page cache's own (a binary just written), not ours.
        if matches!(field, "Anonymous" | "Swap")
            && value.trim().trim_end_matches("kB").trim() != "0"
        {
            current = None;
        }
    }
    clean.extend(current);
    clean
}

/// `Some(Some(_))` for the header of a read-only, private mapping of the file `path`,
/// `Some(None)` for any other mapping's header, `None` for a field line.
fn mapping_header(path: &str, line: &str) -> Option<Option<Mapping>> {
    let mut fields = line.splitn(6, ' ');
    let (start, end) = fields.next()?.split_once('-')?;
    let (Ok(start), Ok(end)) = (
        usize::from_str_radix(start, 16),
        usize::from_str_radix(end, 16),
    ) else {
        return None;
    };
    let perms = fields.next()?;
    let (_offset, _device, _inode) = (fields.next()?, fields.next()?, fields.next()?);
    // The path comes after padding; a path with spaces stays whole.
    let mapped = fields.next().unwrap_or("").trim_start();
    let ours = matches!(perms, "r-xp" | "r--p") && mapped == path;
    Some(ours.then_some(Mapping { start, end }))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    const SMAPS: &str = "\
55d0c0000000-55d0c0100000 r--p 00000000 fd:01 1234 /usr/bin/mcp-defer
Rss:                 400 kB
Private_Dirty:         0 kB
Anonymous:             0 kB
Swap:                  0 kB
55d0c0100000-55d0c0900000 r-xp 00100000 fd:01 1234 /usr/bin/mcp-defer
Rss:                8000 kB
Private_Dirty:      8000 kB
Anonymous:             0 kB
55d0c0900000-55d0c0a00000 r--p 00900000 fd:01 1234 /usr/bin/mcp-defer
Private_Dirty:       512 kB
Anonymous:           512 kB
55d0c0a00000-55d0c0a08000 r--p 00a00000 fd:01 1234 /usr/bin/mcp-defer
Swap:                  8 kB
55d0c0a08000-55d0c0a10000 rw-p 00a08000 fd:01 1234 /usr/bin/mcp-defer
Private_Dirty:         4 kB
7f0000000000-7f0000100000 rw-p 00000000 00:00 0 
Anonymous:           100 kB
7f0000200000-7f0000300000 r--p 00000000 00:00 0 [vvar]
Private_Dirty:         0 kB
7f0000400000-7f0000401000 r--s 00000000 fd:01 99 /dev/shm/x
Private_Dirty:         0 kB
7f0000500000-7f0000600000 r-xp 00026000 fd:01 77                         /usr/lib/libc.so.6
Anonymous:             0 kB
7f0000600000-7f0000700000 r-xp 00000000 fd:01 78                         /opt/my tools/mcp-defer
Anonymous:             0 kB
";

    #[test]
    fn only_the_programs_read_only_mappings_without_a_changed_page_are_trimmed() {
        assert_eq!(
            clean_mappings_of("/usr/bin/mcp-defer", SMAPS),
            vec![
                Mapping {
                    start: 0x55d0c0000000,
                    end: 0x55d0c0100000
                },
                Mapping {
                    start: 0x55d0c0100000,
                    end: 0x55d0c0900000
                },
            ]
        );
        assert_eq!(
            clean_mappings_of("/opt/my tools/mcp-defer", SMAPS),
            vec![Mapping {
                start: 0x7f0000600000,
                end: 0x7f0000700000
            }]
        );
    }

    /// The resident kB of this program's read-only mappings, from `Rss:` lines.
    fn resident_read_only_kb() -> u64 {
        let program = std::env::current_exe().unwrap();
        let program = program.to_str().unwrap();
        let smaps = std::fs::read_to_string("/proc/self/smaps").unwrap();
        let mut read_only = false;
        let mut total = 0;
        for line in smaps.lines() {
            match mapping_header(program, line) {
                Some(mapping) => read_only = mapping.is_some(),
                None if read_only => {
                    if let Some(kb) = line.strip_prefix("Rss:") {
                        total += kb
                            .trim()
                            .trim_end_matches("kB")
                            .trim()
                            .parse::<u64>()
                            .unwrap();
                    }
                }
                None => {}
            }
        }
        total
    }

    #[test]
    fn trimming_this_process_unmaps_what_it_read_and_keeps_it_working() {
        let before = resident_read_only_kb();
        trim_resident_set();
        let after = resident_read_only_kb();
        assert!(
            after < before / 2,
            "resident read-only mappings: {before} kB -> {after} kB"
        );
        // Code and read-only data fault back in: this very test keeps running, and a
        // relocated table (a `&'static str` in a static) still reads right.
        static WORDS: [&str; 2] = ["still", "here"];
        assert_eq!(WORDS.join(" "), "still here");
    }
}
