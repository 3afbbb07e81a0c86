//! Name resolution: turns sqlparser expressions into bound [`Expr`]s against a
//! [`Scope`] (the tables of a FROM clause laid out side by side in one row), choosing
//! collations and static types on the way, and collecting aggregate calls when binding
//! a grouped select list.
//!
//! The row layout is the concatenation of every scope table's columns in FROM order:
//! table `i`'s column `j` is row position `tables[i].offset + j`.

pub mod aggregate_meta;
pub mod branch_result;
pub mod char_fn;
pub mod charset_info;
pub mod datetime;
pub mod decorrelate;
pub mod derived;
pub mod fold;
pub mod full_group_by;
pub mod func_types;
pub mod item_names;
pub mod mixed_sign;
pub mod real_decimals;
pub mod row_compare;
pub mod window;

use crate::expr::functions::{self, CastFn, Func, MathFn, RegexpFn, StrFn, TrimSide};
use crate::expr::json::JsonFn;
use crate::expr::{ArithOp, CmpOp, Expr, Subquery, SubqueryKind};
use crate::parse::lex::{number_value, unescape};
use crate::parse::object_name_parts;
use crate::parse::token_rewrite::INTERNAL_QUOTE;
use sqlparser::ast;
use std::sync::Arc;
use strata_engine::Table;
use strata_types::output::flags;
use strata_types::schema::ColumnDefault;
use strata_types::{Collation, ColumnMeta, DataType, Error, FieldType, Result, TableDef, Value};

#[derive(Clone)]
pub struct ScopeTable {
    /// The name the query uses for the table (its alias, or its name).
    pub alias: String,
    pub db: String,
    pub table: Arc<dyn Table>,
    pub def: Arc<TableDef>,
    pub offset: usize,
    /// A derived table or CTE: its rows are materialized at run time into this slot of
    /// the execution's state, never into the plan.
    pub slot: Option<usize>,
    /// A LATERAL derived table: run again for each row of the tables before it.
    pub lateral: Option<Lateral>,
    /// A derived table's or CTE's result columns as its query typed them (`INT`,
    /// `VARCHAR(20)`, NOT NULL), which [`column_meta`] sends for its columns: the
    /// table's own definition holds the coarser types its rows are kept in.
    pub source_meta: Option<Arc<Vec<ColumnMeta>>>,
}

impl ScopeTable {
    /// A table of an engine (not a derived table, CTE or LATERAL derived table).
    pub fn is_base(&self) -> bool {
        self.slot.is_none() && self.lateral.is_none()
    }
}

/// A LATERAL derived table's source: the statement's subquery `subquery`, run with the
/// values of `correlated` (read from the tables before it in FROM, or from enclosing
/// queries) for each combination of their rows, as MySQL rematerialises it.
#[derive(Clone, Debug)]
pub struct Lateral {
    pub subquery: usize,
    pub correlated: Vec<Expr>,
}

#[derive(Default, Clone)]
pub struct Scope {
    pub tables: Vec<ScopeTable>,
    /// `JOIN … USING` / `NATURAL JOIN`: a common column position mapped to the one that
    /// stands for both sides (MySQL's coalesced column), for unqualified names. Set by
    /// `planner::from_clause`.
    pub coalesced: Vec<(usize, usize)>,
    /// The columns `SELECT *` lists, in order, when a USING/NATURAL join changes them
    /// (common columns once, first); empty: every column in FROM order.
    pub star: Vec<usize>,
}

impl Scope {
    pub fn width(&self) -> usize {
        self.tables
            .last()
            .map_or(0, |t| t.offset + t.def.columns.len())
    }

    pub fn push(&mut self, alias: String, db: String, table: Arc<dyn Table>) {
        let offset = self.width();
        let def = table.def().clone();
        self.tables.push(ScopeTable {
            alias,
            db,
            table,
            def,
            offset,
            slot: None,
            lateral: None,
            source_meta: None,
        });
    }

    /// Which table a row position belongs to.
    pub fn table_of(&self, pos: usize) -> usize {
        self.tables
            .iter()
            .rposition(|t| t.offset <= pos)
            .unwrap_or(0)
    }

    /// Resolves `[db.][table.]column` to a row position.
    pub fn resolve(&self, parts: &[String], context: &str) -> Result<usize> {
        let (qual, col) = match parts {
            [c] => (None, c),
            [t, c] => (Some((None, t)), c),
            [d, t, c] => (Some((Some(d), t)), c),
            _ => return Err(Error::Syntax(parts.join("."))),
        };
        let mut found = None;
        for t in &self.tables {
            if let Some((db, tname)) = qual {
                if t.alias != *tname || db.is_some_and(|d| *d != t.db) {
                    continue;
                }
            }
            if let Some(ci) = t.def.column_index(col) {
                // Both sides of a USING column are one column to an unqualified name.
                let pos = match qual {
                    None => self.coalesced_column(t.offset + ci),
                    Some(_) => t.offset + ci,
                };
                if found.is_some_and(|f| f != pos) {
                    return Err(Error::AmbiguousColumn {
                        column: col.clone(),
                        context: context.into(),
                    });
                }
                found = Some(pos);
            }
        }
        found.ok_or_else(|| Error::UnknownColumn {
            column: parts.join("."),
            context: context.into(),
        })
    }

    /// The position an unqualified name of column `pos` means: itself, or the column
    /// that stands for it after `USING`/`NATURAL` (followed through nested joins).
    pub fn coalesced_column(&self, mut pos: usize) -> usize {
        // Each step moves to a column of an enclosing join; the bound guards a cycle.
        for _ in 0..=self.coalesced.len() {
            match self.coalesced.iter().find(|(from, _)| *from == pos) {
                Some((_, to)) => pos = *to,
                None => break,
            }
        }
        pos
    }

    /// The column definition at a row position.
    pub fn column(&self, pos: usize) -> (&ScopeTable, &strata_types::ColumnDef) {
        let t = &self.tables[self.table_of(pos)];
        (t, &t.def.columns[pos - t.offset])
    }
}

/// The static type of an expression, for result metadata and for converting values.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum SType {
    Int,
    UInt,
    /// DOUBLE (FLOAT too) with the decimals its values show: below
    /// [`real_decimals::NOT_FIXED`] that many digits after the point (`3.00`), at it the
    /// shortest form ([`real_decimals`]).
    Double(u8),
    Decimal(u8),
    Text,
    Binary,
    /// DATETIME(fsp) (TIMESTAMP too): the fraction digits its values show.
    DateTime(u8),
    Date,
    /// TIME(fsp): its values are their text (`-01:02:03.5`).
    Time(u8),
    Null,
    /// A JSON document ([`Value::Json`]).
    Json,
}

impl SType {
    /// A DOUBLE shown in its shortest form (MySQL's NOT_FIXED_DEC decimals).
    pub const DOUBLE: SType = SType::Double(real_decimals::NOT_FIXED);

    pub fn of_column(ty: &DataType, coll: Collation) -> SType {
        match ty {
            t if t.is_integer() && t.is_unsigned() => SType::UInt,
            t if t.is_integer() => SType::Int,
            DataType::Float { .. } | DataType::Double { .. } => {
                SType::Double(ty.fixed_decimals().unwrap_or(real_decimals::NOT_FIXED))
            }
            DataType::Decimal { scale, .. } => SType::Decimal(*scale),
            DataType::Date => SType::Date,
            DataType::DateTime { fsp } | DataType::Timestamp { fsp } => SType::DateTime(*fsp),
            DataType::Time { fsp } => SType::Time(*fsp),
            DataType::Year => SType::Int,
            DataType::Json => SType::Json,
            _ if coll == Collation::Binary => SType::Binary,
            _ => SType::Text,
        }
    }

    pub fn of_value(v: &Value) -> SType {
        match v {
            Value::Null => SType::Null,
            Value::Int(_) => SType::Int,
            Value::UInt(_) => SType::UInt,
            Value::Double(_) => SType::DOUBLE,
            Value::Decimal(d) => SType::Decimal(d.shown),
            Value::Bytes(_) => SType::Text,
            Value::DateTime(d) if d.is_date_only() => SType::Date,
            Value::DateTime(d) => SType::DateTime(d.fsp),
            Value::Json(_) => SType::Json,
            Value::Bits(_) => SType::Binary,
            Value::Member { .. } => SType::Text,
        }
    }

    /// The static type of a result column (a subquery's, a derived table's).
    pub fn of_meta(m: &ColumnMeta) -> SType {
        match m.field_type {
            FieldType::Tiny
            | FieldType::Short
            | FieldType::Long
            | FieldType::Int24
            | FieldType::LongLong
            | FieldType::Year => {
                if m.flags & flags::UNSIGNED != 0 {
                    SType::UInt
                } else {
                    SType::Int
                }
            }
            FieldType::Float | FieldType::Double => {
                SType::Double(m.decimals.min(real_decimals::NOT_FIXED))
            }
            FieldType::NewDecimal | FieldType::Decimal => SType::Decimal(m.decimals),
            FieldType::Date => SType::Date,
            FieldType::DateTime | FieldType::Timestamp => SType::DateTime(m.decimals.min(6)),
            FieldType::Time => SType::Time(m.decimals),
            FieldType::Null => SType::Null,
            FieldType::Json => SType::Json,
            _ if m.charset == 63 => SType::Binary,
            _ => SType::Text,
        }
    }

    pub fn meta(self, name: &str) -> ColumnMeta {
        let ft = match self {
            SType::Int | SType::UInt => FieldType::LongLong,
            SType::Double(_) => FieldType::Double,
            SType::Decimal(_) => FieldType::NewDecimal,
            SType::Text | SType::Binary => FieldType::VarString,
            SType::DateTime(_) => FieldType::DateTime,
            SType::Date => FieldType::Date,
            SType::Time(_) => FieldType::Time,
            SType::Null => FieldType::Null,
            SType::Json => FieldType::Json,
        };
        let mut m = ColumnMeta::computed(name, ft);
        match self {
            SType::UInt => m.flags |= flags::UNSIGNED | flags::NUM,
            SType::Int => m.flags |= flags::NUM,
            SType::Decimal(s) => {
                m.decimals = s;
                m.flags |= flags::NUM;
            }
            SType::Binary => {
                m.charset = 63;
                m.flags |= flags::BINARY;
            }
            SType::DateTime(fsp) => {
                m.length = 19 + if fsp > 0 { fsp as u32 + 1 } else { 0 };
                m.decimals = fsp;
            }
            SType::Date => m.length = 10,
            SType::Double(d) => {
                m.decimals = d.min(real_decimals::NOT_FIXED);
                m.length = real_decimals::float_length(m.decimals);
            }
            // MySQL 8 sends JSON results as binary-charset BLOBs of type 245.
            SType::Json => {
                m.charset = 63;
                m.length = u32::MAX;
                m.flags |= flags::BLOB | flags::BINARY;
            }
            SType::Time(fsp) => {
                m.length = 10 + if fsp > 0 { fsp as u32 + 1 } else { 0 };
                m.decimals = fsp;
            }
            _ => {}
        }
        m
    }
}

/// Result metadata for a table column.
pub fn column_meta(t: &ScopeTable, col: &strata_types::ColumnDef, name: &str) -> ColumnMeta {
    // A derived table's or CTE's column: the type its subquery gave it.
    if let Some(m) = t
        .source_meta
        .as_ref()
        .and_then(|metas| metas.get(t.def.column_index(&col.name)?))
    {
        return ColumnMeta {
            schema: t.db.clone(),
            table: t.alias.clone(),
            org_table: t.def.name.clone(),
            name: name.to_string(),
            org_name: col.name.clone(),
            // No key or AUTO_INCREMENT of the table below: the rows are the subquery's.
            flags: m.flags
                & !(flags::PRI_KEY
                    | flags::UNIQUE_KEY
                    | flags::MULTIPLE_KEY
                    | flags::AUTO_INCREMENT),
            ..m.clone()
        };
    }
    let mut fl = 0;
    if !col.nullable {
        fl |= flags::NOT_NULL;
    }
    if col.is_unsigned() || matches!(col.data_type, DataType::Bit(_)) {
        fl |= flags::UNSIGNED;
    }
    if col.auto_increment {
        fl |= flags::AUTO_INCREMENT;
    }
    if col.data_type.is_integer()
        || matches!(
            col.data_type,
            DataType::Decimal { .. } | DataType::Double { .. } | DataType::Float { .. }
        )
    {
        fl |= flags::NUM;
    }
    if matches!(
        col.data_type,
        DataType::Blob(_) | DataType::Text(_) | DataType::Json
    ) {
        fl |= flags::BLOB;
    }
    if col.data_type == DataType::Year {
        // As MySQL describes a YEAR column: a zero-filled unsigned number.
        fl |= flags::UNSIGNED | flags::ZEROFILL | flags::NUM;
    }
    if col.collation == Collation::Binary {
        fl |= flags::BINARY;
    }
    match col.data_type {
        DataType::Enum(_) => fl |= flags::ENUM,
        DataType::Set(_) => fl |= flags::SET,
        _ => {}
    }
    if let Some(ci) = t.def.column_index(&col.name) {
        for ix in &t.def.indexes {
            if ix.columns.first() == Some(&ci) {
                fl |= if ix.primary {
                    flags::PRI_KEY
                } else if ix.unique {
                    flags::UNIQUE_KEY
                } else {
                    flags::MULTIPLE_KEY
                };
            }
        }
    }
    ColumnMeta {
        schema: t.db.clone(),
        table: t.alias.clone(),
        org_table: t.def.name.clone(),
        name: name.to_string(),
        org_name: col.name.clone(),
        field_type: col.data_type.field_type(),
        flags: fl,
        charset: if col.data_type.is_text() {
            col.collation.id()
        } else {
            63
        },
        length: col.display_length(),
        decimals: match col.data_type {
            DataType::Decimal { scale, .. } => scale,
            ref t @ (DataType::Float { .. } | DataType::Double { .. }) => {
                t.fixed_decimals().unwrap_or(31)
            }
            ref t => t.fsp().unwrap_or(0),
        },
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AggFunc {
    CountStar,
    Count,
    Sum,
    Avg,
    Min,
    Max,
    /// A non-grouped column in a grouped query: any (the first) row's value, as MySQL
    /// without ONLY_FULL_GROUP_BY.
    AnyValue,
    /// STD, STDDEV, STDDEV_POP.
    StdPop,
    StdSamp,
    /// VARIANCE, VAR_POP.
    VarPop,
    VarSamp,
    BitAnd,
    BitOr,
    BitXor,
    GroupConcat,
    JsonArrayAgg,
    JsonObjectAgg,
    /// GROUPING(…) of a WITH ROLLUP query: its `more_args` are `Column(i)`, the positions
    /// of the GROUP BY expressions it names; the value comes from the row's rollup level.
    Grouping,
}

impl AggFunc {
    /// BIT_AND, BIT_OR, BIT_XOR: they read their argument as an unsigned integer.
    pub fn is_bitwise(self) -> bool {
        matches!(self, AggFunc::BitAnd | AggFunc::BitOr | AggFunc::BitXor)
    }
}

#[derive(Clone, Debug)]
pub struct AggSpec {
    pub func: AggFunc,
    pub arg: Option<Expr>,
    pub distinct: bool,
    pub arg_type: SType,
    pub coll: Collation,
    /// Arguments after the first (`COUNT(DISTINCT a, b)`, `GROUP_CONCAT(a, b)`,
    /// JSON_OBJECTAGG's value), with their types and collations.
    pub more_args: Vec<(Expr, SType, Collation)>,
    /// GROUP_CONCAT's ORDER BY: expression, descending, collation.
    pub order: Vec<(Expr, bool, Collation)>,
    /// GROUP_CONCAT's SEPARATOR (`,` unless given).
    pub separator: Vec<u8>,
}

impl AggSpec {
    /// A one-argument (or argument-less) aggregate call.
    pub fn new(
        func: AggFunc,
        arg: Option<Expr>,
        distinct: bool,
        arg_type: SType,
        coll: Collation,
    ) -> AggSpec {
        AggSpec {
            func,
            arg,
            distinct,
            arg_type,
            coll,
            more_args: vec![],
            order: vec![],
            separator: b",".to_vec(),
        }
    }
}

/// Collects aggregate calls and group keys while binding a grouped query.
#[derive(Default)]
pub struct Aggregation {
    /// GROUP BY expressions bound against the source scope, with their display text.
    pub groups: Vec<(String, Expr, SType, Collation)>,
    pub aggs: Vec<AggSpec>,
    /// GROUP BY … WITH ROLLUP: GROUPING() is allowed.
    pub rollup: bool,
    /// The clause and 1-based expression number being bound, which the
    /// ONLY_FULL_GROUP_BY check names (`None`: not tracked, e.g. in unit tests).
    pub at: Option<(GroupedClause, usize)>,
    /// Depth of ANY_VALUE() calls being bound: their columns are exempt from the check.
    pub exempt: u32,
    /// Bare columns read as "any row of the group", with where each was met: what
    /// `bind::full_group_by` checks.
    pub loose: Vec<(GroupedClause, usize, usize)>,
}

/// A clause of a grouped query that may read bare columns.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum GroupedClause {
    SelectList,
    Having,
    OrderBy,
}

impl GroupedClause {
    /// The clause as MySQL's messages name it.
    pub fn name(self) -> &'static str {
        match self {
            GroupedClause::SelectList => "SELECT list",
            GroupedClause::Having => "HAVING clause",
            GroupedClause::OrderBy => "ORDER BY clause",
        }
    }
}

