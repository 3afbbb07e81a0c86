//! Stored procedures and functions at work: CREATE / DROP / ALTER PROCEDURE|FUNCTION
//! (parsed here, stored by `catalog::routines`), CALL (a program of one CALL
//! statement, so its arguments and OUT values go through the interpreter like a CALL
//! inside a body), and [`StoredFunction`], a function bound into an expression.

use crate::catalog::routines::{ParamDef, ParamMode, RoutineDef, RoutineKind};
use crate::context::{ExecCtx, Outcome};
use crate::expr::env_overlay::EnvOverlay;
use crate::routines::ast::Program;
use crate::routines::interp::{Invocation, Runner};
use crate::routines::lex::{tokens, Kind};
use crate::routines::parse::{column_of_type, parse_program, Context};
use crate::routines::triggers::Cursor;
use std::sync::Arc;
use strata_types::{ColumnMeta, EndInfo, Error, OkInfo, QueryOutput, Result, Value};

/// Words that start a routine's characteristics.
const CHARACTERISTICS: [&str; 10] = [
    "COMMENT",
    "LANGUAGE",
    "NOT",
    "DETERMINISTIC",
    "CONTAINS",
    "NO",
    "READS",
    "MODIFIES",
    "SQL",
    "RETURNS",
];

/// The characteristics of a routine, as CREATE and ALTER give them.
struct Characteristics {
    deterministic: Option<bool>,
    data_access: Option<String>,
    security: Option<String>,
    comment: Option<String>,
}

fn characteristics(p: &mut Cursor) -> Result<Characteristics> {
    let mut c = Characteristics {
        deterministic: None,
        data_access: None,
        security: None,
        comment: None,
    };
    loop {
        if p.if_words(&["COMMENT"]) {
            match p.toks.get(p.pos) {
                Some(t) if t.kind == Kind::Str => {
                    c.comment = Some(t.value.clone());
                    p.pos += 1;
                }
                _ => return Err(p.error()),
            }
        } else if p.if_words(&["LANGUAGE", "SQL"]) {
        } else if p.if_words(&["NOT", "DETERMINISTIC"]) {
            c.deterministic = Some(false);
        } else if p.if_words(&["DETERMINISTIC"]) {
            c.deterministic = Some(true);
        } else if p.if_words(&["CONTAINS", "SQL"]) {
            c.data_access = Some("CONTAINS SQL".into());
        } else if p.if_words(&["NO", "SQL"]) {
            c.data_access = Some("NO SQL".into());
        } else if p.if_words(&["READS", "SQL", "DATA"]) {
            c.data_access = Some("READS SQL DATA".into());
        } else if p.if_words(&["MODIFIES", "SQL", "DATA"]) {
            c.data_access = Some("MODIFIES SQL DATA".into());
        } else if p.if_words(&["SQL", "SECURITY", "DEFINER"]) {
            c.security = Some("DEFINER".into());
        } else if p.if_words(&["SQL", "SECURITY", "INVOKER"]) {
            c.security = Some("INVOKER".into());
        } else {
            return Ok(c);
        }
    }
}

