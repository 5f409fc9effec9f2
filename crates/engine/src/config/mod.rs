//! Settings: the TOML config file, then the environment (the environment wins, value by value).
//!
//! The keys `setting_keys` declares for this reader (`[cloud]`, `[local]`, `[updates]`,
//! `[general]`); `CMUX_TRAY_API_URL`, `CMUX_TRAY_AUTH_URL`, `CMUX_TRAY_TEAM`, `CMUX_TRAY_HTTP`, the proxy
//! variables (`HTTPS_PROXY`, `ALL_PROXY`, `NO_PROXY` …, read as curl reads them, under
//! `[cloud] proxy`), and `CMUX_TRAY_TOKEN` (an access token given directly: held in memory, never
//! written anywhere). An unknown key is a warning, never a failure; a bad value names the key, the file
//! and what is allowed. Directories follow the platform's conventions (XDG on Linux), so a test
//! can sandbox everything by setting `XDG_*` variables.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use secrecy::SecretString;

use crate::cloud::TeamId;
use crate::cloud::client::{Network, Transport};
use crate::cloud::proxy::{ProxyEnv, ProxySetting};
use crate::setting_keys::{self, Key, Reader, SETTINGS};

mod edit;
pub use edit::{HIDDEN, get_in_file, set_in_file};
mod table;
pub use table::docs_table;

pub use cmux_tray_channel::APP;
/// The app's identifier (`identifier` in src-tauri/tauri.conf.json): on Windows the toasts'
/// AppUserModelID, which the installer's Start-menu shortcut carries too.
pub const APP_ID: &str = "dev.cmux.tray";
pub use crate::setting_keys::{DEFAULT_API_URL, DEFAULT_AUTH_URL};

#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    #[error("{path}: cannot read: {source}")]
    Read { path: PathBuf, source: std::io::Error },
    #[error("{path}: not valid TOML: {message}")]
    Syntax { path: PathBuf, message: String },
    #[error("{where_}: {key} = {value}: {allowed}")]
    Value { where_: String, key: String, value: String, allowed: String },
    #[error("no home, data or config directory could be found for {APP}: set HOME or the XDG_* variables")]
    NoDirectories,
}

/// The user's data directory (`$XDG_DATA_HOME` on Linux), where desktop entries live too.
pub fn data_home() -> Option<PathBuf> {
    dirs::data_dir()
}

/// Where things live on this machine.
#[derive(Clone, Debug)]
pub struct Paths {
    pub config_file: PathBuf,
    pub data_dir: PathBuf,
    pub runtime_dir: PathBuf,
    /// `[local] socket_path`, when the person moved the socket.
    pub socket_path: Option<PathBuf>,
}

impl Paths {
    /// The platform's directories for this app (XDG on Linux).
    pub fn from_env() -> Result<Paths, ConfigError> {
        let config = dirs::config_dir().ok_or(ConfigError::NoDirectories)?;
        let data = dirs::data_dir().ok_or(ConfigError::NoDirectories)?;
        let config_file = config.join(APP).join("config.toml");
        // A bad file is reported where the engine starts (Settings::load); here it only means
        // the socket stays where it is by default.
        let socket_path = Settings::from_file(&config_file).ok().and_then(|s| s.socket_path);
        Ok(Paths {
            config_file,
            data_dir: data.join(APP),
            runtime_dir: cmux_tray_channel::place::runtime_dir().ok_or(ConfigError::NoDirectories)?,
            socket_path,
        })
    }

    pub fn database(&self) -> PathBuf {
        self.data_dir.join("state.sqlite3")
    }

    /// Held by the running daemon: one engine per user and data directory.
    pub fn lock_file(&self) -> PathBuf {
        self.data_dir.join("engine.lock")
    }

    /// Where the app writes its log (one file a day, a week kept): `$XDG_STATE_HOME` on Linux.
    pub fn log_dir(&self) -> PathBuf {
        cmux_tray_channel::place::log_dir(&self.data_dir)
    }

    // `Paths::socket` is the local socket's (local/endpoint), which knows each platform's place.
}

