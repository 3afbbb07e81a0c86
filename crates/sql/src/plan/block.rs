//! One query block's logical plan: the scope of its FROM clause, one [`Level`] per table in
//! join order with its [`Access`] path and the conditions checked there, grouping
//! ([`GroupPlan`]), projection, ordering, DISTINCT, limits and window functions
//! ([`SelectPlan`]). Built by `planner::block`, shaped by `optimizer`, run by `exec::block`.
//! A plan holds no rows: derived tables name the slot they are materialised into at run time.

use crate::bind::window::WindowPlan;
use crate::bind::{AggSpec, Scope, ScopeTable};
use crate::expr::Expr;
use crate::plan::query::QueryPlan;
use std::sync::Arc;
use strata_engine::{LockWait, ReadMode};
use strata_types::{Collation, ColumnMeta};

/// The columns index `index` of `t` orders its entries by: its own, then — for a
/// secondary index of an engine whose entries end with the primary key
/// ([`strata_engine::Table::secondary_keys_end_with_primary`], InnoDB's "index
/// extensions") — the primary key's, all of them, as the entry holds them. An
/// [`Access::Index`]'s `eq` values and its range column follow this list, so a lookup
/// may go past the index's own columns.
pub fn key_columns(t: &ScopeTable, index: usize) -> std::borrow::Cow<'_, [usize]> {
    let def = &t.def;
    let Some(ix) = def.indexes.get(index) else {
        return std::borrow::Cow::Borrowed(&[]);
    };
    match def.indexes.first() {
        Some(pk) if pk.primary && !ix.primary && t.table.secondary_keys_end_with_primary() => {
            let mut cols = ix.columns.clone();
            cols.extend_from_slice(&pk.columns);
            std::borrow::Cow::Owned(cols)
        }
        _ => std::borrow::Cow::Borrowed(&ix.columns),
    }
}

#[derive(Clone, Debug)]
pub enum Access {
    Scan,
    Index {
        index: usize,
        eq: Vec<Expr>,
        lower: Option<(Expr, bool)>,
        upper: Option<(Expr, bool)>,
        reverse: bool,
    },
    IndexIn {
        index: usize,
        values: Vec<Expr>,
    },
    /// `col IN (SELECT …)`, uncorrelated, on the first column of index `index`: the
    /// subquery (run once per statement, as it is anyway) is materialised and each of
    /// its distinct non-NULL values looked up in the index, instead of reading the whole
    /// table and probing the set per row (MySQL's semi-join materialisation with
    /// lookups). The IN stays among the level's conditions, so the rows are exactly the
    /// filtered scan's; a value the index cannot hold as a key falls back to the scan
    /// ([`crate::optimizer::access`]).
    IndexInSubquery {
        index: usize,
        subquery: usize,
    },
    /// No usable index on an inner table: read it once into a hash join buffer keyed
    /// on these equi-join columns (none: one bucket) and probe it per outer row.
    JoinBuffer {
        keys: Vec<HashKey>,
    },
}

#[derive(Clone, Debug)]
pub struct Level {
    /// The table this level reads (its position in the scope, i.e. in FROM).
    pub table: usize,
    pub access: Access,
    /// Conditions checked once this table's row is in place.
    pub filter: Vec<Expr>,
    /// The table is inside an outer-join group (the inner side of a LEFT JOIN).
    pub outer: bool,
    /// The outer-join groups' conditions checked here, in `chain` order.
    pub on: Vec<Expr>,
    /// (group, how many of `on` are its): the innermost group of this table first,
    /// then enclosing groups while this level is their last ([`crate::plan::join_groups`]).
    pub chain: Vec<(usize, usize)>,
    /// The outer-join group whose first level this is.
    pub starts: Option<usize>,
    /// Indexes a predicate could drive (EXPLAIN's possible_keys).
    pub possible: Vec<usize>,
    /// The columns of the table the block reads (by position in its definition), so
    /// the engine decodes only those; None: every column
    /// ([`crate::optimizer::columns`]).
    pub columns: Option<Vec<bool>>,
}

#[derive(Clone, Debug)]
pub struct GroupPlan {
    pub groups: Vec<(Expr, Collation)>,
    pub aggs: Vec<AggSpec>,
    pub having: Option<Expr>,
    /// WITH ROLLUP: after each run of groups sharing a prefix of the GROUP BY values, a
    /// super-aggregate row over that prefix (the rest NULL), down to the grand total.
    pub rollup: bool,
}

