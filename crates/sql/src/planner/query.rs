//! Planning query expressions: the [`Planner`] turns `WITH`, set operations and
//! parenthesised queries into [`crate::plan::query::QueryPlan`] trees, plans each block
//! ([`crate::planner::block`]), and gives CTEs and derived tables their slots.
//!
//! The [`Planner`] is the binder's [`SubqueryPlanner`]: a subquery met in an expression
//! is planned with a scope chain to its enclosing query, and the outer columns it reads
//! come back as its correlation list.

use crate::bind::item_names::ItemNames;
use crate::bind::{self, BindEnv, Outer, PlannedSubquery, SType, SubqueryPlanner};
use crate::context::ExecCtx;
use crate::plan::query::*;
use crate::planner::block as select;
use sqlparser::ast;
use std::cell::{Cell, RefCell};
use std::sync::Arc;
use strata_engine::Table;
use strata_types::{Collation, ColumnMeta, Error, Result, Value};

/// A CTE name in scope: its columns, its slot and (once planned) its body.
#[derive(Clone)]
pub(crate) struct CteDef {
    name: String,
    columns: Vec<ColumnMeta>,
    slot: usize,
    /// None for the self-reference inside a recursive CTE's step (it reads `slot`, the
    /// work table the iteration fills).
    plan: Option<Arc<QueryPlan>>,
}

/// Plans one statement's query expressions; shared by all of its query blocks.
pub struct Planner<'p, 'c> {
    pub cx: &'p ExecCtx<'c>,
    subqueries: RefCell<Vec<Arc<QueryPlan>>>,
    next_slot: Cell<usize>,
    /// CTEs visible where planning is (innermost last).
    ctes: RefCell<Vec<CteDef>>,
    tables: RefCell<Vec<ReadTable>>,
    /// Views the statement reads through (for their metadata locks).
    views: RefCell<Vec<(String, String)>>,
    /// Views being expanded, outermost first (a view met again is recursion, 1462).
    expanding: RefCell<Vec<(String, String)>>,
    /// How unaliased select-list columns are named (their text as written).
    pub names: ItemNames,
    /// The same for the stored query of each view being expanded (innermost last).
    view_names: RefCell<Vec<ItemNames>>,
    /// The types of the placeholders where they are known (a stored program's
    /// variables); otherwise a placeholder is untyped until it has a value.
    param_types: Vec<Option<(crate::bind::SType, strata_types::Collation)>>,
    /// Derived tables and views may be merged into the blocks that read them (off for
    /// the statements that change tables: see `optimizer::derived_merge`).
    merge: Cell<bool>,
}

/// What a table name in FROM turned out to be.
pub enum Relation {
    Engine(Arc<dyn Table>),
    /// A CTE: its table definition, slot, and body to materialize (None: the recursive
    /// self-reference, filled by the iteration).
    Cte {
        table: Arc<dyn Table>,
        slot: usize,
        plan: Option<Arc<QueryPlan>>,
        /// The body's result columns as the client sees them (a CTE's; None for a view,
        /// whose table already has its base columns' types).
        metas: Option<Arc<Vec<strata_types::ColumnMeta>>>,
    },
}

impl<'p, 'c> Planner<'p, 'c> {
    pub fn new(cx: &'p ExecCtx<'c>) -> Planner<'p, 'c> {
        Planner {
            cx,
            subqueries: RefCell::new(Vec::new()),
            next_slot: Cell::new(0),
            ctes: RefCell::new(Vec::new()),
            tables: RefCell::new(Vec::new()),
            views: RefCell::new(Vec::new()),
            expanding: RefCell::new(Vec::new()),
            names: ItemNames::default(),
            view_names: RefCell::new(Vec::new()),
            param_types: Vec::new(),
            merge: Cell::new(true),
        }
    }

    /// A planner that keeps every derived table and view materialised (UPDATE, DELETE
    /// and INSERT read them whole before their first change).
    pub fn without_merge(self) -> Self {
        self.merge.set(false);
        self
    }

