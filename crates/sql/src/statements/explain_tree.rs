//! EXPLAIN FORMAT=TREE: the physical plan as MySQL 8 prints it, one row with one column
//! named `EXPLAIN` holding an indented tree, one operator per line:
//!
//! ```text
//! -> Sort: revenue DESC
//!     -> Table scan on <temporary>
//!         -> Aggregate using temporary table
//!             -> Nested loop inner join  (cost=4520 rows=1500)
//!                 -> Filter: (customer.c_mktsegment = 'BUILDING')  (cost=1500 rows=150)
//!                     -> Table scan on customer  (cost=1500 rows=1500)
//!                 -> Index lookup on orders using o_custkey (o_custkey=customer.c_custkey)  (cost=3020 rows=10)
//! ```
//!
//! Built from the same plan the executor runs: per join level its access path (table
//! scan, index lookup, single-row lookup, range, hash join buffer), the conditions
//! checked there as a `Filter`, levels nested-loop (or hash) joined left-deep in join
//! order; above them grouping, windows, DISTINCT, sort and limit as the operator chain
//! of `exec::ops` applies them; subqueries under the operator whose expression holds
//! them (`Select #2 (subquery in condition; dependent)`), derived tables and CTEs
//! under a `Materialize`. Costs and row counts are Strata's own estimates
//! (`optimizer::join_order`'s cost model, in units of one row read by a scan), not
//! MySQL's figures: the shape and the wording follow MySQL, the numbers do not.

use super::explain_expr::{agg_name, text, Names};
use crate::context::{ExecCtx, Outcome};
use crate::expr::Expr;
use crate::optimizer::join_order::{access_rows, table_stats, LOOKUP, PROBE, ROW};
use crate::plan::block::{Access, Level, SelectPlan};
use crate::plan::query::{QueryPlan, QueryStatement, SetOp};
use std::cell::RefCell;
use std::collections::HashMap;
use std::sync::Arc;
use strata_types::{ColumnMeta, EndInfo, FieldType, QueryOutput, Result, Value};

/// One operator of the tree: its line, its estimate, its inputs.
struct Node {
    line: String,
    /// (cost, rows) when estimated.
    estimate: Option<(f64, f64)>,
    children: Vec<Node>,
}

impl Node {
    fn new(line: impl Into<String>, children: Vec<Node>) -> Node {
        Node {
            line: line.into(),
            estimate: None,
            children,
        }
    }

    fn costed(line: impl Into<String>, cost: f64, rows: f64, children: Vec<Node>) -> Node {
        Node {
            line: line.into(),
            estimate: Some((cost, rows)),
            children,
        }
    }

    fn render(&self, depth: usize, out: &mut String) {
        out.push_str(&" ".repeat(depth * 4));
        out.push_str("-> ");
        out.push_str(&self.line);
        if let Some((cost, rows)) = self.estimate {
            out.push_str(&format!("  (cost={} rows={})", number(cost), number(rows)));
        }
        out.push('\n');
        for c in &self.children {
            c.render(depth + 1, out);
        }
    }
}

/// An estimate as MySQL prints one: two decimals for small figures, whole numbers for
/// large ones, three significant digits below one.
fn number(x: f64) -> String {
    if x >= 100.0 {
        format!("{:.0}", x)
    } else if x >= 1.0 || x == 0.0 {
        let s = format!("{:.2}", x);
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        format!("{:.3}", x)
            .trim_end_matches('0')
            .trim_end_matches('.')
            .to_string()
    }
}

/// EXPLAIN FORMAT=TREE of a query statement (see the module comment).
pub fn explain_tree(
    stmt: &QueryStatement,
    cx: &ExecCtx,
    out: &mut dyn QueryOutput,
) -> Result<Outcome> {
    let tree = Tree {
        stmt,
        cx,
        ids: RefCell::new(HashMap::new()),
        next_id: RefCell::new(1),
    };
    let root = tree.query(&stmt.root, &[])?;
    let mut s = String::new();
    root.render(0, &mut s);
    out.columns(&[ColumnMeta::computed("EXPLAIN", FieldType::VarString)])?;
    out.row(&[Value::str(&s)])?;
    out.end(&EndInfo::default())?;
    Ok(Outcome {
        ok: None,
        rows_sent: 1,
        generated_id: None,
    })
}

