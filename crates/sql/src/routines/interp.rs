//! The interpreter of stored programs: walks a parsed body (`routines::ast`) with a
//! frame of variable values, running each expression and plain statement through a
//! [`Runner`] (the statement layer, which binds it once and keeps the plan in the
//! [`Sql`]). Control flow is the tree's: a statement returns a [`Flow`] that says
//! whether to go on, leave or iterate a labelled statement, or return.
//!
//! Conditions: an error a statement raises is matched where it is raised against the
//! handlers of the enclosing blocks, innermost first (within a block the most specific:
//! an error number, then a SQLSTATE, then a class); a CONTINUE handler resumes after
//! the statement, an EXIT handler leaves the block that declared it. While a handler
//! runs, only handlers of blocks outside its own can catch its errors, as in MySQL.
//! Only errors are matched: warnings do not start SQLWARNING handlers.

use crate::context::{ExecCtx, Invoker};
use crate::expr::WarnLevel;
use crate::routines::ast::*;
use std::collections::VecDeque;
use strata_types::{ColumnMeta, EndInfo, Error, OkInfo, QueryOutput, Result, TableDef, Value};

/// How the interpreter runs SQL: implemented by the statement layer.
pub trait Runner: Sync {
    /// Runs `sql` (an expression when `expr`, evaluated as `SELECT expr`) with `params`
    /// in `cx`; a query's rows go to `out`.
    fn run(
        &self,
        sql: &Sql,
        expr: bool,
        params: &[(Value, Option<strata_types::ColumnDef>)],
        cx: &ExecCtx,
        out: &mut dyn QueryOutput,
    ) -> Result<()>;

    /// `CALL name(args)` from inside a program; returns the values of the procedure's
    /// parameters when it ends (for OUT and INOUT arguments).
    fn call(
        &self,
        name: &(Option<String>, String),
        args: Vec<Value>,
        cx: &ExecCtx,
        out: &mut dyn QueryOutput,
    ) -> Result<Vec<Option<Value>>>;
}

/// What happens after a statement.
#[derive(Debug)]
pub enum Flow {
    Next,
    Leave(usize),
    Iterate(usize),
    Return(Value),
}

/// The row a trigger sees.
pub struct RowCtx<'r> {
    pub def: &'r TableDef,
    pub new: Option<&'r mut Vec<Value>>,
    pub old: Option<&'r [Value]>,
    pub after: bool,
    pub event: &'static str,
}

/// One run of a program.
pub struct Invocation<'p, 'r> {
    pub program: &'p Program,
    pub vars: Vec<Value>,
    pub row: Option<RowCtx<'r>>,
    cursors: Vec<Option<VecDeque<Vec<Value>>>>,
    /// Handlers of the blocks being run, innermost last: (block id, handlers).
    handlers: Vec<(usize, &'p [Handler])>,
    /// The conditions being handled (RESIGNAL re-raises the last).
    handling: Vec<Error>,
    runner: &'p dyn Runner,
    db: &'p str,
    invoker: &'p Invoker,
    /// Where a procedure's result sets go; None in triggers and functions (1415).
    out: Option<&'p mut dyn QueryOutput>,
}

macro_rules! handled {
    ($self:ident, $cx:ident, $e:expr) => {
        match $e {
            Ok(v) => v,
            Err(e) => return $self.raise(e, $cx),
        }
    };
}

impl<'p, 'r> Invocation<'p, 'r> {
    pub fn new(
        program: &'p Program,
        runner: &'p dyn Runner,
        db: &'p str,
        invoker: &'p Invoker,
        out: Option<&'p mut dyn QueryOutput>,
    ) -> Invocation<'p, 'r> {
        Invocation {
            program,
            vars: vec![Value::Null; program.vars.len()],
            row: None,
            cursors: vec![None; program.cursors.len()],
            handlers: Vec::new(),
            handling: Vec::new(),
            runner,
            db,
            invoker,
            out,
        }
    }

    /// Runs the whole body in the program's database; the value of RETURN, if one
    /// ran.
    pub fn run(&mut self, cx: &ExecCtx) -> Result<Option<Value>> {
        let body = &self.program.body;
        let cx = cx.nested(self.db, self.invoker);
        match self.exec(body, &cx)? {
            Flow::Return(v) => Ok(Some(v)),
            _ => Ok(None),
        }
    }

