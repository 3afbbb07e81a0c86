//! The compound-statement parser: a stored program's body (`BEGIN … END` with its
//! DECLAREs, IF, CASE, WHILE, REPEAT, LOOP, LEAVE, ITERATE, RETURN, SIGNAL, cursors,
//! handlers) into the tree of `routines::ast`. sqlparser does not parse MySQL's
//! compound statements, so this is hand-written over `routines::lex` tokens; every
//! expression and plain statement inside is cut out of the text with its variable
//! references turned into placeholders, and left for the ordinary parser and planner
//! when it first runs.

use crate::routines::ast::*;
use crate::routines::lex::{tokens, Kind, Token};
use std::collections::HashMap;
use strata_types::{ColumnDef, Error, Result};

/// What kind of program a body belongs to: which names it may use.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Context {
    /// `NEW.col` / `OLD.col` are the row's columns.
    Trigger,
    Procedure,
    /// RETURN is allowed.
    Function,
}

/// Parses `text` (a whole body: one statement, compound or not) with `params` as the
/// first variable slots.
pub fn parse_program(
    text: &str,
    params: Vec<(String, Option<ColumnDef>)>,
    cx: Context,
) -> Result<Program> {
    let toks = tokens(text)?;
    let mut p = Parser {
        text,
        toks,
        pos: 0,
        vars: Vec::new(),
        scopes: vec![Scope::default()],
        labels: Vec::new(),
        next_id: 0,
        cursors: Vec::new(),
        cx,
    };
    for (name, ty) in params {
        let slot = p.vars.len();
        p.scopes[0].vars.insert(name.to_ascii_lowercase(), slot);
        p.vars.push((name, ty));
    }
    let body = p.statement()?;
    if p.peek().is_some_and(|t| t.is_punct(";")) {
        p.pos += 1;
    }
    if let Some(t) = p.peek() {
        return Err(p.syntax_at(t.start));
    }
    Ok(Program {
        body,
        vars: p.vars,
        cursors: p.cursors,
    })
}

#[derive(Default)]
struct Scope {
    vars: HashMap<String, usize>,
    conditions: HashMap<String, Condition>,
    cursors: HashMap<String, usize>,
}

struct Parser<'a> {
    text: &'a str,
    toks: Vec<Token>,
    pos: usize,
    vars: Vec<(String, Option<ColumnDef>)>,
    scopes: Vec<Scope>,
    /// Enclosing labelled statements: (label, id, is a loop).
    labels: Vec<(Option<String>, usize, bool)>,
    next_id: usize,
    cursors: Vec<Sql>,
    cx: Context,
}

/// Words that end a statement list.
const LIST_END: [&str; 5] = ["END", "ELSE", "ELSEIF", "UNTIL", "WHEN"];

impl<'a> Parser<'a> {
    fn peek(&self) -> Option<&Token> {
        self.toks.get(self.pos)
    }

    fn peek_is(&self, w: &str) -> bool {
        self.peek().is_some_and(|t| t.is(w))
    }

    fn at(&self, i: usize) -> Option<&Token> {
        self.toks.get(i)
    }

    fn syntax_at(&self, offset: usize) -> Error {
        Error::Syntax(
            self.text[offset.min(self.text.len())..]
                .chars()
                .take(80)
                .collect(),
        )
    }

    fn here_error(&self) -> Error {
        self.syntax_at(self.peek().map_or(self.text.len(), |t| t.start))
    }

    fn expect(&mut self, w: &str) -> Result<()> {
        if self.peek_is(w) {
            self.pos += 1;
            Ok(())
        } else {
            Err(self.here_error())
        }
    }

    fn expect_punct(&mut self, p: &str) -> Result<()> {
        if self.peek().is_some_and(|t| t.is_punct(p)) {
            self.pos += 1;
            Ok(())
        } else {
            Err(self.here_error())
        }
    }

    fn name(&mut self) -> Result<String> {
        match self.peek() {
            Some(t) if t.is_name() => {
                let v = t.value.clone();
                self.pos += 1;
                Ok(v)
            }
            _ => Err(self.here_error()),
        }
    }

    fn lookup_var(&self, name: &str) -> Option<usize> {
        let key = name.to_ascii_lowercase();
        self.scopes
            .iter()
            .rev()
            .find_map(|s| s.vars.get(&key).copied())
    }

    fn new_id(&mut self) -> usize {
        self.next_id += 1;
        self.next_id
    }

