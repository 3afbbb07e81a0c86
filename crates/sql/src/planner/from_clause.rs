//! The FROM clause as MySQL reads it: comma lists, `[INNER|CROSS] JOIN`, `STRAIGHT_JOIN`,
//! `LEFT`/`RIGHT [OUTER] JOIN`, `NATURAL` joins, `ON`/`USING`, and parenthesised
//! (nested) joins, turned into the block's [`Scope`] plus a join nest: the tables in the
//! order they must be read, the outer-join groups ([`JoinGroup`]: the inner side of a
//! LEFT JOIN, NULL-extended as a whole when nothing in it matches) and every join
//! condition with the group that owns it.
//!
//! Row positions (and so `SELECT *` without USING/NATURAL) keep the textual order of
//! the tables; a RIGHT JOIN is read as a LEFT JOIN with its operands swapped, as MySQL
//! does. An ON condition sees only the tables of its own join's operands (and enclosing
//! queries): in `FROM a, b JOIN c ON a.x = c.x` the comma binds looser than JOIN, so
//! `a.x` is unknown there (1054), as in MySQL.
//!
//! USING and NATURAL joins coalesce their common columns: an unqualified name means the
//! left operand's column (the right operand's for a RIGHT JOIN, whose left operand is
//! the NULL-extended one), and `SELECT *` lists the common columns once, first.

use crate::bind::derived::DerivedTable;
use crate::bind::{BindEnv, Binder, Lateral, Outer, Scope, SubqueryPlanner};
use crate::catalog::rowsource::ReadOnlyTable;
use crate::expr::{CmpOp, Expr};
use crate::optimizer::join_order::MAX_JOIN_TABLES;
use crate::plan::block::Derived;
use crate::plan::join_groups::JoinGroup;
use crate::planner::block::add_factor;
use crate::planner::query::Planner;
use sqlparser::ast;
use std::sync::Arc;
use strata_types::{Error, Result};

/// A bound FROM clause.
pub struct FromPlan {
    pub scope: Scope,
    pub derived: Derived,
    /// Scope tables in the order a nested loop must read them (outer joins fix it).
    pub order: Vec<usize>,
    /// The outer-join groups, outermost before the groups nested in them.
    pub groups: Vec<JoinGroup>,
    /// Join conditions (ON, USING, NATURAL) with their owner: the group whose match they
    /// decide, or None for conditions that filter like WHERE (inner joins at top level).
    pub conds: Vec<(Option<usize>, Expr)>,
    /// The order may not change: outer joins or STRAIGHT_JOIN.
    pub fixed: bool,
    /// STRAIGHT_JOIN was asked for (the order stays fixed without outer joins too).
    pub straight: bool,
}

/// A join tree node; leaves are scope table positions.
enum Node {
    Leaf(usize),
    Join {
        left: Box<Node>,
        right: Box<Node>,
        /// LEFT JOIN (a RIGHT JOIN arrives here with its operands swapped).
        outer: bool,
        on: Vec<Expr>,
    },
}

/// A built operand: its tree, the tables it holds, and what `SELECT *` lists for it.
struct Built {
    node: Node,
    tables: u64,
    star: Vec<usize>,
}

#[derive(Clone, Copy, PartialEq)]
enum Kind {
    Inner,
    Left,
    Right,
}

struct Builder<'b, 'p, 'c> {
    planner: &'b Planner<'p, 'c>,
    env: &'b BindEnv<'b>,
    scope: Scope,
    derived: Derived,
    straight: bool,
}

