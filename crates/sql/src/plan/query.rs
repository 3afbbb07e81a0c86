//! The plan of a query expression above the query block: `WITH` (CTEs, recursive ones
//! too), set operations (`UNION`, `INTERSECT`, `EXCEPT`, with `ALL`/`DISTINCT`),
//! parenthesised queries with their own `ORDER BY`/`LIMIT`, and the subqueries of a
//! statement.
//!
//! A statement's plan ([`QueryStatement`]) is a tree of [`QueryPlan`] nodes whose leaves
//! are query blocks ([`SelectPlan`]: one FROM/WHERE/GROUP BY/select list), plus a table
//! of every subquery in it, found by id from the expressions that use them
//! ([`crate::expr::Subquery`]). Derived tables and CTEs get a materialization slot; the
//! rows live in the execution's state (`exec::executor`), never in the plan, so a cached
//! plan can be run by one execution after another.

use crate::expr::Expr;
use crate::plan::block::SelectPlan;
use std::sync::Arc;
use strata_engine::Table;
use strata_types::{Collation, ColumnMeta, Error, Result};

/// A set operator.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SetOp {
    Union,
    Intersect,
    Except,
}

/// One node of a query expression.
pub enum QueryPlan {
    Block(Box<SelectPlan>),
    SetOp(Box<SetOpPlan>),
    /// A parenthesised query or set operation with its own ORDER BY / LIMIT.
    Ordered(Box<OrderedPlan>),
    /// The body of a recursive CTE: the anchor once, then the step until it adds no row.
    Recursive(Box<RecursivePlan>),
}

pub struct SetOpPlan {
    pub op: SetOp,
    /// DISTINCT (the default) removes duplicate rows; ALL keeps them (and, for
    /// INTERSECT/EXCEPT ALL, counts them).
    pub distinct: bool,
    pub left: QueryPlan,
    pub right: QueryPlan,
    pub columns: Vec<ColumnMeta>,
}

pub struct OrderedPlan {
    pub input: QueryPlan,
    /// (column position, descending, collation)
    pub order: Vec<(usize, bool, Collation)>,
    pub limit: Option<Expr>,
    pub offset: Option<Expr>,
}

pub struct RecursivePlan {
    pub anchor: QueryPlan,
    pub step: QueryPlan,
    pub distinct: bool,
    /// The slot the step's self-reference reads: the rows of the previous iteration.
    pub work_slot: usize,
    pub columns: Vec<ColumnMeta>,
}

impl QueryPlan {
    pub fn columns(&self) -> &[ColumnMeta] {
        match self {
            QueryPlan::Block(b) => &b.columns,
            QueryPlan::SetOp(s) => &s.columns,
            QueryPlan::Ordered(o) => o.input.columns(),
            QueryPlan::Recursive(r) => &r.columns,
        }
    }

    /// Whether some block of this query reads `FOR UPDATE`: a write as far as a READ
    /// ONLY transaction is concerned (MySQL gives 1792 for it; `FOR SHARE` is allowed).
    pub fn locks_for_update(&self) -> bool {
        match self {
            QueryPlan::Block(b) => b.read_mode == strata_engine::ReadMode::LockExclusive,
            QueryPlan::SetOp(s) => s.left.locks_for_update() || s.right.locks_for_update(),
            QueryPlan::Ordered(o) => o.input.locks_for_update(),
            QueryPlan::Recursive(r) => r.anchor.locks_for_update() || r.step.locks_for_update(),
        }
    }

    /// The single block, when the query is one (EXPLAIN, the sysbench fast path).
    pub fn as_block(&self) -> Option<&SelectPlan> {
        match self {
            QueryPlan::Block(b) => Some(b),
            _ => None,
        }
    }
}

/// An engine table a statement reads: database, table name, handle.
pub type ReadTable = (String, String, Arc<dyn Table>);

/// A bound query statement: the root query, every subquery by id, and what locking it
/// needs.
pub struct QueryStatement {
    pub root: QueryPlan,
    pub subqueries: Vec<Arc<QueryPlan>>,
    /// Materialization slots the execution state must have.
    pub slots: usize,
    /// Every engine table the statement reads (locked once, for the whole statement).
    pub tables: Vec<ReadTable>,
    /// The views it reads through, (database, name): they take metadata locks only.
    pub views: Vec<(String, String)>,
    /// `SELECT SQL_CALC_FOUND_ROWS … LIMIT`: the outermost LIMIT and OFFSET, taken off
    /// the root so every row is produced; the executor sends only the rows inside them
    /// and counts all, which FOUND_ROWS() then returns.
    pub found_rows_limit: Option<FoundRowsLimit>,
}

/// The outermost `LIMIT`/`OFFSET` of a `SQL_CALC_FOUND_ROWS` query.
pub struct FoundRowsLimit {
    pub limit: Option<Expr>,
    pub offset: Option<Expr>,
}

impl QueryStatement {
    pub fn columns(&self) -> &[ColumnMeta] {
        self.root.columns()
    }
}

/// The subqueries of an UPDATE or DELETE (by id) and the tables they read.
#[derive(Default)]
pub struct SubqueryPlans {
    pub subqueries: Vec<Arc<QueryPlan>>,
    pub tables: Vec<ReadTable>,
    /// Views its subqueries read through.
    pub views: Vec<(String, String)>,
}

impl SubqueryPlans {
    /// MySQL's rule for a statement that changes `db.name`: its subqueries may not read
    /// that table in their own FROM (1093), since they would see rows the statement is
    /// changing; reading it through a derived table is allowed, as the derived table is
    /// materialized before the first change.
    pub fn check_target_not_read(&self, db: &str, name: &str) -> Result<()> {
        fn reads(plan: &QueryPlan, db: &str, name: &str) -> bool {
            match plan {
                QueryPlan::Block(b) => b.scope.tables.iter().any(|t| {
                    t.is_base()
                        && t.db.eq_ignore_ascii_case(db)
                        && t.def.name.eq_ignore_ascii_case(name)
                }),
                QueryPlan::SetOp(s) => reads(&s.left, db, name) || reads(&s.right, db, name),
                QueryPlan::Ordered(o) => reads(&o.input, db, name),
                QueryPlan::Recursive(r) => reads(&r.anchor, db, name) || reads(&r.step, db, name),
            }
        }
        match self.subqueries.iter().any(|p| reads(p, db, name)) {
            true => Err(Error::TargetTableRead(name.to_string())),
            false => Ok(()),
        }
    }
}