/// CREATE [DEFINER = …] {PROCEDURE|FUNCTION} [IF NOT EXISTS] [db.]name (params)
/// [RETURNS type] characteristics body
pub fn create_routine(sql: &str, kind: RoutineKind, cx: &ExecCtx) -> Result<Outcome> {
    let toks = tokens(sql)?;
    let mut p = Cursor {
        sql,
        toks: &toks,
        pos: 0,
    };
    p.word("CREATE")?;
    let definer = p
        .definer()?
        .unwrap_or_else(|| crate::routines::triggers::session_definer(cx));
    p.word(kind.word())?;
    let if_not_exists = p.if_words(&["IF", "NOT", "EXISTS"]);
    let (db, name) = p.qualified()?;
    let db = db
        .or_else(|| cx.current_db.clone())
        .ok_or(Error::NoDatabaseSelected)?;
    if !toks.get(p.pos).is_some_and(|t| t.is_punct("(")) {
        return Err(p.error());
    }
    p.pos += 1;
    let mut params = Vec::new();
    if toks.get(p.pos).is_some_and(|t| t.is_punct(")")) {
        p.pos += 1;
    } else {
        loop {
            let mode = if kind == RoutineKind::Procedure && p.if_words(&["INOUT"]) {
                ParamMode::InOut
            } else if kind == RoutineKind::Procedure && p.if_words(&["OUT"]) {
                ParamMode::Out
            } else {
                if kind == RoutineKind::Procedure {
                    p.if_words(&["IN"]);
                }
                ParamMode::In
            };
            let pname = p.name()?;
            // The type runs to a `,` or `)` outside parentheses.
            let start = p.pos;
            let mut depth = 0;
            while let Some(t) = toks.get(p.pos) {
                if t.is_punct("(") {
                    depth += 1;
                } else if t.is_punct(")") {
                    if depth == 0 {
                        break;
                    }
                    depth -= 1;
                } else if t.is_punct(",") && depth == 0 {
                    break;
                }
                p.pos += 1;
            }
            if p.pos == start || p.pos >= toks.len() {
                return Err(p.error());
            }
            let ty = sql[toks[start].start..toks[p.pos - 1].end].to_string();
            column_of_type(&ty)?;
            if params
                .iter()
                .any(|x: &ParamDef| x.name.eq_ignore_ascii_case(&pname))
            {
                return Err(Error::Signal {
                    code: 1330,
                    sqlstate: "42000".into(),
                    message: format!("Duplicate parameter: {pname}"),
                });
            }
            params.push(ParamDef {
                mode,
                name: pname,
                data_type: ty,
            });
            let t = &toks[p.pos];
            p.pos += 1;
            if t.is_punct(")") {
                break;
            }
        }
    }
    let returns = if kind == RoutineKind::Function {
        p.word("RETURNS")?;
        let start = p.pos;
        while let Some(t) = toks.get(p.pos) {
            let body_start = t.is("BEGIN")
                || t.is("RETURN")
                || (t.is_name() && toks.get(p.pos + 1).is_some_and(|n| n.is_punct(":")));
            if body_start || (p.pos > start && CHARACTERISTICS.iter().any(|w| t.is(w))) {
                break;
            }
            p.pos += 1;
        }
        if p.pos == start {
            return Err(p.error());
        }
        let ty = sql[toks[start].start..toks[p.pos - 1].end].to_string();
        column_of_type(&ty)?;
        Some(ty)
    } else {
        None
    };
    let c = characteristics(&mut p)?;
    let body = p.rest_as_body()?;
    // Parsed now so that a body with an error is refused at CREATE, as MySQL does.
    let program = compile(&params, &body, kind)?;
    if kind == RoutineKind::Function {
        check_function_body(&program)?;
    }
    let now = format!("{}", cx.env.now());
    let def = RoutineDef {
        db,
        name,
        kind,
        params,
        returns,
        body,
        deterministic: c.deterministic.unwrap_or(false),
        data_access: c.data_access.unwrap_or_else(|| "CONTAINS SQL".into()),
        security: c.security.unwrap_or_else(|| "DEFINER".into()),
        comment: c.comment.unwrap_or_default(),
        definer,
        sql_mode: cx
            .env
            .system_variable("sql_mode", false)
            .map(|v| v.to_text())
            .unwrap_or_default(),
        created: now.clone(),
        modified: now,
    };
    crate::statements::ddl_locks::lock_routine_for_ddl(cx, &def.db, &def.name, kind)?;
    if !cx.catalog.create_routine(def.clone(), if_not_exists)? {
        cx.env.warn(
            crate::expr::WarnLevel::Note,
            1304,
            Error::RoutineExists {
                kind: kind.word(),
                name: def.name,
            }
            .to_string(),
        );
    }
    Ok(Outcome::ok(0))
}

