//! INSERT (with IGNORE, REPLACE and ON DUPLICATE KEY UPDATE), UPDATE and DELETE on one
//! table. Rows to change are collected first and changed after, so a statement never
//! sees its own writes (no "Halloween problem"). Values pass through
//! [`crate::expr::convert::coerce`] before reaching the engine, which checks unique keys and
//! assigns AUTO_INCREMENT values.
//!
//! Every engine call carries the statement's transaction. UPDATE and DELETE read their
//! target rows with exclusive locks (see [`crate::planner::block::plan_single_table`]); REPLACE and
//! ON DUPLICATE KEY UPDATE read the conflicting row the same way before changing it.

use crate::bind::{BindEnv, Binder, Scope};
use crate::constraints::RowRules;
use crate::context::resolve_table;
use crate::context::{Event, ExecCtx, Outcome, ReadModeGuard, RowTriggers, TableLocks, Timing};
use crate::exec::block::matching_rows;
use crate::exec::executor::Executor;
use crate::expr::convert::coerce_or_warn;
use crate::expr::convert_temporal::current_timestamp;
use crate::expr::env_overlay;
use crate::expr::{sort_compare, Expr, WarnLevel};
use crate::plan::block::SelectPlan;
use crate::plan::query::SubqueryPlans;
use crate::planner::block::plan_single_table;
use crate::planner::query::Planner;
use crate::statements::column_expr::ColumnExprs;
use crate::statements::ignore;
use crate::statements::insert_alias::RowAlias;
use crate::statements::multi_dml::Multi;
use crate::statements::view_dml::Through;
use sqlparser::ast;
use std::sync::Arc;
use strata_engine::{LockMode, ReadMode, RowId, Table, Txn};
use strata_types::keycode::encode_index_key;
use strata_types::schema::ColumnDefault;
use strata_types::{Collation, ColumnDef, DataType, Error, OkInfo, Result, TableDef, Value};

pub struct Target {
    pub db: String,
    pub table: Arc<dyn Table>,
    pub def: Arc<TableDef>,
    /// CHECK constraints and foreign keys to enforce (`crate::constraints`).
    pub rules: Option<Arc<RowRules>>,
    /// Expression defaults and generated columns, bound over the row
    /// (`column_expr`); None when the table has none.
    pub exprs: Option<Arc<ColumnExprs>>,
    /// The table's triggers, compiled when the statement is bound (`crate::routines`).
    pub triggers: Option<Arc<dyn RowTriggers>>,
    /// The view the statement names, when it changes rows through one (`view_dml`).
    pub through: Option<Box<Through>>,
}

pub enum InsertValue {
    Expr(Expr),
    Default,
}

pub struct InsertPlan {
    pub target: Target,
    /// Column positions the VALUES lists fill, in order.
    pub columns: Vec<usize>,
    pub rows: Vec<Vec<InsertValue>>,
    /// INSERT ... SELECT: the rows come from this query instead of `rows`.
    pub select: Option<Box<crate::plan::query::QueryStatement>>,
    pub ignore: bool,
    pub replace: bool,
    /// ON DUPLICATE KEY UPDATE assignments, bound over `[existing row, new row]`
    /// (`VALUES(c)` reads the new row).
    pub on_duplicate: Option<Vec<(usize, Expr)>>,
    /// Subqueries of the VALUES lists and the ON DUPLICATE KEY UPDATE values.
    pub subqueries: SubqueryPlans,
}

pub struct UpdatePlan {
    /// The changed table (of a multi-table UPDATE, the first one).
    pub target: Target,
    /// The rows to change: the target's WHERE, ORDER BY and LIMIT; of a multi-table
    /// UPDATE, the join of its tables with the SET values as the projection.
    pub source: SelectPlan,
    /// (column, value) of a single-table UPDATE (a multi-table one's are in `multi`).
    pub assignments: Vec<(usize, Expr)>,
    /// Subqueries of WHERE, ORDER BY and the SET values (and, of a multi-table UPDATE,
    /// the tables it reads without changing them).
    pub subqueries: SubqueryPlans,
    /// A multi-table UPDATE: its other targets and where each finds its rows.
    pub multi: Option<Box<Multi>>,
    /// UPDATE IGNORE (`statements::ignore`).
    pub ignore: bool,
}

pub struct DeletePlan {
    /// The table rows are deleted from (of a multi-table DELETE, the first one).
    pub target: Target,
    pub source: SelectPlan,
    /// Subqueries of WHERE and ORDER BY (and, of a multi-table DELETE, the tables it
    /// reads without changing them).
    pub subqueries: SubqueryPlans,
    /// A multi-table DELETE: its other targets and where each finds its rows.
    pub multi: Option<Box<Multi>>,
    /// DELETE IGNORE (`statements::ignore`).
    pub ignore: bool,
}

impl UpdatePlan {
    /// Every table the statement changes.
    pub fn targets(&self) -> impl Iterator<Item = &Target> {
        std::iter::once(&self.target).chain(self.multi.iter().flat_map(|m| m.more.iter()))
    }
    pub fn targets_mut(&mut self) -> impl Iterator<Item = &mut Target> {
        std::iter::once(&mut self.target)
            .chain(self.multi.iter_mut().flat_map(|m| m.more.iter_mut()))
    }
}

impl DeletePlan {
    /// Every table the statement deletes from.
    pub fn targets(&self) -> impl Iterator<Item = &Target> {
        std::iter::once(&self.target).chain(self.multi.iter().flat_map(|m| m.more.iter()))
    }
    pub fn targets_mut(&mut self) -> impl Iterator<Item = &mut Target> {
        std::iter::once(&mut self.target)
            .chain(self.multi.iter_mut().flat_map(|m| m.more.iter_mut()))
    }
}

fn target(cx: &ExecCtx, name: &ast::ObjectName, verb: &'static str) -> Result<Target> {
    let (db, t) = resolve_table(cx, name)?;
    let mut through = match cx.catalog.view(&db, &t) {
        Some(v) => Some(Box::new(Through::resolve(cx, &v, verb)?)),
        None => None,
    };
    let (db, t) = match &through {
        Some(th) => (th.base_db.clone(), th.base_table.clone()),
        None => (db, t),
    };
    let table = cx.table(&db, &t)?;
    if let Some(th) = &mut through {
        th.bind_check(&table)?;
    }
    let def = table.def().clone();
    let rules = RowRules::for_target(cx, &db, &def, &table)?;
    let exprs = ColumnExprs::bind(&def, &db, &table)?;
    Ok(Target {
        db,
        table,
        def,
        rules,
        exprs,
        triggers: None,
        through,
    })
}

/// The base column a column list or SET names: through a view, by the view's names.
fn target_column(t: &Target, name: &ast::ObjectName) -> Result<usize> {
    match &t.through {
        Some(th) => th.column_position(name),
        None => column_position(&t.def, name),
    }
}

fn column_position(def: &TableDef, name: &ast::ObjectName) -> Result<usize> {
    let parts = crate::parse::object_name_parts(name);
    let col = parts.last().cloned().unwrap_or_default();
    def.column_index(&col).ok_or_else(|| Error::UnknownColumn {
        column: col,
        context: "field list".into(),
    })
}