impl Aggregation {
    /// A bare column in a grouped query: it reads any row of its group (MySQL without
    /// ONLY_FULL_GROUP_BY). Returns its position in the aggregate output row.
    pub fn any_value(&mut self, pos: usize, ty: SType, coll: Collation) -> Expr {
        if let (Some((clause, n)), 0) = (self.at, self.exempt) {
            self.loose.push((clause, n, pos));
        }
        self.aggs.push(AggSpec::new(
            AggFunc::AnyValue,
            Some(Expr::Column(pos)),
            false,
            ty,
            coll,
        ));
        Expr::Column(self.groups.len() + self.aggs.len() - 1)
    }
}

/// Plans the subqueries the binder meets (implemented by the query planner, so binding
/// needs no knowledge of plans): returns the subquery's id in the statement, its result
/// columns, and the expressions of the enclosing query it reads, in the enclosing
/// query's row layout.
pub trait SubqueryPlanner {
    fn plan_subquery(&self, q: &ast::Query, outer: &Outer) -> Result<PlannedSubquery>;
    /// The column names of a FROM table name (a CTE in scope or a table), for rewrite
    /// rules that classify names before binding; None if it names neither.
    fn table_columns(&self, name: &ast::ObjectName) -> Option<Vec<String>>;
    /// Whether a FROM table name is a base table with an index whose first column is
    /// `column` (a CTE is not), for rewrite rules that weigh lookups against a scan.
    fn index_leads_with(&self, _name: &ast::ObjectName, _column: &str) -> bool {
        false
    }
    /// The current value of `@@name` (`Some(global)`) or `@name` (None), if known: its
    /// type is the variable's static type, as MySQL types a variable when the statement
    /// is prepared (`@@autocommit` is an integer, `@s` after `SET @s = 'x'` a string).
    fn variable_value(&self, _name: &str, _system: Option<bool>) -> Option<Value> {
        None
    }
    /// `@@session.name`: an error when the variable has no session scope (1238).
    fn check_session_scope(&self, _name: &str) -> Result<()> {
        Ok(())
    }
    /// The type of placeholder `i`, when the statement knows it (a stored program's
    /// variable).
    fn param_type(&self, _i: usize) -> Option<(SType, Collation)> {
        None
    }
    /// A stored function `[db.]name` called with `args` arguments, and its result type.
    fn stored_function(
        &self,
        _db: Option<&str>,
        _name: &str,
        _args: usize,
    ) -> Result<Option<(crate::expr::StoredCall, strata_types::ColumnDef)>> {
        Ok(None)
    }
}

pub struct PlannedSubquery {
    pub id: usize,
    pub columns: Vec<ColumnMeta>,
    pub correlated: Vec<Expr>,
}

/// What one query block binds in: the planner for its subqueries and, for a subquery,
/// the enclosing query it may read (a scope chain, one link per nesting level).
pub struct BindEnv<'a> {
    pub planner: &'a dyn SubqueryPlanner,
    pub parent: Option<&'a Outer<'a>>,
    /// The enclosing query's expressions this query reads, each bound in the enclosing
    /// query's layout; this query sees the i-th as `Expr::OuterRef(i)`.
    pub correlated: std::cell::RefCell<Vec<Expr>>,
}

/// The enclosing query as a subquery sees it.
pub struct Outer<'a> {
    pub scope: &'a Scope,
    pub env: &'a BindEnv<'a>,
}

impl BindEnv<'_> {
    /// Resolves a name not found in this query's own FROM: in the enclosing query, then
    /// further out. Returns this query's `OuterRef` for it, or None when no enclosing
    /// query has the column.
    fn resolve_outer(&self, parts: &[String], context: &str) -> Result<Option<Expr>> {
        let Some(outer) = self.parent else {
            return Ok(None);
        };
        let in_parent = match outer.scope.resolve(parts, context) {
            Ok(pos) => Expr::Column(pos),
            Err(Error::UnknownColumn { .. }) => match outer.env.resolve_outer(parts, context)? {
                Some(e) => e,
                None => return Ok(None),
            },
            Err(other) => return Err(other),
        };
        let mut corr = self.correlated.borrow_mut();
        let i = match corr.iter().position(|c| same_column(c, &in_parent)) {
            Some(i) => i,
            None => {
                corr.push(in_parent);
                corr.len() - 1
            }
        };
        Ok(Some(Expr::OuterRef(i)))
    }

    /// The type and collation of an outer column, for the binder.
    fn outer_column_type(&self, parts: &[String], context: &str) -> (SType, Collation) {
        let mut env = self;
        while let Some(outer) = env.parent {
            if let Ok(pos) = outer.scope.resolve(parts, context) {
                let (_, col) = outer.scope.column(pos);
                return (
                    SType::of_column(&col.data_type, col.collation),
                    col.collation,
                );
            }
            env = outer.env;
        }
        (SType::Null, Collation::GeneralCi)
    }
}

fn same_column(a: &Expr, b: &Expr) -> bool {
    match (a, b) {
        (Expr::Column(x), Expr::Column(y)) | (Expr::OuterRef(x), Expr::OuterRef(y)) => x == y,
        _ => false,
    }
}

/// The binding context of one clause.
pub struct Binder<'a> {
    pub scope: &'a Scope,
    pub context: &'static str,
    /// Set while binding a grouped select list, HAVING or ORDER BY: expressions then
    /// read the aggregate output row (group keys, then aggregates).
    pub agg: Option<&'a mut Aggregation>,
    /// Select-list aliases visible to this clause (ORDER BY, HAVING): name, bound expr.
    pub aliases: &'a [(String, Expr, SType)],
    /// Subqueries and outer references: None where a statement cannot have them.
    pub env: Option<&'a BindEnv<'a>>,
    /// The block's window calls: set only for the select list and ORDER BY, the
    /// clauses where a window function may be (elsewhere it is error 3593).
    pub windows: Option<&'a mut window::call::Collector>,
}

fn ident_parts(idents: &[ast::Ident]) -> Vec<String> {
    idents.iter().map(|i| i.value.clone()).collect()
}

pub(crate) fn is_aggregate_name(name: &str) -> bool {
    matches!(
        name.to_ascii_lowercase().as_str(),
        "count"
            | "sum"
            | "avg"
            | "min"
            | "max"
            | "std"
            | "stddev"
            | "stddev_pop"
            | "stddev_samp"
            | "variance"
            | "var_pop"
            | "var_samp"
            | "bit_and"
            | "bit_or"
            | "bit_xor"
            | "group_concat"
            | "json_arrayagg"
            | "json_objectagg"
            | "grouping"
    )
}

/// The aggregate a (lower-case) name calls, its argument count bounds, and whether
/// MySQL's grammar takes DISTINCT in it. A call outside these is a syntax error (1064)
/// in MySQL, not a wrong-parameter-count one: these are grammar rules, not functions.
fn aggregate_shape(lname: &str) -> Option<(AggFunc, usize, usize, bool)> {
    Some(match lname {
        "count" => (AggFunc::Count, 1, 1, true),
        "sum" => (AggFunc::Sum, 1, 1, true),
        "avg" => (AggFunc::Avg, 1, 1, true),
        "min" => (AggFunc::Min, 1, 1, true),
        "max" => (AggFunc::Max, 1, 1, true),
        "std" | "stddev" | "stddev_pop" => (AggFunc::StdPop, 1, 1, false),
        "stddev_samp" => (AggFunc::StdSamp, 1, 1, false),
        "variance" | "var_pop" => (AggFunc::VarPop, 1, 1, false),
        "var_samp" => (AggFunc::VarSamp, 1, 1, false),
        "bit_and" => (AggFunc::BitAnd, 1, 1, false),
        "bit_or" => (AggFunc::BitOr, 1, 1, false),
        "bit_xor" => (AggFunc::BitXor, 1, 1, false),
        "group_concat" => (AggFunc::GroupConcat, 1, usize::MAX, true),
        "json_arrayagg" => (AggFunc::JsonArrayAgg, 1, 1, false),
        "json_objectagg" => (AggFunc::JsonObjectAgg, 2, 2, false),
        _ => return None,
    })
}

/// The result type of an aggregate over arguments of these types.
pub fn aggregate_type(func: AggFunc, arg_type: SType, more: &[(Expr, SType, Collation)]) -> SType {
    match func {
        AggFunc::CountStar | AggFunc::Count | AggFunc::Grouping => SType::Int,
        AggFunc::Sum => match arg_type {
            SType::Int | SType::UInt => SType::Decimal(0),
            SType::Decimal(s) => SType::Decimal(s),
            SType::Double(d) => SType::Double(d),
            _ => SType::DOUBLE,
        },
        AggFunc::Avg => match arg_type {
            SType::Int | SType::UInt => SType::Decimal(4),
            SType::Decimal(s) => SType::Decimal((s + 4).min(30)),
            SType::Double(d) => SType::Double(real_decimals::averaged(d)),
            _ => SType::DOUBLE,
        },
        // A DOUBLE always (MySQL's `Item_sum_variance`), showing four more decimals
        // than its argument: `0.0000` of integers, six of a DECIMAL(8,2), the shortest
        // form of a string or a DOUBLE that shows it.
        AggFunc::StdPop | AggFunc::StdSamp | AggFunc::VarPop | AggFunc::VarSamp => {
            SType::Double(real_decimals::variance(arg_type))
        }
        AggFunc::BitAnd | AggFunc::BitOr | AggFunc::BitXor => SType::UInt,
        AggFunc::GroupConcat => {
            if arg_type == SType::Binary || more.iter().any(|m| m.1 == SType::Binary) {
                SType::Binary
            } else {
                SType::Text
            }
        }
        AggFunc::JsonArrayAgg | AggFunc::JsonObjectAgg => SType::Json,
        AggFunc::Min | AggFunc::Max | AggFunc::AnyValue => arg_type,
    }
}

/// True when the expression calls an aggregate function of its own query block: found
/// on the syntax tree, so a string literal such as `'count('` is text, an aggregate
/// inside a subquery belongs to that subquery, and a windowed call (`SUM(x) OVER ()`)
/// is not a grouping aggregate (though an aggregate among its arguments is).
pub fn contains_aggregate(e: &ast::Expr) -> bool {
    has_call_of_this_block(e, &|f| {
        f.over.is_none() && is_aggregate_name(&f.name.to_string())
    })
}

/// True when `e` calls a function that `wanted` accepts, outside any subquery of `e`
/// (a subquery's calls belong to its own query block).
pub fn has_call_of_this_block(e: &ast::Expr, wanted: &dyn Fn(&ast::Function) -> bool) -> bool {
    use sqlparser::ast::{Visit, Visitor};
    use std::ops::ControlFlow;
    struct Finder<'w> {
        /// How many subqueries the walk is inside.
        nested: usize,
        wanted: &'w dyn Fn(&ast::Function) -> bool,
    }
    impl Visitor for Finder<'_> {
        type Break = ();
        fn pre_visit_query(&mut self, _q: &ast::Query) -> ControlFlow<()> {
            self.nested += 1;
            ControlFlow::Continue(())
        }
        fn post_visit_query(&mut self, _q: &ast::Query) -> ControlFlow<()> {
            self.nested -= 1;
            ControlFlow::Continue(())
        }
        fn pre_visit_expr(&mut self, e: &ast::Expr) -> ControlFlow<()> {
            match e {
                ast::Expr::Function(f) if self.nested == 0 && (self.wanted)(f) => {
                    ControlFlow::Break(())
                }
                _ => ControlFlow::Continue(()),
            }
        }
    }
    e.visit(&mut Finder { nested: 0, wanted }).is_break()
}