/// A function may not send result sets (1415 at CREATE, as MySQL).
fn check_function_body(p: &Program) -> Result<()> {
    let mut bad = false;
    crate::routines::triggers::visit(&p.body, &mut |_, _, select| bad |= select);
    if bad {
        return Err(Error::ResultSetFromProgram("function"));
    }
    Ok(())
}

/// Parses a routine's body with its parameters as the first variables.
pub fn compile(params: &[ParamDef], body: &str, kind: RoutineKind) -> Result<Program> {
    let mut vars = Vec::with_capacity(params.len());
    for p in params {
        let mut col = column_of_type(&p.data_type)?;
        col.name = p.name.clone();
        vars.push((p.name.clone(), Some(col)));
    }
    let cx = match kind {
        RoutineKind::Procedure => Context::Procedure,
        RoutineKind::Function => Context::Function,
    };
    parse_program(body, vars, cx)
}

/// DROP {PROCEDURE|FUNCTION} [IF EXISTS] [db.]name
pub fn drop_routine(sql: &str, kind: RoutineKind, cx: &ExecCtx) -> Result<Outcome> {
    let toks = tokens(sql)?;
    let mut p = Cursor {
        sql,
        toks: &toks,
        pos: 0,
    };
    p.word("DROP")?;
    p.word(kind.word())?;
    let if_exists = p.if_words(&["IF", "EXISTS"]);
    let (db, name) = p.qualified()?;
    if p.pos < toks.len() {
        return Err(p.error());
    }
    let db = db
        .or_else(|| cx.current_db.clone())
        .ok_or(Error::NoDatabaseSelected)?;
    crate::statements::ddl_locks::lock_routine_for_ddl(cx, &db, &name, kind)?;
    if !cx.catalog.drop_routine(&db, &name, kind)? {
        let e = Error::RoutineDoesNotExist {
            kind: kind.word(),
            name: format!("{db}.{name}"),
        };
        if !if_exists {
            return Err(e);
        }
        cx.env
            .warn(crate::expr::WarnLevel::Note, 1305, e.to_string());
    }
    Ok(Outcome::ok(0))
}

/// ALTER {PROCEDURE|FUNCTION} [db.]name characteristics
pub fn alter_routine(sql: &str, kind: RoutineKind, cx: &ExecCtx) -> Result<Outcome> {
    let toks = tokens(sql)?;
    let mut p = Cursor {
        sql,
        toks: &toks,
        pos: 0,
    };
    p.word("ALTER")?;
    p.word(kind.word())?;
    let (db, name) = p.qualified()?;
    let db = db
        .or_else(|| cx.current_db.clone())
        .ok_or(Error::NoDatabaseSelected)?;
    let c = characteristics(&mut p)?;
    if p.pos < toks.len() {
        return Err(p.error());
    }
    crate::statements::ddl_locks::lock_routine_for_ddl(cx, &db, &name, kind)?;
    let mut def =
        cx.catalog
            .routine(&db, &name, kind)
            .ok_or_else(|| Error::RoutineDoesNotExist {
                kind: kind.word(),
                name: format!("{db}.{name}"),
            })?;
    if c.deterministic.is_some() {
        return Err(Error::Syntax("DETERMINISTIC".into()));
    }
    if let Some(d) = c.data_access {
        def.data_access = d;
    }
    if let Some(s) = c.security {
        def.security = s;
    }
    if let Some(m) = c.comment {
        def.comment = m;
    }
    def.modified = format!("{}", cx.env.now());
    cx.catalog.replace_routine(def)?;
    Ok(Outcome::ok(0))
}

/// The output of a CALL: result sets after the first announce themselves
/// (SERVER_MORE_RESULTS_EXISTS on the one before), or 1312 when the client cannot
/// take several.
pub struct CallOutput<'a> {
    pub inner: &'a mut dyn QueryOutput,
    pub procedure: String,
    /// Result sets sent so far.
    pub sent: usize,
}

