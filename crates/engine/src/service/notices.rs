//! Notices from this machine's terminals (the local socket's `notify`), marking notices read, and
//! taking their banners away.

use super::{Engine, EngineError};
use crate::notice::local::LocalPost;
use crate::notice::{self, Notice};
use crate::store::StoredNotice;

impl Engine {
    /// A notice from a terminal: saved, then told like any other. Returns it with its cmux id.
    pub async fn post_local(&self, post: LocalPost) -> Result<Notice, EngineError> {
        self.post_locals(vec![post]).await.pop().expect("post_locals answers every post")
    }

    /// Notices a client sent one after another without waiting (pipelined): saved in one commit,
    /// each alone in its savepoint, and answered in order once that commit is in the WAL.
    pub async fn post_locals(&self, posts: Vec<LocalPost>) -> Vec<Result<Notice, EngineError>> {
        let notices: Vec<Notice> =
            posts.iter().map(|post| notice::local::local_notice(&self.inner.lang, post, &notice::local::new_cmux_id())).collect();
        let saved = self.inner.store.record_notices_grouped(notices.clone(), self.inner.clock.now_ms()).await;
        if saved.iter().any(|new| matches!(new, Ok(true))) {
            self.inner.deliverer.wake();
        }
        self.changed();
        notices.into_iter().zip(saved).map(|(notice, saved)| saved.map(|_| notice).map_err(EngineError::from)).collect()
    }

    /// The newest `limit` local notices, oldest first.
    pub fn local_notices(&self, limit: usize) -> Result<Vec<StoredNotice>, EngineError> {
        Ok(self.inner.store.local_notices(limit)?)
    }

    /// Marks local notices read (one, or all) and withdraws their banners. Returns how many.
    pub async fn mark_local_read(&self, cmux_id: Option<&str>) -> Result<usize, EngineError> {
        let keys = self.inner.store.mark_local_read(cmux_id, self.inner.clock.now_ms())?;
        self.withdraw_banners_of(&keys).await?;
        Ok(keys.len())
    }

    /// Whether a local notice with this cmux id is known.
    pub fn local_notice_exists(&self, cmux_id: &str) -> Result<bool, EngineError> {
        Ok(self.inner.store.local_notice_exists(cmux_id)?)
    }

    /// Forgets every local notice and withdraws their banners.
    pub async fn clear_local(&self) -> Result<(), EngineError> {
        for banner in self.inner.store.clear_local()? {
            self.withdraw(banner).await;
        }
        self.changed();
        Ok(())
    }

    /// "Mark all read" (the tray): every notice read, their banners taken away.
    pub async fn mark_all_read(&self) -> Result<usize, EngineError> {
        let keys = self.inner.store.mark_all_read(self.inner.clock.now_ms())?;
        self.withdraw_banners_of(&keys).await?;
        Ok(keys.len())
    }

    /// The shell showed what a click asked for (a card, the history): the notice is read.
    pub async fn revealed(&self, notice_key: &str) -> Result<(), EngineError> {
        self.inner.store.mark_read(notice_key, self.inner.clock.now_ms())?;
        self.withdraw_banners_of(&[notice_key.to_string()]).await
    }

    /// Takes away the banners of these notices where they are still their item's live banner.
    pub(super) async fn withdraw_banners_of(&self, keys: &[String]) -> Result<(), EngineError> {
        for key in keys {
            let Some(n) = self.inner.store.notice(key)? else { continue };
            if let Some(banner) = n.banner_id
                && self.inner.store.live_banner(&n.item)? == Some(banner)
            {
                self.withdraw(banner).await;
            }
        }
        self.changed();
        Ok(())
    }

    /// Takes one banner away. A banner the person already closed is no error worth more than a line.
    pub(super) async fn withdraw(&self, banner: u32) {
        if let Err(e) = self.inner.desktop.withdraw(banner).await {
            tracing::info!("withdrawing banner {banner}: {e}");
        }
    }
}