    /// Whether derived tables and views may be merged into the blocks reading them.
    pub(crate) fn merges(&self) -> bool {
        self.merge.get()
    }

    /// A statement of a stored program: bound from `text`, its columns named from
    /// `source` (see [`ItemNames::paired`]), its placeholders typed as the variables
    /// they stand for (`types`, by placeholder).
    pub fn for_program_text(
        cx: &'p ExecCtx<'c>,
        text: &str,
        source: &str,
        types: &[Option<strata_types::ColumnDef>],
    ) -> Planner<'p, 'c> {
        Planner {
            names: ItemNames::paired(text, source),
            param_types: types
                .iter()
                .map(|t| {
                    t.as_ref().map(|c| {
                        (
                            crate::bind::SType::of_column(&c.data_type, c.collation),
                            c.collation,
                        )
                    })
                })
                .collect(),
            ..Planner::new(cx)
        }
    }

    /// A planner for a statement parsed from `source`: its columns are named as the
    /// client wrote them.
    pub fn for_text(cx: &'p ExecCtx<'c>, source: &str) -> Planner<'p, 'c> {
        Planner {
            names: ItemNames::of(source),
            ..Planner::new(cx)
        }
    }

    /// The binding environment of a statement's outermost clauses: subqueries are
    /// planned here, and there is no enclosing query to read.
    pub fn root_env(&self) -> BindEnv<'_> {
        BindEnv {
            planner: self,
            parent: None,
            correlated: RefCell::new(Vec::new()),
        }
    }

    /// Plans a whole query statement.
    pub fn plan_statement(self, q: &ast::Query) -> Result<QueryStatement> {
        let env = self.root_env();
        let mut root = self.plan_query(q, &env)?;
        drop(env);
        let found_rows_limit = if calc_found_rows(q) {
            take_limit(&mut root)
        } else {
            None
        };
        Ok(QueryStatement {
            root,
            subqueries: self.subqueries.into_inner(),
            slots: self.next_slot.get(),
            tables: self.tables.into_inner(),
            views: self.views.into_inner(),
            found_rows_limit,
        })
    }

    /// What a statement that is not a query (UPDATE, DELETE) keeps of its planning:
    /// the subqueries its clauses bound, and the tables they read.
    pub fn finish(self) -> SubqueryPlans {
        SubqueryPlans {
            subqueries: self.subqueries.into_inner(),
            tables: self.tables.into_inner(),
            views: self.views.into_inner(),
        }
    }

    pub fn new_slot(&self) -> usize {
        let s = self.next_slot.get();
        self.next_slot.set(s + 1);
        s
    }

    /// Notes an engine table the statement reads, for its locks.
    pub fn note_table(&self, db: &str, name: &str, table: &Arc<dyn Table>) {
        self.tables
            .borrow_mut()
            .push((db.to_string(), name.to_string(), table.clone()));
    }

    /// Resolves a FROM table name: a CTE in scope (unqualified names only), else a table.
    pub fn relation(&self, name: &ast::ObjectName) -> Result<(String, String, Relation)> {
        let parts = crate::parse::object_name_parts(name);
        if let [single] = parts.as_slice() {
            let found = self
                .ctes
                .borrow()
                .iter()
                .rev()
                .find(|c| c.name.eq_ignore_ascii_case(single))
                .cloned();
            if let Some(cte) = found {
                let table: Arc<dyn Table> = Arc::new(crate::catalog::rowsource::ReadOnlyTable(
                    crate::bind::derived::DerivedTable::new(&cte.name, &cte.columns, &[])?,
                ));
                return Ok((
                    String::new(),
                    single.clone(),
                    Relation::Cte {
                        table,
                        slot: cte.slot,
                        plan: cte.plan,
                        metas: Some(Arc::new(cte.columns.clone())),
                    },
                ));
            }
        }
        let (db, table) = crate::context::resolve_table(self.cx, name)?;
        // A session's temporary table hides a view of its name too.
        let temp = self.cx.temp_table(&db, &table);
        if let Some(view) = self.cx.catalog.view(&db, &table).filter(|_| temp.is_none()) {
            let (columns, mut plan) = crate::planner::views::expand(self, &view)?;
            // ALGORITHM=TEMPTABLE: always materialised.
            if view.algorithm.eq_ignore_ascii_case("TEMPTABLE") {
                if let QueryPlan::Block(b) = &mut plan {
                    b.merge_source = None;
                }
            }
            return Ok((
                db,
                table,
                Relation::Cte {
                    table: crate::planner::views::handle(self.cx, &view, &columns)?,
                    slot: self.new_slot(),
                    plan: Some(Arc::new(plan)),
                    metas: None,
                },
            ));
        }
        let handle = match temp {
            Some(t) => t,
            None => self.cx.table(&db, &table)?,
        };
        self.note_table(&db, &table, &handle);
        Ok((db, table, Relation::Engine(handle)))
    }

    /// Runs `f` to plan the query of `view`: the view is noted for its metadata lock,
    /// the outer statement's CTEs are out of sight, and meeting the view again inside
    /// is recursion (1462, the outer error; `f`'s own result is the inner one).
    pub(crate) fn in_view<T>(
        &self,
        view: &crate::catalog::views::ViewDef,
        f: impl FnOnce(&Self) -> Result<T>,
    ) -> Result<Result<T>> {
        let key = (view.db.clone(), view.name.clone());
        if self.expanding.borrow().contains(&key) {
            return Err(Error::ViewRecursive {
                db: key.0,
                view: key.1,
            });
        }
        self.views.borrow_mut().push(key.clone());
        self.expanding.borrow_mut().push(key);
        self.view_names
            .borrow_mut()
            .push(ItemNames::of(&view.query));
        let ctes = std::mem::take(&mut *self.ctes.borrow_mut());
        let result = f(self);
        *self.ctes.borrow_mut() = ctes;
        self.view_names.borrow_mut().pop();
        self.expanding.borrow_mut().pop();
        Ok(result)
    }

    /// The name of the unaliased select item `e`: its text as written in the statement,
    /// or in the stored query of the view being expanded.
    pub fn item_name(&self, e: &ast::Expr) -> String {
        match self.view_names.borrow().last() {
            Some(names) => names.name(e),
            None => self.names.name(e),
        }
    }

    /// Marks `db`.`name` as being defined, so a query that reads it (through other
    /// views too) is recursion (CREATE OR REPLACE / ALTER VIEW).
    pub(crate) fn defining_view(&self, db: &str, name: &str) {
        self.expanding
            .borrow_mut()
            .push((db.to_string(), name.to_string()));
    }

    /// Plans a query expression (with its WITH clause, ORDER BY and LIMIT).
    pub fn plan_query(&self, q: &ast::Query, env: &BindEnv) -> Result<QueryPlan> {
        let ctes_before = self.ctes.borrow().len();
        let result = self.plan_query_with(q, env);
        // CTEs are visible only inside the query that declares them.
        self.ctes.borrow_mut().truncate(ctes_before);
        result
    }

    fn plan_query_with(&self, q: &ast::Query, env: &BindEnv) -> Result<QueryPlan> {
        if let Some(with) = &q.with {
            for cte in &with.cte_tables {
                self.plan_cte(cte, with.recursive)?;
            }
        }
        match q.body.as_ref() {
            // A single block takes ORDER BY and LIMIT itself (its index order may serve).
            ast::SetExpr::Select(s) => Ok(QueryPlan::Block(Box::new(select::plan_block(
                q, s, self, env,
            )?))),
            body => {
                let input = self.plan_set_expr(body, env)?;
                if !q.locks.is_empty() {
                    if let QueryPlan::Block(_) = input {
                    } else {
                        return Err(Error::NotSupported("FOR UPDATE on a set operation".into()));
                    }
                }
                self.ordered(input, q, env)
            }
        }
    }

    /// Wraps `input` in the query's ORDER BY / LIMIT, if it has any.
    fn ordered(&self, input: QueryPlan, q: &ast::Query, env: &BindEnv) -> Result<QueryPlan> {
        let order = match &q.order_by {
            None => vec![],
            Some(ob) => {
                let ast::OrderByKind::Expressions(items) = &ob.kind else {
                    return Err(Error::NotSupported("ORDER BY ALL".into()));
                };
                let cols = input.columns();
                let mut order = Vec::with_capacity(items.len());
                for item in items {
                    let desc = matches!(item.options.sort, Some(ast::OrderBySort::Desc));
                    let pos = result_column(&item.expr, cols)?;
                    crate::bind::refuse_time_order(cols[pos].field_type)?;
                    let coll = Collation::from_id(cols[pos].charset);
                    order.push((pos, desc, coll));
                }
                order
            }
        };
        let (limit, offset) = select::bind_limits(q.limit_clause.as_ref(), env)?;
        if order.is_empty() && limit.is_none() && offset.is_none() {
            return Ok(input);
        }
        Ok(QueryPlan::Ordered(Box::new(OrderedPlan {
            input,
            order,
            limit,
            offset,
        })))
    }

    fn plan_set_expr(&self, body: &ast::SetExpr, env: &BindEnv) -> Result<QueryPlan> {
        match body {
            ast::SetExpr::Select(s) => {
                let q = bare_query(ast::SetExpr::Select(s.clone()));
                Ok(QueryPlan::Block(Box::new(select::plan_block(
                    &q, s, self, env,
                )?)))
            }
            ast::SetExpr::Query(q) => self.plan_query(q, env),
            ast::SetExpr::SetOperation {
                left,
                op,
                set_quantifier,
                right,
            } => {
                let op = match op {
                    ast::SetOperator::Union => SetOp::Union,
                    ast::SetOperator::Intersect => SetOp::Intersect,
                    ast::SetOperator::Except | ast::SetOperator::Minus => SetOp::Except,
                };
                let distinct = match set_quantifier {
                    ast::SetQuantifier::All => false,
                    ast::SetQuantifier::Distinct | ast::SetQuantifier::None => true,
                    other => return Err(Error::NotSupported(format!("{op:?} {other}"))),
                };
                let mut left = self.plan_set_expr(left, env)?;
                let mut right = self.plan_set_expr(right, env)?;
                let columns = union_columns(left.columns(), right.columns())?;
                // The result types are decided over every part at once (`1 UNION 2.5
                // UNION 'x'` is all strings, with 1 shown as `1`): nested set operations
                // convert straight to them.
                widen(&mut left, &columns);
                widen(&mut right, &columns);
                Ok(QueryPlan::SetOp(Box::new(SetOpPlan {
                    op,
                    distinct,
                    left,
                    right,
                    columns,
                })))
            }
            ast::SetExpr::Values(_) => Err(Error::NotSupported("VALUES as a query".into())),
            other => Err(Error::NotSupported(
                other.to_string().chars().take(40).collect(),
            )),
        }
    }

    /// Plans one CTE of a WITH clause and puts its name in scope.
    fn plan_cte(&self, cte: &ast::Cte, recursive: bool) -> Result<()> {
        let name = cte.alias.name.value.clone();
        let names: Vec<String> = cte
            .alias
            .columns
            .iter()
            .map(|c| c.name.value.clone())
            .collect();
        // A CTE body sees no enclosing query's columns (MySQL allows none either).
        let fresh = || BindEnv {
            planner: self,
            parent: None,
            correlated: RefCell::new(Vec::new()),
        };
        let slot = self.new_slot();
        let refers_to_itself = recursive && query_mentions(&cte.query, &name);
        let plan = if refers_to_itself {
            self.plan_recursive(&name, &names, &cte.query, slot)?
        } else {
            self.plan_query(&cte.query, &fresh())?
        };
        let columns = renamed(plan.columns(), &names)?;
        self.ctes.borrow_mut().push(CteDef {
            name,
            columns,
            slot,
            plan: Some(Arc::new(plan)),
        });
        Ok(())
    }

    /// `WITH RECURSIVE r AS (anchor UNION [ALL] step)`: the anchor cannot see `r`; the
    /// step reads `r` as the rows of the previous iteration.
    fn plan_recursive(
        &self,
        name: &str,
        names: &[String],
        q: &ast::Query,
        _slot: usize,
    ) -> Result<QueryPlan> {
        let ast::SetExpr::SetOperation {
            left,
            op: ast::SetOperator::Union,
            set_quantifier,
            right,
        } = q.body.as_ref()
        else {
            return Err(Error::NotSupported(format!(
                "recursive CTE {name} that is not anchor UNION step"
            )));
        };
        if q.order_by.is_some() || q.limit_clause.is_some() {
            return Err(Error::NotSupported(
                "ORDER BY/LIMIT in a recursive CTE".into(),
            ));
        }
        let distinct = !matches!(set_quantifier, ast::SetQuantifier::All);
        let env = BindEnv {
            planner: self,
            parent: None,
            correlated: RefCell::new(Vec::new()),
        };
        let anchor = self.plan_set_expr(left, &env)?;
        let columns = renamed(anchor.columns(), names)?;
        let work_slot = self.new_slot();
        self.ctes.borrow_mut().push(CteDef {
            name: name.to_string(),
            columns: columns.clone(),
            slot: work_slot,
            plan: None,
        });
        let step = self.plan_set_expr(right, &env);
        self.ctes.borrow_mut().pop();
        let step = step?;
        if step.columns().len() != columns.len() {
            return Err(Error::WrongColumnCountInSetOp);
        }
        Ok(QueryPlan::Recursive(Box::new(RecursivePlan {
            anchor,
            step,
            distinct,
            work_slot,
            columns,
        })))
    }

    /// Plans a derived table's query (no outer columns visible).
    pub fn plan_derived(&self, q: &ast::Query) -> Result<QueryPlan> {
        let env = BindEnv {
            planner: self,
            parent: None,
            correlated: RefCell::new(Vec::new()),
        };
        self.plan_query(q, &env)
    }
}

