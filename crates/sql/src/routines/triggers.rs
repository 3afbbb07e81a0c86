//! Triggers at work: CREATE TRIGGER and DROP TRIGGER (parsed here, stored by
//! `catalog::triggers`), and [`TableTriggers`], the compiled triggers of one table that
//! a DML plan carries (`statements::dml::Target::triggers`) and fires for each row.
//! A trigger's statements run in the invoking statement's transaction and under its
//! table locks; one that changes a table the invoking statements change fails with
//! 1442, so triggers cannot recurse.

use crate::catalog::triggers::{Event, Placement, Timing, TriggerDef};
use crate::context::{ExecCtx, Invoker, Outcome, RowTriggers, TableLocks};
use crate::routines::ast::Program;
use crate::routines::ast::{Ref, Stmt, Target};
use crate::routines::interp::{Invocation, RowCtx, Runner};
use crate::routines::lex::{tokens, Kind, Token};
use crate::routines::parse::{parse_program, Context};
use std::sync::Arc;
use strata_types::{Error, Result, TableDef, Value};

/// The compiled triggers of one table, in action order.
pub struct TableTriggers {
    db: String,
    table: String,
    def: Arc<TableDef>,
    list: Vec<(TriggerDef, Program)>,
    runner: &'static dyn Runner,
}

/// The triggers of `db.table`, compiled; None when it has none.
pub fn for_table(
    cx: &ExecCtx,
    db: &str,
    table: &str,
    def: &Arc<TableDef>,
    runner: &'static dyn Runner,
) -> Result<Option<Arc<dyn RowTriggers>>> {
    let defs = cx.catalog.table_triggers(db, table);
    if defs.is_empty() {
        return Ok(None);
    }
    let mut list = Vec::with_capacity(defs.len());
    for d in defs {
        let program = parse_program(&d.body, vec![], Context::Trigger)?;
        list.push((d, program));
    }
    Ok(Some(Arc::new(TableTriggers {
        db: db.to_string(),
        table: table.to_string(),
        def: def.clone(),
        list,
        runner,
    })))
}

impl RowTriggers for TableTriggers {
    fn has(&self, timing: Timing, event: Event) -> bool {
        self.list
            .iter()
            .any(|(d, _)| d.timing == timing && d.event == event)
    }

    fn fire(
        &self,
        timing: Timing,
        event: Event,
        old: Option<&[Value]>,
        mut new: Option<&mut Vec<Value>>,
        cx: &ExecCtx,
        _locks: &TableLocks,
    ) -> Result<()> {
        let mut invoker: Option<Invoker> = None;
        for (d, program) in &self.list {
            if d.timing != timing || d.event != event {
                continue;
            }
            let inv = invoker.get_or_insert_with(|| {
                let outer = cx.invoker;
                let mut busy = outer.map(|o| o.busy.clone()).unwrap_or_default();
                busy.push((self.db.clone(), self.table.clone()));
                Invoker {
                    busy,
                    depth: outer.map_or(0, |o| o.depth) + 1,
                    routines: outer.map(|o| o.routines.clone()).unwrap_or_default(),
                    function: outer.is_some_and(|o| o.function),
                }
            });
            let mode = crate::routines::created_mode(&d.sql_mode, cx);
            let env = crate::expr::env_overlay::EnvOverlay::program_mode(cx.env, &mode.text());
            let cx = &cx.under_program_mode(&env, mode);
            let mut run = Invocation::new(program, self.runner, &self.db, inv, None);
            run.row = Some(RowCtx {
                def: &self.def,
                new: new.as_deref_mut(),
                old,
                after: timing == Timing::After,
                event: event.word(),
            });
            run.run(cx)?;
        }
        Ok(())
    }
}

