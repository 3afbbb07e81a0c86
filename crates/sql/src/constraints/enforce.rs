//! Foreign keys enforced when rows change, as InnoDB enforces them.
//!
//! [`Links`] are the foreign keys around one table, resolved once when a statement is
//! planned (the plan is bound again after any DDL, and the statement holds metadata locks
//! on every table named here): the parents its rows refer to, with the index that finds
//! a parent row, and the children that refer to it, with the index that finds them.
//!
//! - A new or changed child row whose key has no NULL must find its parent row: a
//!   shared-locking read of the parent's index, so a concurrent DELETE of that parent
//!   waits for this transaction to end rather than leave an orphan (1452 otherwise). It is
//!   checked after the row is written, as InnoDB checks it when writing the secondary
//!   index entry: a duplicate key is reported first, and a row may refer to itself.
//! - A parent row deleted, or whose referenced columns change, finds its children with a
//!   locking read of the child's index: RESTRICT / NO ACTION refuse (1451), CASCADE
//!   deletes or updates them, SET NULL nulls their key, each in turn applying the rules of
//!   the child's own children, up to 15 levels (3008). All of it runs in the statement's
//!   transaction, so a failed statement or a ROLLBACK undoes every cascaded change.
//!
//! `foreign_key_checks=0` skips all of it.

use super::definition::{leading_index, positions};
use crate::catalog::Catalog;
use crate::context::{ExecCtx, ReadModeGuard};
use std::sync::Arc;
use strata_engine::{Flow, KeyRange, ReadMode, RowId, Table};
use strata_types::keycode::encode_prefix;
use strata_types::{Error, FkAction, ForeignKeyDef, Result, TableDef, Value};

/// InnoDB's limit on nested cascading actions (`FK_MAX_CASCADE_DEL`).
const MAX_DEPTH: usize = 15;

/// A foreign key of the table, towards its parent.
struct ParentLink {
    fk: ForeignKeyDef,
    /// The referencing columns in this table.
    cols: Vec<usize>,
    /// The parent and the index that finds its rows by the referenced columns; None when
    /// the parent does not exist (created with foreign_key_checks=0): every non-NULL
    /// key then fails.
    parent: Option<(Arc<dyn Table>, usize)>,
}

/// A foreign key of another table (or this one) that refers to this table.
struct ChildLink {
    fk: ForeignKeyDef,
    child_db: String,
    child: Arc<dyn Table>,
    /// The referencing columns in the child, and the child's index leading with them.
    child_cols: Vec<usize>,
    child_index: usize,
    /// The referenced columns in this table.
    parent_cols: Vec<usize>,
}

/// The foreign keys around one table.
#[derive(Default)]
pub struct Links {
    db: String,
    name: String,
    parents: Vec<ParentLink>,
    children: Vec<ChildLink>,
}

/// Every table of the catalog.
fn all_tables(catalog: &Catalog) -> Vec<(String, Arc<dyn Table>)> {
    let mut out = Vec::new();
    for db in catalog.databases() {
        if let Ok(ts) = catalog.tables(&db) {
            out.extend(ts.into_iter().map(|t| (db.clone(), t)));
        }
    }
    out
}

impl Links {
    /// Resolves the foreign keys of `def` and those that refer to it. Empty (and cheap
    /// to test) for a table without any, the common case.
    pub fn resolve(catalog: &Catalog, def: &TableDef) -> Links {
        let mut links = Links {
            db: def.db.clone(),
            name: def.name.clone(),
            ..Default::default()
        };
        if def.engine != "btree" {
            return links;
        }
        for fk in &def.foreign_keys {
            let Ok(cols) = positions(def, &fk.columns) else {
                continue;
            };
            let parent = catalog
                .table(&fk.parent_db, &fk.parent_table)
                .ok()
                .and_then(|p| {
                    let pcols = positions(p.def(), &fk.parent_columns).ok()?;
                    let ix = leading_index(p.def(), &pcols)?;
                    Some((p, ix))
                });
            links.parents.push(ParentLink {
                fk: fk.clone(),
                cols,
                parent,
            });
        }
        for (db, t) in all_tables(catalog) {
            let cdef = t.def().clone();
            for fk in cdef
                .foreign_keys
                .iter()
                .filter(|f| f.references(&def.db, &def.name))
            {
                let (Ok(child_cols), Ok(parent_cols)) = (
                    positions(&cdef, &fk.columns),
                    positions(def, &fk.parent_columns),
                ) else {
                    continue;
                };
                let Some(child_index) = leading_index(&cdef, &child_cols) else {
                    continue;
                };
                links.children.push(ChildLink {
                    fk: fk.clone(),
                    child_db: db.clone(),
                    child: t.clone(),
                    child_cols,
                    child_index,
                    parent_cols,
                });
            }
        }
        links
    }