impl SubqueryPlanner for Planner<'_, '_> {
    fn param_type(&self, i: usize) -> Option<(crate::bind::SType, strata_types::Collation)> {
        self.param_types.get(i).copied().flatten()
    }

    fn stored_function(
        &self,
        db: Option<&str>,
        name: &str,
        args: usize,
    ) -> Result<Option<(crate::expr::StoredCall, strata_types::ColumnDef)>> {
        let Some(hooks) = crate::context::program_hooks() else {
            return Ok(None);
        };
        Ok(hooks
            .bind_function(self.cx, db, name, args)?
            .map(|(f, ret)| {
                (
                    crate::expr::StoredCall {
                        name: name.to_string(),
                        f: Arc::new(crate::context::StoredFunctionCall(f)),
                    },
                    ret,
                )
            }))
    }

    fn plan_subquery(&self, q: &ast::Query, outer: &Outer) -> Result<PlannedSubquery> {
        let env = BindEnv {
            planner: self,
            parent: Some(outer),
            correlated: RefCell::new(Vec::new()),
        };
        let plan = self.plan_query(q, &env)?;
        let columns = plan.columns().to_vec();
        let mut subs = self.subqueries.borrow_mut();
        subs.push(Arc::new(plan));
        Ok(PlannedSubquery {
            id: subs.len() - 1,
            columns,
            correlated: env.correlated.into_inner(),
        })
    }

