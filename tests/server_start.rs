//! Issue 20, item 2: the first run of a launcher (`npx`, `uvx`, ...) downloads its package
//! before the server starts, so launchers get a longer start allowance; a start that times
//! out names `startup_timeout_sec`; the stderr line that explains a failure stays in the
//! cause; and `check` exits 1 when a server does not work (disabled ones are fine).

use std::path::PathBuf;

use crate::support::{Dir, FIXTURE, assert_contains_all, fixture, row, stderr, stdout, toml_str};

/// An executable script named `name` (a launcher's name) in `<dir>/bin`.
fn script(dir: &Dir, name: &str, body: &str) -> PathBuf {
    let bin = dir.file("bin");
    std::fs::create_dir_all(&bin).unwrap();
    let path = bin.join(name);
    std::fs::write(&path, format!("#!/bin/sh\n{body}\n")).unwrap();
    crate::support::os::set_mode(&path, 0o755);
    path
}

/// What Node prints when a package's dependency is missing (a cache broken by an `npx`
/// killed mid-install): the reason once, then frames and a `{ code }` block.
const NODE_FAILURE: &str = "node:internal/modules/esm/resolve:873
  throw new ERR_MODULE_NOT_FOUND(packageName, fileURLToPath(base), null);
        ^

Error [ERR_MODULE_NOT_FOUND]: Cannot find package 'zod' imported from /home/u/.npm/_npx/8a1/node_modules/server/dist/index.js
    at packageResolve (node:internal/modules/esm/resolve:873:9)
    at moduleResolve (node:internal/modules/esm/resolve:946:18)
    at defaultResolve (node:internal/modules/esm/resolve:1188:11)
    at ModuleLoader.defaultResolve (node:internal/modules/esm/loader:642:12)
    at #cachedDefaultResolve (node:internal/modules/esm/loader:591:25)
    at ModuleLoader.resolve (node:internal/modules/esm/loader:574:38)
    at ModuleLoader.getModuleJobForImport (node:internal/modules/esm/loader:236:38)
    at ModuleJob._link (node:internal/modules/esm/module_job:130:49) {
  code: 'ERR_MODULE_NOT_FOUND'
}

Node.js v22.12.0";

/// An `npx` that needs longer than the 10 s default (a cold npm cache took 11.5-13.6 s),
/// with no `startup_timeout_sec`: ready, because launchers get the first-run allowance.
/// Takes ~10.5 s; without the allowance it fails ("timed out after 10 s").
#[test]
fn a_slow_first_run_of_a_launcher_is_waited_for() {
    let dir = Dir::new();
    let npx = script(
        &dir,
        "npx",
        &format!("sleep 10.5\nexec {} \"$@\"", toml_str(FIXTURE)),
    );
    dir.config(&format!(
        "[mcp_servers.cold]\ncommand = {}\nargs = [\"--name\", \"cold\"]\n",
        toml_str(&npx.to_string_lossy())
    ));
    let out = dir.run(&["check"]);
    let table = stdout(&out);
    assert_eq!(out.status.code(), Some(0), "{table}\n{}", stderr(&out));
    assert_eq!(row(&table, "cold")[1], "ready", "{table}");
    let ms: u64 = row(&table, "cold")[3].parse().unwrap();
    assert!(ms >= 10_500, "ready after {ms} ms");
}

/// The reason survives into the cause, and `check` exits 1; a disabled server is fine.
#[test]
fn the_line_that_explains_a_failed_start_is_kept() {
    let dir = Dir::new();
    std::fs::write(dir.file("node-failure.txt"), NODE_FAILURE).unwrap();
    let npx = script(
        &dir,
        "npx",
        &format!(
            "cat {} >&2\nexit 1",
            toml_str(&dir.file("node-failure.txt").to_string_lossy())
        ),
    );
    let mut toml = format!(
        "[mcp_servers.broken]\ncommand = {}\nargs = [\"-y\", \"@example/server\"]\n\n",
        toml_str(&npx.to_string_lossy())
    );
    toml += &fixture("fine", &[], "");
    toml += &fixture("off", &["--fail-start", "never started"], "enabled = false");
    dir.config(&toml);
    let out = dir.run(&["check"]);
    let (table, err) = (stdout(&out), stderr(&out));
    let broken = row(&table, "broken");
    assert_eq!(broken[1], "failed", "{table}");
    assert!(
        broken[4].contains("Cannot find package 'zod'"),
        "the explaining line was cut: {broken:?}"
    );
    assert!(broken[4].contains("exited with code 1"), "{broken:?}");
    assert!(broken[4].contains("delete that folder"), "{broken:?}");
    assert_eq!(row(&table, "fine")[1], "ready", "{table}");
    assert_eq!(row(&table, "off")[1], "disabled", "{table}");
    assert_eq!(out.status.code(), Some(1), "{table}\n{err}");
    assert_contains_all(&err, &["server not working: broken"]);
}

/// A start past its deadline names the setting to raise; a config whose only trouble is
/// a disabled server exits 0.
#[test]
fn a_timeout_names_startup_timeout_sec() {
    let dir = Dir::with_config(&fixture(
        "hang",
        &["--slow-start-ms", "30000"],
        "startup_timeout_sec = 1",
    ));
    let out = dir.run(&["check"]);
    let table = stdout(&out);
    let hang = row(&table, "hang");
    assert!(
        hang[4].starts_with("timed out after 1 s")
            && hang[4].contains("raise `startup_timeout_sec` in [mcp_servers.hang]"),
        "{hang:?}"
    );
    assert_eq!(out.status.code(), Some(1), "{table}");

    dir.config(&fixture("off", &[], "enabled = false"));
    let out = dir.run(&["check"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
}
