//! CREATE TABLE … SELECT (`[IF NOT EXISTS]`, column definitions and keys before the
//! query, `IGNORE`/`REPLACE`), atomic as MySQL 8's:
//!
//! 1. the query is bound, and shared metadata locks are taken on what it reads (the new
//!    name's exclusive lock was taken by `ddl_locks`);
//! 2. the new table's columns are the declared ones, then the query's columns the
//!    declarations do not name, each typed by [`selected_column`] (MySQL's rules: a
//!    column read straight from a table keeps its type, NULL-ness, default, collation;
//!    a computed one gets its result type);
//! 3. the table's files are made under a hidden stem in the DDL log
//!    (`Catalog::begin_create`), the rows are inserted by the INSERT … SELECT code in a
//!    transaction of the statement's own, which commits, and the table is flushed;
//! 4. one write of the catalog makes the table visible (`Catalog::commit_create`).
//!
//! A failure or a crash at any point before that write leaves no table (the next start
//! removes the files the log names). For the binary log the rows are handed to the
//! session's transaction together with the derived CREATE TABLE text
//! (`Txn::set_logged_ddl`), which the session writes as MySQL 8 does: the CREATE TABLE,
//! then the rows, in one transaction.

use crate::context::{ExecCtx, Outcome};
use crate::planner::query::Planner;
use crate::statements::dml::{execute_insert, implicit_default, InsertPlan, Target};
use sqlparser::ast;
use std::sync::Arc;
use strata_engine::Txn;
use strata_types::output::flags;
use strata_types::schema::ColumnDefault;
use strata_types::{Collation, ColumnDef, ColumnMeta, DataType, Error, Result};

/// Longest string literal whose column type is derived (MySQL makes longer results
/// TEXT, `CONVERT_IF_BIGGER_TO_BLOB`; not derived here).
const MAX_VARCHAR_CHARS: u32 = 512;

