//! `ONLY_FULL_GROUP_BY` (part of MySQL 8's default sql_mode): a grouped query may show,
//! test in HAVING or sort by a bare column only when it is grouped or *functionally
//! dependent* on the grouped columns, else error 1055 (1140 when the query has no
//! GROUP BY but aggregates). The binder reads every such bare column as "any row of
//! the group" and records where it met it ([`Aggregation::loose`]); this module decides,
//! after the whole block is bound, whether each one is determined by the groups.
//!
//! What determines a column here, as in MySQL 8's functional-dependency analysis:
//! - a GROUP BY expression that is the column itself;
//! - an equality in WHERE or in a join condition with a constant (`c = 5`) or with a
//!   determined column (`t2.a = t1.id`);
//! - a PRIMARY KEY or a UNIQUE key of NOT NULL columns of its table whose columns are
//!   all determined: then every column of that table is.
//!
//! The check errs on the side of accepting: a column of a derived table, view or CTE
//! (whose dependencies MySQL tracks through the inner query) is always accepted, and an
//! equality under an outer join's ON counts as if the join were inner. A query MySQL
//! refuses may so still run here (as before this check existed, with a value of the
//! group), but a query MySQL accepts is never refused.

use super::{Aggregation, Scope};
use crate::expr::{CmpOp, Expr};
use strata_types::{Error, Result};

/// Checks the bare columns `agg` met against the groups, the block's conditions `conds`
/// (WHERE and join conditions, bound in `scope`'s row layout) and the tables' keys.
/// `explicit_group_by`: the query has a GROUP BY clause (1055), else 1140.
pub fn check(
    agg: &Aggregation,
    scope: &Scope,
    conds: &[Expr],
    explicit_group_by: bool,
) -> Result<()> {
    if agg.loose.is_empty() {
        return Ok(());
    }
    let determined = determined_columns(agg, scope, conds);
    for &(clause, expr_no, pos) in &agg.loose {
        let table = &scope.tables[scope.table_of(pos)];
        if determined[pos] || !table.is_base() {
            continue;
        }
        let column = &table.def.columns[pos - table.offset].name;
        return Err(Error::NotFullGroupBy {
            implicit: !explicit_group_by,
            expr_no,
            clause: clause.name(),
            column: format!("{}.{}.{}", table.db, table.alias, column),
        });
    }
    Ok(())
}

/// Which row positions of `scope` the groups determine (see the module comment).
fn determined_columns(agg: &Aggregation, scope: &Scope, conds: &[Expr]) -> Vec<bool> {
    let mut det = vec![false; scope.width()];
    for g in &agg.groups {
        if let Expr::Column(p) = g.1 {
            if let Some(d) = det.get_mut(p) {
                *d = true;
            }
        }
    }
    let mut equalities = Vec::new();
    for c in conds {
        collect_equalities(c, &mut equalities);
    }
    loop {
        let mut changed = false;
        for &(a, b) in &equalities {
            match (a, b) {
                (Side::Column(x), Side::Constant) | (Side::Constant, Side::Column(x)) => {
                    changed |= mark(&mut det, x);
                }
                (Side::Column(x), Side::Column(y)) => {
                    if det.get(x) == Some(&true) {
                        changed |= mark(&mut det, y);
                    }
                    if det.get(y) == Some(&true) {
                        changed |= mark(&mut det, x);
                    }
                }
                (Side::Constant, Side::Constant) => {}
            }
        }
        for t in &scope.tables {
            let keyed = t.def.indexes.iter().any(|ix| {
                (ix.primary
                    || (ix.unique && ix.columns.iter().all(|&c| !t.def.columns[c].nullable)))
                    && ix.columns.iter().all(|&c| det[t.offset + c])
            });
            if keyed {
                for c in 0..t.def.columns.len() {
                    changed |= mark(&mut det, t.offset + c);
                }
            }
        }
        if !changed {
            return det;
        }
    }
}

fn mark(det: &mut [bool], p: usize) -> bool {
    match det.get_mut(p) {
        Some(d) if !*d => {
            *d = true;
            true
        }
        _ => false,
    }
}

/// One side of an equality: a column of the block, or a value fixed for the statement.
#[derive(Clone, Copy, Debug)]
enum Side {
    Column(usize),
    Constant,
}

fn side(e: &Expr) -> Option<Side> {
    match e {
        Expr::Column(p) => Some(Side::Column(*p)),
        Expr::Literal(_) | Expr::Param(_) => Some(Side::Constant),
        _ => None,
    }
}