/// The settings the engine starts with.
#[derive(Clone, Debug)]
pub struct Settings {
    pub api_url: String,
    pub auth_url: String,
    pub team: Option<TeamId>,
    /// `[cloud] http` (`"2"`, the default, or `"1.1"`), or `CMUX_TRAY_HTTP`.
    pub transport: Transport,
    /// `[cloud] proxy`: a proxy URL, or `none`; not set, the environment's variables decide.
    pub proxy: ProxySetting,
    /// The environment's proxy variables.
    pub proxy_env: ProxyEnv,
    /// From `CMUX_TRAY_TOKEN` only.
    pub token: Option<SecretString>,
    /// The local socket's password mode: `[local] password`, or `CMUX_SOCKET_PASSWORD`.
    pub socket_password: Option<SecretString>,
    /// `[local] socket_path`: where the local socket lives instead of the default.
    pub socket_path: Option<PathBuf>,
    /// `CMUX_TRAY_DESKTOP_RETRY_MS`: how often untold notices are tried again while no
    /// notification server answers, when not the engine's 15 s (the test rig's, so that its
    /// tests do not sleep the 15 s out).
    pub desktop_retry: Option<std::time::Duration>,
    /// `CMUX_TRAY_KEYRING_PROBE_MS`: how long the keyring may take to answer at start before
    /// the start says it is still asking, when not the host's 5 s (the test rig's, as above).
    pub keyring_probe: Option<std::time::Duration>,
    /// `[updates] feed`: the release feed asked for a newer version; none: no check.
    pub update_feed: Option<String>,
    /// `[general] language`: the language words are said in; none: the system's.
    pub language: Option<crate::lang::Language>,
    /// Unknown keys and other things worth a warning.
    pub warnings: Vec<String>,
}

impl Settings {
    /// How the engine reaches the cloud.
    pub fn network(&self) -> Network {
        Network { transport: self.transport, proxy: self.proxy.clone(), proxy_env: self.proxy_env.clone() }
    }

    /// Reads the config file (absent is fine) and then the environment.
    pub fn load(config_file: &Path, env: &BTreeMap<String, String>) -> Result<Settings, ConfigError> {
        let mut s = Settings::from_file(config_file)?;
        let var = |k: &str| env.get(k).map(|v| v.trim()).filter(|v| !v.is_empty()).map(String::from);
        if let Some(v) = var("CMUX_TRAY_API_URL") {
            s.api_url = v;
        }
        if let Some(v) = var("CMUX_TRAY_AUTH_URL") {
            s.auth_url = v;
        }
        if let Some(v) = var("CMUX_TRAY_TEAM") {
            s.team = Some(team("CMUX_TRAY_TEAM", "environment", &v)?);
        }
        if let Some(v) = var("CMUX_TRAY_HTTP") {
            s.transport = transport("CMUX_TRAY_HTTP", "environment", &v)?;
        }
        if let Some(v) = var("CMUX_TRAY_DESKTOP_RETRY_MS") {
            s.desktop_retry = Some(test_millis("CMUX_TRAY_DESKTOP_RETRY_MS", &v)?);
        }
        if let Some(v) = var("CMUX_TRAY_KEYRING_PROBE_MS") {
            s.keyring_probe = Some(test_millis("CMUX_TRAY_KEYRING_PROBE_MS", &v)?);
        }
        s.proxy_env = ProxyEnv::from_env(env);
        s.warnings.extend(s.proxy_env.problems());
        s.token = var("CMUX_TRAY_TOKEN").map(SecretString::from);
        if let Some(p) = var("CMUX_SOCKET_PASSWORD") {
            s.socket_password = Some(SecretString::from(p));
        }
        s.check_urls("settings")?;
        Ok(s)
    }

    /// The config file alone (absent is fine), without the environment.
    pub fn from_file(config_file: &Path) -> Result<Settings, ConfigError> {
        match std::fs::read_to_string(config_file) {
            Ok(text) => Settings::from_text(config_file, &text),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(Settings::default()),
            Err(source) => Err(ConfigError::Read { path: config_file.into(), source }),
        }
    }

    /// The settings a config file with this text would give (`path` names it in errors).
    pub fn from_text(path: &Path, text: &str) -> Result<Settings, ConfigError> {
        let mut s = Settings::default();
        s.apply_file(path, text)?;
        s.check_urls(&path.display().to_string())?;
        Ok(s)
    }

    fn check_urls(&self, where_: &str) -> Result<(), ConfigError> {
        let feed = self.update_feed.iter().map(|url| (Key::UpdateFeed, url));
        for (key, url) in [(Key::ApiUrl, &self.api_url), (Key::AuthUrl, &self.auth_url)].into_iter().chain(feed) {
            crate::cloud::client::checked_origin("URL", url).map_err(|e| ConfigError::Value {
                where_: where_.into(),
                key: key.to_string(),
                value: format!("{url:?}"),
                allowed: e.to_string(),
            })?;
        }
        Ok(())
    }