    fn check_session_scope(&self, name: &str) -> Result<()> {
        self.cx.env.check_session_scope(name)
    }

    fn variable_value(&self, name: &str, system: Option<bool>) -> Option<Value> {
        match system {
            Some(global) => self.cx.env.system_variable(name, global).ok(),
            None => Some(self.cx.env.user_variable(name)),
        }
    }

    fn table_columns(&self, name: &ast::ObjectName) -> Option<Vec<String>> {
        let parts = crate::parse::object_name_parts(name);
        if let [single] = parts.as_slice() {
            let ctes = self.ctes.borrow();
            if let Some(cte) = ctes
                .iter()
                .rev()
                .find(|c| c.name.eq_ignore_ascii_case(single))
            {
                return Some(cte.columns.iter().map(|c| c.name.clone()).collect());
            }
        }
        let (db, table) = crate::context::resolve_table(self.cx, name).ok()?;
        if let Some(view) = self.cx.catalog.view(&db, &table) {
            return Some(view.columns.clone());
        }
        let handle = self.cx.table(&db, &table).ok()?;
        let def = handle.def();
        Some(def.columns.iter().map(|c| c.name.clone()).collect())
    }

    fn index_leads_with(&self, name: &ast::ObjectName, column: &str) -> bool {
        let parts = crate::parse::object_name_parts(name);
        if let [single] = parts.as_slice() {
            if self
                .ctes
                .borrow()
                .iter()
                .any(|c| c.name.eq_ignore_ascii_case(single))
            {
                return false;
            }
        }
        let Ok((db, table)) = crate::context::resolve_table(self.cx, name) else {
            return false;
        };
        let Ok(handle) = self.cx.table(&db, &table) else {
            return false;
        };
        let def = handle.def();
        let Some(pos) = def.column_index(column) else {
            return false;
        };
        def.indexes
            .iter()
            .any(|ix| !ix.invisible && ix.columns.first() == Some(&pos))
    }
}