    /// One statement (without its terminating `;`).
    fn statement(&mut self) -> Result<Stmt> {
        // Nested blocks recurse: a body deeper than the stack allows is 1436, not a crash.
        strata_types::stack::check()?;
        let Some(t) = self.peek().cloned() else {
            return Err(self.here_error());
        };
        // `label: BEGIN|LOOP|WHILE|REPEAT`
        if t.is_name() && self.at(self.pos + 1).is_some_and(|n| n.is_punct(":")) {
            let label = t.value.clone();
            self.pos += 2;
            let Some(kw) = self.peek().cloned() else {
                return Err(self.here_error());
            };
            if self.labels.iter().any(|l| {
                l.0.as_deref()
                    .is_some_and(|x| x.eq_ignore_ascii_case(&label))
            }) {
                return Err(Error::DuplicateLabel(label));
            }
            return self.labelled(Some(label), &kw);
        }
        if ["BEGIN", "LOOP", "WHILE", "REPEAT"].iter().any(|w| t.is(w)) {
            // `BEGIN WORK` is a transaction statement, not a block.
            if !(t.is("BEGIN") && self.at(self.pos + 1).is_some_and(|n| n.is("WORK"))) {
                return self.labelled(None, &t);
            }
        }
        if t.is("DECLARE") {
            return Err(Error::Syntax(format!(
                "DECLARE{}",
                self.text[t.end..].chars().take(70).collect::<String>()
            )));
        }
        if t.is("SET") {
            if let Some(s) = self.set()? {
                return Ok(s);
            }
        }
        if t.is("IF") && !self.at(self.pos + 1).is_some_and(|n| n.is("EXISTS")) {
            return self.if_statement();
        }
        if t.is("CASE") {
            return self.case_statement();
        }
        if t.is("LEAVE") || t.is("ITERATE") {
            self.pos += 1;
            let label = self.name()?;
            let found = self.labels.iter().rev().find(|l| {
                l.0.as_deref()
                    .is_some_and(|x| x.eq_ignore_ascii_case(&label))
            });
            let statement = if t.is("LEAVE") { "LEAVE" } else { "ITERATE" };
            return match found {
                Some(&(_, id, is_loop)) if t.is("LEAVE") || is_loop => Ok(if t.is("LEAVE") {
                    Stmt::Leave(id)
                } else {
                    Stmt::Iterate(id)
                }),
                _ => Err(Error::NoSuchLabel { statement, label }),
            };
        }
        if t.is("RETURN") {
            if self.cx != Context::Function {
                return Err(Error::ReturnOutsideFunction);
            }
            self.pos += 1;
            let e = self.expr_until(&[], false)?;
            return Ok(Stmt::Return(e));
        }
        if t.is("SIGNAL") || t.is("RESIGNAL") {
            return self.signal();
        }
        if t.is("OPEN") || t.is("CLOSE") {
            self.pos += 1;
            let c = self.cursor()?;
            return Ok(if t.is("OPEN") {
                Stmt::Open(c)
            } else {
                Stmt::Close(c)
            });
        }
        if t.is("FETCH") {
            self.pos += 1;
            if self.peek_is("NEXT") {
                self.pos += 1;
                self.expect("FROM")?;
            } else if self.peek_is("FROM") {
                self.pos += 1;
            }
            let cursor = self.cursor()?;
            self.expect("INTO")?;
            let mut into = vec![self.target()?];
            while self.peek().is_some_and(|t| t.is_punct(",")) {
                self.pos += 1;
                into.push(self.target()?);
            }
            return Ok(Stmt::Fetch { cursor, into });
        }
        if t.is("CALL") {
            return self.call();
        }
        for w in [
            "COMMIT",
            "ROLLBACK",
            "START",
            "BEGIN",
            "SAVEPOINT",
            "RELEASE",
            "LOCK",
            "UNLOCK",
        ] {
            if t.is(w) {
                return Err(if self.cx == Context::Procedure {
                    Error::NotSupported(format!("{w} inside a stored procedure"))
                } else {
                    Error::CommitInProgram
                });
            }
        }
        self.plain()
    }

    /// A statement that may carry a label: a block or a loop.
    fn labelled(&mut self, label: Option<String>, kw: &Token) -> Result<Stmt> {
        let id = self.new_id();
        let is_loop = !kw.is("BEGIN");
        self.labels.push((label.clone(), id, is_loop));
        self.pos += 1;
        let r = if kw.is("BEGIN") {
            self.block(id)
        } else if kw.is("LOOP") {
            let body = self.list()?;
            self.expect("END")?;
            self.expect("LOOP")?;
            Ok(Stmt::Loop { id, body })
        } else if kw.is("WHILE") {
            let cond = self.expr_until(&["DO"], true)?;
            self.expect("DO")?;
            let body = self.list()?;
            self.expect("END")?;
            self.expect("WHILE")?;
            Ok(Stmt::While { id, cond, body })
        } else if kw.is("REPEAT") {
            let body = self.list()?;
            self.expect("UNTIL")?;
            let until = self.expr_until(&["END"], true)?;
            self.expect("END")?;
            self.expect("REPEAT")?;
            Ok(Stmt::Repeat { id, body, until })
        } else {
            Err(self.here_error())
        };
        self.labels.pop();
        let s = r?;
        // An end label must repeat the begin label.
        if let Some(t) = self.peek() {
            if t.is_name() && !t.is_punct(";") && !LIST_END.iter().any(|w| t.is(w)) {
                let end = t.value.clone();
                match &label {
                    Some(l) if l.eq_ignore_ascii_case(&end) => self.pos += 1,
                    _ => return Err(Error::EndLabelMismatch(end)),
                }
            }
        }
        Ok(s)
    }

