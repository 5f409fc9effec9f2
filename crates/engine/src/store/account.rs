//! The signed-in account, as remembered (one row).

use rusqlite::{OptionalExtension, params};
use serde::{Deserialize, Serialize};

use super::{Store, StoreError};
use crate::status::AccountProblem;

/// The signed-in account, as remembered.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AccountRow {
    pub user_id: String,
    pub email: String,
    pub team: Option<String>,
    pub signed_in_at: i64,
    /// Why it stopped working, until the next sign-in.
    pub problem: Option<AccountProblem>,
}

impl Store {
    pub fn account(&self) -> Result<Option<AccountRow>, StoreError> {
        self.lock()
            .query_row("SELECT user_id, email, team, signed_in_at, problem FROM account", [], |r| {
                Ok(AccountRow { user_id: r.get(0)?, email: r.get(1)?, team: r.get(2)?, signed_in_at: r.get(3)?, problem: r.get(4)? })
            })
            .optional()
            .map_err(|e| self.err(e))
    }

    pub fn set_account(&self, a: &AccountRow) -> Result<(), StoreError> {
        self.lock()
            .execute(
                "INSERT INTO account (only, user_id, email, team, signed_in_at, problem) VALUES (1, ?1, ?2, ?3, ?4, ?5)
                 ON CONFLICT (only) DO UPDATE SET user_id = ?1, email = ?2, team = ?3, signed_in_at = ?4, problem = ?5",
                params![a.user_id, a.email, a.team, a.signed_in_at, a.problem],
            )
            .map(drop)
            .map_err(|e| self.err(e))
    }

    /// Notes why the account stopped working (or clears it).
    pub fn set_account_problem(&self, problem: Option<&AccountProblem>) -> Result<(), StoreError> {
        self.lock().execute("UPDATE account SET problem = ?1", [problem]).map(drop).map_err(|e| self.err(e))
    }

    pub fn clear_account(&self) -> Result<(), StoreError> {
        self.lock().execute("DELETE FROM account", []).map(drop).map_err(|e| self.err(e))
    }
}
