//! The variables every stdio server gets from mcp-defer's environment, per OS: what a
//! program needs to find its tools, home, locale and temp directory, and nothing else (a
//! server's token must not reach another server). Codex's lists
//! (`codex-rs/rmcp-client/src/utils.rs`), so a pasted Codex block behaves the same.

/// Unix: Codex's `DEFAULT_ENV_VARS`.
pub(crate) const UNIX: &[&str] = &[
    "HOME",
    "LOGNAME",
    "PATH",
    "SHELL",
    "USER",
    "__CF_USER_TEXT_ENCODING",
    "LANG",
    "LC_ALL",
    "TERM",
    "TMPDIR",
    "TZ",
];

/// Windows has neither `HOME` nor `TMPDIR`: Node, Python and their launchers look for the
/// system root (`SYSTEMROOT`: without it Winsock and the crypto provider fail to load),
/// `PATHEXT` (how `npx` finds `npx.cmd`), `COMSPEC` (how a `.cmd` shim runs), the profile
/// and app-data folders (npm's and uv's caches) and the temp folders.
pub(crate) const WINDOWS: &[&str] = &[
    "PATH",
    "PATHEXT",
    "COMSPEC",
    "SYSTEMROOT",
    "SYSTEMDRIVE",
    "WINDIR",
    "USERNAME",
    "USERDOMAIN",
    "USERPROFILE",
    "HOMEDRIVE",
    "HOMEPATH",
    "APPDATA",
    "LOCALAPPDATA",
    "PROGRAMDATA",
    "PROGRAMFILES",
    "PROGRAMFILES(X86)",
    "PROGRAMW6432",
    "TEMP",
    "TMP",
    "OS",
    "PROCESSOR_ARCHITECTURE",
    "NUMBER_OF_PROCESSORS",
    "POWERSHELL",
    "PWSH",
];

/// This OS's list.
pub(crate) const DEFAULT_ENV_VARS: &[&str] = if cfg!(windows) { WINDOWS } else { UNIX };

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn windows_list_has_what_node_and_python_need_to_start() {
        for name in [
            "SYSTEMROOT",
            "PATHEXT",
            "USERPROFILE",
            "APPDATA",
            "LOCALAPPDATA",
        ] {
            assert!(WINDOWS.contains(&name), "{name}");
        }
        for name in ["TEMP", "TMP", "COMSPEC", "PATH"] {
            assert!(WINDOWS.contains(&name), "{name}");
        }
        assert!(!WINDOWS.contains(&"HOME"));
    }

    #[test]
    fn each_list_is_free_of_duplicates() {
        for list in [UNIX, WINDOWS] {
            let mut sorted = list.to_vec();
            sorted.sort_unstable();
            sorted.dedup();
            assert_eq!(sorted.len(), list.len());
        }
    }
}
