//! The session seen by the expressions of an INSERT or UPDATE under strict mode with
//! `ERROR_FOR_DIVISION_BY_ZERO` (MySQL 8's default sql_mode): every fact is the
//! session's, except that a division by zero is error 1365 instead of NULL with a
//! warning, as MySQL refuses to store such a value.

use super::{Env, WarnLevel, Warning};
use strata_types::{DateTime, Result, Value};

pub struct DivisionByZeroIsError<'a>(pub &'a dyn Env);

impl Env for DivisionByZeroIsError<'_> {
    fn system_variable(&self, name: &str, global: bool) -> Result<Value> {
        self.0.system_variable(name, global)
    }
    fn user_variable(&self, name: &str) -> Value {
        self.0.user_variable(name)
    }
    fn last_insert_id(&self) -> u64 {
        self.0.last_insert_id()
    }
    fn set_last_insert_id(&self, id: u64) {
        self.0.set_last_insert_id(id)
    }
    fn set_user_variable(&self, name: &str, value: Value) {
        self.0.set_user_variable(name, value)
    }
    fn database(&self) -> Option<String> {
        self.0.database()
    }
    fn user(&self) -> String {
        self.0.user()
    }
    fn user_at_host(&self, account: bool) -> String {
        self.0.user_at_host(account)
    }
    fn sees_database(&self, db: &str) -> bool {
        self.0.sees_database(db)
    }
    fn sees_table(&self, db: &str, table: &str) -> bool {
        self.0.sees_table(db, table)
    }
    fn connection_id(&self) -> u64 {
        self.0.connection_id()
    }
    fn now(&self) -> DateTime {
        self.0.now()
    }
    fn found_rows(&self) -> u64 {
        self.0.found_rows()
    }
    fn row_count(&self) -> i64 {
        self.0.row_count()
    }
    fn random(&self) -> f64 {
        self.0.random()
    }
    fn seeded_random(&self, site: usize, seed: i64) -> f64 {
        self.0.seeded_random(site, seed)
    }
    fn division_by_zero_is_error(&self) -> bool {
        true
    }
    fn warn(&self, level: WarnLevel, code: u16, message: String) {
        self.0.warn(level, code, message)
    }
    fn warnings(&self) -> Vec<Warning> {
        self.0.warnings()
    }
}

/// Whether the session's sql_mode makes a division by zero in a data change an error:
/// strict, with ERROR_FOR_DIVISION_BY_ZERO.
pub fn applies(env: &dyn Env, strict: bool) -> bool {
    strict && mode_is_set(env)
}

/// Whether sql_mode has ERROR_FOR_DIVISION_BY_ZERO (MySQL 8's default), without which a
/// division by zero is NULL with no warning.
pub fn mode_is_set(env: &dyn Env) -> bool {
    env.system_variable("sql_mode", false)
        .map(|m| m.to_text().contains("ERROR_FOR_DIVISION_BY_ZERO"))
        .unwrap_or(false)
}