pub fn create_table_select(
    ct: &ast::CreateTable,
    query: &ast::Query,
    cx: &mut ExecCtx,
) -> Result<Outcome> {
    let (db, name) = crate::context::resolve_table(cx, &ct.name)?;
    if !cx.catalog.database_exists(&db) {
        return Err(Error::UnknownDatabase(db));
    }
    // A temporary table's name was checked against the session's (`temporary::create`);
    // a base table of the name does not stop it.
    if !ct.temporary
        && (cx.catalog.table(&db, &name).is_ok() || cx.catalog.view(&db, &name).is_some())
    {
        // With IF NOT EXISTS MySQL 8 inserts nothing then, and logs nothing.
        return super::ddl::name_in_use(&name, ct.if_not_exists, cx);
    }
    let sub = Planner::new(cx).plan_statement(query)?;
    lock_reads(cx, &sub)?;
    let metas = sub.columns();
    let items = select_items(query, metas);
    let source = single_table(cx, query);
    let declared = |name: &str| {
        ct.columns
            .iter()
            .any(|c| c.name.value.eq_ignore_ascii_case(name))
    };
    let selected = metas
        .iter()
        .zip(items)
        .map(
            |(m, item)| match selected_column(cx, m, item, source.as_ref()) {
                // A declared column gives the type itself; the derived one is not used.
                Err(Error::NotSupported(_)) if declared(&m.name) => Ok(ColumnDef::plain(
                    m.name.clone(),
                    DataType::Int { unsigned: false },
                    true,
                    Collation::Binary,
                )),
                other => other,
            },
        )
        .collect::<Result<Vec<_>>>()?;
    let names: Vec<String> = selected.iter().map(|c| c.name.clone()).collect();
    let def = crate::statements::ddl::table_def(ct, cx, selected)?;
    let columns = names
        .iter()
        .map(|n| {
            def.column_index(n)
                .ok_or_else(|| Error::Internal(format!("CREATE … SELECT column {n}")))
        })
        .collect::<Result<Vec<_>>>()?;
    let (ignore, replace) = duplicates_clause(ct);
    let files = if ct.temporary {
        crate::statements::temporary::check_def(&def)?;
        let engine = cx.catalog.engine(&def.engine)?;
        Files::Temp(cx.temp.make(engine, def)?)
    } else {
        Files::Catalog(cx.catalog.begin_create(&def)?)
    };
    let handle = files.handle().clone();
    let def = handle.def().clone();
    let own = Txn::new(cx.txn.isolation(), cx.txn.lock_wait_timeout());
    let own = if cx.txn.logs_rows() {
        own.with_row_log()
    } else {
        own
    };
    own.set_interrupt(cx.txn.interrupt());
    let filled = fill(cx, &own, &db, &handle, &def, columns, sub, ignore, replace);
    let outcome = match filled {
        Ok(o) => o,
        Err(e) => {
            let _ = own.rollback();
            drop(handle);
            files.abort(cx);
            return Err(e);
        }
    };
    let rows = own.take_logged_rows();
    let heap_rows = own.take_nontransactional_rows();
    // Durable before the commit point: a crash after it must find every row. (A
    // temporary table does not outlive a crash.)
    let durable = own.commit().and_then(|()| match &files {
        Files::Catalog(_) => handle.flush(),
        Files::Temp(_) => Ok(()),
    });
    if let Err(e) = durable {
        drop(handle);
        files.abort(cx);
        return Err(e);
    }
    drop(handle);
    let temporary = matches!(files, Files::Temp(_));
    match files {
        Files::Catalog(r) => cx.catalog.commit_create(r)?,
        Files::Temp(t) => {
            cx.temp.add(t, None)?;
            cx.catalog.invalidate_plans();
        }
    }
    // A temporary table is not logged at all (MySQL 8, binlog_format=ROW).
    if cx.txn.logs_rows() && !temporary {
        // A transactional table's rows follow it in one logged transaction; a heap
        // table's are logged after it (the session's binlog code).
        cx.txn
            .set_logged_ddl(crate::statements::show::show_create_table(&def, 1));
        for (t, change) in rows {
            cx.txn.log_row(&t, true, change);
        }
        for (t, change) in heap_rows {
            cx.txn.log_row(&t, false, change);
        }
    }
    Ok(outcome)
}

/// Where the new table's files are made: the catalog's DDL log (a base table), or the
/// session's temporary tables.
enum Files {
    Catalog(crate::catalog::Rebuild),
    Temp(crate::catalog::temporary::NewTemp),
}

impl Files {
    fn handle(&self) -> &Arc<dyn strata_engine::Table> {
        match self {
            Files::Catalog(r) => &r.handle,
            Files::Temp(t) => &t.handle,
        }
    }

    /// The statement failed: the files go.
    fn abort(self, cx: &ExecCtx) {
        match self {
            Files::Catalog(r) => cx.catalog.abort_rebuild(r),
            Files::Temp(t) => {
                let _ = cx.temp.discard(t);
            }
        }
    }
}

/// Inserts the query's rows into the new table, in transaction `own`, one statement.
#[allow(clippy::too_many_arguments)]
fn fill(
    cx: &ExecCtx,
    own: &Txn,
    db: &str,
    handle: &Arc<dyn strata_engine::Table>,
    def: &Arc<strata_types::TableDef>,
    columns: Vec<usize>,
    sub: crate::plan::query::QueryStatement,
    ignore: bool,
    replace: bool,
) -> Result<Outcome> {
    let mut icx = ExecCtx {
        catalog: cx.catalog,
        current_db: cx.current_db.clone(),
        env: cx.env,
        locked_tables: cx.locked_tables,
        strict: cx.strict,
        sql_mode: cx.sql_mode,
        default_engine: cx.default_engine,
        sort_buffer_size: cx.sort_buffer_size,
        tmp_table_size: cx.tmp_table_size,
        tmpdir: cx.tmpdir,
        txn: own,
        mdl: cx.mdl,
        invoker: cx.invoker,
        temp: cx.temp,
    };
    let rules = crate::constraints::RowRules::for_target(&icx, db, def, handle)?;
    let plan = InsertPlan {
        target: Target {
            db: db.to_string(),
            table: handle.clone(),
            def: def.clone(),
            rules,
            exprs: crate::statements::column_expr::ColumnExprs::bind(def, db, handle)?,
            triggers: None,
            through: None,
        },
        columns,
        rows: Vec::new(),
        select: Some(Box::new(sub)),
        ignore,
        replace,
        on_duplicate: None,
        subqueries: Default::default(),
    };
    own.begin_statement();
    let done = execute_insert(&plan, &mut icx, &[]);
    own.end_statement(done.is_ok())?;
    done
}