pub fn plan_insert(ins: &ast::Insert, cx: &ExecCtx) -> Result<InsertPlan> {
    let ast::TableObject::TableName(name) = &ins.table else {
        return Err(Error::NotSupported("INSERT INTO a table function".into()));
    };
    let target = target(cx, name, "INSERT")?;
    let def = target.def.clone();
    let empty = Scope::default();
    let planner = Planner::new(cx).without_merge();
    let env = planner.root_env();
    let mut columns: Vec<usize> = ins
        .columns
        .iter()
        .map(|c| target_column(&target, c))
        .collect::<Result<_>>()?;
    let mut rows = Vec::new();
    if !ins.assignments.is_empty() {
        // INSERT ... SET a=1, b=2
        let mut row = Vec::new();
        for a in &ins.assignments {
            let ast::AssignmentTarget::ColumnName(n) = &a.target else {
                return Err(Error::NotSupported("tuple assignment".into()));
            };
            let col = target_column(&target, n)?;
            columns.push(col);
            row.push(insert_value(&a.value, &empty, &env, def.columns.get(col))?);
        }
        rows.push(row);
    } else {
        let Some(source) = &ins.source else {
            return Err(Error::Syntax("INSERT without VALUES".into()));
        };
        if columns.is_empty() {
            columns = match &target.through {
                Some(th) => th.insert_columns()?,
                // Without a column list, INSERT names every visible column.
                None => def.visible_columns(),
            };
        }
        let ast::SetExpr::Values(values) = source.body.as_ref() else {
            let source = select_numeric_hex(source, &columns, &def);
            let sub = Planner::new(cx).without_merge().plan_statement(&source)?;
            if sub.columns().len() != columns.len() {
                return Err(Error::ValueCount(1));
            }
            drop(env);
            return finish_insert_plan(ins, target, columns, vec![], Some(Box::new(sub)), planner);
        };
        for (i, r) in values.rows.iter().enumerate() {
            let content = &r.content;
            if content.len() != columns.len() && !(content.is_empty() && ins.columns.is_empty()) {
                return Err(Error::ValueCount(i as u64 + 1));
            }
            rows.push(
                content
                    .iter()
                    .enumerate()
                    .map(|(j, e)| {
                        let col = columns.get(j).and_then(|&c| def.columns.get(c));
                        insert_value(e, &empty, &env, col)
                    })
                    .collect::<Result<_>>()?,
            );
        }
    }
    drop(env);
    finish_insert_plan(ins, target, columns, rows, None, planner)
}

/// Binds ON DUPLICATE KEY UPDATE and completes the plan; `planner` holds the
/// subqueries bound so far.
fn finish_insert_plan(
    ins: &ast::Insert,
    target: Target,
    columns: Vec<usize>,
    rows: Vec<Vec<InsertValue>>,
    select: Option<Box<crate::plan::query::QueryStatement>>,
    planner: Planner,
) -> Result<InsertPlan> {
    let env = planner.root_env();
    let def = target.def.clone();
    let on_duplicate = match &ins.on {
        None => None,
        Some(ast::OnInsert::DuplicateKeyUpdate(assignments)) => {
            // Scope: the existing row, then the new row (for VALUES()). Through a view
            // the values are rewritten over the base table (`view_dml`), which they
            // name by the view's name for it.
            let table_alias = match &target.through {
                Some(th) => th.base_alias.clone(),
                None => def.name.clone(),
            };
            let mut scope = Scope::default();
            scope.push(table_alias.clone(), target.db.clone(), target.table.clone());
            let width = def.columns.len();
            // `… AS new ON DUPLICATE KEY UPDATE c = new.c`: the alias's references become
            // the names VALUES(c) binds to.
            let alias = RowAlias::of(ins, &def, &columns)?;
            if alias.is_some() && target.through.is_some() {
                return Err(Error::NotSupported(
                    "a row alias in INSERT through a view".into(),
                ));
            }
            let mut out = Vec::new();
            for a in assignments {
                let ast::AssignmentTarget::ColumnName(n) = &a.target else {
                    return Err(Error::NotSupported("tuple assignment".into()));
                };
                let col = target_column(&target, n)?;
                let mut expr = a.value.clone();
                let aliased = match (&alias, &target.through) {
                    (Some(alias), _) => alias.rewrite(&mut expr, &def)?,
                    (None, Some(th)) => {
                        expr = th.rewrite_odku(&expr, &def)?;
                        true
                    }
                    (None, None) => false,
                };
                let value = rewrite_values_fn(&expr, &def, &table_alias, width, aliased)?;
                let e = match value {
                    Some(e) => e,
                    None => Binder::in_env(&scope, "field list", &env).bind(&a.value)?.0,
                };
                out.push((col, e));
            }
            Some(out)
        }
        Some(_) => return Err(Error::NotSupported("ON CONFLICT".into())),
    };
    drop(env);
    let subqueries = planner.finish();
    subqueries.check_target_not_read(&target.db, &target.def.name)?;
    Ok(InsertPlan {
        target,
        columns,
        rows,
        select,
        ignore: ins.ignore,
        replace: ins.replace_into,
        on_duplicate,
        subqueries,
    })
}

/// Binds an ODKU expression in which `VALUES(col)` (or, when `aliased`, a `__new__col`
/// name the row alias was rewritten to) names the row being inserted: such references
/// become `Column(width + col)`. Returns None when there is no such reference.
fn rewrite_values_fn(
    e: &ast::Expr,
    def: &TableDef,
    table_alias: &str,
    width: usize,
    aliased: bool,
) -> Result<Option<Expr>> {
    if !aliased && !e.to_string().to_ascii_uppercase().contains("VALUES(") {
        return Ok(None);
    }
    // Rewrite the AST text: VALUES(c) -> a reference to a pseudo table `__new`.
    let mut e2 = e.clone();
    replace_values_calls(&mut e2);
    let mut scope = Scope::default();
    let shadow = Arc::new(ShadowTable {
        def: Arc::new(def.clone()),
    });
    let mut new_def = def.clone();
    new_def.name = "__new".into();
    for c in &mut new_def.columns {
        c.name = format!("__new__{}", c.name);
    }
    let shadow_new = Arc::new(ShadowTable {
        def: Arc::new(new_def),
    });
    scope.push(table_alias.to_string(), def.db.clone(), shadow);
    scope.push("__new".into(), def.db.clone(), shadow_new);
    let (bound, _, _) = Binder::new(&scope, "field list").bind(&e2)?;
    let _ = width;
    Ok(Some(bound))
}

fn replace_values_calls(e: &mut ast::Expr) {
    use ast::Expr as A;
    match e {
        A::Function(f)
            if crate::parse::object_name_parts(&f.name)
                .join(".")
                .eq_ignore_ascii_case("values") =>
        {
            if let ast::FunctionArguments::List(list) = &f.args {
                if let [ast::FunctionArg::Unnamed(ast::FunctionArgExpr::Expr(A::Identifier(id)))] =
                    list.args.as_slice()
                {
                    *e = A::Identifier(ast::Ident::new(format!("__new__{}", id.value)));
                }
            }
        }
        A::BinaryOp { left, right, .. } => {
            replace_values_calls(left);
            replace_values_calls(right);
        }
        A::UnaryOp { expr, .. } | A::Nested(expr) => replace_values_calls(expr),
        A::Function(f) => {
            if let ast::FunctionArguments::List(list) = &mut f.args {
                for a in &mut list.args {
                    if let ast::FunctionArg::Unnamed(ast::FunctionArgExpr::Expr(x)) = a {
                        replace_values_calls(x);
                    }
                }
            }
        }
        _ => {}
    }
}

