//! The session as the expressions of one statement see it, with facts replaced:
//! - an INSERT or UPDATE under strict mode with `ERROR_FOR_DIVISION_BY_ZERO` (MySQL 8's
//!   default sql_mode) makes a division by zero error 1365 instead of NULL with a
//!   warning, as MySQL refuses to store such a value;
//! - in an INSERT or UPDATE under strict mode, a warning of the kinds MySQL's
//!   `Strict_error_handler` names (1292 `Truncated incorrect DOUBLE value`, 1366, 1264,
//!   1411, 1441, 3020) is the statement's error instead: `UPDATE t SET … WHERE
//!   varchar_col = 0` over a row holding `'abc'` fails with 1292 and changes nothing,
//!   as in MySQL, where it used to change the rows `'abc' = 0` matched. The evaluation
//!   that raises it cannot fail, so the warning is kept ([`EnvOverlay::warn`]) and the
//!   statement takes it before it changes a row ([`Env::take_strict_error`]);
//! - a stored program runs under the sql_mode it was created with (`@@sql_mode` inside
//!   it is that mode, and so is every check that reads the mode), as in MySQL;
//! - a data change with IGNORE makes a scalar subquery's second row (1242) a warning
//!   and the subquery's value NULL ([`Env::subquery_rows_are_warnings`]), as MySQL 8's
//!   `Ignore_error_handler` does; the stored programs it fires run without it, as
//!   MySQL's handler covers only the statement that says IGNORE.
//!
//! Every other fact is the session's.

use super::{Env, UserLockCall, WarnLevel, Warning};
use std::cell::RefCell;
use strata_types::{DateTime, Error, Result, Value};

/// The warnings a strict data change makes its error (MySQL 8's `Strict_error_handler`,
/// those expressions raise here): truncated incorrect value, incorrect value for a
/// column, out of range, wrong value for a function, date-time overflow, invalid
/// logarithm argument. (Division by zero, 1365, has its own rule: `division_by_zero_is_error`.)
const STRICT_ERRORS: [u16; 6] = [1292, 1366, 1264, 1411, 1441, 3020];

pub struct EnvOverlay<'a> {
    pub inner: &'a dyn Env,
    pub division_by_zero_is_error: bool,
    /// The session `sql_mode` the statement runs under, if not the session's.
    pub sql_mode: Option<Value>,
    /// A strict INSERT or UPDATE: [`STRICT_ERRORS`] warnings are its error.
    strict_change: bool,
    /// The first such warning, until the statement takes it.
    strict_error: RefCell<Option<Error>>,
    /// A data change with IGNORE: 1242 is a warning (not passed on to an overlay
    /// over this one, which is a stored program's).
    ignore: bool,
}

