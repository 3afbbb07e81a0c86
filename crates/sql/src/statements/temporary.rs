//! DDL on a session's TEMPORARY tables (`catalog/temporary.rs` holds them): CREATE
//! TEMPORARY TABLE (plain, `LIKE`, `… SELECT` through `create_select`), DROP TEMPORARY
//! TABLE, ALTER TABLE … RENAME and RENAME TABLE of one, TRUNCATE; every other ALTER TABLE
//! form and CREATE/DROP INDEX go to `statements::alter` (`alter_temporary`), never to a
//! base table the temporary one hides.
//!
//! [`execute`] runs before `ddl::execute_other` takes metadata locks: a temporary table is
//! its session's alone, so its DDL waits for no other session (as in MySQL). What these
//! statements send to the binary log is decided by [`binlog_text`]: nothing about a
//! temporary table (MySQL 8 with binlog_format=ROW).

use crate::catalog::temporary::TempTables;
use crate::context::{resolve_table, ExecCtx, Outcome, TableLocks};
use sqlparser::ast;
use strata_engine::LockMode;
use strata_types::{Error, Result, TableDef};

/// Runs `stmt` when it is DDL about a temporary table of the session; None otherwise.
pub fn execute(stmt: &ast::Statement, cx: &mut ExecCtx) -> Option<Result<Outcome>> {
    use ast::Statement as S;
    let is_temp = |cx: &ExecCtx, n: &ast::ObjectName| {
        !cx.temp.is_empty()
            && resolve_table(cx, n).is_ok_and(|(db, t)| cx.temp_table(&db, &t).is_some())
    };
    match stmt {
        S::CreateTable(ct) if ct.temporary => Some(create(ct, cx)),
        S::Drop {
            object_type: ast::ObjectType::Table,
            temporary: true,
            if_exists,
            names,
            ..
        } => Some(drop_temporary(names, *if_exists, cx)),
        S::Drop {
            object_type: ast::ObjectType::Index,
            table: Some(t),
            names,
            ..
        } if is_temp(cx, t) => Some(match names.as_slice() {
            [index] => crate::statements::alter::drop_index(index, t, cx),
            _ => Err(Error::Syntax("DROP INDEX".into())),
        }),
        S::CreateIndex(ci) if is_temp(cx, &ci.table_name) => {
            Some(crate::statements::alter::create_index(ci, cx))
        }
        S::AlterTable(at) if is_temp(cx, &at.name) => Some(alter(at, cx)),
        S::RenameTable(pairs) if pairs.iter().any(|p| is_temp(cx, &p.old_name)) => {
            if !pairs.iter().all(|p| is_temp(cx, &p.old_name)) {
                return Some(Err(Error::NotSupported(
                    "RENAME TABLE of TEMPORARY and base tables in one statement".into(),
                )));
            }
            Some(rename_all(pairs, cx))
        }
        _ => None,
    }
}

/// `CREATE TEMPORARY TABLE [IF NOT EXISTS] t (…) | LIKE s | … SELECT …`.
fn create(ct: &ast::CreateTable, cx: &mut ExecCtx) -> Result<Outcome> {
    let (db, name) = resolve_table(cx, &ct.name)?;
    if crate::catalog::is_system_schema(&db) || !cx.catalog.database_exists(&db) {
        return Err(Error::UnknownDatabase(db));
    }
    if cx.temp_table(&db, &name).is_some() {
        return crate::statements::ddl::name_in_use(&name, ct.if_not_exists, cx);
    }
    if let Some(q) = &ct.query {
        return crate::statements::create_select::create_table_select(ct, q, cx);
    }
    let def = match &ct.like {
        Some(ast::CreateTableLikeKind::Parenthesized(l) | ast::CreateTableLikeKind::Plain(l)) => {
            crate::statements::ddl::like_def(ct, &l.name, cx)?
        }
        None => crate::statements::ddl::table_def(ct, cx, Vec::new())?,
    };
    check_def(&def)?;
    let engine = cx.catalog.engine(&def.engine)?;
    cx.temp.create(engine, def)?;
    cx.catalog.invalidate_plans();
    Ok(Outcome::ok(0))
}

/// What a temporary table's definition may not hold.
pub(crate) fn check_def(def: &TableDef) -> Result<()> {
    if !def.foreign_keys.is_empty() {
        // InnoDB refuses foreign keys on temporary tables; not guessed here.
        return Err(Error::NotSupported(
            "FOREIGN KEY on a TEMPORARY table".into(),
        ));
    }
    Ok(())
}

/// `DROP TEMPORARY TABLE [IF EXISTS] …`: only temporary tables (a base table of the
/// name is 1051, as MySQL).
fn drop_temporary(names: &[ast::ObjectName], if_exists: bool, cx: &ExecCtx) -> Result<Outcome> {
    let all = names
        .iter()
        .map(|n| resolve_table(cx, n))
        .collect::<Result<Vec<_>>>()?;
    let mut missing = Vec::new();
    for (db, t) in all {
        if !cx.temp.drop_table(&db, &t)? {
            missing.push(format!("{db}.{t}"));
        }
    }
    cx.catalog.invalidate_plans();
    if !missing.is_empty() {
        if if_exists {
            for m in missing {
                cx.env.warn(
                    crate::expr::WarnLevel::Note,
                    1051,
                    format!("Unknown table '{m}'"),
                );
            }
        } else {
            return Err(Error::UnknownTable(missing.join(",")));
        }
    }
    Ok(Outcome::ok(0))
}

