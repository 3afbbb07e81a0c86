//! The row alias of MySQL 8.0.19's `INSERT … VALUES (…) AS new [(m, n, …)] ON DUPLICATE KEY
//! UPDATE c = new.c` (what SQLAlchemy and other clients send a MySQL 8 server instead of the
//! deprecated `VALUES(c)`): references to the inserted row through the alias are rewritten
//! into the `__new__<column>` names that [`super::dml`] already binds for `VALUES(c)`, so
//! both spellings share one binding of the new row.

use sqlparser::ast;
use std::ops::ControlFlow;
use strata_types::{Error, Result, TableDef};

/// The names under which an ODKU expression reaches the inserted row.
pub struct RowAlias {
    /// The row alias, e.g. `new` (compared case-insensitively, as table aliases are).
    row: String,
    /// The names of the new row's columns, each with the table column it stands for: the
    /// inserted columns (the column list, or every column), under their column aliases when
    /// the alias has a list. As in MySQL, the alias is a derived table of the VALUES rows,
    /// so a column left out of the column list is not one of its columns.
    columns: Vec<(String, String)>,
    /// Whether the names are column aliases (then they may also be used bare).
    renamed: bool,
}

impl RowAlias {
    /// The alias of `ins`, checked against the target table `def` and the insert's
    /// `columns` (positions in `def`): None when the statement has no row alias.
    pub fn of(ins: &ast::Insert, def: &TableDef, columns: &[usize]) -> Result<Option<RowAlias>> {
        let Some(alias) = &ins.insert_alias else {
            return Ok(None);
        };
        let row = crate::parse::object_name_parts(&alias.row_alias).join(".");
        if row.eq_ignore_ascii_case(&def.name) {
            // MySQL: the alias may not hide the table it inserts into.
            return Err(Error::NonUniqueTable(row));
        }
        let mut named: Vec<(String, String)> = Vec::new();
        let list = alias.col_aliases.as_ref().filter(|l| !l.is_empty());
        if let Some(list) = list {
            if list.len() != columns.len() {
                // The alias is a derived table of the VALUES rows: MySQL's 1353.
                return Err(Error::ViewColumnCount);
            }
            for (a, &pos) in list.iter().zip(columns) {
                if named.iter().any(|(n, _)| n.eq_ignore_ascii_case(&a.value)) {
                    return Err(Error::DuplicateColumn(a.value.clone()));
                }
                named.push((a.value.clone(), def.columns[pos].name.clone()));
            }
        } else {
            for &pos in columns {
                let name = def.columns[pos].name.clone();
                named.push((name.clone(), name));
            }
        }
        Ok(Some(RowAlias {
            row,
            columns: named,
            renamed: list.is_some(),
        }))
    }

    /// The table column that `name` (after the row alias, or bare for a column alias)
    /// names in the new row.
    fn column(&self, name: &str, def: &TableDef, qualified: bool) -> Result<Option<String>> {
        if !qualified && !self.renamed {
            // Bare names are the existing row's unless the alias renamed the columns.
            return Ok(None);
        }
        let hit = self
            .columns
            .iter()
            .find(|(a, _)| a.eq_ignore_ascii_case(name))
            .map(|(_, c)| c.clone());
        if hit.is_some()
            && !qualified
            && def
                .columns
                .iter()
                .any(|c| c.name.eq_ignore_ascii_case(name))
        {
            // A column of the table and of the alias's derived table: ambiguous.
            return Err(Error::AmbiguousColumn {
                column: name.to_string(),
                context: "field list".into(),
            });
        }
        Ok(hit)
    }

