//! `UPDATE IGNORE` and `DELETE IGNORE` (single- and multi-table), as MySQL 8 runs them
//! (its manual's "The Effect of IGNORE on Statement Execution"):
//! - a row whose change fails with one of the errors IGNORE covers — a duplicate key
//!   (1062), a foreign key (1451 a referencing child, 1452 no parent), a CHECK
//!   constraint (3819), a view's CHECK OPTION (1369) — is left as it was, with the
//!   error as a warning, and the statement goes on with the next row;
//! - values strict mode would refuse are stored adjusted, with warnings (the statement
//!   runs as outside strict mode: [`run`]); NULL into a NOT NULL column stores the
//!   column's implicit default with warning 1048 (`dml::assign`);
//! - a scalar subquery that returns more than one row is NULL, with warning 1242 (its
//!   error is one MySQL 8's `Ignore_error_handler` downgrades): `SET c = (SELECT …)`
//!   stores NULL (or, in a NOT NULL column, the implicit default with 1048 too), a
//!   `WHERE c = (SELECT …)` matches nothing. An uncorrelated subquery warns once for the
//!   statement, a correlated one each time it runs (`SubqueryRunner::more_than_one_row`).
//!   INSERT IGNORE runs the same way.
//!
//! A skipped row leaves nothing behind: each row's change starts at a
//! [`strata_engine::RowMark`] and a covered failure rolls the transactional engines
//! (and the binary log's row record) back to it — the half of a moved row that was
//! already deleted, an index entry, a cascade to a child table — as InnoDB rolls back
//! one failed row operation. The heap engine (MyISAM) checks keys before it writes, so
//! its rows are untouched when it refuses one.

use crate::context::ExecCtx;
use crate::expr::env_overlay::EnvOverlay;
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

/// Runs a statement with IGNORE: not strict, so the values strict mode would refuse
/// are stored adjusted with warnings, and with 1242 a warning and NULL.
pub fn run<T>(cx: &ExecCtx, body: impl FnOnce(&mut ExecCtx) -> Result<T>) -> Result<T> {
    let env = EnvOverlay::ignore(cx.env);
    let mut lenient = cx.with_env(&env);
    lenient.strict = false;
    body(&mut lenient)
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
        // 1242 is not a row error: it becomes NULL where the subquery is evaluated.
        assert!(!covers(&Error::SubqueryRows));
    }

    #[test]
    fn ignore_runs_lenient_with_subquery_rows_as_warnings() {
        let env = crate::expr::test_env::TestEnv::default();
        let dir = tempfile::tempdir().unwrap();
        let catalog =
            std::sync::Arc::new(crate::catalog::Catalog::open(dir.path(), vec![]).unwrap());
        let txn = strata_engine::Txn::default();
        let mdl = crate::mdl::MdlContext::new(catalog.mdl().clone());
        let temp = crate::catalog::temporary::TempTables::default();
        let cx = ExecCtx {
            catalog: &catalog,
            current_db: None,
            env: &env,
            locked_tables: None,
            strict: true,
            sql_mode: strata_types::SqlMode::default(),
            default_engine: "btree",
            sort_buffer_size: 1 << 20,
            tmp_table_size: 1 << 20,
            tmpdir: dir.path(),
            txn: &txn,
            mdl: &mdl,
            invoker: None,
            temp: &temp,
        };
        assert!(!cx.env.subquery_rows_are_warnings());
        let seen = run(&cx, |cx| {
            Ok((cx.strict, cx.env.subquery_rows_are_warnings()))
        })
        .unwrap();
        assert_eq!(seen, (false, true));
        // A stored program's overlay over it does not inherit IGNORE.
        run(&cx, |cx| {
            let program = EnvOverlay::program_mode(cx.env, "");
            assert!(!crate::expr::Env::subquery_rows_are_warnings(&program));
            Ok(())
        })
        .unwrap();
    }
}