struct Tree<'s, 'c> {
    stmt: &'s QueryStatement,
    cx: &'s ExecCtx<'c>,
    /// The `#N` of each subquery shown (by id in the statement's table).
    ids: RefCell<HashMap<usize, u64>>,
    /// The last block number given (the outermost block is #1).
    next_id: RefCell<u64>,
}

/// Where a subquery is used, which MySQL's line names.
#[derive(Clone, Copy)]
enum Place {
    Condition,
    Projection,
}

impl Tree<'_, '_> {
    fn new_id(&self) -> u64 {
        let mut n = self.next_id.borrow_mut();
        *n += 1;
        *n
    }

    fn subquery_id(&self, id: usize) -> u64 {
        if let Some(n) = self.ids.borrow().get(&id) {
            return *n;
        }
        let n = self.new_id();
        self.ids.borrow_mut().insert(id, n);
        n
    }

    /// A query expression; `outer` names the values a correlated one reads.
    fn query(&self, q: &QueryPlan, outer: &[String]) -> Result<Node> {
        match q {
            QueryPlan::Block(b) => self.block(b, outer),
            QueryPlan::Ordered(o) => {
                let mut node = self.query(&o.input, outer)?;
                let cols = o.input.columns();
                if !o.order.is_empty() {
                    let keys = o
                        .order
                        .iter()
                        .map(|(p, desc, _)| {
                            let name = cols.get(*p).map(|c| c.name.clone()).unwrap_or_default();
                            if *desc {
                                format!("{name} DESC")
                            } else {
                                name
                            }
                        })
                        .collect::<Vec<_>>()
                        .join(", ");
                    node = Node::new(format!("Sort: {keys}"), vec![node]);
                }
                Ok(self.limit(node, o.limit.as_ref(), o.offset.as_ref()))
            }
            QueryPlan::SetOp(s) => {
                let word = match s.op {
                    SetOp::Union => "union",
                    SetOp::Intersect => "intersect",
                    SetOp::Except => "except",
                };
                let parts = vec![self.query(&s.left, outer)?, self.query(&s.right, outer)?];
                Ok(match (s.op, s.distinct) {
                    // MySQL 8 streams UNION ALL: no temporary table.
                    (SetOp::Union, false) => Node::new("Append", parts),
                    (_, distinct) => {
                        let mut title = word.to_string();
                        title[..1].make_ascii_uppercase();
                        let how = if distinct {
                            " materialize with deduplication"
                        } else {
                            " all materialize"
                        };
                        Node::new(
                            format!("Table scan on <{word} temporary>"),
                            vec![Node::new(format!("{title}{how}"), parts)],
                        )
                    }
                })
            }
            QueryPlan::Recursive(r) => {
                let parts = vec![
                    self.query(&r.anchor, outer)?,
                    Node::new(
                        "Repeat until convergence",
                        vec![self.query(&r.step, outer)?],
                    ),
                ];
                let how = if r.distinct {
                    "Union materialize with deduplication"
                } else {
                    "Union all materialize"
                };
                Ok(Node::new(how, parts))
            }
        }
    }

    fn limit(&self, node: Node, limit: Option<&Expr>, offset: Option<&Expr>) -> Node {
        let no_names = Names {
            column: &|_| "?".into(),
            outer: &|_| "?".into(),
            subquery: &|_| 0,
        };
        let value = |e: &Expr| match e {
            Expr::Literal(v) => v.to_text(),
            Expr::Cached(v) => v.to_text(),
            other => text(other, &no_names),
        };
        match (limit, offset) {
            (None, None) => node,
            (Some(l), None) => Node::new(format!("Limit: {} row(s)", value(l)), vec![node]),
            (l, Some(o)) => Node::new(
                format!(
                    "Limit/Offset: {}/{} row(s)",
                    l.map(value).unwrap_or_else(|| u64::MAX.to_string()),
                    value(o)
                ),
                vec![node],
            ),
        }
    }

