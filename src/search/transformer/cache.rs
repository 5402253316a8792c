//! Tool vectors on disk, so a restart embeds nothing it embedded before.
//!
//! One append-only file per model, `<cache dir>/vectors/<model id>.bin`: records of a
//! 16-byte key (sha256 of the text, cut) and the vector as little-endian f32. The model id
//! is a hash of the weights and tokenizer ([`super::Encoder::id`]), so a record is keyed by
//! (text, model) and another model never reads it. A torn last record (a crash mid-write)
//! is ignored on load. Each record goes out in one `write` on an `O_APPEND` file, so two
//! processes sharing the directory interleave whole records.

use std::collections::HashMap;
use std::fs::{self, File, OpenOptions};
use std::io::{self, Write};
use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};

/// Environment variable naming the cache directory (tool vectors go in its `vectors/`).
pub const CACHE_DIR_ENV: &str = "MCP_DEFER_CACHE_DIR";

/// A text's cache key.
pub(super) type Key = [u8; 16];

pub(super) fn key(text: &str) -> Key {
    let digest = Sha256::digest(text.as_bytes());
    let mut key = [0u8; 16];
    key.copy_from_slice(&digest[..16]);
    key
}

/// `$MCP_DEFER_CACHE_DIR`, else `$XDG_CACHE_HOME/mcp-defer`, else `~/.cache/mcp-defer`;
/// `None` when none can be found (then nothing is cached).
pub(super) fn cache_root() -> Option<PathBuf> {
    let var = |name| {
        std::env::var_os(name)
            .filter(|v| !v.is_empty())
            .map(PathBuf::from)
    };
    var(CACHE_DIR_ENV).or_else(crate::platform::dirs::cache_dir)
}

/// The vectors of one model read from disk, and the file new ones are appended to.
#[derive(Debug)]
pub(super) struct VectorCache {
    dims: usize,
    known: HashMap<Key, Vec<f32>>,
    file: Option<File>,
    path: PathBuf,
}

impl VectorCache {
    /// Opens (creating) `<root>/vectors/<model>.bin`. An unreadable or unwritable cache is
    /// logged and the cache runs in memory only: vectors are then recomputed next start.
    pub(super) fn open(root: Option<&Path>, model: &str, dims: usize) -> VectorCache {
        let path = root.map_or_else(PathBuf::new, |r| {
            r.join("vectors").join(format!("{model}.bin"))
        });
        let mut cache = VectorCache {
            dims,
            known: HashMap::new(),
            file: None,
            path,
        };
        if root.is_none() {
            tracing::warn!("no cache directory (set {CACHE_DIR_ENV}); tool vectors are not kept");
            return cache;
        }
        if let Err(error) = cache.load() {
            tracing::warn!(path = %cache.path.display(), %error, "vector cache unusable; tool vectors are not kept");
        }
        cache
    }

    fn load(&mut self) -> io::Result<()> {
        if let Some(dir) = self.path.parent() {
            fs::create_dir_all(dir)?;
        }
        let record = 16 + 4 * self.dims;
        match fs::read(&self.path) {
            Ok(bytes) => {
                let whole = bytes.len() - bytes.len() % record;
                if whole < bytes.len() {
                    // A torn last record: cut it, or every append after it would be misread.
                    OpenOptions::new()
                        .write(true)
                        .open(&self.path)?
                        .set_len(whole as u64)?;
                }
                for chunk in bytes.chunks_exact(record) {
                    let mut key = [0u8; 16];
                    key.copy_from_slice(&chunk[..16]);
                    let vector = chunk[16..]
                        .chunks_exact(4)
                        .map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]]))
                        .collect();
                    self.known.insert(key, vector);
                }
            }
            Err(e) if e.kind() == io::ErrorKind::NotFound => {}
            Err(e) => return Err(e),
        }
        self.file = Some(
            OpenOptions::new()
                .create(true)
                .append(true)
                .open(&self.path)?,
        );
        Ok(())
    }

    pub(super) fn get(&self, key: &Key) -> Option<&[f32]> {
        self.known.get(key).map(Vec::as_slice)
    }

    #[cfg(test)]
    pub(super) fn len(&self) -> usize {
        self.known.len()
    }

    /// Keeps `vector` under `key`, in memory and (when the file is open) on disk.
    pub(super) fn put(&mut self, key: Key, vector: &[f32]) {
        if vector.len() != self.dims || self.known.contains_key(&key) {
            return;
        }
        if let Some(file) = &mut self.file {
            let mut record = Vec::with_capacity(16 + 4 * self.dims);
            record.extend_from_slice(&key);
            for x in vector {
                record.extend_from_slice(&x.to_le_bytes());
            }
            if let Err(error) = file.write_all(&record) {
                tracing::warn!(path = %self.path.display(), %error, "vector cache write failed; no longer writing it");
                self.file = None;
            }
        }
        self.known.insert(key, vector.to_vec());
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    #[test]
    fn vectors_survive_a_reopen_and_a_torn_record_is_ignored() {
        let dir = tempfile::tempdir().unwrap();
        let mut cache = VectorCache::open(Some(dir.path()), "m1", 3);
        cache.put(key("a"), &[1.0, 2.0, 3.0]);
        cache.put(key("b"), &[4.0, 5.0, 6.0]);
        drop(cache);
        let path = dir.path().join("vectors").join("m1.bin");
        let mut file = OpenOptions::new().append(true).open(&path).unwrap();
        file.write_all(&[7u8; 20]).unwrap();
        let mut cache = VectorCache::open(Some(dir.path()), "m1", 3);
        assert_eq!(cache.get(&key("a")), Some(&[1.0, 2.0, 3.0][..]));
        assert_eq!(cache.get(&key("b")), Some(&[4.0, 5.0, 6.0][..]));
        assert_eq!(cache.len(), 2);
        cache.put(key("c"), &[7.0, 8.0, 9.0]);
        drop(cache);
        let cache = VectorCache::open(Some(dir.path()), "m1", 3);
        assert_eq!(cache.get(&key("c")), Some(&[7.0, 8.0, 9.0][..]));
        assert_eq!(cache.len(), 3);
        // Another model id is another file.
        assert_eq!(VectorCache::open(Some(dir.path()), "m2", 3).len(), 0);
    }
}
