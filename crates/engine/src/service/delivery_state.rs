//! The engine's delivery settings and pause: read from the config file's `[delivery]` table when
//! the file changes, kept at their last good value when it is bad, and the pause saved in the
//! store so it survives a relaunch.

use std::path::PathBuf;
use std::sync::Mutex;
use std::time::SystemTime;

use jiff::Timestamp;
use jiff::tz::TimeZone;

use super::{Engine, EngineError};
use crate::lock::Locked;
use crate::policy::delivery_settings as delivery;
use crate::policy::{DeliverySettings, Pause};
use crate::status::Problem;

const LAST_GOOD: &str = "delivery.last_good";
const PAUSE: &str = "delivery.pause";

pub(super) struct DeliveryCell {
    file: Option<PathBuf>,
    state: Mutex<CellState>,
}

#[derive(Default)]
struct CellState {
    settings: DeliverySettings,
    /// The file's modification time when last read (`None`: absent or never read).
    seen: Option<Option<SystemTime>>,
    problem: Option<Problem>,
    warnings: Vec<String>,
}

impl DeliveryCell {
    pub(super) fn new(file: Option<PathBuf>) -> Self {
        DeliveryCell { file, state: Mutex::new(CellState::default()) }
    }

    fn state(&self) -> std::sync::MutexGuard<'_, CellState> {
        self.state.locked()
    }

    pub(super) fn current(&self) -> DeliverySettings {
        self.state().settings.clone()
    }

    pub(super) fn problem(&self) -> Option<Problem> {
        self.state().problem.clone()
    }
}

/// The `[delivery]` table of a config file's text.
fn delivery_table(text: &str) -> Result<Option<toml::Table>, String> {
    let doc: toml::Table = text.parse().map_err(|e: toml::de::Error| format!("not valid TOML: {e}"))?;
    match doc.get(delivery::DELIVERY) {
        None => Ok(None),
        Some(toml::Value::Table(t)) => Ok(Some(t.clone())),
        Some(other) => Err(format!("delivery = {other}: expected a table [delivery]")),
    }
}

impl Engine {
    /// Reads the delivery settings at start: the file's when good, else the last good ones saved
    /// in the store (never an empty start over the person's choices), else the defaults.
    pub(super) fn load_delivery_settings(&self) {
        let cell = &self.inner.delivery;
        if let Ok(Some(text)) = self.inner.store.get(LAST_GOOD)
            && let Ok(table) = delivery_table(&text)
            && let Ok((settings, _)) = delivery::parse(table.as_ref())
        {
            cell.state().settings = settings;
        }
        self.reload_delivery_settings();
    }

    /// Re-reads `[delivery]` if the file changed since the last read. A bad file keeps the last
    /// good settings and says what is wrong (naming the key); the file is never rewritten.
    pub fn reload_delivery_settings(&self) {
        let cell = &self.inner.delivery;
        let Some(file) = &cell.file else { return };
        let mtime = std::fs::metadata(file).and_then(|m| m.modified()).ok();
        if cell.state().seen == Some(mtime) {
            return;
        }
        let text = match std::fs::read_to_string(file) {
            Ok(t) => t,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => String::new(),
            Err(e) => {
                let mut st = cell.state();
                st.seen = Some(mtime);
                st.problem = Some(Problem::DeliverySettings { file: file.display().to_string(), why: e.to_string() });
                return;
            }
        };
        let parsed = delivery_table(&text).and_then(|t| delivery::parse(t.as_ref()).map(|r| (t, r)).map_err(|e| e.to_string()));
        let mut st = cell.state();
        st.seen = Some(mtime);
        match parsed {
            Ok((table, (settings, warnings))) => {
                for w in &warnings {
                    tracing::warn!("{}: {w}", file.display());
                }
                let changed = st.settings != settings;
                if changed {
                    tracing::info!("delivery settings applied from {}", file.display());
                    // A hold may have ended with them (quiet hours switched off …): look again.
                    self.inner.deliverer.wake();
                    self.changed();
                }
                st.settings = settings;
                st.warnings = warnings;
                st.problem = None;
                let saved =
                    table.map(|t| toml::to_string(&toml::Table::from_iter([(delivery::DELIVERY.to_string(), toml::Value::Table(t))])));
                drop(st);
                if let Some(Ok(text)) = saved {
                    let _ = self.inner.store.set(LAST_GOOD, Some(&text));
                } else {
                    let _ = self.inner.store.set(LAST_GOOD, None);
                }
            }
            Err(e) => {
                let problem = Problem::DeliverySettings { file: file.display().to_string(), why: e.to_string() };
                tracing::error!("{problem}");
                st.problem = Some(problem);
            }
        }
    }

    /// The delivery settings in force.
    pub fn delivery_settings(&self) -> DeliverySettings {
        self.reload_delivery_settings();
        self.inner.delivery.current()
    }

    /// Why the delivery settings in the file are not in force (the last good ones are), if so.
    pub fn delivery_settings_problem(&self) -> Option<Problem> {
        self.inner.delivery.problem()
    }

    /// The zone quiet hours are read in: the configured one, else the system's (read each time,
    /// so a change of the system's zone applies at once).
    pub(super) fn time_zone(&self, settings: &DeliverySettings) -> TimeZone {
        settings
            .quiet
            .time_zone
            .as_deref()
            .and_then(|name| TimeZone::get(name).ok())
            .unwrap_or_else(|| TimeZone::try_system().unwrap_or(TimeZone::UTC))
    }

    /// Pauses banners until a moment, or until resumed (`None`). Saved: survives a relaunch.
    pub fn pause(&self, until: Option<Timestamp>) -> Result<(), EngineError> {
        let value = until.map(|t| t.as_millisecond().to_string()).unwrap_or_else(|| UNTIL_RESUMED.into());
        self.inner.store.set(PAUSE, Some(&value))?;
        self.inner.deliverer.wake();
        self.changed();
        Ok(())
    }

    /// Ends a pause; what was held is summed up in one banner.
    pub fn resume(&self) -> Result<(), EngineError> {
        self.inner.store.set(PAUSE, None)?;
        self.inner.deliverer.wake();
        self.changed();
        Ok(())
    }

    /// The pause in force, if any.
    pub fn paused(&self) -> Option<Pause> {
        stored_pause(&self.inner.store, self.inner.clock.now_ms())
    }
}

/// The stored pause that has no end: the word the store keeps for it (a time is kept as
/// milliseconds), read back by [`stored_pause`].
const UNTIL_RESUMED: &str = "resumed";

/// The pause saved in the store, if it is still in force at `now_ms`: one reading of what
/// [`Engine::pause`] writes, for the engine and for a status read from the store alone.
pub(crate) fn stored_pause(store: &crate::store::Store, now_ms: i64) -> Option<Pause> {
    let value = store.get(PAUSE).ok().flatten()?;
    if value == UNTIL_RESUMED {
        return Some(Pause::UntilResumed);
    }
    let until = Timestamp::from_millisecond(value.parse().ok()?).ok()?;
    (until.as_millisecond() > now_ms).then_some(Pause::Until(until))
}
