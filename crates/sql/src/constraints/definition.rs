//! FOREIGN KEY definitions: built from `[CONSTRAINT name] FOREIGN KEY [index] (cols)
//! REFERENCES parent (cols) [ON DELETE …] [ON UPDATE …]` of CREATE TABLE and ALTER TABLE
//! ADD, named (`<table>_ibfk_<n>` when unnamed), and checked the way InnoDB checks them:
//! the referencing columns exist, the referenced table and columns exist (unless
//! `foreign_key_checks=0`, which lets mysqldump create tables in any order), the
//! referenced columns lead an index of the parent (1822), each pair of columns has
//! compatible types (3780), SET NULL is not asked of a NOT NULL column (1830). The
//! referencing columns get an index of their own when none leads with them, named after
//! the constraint (or its index name, or its first column).

use crate::context::ExecCtx;
use sqlparser::ast;
use strata_types::{DataType, Error, FkAction, ForeignKeyDef, IndexDef, Result, TableDef};

/// A FOREIGN KEY clause as read, before it is checked against the tables.
#[derive(Clone, Debug)]
pub struct FkClause {
    /// The CONSTRAINT name, when given.
    pub name: Option<String>,
    /// The index name after FOREIGN KEY, when given.
    pub index_name: Option<String>,
    pub columns: Vec<String>,
    pub parent_db: String,
    pub parent_table: String,
    pub parent_columns: Vec<String>,
    pub on_delete: FkAction,
    pub on_update: FkAction,
}

fn action(a: &Option<ast::ReferentialAction>) -> Result<FkAction> {
    Ok(match a {
        None | Some(ast::ReferentialAction::NoAction) => FkAction::NoAction,
        Some(ast::ReferentialAction::Restrict) => FkAction::Restrict,
        Some(ast::ReferentialAction::Cascade) => FkAction::Cascade,
        Some(ast::ReferentialAction::SetNull) => FkAction::SetNull,
        // InnoDB refuses SET DEFAULT.
        Some(ast::ReferentialAction::SetDefault) => return Err(Error::FkCannotAdd),
    })
}

/// Reads a FOREIGN KEY clause; `constraint` is a CONSTRAINT name given outside it.
pub fn clause(
    cx: &ExecCtx,
    fk: &ast::ForeignKeyConstraint,
    constraint: Option<&str>,
) -> Result<FkClause> {
    let (parent_db, parent_table) = crate::context::resolve_table(cx, &fk.foreign_table)?;
    let name = fk
        .name
        .as_ref()
        .map(|n| n.value.clone())
        .or(constraint.map(str::to_string));
    let columns: Vec<String> = fk.columns.iter().map(|c| c.value.clone()).collect();
    let parent_columns: Vec<String> = fk
        .referred_columns
        .iter()
        .map(|c| c.value.clone())
        .collect();
    if columns.len() != parent_columns.len() || columns.is_empty() {
        return Err(Error::FkWrongDefinition {
            name: name
                .clone()
                .unwrap_or_else(|| "foreign key without name".into()),
            reason: "Key reference and table reference don't match".into(),
        });
    }
    Ok(FkClause {
        name,
        index_name: fk.index_name.as_ref().map(|n| n.value.clone()),
        columns,
        parent_db,
        parent_table,
        parent_columns,
        on_delete: action(&fk.on_delete)?,
        on_update: action(&fk.on_update)?,
    })
}

/// The position of an index of `def` whose leading columns are `cols` (by position), in
/// order: the index that serves lookups by those columns.
pub fn leading_index(def: &TableDef, cols: &[usize]) -> Option<usize> {
    def.indexes
        .iter()
        .position(|ix| ix.columns.len() >= cols.len() && ix.columns[..cols.len()] == *cols)
}

/// Column positions of `names` in `def`, or the first missing name.
pub fn positions(def: &TableDef, names: &[String]) -> std::result::Result<Vec<usize>, String> {
    names
        .iter()
        .map(|n| def.column_index(n).ok_or_else(|| n.clone()))
        .collect()
}

/// Whether a referencing column of type `a` may refer to a column of type `b`
/// (InnoDB: integers of one size and sign, strings of one kind and collation, otherwise
/// the same type).
fn compatible(a: &strata_types::ColumnDef, b: &strata_types::ColumnDef) -> bool {
    use DataType as D;
    match (a.data_type, b.data_type) {
        (D::Char(_) | D::VarChar(_), D::Char(_) | D::VarChar(_)) => a.collation == b.collation,
        (D::Binary(_) | D::VarBinary(_), D::Binary(_) | D::VarBinary(_)) => true,
        (D::Text(_) | D::Blob(_), _) | (_, D::Text(_) | D::Blob(_)) => false,
        (x, y) => x == y,
    }
}