impl QueryOutput for CallOutput<'_> {
    fn columns(&mut self, cols: &[ColumnMeta]) -> Result<()> {
        // The CALL's OK follows its result sets, so even the first needs a client that
        // takes several results.
        if !self.inner.takes_more_results() || (self.sent > 0 && !self.inner.next_result_set()?) {
            return Err(Error::ProcedureResultSet(self.procedure.clone()));
        }
        self.sent += 1;
        self.inner.columns(cols)
    }
    fn row(&mut self, row: &[Value]) -> Result<()> {
        self.inner.row(row)
    }
    fn end(&mut self, info: &EndInfo) -> Result<()> {
        self.inner.end(info)
    }
    fn ok(&mut self, _: &OkInfo) -> Result<()> {
        // A statement's OK inside a procedure is not sent; the CALL's own OK is.
        Ok(())
    }
    fn next_result_set(&mut self) -> Result<bool> {
        self.inner.next_result_set()
    }
    fn takes_more_results(&self) -> bool {
        self.inner.takes_more_results()
    }
}

/// CALL [db.]name[(args)] sent by a client: runs it, then sends the CALL's OK (after
/// a SERVER_MORE_RESULTS_EXISTS when the procedure sent result sets).
pub fn call(sql: &str, cx: &ExecCtx, out: &mut dyn QueryOutput) -> Result<Outcome> {
    let program = parse_program(sql, vec![], Context::Procedure)?;
    let crate::routines::ast::Stmt::Call { name, .. } = &program.body else {
        return Err(Error::Syntax(sql.chars().take(80).collect()));
    };
    let procedure = format!(
        "{}.{}",
        name.0
            .clone()
            .or_else(|| cx.current_db.clone())
            .unwrap_or_default(),
        name.1
    );
    let invoker = cx.invoker.cloned().unwrap_or_default();
    let db = cx.current_db.clone().unwrap_or_default();
    let runner = crate::routines::runner()?;
    let sent;
    {
        let mut call_out = CallOutput {
            inner: out,
            procedure,
            sent: 0,
        };
        let mut run = Invocation::new(&program, runner, &db, &invoker, Some(&mut call_out));
        run.run_keeping_db(cx)?;
        drop(run);
        sent = call_out.sent;
    }
    if sent > 0 && !out.next_result_set()? {
        return Err(Error::ProcedureResultSet(String::new()));
    }
    Ok(Outcome::ok(0))
}

/// Runs procedure `name` with `args` for a CALL (from a client or a program); the
/// final values of its OUT and INOUT parameters (None for IN ones).
pub fn run_procedure(
    name: &(Option<String>, String),
    args: Vec<Value>,
    cx: &ExecCtx,
    out: &mut dyn QueryOutput,
    runner: &dyn Runner,
) -> Result<Vec<Option<Value>>> {
    let db = name
        .0
        .clone()
        .or_else(|| cx.current_db.clone())
        .ok_or(Error::NoDatabaseSelected)?;
    let def = cx
        .catalog
        .routine(&db, &name.1, RoutineKind::Procedure)
        .ok_or_else(|| Error::RoutineDoesNotExist {
            kind: "PROCEDURE",
            name: format!("{db}.{}", name.1),
        })?;
    if args.len() != def.params.len() {
        return Err(Error::RoutineArguments {
            kind: "PROCEDURE",
            name: format!("{db}.{}", def.name),
            expected: def.params.len(),
            got: args.len(),
        });
    }
    // Recursion: max_sp_recursion_depth (0 by default: none).
    let limit = cx
        .env
        .system_variable("max_sp_recursion_depth", false)
        .ok()
        .and_then(|v| v.to_i64())
        .unwrap_or(0)
        .max(0) as u64;
    let mut invoker = cx.invoker.cloned().unwrap_or_default();
    let depth = invoker
        .routines
        .iter()
        .filter(|r| !r.2 && r.0 == db && r.1.eq_ignore_ascii_case(&def.name))
        .count() as u64;
    if depth > limit {
        return Err(Error::RoutineRecursion {
            limit,
            name: def.name.clone(),
        });
    }
    if invoker.depth > 64 {
        return Err(Error::NotSupported(
            "stored programs nested more than 64 deep".into(),
        ));
    }
    invoker.routines.push((db.clone(), def.name.clone(), false));
    invoker.depth += 1;
    let program = compile(&def.params, &def.body, RoutineKind::Procedure)?;
    // Result sets go to the client's CALL output (which marks all but the first as
    // following another), also from a CALL nested inside a procedure.
    let mode = crate::routines::created_mode(&def.sql_mode, cx);
    let env = EnvOverlay::program_mode(cx.env, &mode.text());
    let cx = &cx.under_program_mode(&env, mode);
    let mut run = Invocation::new(&program, runner, &db, &invoker, Some(out));
    for (i, (p, v)) in def.params.iter().zip(args).enumerate() {
        if p.mode != ParamMode::Out {
            run.set_var(i, v, cx)?;
        }
    }
    run.run(cx)?;
    let values = run.vars.clone();
    drop(run);
    Ok(def
        .params
        .iter()
        .zip(values)
        .map(|(p, v)| (p.mode != ParamMode::In).then_some(v))
        .collect())
}