    /// The subqueries `e` holds, each shown under the operator that evaluates it.
    fn subqueries_in(
        &self,
        e: &Expr,
        place: Place,
        names: &Names,
        found: &mut Vec<Node>,
    ) -> Result<()> {
        let mut subs = Vec::new();
        e.walk(&mut |x| {
            if let Expr::Subquery(s) = x {
                subs.push((s.id, s.correlated.clone()));
            }
        });
        for (id, correlated) in subs {
            let Some(plan) = self.stmt.subqueries.get(id) else {
                continue;
            };
            let n = self.subquery_id(id);
            let outer: Vec<String> = correlated.iter().map(|c| text(c, names)).collect();
            let how = match (place, outer.is_empty()) {
                (Place::Condition, true) => "subquery in condition; run only once",
                (Place::Condition, false) => "subquery in condition; dependent",
                (Place::Projection, true) => "subquery in projection; run only once",
                (Place::Projection, false) => "subquery in projection; dependent",
            };
            let inner = self.query(plan, &outer)?;
            found.push(Node::new(format!("Select #{n} ({how})"), vec![inner]));
        }
        Ok(())
    }

    fn block(&self, plan: &SelectPlan, outer: &[String]) -> Result<Node> {
        let scope_name = |p: usize| {
            if p >= plan.scope.width() {
                return "?".to_string();
            }
            let (t, c) = plan.scope.column(p);
            format!("{}.{}", t.alias, c.name)
        };
        let outer_name = |i: usize| outer.get(i).cloned().unwrap_or_else(|| "?".into());
        let sub_id = |id: usize| self.subquery_id(id);
        let names = Names {
            column: &scope_name,
            outer: &outer_name,
            subquery: &sub_id,
        };
        let derived: HashMap<usize, Arc<QueryPlan>> = plan
            .derived
            .iter()
            .filter_map(|(slot, p)| p.clone().map(|p| (*slot, p)))
            .collect();
        let mut node = self.join(plan, &names, &derived)?;

        // Above the join, the operators exec::block chains, in its order.
        if let Some(g) = &plan.group {
            let group_name = |p: usize| -> String {
                if p < g.groups.len() {
                    return text(&g.groups[p].0, &names);
                }
                match g.aggs.get(p - g.groups.len()) {
                    Some(a) => {
                        let arg = match &a.arg {
                            Some(e) => text(e, &names),
                            None => "0".into(),
                        };
                        let distinct = if a.distinct { "distinct " } else { "" };
                        format!("{}({distinct}{arg})", agg_name(a.func))
                    }
                    None => "?".into(),
                }
            };
            let aggs = (g.groups.len()..g.groups.len() + g.aggs.len())
                .map(group_name)
                .collect::<Vec<_>>()
                .join(", ");
            node = if g.groups.is_empty() {
                Node::new(format!("Aggregate: {aggs}"), vec![node])
            } else {
                let what = if g.rollup {
                    "Aggregate using temporary table (with rollup)"
                } else {
                    "Aggregate using temporary table"
                };
                Node::new(
                    "Table scan on <temporary>",
                    vec![Node::new(what, vec![node])],
                )
            };
            if let Some(h) = &g.having {
                let grouped = Names {
                    column: &group_name,
                    outer: &outer_name,
                    subquery: &sub_id,
                };
                let mut children = vec![node];
                self.subqueries_in(h, Place::Condition, &names, &mut children)?;
                node = Node::new(format!("Filter: {}", text(h, &grouped)), children);
            }
            let sorted = self.finish(plan, node, &group_name, &names)?;
            return Ok(sorted);
        }
        self.finish(plan, node, &scope_name, &names)
    }