    /// Runs the whole body in the caller's database (a client's CALL statement).
    pub fn run_keeping_db(&mut self, cx: &ExecCtx) -> Result<()> {
        let body = &self.program.body;
        let mut cx = cx.reborrow();
        cx.invoker = Some(self.invoker);
        self.exec(body, &cx)?;
        Ok(())
    }

    /// Gives variable (or parameter) `slot` a value, converted to its type.
    pub fn set_var(&mut self, slot: usize, v: Value, cx: &ExecCtx) -> Result<()> {
        self.assign(&Target::Var(slot), v, cx)
    }

    fn exec_list(&mut self, list: &'p [Stmt], cx: &ExecCtx) -> Result<Flow> {
        for s in list {
            match self.exec(s, cx)? {
                Flow::Next => {}
                other => return Ok(other),
            }
        }
        Ok(Flow::Next)
    }

    fn exec(&mut self, s: &'p Stmt, cx: &ExecCtx) -> Result<Flow> {
        cx.txn.check_interrupt()?;
        strata_types::stack::check()?;
        match s {
            Stmt::Block {
                id,
                handlers,
                body,
                cursors,
            } => {
                self.handlers.push((*id, handlers));
                let r = self.exec_list(body, cx);
                self.handlers.pop();
                for &c in cursors {
                    self.cursors[c] = None;
                }
                match r? {
                    Flow::Leave(x) if x == *id => Ok(Flow::Next),
                    other => Ok(other),
                }
            }
            Stmt::Declare { slots, default } => {
                let v = match default {
                    Some(d) => handled!(self, cx, self.eval(d, cx)),
                    None => Value::Null,
                };
                for &slot in slots {
                    handled!(self, cx, self.assign(&Target::Var(slot), v.clone(), cx));
                }
                Ok(Flow::Next)
            }
            Stmt::Set(list) => {
                for (t, e) in list {
                    let v = handled!(self, cx, self.eval(e, cx));
                    handled!(self, cx, self.assign(t, v, cx));
                }
                Ok(Flow::Next)
            }
            Stmt::If {
                branches,
                otherwise,
            }
            | Stmt::Case {
                branches,
                otherwise,
            } => {
                for (c, body) in branches {
                    let v = handled!(self, cx, self.eval(c, cx));
                    if truthy(&v) {
                        return self.exec_list(body, cx);
                    }
                }
                match otherwise {
                    Some(body) => self.exec_list(body, cx),
                    None if matches!(s, Stmt::Case { .. }) => self.raise(Error::CaseNotFound, cx),
                    None => Ok(Flow::Next),
                }
            }
            Stmt::While { id, cond, body } => {
                loop {
                    let v = handled!(self, cx, self.eval(cond, cx));
                    if !truthy(&v) {
                        break;
                    }
                    match self.exec_list(body, cx)? {
                        Flow::Next => {}
                        Flow::Iterate(x) if x == *id => {}
                        Flow::Leave(x) if x == *id => break,
                        other => return Ok(other),
                    }
                }
                Ok(Flow::Next)
            }
            Stmt::Repeat { id, body, until } => {
                loop {
                    match self.exec_list(body, cx)? {
                        Flow::Next => {}
                        Flow::Iterate(x) if x == *id => continue,
                        Flow::Leave(x) if x == *id => break,
                        other => return Ok(other),
                    }
                    let v = handled!(self, cx, self.eval(until, cx));
                    if truthy(&v) {
                        break;
                    }
                }
                Ok(Flow::Next)
            }
            Stmt::Loop { id, body } => loop {
                match self.exec_list(body, cx)? {
                    Flow::Next => {}
                    Flow::Iterate(x) if x == *id => {}
                    Flow::Leave(x) if x == *id => return Ok(Flow::Next),
                    other => return Ok(other),
                }
            },
            Stmt::Leave(id) => Ok(Flow::Leave(*id)),
            Stmt::Iterate(id) => Ok(Flow::Iterate(*id)),
            Stmt::Return(e) => {
                let v = handled!(self, cx, self.eval(e, cx));
                Ok(Flow::Return(v))
            }
            Stmt::Signal(sig) => {
                let e = handled!(self, cx, self.signal_error(sig, cx));
                self.raise(e, cx)
            }
            Stmt::Open(c) => {
                if self.cursors[*c].is_some() {
                    return self.raise(Error::CursorAlreadyOpen, cx);
                }
                let sql = &self.program.cursors[*c];
                let rows = handled!(self, cx, self.query_rows(sql, cx));
                self.cursors[*c] = Some(rows.into());
                Ok(Flow::Next)
            }
            Stmt::Close(c) => {
                if self.cursors[*c].take().is_none() {
                    return self.raise(Error::CursorNotOpen, cx);
                }
                Ok(Flow::Next)
            }
            Stmt::Fetch { cursor, into } => {
                let row = match &mut self.cursors[*cursor] {
                    None => return self.raise(Error::CursorNotOpen, cx),
                    Some(rows) => rows.pop_front(),
                };
                let Some(row) = row else {
                    return self.raise(Error::NoData, cx);
                };
                if row.len() != into.len() {
                    return self.raise(
                        Error::Signal {
                            code: 1328,
                            sqlstate: "HY000".into(),
                            message: "Incorrect number of FETCH variables".into(),
                        },
                        cx,
                    );
                }
                for (t, v) in into.iter().zip(row) {
                    handled!(self, cx, self.assign(t, v, cx));
                }
                Ok(Flow::Next)
            }
            Stmt::Query { sql, into: None } => {
                let params = handled!(self, cx, self.params(sql));
                let r = match self.out.as_deref_mut() {
                    Some(out) => self.runner.run(sql, false, &params, cx, out),
                    None => self.runner.run(sql, false, &params, cx, &mut NoResultSets),
                };
                handled!(self, cx, r);
                Ok(Flow::Next)
            }
            Stmt::Query {
                sql,
                into: Some(into),
            } => {
                let rows = handled!(self, cx, self.query_rows(sql, cx));
                match rows.len() {
                    0 => {
                        // No data: a NOT FOUND condition, a warning when unhandled.
                        return match self.find_handler(&Error::NoData) {
                            Some(_) => self.raise(Error::NoData, cx),
                            None => {
                                cx.env
                                    .warn(WarnLevel::Warning, 1329, Error::NoData.to_string());
                                Ok(Flow::Next)
                            }
                        };
                    }
                    1 => {}
                    _ => return self.raise(Error::TooManyRows, cx),
                }
                let row = rows.into_iter().next().unwrap_or_default();
                if row.len() != into.len() {
                    return self.raise(Error::IntoColumnCount, cx);
                }
                for (t, v) in into.iter().zip(row) {
                    handled!(self, cx, self.assign(t, v, cx));
                }
                Ok(Flow::Next)
            }
            Stmt::Call {
                name,
                args,
                targets,
            } => {
                let mut values = Vec::with_capacity(args.len());
                for a in args {
                    values.push(handled!(self, cx, self.eval(a, cx)));
                }
                let r = match self.out.as_deref_mut() {
                    Some(out) => self.runner.call(name, values, cx, out),
                    None => self.runner.call(name, values, cx, &mut NoResultSets),
                };
                let back = handled!(self, cx, r);
                for (n, (t, v)) in targets.iter().zip(back).enumerate() {
                    match (t, v) {
                        (Some(t), Some(v)) => handled!(self, cx, self.assign(t, v, cx)),
                        (None, Some(_)) => {
                            return self.raise(
                                Error::Signal {
                                    code: 1414,
                                    sqlstate: "42000".into(),
                                    message: format!(
                                        "OUT or INOUT argument {} for routine {} is not a variable or NEW pseudo-variable in BEFORE trigger",
                                        n + 1,
                                        name.1
                                    ),
                                },
                                cx,
                            )
                        }
                        _ => {}
                    }
                }
                Ok(Flow::Next)
            }
        }
    }