/// A table handle used only for name resolution (never read): lets the binder resolve
/// `__new.col` in ODKU expressions.
struct ShadowTable {
    def: Arc<TableDef>,
}

impl Table for ShadowTable {
    fn def(&self) -> &Arc<TableDef> {
        &self.def
    }
    fn lock(&self, _: LockMode) -> strata_engine::TableLock {
        strata_engine::TableLock::none()
    }
    fn scan(&self, _: &Txn, _: &mut strata_engine::RowFn) -> Result<()> {
        Err(Error::Internal("shadow table read".into()))
    }
    fn index_scan(
        &self,
        _: &Txn,
        _: usize,
        _: &strata_engine::KeyRange,
        _: bool,
        _: &mut strata_engine::RowFn,
    ) -> Result<()> {
        Err(Error::Internal("shadow table read".into()))
    }
    fn insert(&self, _: &Txn, _: &mut Vec<Value>) -> Result<strata_engine::Inserted> {
        Err(Error::Internal("shadow table write".into()))
    }
    fn update(&self, _: &Txn, _: RowId, _: &[Value], _: &[Value]) -> Result<RowId> {
        Err(Error::Internal("shadow table write".into()))
    }
    fn delete(&self, _: &Txn, _: RowId, _: &[Value]) -> Result<()> {
        Err(Error::Internal("shadow table write".into()))
    }
    fn truncate(&self) -> Result<()> {
        Err(Error::Internal("shadow table write".into()))
    }
    fn status(&self) -> strata_engine::TableStatus {
        Default::default()
    }
    fn flush(&self) -> Result<()> {
        Ok(())
    }
}

/// Recomputes the generated columns of a changed row (UPDATE, ON DUPLICATE KEY UPDATE),
/// each stored as its column stores a value; NULL into NOT NULL is 1048.
fn compute_generated(
    x: &ColumnExprs,
    def: &TableDef,
    row: &mut [Value],
    ecx: &crate::expr::EvalCtx,
    row_no: u64,
    strict: bool,
    cx: &ExecCtx,
) -> Result<()> {
    x.compute_generated(row, ecx, |v, c| {
        let col = &def.columns[c];
        if v.is_null() && !col.nullable {
            return Err(Error::ColumnNotNull(col.name.clone()));
        }
        store_value(v, col, row_no, strict, cx)
    })
}

/// The bare keyword `DEFAULT` as a value.
fn is_default_keyword(e: &ast::Expr) -> bool {
    matches!(e, ast::Expr::Identifier(id)
        if id.quote_style.is_none() && id.value.eq_ignore_ascii_case("default"))
}

/// `UPDATE … SET c = DEFAULT`: the column's default as an expression over the row (an
/// expression default is evaluated per row, as MySQL does).
fn update_default(col: &ColumnDef, scope: &Scope, env: &BindEnv, strict: bool) -> Result<Expr> {
    let bind_text = |t: &str| -> Result<Expr> {
        let e = crate::statements::column_expr::parse_stored(t)?;
        Ok(Binder::in_env(scope, "field list", env).bind(&e)?.0)
    };
    Ok(match &col.default {
        Some(ColumnDefault::Value(v)) => Expr::Literal(v.clone()),
        Some(ColumnDefault::Expr(t)) => bind_text(t)?,
        Some(ColumnDefault::CurrentTimestamp) => {
            bind_text(&format!("now({})", col.data_type.fsp().unwrap_or(0)))?
        }
        None if col.nullable || col.auto_increment => Expr::Literal(Value::Null),
        None if matches!(col.data_type, DataType::Enum(_)) || !strict => {
            Expr::Literal(implicit_default(col))
        }
        None => return Err(Error::NoDefault(col.name.clone())),
    })
}

fn insert_value(
    e: &ast::Expr,
    scope: &Scope,
    env: &BindEnv,
    col: Option<&ColumnDef>,
) -> Result<InsertValue> {
    if let ast::Expr::Identifier(id) = e {
        if id.quote_style.is_none() && id.value.eq_ignore_ascii_case("default") {
            return Ok(InsertValue::Default);
        }
    }
    if let Some(v) = numeric_hex(e, col) {
        return Ok(InsertValue::Expr(Expr::Literal(v)));
    }
    let (x, _, _) = Binder::in_env(scope, "field list", env).bind(e)?;
    Ok(InsertValue::Expr(x))
}

/// `INSERT … SELECT 0x41`: a hexadecimal literal in a plain SELECT's list stored into a
/// numeric column is its number, as in `VALUES` (MySQL's literal item stores itself as
/// a number there). A set operation or a derived table materialises the literal as a
/// binary string first, so only a plain SELECT's own items are rewritten, as in MySQL.
fn select_numeric_hex(source: &ast::Query, columns: &[usize], def: &TableDef) -> ast::Query {
    let mut source = source.clone();
    if let ast::SetExpr::Select(select) = source.body.as_mut() {
        let has_wildcard = select.projection.iter().any(|i| {
            matches!(
                i,
                ast::SelectItem::Wildcard(_) | ast::SelectItem::QualifiedWildcard(..)
            )
        });
        if !has_wildcard {
            for (item, &c) in select.projection.iter_mut().zip(columns) {
                let e = match item {
                    ast::SelectItem::UnnamedExpr(e) => e,
                    ast::SelectItem::ExprWithAlias { expr, .. } => expr,
                    _ => continue,
                };
                if let Some(Value::UInt(n)) = numeric_hex(e, def.columns.get(c)) {
                    *e = ast::Expr::Value(ast::Value::Number(n.to_string(), false).into());
                }
            }
        }
    }
    source
}

/// A hexadecimal literal stored into a numeric column is its number (`0x41` into an
/// INT column is 65, as in MySQL), not its bytes read as text.
pub(crate) fn numeric_hex(e: &ast::Expr, col: Option<&ColumnDef>) -> Option<Value> {
    let numeric = col.is_some_and(|c| {
        c.data_type.is_integer()
            || matches!(
                c.data_type,
                DataType::Decimal { .. }
                    | DataType::Float { .. }
                    | DataType::Double { .. }
                    | DataType::Year
            )
    });
    if numeric {
        crate::bind::hex_number(e)
    } else {
        None
    }
}

/// The value a column gets when an INSERT does not name it (or says DEFAULT). An
/// expression default is NULL here: the caller evaluates it over the row
/// ([`ColumnExprs::fill_defaults`]).
pub fn default_value(col: &strata_types::ColumnDef, cx: &ExecCtx, strict: bool) -> Result<Value> {
    match &col.default {
        Some(ColumnDefault::Value(v)) => Ok(v.clone()),
        Some(ColumnDefault::Expr(_)) => Ok(Value::Null),
        Some(ColumnDefault::CurrentTimestamp) => Ok(current_timestamp(col, cx.env.now())),
        None if col.nullable || col.auto_increment => Ok(Value::Null),
        // A NOT NULL ENUM's default is its first member, in strict mode too.
        None if matches!(col.data_type, DataType::Enum(_)) => Ok(implicit_default(col)),
        None if strict => Err(Error::NoDefault(col.name.clone())),
        None => Ok(implicit_default(col)),
    }
}