    /// Windows, projection subqueries, DISTINCT, ORDER BY and LIMIT above `node`;
    /// `column` names a position of the rows the projection reads.
    fn finish(
        &self,
        plan: &SelectPlan,
        mut node: Node,
        column: &dyn Fn(usize) -> String,
        names: &Names,
    ) -> Result<Node> {
        if let Some(w) = &plan.windows {
            let sorts = w
                .windows
                .iter()
                .any(|win| !win.partition.is_empty() || !win.order.is_empty());
            node = Node::new("Window aggregate", vec![node]);
            if sorts {
                node = Node::new(
                    "Table scan on <temporary>",
                    vec![Node::new("Temporary table", vec![node])],
                );
            }
        }
        let mut subs = Vec::new();
        for e in &plan.projection {
            self.subqueries_in(e, Place::Projection, names, &mut subs)?;
        }
        if !subs.is_empty() {
            node.children.extend(subs);
        }
        if plan.distinct {
            node = Node::new(
                "Table scan on <temporary>",
                vec![Node::new("Temporary table with deduplication", vec![node])],
            );
        }
        if !plan.order.is_empty() && !plan.order_satisfied {
            let projected = Names {
                column,
                outer: names.outer,
                subquery: names.subquery,
            };
            let visible = plan.columns.len();
            let keys = plan
                .order
                .iter()
                .map(|(p, desc, _)| {
                    // A visible column is named as the select list names it (MySQL
                    // prints the alias); a hidden sort key by its expression.
                    let name = match (plan.columns.get(*p), plan.projection.get(*p)) {
                        // A grouped or table column by its name, an aggregate or
                        // expression of the select list by its alias.
                        (Some(c), Some(Expr::Column(q))) if *p < visible => {
                            let n = column(*q);
                            match n.contains('(') {
                                true => c.name.clone(),
                                false => n,
                            }
                        }
                        (Some(c), _) if *p < visible => c.name.clone(),
                        (_, Some(e)) => text(e, &projected),
                        _ => "?".into(),
                    };
                    if *desc {
                        format!("{name} DESC")
                    } else {
                        name
                    }
                })
                .collect::<Vec<_>>()
                .join(", ");
            node = Node::new(format!("Sort: {keys}"), vec![node]);
        }
        Ok(self.limit(node, plan.limit.as_ref(), plan.offset.as_ref()))
    }

    /// The FROM clause: levels in join order, left-deep.
    fn join(
        &self,
        plan: &SelectPlan,
        names: &Names,
        derived: &HashMap<usize, Arc<QueryPlan>>,
    ) -> Result<Node> {
        let cx = self.cx;
        if plan.levels.is_empty() {
            let base = Node::new("Rows fetched before execution", vec![]);
            return self.filtered(base, &plan.const_filter, names, None);
        }
        if plan.count_star_only {
            let t = &plan.scope.tables[plan.levels[0].table];
            return Ok(Node::new(format!("Count rows in {}", t.alias), vec![]));
        }
        let all_stats: Option<Vec<_>> = plan
            .scope
            .tables
            .iter()
            .map(|t| table_stats(cx, &t.table))
            .collect();
        let mut acc: Option<Node> = None;
        // Rows the levels placed so far yield, and their cost.
        let (mut prefix, mut cost) = (1.0f64, 0.0f64);
        for level in &plan.levels {
            let t = &plan.scope.tables[level.table];
            let stats = table_stats(cx, &t.table).unwrap_or_default();
            let read = access_rows(&level.access, &t.def, &stats).max(1.0);
            let kept =
                crate::optimizer::filtered::filtered(&plan.scope, level, all_stats.as_deref());
            let per_outer = match &level.access {
                Access::Scan => read * ROW,
                Access::JoinBuffer { .. } => PROBE + read * kept * PROBE,
                Access::Index { eq, .. } if !eq.is_empty() => LOOKUP + read * ROW,
                _ => read * ROW,
            };
            let level_cost = match &level.access {
                // The buffer is filled once; each outer row probes it.
                Access::JoinBuffer { .. } => stats.rows.max(1) as f64 * ROW + prefix * per_outer,
                _ => prefix * per_outer,
            };
            let access = self.access(plan, level, names, derived, level_cost, read)?;
            // The equalities the index lookup reads by are shown in the lookup, not
            // again in the Filter (MySQL's form; the traditional table does not count
            // them for "Using where" either).
            let mut conds: Vec<Expr> = level
                .filter
                .iter()
                .filter(|c| !enforced_by_key(plan, level, c))
                .cloned()
                .collect();
            conds.extend(level.on.iter().cloned());
            let rows_out = read * kept;
            let source = self.filtered(access, &conds, names, Some((level_cost, rows_out)))?;
            cost += level_cost;
            prefix *= rows_out;
            acc = Some(match acc {
                None => source,
                Some(left) => {
                    let kind = if level.outer { "left" } else { "inner" };
                    match &level.access {
                        Access::JoinBuffer { keys } => {
                            let cond = keys
                                .iter()
                                .map(|k| {
                                    format!(
                                        "{} = {}",
                                        (names.column)(t.offset + k.column),
                                        text(&k.probe, names)
                                    )
                                })
                                .collect::<Vec<_>>()
                                .join(", ");
                            let mut title = kind.to_string();
                            title[..1].make_ascii_uppercase();
                            Node::costed(
                                format!("{title} hash join ({cond})"),
                                cost,
                                prefix,
                                vec![left, Node::new("Hash", vec![source])],
                            )
                        }
                        _ => Node::costed(
                            format!("Nested loop {kind} join"),
                            cost,
                            prefix,
                            vec![left, source],
                        ),
                    }
                }
            });
        }
        let top = acc.unwrap_or_else(|| Node::new("Rows fetched before execution", vec![]));
        self.filtered(top, &plan.const_filter, names, None)
    }