impl<'a> Binder<'a> {
    pub fn new(scope: &'a Scope, context: &'static str) -> Binder<'a> {
        Binder {
            scope,
            context,
            agg: None,
            aliases: &[],
            env: None,
            windows: None,
        }
    }

    /// A binder for a clause of a query block that may hold subqueries.
    pub fn in_env(scope: &'a Scope, context: &'static str, env: &'a BindEnv<'a>) -> Binder<'a> {
        Binder {
            env: Some(env),
            ..Binder::new(scope, context)
        }
    }

    /// Binds an expression and returns it with its static type and collation.
    pub fn bind(&mut self, e: &ast::Expr) -> Result<(Expr, SType, Collation)> {
        // Binding recurses once per level of the expression: stop with 1436 before the
        // stack runs out (the parser bounds depth, but a binder frame is larger).
        strata_types::stack::check()?;
        if let Some(agg) = self.agg.as_deref() {
            let text = e.to_string();
            if let Some(i) = agg
                .groups
                .iter()
                .position(|g| g.0.eq_ignore_ascii_case(&text))
            {
                let g = &agg.groups[i];
                return Ok((Expr::Column(i), g.2, g.3));
            }
        }
        use ast::Expr as A;
        Ok(match e {
            // `0b101` is a bit-value literal, which the parser reads as a name.
            A::Identifier(id)
                if id.quote_style.is_none()
                    && id.value.len() > 2
                    && id.value.starts_with("0b")
                    && bit_literal(&id.value[2..]).is_some() =>
            {
                let v = bit_literal(&id.value[2..]).unwrap_or(Value::Null);
                (Expr::Literal(v), SType::Binary, Collation::Binary)
            }
            A::Identifier(id) => self.bind_name(std::slice::from_ref(&id.value))?,
            A::CompoundIdentifier(ids) => self.bind_name(&ident_parts(ids))?,
            A::Value(v) if placeholder_index(&v.value).is_some() => {
                let i = placeholder_index(&v.value).unwrap_or(0);
                let (t, c) = self
                    .env
                    .and_then(|env| env.planner.param_type(i))
                    .unwrap_or((SType::Null, Collation::GeneralCi));
                (Expr::Param(i), t, c)
            }
            // `x'C3A9'`, `0xC3A9`: a binary string (bytes, binary collation); a number
            // only where the context is numeric (see `bind_numeric`).
            A::Value(v) if matches!(v.value, ast::Value::HexStringLiteral(_)) => (
                Expr::Literal(literal(&v.value)?),
                SType::Binary,
                Collation::Binary,
            ),
            A::Value(v) => {
                let v = literal(&v.value)?;
                let t = SType::of_value(&v);
                (Expr::Literal(v), t, Collation::GeneralCi)
            }
            // A character set introducer: `_binary '…'` is a binary string (never a
            // number: `_binary '12' + 0` is 12); `_utf8mb4 '…'` the plain string.
            A::Prefixed { prefix, value } if prefix.quote_style.is_none() => {
                let binary = prefix.value.eq_ignore_ascii_case("_binary");
                let text = ["_utf8mb4", "_utf8mb3", "_utf8"]
                    .iter()
                    .any(|n| prefix.value.eq_ignore_ascii_case(n));
                let v = match value.as_ref() {
                    A::Value(v) if binary || text => literal(&v.value)?,
                    _ => return Err(Error::NotSupported(format!("expression {e}"))),
                };
                let v = match v {
                    Value::Bits(b) => Value::Bytes(b),
                    v => v,
                };
                if binary {
                    (Expr::Literal(v), SType::Binary, Collation::Binary)
                } else {
                    (Expr::Literal(v), SType::Text, Collation::GeneralCi)
                }
            }
            A::Nested(inner) => self.bind(inner)?,
            A::UnaryOp { op, expr } => {
                // `-0x41` is -65; a unary plus is no operator in MySQL (`+0x41` is 'A').
                let (x, t, c) = match op {
                    ast::UnaryOperator::Plus => self.bind(expr)?,
                    _ => self.bind_numeric(expr)?,
                };
                match op {
                    ast::UnaryOperator::Minus => {
                        let t = if t == SType::UInt { SType::Int } else { t };
                        match x {
                            Expr::Literal(Value::Int(i)) if i != i64::MIN => {
                                (Expr::Literal(Value::Int(-i)), t, c)
                            }
                            Expr::Literal(Value::UInt(u)) if u == 1 << 63 => {
                                (Expr::Literal(Value::Int(i64::MIN)), t, c)
                            }
                            x => (Expr::Neg(Box::new(x)), t, c),
                        }
                    }
                    ast::UnaryOperator::Plus => (x, t, c),
                    ast::UnaryOperator::Not | ast::UnaryOperator::BangNot => {
                        (Expr::Not(Box::new(x)), SType::Int, c)
                    }
                    // `~x`: every bit of x as a BIGINT UNSIGNED flipped.
                    ast::UnaryOperator::BitwiseNot => (
                        Expr::BitOp(
                            '^',
                            Box::new(x),
                            Box::new(Expr::Literal(Value::UInt(u64::MAX))),
                        ),
                        SType::UInt,
                        Collation::GeneralCi,
                    ),
                    other => return Err(Error::NotSupported(format!("operator {other}"))),
                }
            }
            A::BinaryOp {
                left,
                op: ast::BinaryOperator::Assignment,
                right,
            } => {
                // `@name := expr`: the value of expr, typed as expr, assigned as a side
                // effect (each evaluation, so per row).
                let name = match left.as_ref() {
                    A::Identifier(id)
                        if id.value.starts_with('@') && !id.value.starts_with("@@") =>
                    {
                        id.value[1..].to_ascii_lowercase()
                    }
                    other => return Err(Error::Syntax(format!("{other} :="))),
                };
                let (x, t, c) = self.bind(right)?;
                (
                    Expr::Func(
                        Func::AssignUserVariable,
                        vec![Expr::Literal(Value::str(&name)), x],
                    ),
                    t,
                    c,
                )
            }
            // `||` reaches the binder only under PIPES_AS_CONCAT (the session reads it as
            // OR otherwise, `parse::mode_text`): concatenation.
            A::BinaryOp {
                left,
                op: ast::BinaryOperator::StringConcat,
                right,
            } => self.bind_pipes_concat(left, right)?,
            A::BinaryOp { left, op, right } => self.bind_binary(left, op, right)?,
            A::IsNull(x) => (
                Expr::IsNull(Box::new(self.bind(x)?.0), false),
                SType::Int,
                Collation::GeneralCi,
            ),
            A::IsNotNull(x) => (
                Expr::IsNull(Box::new(self.bind(x)?.0), true),
                SType::Int,
                Collation::GeneralCi,
            ),
            A::IsTrue(x) => (
                Expr::IsTruth(Box::new(self.bind(x)?.0), true, false),
                SType::Int,
                Collation::GeneralCi,
            ),
            // `x IS UNKNOWN` is `x IS NULL` (a boolean that is NULL is unknown).
            A::IsUnknown(x) => (
                Expr::IsNull(Box::new(self.bind(x)?.0), false),
                SType::Int,
                Collation::GeneralCi,
            ),
            A::IsNotUnknown(x) => (
                Expr::IsNull(Box::new(self.bind(x)?.0), true),
                SType::Int,
                Collation::GeneralCi,
            ),
            A::IsNotTrue(x) => (
                Expr::IsTruth(Box::new(self.bind(x)?.0), true, true),
                SType::Int,
                Collation::GeneralCi,
            ),
            A::IsFalse(x) => (
                Expr::IsTruth(Box::new(self.bind(x)?.0), false, false),
                SType::Int,
                Collation::GeneralCi,
            ),
            A::IsNotFalse(x) => (
                Expr::IsTruth(Box::new(self.bind(x)?.0), false, true),
                SType::Int,
                Collation::GeneralCi,
            ),
            A::Between {
                expr,
                negated,
                low,
                high,
            } => {
                let (x, xt, c1) = self.bind(expr)?;
                let (lo, lot, c2) = self.bind(low)?;
                let (hi, hit, c3) = self.bind(high)?;
                let numeric_bounds = is_number_type(lot) || is_number_type(hit);
                let numeric_x = is_number_type(xt) || self.is_bit_column(expr);
                let (mut x, xt, c1) = self.hex_compared(expr, (x, xt, c1), numeric_bounds);
                let (mut lo, lot, c2) = self.hex_compared(low, (lo, lot, c2), numeric_x);
                let (mut hi, hit, c3) = self.hex_compared(high, (hi, hit, c3), numeric_x);
                let coll = pick_coll(
                    &[
                        (&x, c1, explicit_collate(expr)),
                        (&lo, c2, explicit_collate(low)),
                        (&hi, c3, explicit_collate(high)),
                    ],
                    "between",
                )?;
                lo = datetime::number_as_temporal(xt, lo);
                hi = datetime::number_as_temporal(xt, hi);
                if self.is_year_column(expr) {
                    lo = datetime::year_operand(lo);
                    hi = datetime::year_operand(hi);
                }
                let ops = vec![(x.clone(), xt), (lo.clone(), lot), (hi.clone(), hit)];
                if let Some(mut k) = datetime::time_operands(ops)? {
                    hi = k.pop().unwrap_or(Expr::Literal(Value::Null));
                    lo = k.pop().unwrap_or(Expr::Literal(Value::Null));
                    x = k.pop().unwrap_or(Expr::Literal(Value::Null));
                }
                (
                    Expr::Between {
                        expr: Box::new(x),
                        low: Box::new(lo),
                        high: Box::new(hi),
                        negated: *negated,
                        coll,
                    },
                    SType::Int,
                    coll,
                )
            }
            A::InList {
                expr,
                list,
                negated,
            } => {
                if let Some(rows) = row_compare::expand_in_list(expr, list, *negated)? {
                    return self.bind(&rows);
                }
                let (x, xt, c) = self.bind(expr)?;
                let mut bound = Vec::with_capacity(list.len());
                for i in list {
                    bound.push(self.bind(i)?);
                }
                let numeric_items = bound.iter().any(|b| is_number_type(b.1));
                let numeric_x = is_number_type(xt) || self.is_bit_column(expr);
                let (mut x, xt, c) = self.hex_compared(expr, (x, xt, c), numeric_items);
                let mut items = Vec::with_capacity(list.len());
                let mut ops = vec![(x.clone(), xt)];
                let mut colls = vec![c];
                let year_x = self.is_year_column(expr);
                for (i, b) in list.iter().zip(bound) {
                    let (e, t, ic) = self.hex_compared(i, b, numeric_x);
                    let e = datetime::number_as_temporal(xt, e);
                    let e = if year_x { datetime::year_operand(e) } else { e };
                    ops.push((e.clone(), t));
                    items.push(e);
                    colls.push(ic);
                }
                if let Some(mut k) = datetime::time_operands(ops)? {
                    items = k.split_off(1);
                    x = k.pop().unwrap_or(Expr::Literal(Value::Null));
                }
                // The comparison's collation is every operand's (a binary string in
                // the list makes it binary: `'a' IN (x'41')` is 0; an explicit COLLATE
                // on any operand decides it).
                let mut operands = vec![(&x, colls[0], explicit_collate(expr))];
                operands.extend(
                    items
                        .iter()
                        .zip(&colls[1..])
                        .zip(list)
                        .map(|((e, c), i)| (e, *c, explicit_collate(i))),
                );
                let coll = pick_coll(&operands, "in")?;
                (
                    Expr::InList {
                        expr: Box::new(x),
                        list: items,
                        negated: *negated,
                        coll,
                    },
                    SType::Int,
                    coll,
                )
            }
            A::Like {
                negated,
                expr,
                pattern,
                escape_char,
                any: false,
            } => {
                let (x, _, c) = self.bind(expr)?;
                let (p, _, pc) = self.bind(pattern)?;
                let escape = match escape_char {
                    None => b'\\',
                    Some(e) => match e.as_ref() {
                        ast::Expr::Value(v) => match literal(&v.value)? {
                            Value::Bytes(b) if b.len() == 1 => b[0],
                            _ => return Err(Error::Syntax("ESCAPE".into())),
                        },
                        _ => return Err(Error::Syntax("ESCAPE".into())),
                    },
                };
                let coll = pick_coll(
                    &[
                        (&x, c, explicit_collate(expr)),
                        (&p, pc, explicit_collate(pattern)),
                    ],
                    "like",
                )?;
                (
                    Expr::Like {
                        expr: Box::new(x),
                        pattern: Box::new(p),
                        negated: *negated,
                        escape,
                        coll,
                    },
                    SType::Int,
                    coll,
                )
            }
            A::Case {
                operand,
                conditions,
                else_result,
                ..
            } => {
                let operand = match operand {
                    Some(o) => Some(Box::new(self.bind(o)?.0)),
                    None => None,
                };
                let mut whens = Vec::new();
                let mut types = Vec::new();
                let mut ty = SType::Null;
                for cw in conditions {
                    let w = self.bind(&cw.condition)?.0;
                    let (r, t, _) = self.bind(&cw.result)?;
                    ty = unify(ty, t);
                    types.push(t);
                    whens.push((w, r));
                }
                let mut otherwise = match else_result {
                    Some(e) => {
                        let (x, t, _) = self.bind(e)?;
                        ty = unify(ty, t);
                        Some((x, t))
                    }
                    None => None,
                };
                let branches = whens.iter().map(|(_, r)| r).zip(types.iter().copied());
                let branches = branches.chain(otherwise.as_ref().map(|(x, t)| (x, *t)));
                let widths: Vec<_> = branches
                    .map(|(e, t)| (t, self.is_wide_unsigned(e, t)))
                    .collect();
                ty = mixed_sign::bumped(ty, widths);
                // Each branch in the result's type, as for COALESCE.
                for ((_, r), t) in whens.iter_mut().zip(&types) {
                    let e = std::mem::replace(r, Expr::Literal(Value::Null));
                    *r = self.conform_branch(e, *t, ty);
                }
                otherwise = otherwise.map(|(x, t)| (self.conform_branch(x, t, ty), t));
                let otherwise = otherwise.map(|(x, _)| Box::new(x));
                let case = Expr::Case {
                    operand,
                    whens,
                    otherwise,
                    coll: Collation::GeneralCi,
                };
                (as_result_type(case, ty), ty, Collation::GeneralCi)
            }
            A::Cast {
                expr,
                data_type: ast::DataType::JSON,
                ..
            } => {
                let (x, t, _) = self.bind(expr)?;
                (
                    Expr::Func(Func::Json(JsonFn::Cast), vec![json_argument(x, t)]),
                    SType::Json,
                    Collation::Binary,
                )
            }
            A::MemberOf(m) => {
                let (x, t, _) = self.bind(&m.value)?;
                let (arr, _, _) = self.bind(&m.array)?;
                (
                    Expr::Func(Func::Json(JsonFn::MemberOf), vec![json_argument(x, t), arr]),
                    SType::Int,
                    Collation::GeneralCi,
                )
            }
            A::Cast {
                expr, data_type, ..
            } => {
                let (f, t, c) = func_types::cast_target(data_type)?;
                let (x, from, _) = if is_number_type(t) {
                    self.bind_numeric(expr)?
                } else {
                    self.bind(expr)?
                };
                let x = time_for_date_cast(x, from, f);
                self.bind_cast(x, from, f, t, c)
            }
            A::Convert {
                is_try: false,
                expr,
                data_type,
                charset,
                target_before_value: false,
                styles,
            } if styles.is_empty() => {
                let (f, t, c) = match (data_type, charset) {
                    (Some(dt), None) => func_types::cast_target(dt)?,
                    (None, Some(cs)) => func_types::convert_using(&cs.to_string())?,
                    (Some(dt), Some(cs)) => {
                        func_types::cast_target_with_charset(dt, &cs.to_string())?
                    }
                    _ => return Err(Error::NotSupported(format!("expression {e}"))),
                };
                let (x, from, _) = if is_number_type(t) {
                    self.bind_numeric(expr)?
                } else {
                    self.bind(expr)?
                };
                let x = time_for_date_cast(x, from, f);
                self.bind_cast(x, from, f, t, c)
            }
            A::Collate { expr, collation } => {
                let (x, t, _) = self.bind(expr)?;
                let name = collation.to_string();
                let c = Collation::from_name(&name)
                    .ok_or_else(|| Error::UnknownCollation(name.clone()))?;
                let x_is_binary = t == SType::Binary;
                if x_is_binary != (c == Collation::Binary) {
                    return Err(Error::CollationCharsetMismatch {
                        collation: name,
                        charset: if x_is_binary { "binary" } else { "utf8mb4" }.into(),
                    });
                }
                // A number takes the collation as text (MySQL converts it first).
                let t = match t {
                    SType::Binary => SType::Binary,
                    _ => SType::Text,
                };
                (x, t, c)
            }
            A::RLike {
                negated,
                expr,
                pattern,
                ..
            } => {
                let (x, t1, c1) = self.bind(expr)?;
                let (p, t2, c2) = self.bind(pattern)?;
                let c = func_types::shared_collation(&[t1, t2], &[c1, c2]);
                let m = Expr::Func(Func::Regexp(RegexpFn::Like, c), vec![x, p]);
                let m = if *negated { Expr::Not(Box::new(m)) } else { m };
                (m, SType::Int, Collation::GeneralCi)
            }
            A::Position { expr, r#in } => {
                let (x, t1, c1) = self.bind(expr)?;
                let (y, t2, c2) = self.bind(r#in)?;
                let c = func_types::shared_collation(&[t1, t2], &[c1, c2]);
                (
                    Expr::Func(Func::Str(StrFn::Locate, c), vec![x, y]),
                    SType::Int,
                    Collation::GeneralCi,
                )
            }
            A::Function(f) => self.bind_function(f)?,
            A::Substring {
                expr,
                substring_from,
                substring_for,
                ..
            } => {
                let (x, _, c) = self.bind(expr)?;
                let mut args = vec![x];
                match substring_from {
                    Some(f) => args.push(self.bind_numeric(f)?.0),
                    None => args.push(Expr::Literal(Value::Int(1))),
                }
                if let Some(n) = substring_for {
                    args.push(self.bind_numeric(n)?.0);
                }
                let (t, c) = if c == Collation::Binary {
                    (SType::Binary, c)
                } else {
                    (SType::Text, c)
                };
                (Expr::Func(Func::Str(StrFn::Substring, c), args), t, c)
            }
            A::Trim {
                expr,
                trim_where,
                trim_what,
                trim_characters: None,
            } => {
                let (x, t, c) = self.bind(expr)?;
                let side = match trim_where {
                    None | Some(ast::TrimWhereField::Both) => TrimSide::Both,
                    Some(ast::TrimWhereField::Leading) => TrimSide::Leading,
                    Some(ast::TrimWhereField::Trailing) => TrimSide::Trailing,
                };
                let mut args = vec![x];
                let (mut types, mut colls) = (vec![t], vec![c]);
                if let Some(w) = trim_what {
                    let (y, t2, c2) = self.bind(w)?;
                    args.push(y);
                    types.push(t2);
                    colls.push(c2);
                }
                let c = func_types::shared_collation(&types, &colls);
                let t = if c == Collation::Binary {
                    SType::Binary
                } else {
                    SType::Text
                };
                (Expr::Func(Func::Str(StrFn::Trim(side), c), args), t, c)
            }
            A::Ceil { expr, .. } | A::Floor { expr, .. } => {
                let (x, t, c) = self.bind(expr)?;
                let f = if matches!(e, A::Ceil { .. }) {
                    Func::Math(MathFn::Ceil)
                } else {
                    Func::Math(MathFn::Floor)
                };
                let t = match t {
                    SType::Decimal(_) => SType::Int,
                    SType::Text
                    | SType::Binary
                    | SType::Date
                    | SType::DateTime(_)
                    | SType::Time(_) => SType::Double(0),
                    // MySQL's CEIL/FLOOR of a DOUBLE shows no decimals.
                    SType::Double(_) => SType::Double(0),
                    t => t,
                };
                (Expr::Func(f, vec![x]), t, c)
            }
            A::TypedString(ts) => self.bind_typed_literal(ts)?,
            A::Extract { field, expr, .. } => {
                self.bind_extract(crate::bind::datetime::unit_of_field(field)?, expr)?
            }
            A::Subquery(q) => {
                let sub = self.plan_subquery(q, 1)?;
                let col = &sub.columns[0];
                let ty = SType::of_meta(col);
                let coll = Collation::from_id(col.charset);
                (self.subquery(sub, SubqueryKind::Scalar), ty, coll)
            }
            A::Exists { subquery, negated } => {
                if let Some(semi) = self.exists_as_semijoin(subquery, *negated) {
                    return Ok((semi, SType::Int, Collation::GeneralCi));
                }
                // Still correlated: its `*` need not read any column (MySQL's rule).
                let sub = match decorrelate::exists_select_one(subquery) {
                    Some(one) => self.plan_subquery(&one, 0)?,
                    None => self.plan_subquery(subquery, 0)?,
                };
                let kind = SubqueryKind::Exists { negated: *negated };
                (self.subquery(sub, kind), SType::Int, Collation::GeneralCi)
            }
            A::InSubquery {
                expr,
                subquery,
                negated,
            } => {
                let operands: Vec<&ast::Expr> = match expr.as_ref() {
                    A::Tuple(items) => items.iter().collect(),
                    A::Nested(inner) if matches!(inner.as_ref(), A::Tuple(_)) => {
                        match inner.as_ref() {
                            A::Tuple(items) => items.iter().collect(),
                            _ => vec![],
                        }
                    }
                    one => vec![one],
                };
                let mut lhs = Vec::with_capacity(operands.len());
                let mut lhs_types = Vec::with_capacity(operands.len());
                for o in &operands {
                    let (x, t, c) = self.bind(o)?;
                    lhs.push(x);
                    lhs_types.push((t, c));
                }
                let sub = self.plan_subquery(subquery, operands.len())?;
                refuse_time_subquery(&lhs_types, &sub.columns, false)?;
                let (colls, hashable) = in_comparison(&lhs_types, &sub.columns);
                let kind = SubqueryKind::In {
                    lhs,
                    negated: *negated,
                    colls,
                    hashable,
                };
                (self.subquery(sub, kind), SType::Int, Collation::GeneralCi)
            }
            A::AnyOp {
                left,
                compare_op,
                right,
                ..
            }
            | A::AllOp {
                left,
                compare_op,
                right,
            } => {
                let all = matches!(e, A::AllOp { .. });
                let A::Subquery(q) = right.as_ref() else {
                    return Err(Error::NotSupported("ANY/ALL of a non-subquery".into()));
                };
                let op = match compare_op {
                    ast::BinaryOperator::Eq => CmpOp::Eq,
                    ast::BinaryOperator::NotEq => CmpOp::Ne,
                    ast::BinaryOperator::Lt => CmpOp::Lt,
                    ast::BinaryOperator::LtEq => CmpOp::Le,
                    ast::BinaryOperator::Gt => CmpOp::Gt,
                    ast::BinaryOperator::GtEq => CmpOp::Ge,
                    other => return Err(Error::NotSupported(format!("{other} ANY/ALL"))),
                };
                let (x, t, c) = self.bind(left)?;
                let sub = self.plan_subquery(q, 1)?;
                refuse_time_subquery(&[(t, c)], &sub.columns, true)?;
                let (colls, _) = in_comparison(&[(t, c)], &sub.columns);
                let kind = SubqueryKind::Quantified {
                    lhs: Box::new(x),
                    op,
                    all,
                    coll: colls[0],
                };
                (self.subquery(sub, kind), SType::Int, Collation::GeneralCi)
            }
            other => return Err(Error::NotSupported(format!("expression {other}"))),
        })
    }

    /// Plans a subquery of this clause; `columns` is the column count its use needs (0:
    /// any, for EXISTS). 1241 when the count differs.
    fn plan_subquery(&mut self, q: &ast::Query, columns: usize) -> Result<PlannedSubquery> {
        let Some(env) = self.env else {
            return Err(Error::NotSupported(format!(
                "a subquery in the {}",
                self.context
            )));
        };
        let outer = Outer {
            scope: self.scope,
            env,
        };
        let mut sub = env.planner.plan_subquery(q, &outer)?;
        if columns > 0 && sub.columns.len() != columns {
            return Err(Error::OperandColumns(columns));
        }
        // In a grouped select list, HAVING or ORDER BY the subquery runs on the grouped
        // row: the columns it reads are group keys or (like a bare column) any value of
        // the group.
        if self.agg.is_some() {
            for c in &mut sub.correlated {
                if let Expr::Column(pos) = c {
                    *c = self.grouped_column(*pos);
                }
            }
        }
        Ok(sub)
    }

    /// `[NOT] EXISTS (q)` through [`decorrelate::exists_as_in`]: `(outer…) IN (q')`
    /// `IS [NOT] TRUE` with q' uncorrelated, so it runs once and is probed as a hash
    /// set. None (bind as written) when the rule does not apply, when anything in the
    /// rewritten form fails to bind, or when q' still reads the enclosing query.
    fn exists_as_semijoin(&mut self, q: &ast::Query, negated: bool) -> Option<Expr> {
        // In a grouped clause outer values are group values; leave those as written.
        let env = self.env.filter(|_| self.agg.is_none())?;
        let mut tables = Vec::new();
        for (name, alias) in decorrelate::from_tables(q)? {
            let columns = env.planner.table_columns(&name)?;
            let shown = alias.or_else(|| object_name_parts(&name).pop())?;
            tables.push((shown, columns));
        }
        let semi = decorrelate::exists_as_in(q, &decorrelate::InnerTables { tables })?;
        if decorrelate::probe_by_index(q, &semi, &|name, column| {
            env.planner.index_leads_with(name, column)
        }) {
            return None;
        }
        let mut lhs = Vec::with_capacity(semi.outer.len());
        let mut lhs_types = Vec::with_capacity(semi.outer.len());
        for o in &semi.outer {
            let (x, t, c) = self.bind(o).ok()?;
            lhs.push(x);
            lhs_types.push((t, c));
        }
        let sub = self.plan_subquery(&semi.query, semi.outer.len()).ok()?;
        if !sub.correlated.is_empty() {
            return None;
        }
        refuse_time_subquery(&lhs_types, &sub.columns, false).ok()?;
        let (colls, hashable) = in_comparison(&lhs_types, &sub.columns);
        let kind = SubqueryKind::In {
            lhs,
            negated: false,
            colls,
            hashable,
        };
        Some(Expr::IsTruth(
            Box::new(self.subquery(sub, kind)),
            true,
            negated,
        ))
    }

    fn subquery(&self, sub: PlannedSubquery, kind: SubqueryKind) -> Expr {
        Expr::Subquery(Box::new(Subquery {
            id: sub.id,
            kind,
            correlated: sub.correlated,
        }))
    }

    /// A FROM column read in a grouped clause: its group key, or any row's value.
    fn grouped_column(&mut self, pos: usize) -> Expr {
        let Some(agg) = self.agg.as_deref_mut() else {
            return Expr::Column(pos);
        };
        if let Some(i) = agg
            .groups
            .iter()
            .position(|g| matches!(g.1, Expr::Column(p) if p == pos))
        {
            return Expr::Column(i);
        }
        let (_, col) = self.scope.column(pos);
        let (ty, coll) = (
            SType::of_column(&col.data_type, col.collation),
            col.collation,
        );
        agg.any_value(pos, ty, coll)
    }

    /// A FLOAT column or `CAST(… AS FLOAT)` read as text, wrapped to show as MySQL
    /// shows a FLOAT (a FLOAT(M,D) / DOUBLE(M,D) column with its D decimals); any other
    /// expression of type `ty` that is a DOUBLE of fixed decimals (`a*100` of a
    /// DOUBLE(10,2) `a`, `ROUND(x, 1)`) with those decimals ([`real_decimals`]); any
    /// other as it is. (In a grouped clause a column position means something else,
    /// and is left to its type.)
    fn float_as_text(&self, x: Expr, ty: SType) -> Expr {
        let width: usize = self.scope.tables.iter().map(|t| t.def.columns.len()).sum();
        match x {
            Expr::Func(Func::Cast(CastFn::Float), _) => Expr::Func(Func::ShowFloat, vec![x]),
            // FLOAT(M,D) / DOUBLE(M,D): its D decimals (`3.00`).
            Expr::Column(pos) if self.agg.is_none() && pos < width => {
                match self.scope.column(pos).1.data_type {
                    DataType::Float {
                        fixed: Some((_, d)),
                    }
                    | DataType::Double {
                        fixed: Some((_, d)),
                    } => Expr::Func(Func::ShowFixed(d), vec![x]),
                    DataType::Float { .. } => Expr::Func(Func::ShowFloat, vec![x]),
                    _ => x,
                }
            }
            x => match ty {
                SType::Double(d) if d < real_decimals::NOT_FIXED => {
                    Expr::Func(Func::ShowFixed(d), vec![x])
                }
                _ => x,
            },
        }
    }

    /// A branch of IF/IFNULL/COALESCE/CASE (of type `from`) converted to the result's
    /// type `to` ([`branch_result::convert`]); a FLOAT column that becomes text shows
    /// as MySQL shows a FLOAT.
    fn conform_branch(&self, e: Expr, from: SType, to: SType) -> Expr {
        let e = if matches!(from, SType::Double(_)) && branch_result::is_string(to) {
            self.float_as_text(e, from)
        } else {
            e
        };
        branch_result::convert(e, from, to)
    }

    /// A variable typed by its current value when the planner knows it; a string (the
    /// type MySQL gives an unset user variable) otherwise.
    fn typed_variable(&self, b: (Expr, SType, Collation)) -> (Expr, SType, Collation) {
        let value = self.env.and_then(|env| match &b.0 {
            Expr::SystemVariable { name, global } => {
                env.planner.variable_value(name, Some(*global))
            }
            Expr::UserVariable(name) => env.planner.variable_value(name, None),
            _ => None,
        });
        let ty = match value {
            Some(Value::Int(_)) => SType::Int,
            Some(Value::UInt(_)) => SType::UInt,
            // MySQL shows @@timestamp with its six digits of microseconds.
            Some(Value::Double(_)) if matches!(&b.0, Expr::SystemVariable { name, .. } if name == "timestamp") => {
                SType::Double(6)
            }
            Some(Value::Double(_)) => SType::DOUBLE,
            Some(Value::Decimal(d)) => SType::Decimal(d.shown),
            _ => b.1,
        };
        (b.0, ty, b.2)
    }

    fn bind_name(&mut self, parts: &[String]) -> Result<(Expr, SType, Collation)> {
        if let [name] = parts {
            if let Some(rest) = name.strip_prefix("@@") {
                return Ok(self.typed_variable(system_variable(rest, None)));
            }
            if let Some(rest) = name.strip_prefix('@') {
                return Ok(self.typed_variable((
                    Expr::UserVariable(rest.to_ascii_lowercase()),
                    SType::Text,
                    Collation::GeneralCi,
                )));
            }
            if let Some((_, e, t)) = self.aliases.iter().find(|a| a.0.eq_ignore_ascii_case(name)) {
                if self.windows.is_none() && window::has_marker(e) {
                    // A windowed select item's value exists only after HAVING.
                    return Err(Error::WindowInvalidAliasUse(name.clone()));
                }
                if self.scope.resolve(parts, self.context).is_err() || self.agg.is_some() {
                    return Ok((e.clone(), *t, Collation::GeneralCi));
                }
            }
        }
        if let [scope, name] = parts {
            if let Some(s) = scope.strip_prefix("@@") {
                let session = s.eq_ignore_ascii_case("session") || s.eq_ignore_ascii_case("local");
                if let (true, Some(env)) = (session, self.env) {
                    env.planner.check_session_scope(name)?;
                }
                return Ok(self.typed_variable(system_variable(name, Some(s))));
            }
        }
        let pos = match self.scope.resolve(parts, self.context) {
            Ok(pos) => pos,
            Err(e @ Error::UnknownColumn { .. }) => {
                if let [name] = parts {
                    if let Some(b) = self.bind_date_keyword(name) {
                        return Ok(b);
                    }
                }
                // Not a column of this query: a column of an enclosing one (correlation).
                let Some(env) = self.env else { return Err(e) };
                return match env.resolve_outer(parts, self.context)? {
                    Some(outer) => {
                        let (ty, coll) = env.outer_column_type(parts, self.context);
                        Ok((outer, ty, coll))
                    }
                    None => Err(e),
                };
            }
            Err(e) => return Err(e),
        };
        let (_, col) = self.scope.column(pos);
        let (ty, coll) = (
            SType::of_column(&col.data_type, col.collation),
            col.collation,
        );
        if let Some(agg) = self.agg.as_deref_mut() {
            return Ok((agg.any_value(pos, ty, coll), ty, coll));
        }
        Ok((Expr::Column(pos), ty, coll))
    }

    fn bind_binary(
        &mut self,
        left: &ast::Expr,
        op: &ast::BinaryOperator,
        right: &ast::Expr,
    ) -> Result<(Expr, SType, Collation)> {
        use ast::BinaryOperator as B;
        if let Some(b) = self.bind_interval_arith(left, op, right)? {
            return Ok(b);
        }
        if let Some(items) = row_compare::expand_comparison(left, op, right)? {
            return self.bind(&items);
        }
        let comparison = matches!(
            op,
            B::Eq | B::NotEq | B::Lt | B::LtEq | B::Gt | B::GtEq | B::Spaceship
        );
        let (mut l, lt, lc, mut r, rt, rc) = if comparison {
            // A hexadecimal literal meets a number (or a BIT column) as its number, a
            // string as a binary string; a `b'…'` literal likewise.
            let (l, lt, lc) = self.bind(left)?;
            let (r, rt, rc) = self.bind(right)?;
            let l_number = is_number_type(rt) || self.is_bit_column(right);
            let r_number = is_number_type(lt) || self.is_bit_column(left);
            let (l, lt, lc) = self.hex_compared(left, (l, lt, lc), l_number);
            let (r, rt, rc) = self.hex_compared(right, (r, rt, rc), r_number);
            (l, lt, lc, r, rt, rc)
        } else if matches!(
            op,
            B::Plus
                | B::Minus
                | B::Multiply
                | B::Divide
                | B::Modulo
                | B::MyIntegerDivide
                | B::And
                | B::Or
                | B::Xor
                | B::BitwiseAnd
                | B::BitwiseOr
                | B::BitwiseXor
                | B::PGBitwiseShiftLeft
                | B::PGBitwiseShiftRight
        ) {
            // Arithmetic, bit and logical operators read their operands as numbers.
            let (l, lt, lc) = self.bind_numeric(left)?;
            let (r, rt, rc) = self.bind_numeric(right)?;
            (l, lt, lc, r, rt, rc)
        } else {
            let (l, lt, lc) = self.bind(left)?;
            let (r, rt, rc) = self.bind(right)?;
            (l, lt, lc, r, rt, rc)
        };
        if let Some(b) = json_operator(op, &l, &r, lt) {
            return Ok(b);
        }
        if matches!(lt, SType::Time(_)) || matches!(rt, SType::Time(_)) {
            // TIME values are held as text: compared as their microseconds; no other
            // operator on them is a TIME operation here.
            let comparison = matches!(
                op,
                B::Eq | B::NotEq | B::Lt | B::LtEq | B::Gt | B::GtEq | B::Spaceship
            );
            if !comparison {
                return Err(Error::NotSupported(format!("operator {op} on TIME values")));
            }
            if let Some(mut k) = datetime::time_operands(vec![(l.clone(), lt), (r.clone(), rt)])? {
                r = k.pop().unwrap_or(Expr::Literal(Value::Null));
                l = k.pop().unwrap_or(Expr::Literal(Value::Null));
            }
        }
        if matches!(
            op,
            B::Eq | B::NotEq | B::Lt | B::LtEq | B::Gt | B::GtEq | B::Spaceship
        ) {
            r = datetime::number_as_temporal(lt, r);
            l = datetime::number_as_temporal(rt, l);
            if self.is_year_column(left) {
                r = datetime::year_operand(r);
            }
            if self.is_year_column(right) {
                l = datetime::year_operand(l);
            }
        }
        let (lx, rx) = (explicit_collate(left), explicit_collate(right));
        let cmp = |op: CmpOp| -> Result<(Expr, SType, Collation)> {
            let coll = pick_coll(&[(&l, lc, lx), (&r, rc, rx)], op.symbol())?;
            Ok((
                Expr::Cmp(op, Box::new(l.clone()), Box::new(r.clone()), coll),
                SType::Int,
                coll,
            ))
        };
        let ar = |op| {
            let t = arith_type(op, lt, rt);
            (
                fold::literal_arith(Expr::Arith(op, Box::new(l.clone()), Box::new(r.clone()))),
                t,
                Collation::GeneralCi,
            )
        };
        Ok(match op {
            B::Eq => cmp(CmpOp::Eq)?,
            B::NotEq => cmp(CmpOp::Ne)?,
            B::Lt => cmp(CmpOp::Lt)?,
            B::LtEq => cmp(CmpOp::Le)?,
            B::Gt => cmp(CmpOp::Gt)?,
            B::GtEq => cmp(CmpOp::Ge)?,
            B::Spaceship => cmp(CmpOp::NullSafeEq)?,
            B::Plus => ar(ArithOp::Add),
            B::Minus => ar(ArithOp::Sub),
            B::Multiply => ar(ArithOp::Mul),
            B::Divide => ar(ArithOp::Div),
            B::Modulo => ar(ArithOp::Mod),
            B::MyIntegerDivide => ar(ArithOp::IntDiv),
            B::And => (
                Expr::And(Box::new(l), Box::new(r)),
                SType::Int,
                Collation::GeneralCi,
            ),
            B::Or => (
                Expr::Or(Box::new(l), Box::new(r)),
                SType::Int,
                Collation::GeneralCi,
            ),
            B::Xor => (
                Expr::Xor(Box::new(l), Box::new(r)),
                SType::Int,
                Collation::GeneralCi,
            ),
            B::BitwiseAnd => (
                Expr::BitOp('&', Box::new(l), Box::new(r)),
                SType::UInt,
                Collation::GeneralCi,
            ),
            B::BitwiseOr => (
                Expr::BitOp('|', Box::new(l), Box::new(r)),
                SType::UInt,
                Collation::GeneralCi,
            ),
            B::BitwiseXor => (
                Expr::BitOp('^', Box::new(l), Box::new(r)),
                SType::UInt,
                Collation::GeneralCi,
            ),
            B::PGBitwiseShiftLeft => (
                Expr::BitOp('<', Box::new(l), Box::new(r)),
                SType::UInt,
                Collation::GeneralCi,
            ),
            B::PGBitwiseShiftRight => (
                Expr::BitOp('>', Box::new(l), Box::new(r)),
                SType::UInt,
                Collation::GeneralCi,
            ),
            other => return Err(Error::NotSupported(format!("operator {other}"))),
        })
    }

    /// Whether the expression is a plain reference to a BIT column of this scope.
    fn is_bit_column(&self, a: &ast::Expr) -> bool {
        matches!(self.column_type(a), Some(DataType::Bit(_)))
    }

    fn is_year_column(&self, a: &ast::Expr) -> bool {
        matches!(self.column_type(a), Some(DataType::Year))
    }

    /// The declared type of `a` when it names a column of this query block.
    fn column_type(&self, a: &ast::Expr) -> Option<DataType> {
        let parts = match a {
            ast::Expr::Identifier(id) => vec![id.value.clone()],
            ast::Expr::CompoundIdentifier(ids) => ident_parts(ids),
            _ => return None,
        };
        match self.scope.resolve(&parts, "field list") {
            Ok(pos) if pos < self.scope.width() => Some(self.scope.column(pos).1.data_type),
            _ => None,
        }
    }

    /// Binds an operand in numeric context (arithmetic, a numeric function's argument,
    /// CAST AS a number): a hexadecimal literal is its number there (`0x41 + 0` is 65),
    /// as MySQL 8 reads `x'…'` and `0x…` alike.
    fn bind_numeric(&mut self, a: &ast::Expr) -> Result<(Expr, SType, Collation)> {
        if let Some(v) = hex_number(a) {
            return Ok((Expr::Literal(v), SType::UInt, Collation::GeneralCi));
        }
        let (e, t, c) = self.bind(a)?;
        // An ENUM or SET column is its member number there, an integer (`e + 0`).
        if matches!(
            self.column_type(a),
            Some(DataType::Enum(_) | DataType::Set(_))
        ) {
            return Ok((e, SType::UInt, c));
        }
        Ok((e, t, c))
    }

    /// An operand of a comparison (`=`, BETWEEN, IN) as MySQL compares it: a
    /// hexadecimal literal meeting a number (`number`) is its number; a `b'…'` literal
    /// meeting anything but a number is the binary string it is (`b'1000001' = 'A'`),
    /// where at run time a bit value would compare as a number.
    fn hex_compared(
        &self,
        a: &ast::Expr,
        bound: (Expr, SType, Collation),
        number: bool,
    ) -> (Expr, SType, Collation) {
        if number {
            return match hex_number(a) {
                Some(v) => (Expr::Literal(v), SType::UInt, Collation::GeneralCi),
                None => bound,
            };
        }
        match bound {
            (Expr::Literal(Value::Bits(b)), _, _) => (
                Expr::Literal(Value::Bytes(b)),
                SType::Binary,
                Collation::Binary,
            ),
            other => other,
        }
    }

    /// `DEFAULT(col)`: the column's literal default (MySQL permits it only for those:
    /// 3773 for an expression default; 1364 for a NOT NULL column without one).
    fn bind_default_of(&mut self, a: &ast::Expr) -> Result<(Expr, SType, Collation)> {
        let parts = match a {
            ast::Expr::Identifier(id) => vec![id.value.clone()],
            ast::Expr::CompoundIdentifier(ids) => ident_parts(ids),
            other => return Err(Error::Syntax(format!("DEFAULT({other})"))),
        };
        let pos = self.scope.resolve(&parts, self.context)?;
        if pos >= self.scope.width() {
            return Err(Error::NotSupported("DEFAULT() of an outer column".into()));
        }
        let col = self.scope.column(pos).1.clone();
        let t = SType::of_column(&col.data_type, col.collation);
        let v = match &col.default {
            Some(ColumnDefault::Value(v)) => v.clone(),
            Some(ColumnDefault::Expr(_)) => return Err(Error::DefaultFunctionOnExpr),
            Some(ColumnDefault::CurrentTimestamp) => {
                let now = format!("now({})", col.data_type.fsp().unwrap_or(0));
                let e = crate::constraints::checks::parse_stored(&now)?;
                return Ok((self.bind(&e)?.0, t, col.collation));
            }
            None if col.nullable => Value::Null,
            None if col.auto_increment => Value::Int(0),
            None => return Err(Error::NoDefault(col.name.clone())),
        };
        Ok((Expr::Literal(v), t, col.collation))
    }

    /// A call of a stored function (1305 when there is none of that name).
    fn bind_stored_function(
        &mut self,
        f: &ast::Function,
        args: &[ast::Expr],
        name: String,
    ) -> Result<(Expr, SType, Collation)> {
        let parts = object_name_parts(&f.name);
        let (db, fname) = match parts.as_slice() {
            [n] => (None, n.as_str()),
            [d, n] => (Some(d.as_str()), n.as_str()),
            _ => return Err(Error::UnknownFunction(name)),
        };
        let found = match self.env {
            Some(env) => env.planner.stored_function(db, fname, args.len())?,
            None => None,
        };
        let Some((call, ret)) = found else {
            return Err(Error::UnknownFunction(name));
        };
        let mut bound = Vec::with_capacity(args.len());
        for a in args {
            bound.push(self.bind(a)?.0);
        }
        let t = SType::of_column(&ret.data_type, ret.collation);
        Ok((Expr::StoredCall(call, bound), t, ret.collation))
    }

    fn bind_function(&mut self, f: &ast::Function) -> Result<(Expr, SType, Collation)> {
        let name = object_name_parts(&f.name).join(".");
        if f.over.is_some() {
            return window::call::bind_call(self, f, &name);
        }
        let mut clauses: &[ast::FunctionArgumentClause] = &[];
        let (args, distinct, star) = match &f.args {
            ast::FunctionArguments::None => (vec![], false, false),
            ast::FunctionArguments::List(list) => {
                let distinct = matches!(
                    list.duplicate_treatment,
                    Some(ast::DuplicateTreatment::Distinct)
                );
                let mut args = vec![];
                let mut star = false;
                for a in &list.args {
                    match a {
                        ast::FunctionArg::Unnamed(ast::FunctionArgExpr::Expr(e)) => {
                            args.push(e.clone())
                        }
                        ast::FunctionArg::Unnamed(ast::FunctionArgExpr::Wildcard) => star = true,
                        other => return Err(Error::NotSupported(format!("argument {other}"))),
                    }
                }
                clauses = &list.clauses;
                (args, distinct, star)
            }
            ast::FunctionArguments::Subquery(_) => {
                return Err(Error::NotSupported("subqueries".into()))
            }
        };
        if name.eq_ignore_ascii_case("grouping") {
            return self.bind_grouping(&args, distinct || star || !clauses.is_empty());
        }
        if is_aggregate_name(&name) {
            return self.bind_aggregate(&name, &args, distinct, star, clauses);
        }
        if !clauses.is_empty() || distinct {
            // ORDER BY, SEPARATOR and DISTINCT belong to aggregates only.
            return Err(Error::Syntax(f.to_string()));
        }
        if name.eq_ignore_ascii_case("any_value") {
            // Not an aggregate: it exempts its argument from ONLY_FULL_GROUP_BY; a
            // bare column already reads any row.
            let [a] = args.as_slice() else {
                return Err(Error::WrongParamCount(name));
            };
            if let Some(agg) = self.agg.as_deref_mut() {
                agg.exempt += 1;
            }
            let bound = self.bind(a);
            if let Some(agg) = self.agg.as_deref_mut() {
                agg.exempt -= 1;
            }
            return bound;
        }
        if name.eq_ignore_ascii_case("isnull") {
            // ISNULL(x) is `x IS NULL` (1 or 0, never NULL).
            let [a] = args.as_slice() else {
                return Err(Error::WrongParamCount(name));
            };
            let bound = self.bind(a)?.0;
            return Ok((
                Expr::IsNull(Box::new(bound), false),
                SType::Int,
                Collation::GeneralCi,
            ));
        }
        if let Some(b) = self.bind_date_function(f, &name, &args)? {
            return Ok(b);
        }
        if let Some(b) = self.bind_char(f, &args)? {
            return Ok(b);
        }
        if let Some(b) = self.bind_charset_info(f, &args)? {
            return Ok(b);
        }
        if name.eq_ignore_ascii_case("default") {
            let [a] = args.as_slice() else {
                return Err(Error::WrongParamCount(name));
            };
            return self.bind_default_of(a);
        }
        if name.eq_ignore_ascii_case("values") {
            return Err(Error::NotSupported(
                "VALUES() outside ON DUPLICATE KEY UPDATE".into(),
            ));
        }
        // The parser's internal calls (`[interval]`) are looked up under their bracketed
        // name, which no client-written name reaches.
        let internal = f
            .name
            .0
            .first()
            .and_then(|p| p.as_ident())
            .is_some_and(|i| i.quote_style == Some(INTERNAL_QUOTE));
        let key = if internal {
            format!("[{name}]")
        } else if name.starts_with('[') {
            return self.bind_stored_function(f, &args, name);
        } else {
            name.clone()
        };
        let Some((func, min, max)) = functions::lookup(&key) else {
            return self.bind_stored_function(f, &args, name);
        };
        if args.len() < min || args.len() > max {
            return Err(Error::WrongParamCount(name));
        }
        let mut bound = Vec::with_capacity(args.len());
        let mut types = Vec::new();
        let mut colls = Vec::new();
        for (i, a) in args.iter().enumerate() {
            let (e, t, c) = if numeric_argument(func, i) {
                self.bind_numeric(a)?
            } else {
                self.bind(a)?
            };
            let e = match func {
                // HEX of a BIT column is its number's hex (MySQL reads the column as an
                // integer there); a `b'…'` literal stays a string, byte by byte.
                Func::Str(StrFn::Hex, _) if self.is_bit_column(a) => {
                    Expr::Func(Func::Cast(CastFn::Unsigned), vec![e])
                }
                // A number argument is read as the number it is, whatever it shows.
                Func::Str(..) if numeric_argument(func, i) => self.float_as_text(e, SType::DOUBLE),
                Func::Str(..) => self.float_as_text(e, t),
                Func::Json(_) if is_boolean(a, &e) => {
                    Expr::Func(Func::Json(JsonFn::BoolAsJson), vec![e])
                }
                Func::Json(_) => json_argument(e, t),
                _ => e,
            };
            bound.push(e);
            types.push(t);
            colls.push(c);
        }
        if matches!(func, Func::Str(..) | Func::Regexp(..)) {
            // A binary literal is coercible: beside a column or expression of a
            // character set it takes that collation (`STRCMP(c, x'41')` compares as
            // `STRCMP(c, 'A')`), as in a comparison (`pick_coll`).
            let is_literal = |e: &Expr| matches!(e, Expr::Literal(_));
            let text_operand = bound
                .iter()
                .zip(&types)
                .any(|(e, t)| !is_literal(e) && *t == SType::Text);
            if text_operand {
                for ((e, t), c) in bound.iter().zip(types.iter_mut()).zip(colls.iter_mut()) {
                    if is_literal(e) && *c == Collation::Binary {
                        *t = SType::Text;
                        *c = Collation::GeneralCi;
                    }
                }
            }
        }
        let (func, mut ty, coll) = func_types::call_type(func, &types, &colls, &bound)?;
        let (func, coll) = comparing_collation(func, &args, &bound, &mut ty, &colls, &types, coll)?;
        if matches!(
            func,
            Func::If | Func::IfNull | Func::Coalesce | Func::Greatest(_) | Func::Least(_)
        ) {
            let first = usize::from(func == Func::If);
            let widths: Vec<_> = bound
                .iter()
                .zip(types.iter().copied())
                .skip(first)
                .map(|(e, t)| (t, self.is_wide_unsigned(e, t)))
                .collect();
            ty = mixed_sign::bumped(ty, widths);
        }
        let picks = matches!(func, Func::Greatest(_) | Func::Least(_));
        let mixed_string = picks
            && branch_result::is_string(ty)
            && types
                .iter()
                .any(|t| !branch_result::is_string(*t) && *t != SType::Null);
        if matches!(func, Func::If | Func::IfNull | Func::Coalesce)
            || (picks && branch_result::is_temporal(ty))
        {
            // Every branch takes the result's type (a DATE beside a DATETIME shows
            // midnight, a TIME beside a date gets today's date, a number beside a
            // string is its text), as MySQL converts them; IF's condition is not a
            // branch. GREATEST/LEAST compare their arguments as they are, so a string
            // result is made of the one picked (below).
            let first = usize::from(func == Func::If);
            for (b, t) in bound.iter_mut().zip(&types).skip(first) {
                let e = std::mem::replace(b, Expr::Literal(Value::Null));
                *b = self.conform_branch(e, *t, ty);
            }
        }
        let picked_date = if picks && branch_result::is_string(ty) {
            branch_result::picked_date_shown(&types, &bound)
        } else {
            None
        };
        let e = Expr::Func(func, bound);
        let e = if mixed_string {
            branch_result::as_string(e)
        } else {
            e
        };
        let e = match picked_date {
            Some(fsp) => Expr::Func(Func::ShowPickedDate(fsp), vec![e]),
            None => e,
        };
        let e = match func {
            Func::If | Func::IfNull | Func::Coalesce | Func::Greatest(_) | Func::Least(_) => {
                as_result_type(e, ty)
            }
            _ => e,
        };
        Ok((e, ty, coll))
    }

    /// `left || right` under PIPES_AS_CONCAT: `CONCAT(left, right)`. MySQL binds `||`
    /// tighter than `*`, `/`, `DIV` and `%`, sqlparser as tight as them, so an unbracketed
    /// `a * b || c` it read as `(a * b) || c` is `a * (b || c)` here.
    fn bind_pipes_concat(
        &mut self,
        left: &ast::Expr,
        right: &ast::Expr,
    ) -> Result<(Expr, SType, Collation)> {
        use ast::BinaryOperator as B;
        if let ast::Expr::BinaryOp {
            left: a,
            op: op @ (B::Multiply | B::Divide | B::Modulo | B::MyIntegerDivide),
            right: b,
        } = left
        {
            let regrouped = ast::Expr::BinaryOp {
                left: a.clone(),
                op: op.clone(),
                right: Box::new(ast::Expr::BinaryOp {
                    left: b.clone(),
                    op: B::StringConcat,
                    right: Box::new(right.clone()),
                }),
            };
            return self.bind(&regrouped);
        }
        let Some((func, _, _)) = functions::lookup("concat") else {
            return Err(Error::NotSupported("operator ||".into()));
        };
        let mut bound = Vec::with_capacity(2);
        let mut types = Vec::with_capacity(2);
        let mut colls = Vec::with_capacity(2);
        for a in [left, right] {
            let (e, t, c) = self.bind(a)?;
            bound.push(self.float_as_text(e, t));
            types.push(t);
            colls.push(c);
        }
        let (func, ty, coll) = func_types::call_type(func, &types, &colls, &bound)?;
        Ok((Expr::Func(func, bound), ty, coll))
    }

    /// A bound CAST/CONVERT of `x` (of type `from`): a FLOAT, or a DOUBLE of fixed
    /// decimals, read as text shows as MySQL shows it.
    fn bind_cast(
        &self,
        x: Expr,
        from: SType,
        f: CastFn,
        t: SType,
        c: Collation,
    ) -> (Expr, SType, Collation) {
        let x = match f {
            CastFn::Char(_) | CastFn::Binary(_) => self.float_as_text(x, from),
            _ => x,
        };
        (Expr::Func(Func::Cast(f), vec![x]), t, c)
    }

    fn bind_aggregate(
        &mut self,
        name: &str,
        args: &[ast::Expr],
        distinct: bool,
        star: bool,
        clauses: &[ast::FunctionArgumentClause],
    ) -> Result<(Expr, SType, Collation)> {
        let context = self.context;
        let scope = self.scope;
        let env = self.env;
        let lname = name.to_ascii_lowercase();
        let Some((func, min, max, takes_distinct)) = aggregate_shape(&lname) else {
            return Err(Error::Syntax(format!("{name}(")));
        };
        // What MySQL's grammar refuses: `SUM(*)`, `SUM(a, b)`, `STD(DISTINCT a)`,
        // `SUM(a ORDER BY b)` (all 1064); COUNT takes a list only after DISTINCT.
        let max = if func == AggFunc::Count && distinct {
            usize::MAX
        } else {
            max
        };
        let shape_ok = if star {
            func == AggFunc::Count && !distinct && args.is_empty()
        } else {
            (min..=max).contains(&args.len()) && (takes_distinct || !distinct)
        };
        let clauses_ok = clauses.iter().all(|c| {
            func == AggFunc::GroupConcat
                && matches!(
                    c,
                    ast::FunctionArgumentClause::OrderBy(_)
                        | ast::FunctionArgumentClause::Separator(_)
                )
        });
        if !shape_ok || !clauses_ok {
            return Err(Error::Syntax(format!("{name}(")));
        }
        let mut inner = Binder {
            scope,
            context,
            agg: None,
            aliases: &[],
            env,
            windows: None,
        };
        let mut bound = Vec::with_capacity(args.len());
        let (mut local, mut outer) = (false, false);
        for a in args {
            if contains_aggregate(a) {
                return Err(Error::InvalidGroupUse);
            }
            let numeric = matches!(
                func,
                AggFunc::Sum
                    | AggFunc::Avg
                    | AggFunc::StdPop
                    | AggFunc::StdSamp
                    | AggFunc::VarPop
                    | AggFunc::VarSamp
            );
            let (e, t, c) = if numeric {
                inner.bind_numeric(a)?
            } else {
                inner.bind(a)?
            };
            e.walk(&mut |x| match x {
                Expr::Column(_) => local = true,
                Expr::OuterRef(_) => outer = true,
                _ => {}
            });
            bound.push((e, t, c));
        }
        // An aggregate of only an enclosing query's columns aggregates in that query
        // (MySQL); not done here, so refused rather than computed per subquery row. This
        // comes before the clause check: `WHERE o.c = MAX(outer.c)` in a subquery of a
        // grouped query's HAVING is valid MySQL, not a misplaced aggregate (1111).
        if outer && !local {
            return Err(Error::NotSupported(
                "an aggregate of only outer-query columns in a subquery".into(),
            ));
        }
        if self.agg.is_none() {
            return Err(Error::InvalidGroupUse);
        }
        let mut spec = if star {
            AggSpec::new(
                AggFunc::CountStar,
                None,
                false,
                SType::Int,
                Collation::GeneralCi,
            )
        } else {
            let mut it = bound.into_iter();
            let Some((e, t, c)) = it.next() else {
                return Err(Error::Syntax(format!("{name}(")));
            };
            let mut spec = AggSpec::new(func, Some(e), distinct, t, c);
            spec.more_args = it.collect();
            spec
        };
        refuse_time_extreme(func, spec.arg_type, &format!("{name}()"))?;
        match func {
            AggFunc::BitAnd | AggFunc::BitOr | AggFunc::BitXor
                if spec.arg_type == SType::Binary =>
            {
                // MySQL 8 works bytewise on binary strings and returns a binary string.
                return Err(Error::NotSupported(format!("{name}() of a binary string")));
            }
            AggFunc::JsonArrayAgg | AggFunc::JsonObjectAgg => {
                let mut types =
                    std::iter::once(spec.arg_type).chain(spec.more_args.iter().map(|m| m.1));
                if let Some(t) = types.find(|t| matches!(t, SType::Binary)) {
                    // MySQL's JSON form of a binary string (a base64 opaque value) is
                    // not written yet.
                    return Err(Error::NotSupported(format!("{name}() of a {t:?} value")));
                }
                // The element (JSON_ARRAYAGG) or member value (JSON_OBJECTAGG) becomes
                // its JSON value first where its SQL value alone would print otherwise:
                // a double as `1.0`, a date as a date, a date-time with six digits.
                let value = if func == AggFunc::JsonArrayAgg {
                    spec.arg.as_mut().map(|e| (e, spec.arg_type))
                } else {
                    spec.more_args.first_mut().map(|m| (&mut m.0, m.1))
                };
                if let Some((e, t)) = value {
                    let f = match t {
                        SType::Date => Some(JsonFn::DateAsJson),
                        SType::Double(_) | SType::DateTime(_) => Some(JsonFn::Cast),
                        _ => None,
                    };
                    if let Some(f) = f {
                        let inner = std::mem::replace(e, Expr::Literal(Value::Null));
                        *e = Expr::Func(Func::Json(f), vec![inner]);
                    }
                }
            }
            _ => {}
        }
        for c in clauses {
            match c {
                ast::FunctionArgumentClause::OrderBy(items) => {
                    for item in items {
                        if let ast::Expr::Value(v) = &item.expr {
                            if matches!(literal(&v.value), Ok(Value::Int(_))) {
                                // A position names an argument in MySQL.
                                return Err(Error::NotSupported(
                                    "a position in GROUP_CONCAT's ORDER BY".into(),
                                ));
                            }
                        }
                        if contains_aggregate(&item.expr) {
                            return Err(Error::InvalidGroupUse);
                        }
                        let (e, _, c) = inner.bind(&item.expr)?;
                        let desc = matches!(item.options.sort, Some(ast::OrderBySort::Desc));
                        spec.order.push((e, desc, c));
                    }
                }
                ast::FunctionArgumentClause::Separator(v) => match literal(&v.value)? {
                    Value::Bytes(b) => spec.separator = b,
                    _ => return Err(Error::Syntax(format!("SEPARATOR {v}"))),
                },
                _ => return Err(Error::Syntax(format!("{name}("))),
            }
        }
        let ty = aggregate_type(spec.func, spec.arg_type, &spec.more_args);
        let coll = match ty {
            SType::Binary => Collation::Binary,
            _ => spec.coll,
        };
        let Some(agg) = self.agg.as_deref_mut() else {
            return Err(Error::InvalidGroupUse);
        };
        let i = agg.aggs.len();
        agg.aggs.push(spec);
        Ok((Expr::Column(agg.groups.len() + i), ty, coll))
    }

    /// GROUPING(a, …) of a WITH ROLLUP query: each argument must be one of the GROUP BY
    /// expressions (3602 otherwise); outside ROLLUP it is 1111, as in MySQL.
    fn bind_grouping(&mut self, args: &[ast::Expr], odd: bool) -> Result<(Expr, SType, Collation)> {
        if odd || args.is_empty() {
            return Err(Error::Syntax("GROUPING(".into()));
        }
        let scope = self.scope;
        let env = self.env;
        let context = self.context;
        let Some(agg) = self.agg.as_deref_mut() else {
            return Err(Error::InvalidGroupUse);
        };
        if !agg.rollup {
            return Err(Error::InvalidGroupUse);
        }
        let mut positions = Vec::with_capacity(args.len());
        for (n, a) in args.iter().enumerate() {
            let text = a.to_string();
            let mut pos = agg
                .groups
                .iter()
                .position(|g| g.0.eq_ignore_ascii_case(&text));
            if pos.is_none() && !contains_aggregate(a) {
                let mut inner = Binder {
                    scope,
                    context,
                    agg: None,
                    aliases: &[],
                    env,
                    windows: None,
                };
                if let Ok((e, _, _)) = inner.bind(a) {
                    pos = agg.groups.iter().position(|g| same_column(&g.1, &e));
                }
            }
            let Some(p) = pos else {
                return Err(Error::GroupingArgNotGrouped(n + 1));
            };
            positions.push((Expr::Column(p), SType::Int, Collation::GeneralCi));
        }
        let mut spec = AggSpec::new(
            AggFunc::Grouping,
            None,
            false,
            SType::Int,
            Collation::GeneralCi,
        );
        spec.more_args = positions;
        let i = agg.aggs.len();
        agg.aggs.push(spec);
        Ok((
            Expr::Column(agg.groups.len() + i),
            SType::Int,
            Collation::GeneralCi,
        ))
    }
}