    /// The inside of `BEGIN … END` (BEGIN already read).
    fn block(&mut self, id: usize) -> Result<Stmt> {
        self.scopes.push(Scope::default());
        let r = self.block_inner(id);
        self.scopes.pop();
        r
    }

    fn block_inner(&mut self, id: usize) -> Result<Stmt> {
        let mut handlers = Vec::new();
        let mut body = Vec::new();
        let mut cursors = Vec::new();
        loop {
            if self.peek_is("END") {
                self.pos += 1;
                break;
            }
            if self.peek().is_none() {
                return Err(self.here_error());
            }
            if self.peek_is("DECLARE") {
                self.pos += 1;
                self.declare(&mut handlers, &mut body, &mut cursors)?;
            } else {
                body.push(self.statement()?);
            }
            self.expect_punct(";")?;
        }
        Ok(Stmt::Block {
            id,
            handlers,
            body,
            cursors,
        })
    }

    /// Statements up to one of [`LIST_END`], each ended by `;`.
    fn list(&mut self) -> Result<Vec<Stmt>> {
        let mut out = Vec::new();
        while let Some(t) = self.peek() {
            if LIST_END.iter().any(|w| t.is(w)) {
                break;
            }
            out.push(self.statement()?);
            self.expect_punct(";")?;
        }
        Ok(out)
    }

    fn declare(
        &mut self,
        handlers: &mut Vec<Handler>,
        body: &mut Vec<Stmt>,
        cursors: &mut Vec<usize>,
    ) -> Result<()> {
        // DECLARE {CONTINUE|EXIT|UNDO} HANDLER FOR …
        if let Some(kind) = self.peek().and_then(|t| {
            if t.is("CONTINUE") {
                Some(HandlerKind::Continue)
            } else if t.is("EXIT") {
                Some(HandlerKind::Exit)
            } else {
                None
            }
        }) {
            if self.at(self.pos + 1).is_some_and(|t| t.is("HANDLER")) {
                self.pos += 2;
                self.expect("FOR")?;
                let mut conditions = vec![self.condition_value(true)?];
                while self.peek().is_some_and(|t| t.is_punct(",")) {
                    self.pos += 1;
                    conditions.push(self.condition_value(true)?);
                }
                // The handler's body sees the block's variables but is no loop target.
                let body = self.statement()?;
                handlers.push(Handler {
                    kind,
                    conditions,
                    body: Box::new(body),
                });
                return Ok(());
            }
        }
        if self.peek_is("UNDO") {
            return Err(Error::NotSupported("UNDO handlers".into()));
        }
        let first = self.name()?;
        if self.peek_is("CONDITION") {
            self.pos += 1;
            self.expect("FOR")?;
            let c = self.condition_value(false)?;
            let scope = self
                .scopes
                .last_mut()
                .ok_or_else(|| Error::Internal("scope".into()))?;
            scope.conditions.insert(first.to_ascii_lowercase(), c);
            return Ok(());
        }
        if self.peek_is("CURSOR") {
            self.pos += 1;
            self.expect("FOR")?;
            let start = self.pos;
            let end = self.statement_end();
            let sql = self.render(start, end, None)?;
            self.pos = end;
            let slot = self.cursors.len();
            self.cursors.push(sql);
            cursors.push(slot);
            let scope = self
                .scopes
                .last_mut()
                .ok_or_else(|| Error::Internal("scope".into()))?;
            scope.cursors.insert(first.to_ascii_lowercase(), slot);
            return Ok(());
        }
        let mut names = vec![first];
        while self.peek().is_some_and(|t| t.is_punct(",")) {
            self.pos += 1;
            names.push(self.name()?);
        }
        // The type runs to DEFAULT or the end of the statement.
        let ty_start = self.pos;
        while let Some(t) = self.peek() {
            if t.is("DEFAULT") || t.is_punct(";") {
                break;
            }
            self.pos += 1;
        }
        if self.pos == ty_start {
            return Err(self.here_error());
        }
        let ty_text = &self.text[self.toks[ty_start].start..self.toks[self.pos - 1].end];
        let col = column_of_type(ty_text)?;
        let default = if self.peek_is("DEFAULT") {
            self.pos += 1;
            Some(self.expr_until(&[], false)?)
        } else {
            None
        };
        let mut slots = Vec::new();
        for n in names {
            let key = n.to_ascii_lowercase();
            let scope = self
                .scopes
                .last_mut()
                .ok_or_else(|| Error::Internal("scope".into()))?;
            if scope.vars.contains_key(&key) {
                return Err(Error::DuplicateVariable(n));
            }
            let slot = self.vars.len();
            scope.vars.insert(key, slot);
            let mut c = col.clone();
            c.name = n.clone();
            self.vars.push((n, Some(c)));
            slots.push(slot);
        }
        body.push(Stmt::Declare { slots, default });
        Ok(())
    }