    /// `node` under a `Filter` of `conds` (with the subqueries they hold), or `node`.
    fn filtered(
        &self,
        node: Node,
        conds: &[Expr],
        names: &Names,
        estimate: Option<(f64, f64)>,
    ) -> Result<Node> {
        if conds.is_empty() {
            return Ok(node);
        }
        let line = conds
            .iter()
            .map(|c| text(c, names))
            .collect::<Vec<_>>()
            .join(" and ");
        let line = if conds.len() > 1 {
            format!("Filter: ({line})")
        } else {
            format!("Filter: {line}")
        };
        let mut children = vec![node];
        for c in conds {
            self.subqueries_in(c, Place::Condition, names, &mut children)?;
        }
        Ok(Node {
            line,
            estimate,
            children,
        })
    }

    /// One level's access path.
    fn access(
        &self,
        plan: &SelectPlan,
        level: &Level,
        names: &Names,
        derived: &HashMap<usize, Arc<QueryPlan>>,
        cost: f64,
        rows: f64,
    ) -> Result<Node> {
        let t = &plan.scope.tables[level.table];
        let def = &t.def;
        let alias = &t.alias;
        let covering = |index: usize| {
            let ix = &def.indexes[index];
            !ix.primary && {
                let all = vec![true; def.columns.len()];
                t.table
                    .covers(index, level.columns.as_deref().unwrap_or(&all))
            }
        };
        let line = match &level.access {
            Access::Scan | Access::JoinBuffer { .. } => format!("Table scan on {alias}"),
            Access::IndexIn { index, values } => {
                let ix = &def.indexes[*index];
                let col = &def.columns[ix.columns[0]].name;
                let over = values
                    .iter()
                    .map(|v| format!("({col} = {})", text(v, names)))
                    .collect::<Vec<_>>()
                    .join(" OR ");
                let covered = if covering(*index) {
                    "Covering index"
                } else {
                    "Index"
                };
                format!(
                    "{covered} range scan on {alias} using {} over {over}",
                    ix.name
                )
            }
            Access::IndexInSubquery { index, subquery } => {
                let ix = &def.indexes[*index];
                let col = &def.columns[ix.columns[0]].name;
                let n = self.subquery_id(*subquery);
                format!(
                    "Index lookup on {alias} using {} ({col} in (select #{n}))",
                    ix.name
                )
            }
            Access::Index {
                index,
                eq,
                lower,
                upper,
                reverse,
            } => {
                let ix = &def.indexes[*index];
                let key_cols = crate::plan::block::key_columns(t, *index);
                let col = |i: usize| def.columns[key_cols[i]].name.clone();
                let keys = eq
                    .iter()
                    .enumerate()
                    .map(|(i, e)| format!("{}={}", col(i), text(e, names)))
                    .collect::<Vec<_>>()
                    .join(", ");
                let rev = if *reverse { " (reverse)" } else { "" };
                let covered = if covering(*index) {
                    "Covering index"
                } else {
                    "Index"
                };
                if lower.is_some() || upper.is_some() {
                    let mut over = keys.replace(", ", " AND ");
                    if !over.is_empty() {
                        over.push_str(" AND ");
                    }
                    let c = col(eq.len());
                    match lower {
                        Some((e, incl)) => {
                            let op = if *incl { "<=" } else { "<" };
                            over.push_str(&format!("{} {op} {c}", text(e, names)));
                        }
                        None => over.push_str(&c),
                    }
                    if let Some((e, incl)) = upper {
                        let op = if *incl { "<=" } else { "<" };
                        over.push_str(&format!(" {op} {}", text(e, names)));
                    }
                    format!(
                        "{covered} range scan on {alias} using {} over ({over}){rev}",
                        ix.name
                    )
                } else if eq.is_empty() {
                    format!("{covered} scan on {alias} using {}{rev}", ix.name)
                } else if eq.len() == ix.columns.len() && ix.unique {
                    format!(
                        "Single-row index lookup on {alias} using {} ({keys})",
                        ix.name
                    )
                } else {
                    format!(
                        "{covered} lookup on {alias} using {} ({keys}){rev}",
                        ix.name
                    )
                }
            }
        };
        let mut node = Node::costed(line, cost, rows, vec![]);
        // A derived table or CTE: materialised (once per execution) before it is read.
        if let Some(sub) = t.slot.and_then(|s| derived.get(&s)) {
            node.children
                .push(Node::new("Materialize", vec![self.query(sub, &[])?]));
        }
        if let Some(lateral) = &t.lateral {
            if let Some(sub) = self.stmt.subqueries.get(lateral.subquery) {
                let outer: Vec<String> =
                    lateral.correlated.iter().map(|c| text(c, names)).collect();
                let how = if outer.is_empty() {
                    "Materialize"
                } else {
                    "Materialize (invalidate on row from outer tables)"
                };
                node.children
                    .push(Node::new(how, vec![self.query(sub, &outer)?]));
            }
        }
        Ok(node)
    }
}

