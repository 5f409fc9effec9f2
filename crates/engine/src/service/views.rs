//! What the tray and the windows show, computed from the store, the settings and the click routing
//! (`crate::view` holds the pure parts and their words).

use super::{Engine, EngineError};
use crate::lang::Lang;
use crate::status::HeldBy;
use crate::store::{FollowKind, NoticeState, StoredNotice};
use crate::view::history::{HandoffCard, HistoryFilter, HistoryRow, HistoryView, RunCard};
use crate::view::settings_page::{KeptIn, SettingsView};
use crate::view::signin::{self, Ended, SignInView};

/// How many notices the history window lists at most (the store keeps them `history_days`).
const HISTORY_ROWS: usize = 500;

impl Engine {
    /// What the tray shows now.
    pub fn tray_view(&self) -> Result<crate::view::TrayView, EngineError> {
        Ok(crate::view::tray_view(&self.inner.lang, &self.status()?, self.inner.clock.now_ms(), &local_zone()))
    }

    /// The language and locale everything is said in.
    pub fn lang(&self) -> &Lang {
        &self.inner.lang
    }

    /// The history window's rows and follows, narrowed by `filter`.
    pub fn history_view(&self, filter: &HistoryFilter) -> Result<HistoryView, EngineError> {
        let store = &self.inner.store;
        let notices = store.recent_notices(HISTORY_ROWS)?;
        let follows = store.follows(200)?;
        let opens = |n: &StoredNotice| self.opens(n);
        let mut view = crate::view::history::history_view(
            &self.inner.lang,
            &notices,
            &follows,
            filter,
            &opens,
            self.inner.clock.now_ms(),
            &local_zone(),
        );
        self.say_what_untold_waits_for(&notices, view.days.iter_mut().flat_map(|d| d.rows.iter_mut()));
        Ok(view)
    }