    pub fn is_empty(&self) -> bool {
        self.parents.is_empty() && self.children.is_empty()
    }

    /// The tables a statement changing this one may read (parents) or change
    /// (children, through cascades), for its metadata locks: (db, name, changes).
    pub fn tables(&self) -> Vec<(String, String, bool)> {
        let mut out = Vec::new();
        for p in &self.parents {
            out.push((p.fk.parent_db.clone(), p.fk.parent_table.clone(), false));
        }
        for c in &self.children {
            let d = c.child.def();
            out.push((d.db.clone(), d.name.clone(), true));
        }
        out
    }

    /// A child row was written (`old` is None for an insert): each foreign key whose
    /// columns changed and hold no NULL must find its parent row.
    pub fn check_parents(&self, cx: &ExecCtx, old: Option<&[Value]>, new: &[Value]) -> Result<()> {
        if self.parents.is_empty() || !super::fk_checks_on(cx) {
            return Ok(());
        }
        for p in &self.parents {
            if p.cols.iter().any(|&c| new[c].is_null()) {
                continue;
            }
            if let Some(old) = old {
                if p.cols.iter().all(|&c| old[c] == new[c]) {
                    continue;
                }
            }
            let found = match &p.parent {
                None => false,
                Some((parent, ix)) => {
                    let values: Vec<Value> = p.cols.iter().map(|&c| new[c].clone()).collect();
                    let pdef = parent.def();
                    let mut key = Vec::new();
                    if encode_prefix(&mut key, pdef, &pdef.indexes[*ix], &values) {
                        let _mode = ReadModeGuard::set(cx.txn, ReadMode::LockShared);
                        let mut hit = false;
                        parent.index_scan(
                            cx.txn,
                            *ix,
                            &KeyRange::prefix(key),
                            false,
                            &mut |_, _| {
                                hit = true;
                                Ok(Flow::Stop)
                            },
                        )?;
                        hit
                    } else {
                        false
                    }
                }
            };
            if !found {
                return Err(Error::FkNoParent(describe(&self.db, &self.name, &p.fk)));
            }
        }
        Ok(())
    }

    /// A row of this table is about to be deleted: apply the ON DELETE rule of every
    /// foreign key that refers to it.
    pub fn before_delete(&self, cx: &ExecCtx, row: &[Value]) -> Result<()> {
        if self.children.is_empty() || !super::fk_checks_on(cx) {
            return Ok(());
        }
        let mut path = vec![(self.db.clone(), self.name.clone(), row.to_vec())];
        self.on_parent_change(cx, row, None, 0, &mut path)
    }

    /// A row of this table is about to change from `old` to `new`: apply the ON UPDATE
    /// rule of every foreign key whose referenced columns change.
    pub fn before_update(&self, cx: &ExecCtx, old: &[Value], new: &[Value]) -> Result<()> {
        if self.children.is_empty() || !super::fk_checks_on(cx) {
            return Ok(());
        }
        let mut path = vec![(self.db.clone(), self.name.clone(), old.to_vec())];
        self.on_parent_change(cx, old, Some(new), 0, &mut path)
    }