    /// The values of a statement's placeholders, with the types of the variables or
    /// columns they read.
    fn params(&self, sql: &Sql) -> Result<Vec<(Value, Option<strata_types::ColumnDef>)>> {
        sql.refs
            .iter()
            .map(|r| match r {
                Ref::Var(i) => Ok((self.vars[*i].clone(), self.program.vars[*i].1.clone())),
                Ref::New(c) => Ok((self.row_value(c, true)?, self.row_column(c))),
                Ref::Old(c) => Ok((self.row_value(c, false)?, self.row_column(c))),
            })
            .collect()
    }

    fn row_column(&self, col: &str) -> Option<strata_types::ColumnDef> {
        let row = self.row.as_ref()?;
        let i = row.def.column_index(col)?;
        Some(row.def.columns[i].clone())
    }

    fn row_value(&self, col: &str, new: bool) -> Result<Value> {
        let (row_name, other) = if new { ("NEW", "OLD") } else { ("OLD", "NEW") };
        let _ = other;
        let Some(row) = &self.row else {
            return Err(Error::UnknownColumn {
                column: col.to_string(),
                context: row_name.into(),
            });
        };
        let i = row
            .def
            .column_index(col)
            .ok_or_else(|| Error::UnknownColumn {
                column: col.to_string(),
                context: row_name.into(),
            })?;
        let values: Option<&[Value]> = if new {
            row.new.as_deref().map(|v| v.as_slice())
        } else {
            row.old
        };
        values
            .map(|v| v.get(i).cloned().unwrap_or(Value::Null))
            .ok_or(Error::TriggerNoSuchRow {
                row: row_name,
                event: row.event,
            })
    }