/// Shared metadata locks on the tables and views the query reads, to the statement's
/// end, as the SELECT of INSERT … SELECT takes them.
fn lock_reads(cx: &ExecCtx, sub: &crate::plan::query::QueryStatement) -> Result<()> {
    use crate::mdl::{normalize, MdlDuration, MdlKey, MdlMode, MdlRequest};
    let mut reqs = Vec::new();
    let names = sub
        .tables
        .iter()
        .map(|(db, name, _)| (db, name))
        .chain(sub.views.iter().map(|(db, name)| (db, name)));
    for (db, name) in names {
        if !crate::catalog::is_system_schema(db) {
            reqs.push(MdlRequest::new(
                MdlKey::table(db, name),
                MdlMode::SharedRead,
            ));
        }
    }
    if reqs.is_empty() {
        return Ok(());
    }
    normalize(&mut reqs);
    cx.mdl.acquire(&reqs, MdlDuration::Transaction)
}

/// `CREATE TABLE t IGNORE SELECT …` / `REPLACE SELECT …`: what rows that meet an
/// existing key do (the parser keeps the word in the table options' place).
fn duplicates_clause(ct: &ast::CreateTable) -> (bool, bool) {
    let opts: &[ast::SqlOption] = match &ct.table_options {
        ast::CreateTableOptions::None => &[],
        ast::CreateTableOptions::With(o)
        | ast::CreateTableOptions::Options(o)
        | ast::CreateTableOptions::Plain(o)
        | ast::CreateTableOptions::TableProperties(o) => o,
    };
    for o in opts {
        if let ast::SqlOption::KeyValue {
            key,
            value: ast::Expr::Identifier(v),
        } = o
        {
            if key.value.eq_ignore_ascii_case("INSERT_METHOD")
                && v.quote_style == Some(crate::parse::token_rewrite::INTERNAL_QUOTE)
            {
                return (v.value == "IGNORE", v.value == "REPLACE");
            }
        }
    }
    (false, false)
}

/// The column CREATE TABLE … SELECT makes of result column `m` (`item`: its select-list
/// expression, when known), as MySQL 8 does: a column read straight from a base table
/// keeps that column's type, NULL-ness (or becomes NULL-able through an outer join),
/// default, ON UPDATE, collation and members, but not AUTO_INCREMENT (such a column
/// gets the implicit default instead); a computed one gets its expression's type
/// ([`computed_type`]), and when NOT NULL and numeric or string the implicit default
/// (`DEFAULT '0'`, `DEFAULT ''`). A computed column whose type Strata cannot derive
/// exactly is 1235 (the column definitions can declare it), never a guessed type.
pub(crate) fn selected_column(
    cx: &ExecCtx,
    m: &ColumnMeta,
    item: Option<&ast::Expr>,
    source: Option<&Source>,
) -> Result<ColumnDef> {
    let nullable = m.flags & flags::NOT_NULL == 0;
    let base = (!m.org_table.is_empty() && !m.schema.is_empty() && !m.org_name.is_empty())
        .then(|| {
            // A temporary table of the session hides the base table of its name.
            cx.temp_table(&m.schema, &m.org_table)
                .or_else(|| cx.catalog.table(&m.schema, &m.org_table).ok())
        })
        .flatten()
        .and_then(|t| {
            let def = t.def();
            def.column_index(&m.org_name)
                .map(|i| def.columns[i].clone())
        });
    if let Some(mut c) = base {
        c.name = m.name.clone();
        c.nullable |= nullable;
        if c.auto_increment {
            c.auto_increment = false;
            if !c.nullable && c.default.is_none() {
                c.default = Some(ColumnDefault::Value(implicit_default(&c)));
            }
        }
        return Ok(c);
    }
    if let Some(c) = item.and_then(|e| over_columns(e, source?)) {
        let mut c = c;
        c.name = m.name.clone();
        return finish_computed(c);
    }
    let Some((data_type, nullable)) = item.and_then(computed_type) else {
        return Err(Error::NotSupported(format!(
            "CREATE TABLE … SELECT of the computed column `{}` (declare its type in the \
             column definitions)",
            m.name
        )));
    };
    let collation = if data_type.is_text() {
        Collation::GeneralCi
    } else {
        Collation::Binary
    };
    finish_computed(ColumnDef::plain(
        m.name.clone(),
        data_type,
        nullable,
        collation,
    ))
}