/// Every foreign key name of database `db` (they are unique per database, as InnoDB's).
fn names_in_db(cx: &ExecCtx, db: &str, skip: &str) -> Vec<String> {
    let mut out = Vec::new();
    if let Ok(tables) = cx.catalog.tables(db) {
        for t in tables {
            if t.def().name == skip {
                continue;
            }
            out.extend(
                t.def()
                    .foreign_keys
                    .iter()
                    .map(|f| f.name.to_ascii_lowercase()),
            );
        }
    }
    out
}

/// Adds the foreign keys `clauses` to `def` (a table being created or altered):
/// names them, checks them against their parents (or `def` itself, for a
/// self-reference), and adds an index for the referencing columns where none leads with
/// them. A `heap` table takes none, as MyISAM ignores them.
pub fn add_foreign_keys(cx: &ExecCtx, def: &mut TableDef, clauses: &[FkClause]) -> Result<()> {
    if def.engine != "btree" {
        // MyISAM keeps no foreign keys, but the index for their columns is still made.
        for c in clauses {
            if let Ok(cols) = positions(def, &c.columns) {
                add_child_index(def, c, cols);
            }
        }
        return Ok(());
    }
    let checks_on = super::fk_checks_on(cx);
    let mut taken = names_in_db(cx, &def.db, &def.name);
    taken.extend(def.foreign_keys.iter().map(|f| f.name.to_ascii_lowercase()));
    let mut names = super::GeneratedNames::new(
        &def.name,
        "_ibfk_",
        def.foreign_keys.iter().map(|f| f.name.as_str()),
    );
    for c in clauses {
        let name = names.name(&c.name);
        if taken.contains(&name.to_ascii_lowercase()) {
            return Err(Error::FkDuplicateName(name));
        }
        taken.push(name.to_ascii_lowercase());
        let cols = positions(def, &c.columns).map_err(Error::KeyColumnMissing)?;
        let fk = ForeignKeyDef {
            name: name.clone(),
            columns: cols.iter().map(|&i| def.columns[i].name.clone()).collect(),
            parent_db: c.parent_db.clone(),
            parent_table: c.parent_table.clone(),
            parent_columns: c.parent_columns.clone(),
            on_delete: c.on_delete,
            on_update: c.on_update,
        };
        for &i in &cols {
            if !def.columns[i].nullable
                && (fk.on_delete == FkAction::SetNull || fk.on_update == FkAction::SetNull)
            {
                return Err(Error::FkColumnNotNull {
                    column: def.columns[i].name.clone(),
                    constraint: name,
                });
            }
        }
        let self_ref = fk.references(&def.db, &def.name);
        let parent_def = if self_ref {
            Some(std::sync::Arc::new(def.clone()))
        } else {
            match cx.catalog.table(&fk.parent_db, &fk.parent_table) {
                Ok(t) => Some(t.def().clone()),
                Err(_) if !checks_on => None,
                Err(_) => return Err(Error::FkCannotOpenParent(fk.parent_table.clone())),
            }
        };
        if let Some(p) = &parent_def {
            check_against_parent(def, &fk, p)?;
        }
        add_child_index(def, c, cols);
        def.foreign_keys.push(fk);
    }
    Ok(())
}

/// The index for a foreign key's columns, unless one leads with them already: named by
/// the clause's index name, else its constraint name, else its first column.
fn add_child_index(def: &mut TableDef, c: &FkClause, cols: Vec<usize>) {
    if cols.is_empty() || leading_index(def, &cols).is_some() {
        return;
    }
    let base = c
        .index_name
        .clone()
        .or(c.name.clone())
        .unwrap_or_else(|| def.columns[cols[0]].name.clone());
    let mut n = base.clone();
    let mut k = 2;
    while def.indexes.iter().any(|i| i.name.eq_ignore_ascii_case(&n)) {
        n = format!("{base}_{k}");
        k += 1;
    }
    def.indexes.push(IndexDef {
        invisible: false,
        name: n,
        columns: cols,
        unique: false,
        primary: false,
        comment: String::new(),
    });
}