/// `doc -> path` (JSON_EXTRACT) and `doc ->> path` (its unquoted text).
fn json_operator(
    op: &ast::BinaryOperator,
    l: &Expr,
    r: &Expr,
    lt: SType,
) -> Option<(Expr, SType, Collation)> {
    let (f, t) = match op {
        ast::BinaryOperator::Arrow => (JsonFn::Extract, SType::Json),
        ast::BinaryOperator::LongArrow => (JsonFn::ExtractUnquote, SType::Text),
        _ => return None,
    };
    let args = vec![json_argument(l.clone(), lt), r.clone()];
    Some((Expr::Func(Func::Json(f), args), t, Collation::GeneralCi))
}

/// Whether an argument is a truth value in MySQL's sense (a JSON function stores it as
/// `true`/`false`): `TRUE`/`FALSE`, a comparison, a logical operator, IS, BETWEEN, IN,
/// LIKE, EXISTS. `(1=1) + 0` is a number again.
fn is_boolean(a: &ast::Expr, e: &Expr) -> bool {
    if let ast::Expr::Value(v) = a {
        return matches!(v.value, ast::Value::Boolean(_));
    }
    if matches!(a, ast::Expr::Exists { .. }) {
        return true;
    }
    matches!(
        e,
        Expr::Cmp(..)
            | Expr::And(..)
            | Expr::Or(..)
            | Expr::Xor(..)
            | Expr::Not(..)
            | Expr::IsNull(..)
            | Expr::IsTruth(..)
            | Expr::Between { .. }
            | Expr::InList { .. }
            | Expr::Like { .. }
    )
}