/// A query with only a body (the blocks of a set operation have no clauses of their
/// own beyond the block's).
pub(crate) fn bare_query(body: ast::SetExpr) -> ast::Query {
    ast::Query {
        with: None,
        body: Box::new(body),
        order_by: None,
        limit_clause: None,
        fetch: None,
        locks: vec![],
        for_clause: None,
        settings: None,
        format_clause: None,
        pipe_operators: vec![],
    }
}

/// Whether a query names `name` anywhere (so a recursive WITH's CTE is really recursive).
pub(crate) fn query_mentions(q: &ast::Query, name: &str) -> bool {
    use sqlparser::ast::{Visit, Visitor};
    use std::ops::ControlFlow;
    struct Finder<'a>(&'a str);
    impl Visitor for Finder<'_> {
        type Break = ();
        fn pre_visit_relation(&mut self, r: &ast::ObjectName) -> ControlFlow<()> {
            let parts = crate::parse::object_name_parts(r);
            if parts.len() == 1 && parts[0].eq_ignore_ascii_case(self.0) {
                return ControlFlow::Break(());
            }
            ControlFlow::Continue(())
        }
    }
    q.visit(&mut Finder(name)).is_break()
}

/// Result columns renamed by a column list (`WITH r (a, b) AS`).
pub(crate) fn renamed(columns: &[ColumnMeta], names: &[String]) -> Result<Vec<ColumnMeta>> {
    if names.is_empty() {
        return Ok(columns.to_vec());
    }
    if names.len() != columns.len() {
        return Err(Error::ViewColumnCount);
    }
    Ok(columns
        .iter()
        .zip(names)
        .map(|(c, n)| {
            let mut c = c.clone();
            c.name = n.clone();
            c
        })
        .collect())
}