    /// A condition value: SQLSTATE [VALUE] 'xxxxx', an error number, or (in a handler)
    /// SQLEXCEPTION, SQLWARNING, NOT FOUND or a declared condition's name.
    fn condition_value(&mut self, in_handler: bool) -> Result<Condition> {
        let Some(t) = self.peek().cloned() else {
            return Err(self.here_error());
        };
        self.pos += 1;
        if t.is("SQLSTATE") {
            if self.peek_is("VALUE") {
                self.pos += 1;
            }
            return self.sqlstate();
        }
        if t.kind == Kind::Number {
            let n: u16 = t.value.parse().map_err(|_| self.syntax_at(t.start))?;
            if n == 0 {
                return Err(Error::Signal {
                    code: 1064,
                    sqlstate: "42000".into(),
                    message: "Incorrect CONDITION value: '0'".into(),
                });
            }
            return Ok(Condition::Errno(n));
        }
        if in_handler {
            if t.is("SQLEXCEPTION") {
                return Ok(Condition::SqlException);
            }
            if t.is("SQLWARNING") {
                return Ok(Condition::SqlWarning);
            }
            if t.is("NOT") {
                self.expect("FOUND")?;
                return Ok(Condition::NotFound);
            }
            if t.is_name() {
                return self.named_condition(&t.value);
            }
        }
        Err(self.syntax_at(t.start))
    }

    fn sqlstate(&mut self) -> Result<Condition> {
        match self.peek().cloned() {
            Some(s) if s.kind == Kind::Str => {
                self.pos += 1;
                let ok = s.value.len() == 5
                    && s.value.bytes().all(|b| b.is_ascii_alphanumeric())
                    && !s.value.starts_with("00");
                if !ok {
                    return Err(Error::Signal {
                        code: 1407,
                        sqlstate: "42000".into(),
                        message: format!("Bad SQLSTATE: '{}'", s.value),
                    });
                }
                Ok(Condition::SqlState(s.value.to_ascii_uppercase()))
            }
            _ => Err(self.here_error()),
        }
    }

    fn named_condition(&self, name: &str) -> Result<Condition> {
        let key = name.to_ascii_lowercase();
        self.scopes
            .iter()
            .rev()
            .find_map(|s| s.conditions.get(&key).cloned())
            .ok_or_else(|| Error::UndeclaredCondition(name.to_string()))
    }

    fn cursor(&mut self) -> Result<usize> {
        let n = self.name()?;
        let key = n.to_ascii_lowercase();
        self.scopes
            .iter()
            .rev()
            .find_map(|s| s.cursors.get(&key).copied())
            .ok_or(Error::UndeclaredCursor(n))
    }

    /// `SET a = x, NEW.c = y, @u = z` over program variables; None when the SET is of
    /// something else (left to the plain-statement path to refuse).
    fn set(&mut self) -> Result<Option<Stmt>> {
        let save = self.pos;
        self.pos += 1;
        let mut out = Vec::new();
        loop {
            let Some(t) = self.peek().cloned() else {
                return Err(self.here_error());
            };
            let target = if t.kind == Kind::Variable && !t.value.starts_with("@@") {
                self.pos += 1;
                Target::User(user_var_name(&t.value))
            } else if t.is_name()
                && (t.is("NEW") || t.is("OLD"))
                && self.cx == Context::Trigger
                && self.at(self.pos + 1).is_some_and(|d| d.is_punct("."))
            {
                self.pos += 2;
                let col = self.name()?;
                if t.is("NEW") {
                    Target::New(col)
                } else {
                    Target::Old(col)
                }
            } else if t.is_name() && self.lookup_var(&t.value).is_some() {
                self.pos += 1;
                Target::Var(self.lookup_var(&t.value).unwrap_or(0))
            } else {
                if out.is_empty() && (t.is("NAMES") || t.is("CHARACTER") || t.is("TRANSACTION")) {
                    self.pos = save;
                    return Ok(None);
                }
                return Err(Error::NotSupported(format!(
                    "SET of a system variable ({}) inside a stored program",
                    t.value
                )));
            };
            if !(self
                .peek()
                .is_some_and(|t| t.is_punct("=") || t.is_punct(":=")))
            {
                return Err(self.here_error());
            }
            self.pos += 1;
            let e = self.expr_until(&[","], false)?;
            out.push((target, e));
            if self.peek().is_some_and(|t| t.is_punct(",")) {
                self.pos += 1;
                continue;
            }
            break;
        }
        Ok(Some(Stmt::Set(out)))
    }

    fn if_statement(&mut self) -> Result<Stmt> {
        self.pos += 1;
        let mut branches = Vec::new();
        let mut otherwise = None;
        loop {
            let cond = self.expr_until(&["THEN"], true)?;
            self.expect("THEN")?;
            let body = self.list()?;
            branches.push((cond, body));
            if self.peek_is("ELSEIF") {
                self.pos += 1;
                continue;
            }
            if self.peek_is("ELSE") {
                self.pos += 1;
                otherwise = Some(self.list()?);
            }
            break;
        }
        self.expect("END")?;
        self.expect("IF")?;
        Ok(Stmt::If {
            branches,
            otherwise,
        })
    }