/// The implicit default of a NOT NULL column without a DEFAULT: the type's zero, an
/// ENUM's first member, the empty SET.
pub(crate) fn implicit_default(col: &strata_types::ColumnDef) -> Value {
    let ty = &col.data_type;
    if let DataType::Enum(_) = ty {
        strata_types::member::enum_value(&col.members, 1)
    } else if let DataType::Set(_) = ty {
        strata_types::member::set_value(&col.members, 0)
    } else if let Some(v) = crate::expr::convert_temporal::implicit_default(ty) {
        v
    } else if ty.is_integer() {
        Value::Int(0)
    } else if ty.is_string() {
        Value::Bytes(vec![])
    } else if ty.is_temporal() {
        Value::DateTime(Default::default())
    } else if let DataType::Decimal { .. } = ty {
        Value::Decimal(strata_types::Decimal::from_i64(0))
    } else {
        Value::Double(0.0)
    }
}

/// Finds the existing row that conflicts with `row` on some unique index. The row is
/// about to be replaced or updated, so it is read locked exclusively: its latest
/// version, which a consistent read might not even see.
fn find_conflict(
    table: &Arc<dyn Table>,
    txn: &Txn,
    def: &TableDef,
    row: &[Value],
) -> Result<Option<(RowId, Vec<Value>)>> {
    let _mode = ReadModeGuard::set(txn, ReadMode::LockExclusive);
    for (ix, index) in def.indexes.iter().enumerate() {
        if !index.unique || index.columns.iter().any(|&c| row[c].is_null()) {
            continue;
        }
        let mut key = Vec::new();
        encode_index_key(&mut key, def, index, row);
        let mut found = None;
        table.index_scan(
            txn,
            ix,
            &strata_engine::KeyRange::prefix(key),
            false,
            &mut |id, vals| {
                found = Some((id, vals.to_vec()));
                Ok(strata_engine::Flow::Stop)
            },
        )?;
        if found.is_some() {
            return Ok(found);
        }
    }
    Ok(None)
}

pub fn execute_insert(p: &InsertPlan, cx: &mut ExecCtx, params: &[Value]) -> Result<Outcome> {
    let done = if p.ignore {
        ignore::run(cx, |cx| insert_rows(p, cx, params))
    } else if cx.strict {
        under_strict_change(cx, |cx| insert_rows(p, cx, params))
    } else {
        insert_rows(p, cx, params)
    };
    match &p.target.through {
        Some(th) => done.map_err(|e| th.map_error(e)),
        None => done,
    }
}

/// A value as column `col` stores it ([`coerce_or_warn`]), then sql_mode's
/// NO_ZERO_DATE: a zero date in a DATE, DATETIME or TIMESTAMP column is error 1292 in
/// strict mode, otherwise stored with warning 1264, as MySQL.
fn store_value(v: Value, col: &ColumnDef, row: u64, strict: bool, cx: &ExecCtx) -> Result<Value> {
    // A warning that computing this row raised in a strict INSERT or UPDATE is its error.
    env_overlay::raise_kept(cx.env)?;
    let v = coerce_or_warn(v, col, row, strict, cx.env)?;
    if cx.sql_mode.has(strata_types::SqlMode::NO_ZERO_DATE) {
        if let Value::DateTime(d) = &v {
            if d.is_zero() {
                let kind = match col.data_type {
                    DataType::Date => "date",
                    DataType::Timestamp { .. } => "timestamp",
                    _ => "datetime",
                };
                if strict {
                    return Err(Error::IncorrectTemporalValue {
                        kind,
                        value: v.to_text(),
                        column: col.name.clone(),
                        row,
                    });
                }
                cx.env.warn(
                    WarnLevel::Warning,
                    1264,
                    format!("Out of range value for column '{}' at row {row}", col.name),
                );
            }
        }
    }
    Ok(v)
}

/// An explicit 0 in an AUTO_INCREMENT column asks for the next value, as NULL does,
/// unless sql_mode has NO_AUTO_VALUE_ON_ZERO (which dumps set, so a row whose id is 0
/// is restored as 0); the engines generate a value for NULL only.
pub(crate) fn zero_asks_for_next_value(v: &mut Value, mode: strata_types::SqlMode) {
    if !mode.has(strata_types::SqlMode::NO_AUTO_VALUE_ON_ZERO)
        && !v.is_null()
        && v.to_f64() == Some(0.0)
    {
        *v = Value::Null;
    }
}