pub struct SelectPlan {
    pub scope: Scope,
    pub levels: Vec<Level>,
    /// Outer-join groups (see [`crate::plan::join_groups`]).
    pub groups: Vec<crate::plan::join_groups::JoinGroup>,
    /// Outer joins or STRAIGHT_JOIN: the levels stay in the FROM clause's order.
    pub fixed_order: bool,
    /// Conditions with no table column (checked once).
    pub const_filter: Vec<Expr>,
    pub group: Option<GroupPlan>,
    /// Output expressions: the visible columns, then hidden sort keys.
    pub projection: Vec<Expr>,
    pub columns: Vec<ColumnMeta>,
    /// ORDER BY as (output position, descending, collation).
    pub order: Vec<(usize, bool, Collation)>,
    /// The access path already yields rows in ORDER BY order.
    pub order_satisfied: bool,
    pub distinct: bool,
    pub limit: Option<Expr>,
    pub offset: Option<Expr>,
    /// `SELECT COUNT(*) FROM t` with nothing else: the engine's exact row count.
    pub count_star_only: bool,
    /// Subqueries in FROM, run at the start of each execution to fill their tables.
    pub derived: Derived,
    /// How the tables are read: consistently, or locking (FOR UPDATE / FOR SHARE).
    pub read_mode: ReadMode,
    /// A locking read's NOWAIT / SKIP LOCKED.
    pub lock_wait: LockWait,
    /// Window functions, computed over the rows the projection reads (FROM rows, or
    /// grouped rows after HAVING); their values follow those rows' columns.
    pub windows: Option<WindowPlan>,
    /// Scope tables whose columns the select list takes through `*` or `t.*`: a
    /// privilege check answers 1142 (the table) rather than 1143 (a column) for them,
    /// as MySQL does.
    pub star_tables: Vec<usize>,
    /// A block of one FROM clause: its join nest and conditions as bound (before
    /// access paths take some), so a block reading it as a derived table or view can
    /// merge it ([`crate::optimizer::derived_merge`]). None: not mergeable.
    pub merge_source: Option<MergeSource>,
    /// The select expressions of the derived tables and views merged into this block:
    /// their columns are checked for privileges as when the query ran on its own.
    pub merged_reads: Vec<Expr>,
}

#[cfg(test)]
impl SelectPlan {
    /// For the optimizer's unit tests: a block over derived tables `t0`, `t1`, … of
    /// these widths (BIGINT columns `c0`, `c1`, …), with nothing else in it yet.
    pub(crate) fn empty_over(widths: &[usize]) -> SelectPlan {
        use crate::bind::derived::DerivedTable;
        use crate::catalog::rowsource::ReadOnlyTable;
        use strata_types::FieldType;
        let mut scope = Scope::default();
        for (i, &w) in widths.iter().enumerate() {
            let metas: Vec<ColumnMeta> = (0..w)
                .map(|c| ColumnMeta::computed(&format!("c{c}"), FieldType::LongLong))
                .collect();
            let name = format!("t{i}");
            let t: Arc<dyn strata_engine::Table> = Arc::new(ReadOnlyTable(
                DerivedTable::new(&name, &metas, &[]).expect("a test table"),
            ));
            scope.push(name, "d".into(), t);
        }
        SelectPlan {
            scope,
            levels: vec![],
            groups: vec![],
            fixed_order: false,
            const_filter: vec![],
            group: None,
            projection: vec![],
            columns: vec![],
            order: vec![],
            order_satisfied: false,
            distinct: false,
            limit: None,
            offset: None,
            count_star_only: false,
            derived: vec![],
            read_mode: ReadMode::Consistent,
            lock_wait: LockWait::Wait,
            windows: None,
            star_tables: vec![],
            merge_source: None,
            merged_reads: vec![],
        }
    }
}

/// What a block reading this one as a derived table needs to merge it: its
/// conditions, outer joins and join order as planned, before outer-join simplification
/// and access paths change them.
#[derive(Clone, Debug, Default)]
pub struct MergeSource {
    /// WHERE and join conditions, each with the outer-join group whose ON it is (None:
    /// WHERE or an inner join's ON).
    pub conds: Vec<(Option<usize>, Expr)>,
    /// The outer-join groups (parents before the groups nested in them).
    pub groups: Vec<crate::plan::join_groups::JoinGroup>,
    /// The scope tables in FROM order (the order the outer joins fix).
    pub order: Vec<usize>,
}

/// The column name MySQL gives an unaliased select item: the column's name, or the
/// expression's text.
/// Derived tables and CTEs a block reads: the slot each is materialized into at run
/// time and the plan that fills it (None: a recursive CTE's work table, filled by the
/// iteration around the block).
pub type Derived = Vec<(usize, Option<Arc<QueryPlan>>)>;

/// One key of a hash join: `probe` (read from the tables before) equals the inner
/// table's `column` under `coll`.
#[derive(Clone, Debug)]
pub struct HashKey {
    pub probe: Expr,
    pub column: usize,
    pub coll: Collation,
}