    fn case_statement(&mut self) -> Result<Stmt> {
        self.pos += 1;
        let operand = if self.peek_is("WHEN") {
            None
        } else {
            let a = self.pos;
            let b = self.expr_end(&["WHEN"], true);
            if a == b {
                return Err(self.here_error());
            }
            self.pos = b;
            Some((a, b))
        };
        let mut branches = Vec::new();
        let mut otherwise = None;
        while self.peek_is("WHEN") {
            self.pos += 1;
            let a = self.pos;
            let b = self.expr_end(&["THEN"], true);
            if a == b {
                return Err(self.here_error());
            }
            let cond = match operand {
                // A simple CASE compares its operand with each WHEN value.
                Some((oa, ob)) => {
                    let left = self.render(oa, ob, None)?;
                    let right = self.render(a, b, None)?;
                    let n = left.refs.len();
                    let mut refs = left.refs;
                    refs.extend(right.refs);
                    Sql::new(
                        format!("({}) = ({})", left.text, shift_placeholders(&right.text, n)),
                        refs,
                    )
                }
                None => self.render(a, b, None)?,
            };
            self.pos = b;
            self.expect("THEN")?;
            let body = self.list()?;
            branches.push((cond, body));
        }
        if branches.is_empty() {
            return Err(self.here_error());
        }
        if self.peek_is("ELSE") {
            self.pos += 1;
            otherwise = Some(self.list()?);
        }
        self.expect("END")?;
        self.expect("CASE")?;
        Ok(Stmt::Case {
            branches,
            otherwise,
        })
    }

    fn signal(&mut self) -> Result<Stmt> {
        let resignal = self.peek_is("RESIGNAL");
        self.pos += 1;
        let condition = if self.peek_is("SQLSTATE") {
            self.pos += 1;
            if self.peek_is("VALUE") {
                self.pos += 1;
            }
            Some(self.sqlstate()?)
        } else if self.peek().is_some_and(|t| t.is_name() && !t.is("SET")) {
            let n = self.name()?;
            Some(self.named_condition(&n)?)
        } else if !resignal {
            return Err(self.here_error());
        } else {
            None
        };
        let mut items = Vec::new();
        if self.peek_is("SET") {
            self.pos += 1;
            loop {
                let item = self.name()?.to_ascii_uppercase();
                const ITEMS: [&str; 12] = [
                    "MESSAGE_TEXT",
                    "MYSQL_ERRNO",
                    "CLASS_ORIGIN",
                    "SUBCLASS_ORIGIN",
                    "CONSTRAINT_CATALOG",
                    "CONSTRAINT_SCHEMA",
                    "CONSTRAINT_NAME",
                    "CATALOG_NAME",
                    "SCHEMA_NAME",
                    "TABLE_NAME",
                    "COLUMN_NAME",
                    "CURSOR_NAME",
                ];
                if !ITEMS.contains(&item.as_str()) {
                    return Err(self.here_error());
                }
                self.expect_punct("=")?;
                let e = self.expr_until(&[","], false)?;
                items.push((item, e));
                if self.peek().is_some_and(|t| t.is_punct(",")) {
                    self.pos += 1;
                    continue;
                }
                break;
            }
        }
        Ok(Stmt::Signal(Signal {
            resignal,
            condition,
            items,
        }))
    }

    fn call(&mut self) -> Result<Stmt> {
        self.pos += 1;
        let first = self.name()?;
        let name = if self.peek().is_some_and(|t| t.is_punct(".")) {
            self.pos += 1;
            (Some(first), self.name()?)
        } else {
            (None, first)
        };
        let mut args = Vec::new();
        let mut targets = Vec::new();
        if self.peek().is_some_and(|t| t.is_punct("(")) {
            self.pos += 1;
            if self.peek().is_some_and(|t| t.is_punct(")")) {
                self.pos += 1;
            } else {
                loop {
                    let a = self.pos;
                    let b = self.expr_end(&[",", ")"], false);
                    if a == b {
                        return Err(self.here_error());
                    }
                    // A lone variable can take an OUT value back.
                    let target = if b == a + 1 {
                        let t = &self.toks[a];
                        if t.kind == Kind::Variable && !t.value.starts_with("@@") {
                            Some(Target::User(user_var_name(&t.value)))
                        } else if t.is_name() {
                            self.lookup_var(&t.value).map(Target::Var)
                        } else {
                            None
                        }
                    } else {
                        None
                    };
                    targets.push(target);
                    args.push(self.render(a, b, None)?);
                    self.pos = b;
                    if self.peek().is_some_and(|t| t.is_punct(",")) {
                        self.pos += 1;
                        continue;
                    }
                    self.expect_punct(")")?;
                    break;
                }
            }
        }
        Ok(Stmt::Call {
            name,
            args,
            targets,
        })
    }