/// A computed column's implicit default: when NOT NULL and numeric or string, MySQL 8's
/// (`DEFAULT '0'`, `DEFAULT ''`).
fn finish_computed(mut c: ColumnDef) -> Result<ColumnDef> {
    let data_type = c.data_type;
    let nullable = c.nullable;
    let plain = data_type.is_integer()
        || matches!(
            data_type,
            DataType::Decimal { .. } | DataType::Double { .. } | DataType::VarChar(_)
        );
    if !nullable && plain {
        // In the column's own form (`0.0` for a DECIMAL(2,1)).
        let zero = crate::expr::convert::coerce(implicit_default(&c), &c, 1, false)?;
        c.default = Some(ColumnDefault::Value(zero));
    }
    Ok(c)
}

/// The one table a query reads (`SELECT … FROM t [AS x]`, no join), whose columns the
/// select list's expressions are typed from.
pub(crate) struct Source {
    /// The names a column may be qualified with: the alias, else the table's name.
    qualifier: String,
    def: Arc<strata_types::TableDef>,
}

fn single_table(cx: &ExecCtx, query: &ast::Query) -> Option<Source> {
    let ast::SetExpr::Select(sel) = query.body.as_ref() else {
        return None;
    };
    let [from] = sel.from.as_slice() else {
        return None;
    };
    if !from.joins.is_empty() {
        return None;
    }
    let ast::TableFactor::Table { name, alias, .. } = &from.relation else {
        return None;
    };
    let (db, table) = crate::context::resolve_table(cx, name).ok()?;
    let handle = cx
        .temp_table(&db, &table)
        .or_else(|| cx.catalog.table(&db, &table).ok())?;
    Some(Source {
        qualifier: alias
            .as_ref()
            .map_or(table.clone(), |a| a.name.value.clone()),
        def: handle.def().clone(),
    })
}

/// The column of the source table an expression names (`a`, `t.a`).
fn source_column(e: &ast::Expr, src: &Source) -> Option<ColumnDef> {
    let name = match e {
        ast::Expr::Nested(inner) => return source_column(inner, src),
        ast::Expr::Identifier(i) => &i.value,
        ast::Expr::CompoundIdentifier(p) => match p.as_slice() {
            [q, c] if q.value.eq_ignore_ascii_case(&src.qualifier) => &c.value,
            _ => return None,
        },
        _ => return None,
    };
    let i = src.def.column_index(name)?;
    Some(src.def.columns[i].clone())
}

