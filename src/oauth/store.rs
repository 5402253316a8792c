//! Where OAuth tokens live between runs: one 0600 JSON file under the user's data directory
//! (`$XDG_DATA_HOME/mcp-defer/oauth.json`, else `~/.local/share/mcp-defer/oauth.json`;
//! `~/Library/Application Support/mcp-defer/` on macOS, `%LOCALAPPDATA%\mcp-defer\` on
//! Windows, where the profile folder's ACL keeps it the user's: see `crate::platform`),
//! keyed by the server's URL, so two configs naming the same server share one login.
//!
//! No OS keyring: on Linux it needs a Secret Service daemon on a D-Bus session, which a
//! headless machine or a container (where agents run) does not have; the file is what
//! Codex falls back to as well. Every token read or written is registered with
//! [`crate::redact`], so it cannot reach a log line or an answer.

use std::collections::BTreeMap;
use std::io::Write;
use std::path::{Path, PathBuf};

use rmcp::transport::auth::{AuthError, CredentialStore, StoredCredentials};
use serde::{Deserialize, Serialize};

/// The file's name inside the data directory.
const FILE_NAME: &str = "oauth.json";

/// Why the token file could not be used. Never carries a token.
#[derive(Debug, thiserror::Error)]
pub(crate) enum StoreError {
    #[error("no place for the token file: set XDG_DATA_HOME or HOME (LOCALAPPDATA on Windows)")]
    NoDataDir,
    #[error("cannot read {path}: {source}")]
    Read {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("{path} is not a token file mcp-defer wrote ({message}); remove it and log in again")]
    Corrupt { path: PathBuf, message: String },
    #[error("cannot write {path}: {source}")]
    Write {
        path: PathBuf,
        source: std::io::Error,
    },
}

/// One server's login: what rmcp stores, plus what it needs to refresh that it does not
/// keep (a dynamically registered client's secret and redirect URI).
#[derive(Clone, Serialize, Deserialize)]
pub(crate) struct Login {
    pub credentials: StoredCredentials,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client_secret: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub redirect_uri: Option<String>,
}

impl std::fmt::Debug for Login {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Login")
            .field("credentials", &self.credentials)
            .field(
                "client_secret",
                &self.client_secret.as_ref().map(|_| "<redacted>"),
            )
            .finish()
    }
}

impl Login {
    /// Hands every secret of this login to the redactor.
    fn register_secrets(&self) {
        if let Some(tokens) = &self.credentials.token_response {
            use oauth2::TokenResponse;
            crate::redact::register_secret(tokens.access_token().secret());
            if let Some(refresh) = tokens.refresh_token() {
                crate::redact::register_secret(refresh.secret());
            }
        }
        if let Some(secret) = &self.client_secret {
            crate::redact::register_secret(secret);
        }
    }
}

/// The token file. Cheap to clone; every operation re-reads it, so a `login` in one
/// process is seen by a `serve` in another.
#[derive(Debug, Clone)]
pub(crate) struct TokenFile {
    path: PathBuf,
}

impl TokenFile {
    /// The file in the user's data directory (`crate::platform::dirs::data_dir`):
    /// `$XDG_DATA_HOME/mcp-defer/`, else `~/.local/share/mcp-defer/` on Linux.
    ///
    /// # Errors
    /// [`StoreError::NoDataDir`] when the OS gives no data directory (no home).
    pub(crate) fn default_location() -> Result<TokenFile, StoreError> {
        let data = crate::platform::dirs::data_dir().ok_or(StoreError::NoDataDir)?;
        Ok(TokenFile::at(data.join(FILE_NAME)))
    }

    pub(crate) fn at(path: PathBuf) -> TokenFile {
        TokenFile { path }
    }

    pub(crate) fn path(&self) -> &Path {
        &self.path
    }

    fn read_all(&self) -> Result<BTreeMap<String, Login>, StoreError> {
        let text = match std::fs::read_to_string(&self.path) {
            Ok(text) => text,
            Err(err) if err.kind() == std::io::ErrorKind::NotFound => return Ok(BTreeMap::new()),
            Err(source) => {
                return Err(StoreError::Read {
                    path: self.path.clone(),
                    source,
                });
            }
        };
        // The message of a serde error names a position, never the value.
        let logins: BTreeMap<String, Login> =
            serde_json::from_str(&text).map_err(|err| StoreError::Corrupt {
                path: self.path.clone(),
                message: format!("line {} column {}", err.line(), err.column()),
            })?;
        logins.values().for_each(Login::register_secrets);
        Ok(logins)
    }