    /// A plain SQL statement up to `;`; `SELECT … INTO` targets taken out.
    fn plain(&mut self) -> Result<Stmt> {
        let start = self.pos;
        let end = self.statement_end();
        if start == end {
            return Err(self.here_error());
        }
        let mut into = None;
        let mut skip = None;
        let first = &self.toks[start];
        if first.is("SELECT") || first.is("WITH") || first.is_punct("(") {
            let mut depth = 0i32;
            for i in start..end {
                let t = &self.toks[i];
                if t.is_punct("(") {
                    depth += 1;
                } else if t.is_punct(")") {
                    depth -= 1;
                } else if depth == 0 && t.is("INTO") {
                    let mut j = i + 1;
                    let mut targets = Vec::new();
                    self.pos = j;
                    loop {
                        targets.push(self.target()?);
                        j = self.pos;
                        if self.at(j).is_some_and(|t| t.is_punct(",")) && j < end {
                            self.pos = j + 1;
                            continue;
                        }
                        break;
                    }
                    skip = Some((i, j));
                    into = Some(targets);
                    break;
                }
            }
        }
        let sql = self.render(start, end, skip)?;
        self.pos = end;
        Ok(Stmt::Query { sql, into })
    }

    /// An assignment or INTO target.
    fn target(&mut self) -> Result<Target> {
        let Some(t) = self.peek().cloned() else {
            return Err(self.here_error());
        };
        if t.kind == Kind::Variable && !t.value.starts_with("@@") {
            self.pos += 1;
            return Ok(Target::User(user_var_name(&t.value)));
        }
        if self.cx == Context::Trigger
            && (t.is("NEW") || t.is("OLD"))
            && self.at(self.pos + 1).is_some_and(|d| d.is_punct("."))
        {
            self.pos += 2;
            let col = self.name()?;
            return Ok(if t.is("NEW") {
                Target::New(col)
            } else {
                Target::Old(col)
            });
        }
        if t.is_name() {
            self.pos += 1;
            return self
                .lookup_var(&t.value)
                .map(Target::Var)
                .ok_or(Error::UndeclaredVariable(t.value));
        }
        Err(self.here_error())
    }

    /// The index of the `;` (or end) that ends the statement at `self.pos`.
    fn statement_end(&self) -> usize {
        let mut depth = 0i32;
        let mut i = self.pos;
        while let Some(t) = self.at(i) {
            if t.is_punct("(") {
                depth += 1;
            } else if t.is_punct(")") {
                depth -= 1;
            } else if depth <= 0 && t.is_punct(";") {
                break;
            }
            i += 1;
        }
        i
    }

    /// Where an expression starting at `self.pos` ends: at one of `stops` (words or
    /// punctuation) outside parentheses and CASE … END, at `;`, or at the end. With
    /// `words_stop` false, only the punctuation in `stops` ends it.
    fn expr_end(&self, stops: &[&str], words_stop: bool) -> usize {
        let mut depth = 0i32;
        let mut cases = 0i32;
        let mut i = self.pos;
        while let Some(t) = self.at(i) {
            if depth == 0 && cases == 0 {
                if t.is_punct(";") {
                    break;
                }
                let stop = stops
                    .iter()
                    .any(|s| (t.kind == Kind::Punct && t.value == *s) || (words_stop && t.is(s)));
                if stop {
                    break;
                }
                if t.is_punct(")") {
                    break;
                }
            }
            if t.is_punct("(") {
                depth += 1;
            } else if t.is_punct(")") {
                depth -= 1;
            } else if t.is("CASE") {
                cases += 1;
            } else if t.is("END") && cases > 0 {
                cases -= 1;
            }
            i += 1;
        }
        i
    }

    /// An expression from here to one of `stops`, rendered.
    fn expr_until(&mut self, stops: &[&str], words_stop: bool) -> Result<Sql> {
        let a = self.pos;
        let b = self.expr_end(stops, words_stop);
        if a == b {
            return Err(self.here_error());
        }
        let s = self.render(a, b, None)?;
        self.pos = b;
        Ok(s)
    }

