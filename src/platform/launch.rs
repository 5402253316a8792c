//! How a server's `command` becomes the program to run, as the user's shell would find it.
//!
//! On Unix `execvp` searches `PATH` and runs scripts through their `#!` line, so the command
//! is passed on as written. Windows' `CreateProcess` only finds `.exe` files: `npx`, `uvx`
//! from pip, `pnpm` and most Node/Python launchers are `npx.cmd`, `uvx.ps1` and the like,
//! which `cmd.exe` finds through `PATHEXT`. Without this, `command = "npx"` is "command not
//! found" on Windows (the classic failure of MCP configs there). The search is a pure
//! function of `PATH`, `PATHEXT` and a file test, so it is tested on every OS.

use std::ffi::{OsStr, OsString};
use std::path::{Path, PathBuf};

/// `PATHEXT` when the variable is unset: Windows' own default.
pub(crate) const DEFAULT_PATHEXT: &str = ".COM;.EXE;.BAT;.CMD;.VBS;.VBE;.JS;.JSE;.WSF;.WSH;.MSC";

/// What to spawn for a command: the program and the arguments that go before the user's.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Launch {
    pub program: OsString,
    pub prefix: Vec<OsString>,
}

/// Finds `command` as `cmd.exe` would: a command with a directory part is tried as given;
/// a bare name is looked for in each `PATH` entry in order. In each place the name as
/// written comes first when it already ends in one of the `PATHEXT` extensions, then the
/// name with each extension appended, in `PATHEXT` order (so `npx` finds `npx.cmd` before
/// a POSIX `npx` script that Windows cannot run). `.ps1` is tried last, as PowerShell
/// would. `None` when nothing matches. Paths with spaces need nothing special: the result
/// is one path, and std quotes arguments when it builds the command line.
pub(crate) fn find_program(
    command: &str,
    path: Option<&OsStr>,
    pathext: Option<&OsStr>,
    is_file: &dyn Fn(&Path) -> bool,
) -> Option<PathBuf> {
    let pathext = pathext
        .and_then(OsStr::to_str)
        .filter(|p| !p.trim().is_empty())
        .unwrap_or(DEFAULT_PATHEXT);
    let mut extensions: Vec<String> = pathext
        .split(';')
        .map(str::trim)
        .filter(|e| e.starts_with('.') && e.len() > 1)
        .map(str::to_ascii_lowercase)
        .collect();
    if !extensions.iter().any(|e| e == ".ps1") {
        extensions.push(".ps1".to_owned());
    }
    let lower = command.to_ascii_lowercase();
    let has_known_ext = extensions.iter().any(|e| lower.ends_with(e.as_str()));
    let candidates = |base: &Path| -> Option<PathBuf> {
        if has_known_ext && is_file(base) {
            return Some(base.to_owned());
        }
        extensions.iter().find_map(|ext| {
            let mut name = base.as_os_str().to_owned();
            name.push(ext);
            let candidate = PathBuf::from(name);
            is_file(&candidate).then_some(candidate)
        })
    };
    let given = Path::new(command);
    if has_directory(command) {
        return candidates(given);
    }
    let path = path?;
    std::env::split_paths(path)
        .filter(|dir| !dir.as_os_str().is_empty())
        .find_map(|dir| candidates(&dir.join(given)))
}

/// Whether `command` names a place (`.\x`, `C:\x`, `dir/x`) rather than a program to search.
fn has_directory(command: &str) -> bool {
    command.contains(['/', '\\']) || command.as_bytes().get(1) == Some(&b':')
}

/// How to run `program` (a path [`find_program`] returned): a PowerShell script goes
/// through `powershell.exe -File`; everything else runs directly (std starts `.cmd` and
/// `.bat` files through `cmd.exe` with their arguments escaped for it).
pub(crate) fn launch_for(program: PathBuf) -> Launch {
    let is_ps1 = program
        .extension()
        .is_some_and(|e| e.eq_ignore_ascii_case("ps1"));
    if is_ps1 {
        let prefix = [
            "-NoLogo",
            "-NoProfile",
            "-ExecutionPolicy",
            "Bypass",
            "-File",
        ]
        .into_iter()
        .map(OsString::from)
        .chain(std::iter::once(program.into_os_string()))
        .collect();
        Launch {
            program: OsString::from("powershell.exe"),
            prefix,
        }
    } else {
        Launch {
            program: program.into_os_string(),
            prefix: Vec::new(),
        }
    }
}