    /// Writes to a 0600 temporary file beside the target, then renames it over: a reader
    /// never sees half a file, and the tokens are never readable by others, not even
    /// for a moment.
    fn write_all(&self, logins: &BTreeMap<String, Login>) -> Result<(), StoreError> {
        let failed = |source| StoreError::Write {
            path: self.path.clone(),
            source,
        };
        if let Some(dir) = self.path.parent() {
            crate::platform::create_private_dir(dir).map_err(failed)?;
        }
        if logins.is_empty() {
            return match std::fs::remove_file(&self.path) {
                Err(err) if err.kind() != std::io::ErrorKind::NotFound => Err(failed(err)),
                _ => Ok(()),
            };
        }
        let text = serde_json::to_vec_pretty(logins)
            .map_err(|err| failed(std::io::Error::other(err.to_string())))?;
        let temp = self
            .path
            .with_extension(format!("json.{}.tmp", std::process::id()));
        let write = || -> std::io::Result<()> {
            let mut options = std::fs::OpenOptions::new();
            options.write(true).create(true).truncate(true);
            crate::platform::private_file_options(&mut options);
            let mut file = options.open(&temp)?;
            // The mode given at open applies only to a file it creates; a leftover temp file
            // is fixed here.
            crate::platform::restrict_to_owner(&file)?;
            file.write_all(&text)?;
            file.sync_all()?;
            std::fs::rename(&temp, &self.path)
        };
        write().map_err(|err| {
            let _ = std::fs::remove_file(&temp);
            failed(err)
        })
    }

    /// The login stored for `url`, if any.
    ///
    /// # Errors
    /// The file cannot be read or is not one we wrote.
    pub(crate) fn load(&self, url: &str) -> Result<Option<Login>, StoreError> {
        Ok(self.read_all()?.remove(url))
    }

    /// Stores `login` for `url`, keeping every other server's.
    ///
    /// # Errors
    /// The file cannot be read or written.
    pub(crate) fn save(&self, url: &str, login: Login) -> Result<(), StoreError> {
        login.register_secrets();
        let mut all = self.read_all()?;
        all.insert(url.to_owned(), login);
        self.write_all(&all)
    }

    /// Removes the login for `url`; whether there was one.
    ///
    /// # Errors
    /// The file cannot be read or written.
    pub(crate) fn remove(&self, url: &str) -> Result<bool, StoreError> {
        let mut all = self.read_all()?;
        let had = all.remove(url).is_some();
        if had {
            self.write_all(&all)?;
        }
        Ok(had)
    }
}

/// rmcp's view of one server's entry in the token file: what the authorization manager
/// loads before a request and saves after a refresh. The extra fields of [`Login`] are
/// kept as they are.
pub(crate) struct ServerCredentials {
    pub file: TokenFile,
    pub url: String,
}

fn store_error(err: StoreError) -> AuthError {
    AuthError::CredentialStoreError(err.to_string())
}

#[async_trait::async_trait]
impl CredentialStore for ServerCredentials {
    async fn load(&self) -> Result<Option<StoredCredentials>, AuthError> {
        let login = self.file.load(&self.url).map_err(store_error)?;
        Ok(login.map(|l| l.credentials))
    }

    async fn save(&self, credentials: StoredCredentials) -> Result<(), AuthError> {
        let previous = self.file.load(&self.url).map_err(store_error)?;
        let login = match previous {
            // Another client's secret must not ride along with a new client's tokens.
            Some(previous) if previous.credentials.client_id == credentials.client_id => Login {
                credentials,
                ..previous
            },
            _ => Login {
                credentials,
                client_secret: None,
                redirect_uri: None,
            },
        };
        self.file.save(&self.url, login).map_err(store_error)
    }

    async fn clear(&self) -> Result<(), AuthError> {
        self.file.remove(&self.url).map_err(store_error).map(|_| ())
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    fn login(client_id: &str) -> Login {
        Login {
            credentials: StoredCredentials::new(client_id.to_owned(), None, vec![], None),
            client_secret: Some("s3cret-client".to_owned()),
            redirect_uri: None,
        }
    }

    #[test]
    fn saved_file_is_owner_only_and_keyed_by_url() {
        let dir = tempfile::tempdir().unwrap();
        let file = TokenFile::at(dir.path().join("sub").join(FILE_NAME));
        file.save("https://a.example/mcp", login("a")).unwrap();
        file.save("https://b.example/mcp", login("b")).unwrap();
        if cfg!(unix) {
            assert_eq!(crate::platform::mode_of(file.path()), Some(0o600));
            assert_eq!(
                crate::platform::mode_of(dir.path().join("sub").as_path()),
                Some(0o700)
            );
        }
        let a = file.load("https://a.example/mcp").unwrap().unwrap();
        assert_eq!(a.credentials.client_id, "a");
        assert!(file.load("https://c.example/mcp").unwrap().is_none());
        assert!(format!("{a:?}").contains("<redacted>"));
        assert!(!format!("{a:?}").contains("s3cret-client"));
    }

    #[test]
    fn removing_the_last_login_removes_the_file() {
        let dir = tempfile::tempdir().unwrap();
        let file = TokenFile::at(dir.path().join(FILE_NAME));
        file.save("https://a.example/mcp", login("a")).unwrap();
        assert!(file.remove("https://a.example/mcp").unwrap());
        assert!(!file.path().exists());
        assert!(!file.remove("https://a.example/mcp").unwrap());
    }

    #[test]
    fn a_foreign_file_is_an_error_naming_the_position_only() {
        let dir = tempfile::tempdir().unwrap();
        let file = TokenFile::at(dir.path().join(FILE_NAME));
        std::fs::write(file.path(), "{\"x\": \"tok-abc\"").unwrap();
        let err = file.load("x").unwrap_err().to_string();
        assert!(err.contains("line 1"), "{err}");
        assert!(!err.contains("tok-abc"), "{err}");
    }
}
