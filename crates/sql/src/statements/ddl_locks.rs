//! The metadata locks of DDL, taken in one place before any DDL statement runs
//! ([`lock_for_ddl`], called first by `ddl::execute_other`, which every CREATE, DROP,
//! TRUNCATE, ALTER and RENAME statement goes through): the global intention lock for
//! the statement (so FLUSH TABLES WITH READ LOCK holds DDL off), an intention lock on
//! each database involved, and an EXCLUSIVE lock on every table the statement names
//! (or on the database itself for CREATE/DROP DATABASE, plus every table in a dropped
//! one). They are requested together in the one key order, and wait up to
//! `lock_wait_timeout` behind transactions that used those tables (`crate::mdl`).
//!
//! Under LOCK TABLES a table a DDL statement changes must be locked WRITE (1100 if it
//! is not locked, 1099 if locked READ), as in MySQL; the session's SHARED_NO_READ_WRITE
//! lock is then upgraded.

use crate::context::{resolve_table, ExecCtx};
use crate::mdl::{normalize, MdlDuration, MdlKey, MdlMode, MdlRequest};
use crate::parse::object_name_parts;
use sqlparser::ast;
use strata_engine::LockMode;
use strata_types::{Error, Result};

/// What a DDL statement changes.
struct Targets {
    /// Tables (and views) it creates, changes, renames or drops, each with whether it
    /// must exist already (and so, under LOCK TABLES, be locked WRITE): not a table being
    /// created, nor the new name of a rename.
    tables: Vec<(String, String, bool)>,
    /// Databases it creates or drops.
    schemas: Vec<String>,
}

/// Takes the metadata locks `stmt` needs; a statement that is not DDL takes none.
pub fn lock_for_ddl(stmt: &ast::Statement, cx: &ExecCtx) -> Result<()> {
    let Some(t) = targets(stmt, cx)? else {
        return Ok(());
    };
    if let Some(locked) = cx.locked_tables {
        if !t.schemas.is_empty() && stmt_drops_database(stmt) {
            return Err(Error::LockedTablesOrActiveTransaction);
        }
        for (db, name, _) in t.tables.iter().filter(|t| t.2) {
            match locked.get(&(db.clone(), name.clone())) {
                Some(LockMode::Write) => {}
                Some(LockMode::Read) => return Err(Error::TableLockedForRead(name.clone())),
                None => return Err(Error::TableNotLocked(name.clone())),
            }
        }
    }
    cx.mdl.acquire(
        &[MdlRequest::new(
            MdlKey::global(),
            MdlMode::IntentionExclusive,
        )],
        MdlDuration::Statement,
    )?;
    let mut reqs = Vec::new();
    for db in &t.schemas {
        reqs.push(MdlRequest::new(MdlKey::schema(db), MdlMode::Exclusive));
    }
    for (db, name, _) in &t.tables {
        reqs.push(MdlRequest::new(
            MdlKey::schema(db),
            MdlMode::IntentionExclusive,
        ));
        reqs.push(MdlRequest::new(MdlKey::table(db, name), MdlMode::Exclusive));
    }
    normalize(&mut reqs);
    cx.mdl.acquire(&reqs, MdlDuration::Transaction)
}

fn stmt_drops_database(stmt: &ast::Statement) -> bool {
    matches!(
        stmt,
        ast::Statement::Drop {
            object_type: ast::ObjectType::Database | ast::ObjectType::Schema,
            ..
        }
    )
}

