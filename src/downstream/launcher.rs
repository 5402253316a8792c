//! What to install when a server's launcher is missing: configs start servers with `npx`,
//! `uvx`, `docker` and the like, and "command not found: uvx" alone leaves a new user to
//! guess that uv is the thing to install.

/// The install hint for a missing `command`, as " (install ...)", or "" for a command we
/// know nothing about. Matches the program's file name, so `/usr/local/bin/npx` counts.
pub(super) fn hint(command: &str) -> &'static str {
    let program = std::path::Path::new(command)
        .file_name()
        .and_then(|n| n.to_str())
        .unwrap_or(command);
    match program {
        "npx" | "npm" | "node" => {
            " (install Node.js, which brings npx: https://nodejs.org/ or your package manager)"
        }
        "uvx" | "uv" => {
            " (install uv, which brings uvx: https://docs.astral.sh/uv/ or `pip install uv`)"
        }
        "pipx" => " (install pipx: `pip install pipx`, or use uvx from uv)",
        "python" | "python3" => " (install Python 3: https://www.python.org/downloads/)",
        "docker" => " (install Docker: https://docs.docker.com/get-docker/)",
        "bunx" | "bun" => " (install Bun: https://bun.sh/)",
        "deno" => " (install Deno: https://deno.com/)",
        _ => "",
    }
}

#[cfg(test)]
mod tests {
    use super::hint;

    #[test]
    fn known_launchers_name_what_to_install() {
        assert!(hint("uvx").contains("install uv"));
        assert!(hint("/opt/bin/npx").contains("Node.js"));
        assert_eq!(hint("mcp-server-that-does-not-exist"), "");
    }
}