    fn apply_file(&mut self, path: &Path, text: &str) -> Result<(), ConfigError> {
        let table: toml::Table =
            text.parse().map_err(|e: toml::de::Error| ConfigError::Syntax { path: path.into(), message: e.to_string() })?;
        let where_ = path.display().to_string();
        for (section, value) in &table {
            match value.as_table().filter(|_| setting_keys::is_table(section)) {
                Some(entries) => {
                    for (name, v) in entries {
                        match Key::in_table(section, name).map(|key| (key, key.setting().reader)) {
                            Some((key, Reader::Engine)) => self.apply(key, &where_, v)?,
                            // Sections other modules own ([notify] is the client's, [delivery]
                            // the policy's) are read there.
                            Some(_) => {}
                            None if self.reads(section) => self.warnings.push(format!("{where_}: unknown key {section}.{name} (ignored)")),
                            None => {}
                        }
                    }
                }
                None if self.reads(section) => self.warnings.push(format!("{where_}: unknown section or key {section} (ignored)")),
                None => {}
            }
        }
        Ok(())
    }

    /// Whether this reader owns the table `section` (another reads `[delivery]` and `[notify]`,
    /// and warns of what it does not know there); an unknown section is this reader's to tell.
    fn reads(&self, section: &str) -> bool {
        let owners: Vec<Reader> =
            SETTINGS.iter().filter(|s| s.key.split().0.split('.').next() == Some(section)).map(|s| s.reader).collect();
        owners.is_empty() || owners.contains(&Reader::Engine)
    }

    /// One key of the file that the engine reads, checked by its kind.
    fn apply(&mut self, key: Key, where_: &str, v: &toml::Value) -> Result<(), ConfigError> {
        let bad = |allowed: &str| ConfigError::Value {
            where_: where_.into(),
            key: key.to_string(),
            value: v.to_string(),
            allowed: allowed.into(),
        };
        let text = || v.as_str().map(String::from).ok_or_else(|| bad("expected a string"));
        match key {
            Key::ApiUrl => self.api_url = text()?,
            Key::AuthUrl => self.auth_url = text()?,
            Key::Team => self.team = Some(team(key, where_, &text()?)?),
            Key::Http => self.transport = transport(key, where_, &text()?)?,
            Key::Proxy => self.proxy = proxy(key, where_, &text()?)?,
            Key::Password => match v.as_str().filter(|p| !p.is_empty()) {
                Some(p) => self.socket_password = Some(SecretString::from(p.to_string())),
                None => return Err(bad("expected a non-empty string")),
            },
            Key::SocketPath => match v.as_str().filter(|p| Path::new(p).is_absolute()) {
                Some(p) => self.socket_path = Some(PathBuf::from(p)),
                None => return Err(bad("expected an absolute path")),
            },
            Key::UpdateFeed => match v.as_str() {
                Some(url) => self.update_feed = Some(url.trim().to_string()).filter(|u| !u.is_empty()),
                None => return Err(bad("expected an https URL")),
            },
            Key::Language => match v.as_str().map(str::trim) {
                Some("") => self.language = None,
                code => {
                    self.language = Some(crate::lang::Language::of_code(code.unwrap_or_default()).ok_or_else(|| {
                        bad(&format!(
                            "one of {}, or empty for the system's",
                            crate::lang::Language::ALL.iter().map(|l| format!("{:?}", l.as_str())).collect::<Vec<_>>().join(", ")
                        ))
                    })?)
                }
            },
            // The other readers' keys: not asked for here.
            _ => {}
        }
        Ok(())
    }
}

impl Default for Settings {
    fn default() -> Self {
        Settings {
            api_url: DEFAULT_API_URL.into(),
            auth_url: DEFAULT_AUTH_URL.into(),
            team: None,
            transport: Transport::default(),
            proxy: ProxySetting::default(),
            proxy_env: ProxyEnv::default(),
            token: None,
            socket_password: None,
            socket_path: None,
            desktop_retry: None,
            keyring_probe: None,
            update_feed: None,
            language: None,
            warnings: Vec::new(),
        }
    }
}

fn team(key: impl std::fmt::Display, where_: &str, value: &str) -> Result<TeamId, ConfigError> {
    TeamId::parse(value).map_err(|e| ConfigError::Value {
        where_: where_.into(),
        key: key.to_string(),
        value: format!("{value:?}"),
        allowed: e.to_string(),
    })
}

