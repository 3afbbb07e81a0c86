//! DDL that must not break a constraint: DROP TABLE of a referenced table (3730),
//! TRUNCATE of one (1701), and ALTER TABLE ([`reconcile_alter`]): it carries the
//! table's constraints over to the new definition (following renamed columns), drops
//! and adds them, and refuses what would leave one dangling — a dropped column of a
//! foreign key (1828, 1829), a dropped index one needs (1553), a column type another
//! table's key no longer matches (3780), a dropped or renamed column a check uses (3959).
//! Constraints added to a table with rows are checked against those rows first.

use super::checks::CheckClause;
use super::definition::{check_against_parent, leading_index, positions, FkClause};
use super::enforce::Links;
use crate::context::ExecCtx;
use std::sync::Arc;
use strata_engine::{Flow, Table};
use strata_types::{Error, ForeignKeyDef, Result, TableDef, Value};

/// Foreign keys of other tables that refer to `db`.`name`: (child db, child name, key).
pub fn referencing(cx: &ExecCtx, db: &str, name: &str) -> Vec<(String, String, ForeignKeyDef)> {
    let mut out = Vec::new();
    for d in cx.catalog.databases() {
        for t in cx.catalog.tables(&d).unwrap_or_default() {
            let def = t.def();
            if def.db == db && def.name == name {
                continue;
            }
            for fk in def.foreign_keys.iter().filter(|f| f.references(db, name)) {
                out.push((def.db.clone(), def.name.clone(), fk.clone()));
            }
        }
    }
    out
}

/// The other tables with a foreign key that refers to `db`.`name`.
fn referencing_tables(cx: &ExecCtx, db: &str, name: &str) -> Vec<Arc<dyn Table>> {
    let mut out = Vec::new();
    for d in cx.catalog.databases() {
        for t in cx.catalog.tables(&d).unwrap_or_default() {
            let def = t.def();
            if (def.db == db && def.name == name)
                || !def.foreign_keys.iter().any(|f| f.references(db, name))
            {
                continue;
            }
            out.push(t);
        }
    }
    out
}

/// DROP TABLE of `db`.`name`, dropping `also` in the same statement: refused (3730)
/// while a table not being dropped refers to it, unless foreign_key_checks=0.
pub fn check_drop(cx: &ExecCtx, db: &str, name: &str, also: &[(String, String)]) -> Result<()> {
    if !super::fk_checks_on(cx) {
        return Ok(());
    }
    for (cdb, cname, fk) in referencing(cx, db, name) {
        if also.iter().any(|(d, n)| *d == cdb && *n == cname) {
            continue;
        }
        return Err(Error::FkCannotDropParent {
            table: name.to_string(),
            constraint: fk.name,
            child: cname,
        });
    }
    Ok(())
}

/// TRUNCATE of a table another table's foreign key refers to (1701).
pub fn check_truncate(cx: &ExecCtx, db: &str, name: &str) -> Result<()> {
    if !super::fk_checks_on(cx) {
        return Ok(());
    }
    if let Some((cdb, cname, fk)) = referencing(cx, db, name).into_iter().next() {
        return Err(Error::FkTruncate(format!(
            "`{cdb}`.`{cname}`, CONSTRAINT `{}`",
            fk.name
        )));
    }
    Ok(())
}

/// What ALTER TABLE asked of the constraints.
#[derive(Default, Debug)]
pub struct AlterConstraints {
    pub add_fks: Vec<FkClause>,
    pub drop_fks: Vec<String>,
    pub add_checks: Vec<CheckClause>,
    pub drop_checks: Vec<String>,
    /// `DROP CONSTRAINT name` that named no index: a foreign key or a check.
    pub drop_any: Vec<String>,
    /// `ALTER CHECK name [NOT] ENFORCED`.
    pub enforce: Vec<(String, bool)>,
}

/// What [`reconcile_alter`] found beyond the new definition.
pub struct Reconciled {
    /// It added an index to the new definition (the table must then be rebuilt).
    pub added_index: bool,
    /// Tables whose foreign keys refer to this one, with the new definitions that
    /// follow its renamed columns or name: written in the same catalog write as it.
    pub followers: Vec<(Arc<dyn Table>, TableDef)>,
}