/// CREATE [DEFINER = …] TRIGGER [IF NOT EXISTS] [db.]name {BEFORE|AFTER}
/// {INSERT|UPDATE|DELETE} ON [db.]table FOR EACH ROW [{FOLLOWS|PRECEDES} other] body
pub fn create_trigger(sql: &str, cx: &ExecCtx) -> Result<Outcome> {
    let toks = tokens(sql)?;
    let mut p = Cursor {
        sql,
        toks: &toks,
        pos: 0,
    };
    p.word("CREATE")?;
    let definer = p.definer()?.unwrap_or_else(|| session_definer(cx));
    p.word("TRIGGER")?;
    let if_not_exists = p.if_words(&["IF", "NOT", "EXISTS"]);
    let (tdb, name) = p.qualified()?;
    let timing = if p.if_words(&["BEFORE"]) {
        Timing::Before
    } else if p.if_words(&["AFTER"]) {
        Timing::After
    } else {
        return Err(p.error());
    };
    let event = if p.if_words(&["INSERT"]) {
        Event::Insert
    } else if p.if_words(&["UPDATE"]) {
        Event::Update
    } else if p.if_words(&["DELETE"]) {
        Event::Delete
    } else {
        return Err(p.error());
    };
    p.word("ON")?;
    let (db, table) = p.qualified()?;
    p.word("FOR")?;
    p.word("EACH")?;
    p.word("ROW")?;
    let placement = if p.if_words(&["FOLLOWS"]) {
        Placement::Follows(p.name()?)
    } else if p.if_words(&["PRECEDES"]) {
        Placement::Precedes(p.name()?)
    } else {
        Placement::Last
    };
    let body = p.rest_as_body()?;
    let db = match db.or_else(|| cx.current_db.clone()) {
        Some(d) => d,
        None => return Err(Error::NoDatabaseSelected),
    };
    if tdb.as_ref().is_some_and(|t| *t != db) {
        return Err(Error::TriggerWrongSchema);
    }
    if crate::catalog::is_system_schema(&db) {
        return Err(Error::NotSupported("triggers on system tables".into()));
    }
    let t = cx.catalog.table(&db, &table)?;
    crate::statements::ddl_locks::lock_table_for_ddl(cx, &db, &table)?;
    let program = parse_program(&body, vec![], Context::Trigger)?;
    check_body(&program, t.def(), timing, event)?;
    let def = TriggerDef {
        db: db.clone(),
        name,
        table,
        timing,
        event,
        body,
        definer,
        sql_mode: cx
            .env
            .system_variable("sql_mode", false)
            .map(|v| v.to_text())
            .unwrap_or_default(),
        created: format!("{}", cx.env.now()),
    };
    if !cx.catalog.create_trigger(def, placement, if_not_exists)? {
        cx.env.warn(
            crate::expr::WarnLevel::Note,
            1359,
            Error::TriggerExists.to_string(),
        );
    }
    Ok(Outcome::ok(0))
}

/// The creating session's account as a definer: CURRENT_USER() (`user@localhost`, the
/// account Strata logs every session in as; views take the same default).
pub fn session_definer(cx: &ExecCtx) -> String {
    let u = cx.env.user();
    if u.contains('@') {
        u
    } else {
        format!("{u}@localhost")
    }
}

/// DROP TRIGGER [IF EXISTS] [db.]name
pub fn drop_trigger(sql: &str, cx: &ExecCtx) -> Result<Outcome> {
    let toks = tokens(sql)?;
    let mut p = Cursor {
        sql,
        toks: &toks,
        pos: 0,
    };
    p.word("DROP")?;
    p.word("TRIGGER")?;
    let if_exists = p.if_words(&["IF", "EXISTS"]);
    let (db, name) = p.qualified()?;
    if p.pos < toks.len() {
        return Err(p.error());
    }
    let db = db
        .or_else(|| cx.current_db.clone())
        .ok_or(Error::NoDatabaseSelected)?;
    if let Some(t) = cx
        .catalog
        .triggers(Some(&db))
        .into_iter()
        .find(|t| t.name.eq_ignore_ascii_case(&name))
    {
        crate::statements::ddl_locks::lock_table_for_ddl(cx, &db, &t.table)?;
    }
    if !cx.catalog.drop_trigger(&db, &name)? {
        if !if_exists {
            return Err(Error::TriggerDoesNotExist);
        }
        cx.env.warn(
            crate::expr::WarnLevel::Note,
            1360,
            Error::TriggerDoesNotExist.to_string(),
        );
    }
    Ok(Outcome::ok(0))
}