    /// The text of tokens `a..b` with variable references replaced by placeholders and
    /// the tokens `skip` (a SELECT's INTO clause) left out.
    fn render(&self, a: usize, b: usize, skip: Option<(usize, usize)>) -> Result<Sql> {
        if a >= b {
            return Err(self.here_error());
        }
        let mut text = String::new();
        let mut source = String::new();
        let mut refs = Vec::new();
        let mut last = self.toks[a].start;
        let mut source_from = self.toks[a].start;
        let kinds = StatementShape::of(&self.toks[a..b]);
        let mut i = a;
        let mut depth = 0i32;
        while i < b {
            if let Some((sa, sb)) = skip {
                if i == sa {
                    text.push_str(&self.text[last..self.toks[i].start]);
                    source.push_str(&self.text[source_from..self.toks[i].start]);
                    i = sb;
                    last = self.toks.get(i).map_or(self.toks[b - 1].end, |t| t.start);
                    source_from = last;
                    continue;
                }
            }
            let t = &self.toks[i];
            if t.is_punct("(") {
                depth += 1;
            } else if t.is_punct(")") {
                depth -= 1;
            }
            let prev = if i > 0 { self.at(i - 1) } else { None };
            let after_dot = prev.is_some_and(|p| p.is_punct("."));
            // `@`name`` (as PyMySQL's callproc writes it) → `@name`, which the SQL
            // parser reads, when the name needs no quotes.
            if t.kind == Kind::Variable && !t.value.starts_with("@@") {
                let name = user_var_name(&t.value);
                let plain = !name.is_empty()
                    && name
                        .bytes()
                        .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'$');
                if plain && t.value.len() != name.len() + 1 {
                    text.push_str(&self.text[last..t.start]);
                    text.push('@');
                    text.push_str(&name);
                    last = t.end;
                    i += 1;
                    continue;
                }
            }
            if self.cx == Context::Trigger
                && !after_dot
                && (t.is("NEW") || t.is("OLD"))
                && i + 2 < b + 1
                && self.at(i + 1).is_some_and(|d| d.is_punct("."))
                && self.at(i + 2).is_some_and(|c| c.is_name())
                && i + 2 < b
            {
                text.push_str(&self.text[last..t.start]);
                let col = self.toks[i + 2].value.clone();
                refs.push(if t.is("NEW") {
                    Ref::New(col)
                } else {
                    Ref::Old(col)
                });
                text.push_str(&format!("?{}", refs.len()));
                last = self.toks[i + 2].end;
                i += 3;
                continue;
            }
            if t.is_name() && !after_dot {
                if let Some(slot) = self.lookup_var(&t.value) {
                    let next = self.at(i + 1);
                    let before_dot_or_call =
                        i + 1 < b && next.is_some_and(|n| n.is_punct(".") || n.is_punct("("));
                    let named_position = prev.is_some_and(|p| {
                        ["AS", "INTO", "FROM", "JOIN", "UPDATE", "TABLE"]
                            .iter()
                            .any(|w| p.is(w))
                    });
                    let column_position = kinds.is_column_position(&self.toks, i, a, depth);
                    if !before_dot_or_call && !named_position && !column_position {
                        text.push_str(&self.text[last..t.start]);
                        refs.push(Ref::Var(slot));
                        text.push_str(&format!("?{}", refs.len()));
                        last = t.end;
                    }
                }
            }
            i += 1;
        }
        let end = self.toks[b - 1].end;
        if last < end {
            text.push_str(&self.text[last..end]);
        }
        if source_from < end {
            source.push_str(&self.text[source_from..end]);
        }
        let mut sql = Sql::new(text.trim().to_string(), refs);
        sql.source = source.trim().to_string();
        Ok(sql)
    }
}

/// Where in an INSERT or UPDATE a name is a column of the table, never a variable:
/// INSERT's column list and the left side of an assignment.
struct StatementShape {
    insert: bool,
    update: bool,
}

impl StatementShape {
    fn of(toks: &[Token]) -> StatementShape {
        let first = toks.first();
        StatementShape {
            insert: first.is_some_and(|t| t.is("INSERT") || t.is("REPLACE")),
            update: first.is_some_and(|t| t.is("UPDATE")),
        }
    }

    fn is_column_position(&self, toks: &[Token], i: usize, start: usize, depth: i32) -> bool {
        let prev = if i > start { toks.get(i - 1) } else { None };
        let next = toks.get(i + 1);
        let assigned = next.is_some_and(|n| n.is_punct("="))
            && prev.is_some_and(|p| p.is("SET") || p.is("UPDATE") || p.is_punct(","));
        if (self.update || self.insert) && assigned && depth == 0 {
            return true;
        }
        if self.insert && depth == 1 {
            // Inside the parentheses right after `INSERT INTO t` (the column list).
            let mut j = i;
            while j > start && !toks[j].is_punct("(") {
                j -= 1;
            }
            if j > start + 1 {
                let before = &toks[j - 1];
                let before2 = &toks[j - 2];
                return before.is_name()
                    && !before.is("VALUES")
                    && !before.is("VALUE")
                    && !before.is("SELECT")
                    && (before2.is("INTO")
                        || before2.is_punct(".")
                        || before2.is("INSERT")
                        || before2.is("REPLACE"));
            }
        }
        false
    }
}

/// `@name` / `@'name'` → name.
fn user_var_name(v: &str) -> String {
    let n = v.trim_start_matches('@');
    n.trim_matches(|c| c == '\'' || c == '"' || c == '`')
        .to_string()
}