/// An argument of a JSON function: a DATE-typed one is marked as a date, since its
/// value alone (a date-time at midnight) cannot say so.
fn json_argument(e: Expr, t: SType) -> Expr {
    if t == SType::Date {
        Expr::Func(Func::Json(JsonFn::DateAsJson), vec![e])
    } else {
        e
    }
}

fn system_variable(name: &str, scope: Option<&str>) -> (Expr, SType, Collation) {
    let global = scope.is_some_and(|s| s.eq_ignore_ascii_case("global"));
    (
        Expr::SystemVariable {
            name: name.to_ascii_lowercase(),
            global,
        },
        SType::Text,
        Collation::GeneralCi,
    )
}

/// The collation of a comparison, by MySQL's coercibility rules: an explicit `COLLATE`
/// (on either side, `explicit` set) wins over a column's, which wins over a literal's;
/// two explicit ones that differ are 1267, as in MySQL.
fn pick_coll(parts: &[(&Expr, Collation, bool)], op: &str) -> Result<Collation> {
    // A binary string on either side makes the comparison binary (`x = BINARY 'a'`,
    // `x LIKE BINARY 'a%'`), as in MySQL; but a binary literal (`x'41'`, `_binary 'a'`)
    // is coercible: beside a column or expression of a character set it takes that
    // operand's collation (`c = x'41'` compares as `c = 'A'`).
    let is_literal = |e: &Expr| matches!(e, Expr::Literal(_));
    let others_binary = parts
        .iter()
        .all(|(e, c, _)| is_literal(e) || *c == Collation::Binary);
    if parts
        .iter()
        .any(|(e, c, _)| *c == Collation::Binary && (!is_literal(e) || others_binary))
    {
        return Ok(Collation::Binary);
    }
    let mut explicit = parts.iter().filter(|(_, _, x)| *x).map(|(_, c, _)| *c);
    if let Some(first) = explicit.next() {
        if let Some(other) = explicit.find(|c| *c != first) {
            return Err(Error::IllegalCollationMix {
                left: first.name(),
                right: other.name(),
                op: op.to_string(),
            });
        }
        return Ok(first);
    }
    // Columns of one character set with a `_bin` and a `_ci` collation compare by the
    // `_bin` one (MySQL's coercibility rule), whichever side it is on.
    let column_colls = || {
        parts
            .iter()
            .filter(|(e, _, _)| matches!(e, Expr::Column(_)))
            .map(|(_, c, _)| *c)
    };
    if column_colls().any(|c| c == Collation::Utf8Bin)
        && column_colls().any(|c| c == Collation::GeneralCi)
    {
        return Ok(Collation::Utf8Bin);
    }
    if let Some(c) = column_colls().next() {
        return Ok(c);
    }
    // A binary literal left here lost to an operand of a character set (above).
    Ok(parts
        .iter()
        .map(|(_, c, _)| *c)
        .find(|c| *c != Collation::GeneralCi && *c != Collation::Binary)
        .unwrap_or(Collation::GeneralCi))
}