/// What MySQL checks when a trigger is created: NEW and OLD exist for the event and
/// name columns of the table, NEW is assigned only BEFORE, no result sets.
fn check_body(p: &Program, def: &TableDef, timing: Timing, event: Event) -> Result<()> {
    let mut err = None;
    let check_col = |row: &'static str, col: &str| -> Result<()> {
        if (row == "NEW" && event == Event::Delete) || (row == "OLD" && event == Event::Insert) {
            return Err(Error::TriggerNoSuchRow {
                row,
                event: event.word(),
            });
        }
        if def.column_index(col).is_none() {
            return Err(Error::UnknownColumn {
                column: col.to_string(),
                context: row.into(),
            });
        }
        Ok(())
    };
    visit(&p.body, &mut |refs, targets, select| {
        if err.is_some() {
            return;
        }
        for r in refs {
            let e = match r {
                Ref::New(c) => check_col("NEW", c),
                Ref::Old(c) => check_col("OLD", c),
                Ref::Var(_) => Ok(()),
            };
            if let Err(e) = e {
                err = Some(e);
                return;
            }
        }
        for t in targets {
            let e = match t {
                Target::New(c) => check_col("NEW", c).and_then(|()| {
                    if timing == Timing::After {
                        Err(Error::TriggerCantChangeRow {
                            row: "NEW",
                            after: true,
                        })
                    } else {
                        Ok(())
                    }
                }),
                Target::Old(_) => Err(Error::TriggerCantChangeRow {
                    row: "OLD",
                    after: false,
                }),
                _ => Ok(()),
            };
            if let Err(e) = e {
                err = Some(e);
                return;
            }
        }
        if select {
            err = Some(Error::ResultSetFromProgram("trigger"));
        }
    });
    for c in &p.cursors {
        for r in &c.refs {
            if let Ref::New(col) | Ref::Old(col) = r {
                let row = if matches!(r, Ref::New(_)) {
                    "NEW"
                } else {
                    "OLD"
                };
                check_col(row, col)?;
            }
        }
    }
    err.map_or(Ok(()), Err)
}

/// What [`visit`] calls for each statement: its placeholder references, its assignment
/// targets, and whether it is a SELECT that would send a result set.
pub type Visitor<'a> = dyn FnMut(&[Ref], &[Target], bool) + 'a;

/// Calls `f` for each statement of `s`, nested ones too.
pub fn visit(s: &Stmt, f: &mut Visitor) {
    let list = |l: &[Stmt], f: &mut Visitor| {
        for s in l {
            visit(s, f);
        }
    };
    match s {
        Stmt::Block { handlers, body, .. } => {
            for h in handlers {
                visit(&h.body, f);
            }
            list(body, f);
        }
        Stmt::Declare { default, .. } => {
            if let Some(d) = default {
                f(&d.refs, &[], false);
            }
        }
        Stmt::Set(items) => {
            for (t, e) in items {
                f(&e.refs, std::slice::from_ref(t), false);
            }
        }
        Stmt::If {
            branches,
            otherwise,
        }
        | Stmt::Case {
            branches,
            otherwise,
        } => {
            for (c, b) in branches {
                f(&c.refs, &[], false);
                list(b, f);
            }
            if let Some(o) = otherwise {
                list(o, f);
            }
        }
        Stmt::While { cond, body, .. } => {
            f(&cond.refs, &[], false);
            list(body, f);
        }
        Stmt::Repeat { body, until, .. } => {
            list(body, f);
            f(&until.refs, &[], false);
        }
        Stmt::Loop { body, .. } => list(body, f),
        Stmt::Return(e) => f(&e.refs, &[], false),
        Stmt::Signal(sig) => {
            for (_, e) in &sig.items {
                f(&e.refs, &[], false);
            }
        }
        Stmt::Fetch { into, .. } => f(&[], into, false),
        Stmt::Query { sql, into } => {
            let select = into.is_none() && {
                let w = crate::parse::lex::first_word(&sql.text);
                w == "SELECT" || w == "WITH" || w == "SHOW" || w == "TABLE" || w == "VALUES"
            };
            f(&sql.refs, into.as_deref().unwrap_or(&[]), select);
        }
        Stmt::Call { args, targets, .. } => {
            for a in args {
                f(&a.refs, &[], false);
            }
            let t: Vec<Target> = targets.iter().flatten().cloned().collect();
            f(&[], &t, false);
        }
        Stmt::Leave(_) | Stmt::Iterate(_) | Stmt::Open(_) | Stmt::Close(_) => {}
    }
}