/// Carries `old`'s constraints over to `new` (built by ALTER TABLE, `sources[j]` the old
/// position of new column j), applies `ask`, and checks that nothing is left dangling.
pub fn reconcile_alter(
    cx: &ExecCtx,
    handle: &Arc<dyn Table>,
    old: &TableDef,
    new: &mut TableDef,
    sources: &[Option<usize>],
    ask: &AlterConstraints,
) -> Result<Reconciled> {
    let new_name = |i: usize| -> Option<String> {
        sources
            .iter()
            .position(|s| *s == Some(i))
            .map(|j| new.columns[j].name.clone())
    };
    let old_pos = |n: &str| old.column_index(n);
    // DROP CONSTRAINT x: whichever kind has the name.
    let mut drop_fks = ask.drop_fks.clone();
    let mut drop_checks = ask.drop_checks.clone();
    for n in &ask.drop_any {
        if old
            .foreign_keys
            .iter()
            .any(|f| f.name.eq_ignore_ascii_case(n))
        {
            drop_fks.push(n.clone());
        } else if old.checks.iter().any(|c| c.name.eq_ignore_ascii_case(n)) {
            drop_checks.push(n.clone());
        } else {
            return Err(Error::ConstraintNotFound(n.clone()));
        }
    }
    for n in &drop_fks {
        if !old
            .foreign_keys
            .iter()
            .any(|f| f.name.eq_ignore_ascii_case(n))
        {
            return Err(Error::CantDropKey(n.clone()));
        }
    }
    for n in &drop_checks {
        if !old.checks.iter().any(|c| c.name.eq_ignore_ascii_case(n)) {
            return Err(Error::CheckNotFound(n.clone()));
        }
    }
    let mut fks = Vec::new();
    for fk in &old.foreign_keys {
        if drop_fks.iter().any(|n| n.eq_ignore_ascii_case(&fk.name)) {
            continue;
        }
        let mut fk = fk.clone();
        for c in &mut fk.columns {
            match old_pos(c).and_then(new_name) {
                Some(n) => *c = n,
                None => {
                    return Err(Error::FkColumnCannotDrop {
                        column: c.clone(),
                        constraint: fk.name.clone(),
                    })
                }
            }
        }
        if fk.references(&old.db, &old.name) {
            // A self-reference follows the table's own renames.
            for c in &mut fk.parent_columns {
                if let Some(n) = old_pos(c).and_then(new_name) {
                    *c = n;
                }
            }
            fk.parent_db = new.db.clone();
            fk.parent_table = new.name.clone();
        }
        fks.push(fk);
    }
    let mut checks = Vec::new();
    for c in &old.checks {
        if drop_checks.iter().any(|n| n.eq_ignore_ascii_case(&c.name)) {
            continue;
        }
        for col in super::checks::columns_used(c) {
            let kept = old_pos(&col).and_then(new_name);
            if kept.is_none_or(|n| n != old.columns[old_pos(&col).unwrap_or(0)].name) {
                return Err(Error::CheckDependentColumn {
                    check: c.name.clone(),
                    column: col,
                });
            }
        }
        let mut c = c.clone();
        if let Some((_, on)) = ask
            .enforce
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(&c.name))
        {
            c.enforced = *on;
        }
        checks.push(c);
    }
    for (n, _) in &ask.enforce {
        if !old.checks.iter().any(|c| c.name.eq_ignore_ascii_case(n)) {
            return Err(Error::CheckNotFound(n.clone()));
        }
    }
    new.foreign_keys = fks;
    new.checks = checks;
    // Only the btree engine keeps foreign keys: leaving it with one, or while another
    // table's key refers to this one, is 1217 (MySQL and MariaDB).
    let children = referencing_tables(cx, &old.db, &old.name);
    if new.engine != "btree" && (!new.foreign_keys.is_empty() || !children.is_empty()) {
        return Err(Error::FkEngineChange);
    }
    // The table as a parent: other tables' keys must still find their columns and an
    // index, and follow renamed columns (and a renamed table) in the same catalog write.
    let mut followers = Vec::new();
    for child in children {
        let mut def = (**child.def()).clone();
        for fk in def.foreign_keys.iter_mut() {
            if !fk.references(&old.db, &old.name) {
                continue;
            }
            for c in fk.parent_columns.iter_mut() {
                match old_pos(c).map(new_name) {
                    Some(None) => {
                        return Err(Error::FkColumnCannotDropChild {
                            column: c.clone(),
                            constraint: fk.name.clone(),
                            table: def.name.clone(),
                        })
                    }
                    Some(Some(n)) => *c = n,
                    None => {}
                }
            }
            fk.parent_db = new.db.clone();
            fk.parent_table = new.name.clone();
        }
        for fk in def
            .foreign_keys
            .iter()
            .filter(|f| f.references(&new.db, &new.name))
        {
            check_kept(&def, fk, new, old)?;
        }
        if def != **child.def() {
            followers.push((child, def));
        }
    }
    // The table as a child: its own keys still need their index and matching parents.
    for fk in &new.foreign_keys {
        let cols = positions(new, &fk.columns).map_err(Error::KeyColumnMissing)?;
        if leading_index(new, &cols).is_none() {
            return Err(Error::FkDropIndex(dropped_index(old, new, &fk.columns)));
        }
        if fk.references(&new.db, &new.name) {
            check_kept(new, fk, new, old)?;
        } else if let Ok(p) = cx.catalog.table(&fk.parent_db, &fk.parent_table) {
            check_against_parent(new, fk, p.def())?;
        }
    }
    let before = new.indexes.len();
    let had_fks = new.foreign_keys.len();
    super::definition::add_foreign_keys(cx, new, &ask.add_fks)?;
    let had_checks = new.checks.len();
    super::checks::add_checks(cx, new, &ask.add_checks)?;
    super::checks::recheck_fk_columns(new)?;
    // `ALTER CHECK c ENFORCED` of a check that was not: the rows must pass it too.
    let now_enforced: Vec<String> = old
        .checks
        .iter()
        .filter(|c| !c.enforced)
        .filter(|c| {
            ask.enforce
                .iter()
                .any(|(n, on)| *on && n.eq_ignore_ascii_case(&c.name))
        })
        .map(|c| c.name.clone())
        .collect();
    validate_rows(cx, handle, new, sources, had_fks, had_checks, &now_enforced)?;
    Ok(Reconciled {
        added_index: new.indexes.len() != before,
        followers,
    })
}