/// NULLIF, GREATEST and LEAST compare their string arguments as a comparison does: under
/// the collation `pick_coll` aggregates from them (an explicit `COLLATE` first, a `_bin`
/// column over a `_ci` one, a column over a literal; two explicit ones that differ are
/// 1267). GREATEST's and LEAST's result takes that collation too, as in MySQL. Other
/// functions pass through with the type and collation `call_type` gave them.
fn comparing_collation(
    func: Func,
    args: &[ast::Expr],
    bound: &[Expr],
    types: &mut SType,
    colls: &[Collation],
    arg_types: &[SType],
    coll: Collation,
) -> Result<(Func, Collation)> {
    let is_string = |t: &SType| matches!(t, SType::Text | SType::Binary);
    let parts = || -> Vec<(&Expr, Collation, bool)> {
        bound
            .iter()
            .zip(colls)
            .zip(args)
            .map(|((e, c), a)| (e, *c, explicit_collate(a)))
            .collect()
    };
    Ok(match func {
        Func::Greatest(_) | Func::Least(_) if is_string(types) => {
            let name = if matches!(func, Func::Greatest(_)) {
                "greatest"
            } else {
                "least"
            };
            let c = pick_coll(&parts(), name)?;
            *types = if c == Collation::Binary {
                SType::Binary
            } else {
                SType::Text
            };
            let func = if matches!(func, Func::Greatest(_)) {
                Func::Greatest(c)
            } else {
                Func::Least(c)
            };
            (func, c)
        }
        Func::NullIf(_) if arg_types.iter().all(is_string) => {
            (Func::NullIf(pick_coll(&parts(), "nullif")?), coll)
        }
        _ => (func, coll),
    })
}

/// Whether an operand carries an explicit `COLLATE` (coercibility 0), through
/// parentheses.
fn explicit_collate(e: &ast::Expr) -> bool {
    match e {
        ast::Expr::Nested(inner) => explicit_collate(inner),
        ast::Expr::Collate { .. } => true,
        _ => false,
    }
}

/// The collation of each column comparison of `lhs IN (subquery)`, and whether equal
/// values have equal group-key bytes on every column (numbers with numbers, strings with
/// strings, dates with dates), which lets the subquery's rows be probed as a hash set.
/// A subquery comparison compares a TIME (held as text) by its text: right for `IN` only
/// between TIMEs of the same fsp (one canonical text per value); an ordering (`> ANY`)
/// or any other mix would not compare durations, so it is refused.
fn refuse_time_subquery(
    lhs: &[(SType, Collation)],
    columns: &[ColumnMeta],
    ordering: bool,
) -> Result<()> {
    for ((t, _), m) in lhs.iter().zip(columns) {
        let right = SType::of_meta(m);
        let time = matches!(t, SType::Time(_)) || matches!(right, SType::Time(_));
        if time && (ordering || *t != right) {
            return Err(Error::NotSupported(
                "comparing a TIME with a subquery's column of another type or precision".into(),
            ));
        }
    }
    Ok(())
}

fn in_comparison(lhs: &[(SType, Collation)], columns: &[ColumnMeta]) -> (Vec<Collation>, bool) {
    let class = |t: SType| match t {
        SType::Int | SType::UInt | SType::Double(_) | SType::Decimal(_) => 0,
        SType::Text | SType::Binary => 1,
        SType::Date | SType::DateTime(_) => 2,
        SType::Null => 3,
        SType::Time(_) => 4,
        SType::Json => 5,
    };
    let mut hashable = true;
    let mut colls = Vec::with_capacity(lhs.len());
    for ((t, c), m) in lhs.iter().zip(columns) {
        let right = SType::of_meta(m);
        let right_coll = match m.charset {
            63 => Collation::Binary,
            46 => Collation::Utf8Bin,
            _ => Collation::GeneralCi,
        };
        // The operand's collation wins over the subquery column's, as a column's over a
        // literal's; a binary string on either side compares bytes, and a `_bin`
        // collation on either side wins over `_ci` (MySQL's rule for one character set).
        let coll = if *c == Collation::Binary || right_coll == Collation::Binary {
            Collation::Binary
        } else if *c == Collation::Utf8Bin || right_coll == Collation::Utf8Bin {
            Collation::Utf8Bin
        } else {
            *c
        };
        if class(*t) != class(right) || class(*t) == 3 {
            hashable = false;
        }
        colls.push(coll);
    }
    (colls, hashable)
}

/// A TIME cast to DATE or DATETIME is that time on the current date (MySQL 8); TIME
/// values are held as text, which the cast alone would read as a date string.
fn time_for_date_cast(x: Expr, from: SType, f: CastFn) -> Expr {
    match (from, f) {
        (SType::Time(fsp), CastFn::Date | CastFn::DateTime(_)) => {
            branch_result::time_on_current_date(x, fsp)
        }
        _ => x,
    }
}

pub fn unify(a: SType, b: SType) -> SType {
    use SType::*;
    if let Some(t) = branch_result::unify(a, b) {
        return t;
    }
    match (a, b) {
        (Null, x) | (x, Null) => x,
        (x, y) if x == y => x,
        (Int, UInt) | (UInt, Int) => Int,
        (Decimal(x), Decimal(y)) => Decimal(x.max(y)),
        (Decimal(s), Int | UInt) | (Int | UInt, Decimal(s)) => Decimal(s),
        (Double(x), Double(y)) => Double(real_decimals::combined(x, y)),
        (Double(d), t @ (Int | UInt | Decimal(_))) | (t @ (Int | UInt | Decimal(_)), Double(d)) => {
            Double(real_decimals::combined(d, real_decimals::of(t)))
        }
        (Binary, _) | (_, Binary) => Binary,
        _ => Text,
    }
}

