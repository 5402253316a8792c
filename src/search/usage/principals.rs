//! Whose use teaches whose search (`[settings.search] learn`): by default each principal
//! learns from its own choices only, so over `serve --http` one token's searches neither
//! reorder another token's results nor sit in a file that another token's use is read
//! from. `learn = "shared"` pools everyone's use in one file, by the operator's choice.
//!
//! The local user (stdio, the CLI, HTTP without tokens) keeps `<data dir>/usage.jsonl`;
//! a token's holder `<data dir>/usage/<id>.jsonl`, where the id is a hash of the token
//! ([`Principal::of_token`]): the token itself is never written anywhere.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use sha2::{Digest, Sha256};

use super::Usage;
use super::store::{FILE_NAME, data_dir};
use crate::sync::lock;

/// The folder of the token holders' files, beside the local user's file.
pub const PRINCIPALS_DIR: &str = "usage";
/// Hex characters of a principal's id: 64 bits, which no two tokens of one config share.
const ID_HEX: usize = 16;
/// Mixed into the hash so the id is no plain SHA-256 of the token, which a lookup table
/// of common tokens could reverse.
const ID_CONTEXT: &[u8] = b"mcp-defer usage principal v1\0";

/// `[settings.search] learn`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Learn {
    /// `false`: nothing is read or written.
    Off,
    /// Every principal's use in one store (`usage.jsonl`).
    Shared,
    /// The default (and `true`): each principal learns from its own use only.
    #[default]
    Principal,
}

impl Learn {
    /// The spellings `learn` takes besides `true` and `false`.
    pub const NAMES: [&'static str; 2] = ["principal", "shared"];

    /// What `learn = <name>` means (`None`: not a mode).
    pub fn from_name(name: &str) -> Option<Learn> {
        match name {
            "principal" => Some(Learn::Principal),
            "shared" => Some(Learn::Shared),
            _ => None,
        }
    }

    pub fn is_on(self) -> bool {
        self != Learn::Off
    }
}

/// Who a choice belongs to.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Default)]
pub enum Principal {
    /// The user running mcp-defer: stdio, the CLI, `serve --http` without tokens.
    #[default]
    Local,
    /// The holder of an HTTP token, by the token's id.
    Token(String),
}

impl Principal {
    /// The holder of `token`: named by the first [`ID_HEX`] hex characters of a SHA-256
    /// over a fixed context and the token, the same in every run.
    pub fn of_token(token: &[u8]) -> Principal {
        let digest = Sha256::new()
            .chain_update(ID_CONTEXT)
            .chain_update(token)
            .finalize();
        let id = digest
            .iter()
            .take(ID_HEX / 2)
            .map(|b| format!("{b:02x}"))
            .collect();
        Principal::Token(id)
    }
}

/// The stores of one process, opened as their principals first choose or search.
#[derive(Debug)]
pub struct Stores {
    learn: Learn,
    /// Where the files are; `None`: learning in memory only.
    dir: Option<PathBuf>,
    open: Mutex<HashMap<Principal, Arc<Usage>>>,
}

impl Stores {
    /// The stores `learn` asks for, in the data directory (`store::data_dir`).
    pub fn new(learn: Learn) -> Stores {
        let dir = data_dir();
        if learn.is_on() && dir.is_none() {
            tracing::warn!(
                "no data directory (set {}); what search learns from use is not kept",
                super::DATA_DIR_ENV
            );
        }
        Stores::in_dir(learn, dir)
    }

    /// The stores `learn` asks for, their files in `dir` (`None`: in memory only).
    pub fn in_dir(learn: Learn, dir: Option<PathBuf>) -> Stores {
        Stores {
            learn,
            dir,
            open: Mutex::new(HashMap::new()),
        }
    }

    /// What `principal` learns from and teaches: its own store, the shared one, or none
    /// with `learn = false`.
    pub fn for_principal(&self, principal: &Principal) -> Option<Arc<Usage>> {
        let key = match self.learn {
            Learn::Off => return None,
            Learn::Shared => Principal::Local,
            Learn::Principal => principal.clone(),
        };
        let mut open = lock(&self.open);
        let usage = open.entry(key.clone()).or_insert_with(|| {
            Arc::new(match self.path(&key) {
                Some(path) => Usage::open(path),
                None => Usage::in_memory(),
            })
        });
        Some(usage.clone())
    }

    /// The file `principal`'s use is kept in, if any.
    fn path(&self, principal: &Principal) -> Option<PathBuf> {
        let dir = self.dir.as_ref()?;
        Some(match principal {
            Principal::Local => dir.join(FILE_NAME),
            Principal::Token(id) => dir.join(PRINCIPALS_DIR).join(format!("{id}.jsonl")),
        })
    }
}

#[cfg(test)]
mod tests {
    // A test fails loudly on broken setup; the crate-wide denial is for the library.
    #![allow(clippy::unwrap_used)]

    use super::*;

    #[test]
    fn a_token_is_named_by_a_stable_hash_that_does_not_contain_it() {
        let token = b"team-token-aaaaaaaa";
        let Principal::Token(id) = Principal::of_token(token) else {
            panic!("a token's holder is a token principal");
        };
        assert_eq!(id.len(), ID_HEX);
        assert!(id.chars().all(|c| c.is_ascii_hexdigit()), "{id}");
        assert!(!id.contains("team"), "{id}");
        assert_eq!(Principal::of_token(token), Principal::Token(id));
        assert_ne!(Principal::of_token(token), Principal::of_token(b"other"));
    }

    #[test]
    fn principals_get_their_own_store_unless_shared_and_none_when_off() {
        let dir = PathBuf::from("/data");
        let a = Principal::of_token(b"a");
        let b = Principal::of_token(b"b");
        let own = Stores::in_dir(Learn::Principal, None);
        let (ua, ub) = (own.for_principal(&a), own.for_principal(&b));
        assert!(!Arc::ptr_eq(ua.as_ref().unwrap(), ub.as_ref().unwrap()));
        assert!(Arc::ptr_eq(
            ua.as_ref().unwrap(),
            own.for_principal(&a).as_ref().unwrap()
        ));
        let shared = Stores::in_dir(Learn::Shared, None);
        assert!(Arc::ptr_eq(
            &shared.for_principal(&a).unwrap(),
            &shared.for_principal(&Principal::Local).unwrap()
        ));
        assert!(Stores::in_dir(Learn::Off, None).for_principal(&a).is_none());
        let paths = Stores::in_dir(Learn::Principal, Some(dir.clone()));
        assert_eq!(paths.path(&Principal::Local), Some(dir.join("usage.jsonl")));
        let Principal::Token(id) = &a else {
            unreachable!()
        };
        assert_eq!(
            paths.path(&a),
            Some(dir.join("usage").join(format!("{id}.jsonl")))
        );
    }
}