/// The columns of `left UNION right`: the left side's names, each column's type the
/// union of both sides' types (MySQL: an integer and a string give a string).
pub(crate) fn union_columns(left: &[ColumnMeta], right: &[ColumnMeta]) -> Result<Vec<ColumnMeta>> {
    if left.len() != right.len() {
        return Err(Error::WrongColumnCountInSetOp);
    }
    Ok(left
        .iter()
        .zip(right)
        .map(|(l, r)| {
            let (lt, rt) = (SType::of_meta(l), SType::of_meta(r));
            let mut t = bind::unify(lt, rt);
            // A signed integer beside a BIGINT UNSIGNED one is a DECIMAL in MySQL 8.
            let wide = |m: &ColumnMeta| {
                let unsigned = m.flags & strata_types::output::flags::UNSIGNED != 0;
                bind::mixed_sign::meta_is_wide_unsigned(m.field_type, unsigned)
            };
            t = bind::mixed_sign::bumped(t, [(lt, wide(l)), (rt, wide(r))]);
            // A TIME beside a date is a DATETIME on the current date in MySQL; rows are
            // converted without a clock here, so such a column stays a string.
            if matches!(t, SType::DateTime(_))
                && matches!((lt, rt), (SType::Time(_), _) | (_, SType::Time(_)))
            {
                t = SType::Text;
            }
            // NOT NULL only when neither side can be NULL (MySQL 8 and MariaDB).
            let not_null = strata_types::output::flags::NOT_NULL;
            let both_not_null = l.flags & r.flags & not_null != 0;
            let mut m = if t == SType::of_meta(l) {
                l.clone()
            } else {
                t.meta(&l.name)
            };
            m.flags &= !not_null;
            if both_not_null {
                m.flags |= not_null;
            }
            m
        })
        .collect())
}