/// The column MySQL 8 creates for an aggregate or string function over columns of the
/// source table, for the forms whose type is exactly known: MIN/MAX(col) (the column's
/// type), SUM/AVG(col) of a number (DECIMAL widened by 22 digits / 4 digits and 4
/// scale, DOUBLE for FLOAT/DOUBLE), CONCAT of string columns and literals
/// (VARCHAR of the summed lengths), UPPER/LOWER(col). None for anything else (1235).
fn over_columns(e: &ast::Expr, src: &Source) -> Option<ColumnDef> {
    let ast::Expr::Function(f) = e else {
        if let ast::Expr::Nested(inner) = e {
            return over_columns(inner, src);
        }
        return None;
    };
    if f.over.is_some() || f.filter.is_some() {
        return None;
    }
    let name = crate::parse::object_name_parts(&f.name)
        .join(".")
        .to_ascii_lowercase();
    let ast::FunctionArguments::List(l) = &f.args else {
        return None;
    };
    if l.duplicate_treatment.is_some() || !l.clauses.is_empty() {
        return None;
    }
    let args: Vec<&ast::Expr> = l
        .args
        .iter()
        .map(|a| match a {
            ast::FunctionArg::Unnamed(ast::FunctionArgExpr::Expr(e)) => Some(e),
            _ => None,
        })
        .collect::<Option<_>>()?;
    let plain = |mut c: ColumnDef, nullable: bool| {
        c.nullable = nullable;
        c.default = None;
        c.auto_increment = false;
        c.on_update_now = false;
        c.generated = None;
        c.comment = String::new();
        c
    };
    match (name.as_str(), args.as_slice()) {
        ("min" | "max", [a]) => {
            let c = source_column(a, src)?;
            // MIN/MAX of an ENUM/SET or BIT column: not derived.
            if matches!(
                c.data_type,
                DataType::Enum(_) | DataType::Set(_) | DataType::Bit(_)
            ) {
                return None;
            }
            Some(plain(c, true))
        }
        ("sum" | "avg", [a]) => {
            let c = source_column(a, src)?;
            if c.real_unsigned {
                return None;
            }
            let (prec, scale) = match c.data_type {
                DataType::Float { .. } | DataType::Double { .. } => {
                    let mut d = plain(c, true);
                    d.data_type = DataType::Double { fixed: None };
                    return Some(d);
                }
                DataType::Decimal { precision, scale } => (precision as u32, scale as u32),
                t if t.is_integer() => {
                    // MySQL's decimal_precision() of an integer: its display
                    // length without the sign.
                    (
                        t.display_length(Collation::Binary) - !t.is_unsigned() as u32,
                        0,
                    )
                }
                _ => return None,
            };
            let (p, s) = if name == "sum" {
                ((prec + 22).min(65), scale)
            } else {
                let inc = u32::from(strata_types::decimal::DIV_INCREMENT);
                ((prec + inc).min(65), (scale + inc).min(30))
            };
            if p > u32::from(strata_types::decimal::MAX_PRECISION) {
                return None;
            }
            let mut d = plain(c, true);
            d.data_type = DataType::Decimal {
                precision: p as u8,
                scale: s as u8,
            };
            d.collation = Collation::Binary;
            d.members = Vec::new();
            Some(d)
        }
        ("upper" | "lower" | "ucase" | "lcase", [a]) => {
            let c = source_column(a, src)?;
            if !matches!(c.data_type, DataType::VarChar(_) | DataType::Char(_))
                || c.collation == Collation::Binary
            {
                return None;
            }
            let n = match c.data_type {
                DataType::VarChar(n) | DataType::Char(n) => n,
                _ => return None,
            };
            let nullable = c.nullable;
            let mut d = plain(c, nullable);
            d.data_type = DataType::VarChar(n);
            Some(d)
        }
        ("concat", args) if !args.is_empty() => {
            let mut chars = 0u32;
            let mut nullable = false;
            let mut coll = None;
            for a in args {
                match a {
                    ast::Expr::Value(v) => match &v.value {
                        ast::Value::SingleQuotedString(t) => {
                            chars += t.chars().count() as u32;
                        }
                        _ => return None,
                    },
                    other => {
                        let c = source_column(other, src)?;
                        let n = match c.data_type {
                            DataType::VarChar(n) | DataType::Char(n) => n,
                            _ => return None,
                        };
                        // One collation for every column, and a character set.
                        if c.collation == Collation::Binary
                            || coll.is_some_and(|x| x != c.collation)
                        {
                            return None;
                        }
                        coll = Some(c.collation);
                        chars += n;
                        nullable |= c.nullable;
                    }
                }
            }
            let coll = coll?;
            // Whether MySQL 8 makes CONCAT of NOT NULL columns NOT NULL (MariaDB does
            // not): not derived.
            if !nullable {
                return None;
            }
            // '' and past 512 characters (MySQL makes TEXT): not derived.
            if chars == 0 || chars > MAX_VARCHAR_CHARS {
                return None;
            }
            Some(ColumnDef::plain(
                String::new(),
                DataType::VarChar(chars),
                nullable,
                coll,
            ))
        }
        _ => None,
    }
}