/// Adds `n` to every `?k` placeholder of `text` (rendered text holds no others).
fn shift_placeholders(text: &str, n: usize) -> String {
    if n == 0 {
        return text.to_string();
    }
    let b = text.as_bytes();
    let mut out = String::with_capacity(text.len() + 4);
    let mut i = 0;
    let mut quote: Option<u8> = None;
    while i < b.len() {
        let c = b[i];
        match quote {
            Some(q) => {
                if c == b'\\' {
                    out.push_str(&text[i..(i + 2).min(b.len())]);
                    i += 2;
                    continue;
                }
                if c == q {
                    quote = None;
                }
            }
            None if c == b'\'' || c == b'"' || c == b'`' => quote = Some(c),
            None if c == b'?' => {
                let mut j = i + 1;
                while j < b.len() && b[j].is_ascii_digit() {
                    j += 1;
                }
                if let Ok(k) = text[i + 1..j].parse::<usize>() {
                    out.push_str(&format!("?{}", k + n));
                    i = j;
                    continue;
                }
            }
            None => {}
        }
        let e = {
            let mut e = i + 1;
            while e < b.len() && !text.is_char_boundary(e) {
                e += 1;
            }
            e
        };
        out.push_str(&text[i..e]);
        i = e;
    }
    out
}

/// The column definition a variable or parameter of type `ty` (SQL text) has.
pub fn column_of_type(ty: &str) -> Result<ColumnDef> {
    let stmts = crate::parse::parse(&format!("CREATE TABLE v (v {ty})"))?;
    let [sqlparser::ast::Statement::CreateTable(ct)] = stmts.as_slice() else {
        return Err(Error::Syntax(ty.to_string()));
    };
    let [c] = ct.columns.as_slice() else {
        return Err(Error::Syntax(ty.to_string()));
    };
    let built = crate::statements::ddl::build_column(
        c,
        strata_types::Collation::default(),
        strata_types::SqlMode::default(),
    )?;
    Ok(built.col)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn program(text: &str, cx: Context) -> Program {
        parse_program(text, vec![], cx).unwrap()
    }

    #[test]
    fn variables_become_placeholders_but_columns_stay() {
        let p = program(
            "BEGIN DECLARE x INT DEFAULT 1; DECLARE y INT; \
             INSERT INTO t (x, y) VALUES (x, NEW.a + y); \
             UPDATE t SET x = x + 1 WHERE t.x = y; END",
            Context::Trigger,
        );
        let Stmt::Block { body, .. } = &p.body else {
            panic!("block")
        };
        let Stmt::Query { sql, .. } = &body[2] else {
            panic!("insert")
        };
        assert_eq!(sql.text, "INSERT INTO t (x, y) VALUES (?1, ?2 + ?3)");
        assert_eq!(
            sql.refs,
            vec![Ref::Var(0), Ref::New("a".into()), Ref::Var(1)]
        );
        let Stmt::Query { sql, .. } = &body[3] else {
            panic!("update")
        };
        assert_eq!(sql.text, "UPDATE t SET x = ?1 + 1 WHERE t.x = ?2");
    }

    #[test]
    fn select_into_and_control_flow() {
        let p = program(
            "l1: BEGIN DECLARE n INT; SELECT COUNT(*) INTO n FROM t; \
             w: WHILE n > 0 DO SET n = n - 1; IF n = 2 THEN LEAVE l1; ELSEIF n = 3 THEN ITERATE w; END IF; END WHILE w; END l1",
            Context::Procedure,
        );
        let _ = p;
        // ITERATE of a label that is not a loop around it
        let e = parse_program("l1: BEGIN ITERATE l1; END", vec![], Context::Procedure);
        assert!(matches!(e, Err(Error::NoSuchLabel { .. })));
    }

    #[test]
    fn case_statement_compares_operand() {
        let p = program(
            "BEGIN DECLARE v INT; CASE v WHEN 1 THEN SET v = 2; ELSE BEGIN END; END CASE; END",
            Context::Procedure,
        );
        let Stmt::Block { body, .. } = &p.body else {
            panic!()
        };
        let Stmt::Case { branches, .. } = &body[1] else {
            panic!()
        };
        assert_eq!(branches[0].0.text, "(?1) = (1)");
    }

    #[test]
    fn errors_of_the_grammar() {
        assert!(matches!(
            parse_program("BEGIN SET z = 1; END", vec![], Context::Procedure),
            Err(Error::NotSupported(_)) | Err(Error::Syntax(_))
        ));
        assert!(matches!(
            parse_program(
                "BEGIN DECLARE a INT; DECLARE a INT; END",
                vec![],
                Context::Procedure
            ),
            Err(Error::DuplicateVariable(_))
        ));
        assert!(matches!(
            parse_program("a: BEGIN END b", vec![], Context::Procedure),
            Err(Error::EndLabelMismatch(_))
        ));
        assert!(matches!(
            parse_program("RETURN 1", vec![], Context::Procedure),
            Err(Error::ReturnOutsideFunction)
        ));
        assert!(matches!(
            parse_program("BEGIN COMMIT; END", vec![], Context::Trigger),
            Err(Error::CommitInProgram)
        ));
    }
}
