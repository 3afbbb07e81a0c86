//! `UPDATE IGNORE` and `DELETE IGNORE` (single- and multi-table), as MySQL 8 runs them
//! (its manual's "The Effect of IGNORE on Statement Execution"):
//! - a row whose change fails with one of the errors IGNORE covers — a duplicate key
//!   (1062), a foreign key (1451 a referencing child, 1452 no parent), a CHECK
//!   constraint (3819), a view's CHECK OPTION (1369) — is left as it was, with the
//!   error as a warning, and the statement goes on with the next row;
//! - values strict mode would refuse are stored adjusted, with warnings (the statement
//!   runs as outside strict mode: [`lenient`]); NULL into a NOT NULL column stores the
//!   column's implicit default with warning 1048 (`dml::assign`).
//!
//! A skipped row leaves nothing behind: each row's change starts at a
//! [`strata_engine::RowMark`] and a covered failure rolls the transactional engines
//! (and the binary log's row record) back to it — the half of a moved row that was
//! already deleted, an index entry, a cascade to a child table — as InnoDB rolls back
//! one failed row operation. The heap engine (MyISAM) checks keys before it writes, so
//! its rows are untouched when it refuses one.
//!
//! Not done: MySQL also covers 1242 (a subquery returning more than one row), going
//! on with the subquery's value as NULL wherever it sits in an expression; Strata
//! cannot evaluate the rest of such an expression that way, so under IGNORE that error
//! is 1235 instead of a value that could differ from MySQL's.

use crate::context::ExecCtx;
use crate::expr::WarnLevel;
use strata_types::{Error, Result};

/// Whether IGNORE turns `e`, raised while changing one row, into a warning and a
/// skipped row.
pub fn covers(e: &Error) -> bool {
    matches!(
        e,
        Error::DuplicateKey { .. }
            | Error::FkNoParent(_)
            | Error::FkRowIsReferenced(_)
            | Error::CheckViolated(_)
            | Error::ViewCheckFailed { .. }
    )
}

/// Runs one row's change. Without IGNORE, `change` as it is. With IGNORE, a covered
/// error undoes everything the row did, becomes a warning, and gives None (the row is
/// skipped).
pub fn row<T>(cx: &ExecCtx, ignore: bool, change: impl FnOnce() -> Result<T>) -> Result<Option<T>> {
    if !ignore {
        return change().map(Some);
    }
    let mark = cx.txn.row_mark();
    match change() {
        Ok(v) => Ok(Some(v)),
        Err(e) if covers(&e) => {
            cx.txn.rollback_to_row_mark(&mark)?;
            cx.env.warn(WarnLevel::Warning, e.code(), e.to_string());
            Ok(None)
        }
        Err(e) => Err(e),
    }
}

/// The statement's error under IGNORE: 1242, which MySQL would turn into a NULL value
/// and a warning, is refused instead (see the module comment).
pub fn statement_error(e: Error, verb: &str) -> Error {
    match e {
        Error::SubqueryRows => Error::NotSupported(format!(
            "{verb} IGNORE with a subquery that returns more than 1 row (MySQL goes on with \
             NULL for it)"
        )),
        other => other,
    }
}

/// The statement's context as IGNORE runs it: not strict, so the values strict mode
/// would refuse are stored adjusted with warnings, as INSERT IGNORE stores them.
pub fn lenient<'a>(cx: &ExecCtx<'a>) -> ExecCtx<'a> {
    let mut lenient = cx.with_env(cx.env);
    lenient.strict = false;
    lenient
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ignore_covers_the_row_errors_mysql_names_and_no_others() {
        let dup = Error::DuplicateKey {
            value: "1".into(),
            key: "PRIMARY".into(),
        };
        assert!(covers(&dup));
        assert!(covers(&Error::FkNoParent("x".into())));
        assert!(covers(&Error::FkRowIsReferenced("x".into())));
        assert!(covers(&Error::CheckViolated("c".into())));
        // Not row errors: a table that is missing, a lock wait, a NULL a trigger left
        // in a NOT NULL column.
        assert!(!covers(&Error::ColumnNotNull("b".into())));
        assert!(!covers(&Error::LockWaitTimeout));
        assert_eq!(statement_error(Error::SubqueryRows, "UPDATE").code(), 1235);
        assert_eq!(statement_error(dup, "UPDATE").code(), 1062);
    }
}