fn targets(stmt: &ast::Statement, cx: &ExecCtx) -> Result<Option<Targets>> {
    use ast::Statement as S;
    let resolve = |n: &ast::ObjectName, existing: bool| {
        resolve_table(cx, n).map(|(db, name)| (db, name, existing))
    };
    let table = |n: &ast::ObjectName| resolve(n, true);
    let of_tables = |tables: Vec<(String, String, bool)>| Targets {
        tables,
        schemas: vec![],
    };
    let database = |name: String, with_tables: bool| {
        // Dropping a database drops its tables: each is locked as DROP TABLE would.
        let mut tables: Vec<(String, String, bool)> = match cx.catalog.tables(&name) {
            Ok(ts) if with_tables => ts
                .iter()
                .map(|t| (t.def().db.clone(), t.def().name.clone(), false))
                .collect(),
            _ => vec![],
        };
        // Its views too, so statements reading them finish first.
        if with_tables {
            for v in cx.catalog.views(&name) {
                tables.push((v.db.clone(), v.name.clone(), false));
            }
        }
        Targets {
            tables,
            schemas: vec![name],
        }
    };
    Ok(Some(match stmt {
        S::CreateDatabase { db_name, .. } => database(object_name_parts(db_name).join("."), false),
        S::AlterSchema(a) => {
            match crate::parse::alter_clauses::altered_database(a, cx.current_db.as_deref()) {
                Some(name) => database(name, false),
                None => return Ok(None),
            }
        }
        S::CreateSchema { schema_name, .. } => {
            database(schema_name.to_string().trim_matches('`').to_string(), false)
        }
        S::CreateTable(ct) => of_tables(vec![resolve(&ct.name, false)?]),
        S::CreateView(v) => of_tables(vec![resolve(&v.name, false)?]),
        S::AlterView { name, .. } => of_tables(vec![resolve(name, false)?]),
        S::CreateIndex(ci) => of_tables(vec![table(&ci.table_name)?]),
        S::AlterTable(at) => {
            let mut tables = vec![table(&at.name)?];
            for op in &at.operations {
                if let ast::AlterTableOperation::RenameTable {
                    table_name: ast::RenameTableNameKind::As(n) | ast::RenameTableNameKind::To(n),
                } = op
                {
                    tables.push(resolve(n, false)?);
                }
            }
            of_tables(tables)
        }
        S::RenameTable(renames) => {
            let mut tables = Vec::new();
            for r in renames {
                tables.push(table(&r.old_name)?);
                tables.push(resolve(&r.new_name, false)?);
            }
            of_tables(tables)
        }
        S::Truncate(t) => of_tables(
            t.table_names
                .iter()
                .map(|n| table(&n.name))
                .collect::<Result<_>>()?,
        ),
        S::Drop {
            object_type,
            names,
            table: on,
            ..
        } => match object_type {
            ast::ObjectType::Table | ast::ObjectType::View => {
                of_tables(names.iter().map(table).collect::<Result<_>>()?)
            }
            ast::ObjectType::Index => match on {
                Some(t) => of_tables(vec![table(t)?]),
                None => return Ok(None),
            },
            ast::ObjectType::Database | ast::ObjectType::Schema => match names.first() {
                Some(n) => database(object_name_parts(n).join("."), true),
                None => return Ok(None),
            },
            _ => return Ok(None),
        },
        _ => return Ok(None),
    }))
}

/// The metadata locks of DDL on one table's dependent objects (CREATE / DROP TRIGGER):
/// as [`lock_for_ddl`] takes for a table the statement names.
pub fn lock_table_for_ddl(cx: &ExecCtx, db: &str, table: &str) -> Result<()> {
    if let Some(locked) = cx.locked_tables {
        match locked.get(&(db.to_string(), table.to_string())) {
            Some(LockMode::Write) => {}
            Some(LockMode::Read) => return Err(Error::TableLockedForRead(table.to_string())),
            None => return Err(Error::TableNotLocked(table.to_string())),
        }
    }
    cx.mdl.acquire(
        &[MdlRequest::new(
            MdlKey::global(),
            MdlMode::IntentionExclusive,
        )],
        MdlDuration::Statement,
    )?;
    let mut reqs = vec![
        MdlRequest::new(MdlKey::schema(db), MdlMode::IntentionExclusive),
        MdlRequest::new(MdlKey::table(db, table), MdlMode::Exclusive),
    ];
    normalize(&mut reqs);
    cx.mdl.acquire(&reqs, MdlDuration::Transaction)
}

/// The metadata locks of CREATE / DROP / ALTER PROCEDURE|FUNCTION: the global and
/// schema intention locks and an EXCLUSIVE lock on the routine's name.
pub fn lock_routine_for_ddl(
    cx: &ExecCtx,
    db: &str,
    name: &str,
    kind: crate::catalog::routines::RoutineKind,
) -> Result<()> {
    if cx.locked_tables.is_some() {
        return Err(Error::LockedTablesOrActiveTransaction);
    }
    cx.mdl.acquire(
        &[MdlRequest::new(
            MdlKey::global(),
            MdlMode::IntentionExclusive,
        )],
        MdlDuration::Statement,
    )?;
    let function = kind == crate::catalog::routines::RoutineKind::Function;
    let mut reqs = vec![
        MdlRequest::new(MdlKey::schema(db), MdlMode::IntentionExclusive),
        MdlRequest::new(MdlKey::routine(db, name, function), MdlMode::Exclusive),
    ];
    normalize(&mut reqs);
    cx.mdl.acquire(&reqs, MdlDuration::Transaction)
}
