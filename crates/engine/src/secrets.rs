//! Where the refresh token lives: the OS keyring (Secret Service, Keychain, Credential
//! Manager), or — only when no keyring is reachable — a file readable by the user alone, and
//! then the app says so (status, tray, settings). Never silently, never printed.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use secrecy::{ExposeSecret, SecretString};

const SERVICE: &str = "cmux-tray";

#[derive(Debug, thiserror::Error)]
pub enum SecretError {
    #[error("the keyring refused: {0}")]
    Keyring(String),
    #[error("{path}: {source}")]
    File { path: PathBuf, source: std::io::Error },
    #[error("{path}: not a secrets file this app wrote ({detail}); left untouched")]
    Unreadable { path: PathBuf, detail: String },
}

/// The tray's line when no keyring is reachable (docs/configuration.md).
pub const FILE_NOTE: &str = "Sign-in kept in a private file: no keyring found";

/// Which store holds the secrets.
#[derive(Clone, Debug)]
pub enum SecretStore {
    Keyring,
    /// The fallback, with why the keyring was not used.
    File {
        path: PathBuf,
        why: String,
    },
}

impl SecretStore {
    /// The file fallback in `data_dir`, and why the keyring is not used.
    pub fn file(data_dir: &Path, why: String) -> SecretStore {
        let path = data_dir.join("secrets.json");
        tracing::warn!("no keyring is reachable ({why}): the refresh token is kept in {}, readable by you alone", path.display());
        SecretStore::File { path, why }
    }

    /// Whether the file fallback holds a sign-in for `account` (it was the store last time).
    pub fn file_holds(data_dir: &Path, account: &str) -> bool {
        read_file(&data_dir.join("secrets.json")).is_ok_and(|all| all.contains_key(account))
    }

    /// What to tell the person about where their sign-in is kept, with why (settings, `status`).
    pub fn describe(&self) -> String {
        match self {
            SecretStore::Keyring => "the system keyring".into(),
            SecretStore::File { path, why } => {
                format!("{} (readable by you alone; no keyring was reachable: {why})", path.display())
            }
        }
    }

    /// A line for the tray when the sign-in is not in the keyring: a person's words, one short
    /// line; the library's reason is in the log and in settings (`describe`).
    pub fn fallback_note(&self) -> Option<String> {
        match self {
            SecretStore::Keyring => None,
            SecretStore::File { .. } => Some(FILE_NOTE.into()),
        }
    }

    pub fn save(&self, account: &str, secret: &SecretString) -> Result<(), SecretError> {
        match self {
            SecretStore::Keyring => keyring::Entry::new(SERVICE, account)
                .and_then(|e| e.set_password(secret.expose_secret()))
                .map_err(|e| SecretError::Keyring(e.to_string())),
            SecretStore::File { path, .. } => {
                let mut all = read_file(path)?;
                all.insert(account.into(), secret.expose_secret().to_string());
                write_file(path, &all)
            }
        }
    }

    pub fn load(&self, account: &str) -> Result<Option<SecretString>, SecretError> {
        match self {
            SecretStore::Keyring => match keyring::Entry::new(SERVICE, account).and_then(|e| e.get_password()) {
                Ok(s) => Ok(Some(s.into())),
                Err(keyring::Error::NoEntry) => Ok(None),
                Err(e) => Err(SecretError::Keyring(e.to_string())),
            },
            SecretStore::File { path, .. } => Ok(read_file(path)?.remove(account).map(Into::into)),
        }
    }

    pub fn delete(&self, account: &str) -> Result<(), SecretError> {
        match self {
            SecretStore::Keyring => match keyring::Entry::new(SERVICE, account).and_then(|e| e.delete_credential()) {
                Ok(()) | Err(keyring::Error::NoEntry) => Ok(()),
                Err(e) => Err(SecretError::Keyring(e.to_string())),
            },
            SecretStore::File { path, .. } => {
                let mut all = read_file(path)?;
                if all.remove(account).is_some() {
                    write_file(path, &all)?;
                }
                Ok(())
            }
        }
    }
}

/// Whether the keyring answers: a probe entry is written and removed. Blocking (D-Bus).
pub fn probe_keyring() -> Result<(), String> {
    let entry = keyring::Entry::new(SERVICE, "cmux-tray probe").map_err(|e| e.to_string())?;
    entry.set_password("probe").map_err(|e| e.to_string())?;
    entry.delete_credential().map_err(|e| e.to_string())
}

fn read_file(path: &Path) -> Result<BTreeMap<String, String>, SecretError> {
    match std::fs::read_to_string(path) {
        Ok(text) => serde_json::from_str(&text).map_err(|e| SecretError::Unreadable { path: path.into(), detail: e.to_string() }),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(BTreeMap::new()),
        Err(source) => Err(SecretError::File { path: path.into(), source }),
    }
}

fn write_file(path: &Path, all: &BTreeMap<String, String>) -> Result<(), SecretError> {
    let text = serde_json::to_string(all).unwrap_or_default();
    crate::private::write_file(path, &text).map_err(|source| SecretError::File { path: path.into(), source })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_file_fallback_is_the_users_alone_and_forgets_on_delete() {
        let dir = tempfile::tempdir().unwrap();
        let store = SecretStore::File { path: dir.path().join("secrets.json"), why: "test".into() };
        store.save("u1", &SecretString::from("rt_1")).unwrap();
        store.save("u2", &SecretString::from("rt_2")).unwrap();
        assert_eq!(store.load("u1").unwrap().unwrap().expose_secret(), "rt_1");
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = std::fs::metadata(dir.path().join("secrets.json")).unwrap().permissions().mode();
            assert_eq!(mode & 0o777, 0o600);
        }
        store.delete("u1").unwrap();
        assert!(store.load("u1").unwrap().is_none());
        assert!(store.load("u2").unwrap().is_some());
        assert!(store.describe().contains("readable by you alone"));
        std::fs::write(dir.path().join("secrets.json"), "garbage").unwrap();
        assert!(matches!(store.load("u2"), Err(SecretError::Unreadable { .. })));
    }
}