fn proxy(key: impl std::fmt::Display, where_: &str, value: &str) -> Result<ProxySetting, ConfigError> {
    ProxySetting::parse(value).map_err(|allowed| ConfigError::Value {
        where_: where_.into(),
        key: key.to_string(),
        value: format!("{:?}", crate::cloud::proxy::redacted(value)),
        allowed: format!("{allowed}; or \"none\""),
    })
}

/// A period the test rig sets in milliseconds, from 100 to 600000.
fn test_millis(key: &str, v: &str) -> Result<std::time::Duration, ConfigError> {
    let ms = v.parse::<u64>().ok().filter(|ms| (100..=600_000).contains(ms)).ok_or_else(|| ConfigError::Value {
        where_: "environment".into(),
        key: key.into(),
        value: format!("{v:?}"),
        allowed: "milliseconds from 100 to 600000".into(),
    })?;
    Ok(std::time::Duration::from_millis(ms))
}
fn transport(key: impl std::fmt::Display, where_: &str, value: &str) -> Result<Transport, ConfigError> {
    Transport::parse(value).ok_or_else(|| ConfigError::Value {
        where_: where_.into(),
        key: key.to_string(),
        value: format!("{value:?}"),
        allowed: "\"1.1\" or \"2\"".into(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
        pairs.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect()
    }

    #[test]
    fn defaults_then_file_then_environment() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("config.toml");
        let s = Settings::load(&file, &env(&[])).unwrap();
        assert_eq!((s.api_url.as_str(), s.auth_url.as_str()), (DEFAULT_API_URL, DEFAULT_AUTH_URL));
        std::fs::write(&file, "[cloud]\napi_url = \"https://cloud-api-staging.cmux.dev\"\nteam = \"team_0123456789abcdef0123\"\n").unwrap();
        let s = Settings::load(&file, &env(&[])).unwrap();
        assert_eq!(s.api_url, "https://cloud-api-staging.cmux.dev");
        assert_eq!(s.team.unwrap().as_str(), "team_0123456789abcdef0123");
        let s = Settings::load(&file, &env(&[("CMUX_TRAY_API_URL", "http://127.0.0.1:9"), ("CMUX_TRAY_TOKEN", "t")])).unwrap();
        assert_eq!(s.api_url, "http://127.0.0.1:9");
        assert!(s.token.is_some());
    }

    #[test]
    fn bad_values_name_the_key_and_unknown_keys_warn() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("config.toml");
        std::fs::write(&file, "[cloud]\nteam = \"marketing\"\n").unwrap();
        let msg = Settings::load(&file, &env(&[])).unwrap_err().to_string();
        assert!(msg.contains("cloud.team") && msg.contains("marketing") && msg.contains("config.toml"), "{msg}");
        std::fs::write(&file, "[cloud]\napi_url = 7\n").unwrap();
        let msg = Settings::load(&file, &env(&[])).unwrap_err().to_string();
        assert!(msg.contains("cloud.api_url") && msg.contains("expected a string"), "{msg}");
        std::fs::write(&file, "[cloud]\napi_url = \"http://cloud.example.com\"\n").unwrap();
        let msg = Settings::load(&file, &env(&[])).unwrap_err().to_string();
        assert!(msg.contains("https"), "{msg}");
        std::fs::write(&file, "[cloud]\ncolour = \"blue\"\n[surprise]\n").unwrap();
        let s = Settings::load(&file, &env(&[])).unwrap();
        assert_eq!(s.warnings.len(), 2, "{:?}", s.warnings);
        std::fs::write(&file, "[cloud\n").unwrap();
        let msg = Settings::load(&file, &env(&[])).unwrap_err().to_string();
        assert!(msg.contains("not valid TOML"), "{msg}");
    }

    #[test]
    fn http_is_2_unless_1_1_is_asked_for_and_anything_else_names_the_key() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("config.toml");
        assert_eq!(Settings::load(&file, &env(&[])).unwrap().transport, Transport::Http2);
        std::fs::write(&file, "[cloud]\nhttp = \"1.1\"\n").unwrap();
        assert_eq!(Settings::load(&file, &env(&[])).unwrap().transport, Transport::Http1);
        assert_eq!(Settings::load(&file, &env(&[("CMUX_TRAY_HTTP", "2")])).unwrap().transport, Transport::Http2);
        std::fs::write(&file, "[cloud]\nhttp = \"3\"\n").unwrap();
        let msg = Settings::load(&file, &env(&[])).unwrap_err().to_string();
        assert!(msg.contains("cloud.http") && msg.contains("\"1.1\" or \"2\""), "{msg}");
    }
}