    /// Rewrites the references to the new row in `e`; returns whether there were any.
    pub fn rewrite(&self, e: &mut ast::Expr, def: &TableDef) -> Result<bool> {
        let mut found = false;
        let mut failed = None;
        let _ = ast::visit_expressions_mut(e, |x| {
            let target = match x {
                ast::Expr::CompoundIdentifier(parts)
                    if parts.len() == 2 && parts[0].value.eq_ignore_ascii_case(&self.row) =>
                {
                    match self.column(&parts[1].value, def, true) {
                        // `new.nope`: left alone, so the binder names it in its 1054.
                        Ok(c) => c,
                        Err(e) => {
                            failed = Some(e);
                            return ControlFlow::Break(());
                        }
                    }
                }
                ast::Expr::Identifier(id) => match self.column(&id.value, def, false) {
                    Ok(c) => c,
                    Err(e) => {
                        failed = Some(e);
                        return ControlFlow::Break(());
                    }
                },
                _ => None,
            };
            if let Some(col) = target {
                *x = ast::Expr::Identifier(ast::Ident::new(format!("__new__{col}")));
                found = true;
            }
            ControlFlow::Continue(())
        });
        match failed {
            Some(e) => Err(e),
            None => Ok(found),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use strata_types::{Collation, ColumnDef, DataType};

    fn def() -> TableDef {
        let col = |name: &str| ColumnDef {
            name: name.into(),
            data_type: DataType::Int { unsigned: false },
            nullable: true,
            default: None,
            auto_increment: false,
            on_update_now: false,
            collation: Collation::Binary,
            members: Vec::new(),
            generated: None,
            comment: String::new(),
            real_unsigned: false,
            invisible: Default::default(),
        };
        TableDef {
            options: Default::default(),
            db: "d".into(),
            name: "t".into(),
            engine: "btree".into(),
            columns: vec![col("a"), col("b"), col("c")],
            indexes: vec![],
            auto_increment_start: 1,
            comment: String::new(),
            foreign_keys: vec![],
            checks: vec![],
            instant: None,
            default_collation: Default::default(),
        }
    }

    /// The alias of `sql` and its first ODKU expression, rewritten (or the error).
    fn rewritten(sql: &str, columns: &[usize]) -> Result<String> {
        let stmt = crate::parse::parse(sql)?.remove(0);
        let ast::Statement::Insert(ins) = stmt else {
            panic!("not an INSERT: {sql}");
        };
        let Some(ast::OnInsert::DuplicateKeyUpdate(assignments)) = &ins.on else {
            panic!("no ODKU: {sql}");
        };
        let alias = RowAlias::of(&ins, &def(), columns)?.expect("an alias");
        let mut e = assignments[0].value.clone();
        alias.rewrite(&mut e, &def())?;
        Ok(e.to_string())
    }

    #[test]
    fn qualified_names_reach_the_inserted_row() {
        let got = rewritten(
            "INSERT INTO t VALUES (1, 2, 3) AS new ON DUPLICATE KEY UPDATE b = new.b + t.b + b",
            &[0, 1, 2],
        );
        assert_eq!(got.unwrap(), "__new__b + t.b + b");
        // NEW in another case names the same alias.
        let got = rewritten(
            "INSERT INTO t VALUES (1, 2, 3) AS new ON DUPLICATE KEY UPDATE b = NEW.C",
            &[0, 1, 2],
        );
        assert_eq!(got.unwrap(), "__new__c");
    }

    #[test]
    fn column_aliases_follow_the_column_list() {
        let got = rewritten(
            "INSERT INTO t (c, a) VALUES (1, 2) AS r(x, y) ON DUPLICATE KEY UPDATE b = x * r.y",
            &[2, 0],
        );
        assert_eq!(got.unwrap(), "__new__c * __new__a");
    }

    #[test]
    fn refusals_carry_mysql_codes() {
        let code = |sql: &str, cols: &[usize]| rewritten(sql, cols).unwrap_err().code();
        let all = [0, 1, 2];
        assert_eq!(
            code(
                "INSERT INTO t VALUES (1,2,3) AS t ON DUPLICATE KEY UPDATE b = 1",
                &all
            ),
            1066
        );
        assert_eq!(
            code(
                "INSERT INTO t VALUES (1,2,3) AS r(a, y, z) ON DUPLICATE KEY UPDATE b = a",
                &all
            ),
            1052
        );
        assert_eq!(
            code(
                "INSERT INTO t VALUES (1,2,3) AS r(x, y) ON DUPLICATE KEY UPDATE b = x",
                &all
            ),
            1353
        );
        assert_eq!(
            code(
                "INSERT INTO t VALUES (1,2,3) AS r(x, y, X) ON DUPLICATE KEY UPDATE b = x",
                &all
            ),
            1060
        );
    }

    #[test]
    fn columns_outside_the_list_are_not_the_alias_s() {
        // `r.c` is left for the binder, which reports 1054.
        let got = rewritten(
            "INSERT INTO t (a, b) VALUES (1, 2) AS r ON DUPLICATE KEY UPDATE c = r.c + r.a",
            &[0, 1],
        );
        assert_eq!(got.unwrap(), "r.c + __new__a");
    }
}