/// The static type of `a op b`, as MySQL resolves it; the declared scale of a DECIMAL
/// result is the `shown` scale `strata_types::Decimal` gives its values, so the two
/// rules must agree: `+`, `-` and `%` take the larger scale, `*` the sum, `/` the
/// dividend's plus 4 (all at most 30). `/` of two exact operands is DECIMAL; `DIV` is
/// BIGINT, UNSIGNED when either operand is; `%` of integers is UNSIGNED when its
/// dividend is, the others when either operand is. Strings count as DOUBLE; a DATE or
/// a DATETIME without fraction as an integer (YYYYMMDD, YYYYMMDDhhmmss), one with a
/// fraction as a DECIMAL of its digits, as MySQL 8 reads temporal values in arithmetic.
/// A DOUBLE result shows the decimals [`real_decimals`] gives it (`/` four more).
pub(crate) fn arith_type(op: ArithOp, a: SType, b: SType) -> SType {
    use SType::*;
    const MAX_SCALE: u8 = strata_types::decimal::MAX_SCALE;
    let num = |t| match t {
        Date | DateTime(0) => Int,
        DateTime(fsp) => Decimal(fsp),
        Text | Binary | Time(_) | Json => SType::DOUBLE,
        x => x,
    };
    let (a, b) = (num(a), num(b));
    let (da, db) = (real_decimals::of(a), real_decimals::of(b));
    match op {
        ArithOp::Div => match (a, b) {
            (Double(_), _) | (_, Double(_)) => Double(real_decimals::quotient(da, db)),
            (Decimal(s), _) => Decimal((s + strata_types::decimal::DIV_INCREMENT).min(MAX_SCALE)),
            _ => Decimal(strata_types::decimal::DIV_INCREMENT),
        },
        ArithOp::IntDiv => match (a, b) {
            (UInt, _) | (_, UInt) => UInt,
            _ => Int,
        },
        _ => match (a, b) {
            (Null, _) | (_, Null) => Null,
            (Double(_), _) | (_, Double(_)) => Double(real_decimals::combined(da, db)),
            (Decimal(x), Decimal(y)) if op == ArithOp::Mul => Decimal((x + y).min(MAX_SCALE)),
            (Decimal(x), Decimal(y)) => Decimal(x.max(y)),
            (Decimal(s), _) | (_, Decimal(s)) if op == ArithOp::Mul => Decimal(s.min(MAX_SCALE)),
            (Decimal(s), _) | (_, Decimal(s)) => Decimal(s),
            (UInt, _) => UInt,
            (_, UInt) if op != ArithOp::Mod => UInt,
            _ => Int,
        },
    }
}

/// The static type of ROUND(x[, d]) and TRUNCATE(x, d): a DECIMAL rounds to `d`
/// digits when `d` is a constant (0 when negative, at most 30), else keeps x's scale; a
/// DOUBLE shows `d` decimals when `d` is a constant ([`real_decimals::rounded`]); other
/// types keep their type.
pub(crate) fn round_type(arg: SType, digits: Option<&Expr>) -> SType {
    match (arg, digits) {
        (SType::Double(_), None) => SType::Double(0),
        (SType::Double(d), Some(Expr::Literal(v))) => {
            SType::Double(real_decimals::rounded(d, Some(v)))
        }
        (SType::Double(d), Some(_)) => SType::Double(real_decimals::rounded(d, None)),
        (SType::Decimal(_), None) => SType::Decimal(0),
        (SType::Decimal(_), Some(Expr::Literal(v))) => SType::Decimal(
            v.to_i64()
                .unwrap_or(0)
                .clamp(0, strata_types::decimal::MAX_SCALE as i64) as u8,
        ),
        (t, _) => t,
    }
}

/// An IF/IFNULL/COALESCE/GREATEST/LEAST/CASE wrapped so that its values have its
/// declared numeric type whichever branch they came from, as MySQL converts every
/// branch to the result type: DECIMALs shown at the declared scale (`Func::ShowScale`),
/// doubles (`Func::ShowDouble`), signed integers where they fit (`Func::ShowSigned`).
fn as_result_type(e: Expr, ty: SType) -> Expr {
    match ty {
        SType::Decimal(s) => Expr::Func(Func::ShowScale(s), vec![e]),
        SType::Double(_) => Expr::Func(Func::ShowDouble, vec![e]),
        SType::Int => Expr::Func(Func::ShowSigned, vec![e]),
        _ => e,
    }
}

/// Whether a static type is a number's (a comparison with it is numeric).
fn is_number_type(t: SType) -> bool {
    matches!(
        t,
        SType::Int | SType::UInt | SType::Double(_) | SType::Decimal(_)
    )
}

/// Whether argument `i` of a function is read as a number: every argument of a
/// numeric function, the lengths and positions of the string functions. A
/// hexadecimal literal there is its number (`SPACE(0x03)`, `LEFT(s, 0x02)`).
fn numeric_argument(func: Func, i: usize) -> bool {
    use StrFn::*;
    match func {
        Func::Math(m) => m != MathFn::Crc32,
        Func::Str(f, _) => match f {
            Substring | Insert => i == 1 || i == 2,
            Left | Right | Repeat | LPad | RPad => i == 1,
            Space | Elt | MakeSet | Bin | Oct => i == 0,
            Locate | SubstringIndex => i == 2,
            Format => i == 0 || i == 1,
            ExportSet => i == 0 || i == 4,
            _ => false,
        },
        _ => false,
    }
}

/// The number a hexadecimal literal (`x'41'`, `0x41`, possibly parenthesised) stands
/// for in numeric context: its last eight bytes as a BIGINT UNSIGNED, as MySQL 8 reads
/// it. None for any other expression.
pub(crate) fn hex_number(a: &ast::Expr) -> Option<Value> {
    match a {
        ast::Expr::Nested(x) => hex_number(x),
        ast::Expr::Value(v) if matches!(v.value, ast::Value::HexStringLiteral(_)) => {
            match literal(&v.value).ok()? {
                Value::Bytes(b) => {
                    let tail = &b[b.len().saturating_sub(8)..];
                    Some(Value::UInt(
                        tail.iter().fold(0u64, |n, &x| (n << 8) | u64::from(x)),
                    ))
                }
                _ => None,
            }
        }
        _ => None,
    }
}

/// A literal's value.
pub fn literal(v: &ast::Value) -> Result<Value> {
    use ast::Value as V;
    Ok(match v {
        V::Number(n, _) => number_value(n).ok_or_else(|| {
            // A plain literal past 65 digits is a DOUBLE in MySQL 8: not here yet.
            if n.bytes().all(|b| b.is_ascii_digit() || b == b'.') {
                Error::NotSupported(format!("DECIMAL literals of more than 65 digits ({n})"))
            } else {
                Error::Syntax(n.clone())
            }
        })?,
        V::SingleQuotedString(s) | V::DoubleQuotedString(s) => {
            Value::Bytes(strata_types::sqltext::literal_bytes(s.as_bytes()))
        }
        V::HexStringLiteral(h) => {
            let h = if h.len() % 2 == 1 {
                format!("0{h}")
            } else {
                h.clone()
            };
            let mut out = Vec::with_capacity(h.len() / 2);
            for i in (0..h.len()).step_by(2) {
                out.push(
                    u8::from_str_radix(&h[i..i + 2], 16).map_err(|_| Error::Syntax(h.clone()))?,
                );
            }
            Value::Bytes(out)
        }
        V::SingleQuotedByteStringLiteral(b) | V::DoubleQuotedByteStringLiteral(b) => {
            bit_literal(b).ok_or_else(|| Error::Syntax(format!("b'{b}'")))?
        }
        V::Boolean(b) => Value::Int(*b as i64),
        V::Null => Value::Null,
        V::Placeholder(p) => return Err(Error::Syntax(p.clone())),
        V::NationalStringLiteral(s) => Value::str(s),
        V::EscapedStringLiteral(s) => Value::Bytes(unescape(s.as_bytes(), b'\'')),
        other => return Err(Error::NotSupported(format!("literal {other}"))),
    })
}

/// A bit-value literal (`b'101'`, `0b101`): a binary string of the fewest bytes that
/// hold the bits (`b''` is the empty string), a number in numeric context.
pub fn bit_literal(digits: &str) -> Option<Value> {
    if !digits.bytes().all(|c| c == b'0' || c == b'1') {
        return None;
    }
    let mut out = Vec::with_capacity(digits.len().div_ceil(8));
    let head = digits.len() % 8;
    if head > 0 {
        out.push(u8::from_str_radix(&digits[..head], 2).ok()?);
    }
    for i in (head..digits.len()).step_by(8) {
        out.push(u8::from_str_radix(&digits[i..i + 8], 2).ok()?);
    }
    Some(Value::Bits(out))
}

/// The placeholder number of `?N` (0-based), if the expression is one.
pub fn placeholder_index(v: &ast::Value) -> Option<usize> {
    match v {
        ast::Value::Placeholder(p) => p
            .strip_prefix('?')
            .and_then(|n| n.parse::<usize>().ok())
            .map(|n| n - 1),
        _ => None,
    }
}

/// MIN/MAX of a TIME value would follow its text order too (see [`refuse_time_order`]):
/// refused, in a grouped block (`what` = `MAX()`) and over a window alike.
pub fn refuse_time_extreme(func: AggFunc, ty: SType, what: &str) -> Result<()> {
    if matches!(func, AggFunc::Min | AggFunc::Max) && matches!(ty, SType::Time(_)) {
        return Err(Error::NotSupported(format!("{what} of a TIME value")));
    }
    Ok(())
}