    fn eval(&self, sql: &Sql, cx: &ExecCtx) -> Result<Value> {
        let params = self.params(sql)?;
        let mut out = Collect::default();
        self.runner.run(sql, true, &params, cx, &mut out)?;
        Ok(out
            .rows
            .into_iter()
            .next()
            .and_then(|r| r.into_iter().next())
            .unwrap_or(Value::Null))
    }

    fn query_rows(&self, sql: &Sql, cx: &ExecCtx) -> Result<Vec<Vec<Value>>> {
        let params = self.params(sql)?;
        let mut out = Collect::default();
        self.runner.run(sql, false, &params, cx, &mut out)?;
        if !out.had_columns {
            return Err(Error::NotSupported(
                "a cursor or SELECT … INTO over a statement that returns no rows".into(),
            ));
        }
        Ok(out.rows)
    }

    fn assign(&mut self, t: &Target, v: Value, cx: &ExecCtx) -> Result<()> {
        match t {
            Target::Var(slot) => {
                let v = match &self.program.vars[*slot].1 {
                    Some(col) => {
                        crate::expr::convert::coerce_or_warn(v, col, 1, cx.strict, cx.env)?
                    }
                    None => v,
                };
                self.vars[*slot] = v;
                Ok(())
            }
            Target::User(name) => {
                cx.env.set_user_variable(name, v);
                Ok(())
            }
            Target::Old(_) => Err(Error::TriggerCantChangeRow {
                row: "OLD",
                after: false,
            }),
            Target::New(col) => {
                let Some(row) = &mut self.row else {
                    return Err(Error::UndeclaredVariable("NEW".into()));
                };
                if row.after {
                    return Err(Error::TriggerCantChangeRow {
                        row: "NEW",
                        after: true,
                    });
                }
                let event = row.event;
                let def = row.def;
                let Some(new) = row.new.as_deref_mut() else {
                    return Err(Error::TriggerNoSuchRow { row: "NEW", event });
                };
                let i = def.column_index(col).ok_or_else(|| Error::UnknownColumn {
                    column: col.clone(),
                    context: "NEW".into(),
                })?;
                new[i] = if v.is_null() {
                    v
                } else {
                    crate::expr::convert::coerce_or_warn(v, &def.columns[i], 1, cx.strict, cx.env)?
                };
                Ok(())
            }
        }
    }

