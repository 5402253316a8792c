//! What the search tests run against: the reference set's five servers (everything,
//! filesystem, memory, time, git: 50 real tools) served by the fixture, and the transformer
//! tier's model that `.ci/install-peers` unpacks.

use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::support::{Dir, fixture, missing_peer};

/// The reference set's servers as fixture servers, with `search` as `[settings.search]`
/// lines, plus `extra` TOML; the config's path.
pub fn reference_servers(dir: &Dir, search: &str, extra: &str) -> PathBuf {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("benches/data/reference/servers.json");
    let servers: Vec<Value> =
        serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    let mut toml = format!("[settings.search]\n{search}\n");
    for server in &servers {
        let name = server["server"].as_str().unwrap();
        let tools = dir.file(&format!("{name}.json"));
        std::fs::write(&tools, server["tools"].to_string()).unwrap();
        toml.push_str(&fixture(
            name,
            &["--tools", tools.to_str().unwrap(), "--name", name],
            "",
        ));
    }
    toml.push_str(extra);
    dir.config(&toml)
}

/// The model `.ci/install-peers` unpacks; its absence fails the test unless skipping is
/// allowed ([`missing_peer`]), then `None`.
pub fn model() -> Option<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join(".models/all-MiniLM-L6-v2");
    if dir.join("model.safetensors").is_file() {
        return Some(dir);
    }
    missing_peer(
        &format!("the model is missing: {}", dir.display()),
        "run .ci/install-peers",
    );
    None
}