/// The select-list expression of each result column, where the query is one SELECT
/// whose items can be matched to its columns: by position when it has no `*`, else by
/// alias.
fn select_items<'q>(query: &'q ast::Query, metas: &[ColumnMeta]) -> Vec<Option<&'q ast::Expr>> {
    let ast::SetExpr::Select(sel) = query.body.as_ref() else {
        return vec![None; metas.len()];
    };
    let wildcard = sel.projection.iter().any(|i| {
        matches!(
            i,
            ast::SelectItem::Wildcard(_) | ast::SelectItem::QualifiedWildcard(..)
        )
    });
    if !wildcard && sel.projection.len() == metas.len() {
        return sel
            .projection
            .iter()
            .map(|i| match i {
                ast::SelectItem::UnnamedExpr(e) => Some(e),
                ast::SelectItem::ExprWithAlias { expr, .. } => Some(expr),
                _ => None,
            })
            .collect();
    }
    metas
        .iter()
        .map(|m| {
            sel.projection.iter().find_map(|i| match i {
                ast::SelectItem::ExprWithAlias { expr, alias }
                    if alias.value.eq_ignore_ascii_case(&m.name) =>
                {
                    Some(expr)
                }
                _ => None,
            })
        })
        .collect()
}

/// The type and NULL-ness MySQL 8 gives a computed select-list expression, for the
/// forms whose type is exactly known: number and string literals, NULL, NOW() /
/// CURDATE() / CURTIME(), COUNT(…). None for anything else.
fn computed_type(e: &ast::Expr) -> Option<(DataType, bool)> {
    match e {
        ast::Expr::Nested(inner) => computed_type(inner),
        ast::Expr::Value(v) => literal_type(&v.value, false),
        ast::Expr::UnaryOp {
            op: ast::UnaryOperator::Minus,
            expr,
        } => match expr.as_ref() {
            ast::Expr::Value(v) if matches!(v.value, ast::Value::Number(..)) => {
                literal_type(&v.value, true)
            }
            _ => None,
        },
        ast::Expr::Function(f) => {
            let name = crate::parse::object_name_parts(&f.name)
                .join(".")
                .to_ascii_lowercase();
            let args: Vec<&ast::FunctionArg> = match &f.args {
                ast::FunctionArguments::None => Vec::new(),
                ast::FunctionArguments::List(l) => l.args.iter().collect(),
                ast::FunctionArguments::Subquery(_) => return None,
            };
            let fsp = || -> Option<u8> {
                match args.as_slice() {
                    [] => Some(0),
                    [ast::FunctionArg::Unnamed(ast::FunctionArgExpr::Expr(ast::Expr::Value(v)))] => {
                        match &v.value {
                            ast::Value::Number(n, _) => n.parse::<u8>().ok().filter(|p| *p <= 6),
                            _ => None,
                        }
                    }
                    _ => None,
                }
            };
            match name.as_str() {
                "now" | "current_timestamp" | "localtime" | "localtimestamp" => {
                    Some((DataType::DateTime { fsp: fsp()? }, false))
                }
                "curdate" | "current_date" if args.is_empty() => Some((DataType::Date, false)),
                "curtime" | "current_time" => Some((DataType::Time { fsp: fsp()? }, false)),
                "count" if f.over.is_none() => Some((DataType::BigInt { unsigned: false }, false)),
                _ => None,
            }
        }
        ast::Expr::Identifier(i)
            if i.quote_style.is_none()
                && matches!(
                    i.value.to_ascii_lowercase().as_str(),
                    "current_date" | "current_timestamp" | "current_time"
                ) =>
        {
            match i.value.to_ascii_lowercase().as_str() {
                "current_date" => Some((DataType::Date, false)),
                "current_time" => Some((DataType::Time { fsp: 0 }, false)),
                _ => Some((DataType::DateTime { fsp: 0 }, false)),
            }
        }
        _ => None,
    }
}