/// A walk over a DDL statement's tokens.
pub(crate) struct Cursor<'a> {
    pub sql: &'a str,
    pub toks: &'a [Token],
    pub pos: usize,
}

impl Cursor<'_> {
    /// The statement from the current token to its end, trimmed of a final `;`: the
    /// body of a trigger or routine (an error when nothing is left).
    pub fn rest_as_body(&self) -> Result<String> {
        let Some(start) = self.toks.get(self.pos).map(|t| t.start) else {
            return Err(self.error());
        };
        Ok(self.sql[start..]
            .trim()
            .trim_end_matches(';')
            .trim()
            .to_string())
    }

    pub fn error(&self) -> Error {
        let at = self.toks.get(self.pos).map_or(self.sql.len(), |t| t.start);
        Error::Syntax(self.sql[at..].chars().take(80).collect())
    }

    pub fn word(&mut self, w: &str) -> Result<()> {
        if self.toks.get(self.pos).is_some_and(|t| t.is(w)) {
            self.pos += 1;
            Ok(())
        } else {
            Err(self.error())
        }
    }

    /// Consumes the words `ws` when they come next (all of them), true if so.
    pub fn if_words(&mut self, ws: &[&str]) -> bool {
        let all = ws
            .iter()
            .enumerate()
            .all(|(i, w)| self.toks.get(self.pos + i).is_some_and(|t| t.is(w)));
        if all {
            self.pos += ws.len();
        }
        all
    }

    pub fn name(&mut self) -> Result<String> {
        match self.toks.get(self.pos) {
            Some(t) if t.is_name() => {
                self.pos += 1;
                Ok(t.value.clone())
            }
            _ => Err(self.error()),
        }
    }

    /// `[db.]name`
    pub fn qualified(&mut self) -> Result<(Option<String>, String)> {
        let first = self.name()?;
        if self.toks.get(self.pos).is_some_and(|t| t.is_punct(".")) {
            self.pos += 1;
            Ok((Some(first), self.name()?))
        } else {
            Ok((None, first))
        }
    }

    /// `DEFINER = user[@host] | CURRENT_USER[()]`, as `user@host`.
    pub fn definer(&mut self) -> Result<Option<String>> {
        if !self.if_words(&["DEFINER"]) {
            return Ok(None);
        }
        if !self.toks.get(self.pos).is_some_and(|t| t.is_punct("=")) {
            return Err(self.error());
        }
        self.pos += 1;
        if self.if_words(&["CURRENT_USER"]) {
            if self.toks.get(self.pos).is_some_and(|t| t.is_punct("(")) {
                self.pos += 1;
                if !self.toks.get(self.pos).is_some_and(|t| t.is_punct(")")) {
                    return Err(self.error());
                }
                self.pos += 1;
            }
            return Ok(None);
        }
        let user = match self.toks.get(self.pos) {
            Some(t) if t.is_name() || t.kind == Kind::Str => t.value.clone(),
            _ => return Err(self.error()),
        };
        self.pos += 1;
        let host = match self.toks.get(self.pos) {
            Some(t) if t.kind == Kind::Variable => {
                self.pos += 1;
                t.value
                    .trim_start_matches('@')
                    .trim_matches(|c| c == '\'' || c == '"' || c == '`')
                    .to_string()
            }
            _ => "%".to_string(),
        };
        Ok(Some(format!("{user}@{host}")))
    }
}