    /// The error a SIGNAL or RESIGNAL raises.
    fn signal_error(&self, sig: &Signal, cx: &ExecCtx) -> Result<Error> {
        let (mut code, mut state, mut message) = if sig.resignal {
            let Some(cur) = self.handling.last() else {
                return Err(Error::ResignalOutsideHandler);
            };
            match &sig.condition {
                None => (cur.code(), cur.sqlstate().to_string(), cur.to_string()),
                Some(c) => fresh_signal(c)?,
            }
        } else {
            match &sig.condition {
                Some(c) => fresh_signal(c)?,
                None => return Err(Error::Syntax("SIGNAL".into())),
            }
        };
        for (item, e) in &sig.items {
            let v = self.eval(e, cx)?;
            match item.as_str() {
                "MESSAGE_TEXT" => message = v.to_text(),
                "MYSQL_ERRNO" => {
                    code = v
                        .to_i64()
                        .filter(|n| (1..=65535).contains(n))
                        .map(|n| n as u16)
                        .ok_or_else(|| Error::Signal {
                            code: 1231,
                            sqlstate: "42000".into(),
                            message: format!(
                                "Variable 'MYSQL_ERRNO' can't be set to the value of '{}'",
                                v.to_text()
                            ),
                        })?;
                }
                _ => {}
            }
        }
        if state.is_empty() {
            state = "45000".into();
        }
        Ok(Error::Signal {
            code,
            sqlstate: state,
            message,
        })
    }

    /// The handler that catches `e`: (index in the handler stack, handler).
    fn find_handler(&self, e: &Error) -> Option<(usize, &'p Handler)> {
        for (i, (_, hs)) in self.handlers.iter().enumerate().rev() {
            let best = hs
                .iter()
                .filter_map(|h| {
                    h.conditions
                        .iter()
                        .filter_map(|c| match_rank(c, e))
                        .max()
                        .map(|r| (r, h))
                })
                .max_by_key(|(r, _)| *r);
            if let Some((_, h)) = best {
                return Some((i, h));
            }
        }
        None
    }

