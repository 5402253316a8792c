//! Trust what you load: the tool definitions the user approved, pinned in a lock file
//! beside the config, and what becomes of a tool that differs from them (issue 30; the
//! threat model and the default in docs/design.md).
//!
//! - `definition.rs`: what of a tool is pinned, canonical, and its SHA-256;
//! - `lock.rs`: the lock file (`servers.lock`), one line a tool, private to the user;
//! - `rules.rs`: the suspicious-content rules (hidden characters, text addressed to the
//!   model, other tools, secrets, parameter smuggling, new URLs, flipped hints, and the
//!   learned one);
//! - `learned.rs`: the learned rule, a logistic regression over hashed words of the
//!   texts the rules read, its weights embedded from `learned.weights`;
//! - `suspicious.rs`: both kinds of rule at once, what a decision asks;
//! - `decision.rs`: pinned, recorded on first sight, held (`trust = "pin"`) or marked
//!   (`"warn"`), for one tool;
//! - `screen.rs`: [`Trust`], the running process's lock and what it holds now;
//! - `diff.rs`: what changed, as `mcp-defer trust` shows it.
//!
//! `ingest` is the one caller on the way in (a held tool never reaches the catalog or the
//! search index); `server` asks it why a name is held and refuses the call. Imports
//! `config` and the leaves only; never `catalog`, `search`, `downstream` or `server`.

mod decision;
mod definition;
mod diff;
pub mod learned;
mod lock;
pub mod rules;
mod screen;
pub mod suspicious;

pub use decision::{Change, Finding, Verdict, decide};
pub use definition::{Definition, Hash, Overridden};
pub use diff::{describe, word_diff};
pub use lock::{Lock, LockError, Locked, held_path, lock_path};
pub use rules::{Hit, Rule};
pub use screen::{Held, Screened, Trust, overridden};