/// Gives nested set operations the enclosing one's result columns.
pub(crate) fn widen(plan: &mut QueryPlan, columns: &[ColumnMeta]) {
    if let QueryPlan::SetOp(s) = plan {
        s.columns = columns.to_vec();
        widen(&mut s.left, columns);
        widen(&mut s.right, columns);
    }
}

/// A set operation's ORDER BY item: a position, or the name of a result column.
pub(crate) fn result_column(e: &ast::Expr, cols: &[ColumnMeta]) -> Result<usize> {
    let unknown = |name: String| Error::UnknownColumn {
        column: name,
        context: "order clause".into(),
    };
    match e {
        ast::Expr::Value(v) => match bind::literal(&v.value)? {
            Value::Int(p) if p >= 1 && (p as usize) <= cols.len() => Ok(p as usize - 1),
            other => Err(unknown(format!("{other:?}"))),
        },
        ast::Expr::Identifier(id) => cols
            .iter()
            .position(|c| c.name.eq_ignore_ascii_case(&id.value))
            .ok_or_else(|| unknown(id.value.clone())),
        ast::Expr::CompoundIdentifier(ids) => {
            let last = ids.last().map(|i| i.value.clone()).unwrap_or_default();
            cols.iter()
                .position(|c| c.name.eq_ignore_ascii_case(&last))
                .ok_or_else(|| unknown(last))
        }
        other => Err(Error::NotSupported(format!(
            "ORDER BY expression {other} on a set operation"
        ))),
    }
}

/// Whether the statement's first query block says `SQL_CALC_FOUND_ROWS` (MySQL takes it
/// there only, and it counts for the whole query expression).
fn calc_found_rows(q: &ast::Query) -> bool {
    let mut body = q.body.as_ref();
    loop {
        match body {
            ast::SetExpr::Select(s) => {
                return s
                    .select_modifiers
                    .as_ref()
                    .is_some_and(|m| m.sql_calc_found_rows)
            }
            ast::SetExpr::SetOperation { left, .. } => body = left,
            ast::SetExpr::Query(q) => body = q.body.as_ref(),
            _ => return false,
        }
    }
}

/// Takes the outermost LIMIT/OFFSET off `root` (None when it has neither: every row is
/// sent anyway).
fn take_limit(root: &mut QueryPlan) -> Option<FoundRowsLimit> {
    let (limit, offset) = match root {
        QueryPlan::Block(b) => (&mut b.limit, &mut b.offset),
        QueryPlan::Ordered(o) => (&mut o.limit, &mut o.offset),
        QueryPlan::SetOp(_) | QueryPlan::Recursive(_) => return None,
    };
    if limit.is_none() && offset.is_none() {
        return None;
    }
    Some(FoundRowsLimit {
        limit: limit.take(),
        offset: offset.take(),
    })
}
