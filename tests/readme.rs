//! The README (and docs/*.md) show only what the program prints. A fenced block right after
//! a `<!-- check -->` line (or `<!-- check: NAME -->`, which first runs the setup script
//! `tests/readme/NAME.sh`; `<!-- check stdout -->` for a block that leaves the log out) holds `$ command` lines, each followed by what it prints: its
//! stdout, then its stderr (whose lines are compared in any order, since servers starting
//! concurrently log in the order they happen to settle). This test runs each block's commands in one
//! bash, from the repository root, with HOME and the XDG directories in a fresh temporary
//! directory, `mcp-defer` the binary cargo built, and `npx`/`uvx` resolved to the pinned
//! servers of `.peers` (`tests/readme/bin`: the same versions servers.toml.example names,
//! without the network). Outputs are compared after normalising what changes run to run:
//! timings (`READY_MS` values, `N ms`, `*_ms=N`, log timestamps) and the temporary HOME
//! (shown as `~`). `README_BLESS=1 cargo test --test tests readme` rewrites the blocks that
//! differ with what was printed.

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::support::{self, BIN};

/// One marked block: where it is, its setup, and its commands with their shown output.
struct Block {
    file: PathBuf,
    /// Line index of the opening fence.
    fence: usize,
    setup: Option<String>,
    /// `<!-- check stdout -->`: the block shows stdout alone (the log on stderr is left out).
    stdout_only: bool,
    commands: Vec<(String, String)>,
}

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn marked_files() -> Vec<PathBuf> {
    let mut files = vec![repo().join("README.md")];
    let mut docs: Vec<PathBuf> = std::fs::read_dir(repo().join("docs"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "md"))
        .collect();
    docs.sort();
    files.extend(docs);
    files
}

fn blocks(file: &Path) -> Vec<Block> {
    let text = std::fs::read_to_string(file).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < lines.len() {
        let line = lines[i].trim();
        let Some(marker) = line
            .strip_prefix("<!-- check")
            .and_then(|rest| rest.strip_suffix("-->"))
        else {
            i += 1;
            continue;
        };
        // `check`, `check stdout`, `check: NAME`, `check stdout: NAME`.
        let (options, setup) = match marker.split_once(':') {
            Some((options, name)) => (options, Some(name.trim().to_owned())),
            None => (marker, None),
        };
        let stdout_only = options.split_whitespace().any(|w| w == "stdout");
        let fence = i + 1;
        assert!(
            lines.get(fence).is_some_and(|l| l.starts_with("```")),
            "{}:{}: a check marker must be followed by a fenced block",
            file.display(),
            i + 1
        );
        let mut commands: Vec<(String, String)> = Vec::new();
        let mut j = fence + 1;
        while j < lines.len() && !lines[j].starts_with("```") {
            if let Some(command) = lines[j].strip_prefix("$ ") {
                commands.push((command.to_owned(), String::new()));
            } else if let Some((_, output)) = commands.last_mut() {
                output.push_str(lines[j]);
                output.push('\n');
            } else {
                panic!(
                    "{}:{}: a checked block starts with a `$ command` line",
                    file.display(),
                    j + 1
                );
            }
            j += 1;
        }
        out.push(Block {
            file: file.to_owned(),
            fence,
            setup,
            stdout_only,
            commands,
        });
        i = j + 1;
    }
    out
}

/// What one command printed: its stdout and its stderr.
struct Printed {
    out: String,
    err: String,
}