fn insert_rows(p: &InsertPlan, cx: &mut ExecCtx, params: &[Value]) -> Result<Outcome> {
    // INSERT … SELECT reads every row before it writes one (it may read its own
    // target), into rows held as a temporary table's are: granted from the working
    // memory, spilled to tmpdir past it. Each is taken out as the loop reaches it.
    let selected = match &p.select {
        Some(sub) => Some(crate::exec::executor::collect_rows(sub, cx, params)?),
        None => None,
    };
    let source_len = selected.as_ref().map_or(p.rows.len() as u64, |t| t.len());
    let mut selected = selected
        .map(crate::temp_rows::TempRows::drain)
        .transpose()?;
    let mut selected_row: Vec<InsertValue> = Vec::new();
    let locks = lock_target_and_reads(cx, &p.target, &p.subqueries)?;
    let triggers = p.target.triggers.as_deref();
    let before_insert = triggers.filter(|t| t.has(Timing::Before, Event::Insert));
    let def = &p.target.def;
    let table = &p.target.table;
    let rules = p.target.rules.as_deref();
    let ex = Executor::new(&p.subqueries.subqueries, cx, params);
    let ecx = ex.eval_ctx(&[]);
    // INSERT IGNORE turns what strict mode refuses into warnings, as MySQL does.
    let strict = cx.strict && !p.ignore;
    let mut affected = 0u64;
    let mut first_generated = None;
    // The AUTO_INCREMENT column's value in the last row inserted: the OK packet's insert
    // id when no value was generated (MySQL reports an explicit value there, though
    // LAST_INSERT_ID() keeps its own).
    let auto_col = def.columns.iter().position(|c| c.auto_increment);
    let mut last_auto = None;
    // The values this statement hands out, reserved as InnoDB does (`autoinc.rs`).
    let estimate = if p.select.is_some() { 0 } else { source_len };
    let mut autoinc = super::autoinc::AutoIncrement::new(estimate);
    // ON DUPLICATE KEY UPDATE rows left as they were: 0 affected rows, 1 found row.
    let mut unchanged = 0u64;
    // Rows that met an existing key (updated, replaced or ignored), and of those the
    // ignored ones, which are also warnings.
    let mut duplicates = 0u64;
    let mut ignored = 0u64;
    // NULL into a NOT NULL column the statement names: MySQL 8 checks a single-row
    // INSERT … VALUES (or SET) without IGNORE with errors — 1048 in every sql_mode —
    // and every other INSERT with warnings (the column's implicit default and 1048),
    // which strict mode then makes errors.
    let null_is_error = strict || (p.select.is_none() && source_len == 1 && !p.ignore);
    let rows_before = cx.env.rows_before();
    for rn in 0.. {
        let values: &[InsertValue] = match &mut selected {
            Some(rows) => match rows.next_row()? {
                Some(r) => {
                    selected_row.clear();
                    selected_row.extend(r.into_iter().map(|v| InsertValue::Expr(Expr::Literal(v))));
                    &selected_row
                }
                None => break,
            },
            None => match p.rows.get(rn) {
                Some(v) => v,
                None => break,
            },
        };
        cx.txn.check_interrupt()?;
        let row_no = rows_before + rn as u64 + 1;
        let mut row: Vec<Value> = def
            .columns
            .iter()
            .map(|col| match &col.default {
                Some(ColumnDefault::Value(v)) => v.clone(),
                Some(ColumnDefault::CurrentTimestamp) => current_timestamp(col, cx.env.now()),
                Some(ColumnDefault::Expr(_)) | None => Value::Null,
            })
            .collect();
        // Columns not named get defaults; a NOT NULL column without one is an error
        // only when it was not named.
        let mut named = vec![false; def.columns.len()];
        // Columns whose expression default is due: not named, or named as DEFAULT.
        let mut pending = vec![true; def.columns.len()];
        for (v, &c) in values.iter().zip(&p.columns) {
            named[c] = true;
            pending[c] = matches!(v, InsertValue::Default);
            if def.columns[c].generated.is_some() && !pending[c] {
                generated_value_written(&def.columns[c].name, &def.name, strict, cx)?;
                // Ignored: the column is computed below, as for DEFAULT.
                pending[c] = true;
                row[c] = Value::Null;
                continue;
            }
            row[c] = match v {
                // A generated column's DEFAULT: computed below.
                InsertValue::Default if def.columns[c].generated.is_some() => Value::Null,
                InsertValue::Default => default_value(&def.columns[c], cx, strict)?,
                InsertValue::Expr(e) => e.eval(&[], &ecx)?,
            };
        }
        if let Some(x) = &p.target.exprs {
            x.fill_defaults(&mut row, &pending, &ecx)?;
        }
        if let Some(t) = before_insert {
            // The trigger sees the values as the columns hold them; NOT NULL is
            // checked after it, as MySQL does, so it may fill a missing value in.
            for (i, col) in def.columns.iter().enumerate() {
                if !row[i].is_null() {
                    let v = std::mem::take(&mut row[i]);
                    row[i] = store_value(v, col, row_no, strict, cx)?;
                }
            }
            t.fire(
                Timing::Before,
                Event::Insert,
                None,
                Some(&mut row),
                cx,
                &locks,
            )?;
        }
        for (i, col) in def.columns.iter().enumerate() {
            if let Some(e) = p.target.exprs.as_ref().and_then(|x| x.generated_of(i)) {
                // A generated column, computed over the columns before it as they will
                // be stored.
                let v = e.eval(&row, &ecx)?;
                if v.is_null() && !col.nullable {
                    return Err(Error::ColumnNotNull(col.name.clone()));
                }
                row[i] = store_value(v, col, row_no, strict, cx)?;
                continue;
            }
            if row[i].is_null() && !col.nullable {
                if col.auto_increment {
                    continue;
                }
                if matches!(col.data_type, DataType::Timestamp { .. }) {
                    row[i] = current_timestamp(col, cx.env.now());
                    continue;
                }
                row[i] = if named[i] {
                    null_into_not_null(col, null_is_error, cx)?
                } else if strict && !matches!(col.data_type, DataType::Enum(_)) {
                    return Err(Error::NoDefault(col.name.clone()));
                } else {
                    implicit_default(col)
                };
            }
            let v = std::mem::take(&mut row[i]);
            row[i] = store_value(v, col, row_no, strict, cx)?;
        }
        if let Some(a) = auto_col {
            zero_asks_for_next_value(&mut row[a], cx.sql_mode);
        }
        if let Some(th) = &p.target.through {
            // WITH CHECK OPTION: INSERT IGNORE skips a row the view would not show.
            match th.check_row(&row, &ecx) {
                Ok(()) => {}
                Err(e) if p.ignore => {
                    ignored += 1;
                    cx.env.warn(WarnLevel::Warning, e.code(), e.to_string());
                    continue;
                }
                Err(e) => return Err(e),
            }
        }
        if let Some(r) = rules {
            match r.verify(&row, &ecx) {
                Ok(()) => {}
                Err(e) if p.ignore => {
                    ignored += 1;
                    cx.env.warn(WarnLevel::Warning, e.code(), e.to_string());
                    continue;
                }
                Err(e) => return Err(e),
            }
        }
        // The handler generates the value as the row is written: after the BEFORE
        // triggers and the checks, so a row skipped before that takes none.
        let saved_auto = autoinc.saved();
        let mut generated_now = None;
        if let Some(a) = auto_col {
            if row[a].is_null() {
                generated_now = autoinc.generate(|n, at| table.reserve_auto_increment(n, at));
                // Past the column's type (TINYINT after 127): InnoDB caps a reserved
                // value at the type's largest, which then meets the row holding it
                // (MySQL 8: 1062 Duplicate entry '127'). An engine that generates its
                // own values refuses them itself (167; the row number is added below).
                let hi = def.columns[a]
                    .data_type
                    .int_range()
                    .map(|(_, hi)| hi as u64);
                if let (Some(v), Some(hi)) = (generated_now, hi) {
                    generated_now = Some(v.min(hi));
                }
                if let Some(v) = generated_now {
                    row[a] = if def.columns[a].data_type.is_unsigned() {
                        Value::UInt(v)
                    } else {
                        Value::Int(v.min(i64::MAX as u64) as i64)
                    };
                }
            } else if let Some(v) = row[a].to_i64().filter(|v| *v > 0) {
                autoinc.after_explicit(v as u64);
            }
        }
        autoinc.written();
        let mut attempt = row.clone();
        let inserted = crate::row_log::insert(cx, table, &mut attempt).and_then(|ins| {
            if let Some(r) = rules {
                if let Err(e) = r.links.check_parents(cx, None, &attempt) {
                    // INSERT IGNORE skips the row: take back what was written.
                    if p.ignore {
                        crate::row_log::delete(cx, table, ins.row_id, &attempt)?;
                    }
                    return Err(e);
                }
            }
            Ok(ins)
        });
        let inserted = inserted.map_err(|e| match e {
            Error::AutoIncrementOutOfRange { column, .. } => Error::AutoIncrementOutOfRange {
                column,
                row: row_no,
            },
            other => other,
        });
        match inserted {
            Err(e @ Error::FkNoParent(_)) if p.ignore => {
                autoinc.restore(saved_auto, generated_now);
                ignored += 1;
                cx.env.warn(WarnLevel::Warning, e.code(), e.to_string());
            }
            Ok(ins) => {
                affected += 1;
                if first_generated.is_none() {
                    first_generated = ins.generated_id.or(generated_now);
                }
                last_auto = auto_col.and_then(|c| row[c].to_i64()).map(|i| i as u64);
                if let Some(t) = triggers {
                    t.fire(
                        Timing::After,
                        Event::Insert,
                        None,
                        Some(&mut attempt),
                        cx,
                        &locks,
                    )?;
                }
            }
            Err(e @ Error::DuplicateKey { .. }) if p.ignore => {
                autoinc.restore(saved_auto, generated_now);
                duplicates += 1;
                ignored += 1;
                cx.env.warn(WarnLevel::Warning, e.code(), e.to_string());
            }
            Err(e @ Error::DuplicateKey { .. }) if p.replace || p.on_duplicate.is_some() => {
                let Some((id, old)) = find_conflict(table, cx.txn, def, &row)? else {
                    return Err(e);
                };
                duplicates += 1;
                if let Some(assignments) = &p.on_duplicate {
                    let mut both = old.clone();
                    both.extend(row.iter().cloned());
                    let mut new = old.clone();
                    for (col, e) in assignments {
                        if def.columns[*col].generated.is_some() {
                            return Err(Error::GeneratedValueNotAllowed {
                                column: def.columns[*col].name.clone(),
                                table: def.name.clone(),
                            });
                        }
                        let v = e.eval(&both, &ecx)?;
                        let c = &def.columns[*col];
                        new[*col] = store_value(v, c, row_no, strict, cx)?;
                        // The update's NULL into NOT NULL: checked as the insert's.
                        if new[*col].is_null() && !c.nullable {
                            new[*col] = null_into_not_null(c, null_is_error, cx)?;
                        }
                        both[*col] = new[*col].clone();
                    }
                    if let Some(x) = &p.target.exprs {
                        compute_generated(x, def, &mut new, &ecx, row_no, strict, cx)?;
                    }
                    if let Some(t) = triggers {
                        t.fire(
                            Timing::Before,
                            Event::Update,
                            Some(&old),
                            Some(&mut new),
                            cx,
                            &locks,
                        )?;
                    }
                    if touch_on_update(def, &old, &mut new, assignments.iter().map(|a| a.0), cx) {
                        if let Some(th) = &p.target.through {
                            th.check_row(&new, &ecx)?;
                        }
                        if let Some(r) = rules {
                            r.verify(&new, &ecx)?;
                            r.links.before_update(cx, &old, &new)?;
                        }
                        crate::row_log::update(cx, table, id, &old, &new)?;
                        if let Some(r) = rules {
                            r.links.check_parents(cx, Some(&old), &new)?;
                        }
                        affected += 2;
                    } else {
                        unchanged += 1;
                    }
                    if let Some(t) = triggers {
                        t.fire(
                            Timing::After,
                            Event::Update,
                            Some(&old),
                            Some(&mut new),
                            cx,
                            &locks,
                        )?;
                    }
                } else {
                    // REPLACE: delete every conflicting row, then insert (with the delete
                    // triggers around each delete, as MySQL when the table has them).
                    if let Some(t) = triggers {
                        t.fire(Timing::Before, Event::Delete, Some(&old), None, cx, &locks)?;
                    }
                    if let Some(r) = rules {
                        r.links.before_delete(cx, &old)?;
                    }
                    crate::row_log::delete(cx, table, id, &old)?;
                    if let Some(t) = triggers {
                        t.fire(Timing::After, Event::Delete, Some(&old), None, cx, &locks)?;
                    }
                    affected += 1;
                    loop {
                        let mut attempt = row.clone();
                        match crate::row_log::insert(cx, table, &mut attempt) {
                            Ok(ins) => {
                                if let Some(r) = rules {
                                    r.links.check_parents(cx, None, &attempt)?;
                                }
                                affected += 1;
                                if first_generated.is_none() {
                                    first_generated = ins.generated_id.or(generated_now);
                                }
                                if let Some(t) = triggers {
                                    t.fire(
                                        Timing::After,
                                        Event::Insert,
                                        None,
                                        Some(&mut attempt),
                                        cx,
                                        &locks,
                                    )?;
                                }
                                break;
                            }
                            Err(e @ Error::DuplicateKey { .. }) => {
                                match find_conflict(table, cx.txn, def, &row)? {
                                    Some((id, old)) => {
                                        if let Some(t) = triggers {
                                            t.fire(
                                                Timing::Before,
                                                Event::Delete,
                                                Some(&old),
                                                None,
                                                cx,
                                                &locks,
                                            )?;
                                        }
                                        if let Some(r) = rules {
                                            r.links.before_delete(cx, &old)?;
                                        }
                                        crate::row_log::delete(cx, table, id, &old)?;
                                        if let Some(t) = triggers {
                                            t.fire(
                                                Timing::After,
                                                Event::Delete,
                                                Some(&old),
                                                None,
                                                cx,
                                                &locks,
                                            )?;
                                        }
                                        affected += 1;
                                    }
                                    None => return Err(e),
                                }
                            }
                            Err(e) => return Err(e),
                        }
                    }
                }
            }
            Err(e) => return Err(e),
        }
    }
    // The info text counts every warning of the statement (MySQL's
    // `current_statement_cond_count`), the skipped rows' and the stored values' alike.
    let info = if source_len > 1 || p.select.is_some() {
        format!(
            "Records: {}  Duplicates: {}  Warnings: {}",
            source_len,
            duplicates,
            cx.env.warning_count().max(ignored as usize)
        )
    } else {
        String::new()
    };
    Ok(Outcome {
        ok: Some(OkInfo {
            affected_rows: affected,
            last_insert_id: first_generated.or(last_auto).unwrap_or(0),
            warnings: ignored.min(u16::MAX as u64) as u16,
            info,
            found_rows: Some(affected + unchanged),
        }),
        rows_sent: 0,
        generated_id: first_generated,
    })
}

