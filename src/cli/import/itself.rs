//! Whether a client's server entry runs mcp-defer itself, in any of the ways it is launched:
//! the binary by name or path (`mcp-defer`, `/x/mcp-defer.exe`, the npm and uv caches'
//! copies), the npm launcher script (`node .../mcp-defer.js`), or a package runner naming
//! the package (`npx -y mcp-defer@0.1.0`, `npx --package mcp-defer ...`, `pnpm dlx`,
//! `bunx`, `yarn dlx`, `npm exec`, `uvx mcp-defer`, `uvx --from mcp-defer ...`,
//! `uv tool run`, `pipx run`, and any of them behind Windows' `cmd /c`).
//!
//! Importing such an entry would make mcp-defer start itself, which starts itself again.
//! This is the first guard; `serve` refusing to run under itself is the second
//! (`crate::downstream::environment::PARENT_VAR`), for what no recognizer can foresee.

use std::path::Path;

/// The package and binary name.
const NAME: &str = "mcp-defer";

/// Whether `command args...` starts mcp-defer.
pub(super) fn is_self(command: &str, args: &[String]) -> bool {
    let program = stem(command);
    if program == NAME {
        return true;
    }
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    match (program.as_str(), args.as_slice()) {
        // Windows' shell in front of the real command.
        ("cmd", [flag, command, rest @ ..]) if flag.eq_ignore_ascii_case("/c") => {
            let rest: Vec<String> = rest.iter().map(|s| (*s).to_owned()).collect();
            is_self(command, &rest)
        }
        // The npm package's launcher script, run by a JavaScript runtime.
        ("node" | "deno", _) => first_positional(&args).is_some_and(|script| stem(script) == NAME),
        ("npx" | "bunx" | "pnpx" | "uvx", _) => runs_package(&args),
        ("pnpm" | "yarn" | "bun" | "npm", [sub, rest @ ..])
            if matches!(*sub, "dlx" | "exec" | "x") =>
        {
            runs_package(rest)
        }
        ("uv" | "uvenv", ["tool", "run", rest @ ..]) => runs_package(rest),
        ("pipx", ["run", rest @ ..]) => runs_package(rest),
        _ => false,
    }
}

/// The file name without its extension (`mcp-defer.exe`, `mcp-defer.cmd`, `mcp-defer.js`),
/// lower-cased: Windows names are case-blind.
fn stem(command: &str) -> String {
    // A Windows path read on Unix: its `\` separators are not Path's.
    let last = command.rsplit(['/', '\\']).next().unwrap_or(command);
    Path::new(last)
        .file_stem()
        .map(|s| s.to_string_lossy().to_ascii_lowercase())
        .unwrap_or_default()
}

/// A package runner's options whose value is the package to install (npm `--package`,
/// uv `--from` and `--with`, pipx `--spec`).
const PACKAGE_FLAGS: &[&str] = &["--package", "-p", "--from", "--with", "--spec"];

/// Runner options that take a value which is not a package (so the value is not mistaken
/// for the package to run).
const VALUE_FLAGS: &[&str] = &[
    "--registry",
    "--cache",
    "--userconfig",
    "--call",
    "-c",
    "--python",
    "--index",
    "--index-url",
    "--default-index",
    "--extra-index-url",
    "--python-preference",
    "--pip-args",
    "--directory",
    "--config-file",
];

/// The runner's arguments name the mcp-defer package: as the value of a package option,
/// or as the first argument that is not an option (the package or command to run).
fn runs_package(args: &[&str]) -> bool {
    let mut rest = args.iter();
    while let Some(arg) = rest.next() {
        if *arg == "--" {
            return rest.next().is_some_and(|a| is_package(a));
        }
        if let Some((flag, value)) = arg.split_once('=')
            && flag.starts_with('-')
        {
            if PACKAGE_FLAGS.contains(&flag) && is_package(value) {
                return true;
            }
            continue;
        }
        if PACKAGE_FLAGS.contains(arg) {
            if rest.next().is_some_and(|a| is_package(a)) {
                return true;
            }
            continue;
        }
        if VALUE_FLAGS.contains(arg) {
            rest.next();
            continue;
        }
        if arg.starts_with('-') {
            continue;
        }
        return is_package(arg);
    }
    false
}

/// The first argument that is not an option.
fn first_positional<'a>(args: &[&'a str]) -> Option<&'a str> {
    args.iter().copied().find(|a| !a.starts_with('-'))
}

/// `spec` names the mcp-defer package: `mcp-defer`, `mcp-defer@0.1.0`, `mcp-defer@latest`,
/// `mcp_defer==0.1.0`, `mcp-defer[extra]>=0.1` (PyPI compares names case-blind, `_` as `-`).
fn is_package(spec: &str) -> bool {
    let name = spec
        .split(['@', '=', '<', '>', '~', '!', '[', ';', ' '])
        .next()
        .unwrap_or(spec);
    name.to_ascii_lowercase().replace('_', "-") == NAME
}

#[cfg(test)]
mod tests {
    use super::*;

    fn runs(line: &str) -> bool {
        let mut words = line.split_whitespace();
        let command = words.next().unwrap_or_default();
        let args: Vec<String> = words.map(str::to_owned).collect();
        is_self(command, &args)
    }

    #[test]
    fn every_launcher_form_is_recognised() {
        for line in [
            "mcp-defer serve",
            "/usr/local/bin/mcp-defer",
            r"C:\Users\me\bin\MCP-DEFER.EXE serve",
            "/home/me/.npm/_npx/4b4c857f6efdfb61/node_modules/.bin/mcp-defer",
            "/home/me/.cache/uv/archive-v0/Ab3dE/bin/mcp-defer serve --config x",
            "node /home/me/.npm/_npx/1/node_modules/mcp-defer/bin/mcp-defer.js",
            "npx mcp-defer",
            "npx -y mcp-defer",
            "npx -y mcp-defer@0.1.0 serve",
            "npx --yes mcp-defer@latest",
            "npx --package mcp-defer mcp-defer serve",
            "npx --package=mcp-defer@0.1.0 -c mcp-defer",
            "npx --registry https://registry.example mcp-defer",
            "pnpm dlx mcp-defer",
            "pnpm exec mcp-defer",
            "yarn dlx mcp-defer",
            "bunx mcp-defer",
            "bun x mcp-defer",
            "npm exec -- mcp-defer",
            "uvx mcp-defer",
            "uvx mcp-defer==0.1.0 serve",
            "uvx --from mcp-defer mcp-defer serve",
            "uvx --from mcp_defer mcp-defer",
            "uv tool run mcp-defer",
            "pipx run mcp-defer",
            "pipx run --spec mcp-defer mcp-defer",
            "cmd /c npx -y mcp-defer",
        ] {
            assert!(runs(line), "{line}");
        }
    }

    #[test]
    fn other_servers_are_not_mistaken_for_it() {
        for line in [
            "npx -y @modelcontextprotocol/server-memory",
            "npx -y mcp-defer-tools",
            "npx -y some-server --name mcp-defer",
            "uvx mcp-server-time",
            "uvx --from git+https://x/y mcp-server",
            "mcp-defer-fixture",
            "node server.js mcp-defer",
            "pipx run black",
            "python -m mcp_server_git",
        ] {
            assert!(!runs(line), "{line}");
        }
    }
}