/// The `=` and `<=>` comparisons among the AND-ed terms of `e`.
fn collect_equalities(e: &Expr, out: &mut Vec<(Side, Side)>) {
    match e {
        Expr::And(a, b) => {
            collect_equalities(a, out);
            collect_equalities(b, out);
        }
        Expr::Cmp(CmpOp::Eq | CmpOp::NullSafeEq, a, b, _) => {
            if let (Some(x), Some(y)) = (side(a), side(b)) {
                out.push((x, y));
            }
        }
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bind::derived::DerivedTable;
    use crate::bind::{GroupedClause, SType, ScopeTable};
    use crate::catalog::rowsource::ReadOnlyTable;
    use std::sync::Arc;
    use strata_engine::Table;
    use strata_types::{Collation, ColumnMeta, FieldType, IndexDef, Value};

    fn key(name: &str, columns: Vec<usize>, primary: bool) -> IndexDef {
        IndexDef {
            invisible: false,
            name: name.into(),
            columns,
            unique: true,
            primary,
            comment: String::new(),
        }
    }

    /// A base table `name` of BIGINT columns (`(name, nullable)`) with `indexes`.
    fn table(
        name: &str,
        cols: &[(&str, bool)],
        indexes: Vec<IndexDef>,
        offset: usize,
    ) -> ScopeTable {
        let metas: Vec<ColumnMeta> = cols
            .iter()
            .map(|c| ColumnMeta::computed(c.0, FieldType::LongLong))
            .collect();
        let handle: Arc<dyn Table> =
            Arc::new(ReadOnlyTable(DerivedTable::new(name, &metas, &[]).unwrap()));
        let mut def = (**handle.def()).clone();
        def.db = "d".into();
        for (c, &(_, nullable)) in def.columns.iter_mut().zip(cols) {
            c.nullable = nullable;
        }
        def.indexes = indexes;
        ScopeTable {
            alias: name.into(),
            db: "d".into(),
            table: handle,
            def: Arc::new(def),
            offset,
            slot: None,
            lateral: None,
            source_meta: None,
        }
    }

    /// t1(id PK, a, u UNIQUE NOT NULL, n UNIQUE NULL) and t2(id PK, t1_id, b).
    fn scope() -> Scope {
        let t1 = table(
            "t1",
            &[("id", false), ("a", true), ("u", false), ("n", true)],
            vec![
                key("PRIMARY", vec![0], true),
                key("u", vec![2], false),
                key("n", vec![3], false),
            ],
            0,
        );
        let t2 = table(
            "t2",
            &[("id", false), ("t1_id", true), ("b", true)],
            vec![key("PRIMARY", vec![0], true)],
            4,
        );
        Scope {
            tables: vec![t1, t2],
            coalesced: vec![],
            star: vec![],
        }
    }

    fn grouped_by(cols: &[usize], loose: &[usize]) -> Aggregation {
        let mut agg = Aggregation::default();
        for &c in cols {
            agg.groups.push((
                format!("c{c}"),
                Expr::Column(c),
                SType::Int,
                Collation::Binary,
            ));
        }
        for (i, &p) in loose.iter().enumerate() {
            agg.loose.push((GroupedClause::SelectList, i + 1, p));
        }
        agg
    }

    fn eq(a: Expr, b: Expr) -> Expr {
        Expr::Cmp(CmpOp::Eq, Box::new(a), Box::new(b), Collation::Binary)
    }

    #[test]
    fn primary_key_determines_its_table_only() {
        let s = scope();
        // GROUP BY t1.id: t1.a is determined, t2.b is not.
        assert!(check(&grouped_by(&[0], &[1, 2, 3]), &s, &[], true).is_ok());
        let err = check(&grouped_by(&[0], &[6]), &s, &[], true).unwrap_err();
        assert_eq!(err.code(), 1055);
        assert!(err.to_string().contains("#1 of SELECT list"), "{err}");
        assert!(err.to_string().contains("'d.t2.b'"), "{err}");
    }

    #[test]
    fn unique_key_counts_only_when_not_null() {
        let s = scope();
        assert!(check(&grouped_by(&[2], &[1]), &s, &[], true).is_ok());
        let err = check(&grouped_by(&[3], &[1]), &s, &[], true).unwrap_err();
        assert_eq!(err.code(), 1055);
    }

    #[test]
    fn equalities_carry_dependence_across_a_join() {
        let s = scope();
        // GROUP BY t2.id: t1.a only through t1.id = t2.t1_id and t1's key.
        let err = check(&grouped_by(&[4], &[1]), &s, &[], true).unwrap_err();
        assert_eq!(err.code(), 1055);
        let join = eq(Expr::Column(0), Expr::Column(5));
        assert!(check(&grouped_by(&[4], &[1]), &s, &[join], true).is_ok());
        // A constant fixes a column: WHERE t1.id = 5, aggregates and no GROUP BY.
        let fixed = eq(Expr::Column(0), Expr::Literal(Value::Int(5)));
        assert!(check(&grouped_by(&[], &[1]), &s, &[fixed], false).is_ok());
        let err = check(&grouped_by(&[], &[1]), &s, &[], false).unwrap_err();
        assert_eq!(err.code(), 1140);
    }

    #[test]
    fn nothing_loose_is_always_fine() {
        assert!(check(&grouped_by(&[], &[]), &scope(), &[], false).is_ok());
    }
}