/// Whether `cond` is `key column = value` for one of the equalities level's index
/// lookup reads by.
fn enforced_by_key(plan: &SelectPlan, level: &Level, cond: &Expr) -> bool {
    let Access::Index { index, eq, .. } = &level.access else {
        return false;
    };
    let Expr::Cmp(crate::expr::CmpOp::Eq, l, r, _) = cond else {
        return false;
    };
    let t = &plan.scope.tables[level.table];
    let key_cols = crate::plan::block::key_columns(t, *index);
    eq.iter().zip(key_cols.iter()).any(|(value, &c)| {
        let key = Expr::Column(t.offset + c);
        let same = |a: &Expr, b: &Expr| format!("{a:?}") == format!("{b:?}");
        (same(l, &key) && same(r, value)) || (same(r, &key) && same(l, value))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_nest_by_four_spaces_with_estimates_after_two() {
        let tree = Node::new(
            "Nested loop inner join",
            vec![
                Node::costed("Table scan on a", 10.0, 10.0, vec![]),
                Node::costed(
                    "Single-row index lookup on b using PRIMARY (id=a.b)",
                    30.5,
                    1.0,
                    vec![],
                ),
            ],
        );
        let mut s = String::new();
        tree.render(0, &mut s);
        assert_eq!(
            s,
            "-> Nested loop inner join\n    -> Table scan on a  (cost=10 rows=10)\n    \
             -> Single-row index lookup on b using PRIMARY (id=a.b)  (cost=30.5 rows=1)\n"
        );
    }

    #[test]
    fn estimates_print_like_mysql() {
        assert_eq!(number(0.35), "0.35");
        assert_eq!(number(2.0), "2");
        assert_eq!(number(60557.4), "60557");
        assert_eq!(number(0.0333), "0.033");
    }
}