    /// Untold notices' rows say what holds them (no notification server …) rather than only
    /// "waiting" (README "When no banner shows").
    fn say_what_untold_waits_for<'a>(&self, notices: &[StoredNotice], rows: impl Iterator<Item = &'a mut HistoryRow>) {
        let held = self.held_by().into_iter().find(|h| matches!(h, HeldBy::NoServer | HeldBy::SystemOff));
        let Some(words) = crate::view::history::untold_waits_for(&self.inner.lang, held) else { return };
        let untold: std::collections::HashSet<&str> =
            notices.iter().filter(|n| n.state == NoticeState::Untold).map(|n| n.key.as_str()).collect();
        for row in rows.filter(|r| untold.contains(r.key.as_str())) {
            row.no_banner = Some(words.clone());
        }
    }

    /// One item's notices (a hand-off's turns), newest last, as the history shows them.
    pub fn item_rows(&self, item: &crate::notice::Item) -> Result<Vec<HistoryRow>, EngineError> {
        let notices = self.inner.store.notices_for_item(item, 200)?;
        let (now, tz) = (self.inner.clock.now_ms(), local_zone());
        let mut rows: Vec<HistoryRow> =
            notices.iter().map(|n| crate::view::history::row(&self.inner.lang, n, self.opens(n), now, &tz)).collect();
        self.say_what_untold_waits_for(&notices, rows.iter_mut());
        Ok(rows)
    }

    /// A notice as stored, for its card (a terminal's notice whose click could not reach it).
    pub fn notice(&self, key: &str) -> Result<Option<StoredNotice>, EngineError> {
        Ok(self.inner.store.notice(key)?)
    }

    /// An ended Run's card: what its banner's click opens.
    pub fn run_card(&self, run_id: &str) -> Result<Option<RunCard>, EngineError> {
        Ok(self.inner.store.card(run_id)?.map(|card| crate::view::history::run_card(&self.inner.lang, card)))
    }

    /// A hand-off's card: its follow (title, state) and its turns as this app saw them.
    pub fn handoff_card(&self, handoff_id: &str) -> Result<HandoffCard, EngineError> {
        let follow = self.inner.store.follow(FollowKind::Handoff, handoff_id)?;
        // An id that is not a hand-off's names no item: no turns, as for one never told.
        let turns = match crate::cloud::HandoffId::parse(handoff_id) {
            Ok(id) => self.item_rows(&crate::notice::Item::Handoff(id))?,
            Err(_) => Vec::new(),
        };
        Ok(HandoffCard { follow, turns })
    }

    /// The settings window's model: every delivery setting in words, the quiet-hours editor's
    /// windows and whether they are on now, the pause.
    pub fn settings_view(&self) -> SettingsView {
        let settings = self.delivery_settings();
        let tz = self.time_zone(&settings);
        let system = jiff::tz::TimeZone::try_system().ok().and_then(|z| z.iana_name().map(String::from)).unwrap_or_else(|| "UTC".into());
        let now = jiff::Timestamp::from_millisecond(self.inner.clock.now_ms()).unwrap_or(jiff::Timestamp::UNIX_EPOCH);
        let mut view = crate::view::settings_page::settings_view(&self.inner.lang, &settings, self.paused(), now, &tz, &system);
        view.update = self.update_available().map(|v| crate::view::tray::available(&self.inner.lang, &v));
        view.banners_off = self.banners_off();
        view
    }

    /// Where the signed-in account's sign-in is kept, in a sentence with its "Why?": the secret
    /// store when a refresh token is kept, else memory (a token given directly). `None` when
    /// signed out or before the store is known.
    pub fn sign_in_kept_in(&self) -> Option<KeptIn> {
        self.session()?;
        if self.sign_in_in_memory() {
            return Some(crate::view::settings_page::kept_in_memory(&self.inner.lang));
        }
        self.inner.account.secret_store().as_ref().map(|store| crate::view::settings_page::kept_in(&self.inner.lang, store))
    }

    /// Signed in with an access token given directly (`CMUX_TRAY_TOKEN`, `login --token-stdin`):
    /// no refresh token is kept anywhere, the sign-in lives in this process alone.
    pub(super) fn sign_in_in_memory(&self) -> bool {
        let Some(session) = self.session() else { return false };
        self.inner.account.renewal().is_none_or(|r| r.account != session.account)
    }
}

/// The zone times are said in: the system's, read each time (a change applies at once).
fn local_zone() -> jiff::tz::TimeZone {
    jiff::tz::TimeZone::try_system().unwrap_or(jiff::tz::TimeZone::UTC)
}

impl Engine {
    /// How a sign-in ended, in the sign-in window's words.
    pub fn sign_in_ended(&self, result: &Result<crate::cloud::Me, EngineError>) -> SignInView {
        sign_in_ended(&self.inner.lang, result)
    }

    /// While the person confirms the code in the browser, in the sign-in window's words.
    pub fn sign_in_waiting(&self, expires_in_seconds: u64) -> SignInView {
        signin::waiting(&self.inner.lang, expires_in_seconds)
    }
}

fn sign_in_ended(lang: &Lang, result: &Result<crate::cloud::Me, EngineError>) -> SignInView {
    signin::ended(
        lang,
        match result {
            Ok(me) => Ended::SignedIn { email: me.email.clone() },
            Err(EngineError::DeviceExpired) => Ended::Expired,
            Err(e) => Ended::Refused { why: e.to_string() },
        },
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::view::signin::SignInState;

    #[test]
    fn a_sign_in_error_reads_as_the_window_says_it() {
        assert_eq!(sign_in_ended(&Lang::english(), &Err(EngineError::DeviceExpired)).state, SignInState::Expired);
        let refused = sign_in_ended(&Lang::english(), &Err(EngineError::SignIn(crate::cloud::CloudError::StaleToken)));
        assert_eq!(refused.state, SignInState::Refused);
        assert!(refused.detail.contains("refused (401)"), "{}", refused.detail);
    }
}
