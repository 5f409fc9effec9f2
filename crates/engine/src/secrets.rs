//! Where the refresh token lives: the OS keyring (Secret Service, Keychain, Credential
//! Manager), or — only when no keyring is reachable — a file readable by the user alone, and
//! then the app says so (status, tray, settings). Never silently, never printed.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use secrecy::{ExposeSecret, SecretString};

const SERVICE: &str = "cmux-tray";

/// A kept sign-in: the refresh token and the cloud it came from. It is only ever sent back to
/// that cloud: a config file that names other origins (which any program of the person's may
/// write) gets no token, and the person signs in again (docs/configuration.md).
#[derive(Clone)]
pub struct KeptSignIn {
    pub refresh: SecretString,
    /// The origins it was given by; `None` for one kept before origins were kept with it.
    pub origins: Option<Origins>,
}

/// The two origins a sign-in speaks to (`scheme://host[:port]`).
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Origins {
    pub auth: String,
    pub api: String,
}

impl Origins {
    pub fn of(auth: &url::Url, api: &url::Url) -> Origins {
        Origins { auth: auth.origin().ascii_serialization(), api: api.origin().ascii_serialization() }
    }

    /// The real cmux cloud's, the only ones a sign-in kept without its origins may go to.
    pub fn built_in() -> Origins {
        let url = |u: &str| url::Url::parse(u).expect("a built-in origin");
        Origins::of(&url(crate::config::DEFAULT_AUTH_URL), &url(crate::config::DEFAULT_API_URL))
    }
}

impl KeptSignIn {
    /// Whether this sign-in may be sent to the cloud at `now`.
    pub fn belongs_to(&self, now: &Origins) -> bool {
        self.origins.as_ref().unwrap_or(&Origins::built_in()) == now
    }

    /// The keyring's or the file's value: JSON with the origins (a bare token was kept before).
    fn to_value(&self) -> String {
        serde_json::json!({ "refresh_token": self.refresh.expose_secret(), "origins": self.origins }).to_string()
    }

    fn from_value(value: String) -> KeptSignIn {
        #[derive(serde::Deserialize)]
        struct Kept {
            refresh_token: String,
            origins: Option<Origins>,
        }
        match serde_json::from_str::<Kept>(&value) {
            Ok(kept) => KeptSignIn { refresh: kept.refresh_token.into(), origins: kept.origins },
            Err(_) => KeptSignIn { refresh: value.into(), origins: None },
        }
    }
}

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

    pub fn save(&self, account: &str, kept: &KeptSignIn) -> Result<(), SecretError> {
        let value = kept.to_value();
        match self {
            SecretStore::Keyring => {
                keyring::Entry::new(SERVICE, account).and_then(|e| e.set_password(&value)).map_err(|e| SecretError::Keyring(e.to_string()))
            }
            SecretStore::File { path, .. } => {
                let mut all = read_file(path)?;
                all.insert(account.into(), value);
                write_file(path, &all)
            }
        }
    }

    pub fn load(&self, account: &str) -> Result<Option<KeptSignIn>, SecretError> {
        let value = match self {
            SecretStore::Keyring => match keyring::Entry::new(SERVICE, account).and_then(|e| e.get_password()) {
                Ok(s) => Some(s),
                Err(keyring::Error::NoEntry) => None,
                Err(e) => return Err(SecretError::Keyring(e.to_string())),
            },
            SecretStore::File { path, .. } => read_file(path)?.remove(account),
        };
        Ok(value.map(KeptSignIn::from_value))
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
        let kept = |token: &str| KeptSignIn { refresh: SecretString::from(token), origins: Some(Origins::built_in()) };
        store.save("u1", &kept("rt_1")).unwrap();
        store.save("u2", &kept("rt_2")).unwrap();
        assert_eq!(store.load("u1").unwrap().unwrap().refresh.expose_secret(), "rt_1");
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

    /// A sign-in is sent only to the cloud that gave it; one kept bare (before origins were
    /// kept) only to the real cmux cloud.
    #[test]
    fn a_kept_sign_in_belongs_to_the_origins_it_came_from() {
        let url = |u: &str| url::Url::parse(u).unwrap();
        let sim = Origins::of(&url("http://127.0.0.1:4000/auth"), &url("http://127.0.0.1:4000/api"));
        let elsewhere = Origins::of(&url("https://elsewhere.example"), &url("http://127.0.0.1:4000/api"));
        let kept = KeptSignIn { refresh: "rt".to_string().into(), origins: Some(sim.clone()) };
        assert!(kept.belongs_to(&sim));
        assert!(!kept.belongs_to(&elsewhere));
        let read = KeptSignIn::from_value(kept.to_value());
        assert_eq!((read.refresh.expose_secret(), read.origins), ("rt", Some(sim.clone())));
        let bare = KeptSignIn::from_value("rt_old".into());
        assert_eq!(bare.refresh.expose_secret(), "rt_old");
        assert!(bare.belongs_to(&Origins::built_in()) && !bare.belongs_to(&sim));
    }
}
