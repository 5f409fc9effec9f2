//! The signed-in account, as remembered (one row).

use rusqlite::{OptionalExtension, params};
use serde::{Deserialize, Serialize};

use super::{Store, StoreError};
use crate::lang::{Lang, say};

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

/// Why the signed-in account stopped working, kept with the account until a sign-in (the
/// store's `account.problem`, as JSON of its kind).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "kebab-case")]
pub enum AccountProblem {
    /// The cloud refused the access token (or its refresh).
    TokenRefused,
    /// The cloud refused the token `CMUX_TRAY_TOKEN` gave.
    EnvTokenRefused,
    /// The saved sign-in is not where it was kept (`kept`: the secret store's name).
    NotFound { kept: String },
    /// The saved sign-in is for another cloud than the settings name now.
    OtherCloud { from: String, here: String },
}

impl AccountProblem {
    /// One short sentence in the person's language (the tray's line, the settings window).
    pub fn headline(&self, lang: &Lang) -> String {
        match self {
            AccountProblem::TokenRefused | AccountProblem::EnvTokenRefused => say!(lang, "problem-token-refused"),
            AccountProblem::NotFound { .. } => say!(lang, "problem-sign-in-not-found"),
            AccountProblem::OtherCloud { .. } => say!(lang, "problem-sign-in-other-cloud"),
        }
    }
}

impl std::fmt::Display for AccountProblem {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            AccountProblem::TokenRefused => f.write_str("The cloud refused the access token: sign in again."),
            AccountProblem::EnvTokenRefused => f.write_str("The cloud refused CMUX_TRAY_TOKEN: sign in again."),
            AccountProblem::NotFound { kept } => write!(f, "The saved sign-in was not found in {kept}: sign in again."),
            AccountProblem::OtherCloud { from, here } => {
                write!(f, "The saved sign-in is for {from}, and the settings now name {here}: sign in again.")
            }
        }
    }
}

impl rusqlite::ToSql for AccountProblem {
    fn to_sql(&self) -> rusqlite::Result<rusqlite::types::ToSqlOutput<'_>> {
        let json = serde_json::to_string(self).map_err(|e| rusqlite::Error::ToSqlConversionFailure(e.into()))?;
        Ok(rusqlite::types::ToSqlOutput::from(json))
    }
}

impl rusqlite::types::FromSql for AccountProblem {
    fn column_result(value: rusqlite::types::ValueRef<'_>) -> rusqlite::types::FromSqlResult<Self> {
        serde_json::from_str(value.as_str()?).map_err(|e| rusqlite::types::FromSqlError::Other(format!("account problem: {e}").into()))
    }
}