/// Applies `ON UPDATE CURRENT_TIMESTAMP` when a row really changes; returns whether it
/// changed.
fn touch_on_update(
    def: &TableDef,
    old: &[Value],
    new: &mut [Value],
    assigned: impl Iterator<Item = usize>,
    cx: &ExecCtx,
) -> bool {
    let changed = old
        .iter()
        .zip(new.iter())
        .zip(&def.columns)
        .any(|((a, b), c)| {
            sort_compare(
                a,
                b,
                if c.data_type.is_string() {
                    Collation::Binary
                } else {
                    c.collation
                },
            ) != std::cmp::Ordering::Equal
                || a.is_null() != b.is_null()
        });
    if changed {
        let assigned: Vec<usize> = assigned.collect();
        for (i, c) in def.columns.iter().enumerate() {
            if c.on_update_now && !assigned.contains(&i) {
                new[i] = current_timestamp(c, cx.env.now());
            }
        }
    }
    changed
}

fn single_table_source(
    cx: &ExecCtx,
    table: &ast::TableWithJoins,
    selection: &Option<ast::Expr>,
    order_by: &[ast::OrderByExpr],
    limit: &Option<ast::Expr>,
    env: &BindEnv,
    verb: &'static str,
) -> Result<(Target, SelectPlan, Scope, String)> {
    if !table.joins.is_empty() {
        return Err(Error::NotSupported("multi-table UPDATE/DELETE".into()));
    }
    let ast::TableFactor::Table { name, alias, .. } = &table.relation else {
        return Err(Error::NotSupported(
            "UPDATE/DELETE of a derived table".into(),
        ));
    };
    let t = target(cx, name, verb)?;
    let written = match &t.through {
        Some(th) => th.name.clone(),
        None => t.def.name.clone(),
    };
    let alias = alias
        .as_ref()
        .map(|a| a.name.value.clone())
        .unwrap_or(written);
    // Through a view: the statement's names are rewritten over the base table and the
    // view's WHERE joins the statement's (`view_dml`).
    let (selection, order_by, scope_alias) = match &t.through {
        None => (selection.clone(), order_by.to_vec(), alias.clone()),
        Some(th) => {
            let own = selection
                .as_ref()
                .map(|w| th.rewrite(w, &alias, "where clause"))
                .transpose()?;
            let both = match (th.filter.clone(), own) {
                (Some(f), Some(w)) => Some(ast::Expr::BinaryOp {
                    left: Box::new(ast::Expr::Nested(Box::new(f))),
                    op: ast::BinaryOperator::And,
                    right: Box::new(ast::Expr::Nested(Box::new(w))),
                }),
                (f, w) => f.or(w),
            };
            let order = order_by
                .iter()
                .map(|o| {
                    let mut o = o.clone();
                    o.expr = th.rewrite(&o.expr, &alias, "order clause")?;
                    Ok(o)
                })
                .collect::<Result<Vec<_>>>()?;
            (both, order, th.base_alias.clone())
        }
    };
    let mut source_scope = Scope::default();
    source_scope.push(scope_alias.clone(), t.db.clone(), t.table.clone());
    let source = plan_single_table(
        cx,
        source_scope,
        selection.as_ref(),
        &order_by,
        limit.as_ref(),
        env,
    )?;
    let mut scope = Scope::default();
    scope.push(scope_alias, t.db.clone(), t.table.clone());
    Ok((t, source, scope, alias))
}