    /// The referential actions for one parent row: deleted (`new` None) or updated.
    /// `path` holds the rows being changed by the enclosing actions, which a
    /// self-referencing key must not meet again.
    fn on_parent_change(
        &self,
        cx: &ExecCtx,
        old: &[Value],
        new: Option<&[Value]>,
        depth: usize,
        path: &mut Vec<(String, String, Vec<Value>)>,
    ) -> Result<()> {
        for c in &self.children {
            if c.parent_cols.iter().any(|&p| old[p].is_null()) {
                continue;
            }
            if let Some(new) = new {
                // Only a change of the referenced values concerns the children (a
                // change the collation sees as equal still changes the bytes).
                if c.parent_cols.iter().all(|&p| old[p] == new[p]) {
                    continue;
                }
            }
            let action = match new {
                None => c.fk.on_delete,
                Some(_) => c.fk.on_update,
            };
            let cdef = c.child.def().clone();
            let values: Vec<Value> = c.parent_cols.iter().map(|&p| old[p].clone()).collect();
            let mut key = Vec::new();
            if !encode_prefix(&mut key, &cdef, &cdef.indexes[c.child_index], &values) {
                continue;
            }
            let restrict = matches!(action, FkAction::Restrict | FkAction::NoAction);
            let mode = if restrict {
                ReadMode::LockShared
            } else {
                ReadMode::LockExclusive
            };
            let mut rows: Vec<(RowId, Vec<Value>)> = Vec::new();
            {
                let _mode = ReadModeGuard::set(cx.txn, mode);
                c.child.index_scan(
                    cx.txn,
                    c.child_index,
                    &KeyRange::prefix(key),
                    false,
                    &mut |id, vals| {
                        rows.push((id, vals.to_vec()));
                        Ok(Flow::Continue)
                    },
                )?;
            }
            // A row of a self-referencing table that the enclosing actions are already
            // changing (it refers to itself, or to a row on the path) is not a child.
            rows.retain(|(_, r)| {
                !path
                    .iter()
                    .any(|(d, n, p)| *d == cdef.db && *n == cdef.name && p == r)
            });
            if rows.is_empty() {
                continue;
            }
            if restrict {
                return Err(Error::FkRowIsReferenced(describe(
                    &c.child_db,
                    &cdef.name,
                    &c.fk,
                )));
            }
            if depth + 1 > MAX_DEPTH {
                return Err(Error::FkDepthExceeded);
            }
            let child_links = Links::resolve(cx.catalog, &cdef);
            for (id, row) in rows {
                cx.txn.check_interrupt()?;
                let changed: Option<Vec<Value>> = match (action, new) {
                    (FkAction::Cascade, None) => None,
                    (FkAction::Cascade, Some(new)) => {
                        let mut r = row.clone();
                        for (&cc, &pc) in c.child_cols.iter().zip(&c.parent_cols) {
                            r[cc] = new[pc].clone();
                        }
                        Some(r)
                    }
                    _ => {
                        let mut r = row.clone();
                        for &cc in &c.child_cols {
                            r[cc] = Value::Null;
                        }
                        Some(r)
                    }
                };
                path.push((cdef.db.clone(), cdef.name.clone(), row.clone()));
                let done =
                    child_links.on_parent_change(cx, &row, changed.as_deref(), depth + 1, path);
                path.pop();
                done?;
                match changed {
                    None => c.child.delete(cx.txn, id, &row)?,
                    Some(r) => {
                        c.child.update(cx.txn, id, &row, &r)?;
                    }
                }
            }
        }
        Ok(())
    }
}

/// The constraint as InnoDB names it in 1451/1452: `` `db`.`child`, CONSTRAINT `fk`
/// FOREIGN KEY (`c`) REFERENCES `parent` (`id`) `` and its actions.
pub fn describe(db: &str, table: &str, fk: &ForeignKeyDef) -> String {
    format!(
        "{}.{}, {}",
        quote(db),
        quote(table),
        super::show::fk_clause(fk, db, true)
    )
}

fn quote(n: &str) -> String {
    format!("`{}`", n.replace('`', "``"))
}