/// Checks one foreign key of `child` against its parent's definition: the columns
/// exist, have compatible types, and lead an index.
pub fn check_against_parent(child: &TableDef, fk: &ForeignKeyDef, parent: &TableDef) -> Result<()> {
    if parent.engine != "btree" {
        return Err(Error::FkCannotAdd);
    }
    let pcols = positions(parent, &fk.parent_columns).map_err(|c| Error::FkNoParentColumn {
        column: c,
        constraint: fk.name.clone(),
        table: fk.parent_table.clone(),
    })?;
    let ccols = positions(child, &fk.columns).map_err(Error::KeyColumnMissing)?;
    for (&c, &p) in ccols.iter().zip(&pcols) {
        if !compatible(&child.columns[c], &parent.columns[p]) {
            return Err(Error::FkIncompatibleColumns {
                column: child.columns[c].name.clone(),
                referenced: parent.columns[p].name.clone(),
                constraint: fk.name.clone(),
            });
        }
    }
    if leading_index(parent, &pcols).is_none() {
        return Err(Error::FkNoParentIndex {
            constraint: fk.name.clone(),
            table: fk.parent_table.clone(),
        });
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use strata_types::{Collation, ColumnDef};

    fn col(name: &str, t: DataType) -> ColumnDef {
        ColumnDef {
            name: name.into(),
            data_type: t,
            nullable: true,
            default: None,
            auto_increment: false,
            on_update_now: false,
            collation: if t.is_text() {
                Collation::GeneralCi
            } else {
                Collation::Binary
            },
            members: Vec::new(),
            generated: None,
            comment: String::new(),
            real_unsigned: false,
            invisible: Default::default(),
        }
    }

    fn table(name: &str, cols: Vec<ColumnDef>, indexes: Vec<Vec<usize>>) -> TableDef {
        TableDef {
            options: Default::default(),
            db: "d".into(),
            name: name.into(),
            engine: "btree".into(),
            columns: cols,
            indexes: indexes
                .into_iter()
                .enumerate()
                .map(|(i, c)| IndexDef {
                    invisible: false,
                    name: format!("i{i}"),
                    columns: c,
                    unique: i == 0,
                    primary: i == 0,
                    comment: String::new(),
                })
                .collect(),
            auto_increment_start: 1,
            comment: String::new(),
            foreign_keys: vec![],
            checks: vec![],
            instant: None,
            default_collation: Default::default(),
        }
    }

    fn fk(cols: &[&str], pcols: &[&str]) -> ForeignKeyDef {
        ForeignKeyDef {
            name: "fk".into(),
            columns: cols.iter().map(|s| s.to_string()).collect(),
            parent_db: "d".into(),
            parent_table: "p".into(),
            parent_columns: pcols.iter().map(|s| s.to_string()).collect(),
            on_delete: FkAction::NoAction,
            on_update: FkAction::NoAction,
        }
    }

    #[test]
    fn parent_needs_an_index_leading_with_the_columns() {
        let int = DataType::Int { unsigned: false };
        let parent = table("p", vec![col("id", int), col("x", int)], vec![vec![0]]);
        let child = table("c", vec![col("pid", int), col("px", int)], vec![]);
        assert!(check_against_parent(&child, &fk(&["pid"], &["id"]), &parent).is_ok());
        assert!(matches!(
            check_against_parent(&child, &fk(&["px"], &["x"]), &parent),
            Err(Error::FkNoParentIndex { .. })
        ));
        assert!(matches!(
            check_against_parent(&child, &fk(&["px"], &["nope"]), &parent),
            Err(Error::FkNoParentColumn { .. })
        ));
    }

    #[test]
    fn types_must_match_in_size_and_sign() {
        let parent = table(
            "p",
            vec![col("id", DataType::Int { unsigned: false })],
            vec![vec![0]],
        );
        let child = table(
            "c",
            vec![col("pid", DataType::BigInt { unsigned: false })],
            vec![],
        );
        let e = check_against_parent(&child, &fk(&["pid"], &["id"]), &parent).unwrap_err();
        assert_eq!(e.code(), 3780);
        let child = table(
            "c",
            vec![col("pid", DataType::Int { unsigned: true })],
            vec![],
        );
        assert!(check_against_parent(&child, &fk(&["pid"], &["id"]), &parent).is_err());
        let s_parent = table("p", vec![col("id", DataType::VarChar(10))], vec![vec![0]]);
        let s_child = table("c", vec![col("pid", DataType::Char(3))], vec![]);
        assert!(check_against_parent(&s_child, &fk(&["pid"], &["id"]), &s_parent).is_ok());
    }

    #[test]
    fn leading_index_matches_prefixes_in_order() {
        let int = DataType::Int { unsigned: false };
        let t = table(
            "t",
            vec![col("a", int), col("b", int), col("c", int)],
            vec![vec![0], vec![1, 2]],
        );
        assert_eq!(leading_index(&t, &[1]), Some(1));
        assert_eq!(leading_index(&t, &[1, 2]), Some(1));
        assert_eq!(leading_index(&t, &[2]), None);
        assert_eq!(leading_index(&t, &[2, 1]), None);
    }
}