/// Binds a FROM clause. `straight` is `SELECT STRAIGHT_JOIN`.
pub fn plan_from(
    from: &[ast::TableWithJoins],
    straight: bool,
    planner: &Planner,
    env: &BindEnv,
) -> Result<FromPlan> {
    let mut b = Builder {
        planner,
        env,
        scope: Scope::default(),
        derived: Vec::new(),
        straight,
    };
    // Comma-separated items are inner joins of one another, without conditions.
    let mut items = Vec::with_capacity(from.len());
    for twj in from {
        items.push(b.table_with_joins(twj)?);
    }
    let mut star = Vec::new();
    let mut nodes = Vec::with_capacity(items.len());
    for it in items {
        star.extend(it.star);
        nodes.push(it.node);
    }
    let mut plan = FromPlan {
        order: Vec::with_capacity(b.scope.tables.len()),
        groups: Vec::new(),
        conds: Vec::new(),
        fixed: b.straight,
        straight: b.straight,
        scope: Scope::default(),
        derived: Vec::new(),
    };
    for node in nodes {
        linearize(node, None, &mut plan);
    }
    plan.fixed |= !plan.groups.is_empty();
    let natural_order: Vec<usize> = (0..b.scope.width()).collect();
    if star != natural_order {
        b.scope.star = star;
    }
    plan.scope = b.scope;
    plan.derived = b.derived;
    Ok(plan)
}

/// Puts the tree's tables in reading order and its conditions with their owners; a
/// LEFT JOIN's right operand becomes a new group inside `group`.
fn linearize(node: Node, group: Option<usize>, plan: &mut FromPlan) {
    match node {
        Node::Leaf(t) => plan.order.push(t),
        Node::Join {
            left,
            right,
            outer,
            on,
        } => {
            linearize(*left, group, plan);
            let owner = if outer {
                plan.groups.push(JoinGroup {
                    parent: group,
                    tables: node_tables(&right),
                    first: 0,
                    last: 0,
                });
                Some(plan.groups.len() - 1)
            } else {
                group
            };
            linearize(*right, owner, plan);
            plan.conds.extend(on.into_iter().map(|e| (owner, e)));
        }
    }
}

fn node_tables(n: &Node) -> u64 {
    match n {
        Node::Leaf(t) => 1 << t,
        Node::Join { left, right, .. } => node_tables(left) | node_tables(right),
    }
}