/// A parent-side check after ALTER: the child's key still matches `parent` (3780), and
/// an index still leads with the referenced columns (1553).
fn check_kept(
    child: &TableDef,
    fk: &ForeignKeyDef,
    parent: &TableDef,
    old: &TableDef,
) -> Result<()> {
    match check_against_parent(child, fk, parent) {
        Err(Error::FkNoParentIndex { .. }) => Err(Error::FkDropIndex(dropped_index(
            old,
            parent,
            &fk.parent_columns,
        ))),
        other => other,
    }
}

/// The name of an index of `old` leading with `cols` that `new` no longer has.
fn dropped_index(old: &TableDef, new: &TableDef, cols: &[String]) -> String {
    let Ok(pos) = positions(old, cols) else {
        return cols.first().cloned().unwrap_or_default();
    };
    old.indexes
        .iter()
        .find(|ix| {
            ix.columns.len() >= pos.len()
                && ix.columns[..pos.len()] == *pos
                && !new
                    .indexes
                    .iter()
                    .any(|n| n.name.eq_ignore_ascii_case(&ix.name))
        })
        .map(|ix| ix.name.clone())
        .unwrap_or_else(|| cols.first().cloned().unwrap_or_default())
}

/// Checks the rows already in the table against the foreign keys (from `fk_from`) and
/// checks (from `check_from`, and those named in `enforced`) ALTER TABLE adds or turns
/// on: 1452 / 3819 as an insert would give.
fn validate_rows(
    cx: &ExecCtx,
    handle: &Arc<dyn Table>,
    new: &TableDef,
    sources: &[Option<usize>],
    fk_from: usize,
    check_from: usize,
    enforced: &[String],
) -> Result<()> {
    let mut fresh = new.clone();
    fresh.foreign_keys = new.foreign_keys[fk_from..].to_vec();
    fresh.checks = new
        .checks
        .iter()
        .enumerate()
        .filter(|(i, c)| {
            *i >= check_from || enforced.iter().any(|n| n.eq_ignore_ascii_case(&c.name))
        })
        .map(|(_, c)| c.clone())
        .collect();
    let checks_on = super::fk_checks_on(cx) && !fresh.foreign_keys.is_empty();
    if !checks_on && !fresh.checks.iter().any(|c| c.enforced) {
        return Ok(());
    }
    let shadow: Arc<dyn Table> = Arc::new(super::checks::DefOnly::new(fresh.clone()));
    let bound = super::checks::bind_checks(&fresh, &fresh.db, &shadow)?;
    let links = if checks_on {
        Links::resolve(cx.catalog, &fresh)
    } else {
        Links::default()
    };
    let ecx = crate::expr::EvalCtx::new(&[], cx.env);
    let mut failure = None;
    handle.scan(cx.txn, &mut |_, row| {
        let new_row: Vec<Value> = sources
            .iter()
            .enumerate()
            .map(|(j, s)| match s {
                Some(i) => row[*i].clone(),
                None => match &fresh.columns[j].default {
                    Some(strata_types::schema::ColumnDefault::Value(v)) => v.clone(),
                    _ => Value::Null,
                },
            })
            .collect();
        let r = super::checks::verify(&bound, &new_row, &ecx)
            .and_then(|()| links.check_parents(cx, None, &new_row));
        match r {
            Ok(()) => Ok(Flow::Continue),
            Err(e) => {
                failure = Some(e);
                Ok(Flow::Stop)
            }
        }
    })?;
    match failure {
        Some(e) => Err(e),
        None => Ok(()),
    }
}