/// A stored function bound into an expression.
pub struct StoredFunction {
    def: RoutineDef,
    program: Program,
    returns: strata_types::ColumnDef,
}

impl StoredFunction {
    /// The function `db.name` for a call with `args` arguments (1305, 1318).
    pub fn bind(
        cx: &ExecCtx,
        db: Option<&str>,
        name: &str,
        args: usize,
    ) -> Result<Option<Arc<StoredFunction>>> {
        let Some(db) = db.map(str::to_string).or_else(|| cx.current_db.clone()) else {
            return Ok(None);
        };
        let Some(def) = cx.catalog.routine(&db, name, RoutineKind::Function) else {
            return Ok(None);
        };
        if args != def.params.len() {
            return Err(Error::RoutineArguments {
                kind: "FUNCTION",
                name: format!("{db}.{}", def.name),
                expected: def.params.len(),
                got: args,
            });
        }
        let program = compile(&def.params, &def.body, RoutineKind::Function)?;
        let returns = column_of_type(def.returns.as_deref().unwrap_or("TEXT"))?;
        Ok(Some(Arc::new(StoredFunction {
            def,
            program,
            returns,
        })))
    }

    /// The type of its result.
    pub fn returns(&self) -> &strata_types::ColumnDef {
        &self.returns
    }
}

impl crate::context::CallFunction for StoredFunction {
    fn call(&self, args: Vec<Value>, cx: &ExecCtx) -> Result<Value> {
        let runner = crate::routines::runner()?;
        let mut invoker = cx.invoker.cloned().unwrap_or_default();
        if invoker
            .routines
            .iter()
            .any(|r| r.2 && r.0 == self.def.db && r.1.eq_ignore_ascii_case(&self.def.name))
        {
            return Err(Error::RecursiveFunction);
        }
        invoker
            .routines
            .push((self.def.db.clone(), self.def.name.clone(), true));
        invoker.depth += 1;
        invoker.function = true;
        let mode = crate::routines::created_mode(&self.def.sql_mode, cx);
        let env = EnvOverlay::program_mode(cx.env, &mode.text());
        let cx = &cx.under_program_mode(&env, mode);
        let mut run = Invocation::new(&self.program, runner, &self.def.db, &invoker, None);
        for (i, v) in args.into_iter().enumerate() {
            run.set_var(i, v, cx)?;
        }
        match run.run(cx)? {
            Some(v) if v.is_null() => Ok(v),
            Some(v) => crate::expr::convert::coerce_or_warn(v, &self.returns, 1, cx.strict, cx.env),
            None => Err(Error::FunctionNoReturn(self.def.name.clone())),
        }
    }
}