impl Builder<'_, '_, '_> {
    fn table_with_joins(&mut self, twj: &ast::TableWithJoins) -> Result<Built> {
        let mut acc = self.factor(&twj.relation)?;
        for j in &twj.joins {
            let right = self.factor(&j.relation)?;
            acc = self.join(acc, right, &j.join_operator)?;
        }
        Ok(acc)
    }

    fn factor(&mut self, f: &ast::TableFactor) -> Result<Built> {
        if let ast::TableFactor::NestedJoin {
            table_with_joins,
            alias,
        } = f
        {
            if alias.is_some() {
                return Err(Error::NotSupported(
                    "an alias on a parenthesised join".into(),
                ));
            }
            return self.table_with_joins(table_with_joins);
        }
        match f {
            ast::TableFactor::Derived {
                lateral: true,
                subquery,
                alias,
                ..
            } => self.lateral(subquery, alias.as_ref())?,
            _ => add_factor(f, self.planner, &mut self.scope, &mut self.derived)?,
        }
        let t = self.scope.tables.len() - 1;
        if t >= MAX_JOIN_TABLES {
            return Err(Error::TooManyTables(MAX_JOIN_TABLES));
        }
        let st = &self.scope.tables[t];
        Ok(Built {
            node: Node::Leaf(t),
            tables: 1 << t,
            star: (st.offset..st.offset + st.def.columns.len()).collect(),
        })
    }

    /// `LATERAL (subquery) AS alias`: the subquery is planned as a correlated subquery
    /// whose enclosing scope is the tables before it in FROM (and the queries enclosing
    /// this one), and is run again for each combination of their rows.
    fn lateral(&mut self, q: &ast::Query, alias: Option<&ast::TableAlias>) -> Result<()> {
        let Some(alias) = alias else {
            return Err(Error::DerivedNeedsAlias);
        };
        let name = alias.name.value.clone();
        let outer = Outer {
            scope: &self.scope,
            env: self.env,
        };
        let sub = self.planner.plan_subquery(q, &outer)?;
        let names: Vec<String> = alias.columns.iter().map(|c| c.name.value.clone()).collect();
        let table = Arc::new(ReadOnlyTable(DerivedTable::new(
            &name,
            &sub.columns,
            &names,
        )?));
        if self.scope.tables.iter().any(|t| t.alias == name) {
            return Err(Error::NonUniqueTable(name));
        }
        self.scope.push(name, String::new(), table);
        if let Some(t) = self.scope.tables.last_mut() {
            t.source_meta = Some(Arc::new(sub.columns.clone()));
            t.lateral = Some(Lateral {
                subquery: sub.id,
                correlated: sub.correlated,
            });
        }
        // The table must be read after those it reads from: keep FROM's order.
        self.straight = true;
        Ok(())
    }

    fn join(&mut self, left: Built, right: Built, op: &ast::JoinOperator) -> Result<Built> {
        use ast::JoinOperator as J;
        let (kind, constraint) = match op {
            J::Join(c) | J::Inner(c) | J::CrossJoin(c) => (Kind::Inner, c),
            J::StraightJoin(c) => {
                self.straight = true;
                (Kind::Inner, c)
            }
            J::Left(c) | J::LeftOuter(c) => (Kind::Left, c),
            J::Right(c) | J::RightOuter(c) => (Kind::Right, c),
            J::FullOuter(_) => return Err(Error::NotSupported("FULL OUTER JOIN".into())),
            other => {
                return Err(Error::NotSupported(
                    format!("join {other:?}").chars().take(40).collect(),
                ))
            }
        };
        let tables = left.tables | right.tables;
        let mut on = Vec::new();
        let mut common: Vec<(usize, usize)> = Vec::new();
        match constraint {
            ast::JoinConstraint::On(e) => {
                let scope = self.restricted(tables);
                let (x, _, _) = Binder::in_env(&scope, "on clause", self.env).bind(e)?;
                crate::optimizer::rewrite::conjuncts(x, &mut on);
            }
            ast::JoinConstraint::Using(cols) => {
                for c in cols {
                    let name = crate::parse::object_name_parts(c)
                        .last()
                        .cloned()
                        .unwrap_or_default();
                    let l = self.common_column(&left.star, &name)?;
                    let r = self.common_column(&right.star, &name)?;
                    // A name listed twice is one column (as MariaDB and MySQL read it).
                    if !common.iter().any(|(x, _)| *x == l) {
                        common.push((l, r));
                    }
                }
            }
            ast::JoinConstraint::Natural => {
                // Every name both operands show; one shown twice on a side is 1052.
                for &l in &left.star {
                    let name = self.scope.column(l).1.name.clone();
                    let on_right = right
                        .star
                        .iter()
                        .any(|&r| self.scope.column(r).1.name.eq_ignore_ascii_case(&name));
                    if on_right
                        && !common
                            .iter()
                            .any(|&(x, _)| self.scope.column(x).1.name.eq_ignore_ascii_case(&name))
                    {
                        let l = self.common_column(&left.star, &name)?;
                        let r = self.common_column(&right.star, &name)?;
                        common.push((l, r));
                    }
                }
            }
            ast::JoinConstraint::None => {
                // MySQL's grammar has no outer join without a condition.
                if kind != Kind::Inner {
                    return Err(Error::Syntax("LEFT/RIGHT JOIN without ON or USING".into()));
                }
            }
        }
        for &(l, r) in &common {
            let coll = self.scope.column(l).1.collation;
            on.push(Expr::Cmp(
                CmpOp::Eq,
                Box::new(Expr::Column(l)),
                Box::new(Expr::Column(r)),
                coll,
            ));
            // The preserved side's column stands for both.
            let (hidden, shown) = if kind == Kind::Right { (l, r) } else { (r, l) };
            self.scope.coalesced.push((hidden, shown));
        }
        let star = if common.is_empty() {
            let mut s = left.star;
            s.extend(right.star);
            s
        } else {
            let (first, second) = if kind == Kind::Right {
                (right.star, left.star)
            } else {
                (left.star, right.star)
            };
            // The common columns come in the order of the preserved operand (the left
            // one but for RIGHT JOIN), whatever the USING list's order.
            let shown = |&(l, r): &(usize, usize)| if kind == Kind::Right { r } else { l };
            common.sort_by_key(|c| first.iter().position(|p| *p == shown(c)));
            let hidden = |p: &usize| common.iter().any(|(l, r)| l == p || r == p);
            let mut s: Vec<usize> = common.iter().map(shown).collect();
            s.extend(first.into_iter().filter(|p| !hidden(p)));
            s.extend(second.into_iter().filter(|p| !hidden(p)));
            s
        };
        let node = match kind {
            Kind::Inner | Kind::Left => Node::Join {
                left: Box::new(left.node),
                right: Box::new(right.node),
                outer: kind == Kind::Left,
                on,
            },
            Kind::Right => Node::Join {
                left: Box::new(right.node),
                right: Box::new(left.node),
                outer: true,
                on,
            },
        };
        Ok(Built { node, tables, star })
    }

    /// The column named `name` among an operand's `SELECT *` columns (so a column
    /// already coalesced by a nested USING counts once): 1054 when there is none, 1052
    /// when there are several.
    fn common_column(&self, star: &[usize], name: &str) -> Result<usize> {
        let mut found = None;
        for &p in star {
            if self.scope.column(p).1.name.eq_ignore_ascii_case(name) {
                if found.is_some() {
                    return Err(Error::AmbiguousColumn {
                        column: name.to_string(),
                        context: "from clause".into(),
                    });
                }
                found = Some(p);
            }
        }
        found.ok_or_else(|| Error::UnknownColumn {
            column: name.to_string(),
            context: "from clause".into(),
        })
    }

    /// The scope an ON condition sees: only its join's tables, at their row positions.
    fn restricted(&self, tables: u64) -> Scope {
        let mut s = Scope::default();
        for (i, t) in self.scope.tables.iter().enumerate() {
            if tables & (1 << i) != 0 {
                s.tables.push(t.clone());
            }
        }
        s.coalesced = self.scope.coalesced.clone();
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn leaf(t: usize) -> Box<Node> {
        Box::new(Node::Leaf(t))
    }

    fn empty_plan() -> FromPlan {
        FromPlan {
            scope: Scope::default(),
            derived: vec![],
            order: vec![],
            groups: vec![],
            conds: vec![],
            fixed: false,
            straight: false,
        }
    }

    #[test]
    fn left_join_of_a_nested_inner_join_is_one_group() {
        // a LEFT JOIN (b JOIN c ON cond1) ON cond2
        let inner = Node::Join {
            left: leaf(1),
            right: leaf(2),
            outer: false,
            on: vec![Expr::Column(10)],
        };
        let tree = Node::Join {
            left: leaf(0),
            right: Box::new(inner),
            outer: true,
            on: vec![Expr::Column(20)],
        };
        let mut p = empty_plan();
        linearize(tree, None, &mut p);
        assert_eq!(p.order, vec![0, 1, 2]);
        assert_eq!(p.groups.len(), 1);
        assert_eq!(p.groups[0].tables, 0b110);
        assert_eq!(p.groups[0].parent, None);
        // Both conditions decide the group's match: the inner join's too.
        assert!(p.conds.iter().all(|(g, _)| *g == Some(0)));
    }

    #[test]
    fn nested_left_joins_nest_their_groups() {
        // a LEFT JOIN (b LEFT JOIN c ON x) ON y
        let inner = Node::Join {
            left: leaf(1),
            right: leaf(2),
            outer: true,
            on: vec![Expr::Column(1)],
        };
        let tree = Node::Join {
            left: leaf(0),
            right: Box::new(inner),
            outer: true,
            on: vec![Expr::Column(2)],
        };
        let mut p = empty_plan();
        linearize(tree, None, &mut p);
        assert_eq!(p.groups.len(), 2);
        assert_eq!(p.groups[0].tables, 0b110);
        assert_eq!(p.groups[1].parent, Some(0));
        assert_eq!(p.groups[1].tables, 0b100);
        assert_eq!(p.conds[0].0, Some(1));
        assert_eq!(p.conds[1].0, Some(0));
    }

    #[test]
    fn inner_join_conditions_at_top_level_filter_like_where() {
        let tree = Node::Join {
            left: leaf(0),
            right: leaf(1),
            outer: false,
            on: vec![Expr::Column(0)],
        };
        let mut p = empty_plan();
        linearize(tree, None, &mut p);
        assert!(p.groups.is_empty());
        assert_eq!(p.conds[0].0, None);
    }
}