/// Runs a block's commands; what each printed.
fn run(block: &Block, home: &Path) -> Vec<Printed> {
    let bin_dir = Path::new(BIN).parent().unwrap();
    let shims = repo().join("tests/readme/bin");
    let path = format!(
        "{}:{}:{}",
        shims.display(),
        bin_dir.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let outputs = tempfile::tempdir().unwrap();
    let mut script = String::new();
    if let Some(setup) = &block.setup {
        script.push_str(&format!(
            ". {} > {}/setup 2>&1\n",
            repo().join(format!("tests/readme/{setup}.sh")).display(),
            outputs.path().display()
        ));
    }
    for (i, (command, _)) in block.commands.iter().enumerate() {
        let base = outputs.path().join(i.to_string());
        script.push_str(&format!(
            "{{ {command}\n}} > {base}.out 2> {base}.err\n",
            base = base.display()
        ));
    }
    let mut bash = Command::new("bash");
    // The machine's own network settings reach servers by default and `check` names them;
    // the shown output is a machine without any (the snippets need no network).
    for name in mcp_defer::downstream::NETWORK_ENV_VARS {
        bash.env_remove(name);
    }
    // `check` names the variables servers receive, so the shown ones are fixed here: a CI
    // runner without a TERM or with a USER prints the same as a developer's shell.
    for name in [
        "LOGNAME",
        "USER",
        "LC_ALL",
        "TMPDIR",
        "TZ",
        "__CF_USER_TEXT_ENCODING",
    ] {
        bash.env_remove(name);
    }
    bash.env("LANG", "C.UTF-8")
        .env("SHELL", "/bin/bash")
        .env("TERM", "xterm");
    let status = bash
        .arg("-c")
        .arg(&script)
        .current_dir(repo())
        .env("PATH", path)
        .env("HOME", home)
        .env("XDG_CONFIG_HOME", home.join(".config"))
        .env("XDG_DATA_HOME", home.join(".local/share"))
        .env("XDG_CACHE_HOME", home.join(".cache"))
        .env_remove("MCP_DEFER_CONFIG")
        .env_remove("MCP_DEFER_CACHE_DIR")
        .env_remove("CODEX_HOME")
        .env_remove("RUST_LOG")
        .status()
        .expect("run bash");
    let read = |name: String| {
        std::fs::read_to_string(outputs.path().join(name))
            .unwrap_or_default()
            .replace(&home.display().to_string(), "~")
    };
    let printed: Vec<Printed> = (0..block.commands.len())
        .map(|i| Printed {
            out: read(format!("{i}.out")),
            err: read(format!("{i}.err")),
        })
        .collect();
    assert!(
        outputs
            .path()
            .join(format!("{}.err", block.commands.len().saturating_sub(1)))
            .exists(),
        "{}:{}: the block's commands did not all run ({status}); setup printed:\n{}",
        block.file.display(),
        block.fence + 1,
        read("setup".to_owned())
    );
    printed
}

/// Whether `shown` is what was printed: stdout line for line, then stderr, whose lines may
/// come in any order (servers settle concurrently, each logging as it does), and a line
/// logged twice counts once.
fn matches(shown: &str, printed: &Printed) -> bool {
    let shown = normalise(shown);
    let shown: Vec<&str> = shown.lines().collect();
    let out = normalise(&printed.out);
    let out: Vec<&str> = out.lines().collect();
    if shown.len() < out.len() || shown[..out.len()] != out[..] {
        return false;
    }
    let set = |lines: Vec<String>| {
        lines
            .into_iter()
            .filter(|l| !l.is_empty())
            .collect::<std::collections::BTreeSet<String>>()
    };
    let err = normalise(&printed.err);
    set(shown[out.len()..].iter().map(|l| (*l).to_owned()).collect())
        == set(err.lines().map(str::to_owned).collect())
}

/// What changes from run to run, made equal: timings, log timestamps; trailing blanks.
fn normalise(text: &str) -> String {
    let mut out = Vec::new();
    let mut ready_end: Option<usize> = None;
    for line in text.lines() {
        let mut line = line.trim_end().to_owned();
        if let Some(col) = line.find("READY_MS") {
            ready_end = Some(col + "READY_MS".len());
        } else if line.is_empty() {
            ready_end = None;
        } else if let Some(end) = ready_end {
            line = mask_digits_ending_at(&line, end);
        }
        line = mask_timestamp(&line);
        line = mask_ms(&line);
        out.push(line);
    }
    while out.last().is_some_and(|l| l.is_empty()) {
        out.pop();
    }
    out.join("\n")
}

/// The run of digits that ends at byte `end` (a right-aligned column) becomes `#`.
fn mask_digits_ending_at(line: &str, end: usize) -> String {
    let bytes = line.as_bytes();
    if end > bytes.len() || end == 0 || !bytes[end - 1].is_ascii_digit() {
        return line.to_owned();
    }
    let mut start = end;
    while start > 0 && bytes[start - 1].is_ascii_digit() {
        start -= 1;
    }
    format!(
        "{}{}#{}",
        &line[..start],
        " ".repeat(end - start - 1),
        &line[end..]
    )
}

/// A leading RFC 3339 timestamp (the log's) becomes `<time>`.
fn mask_timestamp(line: &str) -> String {
    let first = line.split(' ').next().unwrap_or("");
    let b = first.as_bytes();
    if b.len() >= 20 && b[4] == b'-' && b[10] == b'T' && first.ends_with('Z') {
        format!("<time>{}", &line[first.len()..])
    } else {
        line.to_owned()
    }
}

/// `604 ms`, `604ms` and `ready_ms=591` become `# ms`, `#ms`, `ready_ms=#`.
fn mask_ms(line: &str) -> String {
    let chars: Vec<char> = line.chars().collect();
    let mut out = String::new();
    let mut i = 0;
    while i < chars.len() {
        if chars[i].is_ascii_digit() && (i == 0 || !chars[i - 1].is_alphanumeric()) {
            let mut j = i;
            while j < chars.len() && (chars[j].is_ascii_digit() || chars[j] == '.') {
                j += 1;
            }
            let rest: String = chars[j..].iter().take(3).collect();
            let before: String = chars[..i].iter().rev().take(4).collect();
            let timing = rest.starts_with("ms")
                || rest.starts_with(" ms")
                || (before.starts_with('=') && before.contains("sm_"));
            if timing {
                out.push('#');
            } else {
                out.extend(&chars[i..j]);
            }
            i = j;
        } else {
            out.push(chars[i]);
            i += 1;
        }
    }
    out
}

#[test]
fn normalising_masks_timings_only() {
    let table = "SERVER  STATUS  TOOLS  READY_MS  CAUSE\ntime    ready       2       774\nx       failed      -         -  boom 12\n";
    let other = "SERVER  STATUS  TOOLS  READY_MS  CAUSE\ntime    ready       2        31\nx       failed      -         -  boom 12\n";
    assert_eq!(normalise(table), normalise(other));
    assert_ne!(normalise(table), normalise(&table.replace("2 ", "3 ")));
    assert_eq!(
        normalise("2026-11-30T11:00:43.764812Z  INFO x: ready ready_ms=591 (604 ms)"),
        "<time>  INFO x: ready ready_ms=# (# ms)"
    );
    assert_eq!(normalise("score 1.00, 41 tools"), "score 1.00, 41 tools");
}

#[test]
fn readme_outputs_are_what_the_program_prints() {
    let Some(_peers) = support::peers() else {
        return;
    };
    let bless = std::env::var_os("README_BLESS").is_some();
    let mut failures = Vec::new();
    for file in marked_files() {
        let found = blocks(&file);
        if found.is_empty() {
            continue;
        }
        let mut lines: Vec<String> = std::fs::read_to_string(&file)
            .unwrap()
            .lines()
            .map(str::to_owned)
            .collect();
        // Bottom up, so earlier line numbers stay valid while blocks are rewritten.
        for block in found.iter().rev() {
            let home = tempfile::tempdir().unwrap();
            let printed = run(block, home.path());
            let mut fresh = Vec::new();
            let mut differs = false;
            for ((command, shown), got) in block.commands.iter().zip(&printed) {
                fresh.push(format!("$ {command}"));
                let got = if block.stdout_only {
                    &Printed {
                        out: got.out.clone(),
                        err: String::new(),
                    }
                } else {
                    got
                };
                let both = format!("{}{}", got.out, got.err);
                fresh.extend(both.trim_end().lines().map(str::to_owned));
                if !matches(shown, got) {
                    differs = true;
                    failures.push(format!(
                        "{}:{}: `{command}` printed:\n{}--- and on stderr:\n{}--- the block \
                         shows:\n{shown}",
                        file.display(),
                        block.fence + 1,
                        got.out,
                        got.err
                    ));
                }
            }
            let end = lines[block.fence + 1..]
                .iter()
                .position(|l| l.starts_with("```"))
                .map(|p| block.fence + 1 + p)
                .unwrap();
            // Blessing rewrites only the blocks that differ, so a diff shows real changes.
            if differs {
                lines.splice(block.fence + 1..end, fresh);
            }
        }
        if bless {
            std::fs::write(&file, lines.join("\n") + "\n").unwrap();
        }
    }
    if bless {
        return;
    }
    assert!(
        failures.is_empty(),
        "outputs in the docs differ from what the program prints (README_BLESS=1 rewrites \
         them):\n\n{}",
        failures.join("\n\n")
    );
}