/// Drops the names of a plain DROP TABLE that are temporary tables (MySQL drops the
/// temporary one first); the rest are left for the base tables.
pub fn drop_shadowing(all: Vec<(String, String)>, cx: &ExecCtx) -> Result<Vec<(String, String)>> {
    if cx.temp.is_empty() {
        return Ok(all);
    }
    let mut rest = Vec::new();
    let mut dropped = false;
    for (db, t) in all {
        if cx.temp.drop_table(&db, &t)? {
            dropped = true;
        } else {
            rest.push((db, t));
        }
    }
    if dropped {
        cx.catalog.invalidate_plans();
    }
    Ok(rest)
}

/// TRUNCATE of a temporary table: emptied, and AUTO_INCREMENT starts again at 1 (a
/// table created with `AUTO_INCREMENT=n` gets new, empty files of a definition that
/// starts at 1, as the catalog's TRUNCATE rewrites its definition).
pub fn truncate(cx: &ExecCtx, table: &std::sync::Arc<dyn strata_engine::Table>) -> Result<()> {
    if table.def().auto_increment_start > 1 {
        let mut def = TableDef::clone(table.def());
        def.auto_increment_start = 1;
        let engine = cx.catalog.engine(&def.engine)?;
        let made = cx.temp.make(engine, def)?;
        cx.temp.add(made, Some(table))?;
        cx.catalog.invalidate_plans();
        return Ok(());
    }
    let mut locks = TableLocks::default();
    let def = table.def();
    cx.lock_table(&mut locks, &def.db, &def.name, table, LockMode::Write)?;
    table.truncate()
}

/// ALTER TABLE on a temporary table: `RENAME [TO|AS] new` alone renames it; any other
/// form rebuilds it (`alter::alter_temporary`).
fn alter(at: &ast::AlterTable, cx: &mut ExecCtx) -> Result<Outcome> {
    let (db, name) = resolve_table(cx, &at.name)?;
    match at.operations.as_slice() {
        [ast::AlterTableOperation::RenameTable {
            table_name: ast::RenameTableNameKind::To(to) | ast::RenameTableNameKind::As(to),
        }] => {
            let (to_db, to_name) = resolve_table(cx, to)?;
            rename(cx, (&db, &name), (&to_db, &to_name))?;
            Ok(Outcome::ok(0))
        }
        _ => {
            let handle = cx
                .temp_table(&db, &name)
                .ok_or(Error::NoSuchTable { db, table: name })?;
            crate::statements::alter::alter_temporary(at, cx, &handle)
        }
    }
}

fn rename_all(pairs: &[ast::RenameTable], cx: &ExecCtx) -> Result<Outcome> {
    for p in pairs {
        let (db, name) = resolve_table(cx, &p.old_name)?;
        let (to_db, to_name) = resolve_table(cx, &p.new_name)?;
        rename(cx, (&db, &name), (&to_db, &to_name))?;
    }
    Ok(Outcome::ok(0))
}

fn rename(cx: &ExecCtx, from: (&str, &str), to: (&str, &str)) -> Result<()> {
    if !cx.catalog.database_exists(to.0) || crate::catalog::is_system_schema(to.0) {
        return Err(Error::UnknownDatabase(to.0.to_string()));
    }
    crate::catalog::check_name(to.1, false)?;
    cx.temp.rename(from.0, from.1, to)?;
    cx.catalog.invalidate_plans();
    Ok(())
}

/// The text the binary log gets for a DDL statement the session is about to run: None
/// when it is about temporary tables only (nothing is logged), the statement without
/// its temporary tables when a plain DROP TABLE names both kinds, else `source`.
/// Decided before the statement runs, while the names still resolve.
pub fn binlog_text(
    stmt: &ast::Statement,
    source: &str,
    temp: &TempTables,
    current_db: Option<&str>,
) -> Option<String> {
    use ast::Statement as S;
    let is_temp = |n: &ast::ObjectName| match crate::parse::object_name_parts(n).as_slice() {
        [t] => current_db.is_some_and(|db| temp.get(db, t).is_some()),
        [db, t] => temp.get(db, t).is_some(),
        _ => false,
    };
    match stmt {
        S::CreateTable(ct) if ct.temporary => None,
        S::Drop {
            object_type: ast::ObjectType::Table,
            temporary: true,
            ..
        } => None,
        _ if temp.is_empty() => Some(source.to_string()),
        S::Drop {
            object_type: ast::ObjectType::Table,
            if_exists,
            names,
            ..
        } => {
            let rest: Vec<String> = names
                .iter()
                .filter(|n| !is_temp(n))
                .map(|n| n.to_string())
                .collect();
            if rest.is_empty() {
                None
            } else if rest.len() == names.len() {
                Some(source.to_string())
            } else {
                Some(format!(
                    "DROP TABLE {}{}",
                    if *if_exists { "IF EXISTS " } else { "" },
                    rest.join(", ")
                ))
            }
        }
        S::Truncate(t) if t.table_names.iter().all(|n| is_temp(&n.name)) => None,
        S::AlterTable(at) if is_temp(&at.name) => None,
        S::CreateIndex(ci) if is_temp(&ci.table_name) => None,
        S::Drop {
            object_type: ast::ObjectType::Index,
            table: Some(t),
            ..
        } if is_temp(t) => None,
        S::RenameTable(pairs) if pairs.iter().any(|p| is_temp(&p.old_name)) => None,
        _ => Some(source.to_string()),
    }
}