pub fn plan_update(u: &ast::Update, cx: &ExecCtx) -> Result<UpdatePlan> {
    if u.from.is_some() {
        return Err(Error::NotSupported("UPDATE ... FROM".into()));
    }
    if !u.table.joins.is_empty() || matches!(u.table.relation, ast::TableFactor::Derived { .. }) {
        return super::multi_dml::plan_update(u, cx);
    }
    let planner = Planner::new(cx).without_merge();
    let env = planner.root_env();
    let (target, source, scope, alias) = single_table_source(
        cx,
        &u.table,
        &u.selection,
        &u.order_by,
        &u.limit,
        &env,
        "UPDATE",
    )?;
    let mut assignments = Vec::new();
    for a in &u.assignments {
        let ast::AssignmentTarget::ColumnName(n) = &a.target else {
            return Err(Error::NotSupported("tuple assignment".into()));
        };
        let col = target_column(&target, n)?;
        if target.def.columns[col].generated.is_some() {
            // Only DEFAULT may be written to a generated column; it is computed anyway.
            if is_default_keyword(&a.value) {
                continue;
            }
            return Err(Error::GeneratedValueNotAllowed {
                column: target.def.columns[col].name.clone(),
                table: target.def.name.clone(),
            });
        }
        if is_default_keyword(&a.value) {
            let e = update_default(&target.def.columns[col], &scope, &env, cx.strict)?;
            assignments.push((col, e));
            continue;
        }
        let value = match &target.through {
            Some(th) => th.rewrite(&a.value, &alias, "field list")?,
            None => a.value.clone(),
        };
        let e = match numeric_hex(&value, target.def.columns.get(col)) {
            Some(v) => Expr::Literal(v),
            None => Binder::in_env(&scope, "field list", &env).bind(&value)?.0,
        };
        assignments.push((col, e));
    }
    drop(env);
    let subqueries = planner.finish();
    subqueries.check_target_not_read(&target.db, &target.def.name)?;
    Ok(UpdatePlan {
        target,
        source,
        assignments,
        subqueries,
        multi: None,
        ignore: crate::parse::dml_modifiers::has_ignore(&u.optimizer_hints),
    })
}

pub fn plan_delete(d: &ast::Delete, cx: &ExecCtx) -> Result<DeletePlan> {
    let from = match &d.from {
        ast::FromTable::WithFromKeyword(t) | ast::FromTable::WithoutKeyword(t) => t,
    };
    let single = match from.as_slice() {
        [table] if d.tables.is_empty() && d.using.is_none() && table.joins.is_empty() => {
            Some(table)
        }
        _ => None,
    };
    let Some(table) = single else {
        return super::multi_dml::plan_delete(d, cx);
    };
    let planner = Planner::new(cx).without_merge();
    let env = planner.root_env();
    let (target, source, _, _) = single_table_source(
        cx,
        table,
        &d.selection,
        &d.order_by,
        &d.limit,
        &env,
        "DELETE",
    )?;
    drop(env);
    let subqueries = planner.finish();
    subqueries.check_target_not_read(&target.db, &target.def.name)?;
    Ok(DeletePlan {
        target,
        source,
        subqueries,
        multi: None,
        ignore: crate::parse::dml_modifiers::has_ignore(&d.optimizer_hints),
    })
}

/// Locks the target table for writing and every table the subqueries read for
/// reading, in the one order every statement uses.
fn lock_target_and_reads(
    cx: &ExecCtx,
    target: &Target,
    subqueries: &SubqueryPlans,
) -> Result<TableLocks> {
    let mut locks = TableLocks::default();
    let mut want = vec![(
        target.db.as_str(),
        target.def.name.as_str(),
        &target.table,
        LockMode::Write,
    )];
    for (db, name, t) in &subqueries.tables {
        want.push((db.as_str(), name.as_str(), t, LockMode::Read));
    }
    cx.lock_tables(&mut locks, &want)?;
    Ok(locks)
}

pub fn execute_update(p: &UpdatePlan, cx: &mut ExecCtx, params: &[Value]) -> Result<Outcome> {
    let run = |p: &UpdatePlan, cx: &mut ExecCtx| match &p.multi {
        Some(m) => super::multi_dml::execute_update(p, m, cx, params),
        None => update_rows(p, cx, params),
    };
    if p.ignore {
        // IGNORE: what strict mode refuses is stored adjusted, with warnings.
        return ignore::run(cx, |cx| run(p, cx));
    }
    if cx.strict {
        return under_strict_change(cx, |cx| run(p, cx));
    }
    run(p, cx)
}

/// Runs an INSERT or UPDATE under strict mode's rules (`expr::env_overlay`): the
/// warnings MySQL makes errors are the statement's error, and so is a division by zero
/// when sql_mode has ERROR_FOR_DIVISION_BY_ZERO; one kept to the end is raised there.
fn under_strict_change<T>(
    cx: &mut ExecCtx,
    run: impl FnOnce(&mut ExecCtx) -> Result<T>,
) -> Result<T> {
    let division = cx
        .sql_mode
        .has(strata_types::SqlMode::ERROR_FOR_DIVISION_BY_ZERO);
    let env = env_overlay::EnvOverlay::strict_change(cx.env, division);
    let done = run(&mut cx.with_env(&env))?;
    env_overlay::raise_kept(&env)?;
    Ok(done)
}

fn update_rows(p: &UpdatePlan, cx: &mut ExecCtx, params: &[Value]) -> Result<Outcome> {
    let locks = lock_target_and_reads(cx, &p.target, &p.subqueries)?;
    let ex = Executor::new(&p.subqueries.subqueries, cx, params);
    let ecx = ex.eval_ctx(&[]);
    let rows = matching_rows(&p.source, cx, &ecx)?;
    // Reading the rows may have raised a warning a strict UPDATE makes its error
    // (`WHERE varchar_col = 0` over `'abc'`): before any row changes.
    env_overlay::raise_kept(cx.env)?;
    let def = &p.target.def;
    let (mut changed, matched) = (0u64, rows.len() as u64);
    for (n, (id, old)) in rows.into_iter().enumerate() {
        cx.txn.check_interrupt()?;
        let row = n as u64 + 1;
        let done = ignore::row(cx, p.ignore, || {
            let mut new = old.clone();
            for (col, e) in &p.assignments {
                // Later assignments see earlier ones, as in MySQL.
                let v = e.eval(&new, &ecx)?;
                assign(def, &mut new, *col, v, row, cx)?;
            }
            let assigned = p.assignments.iter().map(|a| a.0);
            update_row(&p.target, assigned, id, &old, new, row, cx, &ecx, &locks)
        })?;
        if done == Some(true) {
            changed += 1;
        }
    }
    Ok(update_outcome(matched, changed, cx))
}