    /// Raises `e` where the current statement is: runs the handler that catches it, or
    /// returns it. A warning-class SIGNAL nobody handles is a warning.
    fn raise(&mut self, e: Error, cx: &ExecCtx) -> Result<Flow> {
        let Some((i, h)) = self.find_handler(&e) else {
            if let Error::Signal {
                sqlstate,
                code,
                message,
            } = &e
            {
                if sqlstate.starts_with("01") {
                    cx.env.warn(WarnLevel::Warning, *code, message.clone());
                    return Ok(Flow::Next);
                }
            }
            return Err(e);
        };
        // Deadlocks and kills end the transaction: no handler runs on.
        if matches!(e, Error::Deadlock | Error::Interrupted) {
            return Err(e);
        }
        let block = self.handlers[i].0;
        let kept = self.handlers.split_off(i);
        self.handling.push(e);
        let r = self.exec(&h.body, cx);
        self.handling.pop();
        self.handlers.extend(kept);
        match r? {
            Flow::Return(v) => Ok(Flow::Return(v)),
            Flow::Leave(x) if x != block => Ok(Flow::Leave(x)),
            _ => match h.kind {
                HandlerKind::Continue => Ok(Flow::Next),
                HandlerKind::Exit => Ok(Flow::Leave(block)),
            },
        }
    }
}

/// How specifically `c` matches `e` (higher is more specific), or None.
fn match_rank(c: &Condition, e: &Error) -> Option<u8> {
    let state = e.sqlstate();
    match c {
        Condition::Errno(n) if *n == e.code() => Some(3),
        Condition::SqlState(s) if s == state => Some(2),
        Condition::NotFound if state.starts_with("02") => Some(1),
        Condition::SqlWarning if state.starts_with("01") => Some(1),
        Condition::SqlException
            if !state.starts_with("00") && !state.starts_with("01") && !state.starts_with("02") =>
        {
            Some(1)
        }
        _ => None,
    }
}

/// A SIGNAL's error before its SET items: MySQL's default number and text by class.
fn fresh_signal(c: &Condition) -> Result<(u16, String, String)> {
    match c {
        Condition::SqlState(s) => Ok(if s.starts_with("01") {
            (
                1642,
                s.clone(),
                "Unhandled user-defined warning condition".into(),
            )
        } else if s.starts_with("02") {
            (
                1643,
                s.clone(),
                "Unhandled user-defined not found condition".into(),
            )
        } else {
            (
                1644,
                s.clone(),
                "Unhandled user-defined exception condition".into(),
            )
        }),
        _ => Err(Error::Signal {
            code: 1645,
            sqlstate: "HY000".into(),
            message: "SIGNAL/RESIGNAL can only use a CONDITION defined with SQLSTATE".into(),
        }),
    }
}

/// MySQL's truth of a condition value: non-zero and not NULL.
pub fn truthy(v: &Value) -> bool {
    match v {
        Value::Null => false,
        Value::Int(i) => *i != 0,
        other => other.to_f64().is_some_and(|f| f != 0.0),
    }
}

/// Collects a query's rows.
#[derive(Default)]
pub struct Collect {
    pub rows: Vec<Vec<Value>>,
    pub had_columns: bool,
}

impl QueryOutput for Collect {
    fn columns(&mut self, _: &[ColumnMeta]) -> Result<()> {
        self.had_columns = true;
        Ok(())
    }
    fn row(&mut self, row: &[Value]) -> Result<()> {
        self.rows.push(row.to_vec());
        Ok(())
    }
    fn end(&mut self, _: &EndInfo) -> Result<()> {
        Ok(())
    }
    fn ok(&mut self, _: &OkInfo) -> Result<()> {
        Ok(())
    }
}

/// The output of a trigger or stored function, which may not send result sets.
pub struct NoResultSets;

impl QueryOutput for NoResultSets {
    fn columns(&mut self, _: &[ColumnMeta]) -> Result<()> {
        Err(Error::ResultSetFromProgram("trigger"))
    }
    fn row(&mut self, _: &[Value]) -> Result<()> {
        Err(Error::ResultSetFromProgram("trigger"))
    }
    fn end(&mut self, _: &EndInfo) -> Result<()> {
        Ok(())
    }
    fn ok(&mut self, _: &OkInfo) -> Result<()> {
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::catalog::Catalog;
    use crate::expr::test_env::TestEnv;
    use crate::routines::parse::{parse_program, Context};
    use std::sync::Arc;
    use strata_engine::Txn;

    /// Evaluates expressions as constants, with each `?N` replaced by its value's SQL
    /// literal; a `SELECT …` statement sends one row of those constants. What the real
    /// statement layer does, minus tables.
    struct ConstRunner;

    fn literal(v: &Value) -> String {
        match v {
            Value::Null => "NULL".into(),
            Value::Int(i) => i.to_string(),
            other => format!("'{}'", other.to_text().replace('\'', "''")),
        }
    }

    fn substitute(text: &str, params: &[(Value, Option<strata_types::ColumnDef>)]) -> String {
        let mut out = text.to_string();
        for (i, (v, _)) in params.iter().enumerate().rev() {
            out = out.replace(&format!("?{}", i + 1), &literal(v));
        }
        out
    }

    impl Runner for ConstRunner {
        fn run(
            &self,
            sql: &Sql,
            expr: bool,
            params: &[(Value, Option<strata_types::ColumnDef>)],
            cx: &ExecCtx,
            out: &mut dyn QueryOutput,
        ) -> Result<()> {
            let text = substitute(&sql.text, params);
            let exprs: Vec<String> = if expr {
                vec![text]
            } else {
                let Some(list) = text.strip_prefix("SELECT ") else {
                    return Err(Error::NotSupported(text));
                };
                list.split(", ").map(str::to_string).collect()
            };
            let row = exprs
                .iter()
                .map(|e| crate::eval_constant(e, cx.env))
                .collect::<Result<Vec<Value>>>()?;
            out.columns(&[])?;
            out.row(&row)?;
            out.end(&EndInfo::default())
        }

        fn call(
            &self,
            _: &(Option<String>, String),
            _: Vec<Value>,
            _: &ExecCtx,
            _: &mut dyn QueryOutput,
        ) -> Result<Vec<Option<Value>>> {
            Err(Error::NotSupported("CALL".into()))
        }
    }

    /// Runs `body` as a function; its RETURN value.
    fn run(body: &str) -> Result<Option<Value>> {
        let dir = tempfile::tempdir().map_err(|e| Error::io("tempdir", e))?;
        let catalog = Arc::new(Catalog::open(dir.path(), vec![])?);
        let env = TestEnv::default();
        let txn = Txn::default();
        let mdl = crate::mdl::MdlContext::new(catalog.mdl().clone());
        let temp = crate::catalog::temporary::TempTables::default();
        let cx = ExecCtx {
            catalog: &catalog,
            current_db: Some("d".into()),
            env: &env,
            locked_tables: None,
            strict: true,
            sql_mode: strata_types::SqlMode::default(),
            default_engine: "btree",
            sort_buffer_size: 1 << 20,
            tmp_table_size: 1 << 20,
            tmpdir: dir.path(),
            txn: &txn,
            mdl: &mdl,
            invoker: None,
            temp: &temp,
        };
        let program = parse_program(body, vec![], Context::Function)?;
        let invoker = Invoker::default();
        let mut inv = Invocation::new(&program, &ConstRunner, "d", &invoker, None);
        inv.run(&cx)
    }

    #[test]
    fn loops_and_labels() {
        let v = run("BEGIN DECLARE i INT DEFAULT 0; DECLARE s INT DEFAULT 0; \
             l: LOOP SET i = i + 1; IF i > 10 THEN LEAVE l; END IF; \
             IF i = 5 THEN ITERATE l; END IF; SET s = s + i; END LOOP l; \
             REPEAT SET s = s + 100; UNTIL s > 300 END REPEAT; RETURN s; END")
        .unwrap();
        // 1..10 without 5 is 50; then +100 until past 300.
        assert_eq!(v, Some(Value::Int(350)));
    }

    #[test]
    fn declared_types_convert_assignments() {
        let v = run("BEGIN DECLARE t TINYINT; SET t = 3.6; RETURN t; END").unwrap();
        assert_eq!(v, Some(Value::Int(4)));
        // Strict: a value the type cannot hold is an error.
        assert!(run("BEGIN DECLARE t TINYINT; SET t = 1000; RETURN t; END").is_err());
    }

    #[test]
    fn handlers_continue_exit_and_resignal() {
        let v = run("BEGIN DECLARE r INT DEFAULT 0; \
             BEGIN DECLARE CONTINUE HANDLER FOR SQLSTATE '45000' SET r = r + 1; \
               SIGNAL SQLSTATE '45000'; SET r = r + 10; END; \
             BEGIN DECLARE EXIT HANDLER FOR SQLEXCEPTION SET r = r + 100; \
               SIGNAL SQLSTATE '45001'; SET r = r + 1000; END; \
             RETURN r; END")
        .unwrap();
        assert_eq!(v, Some(Value::Int(111)));
        // A handler's own error goes past its block; RESIGNAL re-raises the condition.
        let e = run(
            "BEGIN DECLARE CONTINUE HANDLER FOR SQLEXCEPTION RESIGNAL SET MESSAGE_TEXT = 'again'; \
             SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = 'first'; RETURN 1; END",
        )
        .unwrap_err();
        assert_eq!(
            (e.code(), e.sqlstate(), e.to_string()),
            (1644, "45000", "again".into())
        );
        // The most specific handler of the innermost block wins.
        let v = run("BEGIN DECLARE r INT DEFAULT 0; \
             DECLARE CONTINUE HANDLER FOR SQLEXCEPTION SET r = 1; \
             DECLARE CONTINUE HANDLER FOR 1644 SET r = 2; \
             SIGNAL SQLSTATE '45000'; RETURN r; END")
        .unwrap();
        assert_eq!(v, Some(Value::Int(2)));
    }

    #[test]
    fn case_and_signal_errors() {
        let e = run("BEGIN DECLARE x INT DEFAULT 3; CASE x WHEN 1 THEN RETURN 1; END CASE; END")
            .unwrap_err();
        assert_eq!(e.code(), 1339);
        let e =
            run("BEGIN SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = 'no', MYSQL_ERRNO = 5001; END")
                .unwrap_err();
        assert_eq!((e.code(), e.to_string()), (5001, "no".into()));
        // A warning-class SIGNAL nobody handles is a warning, and the body goes on.
        assert_eq!(
            run("BEGIN SIGNAL SQLSTATE '01000'; RETURN 7; END").unwrap(),
            Some(Value::Int(7))
        );
        assert_eq!(run("RETURN NULL").unwrap(), Some(Value::Null));
    }
}