impl<'a> EnvOverlay<'a> {
    /// An INSERT or UPDATE under strict mode: the warnings MySQL makes errors are the
    /// statement's error, and so is a division by zero when sql_mode has
    /// ERROR_FOR_DIVISION_BY_ZERO (`division_is_error`).
    pub fn strict_change(inner: &'a dyn Env, division_is_error: bool) -> EnvOverlay<'a> {
        EnvOverlay {
            inner,
            division_by_zero_is_error: division_is_error,
            sql_mode: None,
            strict_change: true,
            strict_error: RefCell::new(None),
            ignore: false,
        }
    }

    /// An INSERT, UPDATE or DELETE with IGNORE.
    pub fn ignore(inner: &'a dyn Env) -> EnvOverlay<'a> {
        EnvOverlay {
            inner,
            division_by_zero_is_error: false,
            sql_mode: None,
            strict_change: false,
            strict_error: RefCell::new(None),
            ignore: true,
        }
    }

    /// A stored program's statements, under `sql_mode` (its text).
    pub fn program_mode(inner: &'a dyn Env, sql_mode: &str) -> EnvOverlay<'a> {
        EnvOverlay {
            inner,
            division_by_zero_is_error: false,
            sql_mode: Some(Value::str(sql_mode)),
            strict_change: false,
            strict_error: RefCell::new(None),
            ignore: false,
        }
    }
}

impl Env for EnvOverlay<'_> {
    fn system_variable(&self, name: &str, global: bool) -> Result<Value> {
        match &self.sql_mode {
            Some(m) if !global && name.eq_ignore_ascii_case("sql_mode") => Ok(m.clone()),
            _ => self.inner.system_variable(name, global),
        }
    }
    fn user_variable(&self, name: &str) -> Value {
        self.inner.user_variable(name)
    }
    fn last_insert_id(&self) -> u64 {
        self.inner.last_insert_id()
    }
    fn set_last_insert_id(&self, id: u64) {
        self.inner.set_last_insert_id(id)
    }
    fn set_user_variable(&self, name: &str, value: Value) {
        self.inner.set_user_variable(name, value)
    }
    fn database(&self) -> Option<String> {
        self.inner.database()
    }
    fn user(&self) -> String {
        self.inner.user()
    }
    fn user_at_host(&self, account: bool) -> String {
        self.inner.user_at_host(account)
    }
    fn current_role(&self) -> String {
        self.inner.current_role()
    }
    fn sees_database(&self, db: &str) -> bool {
        self.inner.sees_database(db)
    }
    fn sees_table(&self, db: &str, table: &str) -> bool {
        self.inner.sees_table(db, table)
    }
    fn account_rows(&self) -> Option<std::sync::Arc<dyn crate::catalog::systables::AccountRows>> {
        self.inner.account_rows()
    }
    fn connection_id(&self) -> u64 {
        self.inner.connection_id()
    }
    fn now(&self) -> DateTime {
        self.inner.now()
    }
    fn found_rows(&self) -> u64 {
        self.inner.found_rows()
    }
    fn row_count(&self) -> i64 {
        self.inner.row_count()
    }
    fn random(&self) -> f64 {
        self.inner.random()
    }
    fn seeded_random(&self, site: usize, seed: i64) -> f64 {
        self.inner.seeded_random(site, seed)
    }
    fn division_by_zero_is_error(&self) -> bool {
        self.division_by_zero_is_error || self.inner.division_by_zero_is_error()
    }
    fn sleep(&self, d: std::time::Duration) -> bool {
        self.inner.sleep(d)
    }
    fn wait_for_executed_gtids(
        &self,
        set: &strata_types::gtid::GtidSet,
        timeout: Option<std::time::Duration>,
    ) -> Result<bool> {
        self.inner.wait_for_executed_gtids(set, timeout)
    }
    fn user_lock(&self, call: UserLockCall) -> Result<Value> {
        self.inner.user_lock(call)
    }
    fn warn(&self, level: WarnLevel, code: u16, message: String) {
        if self.strict_change && level == WarnLevel::Warning && STRICT_ERRORS.contains(&code) {
            let mut first = self.strict_error.borrow_mut();
            if first.is_none() {
                *first = Some(Error::StrictWarning { code, message });
            }
            return;
        }
        self.inner.warn(level, code, message)
    }
    fn take_strict_error(&self) -> Option<Error> {
        self.strict_error
            .borrow_mut()
            .take()
            .or_else(|| self.inner.take_strict_error())
    }
    fn rows_before(&self) -> u64 {
        self.inner.rows_before()
    }
    fn holds_file_privilege(&self) -> bool {
        self.inner.holds_file_privilege()
    }
    fn warnings(&self) -> Vec<Warning> {
        self.inner.warnings()
    }
    fn warning_count(&self) -> usize {
        self.inner.warning_count()
    }
    fn subquery_rows_are_warnings(&self) -> bool {
        self.ignore
    }
}

/// The warning a strict data change kept as its error ([`Env::take_strict_error`]),
/// raised: what the statement checks before it changes a row and when it ends.
pub fn raise_kept(env: &dyn Env) -> Result<()> {
    match env.take_strict_error() {
        Some(e) => Err(e),
        None => Ok(()),
    }
}

/// Whether sql_mode has ERROR_FOR_DIVISION_BY_ZERO (MySQL 8's default), without which a
/// division by zero is NULL with no warning.
pub fn mode_is_set(env: &dyn Env) -> bool {
    env.system_variable("sql_mode", false)
        .map(|m| m.to_text().contains("ERROR_FOR_DIVISION_BY_ZERO"))
        .unwrap_or(false)
}