/// The OK packet of an UPDATE: changed rows affected, matched ones found, and the
/// statement's warnings in its info text, as MySQL's.
pub(crate) fn update_outcome(matched: u64, changed: u64, cx: &ExecCtx) -> Outcome {
    let warnings = cx.env.warning_count();
    Outcome {
        ok: Some(OkInfo {
            affected_rows: changed,
            last_insert_id: 0,
            warnings: 0,
            info: format!("Rows matched: {matched}  Changed: {changed}  Warnings: {warnings}"),
            found_rows: Some(matched),
        }),
        ..Default::default()
    }
}

/// Stores SET value `v` into column `col` of the row being built (`row`: the row's
/// number in the statement, for warnings): converted as the column stores it; NULL in a
/// NOT NULL column is 1048 in strict mode, and otherwise (no strict sql_mode, or
/// IGNORE, whose context is not strict) the column's implicit default with warning
/// 1048, as MySQL 8's UPDATE stores it (it checks its fields with warnings, and only
/// strict mode makes 1048 an error).
pub(crate) fn assign(
    def: &TableDef,
    new: &mut [Value],
    col: usize,
    v: Value,
    row: u64,
    cx: &ExecCtx,
) -> Result<()> {
    new[col] = store_value(v, &def.columns[col], row, cx.strict, cx)?;
    if new[col].is_null() && !def.columns[col].nullable {
        new[col] = null_into_not_null(&def.columns[col], cx.strict, cx)?;
    }
    Ok(())
}

/// NULL stored into NOT NULL column `col` where MySQL checks with warnings (UPDATE,
/// INSERT of several rows or from a SELECT, IGNORE): error 1048 when `strict`,
/// otherwise the column's implicit default (0, '', the zero date, an ENUM's first
/// member) with warning 1048.
fn null_into_not_null(col: &ColumnDef, strict: bool, cx: &ExecCtx) -> Result<Value> {
    let e = Error::ColumnNotNull(col.name.clone());
    if strict {
        return Err(e);
    }
    cx.env.warn(WarnLevel::Warning, e.code(), e.to_string());
    Ok(implicit_default(col))
}

/// Changes one row of `target` (id `id`) from `old` to `new`, whose SET columns
/// (`assigned`) are stored already: the BEFORE UPDATE triggers, ON UPDATE
/// CURRENT_TIMESTAMP, the view's CHECK OPTION, CHECK constraints and foreign keys, the
/// change itself (recorded for the binary log), the AFTER UPDATE triggers. Returns
/// whether the row changed. Single-table and multi-table UPDATE both change rows here.
#[allow(clippy::too_many_arguments)]
pub(crate) fn update_row(
    target: &Target,
    assigned: impl Iterator<Item = usize>,
    id: RowId,
    old: &[Value],
    mut new: Vec<Value>,
    row: u64,
    cx: &ExecCtx,
    ecx: &crate::expr::EvalCtx,
    locks: &TableLocks,
) -> Result<bool> {
    let def = &target.def;
    let triggers = target.triggers.as_deref();
    if let Some(t) = triggers {
        t.fire(
            Timing::Before,
            Event::Update,
            Some(old),
            Some(&mut new),
            cx,
            locks,
        )?;
        if let Some(c) = def
            .columns
            .iter()
            .zip(&new)
            .position(|(c, v)| v.is_null() && !c.nullable)
        {
            return Err(Error::ColumnNotNull(def.columns[c].name.clone()));
        }
    }
    // Generated columns from the row as assigned and as the triggers left it.
    if let Some(x) = &target.exprs {
        compute_generated(x, def, &mut new, ecx, row, cx.strict, cx)?;
    }
    let changed = touch_on_update(def, old, &mut new, assigned, cx);
    if changed {
        if let Some(th) = &target.through {
            th.check_row(&new, ecx)?;
        }
        if let Some(r) = &target.rules {
            r.verify(&new, ecx)?;
            r.links.before_update(cx, old, &new)?;
        }
        crate::row_log::update(cx, &target.table, id, old, &new)?;
        if let Some(r) = &target.rules {
            r.links.check_parents(cx, Some(old), &new)?;
        }
    }
    if let Some(t) = triggers {
        t.fire(
            Timing::After,
            Event::Update,
            Some(old),
            Some(&mut new),
            cx,
            locks,
        )?;
    }
    Ok(changed)
}

/// Deletes one row of `target` (id `id`, values `old`): the BEFORE DELETE triggers,
/// the foreign keys' checks and actions, the delete (recorded for the binary log), the
/// AFTER DELETE triggers. Single-table and multi-table DELETE both delete rows here.
pub(crate) fn delete_row(
    target: &Target,
    id: RowId,
    old: &[Value],
    cx: &ExecCtx,
    locks: &TableLocks,
) -> Result<()> {
    let triggers = target.triggers.as_deref();
    if let Some(t) = triggers {
        t.fire(Timing::Before, Event::Delete, Some(old), None, cx, locks)?;
    }
    if let Some(r) = &target.rules {
        r.links.before_delete(cx, old)?;
    }
    crate::row_log::delete(cx, &target.table, id, old)?;
    if let Some(t) = triggers {
        t.fire(Timing::After, Event::Delete, Some(old), None, cx, locks)?;
    }
    Ok(())
}

pub fn execute_delete(p: &DeletePlan, cx: &mut ExecCtx, params: &[Value]) -> Result<Outcome> {
    let run = |p: &DeletePlan, cx: &mut ExecCtx| match &p.multi {
        Some(m) => super::multi_dml::execute_delete(p, m, cx, params),
        None => delete_rows(p, cx, params),
    };
    if p.ignore {
        return ignore::run(cx, |cx| run(p, cx));
    }
    run(p, cx)
}

fn delete_rows(p: &DeletePlan, cx: &mut ExecCtx, params: &[Value]) -> Result<Outcome> {
    let locks = lock_target_and_reads(cx, &p.target, &p.subqueries)?;
    let ex = Executor::new(&p.subqueries.subqueries, cx, params);
    let rows = matching_rows(&p.source, cx, &ex.eval_ctx(&[]))?;
    let mut deleted = 0u64;
    for (id, old) in rows {
        cx.txn.check_interrupt()?;
        // DELETE IGNORE keeps a row it cannot delete (a child that refers to it).
        if ignore::row(cx, p.ignore, || delete_row(&p.target, id, &old, cx, &locks))?.is_some() {
            deleted += 1;
        }
    }
    Ok(Outcome::ok(deleted))
}

/// A value other than DEFAULT an INSERT writes to a generated column. MySQL 8 refuses
/// it in every mode (3105). Outside strict mode it is ignored with MariaDB's warning 1906
/// instead: `mariadb-dump` writes every column's value, generated ones included, and
/// loads its dumps under `SQL_MODE='NO_AUTO_VALUE_ON_ZERO'`, so this is what lets such
/// a dump load. The column's value is computed either way.
fn generated_value_written(column: &str, table: &str, strict: bool, cx: &ExecCtx) -> Result<()> {
    if strict {
        return Err(Error::GeneratedValueNotAllowed {
            column: column.to_string(),
            table: table.to_string(),
        });
    }
    cx.env.warn(
        WarnLevel::Warning,
        1906,
        format!(
            "The value specified for generated column '{column}' in table '{table}' has been \
             ignored"
        ),
    );
    Ok(())
}