/// A literal's type: an integer INT (BIGINT past INT's range), a number with a point
/// DECIMAL(digits, scale), with an exponent DOUBLE, a string VARCHAR(characters), all
/// NOT NULL; NULL is a NULL-able BINARY(0).
fn literal_type(v: &ast::Value, negative: bool) -> Option<(DataType, bool)> {
    match v {
        ast::Value::Null if !negative => Some((DataType::Binary(0), true)),
        ast::Value::Number(n, _) => {
            if n.contains(['e', 'E']) {
                return Some((DataType::Double { fixed: None }, false));
            }
            if let Some((int, frac)) = n.split_once('.') {
                // A leading zero beyond `0.` counts differently in MySQL and MariaDB.
                if int.len() > 1 && int.starts_with('0') {
                    return None;
                }
                if !int.bytes().chain(frac.bytes()).all(|b| b.is_ascii_digit()) {
                    return None;
                }
                let int_digits = int.trim_start_matches('0').len().max(1);
                let precision = int_digits + frac.len();
                let max = usize::from(strata_types::decimal::MAX_PRECISION);
                if precision > max || frac.len() > 30 {
                    return None;
                }
                return Some((
                    DataType::Decimal {
                        precision: precision as u8,
                        scale: frac.len() as u8,
                    },
                    false,
                ));
            }
            let v: u128 = n.parse().ok()?;
            if v <= i32::MAX as u128 {
                Some((DataType::Int { unsigned: false }, false))
            } else if !negative && v <= i64::MAX as u128 {
                Some((DataType::BigInt { unsigned: false }, false))
            } else {
                // A negated BIGINT, and the unsigned and DECIMAL ranges: not derived.
                None
            }
        }
        ast::Value::SingleQuotedString(s) | ast::Value::DoubleQuotedString(s) if !negative => {
            let chars = s.chars().count() as u32;
            // '' (MariaDB: CHAR(0)) and long strings: not derived.
            if chars == 0 || chars > MAX_VARCHAR_CHARS {
                return None;
            }
            Some((DataType::VarChar(chars), false))
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ty(sql: &str) -> Option<(String, bool)> {
        computed_type(&crate::parse::test_expr(sql)).map(|(t, n)| (t.sql_name(), n))
    }

    #[test]
    fn literal_types_as_mysql_8() {
        let some = |t: &str, n| Some((t.to_string(), n));
        assert_eq!(ty("1"), some("int", false));
        assert_eq!(ty("-5"), some("int", false));
        assert_eq!(ty("2147483648"), some("bigint", false));
        assert_eq!(ty("1.5"), some("decimal(2,1)", false));
        assert_eq!(ty("0.5"), some("decimal(2,1)", false));
        assert_eq!(ty("-123.450"), some("decimal(6,3)", false));
        assert_eq!(ty("1e3"), some("double", false));
        assert_eq!(ty("'abc'"), some("varchar(3)", false));
        assert_eq!(ty("NULL"), some("binary(0)", true));
        assert_eq!(ty("NOW()"), some("datetime", false));
        assert_eq!(ty("NOW(3)"), some("datetime(3)", false));
        assert_eq!(ty("CURDATE()"), some("date", false));
        assert_eq!(ty("COUNT(*)"), some("bigint", false));
    }

    #[test]
    fn uncertain_types_are_not_guessed() {
        assert_eq!(ty("''"), None);
        assert_eq!(ty("00.50"), None);
        assert_eq!(ty("a + 1"), None);
        assert_eq!(ty("CONCAT('a', 'b')"), None);
        assert_eq!(ty("SUM(a)"), None);
        assert_eq!(ty("99999999999999999999"), None);
    }
}