/// The program and leading arguments to spawn for `command` on this OS, searching the
/// child's `PATH` and `PATHEXT` (`lookup`, falling back to ours) on Windows; elsewhere, and
/// when nothing is found (the spawn then reports "command not found"), the command as given.
pub(crate) fn resolve(command: &str, lookup: &dyn Fn(&str) -> Option<OsString>) -> Launch {
    let as_given = Launch {
        program: OsString::from(command),
        prefix: Vec::new(),
    };
    if !cfg!(windows) {
        return as_given;
    }
    let path = lookup("PATH").or_else(|| std::env::var_os("PATH"));
    let pathext = lookup("PATHEXT").or_else(|| std::env::var_os("PATHEXT"));
    match find_program(command, path.as_deref(), pathext.as_deref(), &|p| {
        p.is_file()
    }) {
        Some(program) => launch_for(program),
        None => as_given,
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    /// A fake `PATH` of two directories, one with a space in its name, holding the files
    /// a Windows machine with Node and uv would have.
    fn fake_path() -> (tempfile::TempDir, OsString) {
        let root = tempfile::tempdir().unwrap();
        let node = root.path().join("Program Files").join("nodejs");
        let uv = root.path().join("uv bin");
        for dir in [&node, &uv] {
            std::fs::create_dir_all(dir).unwrap();
        }
        for file in [
            node.join("npx"),
            node.join("npx.cmd"),
            node.join("node.exe"),
            uv.join("uvx.ps1"),
            uv.join("tool.bat"),
            uv.join("tool.exe"),
        ] {
            std::fs::write(file, b"").unwrap();
        }
        let path = std::env::join_paths([node, uv]).unwrap();
        (root, path)
    }

    fn find(command: &str, path: &OsStr, pathext: Option<&str>) -> Option<String> {
        let found = find_program(command, Some(path), pathext.map(OsStr::new), &|p| {
            p.is_file()
        })?;
        Some(found.file_name()?.to_string_lossy().into_owned())
    }

    #[test]
    fn npx_resolves_to_its_cmd_shim_through_pathext() {
        let (_root, path) = fake_path();
        // The POSIX `npx` script beside it is not a Windows program: `.cmd` wins.
        assert_eq!(
            find("npx", &path, Some(".COM;.EXE;.BAT;.CMD")).as_deref(),
            Some("npx.cmd")
        );
        assert_eq!(
            find("node", &path, Some(".COM;.EXE")).as_deref(),
            Some("node.exe")
        );
    }

    #[test]
    fn pathext_order_decides_between_extensions() {
        let (_root, path) = fake_path();
        assert_eq!(
            find("tool", &path, Some(".EXE;.BAT")).as_deref(),
            Some("tool.exe")
        );
        assert_eq!(
            find("tool", &path, Some(".BAT;.EXE")).as_deref(),
            Some("tool.bat")
        );
    }

    #[test]
    fn unset_pathext_uses_the_windows_default_and_ps1_comes_last() {
        let (_root, path) = fake_path();
        assert_eq!(find("npx", &path, None).as_deref(), Some("npx.cmd"));
        assert_eq!(find("uvx", &path, Some("")).as_deref(), Some("uvx.ps1"));
    }

    #[test]
    fn a_name_with_its_extension_is_found_as_written() {
        let (_root, path) = fake_path();
        assert_eq!(find("npx.cmd", &path, None).as_deref(), Some("npx.cmd"));
        // The extension is matched without regard to case, as Windows does.
        assert!(find_program("uvx.PS1", Some(&path), None, &|p| p.ends_with("uvx.PS1")).is_some());
    }

    #[test]
    fn a_path_with_spaces_and_a_directory_part_is_not_searched_in_path() {
        let (root, path) = fake_path();
        let given = root.path().join("Program Files").join("nodejs").join("npx");
        let found = find_program(given.to_str().unwrap(), Some(&path), None, &|p| p.is_file());
        assert_eq!(found, Some(given.with_extension("cmd")));
        assert_eq!(find("nodejs/npx-missing", &path, None), None);
    }

    #[test]
    fn unknown_commands_are_not_found() {
        let (_root, path) = fake_path();
        assert_eq!(find("uv", &path, None), None);
        assert_eq!(find_program("npx", None, None, &|p| p.is_file()), None);
    }

    #[test]
    fn powershell_scripts_run_through_powershell_file() {
        let launch = launch_for(PathBuf::from(r"C:\Users\Ann Lee\bin\uvx.ps1"));
        assert_eq!(launch.program, "powershell.exe");
        assert_eq!(
            launch.prefix.last().unwrap(),
            r"C:\Users\Ann Lee\bin\uvx.ps1"
        );
        assert!(launch.prefix.contains(&OsString::from("-File")));
        let launch = launch_for(PathBuf::from(r"C:\Program Files\nodejs\npx.cmd"));
        assert_eq!(launch.program, r"C:\Program Files\nodejs\npx.cmd");
        assert!(launch.prefix.is_empty());
    }

    #[test]
    fn resolve_leaves_commands_alone_off_windows() {
        if cfg!(windows) {
            return;
        }
        let launch = resolve("npx", &|_| None);
        assert_eq!(launch.program, "npx");
        assert!(launch.prefix.is_empty());
    }
}