/// TIME values are held as text inside Strata, so sorting them would order `-01:00:00`
/// after `00:30:00` and `100:00:00` before `99:00:00`: refused rather than wrong.
pub fn refuse_time_order(t: strata_types::FieldType) -> Result<()> {
    match t {
        strata_types::FieldType::Time => Err(Error::NotSupported("ORDER BY a TIME value".into())),
        _ => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::expr::arith;
    use strata_types::Decimal;

    /// MySQL's coercibility rules for a comparison's collation: a binary string wins,
    /// then a `_bin` column over a `_ci` column (either side), then a column over a
    /// literal.
    #[test]
    fn comparison_collation_follows_coercibility() {
        let (c0, c1, lit) = (
            Expr::Column(0),
            Expr::Column(1),
            Expr::Literal(Value::str("a")),
        );
        use Collation::{Binary, GeneralCi, Utf8Bin};
        let pick = |parts: &[(&Expr, Collation)]| {
            let parts: Vec<_> = parts.iter().map(|(e, c)| (*e, *c, false)).collect();
            pick_coll(&parts, "=").unwrap()
        };
        assert_eq!(pick(&[(&c0, GeneralCi), (&c1, Utf8Bin)]), Utf8Bin);
        assert_eq!(pick(&[(&c0, Utf8Bin), (&c1, GeneralCi)]), Utf8Bin);
        assert_eq!(pick(&[(&c0, GeneralCi), (&lit, Utf8Bin)]), GeneralCi);
        assert_eq!(pick(&[(&lit, GeneralCi), (&c1, Utf8Bin)]), Utf8Bin);
        assert_eq!(pick(&[(&c0, GeneralCi), (&c1, GeneralCi)]), GeneralCi);
        // A binary string wins over a string, unless it is a (coercible) literal beside
        // a column: `c = x'41'` compares in c's collation, `'a' = x'41'` in binary.
        assert_eq!(pick(&[(&c0, GeneralCi), (&c1, Binary)]), Binary);
        assert_eq!(pick(&[(&c0, GeneralCi), (&lit, Binary)]), GeneralCi);
        assert_eq!(pick(&[(&lit, Binary), (&c0, Utf8Bin)]), Utf8Bin);
        assert_eq!(pick(&[(&lit, GeneralCi), (&lit, Binary)]), Binary);
        assert_eq!(pick(&[(&c0, Binary), (&lit, Binary)]), Binary);
        let concat = Expr::Func(Func::Str(StrFn::Concat, GeneralCi), vec![c0.clone()]);
        assert_eq!(pick(&[(&concat, GeneralCi), (&lit, Binary)]), GeneralCi);
        // An explicit COLLATE on either side beats the column's collation
        // (`col = 'A' COLLATE utf8mb4_bin` once compared by the column's _ci).
        let explicit = |parts: &[(&Expr, Collation, bool)]| pick_coll(parts, "=");
        assert_eq!(
            explicit(&[(&c0, GeneralCi, false), (&lit, Utf8Bin, true)]).unwrap(),
            Utf8Bin
        );
        assert_eq!(
            explicit(&[(&c0, Utf8Bin, false), (&lit, GeneralCi, true)]).unwrap(),
            GeneralCi
        );
        assert_eq!(
            explicit(&[(&c0, Utf8Bin, true), (&lit, Utf8Bin, true)]).unwrap(),
            Utf8Bin
        );
        assert_eq!(
            explicit(&[(&c0, GeneralCi, true), (&lit, Utf8Bin, true)])
                .unwrap_err()
                .code(),
            1267
        );
    }

    /// GREATEST/LEAST/NULLIF take the comparison collation `pick_coll` gives: an
    /// explicit `_bin` literal beats the literal's `_ci`, a `_bin` column a `_ci` one,
    /// and two explicit collations that differ are 1267 naming the function.
    #[test]
    fn greatest_least_nullif_take_the_comparison_collation() {
        use Collation::{GeneralCi, Utf8Bin};
        let parse = |s: &str| {
            sqlparser::parser::Parser::new(&crate::parse::dialect::StrataDialect::default())
                .try_with_sql(s)
                .unwrap()
                .parse_expr()
                .unwrap()
        };
        let lits = [parse("'a' COLLATE utf8mb4_bin"), parse("'B'")];
        let bound = [
            Expr::Literal(Value::str("a")),
            Expr::Literal(Value::str("B")),
        ];
        let types = [SType::Text, SType::Text];
        let mut ty = SType::Text;
        let (f, c) = comparing_collation(
            Func::Greatest(GeneralCi),
            &lits,
            &bound,
            &mut ty,
            &[Utf8Bin, GeneralCi],
            &types,
            GeneralCi,
        )
        .unwrap();
        assert_eq!((f, c, ty), (Func::Greatest(Utf8Bin), Utf8Bin, SType::Text));
        let cols = [parse("b"), parse("c")];
        let bound = [Expr::Column(0), Expr::Column(1)];
        let (f, _) = comparing_collation(
            Func::NullIf(GeneralCi),
            &cols,
            &bound,
            &mut SType::Text,
            &[GeneralCi, Utf8Bin],
            &types,
            GeneralCi,
        )
        .unwrap();
        assert_eq!(f, Func::NullIf(Utf8Bin));
        let both = [
            parse("b COLLATE utf8mb4_bin"),
            parse("c COLLATE utf8mb4_general_ci"),
        ];
        let err = comparing_collation(
            Func::Least(GeneralCi),
            &both,
            &bound,
            &mut SType::Text,
            &[Utf8Bin, GeneralCi],
            &types,
            GeneralCi,
        )
        .unwrap_err();
        assert_eq!(err.code(), 1267);
        assert!(err.to_string().contains("'least'"));
        // Numbers compare as numbers: nothing to aggregate.
        let (f, _) = comparing_collation(
            Func::Greatest(GeneralCi),
            &both,
            &bound,
            &mut SType::Int,
            &[Utf8Bin, GeneralCi],
            &[SType::Int, SType::Int],
            GeneralCi,
        )
        .unwrap();
        assert_eq!(f, Func::Greatest(GeneralCi));
    }

    /// The declared scale `arith_type` gives a DECIMAL result is the scale its values
    /// show: the two rules are written twice and must agree.
    #[test]
    fn static_scale_matches_the_values() {
        let operands = [
            (Value::Int(59), SType::Int),
            (Value::UInt(14), SType::UInt),
            (Value::Decimal(Decimal::new(-190, 2)), SType::Decimal(2)),
            (Value::Decimal(Decimal::new(7, 1)), SType::Decimal(1)),
            (
                Value::Decimal(Decimal::new(123456789012345678, 18)),
                SType::Decimal(18),
            ),
        ];
        let ops = [
            ArithOp::Add,
            ArithOp::Sub,
            ArithOp::Mul,
            ArithOp::Div,
            ArithOp::IntDiv,
            ArithOp::Mod,
        ];
        for (a, at) in &operands {
            for (b, bt) in &operands {
                for op in ops {
                    // An unsigned result below zero is error 1690, as in MySQL.
                    let Ok(v) = arith(op, a, b) else { continue };
                    let t = arith_type(op, *at, *bt);
                    match v {
                        Value::Decimal(d) => {
                            assert_eq!(t, SType::Decimal(d.shown), "{a:?} {op:?} {b:?}")
                        }
                        Value::Int(_) => assert_eq!(t, SType::Int, "{a:?} {op:?} {b:?}"),
                        Value::UInt(_) => assert_eq!(t, SType::UInt, "{a:?} {op:?} {b:?}"),
                        other => panic!("{a:?} {op:?} {b:?} gave {other:?}"),
                    }
                }
            }
        }
    }

    #[test]
    fn round_declares_its_digits() {
        let lit = |i| Expr::Literal(Value::Int(i));
        assert_eq!(
            round_type(SType::Decimal(4), Some(&lit(6))),
            SType::Decimal(6)
        );
        assert_eq!(
            round_type(SType::Decimal(4), Some(&lit(-2))),
            SType::Decimal(0)
        );
        assert_eq!(round_type(SType::Decimal(4), None), SType::Decimal(0));
        assert_eq!(
            round_type(SType::Decimal(4), Some(&Expr::Column(0))),
            SType::Decimal(4)
        );
        // A DOUBLE shows a constant count of digits, its own with any other.
        assert_eq!(round_type(SType::DOUBLE, Some(&lit(2))), SType::Double(2));
        assert_eq!(
            round_type(SType::Double(3), Some(&lit(-1))),
            SType::Double(0)
        );
        assert_eq!(round_type(SType::DOUBLE, None), SType::Double(0));
        assert_eq!(
            round_type(SType::DOUBLE, Some(&Expr::Column(0))),
            SType::DOUBLE
        );
        assert_eq!(
            round_type(SType::Double(2), Some(&Expr::Column(0))),
            SType::Double(2)
        );
    }

    #[test]
    fn double_arithmetic_keeps_mysql_decimals() {
        use ArithOp::*;
        let (d2, d3) = (SType::Double(2), SType::Double(3));
        assert_eq!(arith_type(Mul, d2, SType::Int), d2);
        assert_eq!(arith_type(Add, d2, d3), d3);
        assert_eq!(arith_type(Sub, SType::Decimal(3), d2), d3);
        assert_eq!(arith_type(Mod, d2, SType::Int), d2);
        assert_eq!(arith_type(Add, d2, SType::DOUBLE), SType::DOUBLE);
        assert_eq!(arith_type(Add, d2, SType::Text), SType::DOUBLE);
        assert_eq!(arith_type(Div, d2, SType::Int), SType::Double(6));
        assert_eq!(arith_type(Div, d3, d2), SType::Double(7));
        assert_eq!(arith_type(Div, d2, SType::DOUBLE), SType::DOUBLE);
        assert_eq!(
            arith_type(Div, SType::Double(27), SType::Int),
            SType::DOUBLE
        );
        assert_eq!(unify(d2, d3), d3);
        assert_eq!(unify(d2, SType::Int), d2);
        assert_eq!(unify(SType::Decimal(4), d2), SType::Double(4));
        assert_eq!(unify(d2, SType::DOUBLE), SType::DOUBLE);
        assert_eq!(unify(SType::Null, d2), d2);
    }
}

#[cfg(test)]
mod correlation_tests {
    //! The binder's scope chain and aggregate detection, without a catalog: tables are
    //! derived-table definitions, and a stand-in planner binds a subquery's WHERE.
    use super::*;
    use crate::bind::derived::DerivedTable;
    use crate::catalog::rowsource::ReadOnlyTable;
    use std::cell::RefCell;

    fn table(name: &str, cols: &[&str]) -> Arc<dyn Table> {
        let metas: Vec<ColumnMeta> = cols
            .iter()
            .map(|c| ColumnMeta::computed(c, FieldType::LongLong))
            .collect();
        Arc::new(ReadOnlyTable(DerivedTable::new(name, &metas, &[]).unwrap()))
    }

    fn expr(sql: &str) -> ast::Expr {
        crate::parse::test_expr(sql)
    }

    /// Binds a subquery's WHERE clause against a scope of table `u (tid, y)`.
    struct WherePlanner;

    impl SubqueryPlanner for WherePlanner {
        fn plan_subquery(&self, q: &ast::Query, outer: &Outer) -> Result<PlannedSubquery> {
            let mut scope = Scope::default();
            scope.push("u".into(), "d".into(), table("u", &["tid", "y"]));
            let env = BindEnv {
                planner: self,
                parent: Some(outer),
                correlated: RefCell::new(vec![]),
            };
            let ast::SetExpr::Select(s) = q.body.as_ref() else {
                panic!("a block")
            };
            if let Some(w) = &s.selection {
                Binder::in_env(&scope, "where clause", &env).bind(w)?;
            }
            Ok(PlannedSubquery {
                id: 7,
                columns: vec![ColumnMeta::computed("tid", FieldType::LongLong)],
                correlated: env.correlated.into_inner(),
            })
        }

        fn table_columns(&self, name: &ast::ObjectName) -> Option<Vec<String>> {
            (name.to_string() == "u").then(|| vec!["tid".into(), "y".into()])
        }
    }

    fn bind_where_of_t(sql: &str) -> Expr {
        let mut scope = Scope::default();
        scope.push("t".into(), "d".into(), table("t", &["id", "x"]));
        let env = BindEnv {
            planner: &WherePlanner,
            parent: None,
            correlated: RefCell::new(vec![]),
        };
        let e = expr(sql);
        let (bound, _, _) = Binder::in_env(&scope, "where clause", &env)
            .bind(&e)
            .expect("binds");
        bound
    }

    #[test]
    fn an_equality_correlated_exists_binds_as_an_uncorrelated_in_is_true() {
        let bound = bind_where_of_t("EXISTS (SELECT 1 FROM u WHERE u.tid = t.id AND y > 1)");
        let Expr::IsTruth(inner, true, false) = &bound else {
            panic!("not IS TRUE: {bound:?}")
        };
        let Expr::Subquery(s) = inner.as_ref() else {
            panic!("{inner:?}")
        };
        assert!(s.correlated.is_empty(), "the subquery reads no outer value");
        let SubqueryKind::In { lhs, negated, .. } = &s.kind else {
            panic!("{:?}", s.kind)
        };
        assert!(!negated);
        assert!(matches!(lhs.as_slice(), [Expr::Column(0)]), "{lhs:?}");
        // NOT EXISTS is IS NOT TRUE of the same IN, never NULL.
        let bound = bind_where_of_t("NOT EXISTS (SELECT 1 FROM u WHERE t.x = tid)");
        assert!(
            matches!(&bound, Expr::IsTruth(_, true, true))
                || matches!(&bound, Expr::Not(x) if matches!(x.as_ref(), Expr::IsTruth(_, true, false))),
            "{bound:?}"
        );
    }

    #[test]
    fn an_exists_correlated_otherwise_stays_a_correlated_exists() {
        let bound = bind_where_of_t("EXISTS (SELECT 1 FROM u WHERE u.tid > t.id)");
        let Expr::Subquery(s) = &bound else {
            panic!("{bound:?}")
        };
        assert!(matches!(s.kind, SubqueryKind::Exists { negated: false }));
        assert_eq!(s.correlated.len(), 1);
    }

    #[test]
    fn an_outer_column_becomes_a_correlated_value_of_the_subquery() {
        let mut scope = Scope::default();
        scope.push("t".into(), "d".into(), table("t", &["id", "x"]));
        let env = BindEnv {
            planner: &WherePlanner,
            parent: None,
            correlated: RefCell::new(vec![]),
        };
        let e = expr("x IN (SELECT tid FROM u WHERE u.y = t.id AND u.tid <> x AND y > t.id)");
        let (bound, _, _) = Binder::in_env(&scope, "where clause", &env)
            .bind(&e)
            .unwrap();
        let Expr::Subquery(s) = bound else {
            panic!("{bound:?}")
        };
        assert_eq!(s.id, 7);
        // t.id and x, each once, in the outer query's layout (t.id is position 0).
        assert!(matches!(
            s.correlated.as_slice(),
            [Expr::Column(0), Expr::Column(1)]
        ));
        let SubqueryKind::In { lhs, hashable, .. } = &s.kind else {
            panic!("{:?}", s.kind)
        };
        assert!(matches!(lhs.as_slice(), [Expr::Column(1)]));
        assert!(hashable);
        // The outer query itself reads no enclosing query.
        assert!(env.correlated.borrow().is_empty());
    }

    #[test]
    fn an_aggregate_of_outer_columns_in_a_subquerys_where_is_not_supported_not_misplaced() {
        let mut scope = Scope::default();
        scope.push("t".into(), "d".into(), table("t", &["id", "x"]));
        let env = BindEnv {
            planner: &WherePlanner,
            parent: None,
            correlated: RefCell::new(vec![]),
        };
        let code = |sql: &str| {
            Binder::in_env(&scope, "where clause", &env)
                .bind(&expr(sql))
                .unwrap_err()
                .code()
        };
        // MAX(t.x) belongs to the enclosing query (MySQL aggregates it there): 1235.
        assert_eq!(code("EXISTS (SELECT 1 FROM u WHERE u.y = MAX(t.x))"), 1235);
        // MAX(u.y) is the subquery's own, and its WHERE takes no aggregate: 1111.
        assert_eq!(code("EXISTS (SELECT 1 FROM u WHERE u.y = MAX(u.y))"), 1111);
    }

    #[test]
    fn a_name_in_neither_scope_is_unknown_and_no_planner_means_1235() {
        let mut scope = Scope::default();
        scope.push("t".into(), "d".into(), table("t", &["id"]));
        let env = BindEnv {
            planner: &WherePlanner,
            parent: None,
            correlated: RefCell::new(vec![]),
        };
        let e = expr("EXISTS (SELECT 1 FROM u WHERE u.y = nowhere)");
        let err = Binder::in_env(&scope, "where clause", &env)
            .bind(&e)
            .unwrap_err();
        assert_eq!(err.code(), 1054);
        let err = Binder::new(&scope, "field list").bind(&e).unwrap_err();
        assert_eq!(err.code(), 1235);
    }

    #[test]
    fn aggregates_are_found_on_the_tree_not_in_text() {
        assert!(!contains_aggregate(&expr("'count('")));
        assert!(!contains_aggregate(&expr("CONCAT('max(', x)")));
        assert!(contains_aggregate(&expr("1 + COUNT(*)")));
        assert!(contains_aggregate(&expr("CASE WHEN x THEN max(y) END")));
        // A windowed call is not a grouping aggregate; an aggregate inside one is.
        assert!(!contains_aggregate(&expr("SUM(x) OVER ()")));
        assert!(contains_aggregate(&expr("SUM(SUM(x)) OVER ()")));
        // A subquery's aggregates are its own.
        assert!(!contains_aggregate(&expr("(SELECT COUNT(*) FROM u)")));
        assert!(contains_aggregate(&expr("(SELECT 1) + MIN(x)")));
    }
}

#[cfg(test)]
mod aggregate_tests {
    //! Binding aggregate calls: the shapes MySQL's grammar takes, the specs collected,
    //! result types, GROUPING() against the GROUP BY list.
    use super::*;
    use crate::bind::derived::DerivedTable;
    use crate::catalog::rowsource::ReadOnlyTable;

    fn scope() -> Scope {
        let metas = vec![
            ColumnMeta::computed("a", FieldType::LongLong),
            ColumnMeta::computed("s", FieldType::VarString),
            ColumnMeta::computed("d", FieldType::Double),
            ColumnMeta {
                charset: 63,
                ..ColumnMeta::computed("b", FieldType::VarString)
            },
        ];
        let t: Arc<dyn Table> =
            Arc::new(ReadOnlyTable(DerivedTable::new("t", &metas, &[]).unwrap()));
        let mut scope = Scope::default();
        scope.push("t".into(), "d".into(), t);
        scope
    }

    fn expr(sql: &str) -> ast::Expr {
        crate::parse::test_expr(sql)
    }

    /// Binds `sql` as a grouped select item; returns the result type and the specs.
    fn bind_grouped(sql: &str, agg: &mut Aggregation) -> Result<SType> {
        let scope = scope();
        let mut b = Binder {
            scope: &scope,
            context: "field list",
            agg: Some(agg),
            aliases: &[],
            env: None,
            windows: None,
        };
        Ok(b.bind(&expr(sql))?.1)
    }

    fn code(sql: &str) -> u16 {
        bind_grouped(sql, &mut Aggregation::default())
            .unwrap_err()
            .code()
    }

    #[test]
    fn the_new_aggregates_have_mysql_result_types() {
        for (sql, ty) in [
            // Four more decimals than the argument shows; a string's and a plain
            // DOUBLE's the shortest form.
            ("STD(a)", SType::Double(4)),
            ("STDDEV_SAMP(a)", SType::Double(4)),
            ("VAR_POP(s)", SType::DOUBLE),
            ("VARIANCE(d)", SType::DOUBLE),
            ("BIT_AND(a)", SType::UInt),
            ("BIT_XOR(d)", SType::UInt),
            ("GROUP_CONCAT(a)", SType::Text),
            ("JSON_ARRAYAGG(a)", SType::Json),
            ("COUNT(DISTINCT a, s)", SType::Int),
            ("COUNT(*)", SType::Int),
            ("SUM(DISTINCT a)", SType::Decimal(0)),
        ] {
            assert_eq!(
                bind_grouped(sql, &mut Aggregation::default()).unwrap(),
                ty,
                "{sql}"
            );
        }
    }

    #[test]
    fn group_concat_collects_arguments_order_and_separator() {
        let mut agg = Aggregation::default();
        bind_grouped(
            "GROUP_CONCAT(DISTINCT a, s ORDER BY s DESC, a SEPARATOR '; ')",
            &mut agg,
        )
        .unwrap();
        let spec = &agg.aggs[0];
        assert_eq!(spec.func, AggFunc::GroupConcat);
        assert!(spec.distinct);
        assert!(matches!(spec.arg, Some(Expr::Column(0))));
        assert!(matches!(
            spec.more_args.as_slice(),
            [(Expr::Column(1), SType::Text, _)]
        ));
        assert!(matches!(
            spec.order.as_slice(),
            [(Expr::Column(1), true, _), (Expr::Column(0), false, _)]
        ));
        assert_eq!(spec.separator, b"; ");
        let mut agg = Aggregation::default();
        bind_grouped("GROUP_CONCAT(s)", &mut agg).unwrap();
        assert_eq!(agg.aggs[0].separator, b",");
    }

    #[test]
    fn shapes_the_grammar_refuses_are_syntax_errors() {
        for sql in [
            "SUM(a, d)",
            "COUNT(a, s)",
            "STD(DISTINCT a)",
            "BIT_OR(DISTINCT a)",
            "JSON_ARRAYAGG(DISTINCT a)",
            "JSON_OBJECTAGG(a)",
            "JSON_ARRAYAGG(a, s)",
            "SUM(a ORDER BY a)",
            "COUNT(DISTINCT *)",
            "SUM(*)",
            "ABS(a ORDER BY a)",
        ] {
            assert_eq!(code(sql), 1064, "{sql}");
        }
        // Nested aggregates, and an aggregate where none is allowed.
        assert_eq!(code("SUM(COUNT(a))"), 1111);
        let scope = scope();
        let err = Binder::new(&scope, "where clause")
            .bind(&expr("STD(a)"))
            .unwrap_err();
        assert_eq!(err.code(), 1111);
    }

    #[test]
    fn any_value_is_its_argument() {
        let mut agg = Aggregation::default();
        let ty = bind_grouped("ANY_VALUE(s)", &mut agg).unwrap();
        assert_eq!(ty, SType::Text);
        assert_eq!(agg.aggs[0].func, AggFunc::AnyValue);
        assert_eq!(code("ANY_VALUE(a, s)"), 1582);
        let scope = scope();
        let (e, _, _) = Binder::new(&scope, "field list")
            .bind(&expr("ANY_VALUE(d)"))
            .unwrap();
        assert!(matches!(e, Expr::Column(2)));
    }

    #[test]
    fn grouping_names_group_by_expressions_under_rollup_only() {
        let group = |agg: &mut Aggregation, text: &str, pos: usize| {
            agg.groups.push((
                text.into(),
                Expr::Column(pos),
                SType::Int,
                Collation::GeneralCi,
            ));
        };
        let mut agg = Aggregation::default();
        group(&mut agg, "a", 0);
        group(&mut agg, "s", 1);
        assert_eq!(
            bind_grouped("GROUPING(a)", &mut agg).unwrap_err().code(),
            1111
        );
        agg.rollup = true;
        assert_eq!(
            bind_grouped("GROUPING(s, t.a)", &mut agg).unwrap(),
            SType::Int
        );
        let spec = &agg.aggs[0];
        assert_eq!(spec.func, AggFunc::Grouping);
        assert!(matches!(
            spec.more_args.as_slice(),
            [(Expr::Column(1), _, _), (Expr::Column(0), _, _)]
        ));
        let err = bind_grouped("GROUPING(a, d)", &mut agg).unwrap_err();
        assert_eq!(err.code(), 3602);
        assert_eq!(
            err.to_string(),
            "Argument #2 of GROUPING function is not in GROUP BY"
        );
    }

    #[test]
    fn json_aggregates_of_values_without_a_json_form_yet_are_refused() {
        assert_eq!(code("JSON_ARRAYAGG(b)"), 1235);
        assert_eq!(code("JSON_OBJECTAGG(s, b)"), 1235);
        assert_eq!(
            bind_grouped("JSON_OBJECTAGG(s, d)", &mut Aggregation::default()).unwrap(),
            SType::Json
        );
        assert_eq!(code("BIT_AND(b)"), 1235);
        assert_eq!(
            bind_grouped("GROUP_CONCAT(s, b)", &mut Aggregation::default()).unwrap(),
            SType::Binary
        );
    }
}
