//! The tree a stored program's body parses into (`routines::parse`), which the
//! interpreter (`routines::interp`) walks. Names are resolved when parsing: a local
//! variable is a slot of the frame, a label or block an id, a cursor a slot of the
//! cursor table, so running a program looks nothing up by name.
//!
//! Every expression and plain statement inside a body is kept as SQL text ([`Sql`])
//! in which each reference to a local variable, `NEW.col` or `OLD.col` became a
//! placeholder `?N`; the interpreter binds it once with the ordinary planner (kept in
//! [`Sql::plan`]) and runs it with the current values as parameters, as MySQL's
//! `sp_instr` does with its items.

use std::sync::Mutex;
use strata_types::ColumnDef;

/// A parsed stored program.
pub struct Program {
    pub body: Stmt,
    /// Declared variables and parameters, by slot: name and declared type (None for
    /// a variable whose type is taken from its value).
    pub vars: Vec<(String, Option<ColumnDef>)>,
    /// Cursors, by slot.
    pub cursors: Vec<Sql>,
}

/// Where a placeholder's value comes from.
#[derive(Clone, Debug, PartialEq)]
pub enum Ref {
    Var(usize),
    New(String),
    Old(String),
}

/// SQL text of an expression or statement with its variable references as `?1`, `?2`…
pub struct Sql {
    pub text: String,
    /// The text as written (variables by name): result columns are named from it, as
    /// MySQL names `SELECT v` after the variable.
    pub source: String,
    pub refs: Vec<Ref>,
    /// The bound statement, kept by the runner between executions (opaque here).
    pub plan: PlanSlot,
}

pub type PlanSlot = Mutex<Option<std::sync::Arc<dyn std::any::Any + Send + Sync>>>;

impl Sql {
    pub fn new(text: String, refs: Vec<Ref>) -> Sql {
        Sql {
            source: text.clone(),
            text,
            refs,
            plan: Mutex::new(None),
        }
    }
}

/// Where an assignment or `INTO` puts a value.
#[derive(Clone, Debug, PartialEq)]
pub enum Target {
    Var(usize),
    New(String),
    Old(String),
    /// `@name`
    User(String),
}

#[derive(Clone, Copy, Debug, PartialEq)]
pub enum HandlerKind {
    Continue,
    Exit,
}

#[derive(Clone, Debug, PartialEq)]
pub enum Condition {
    SqlException,
    SqlWarning,
    NotFound,
    SqlState(String),
    Errno(u16),
}

pub struct Handler {
    pub kind: HandlerKind,
    pub conditions: Vec<Condition>,
    pub body: Box<Stmt>,
}

/// What SIGNAL / RESIGNAL raises: a SQLSTATE (None: RESIGNAL's current condition),
/// or a named condition resolved to one.
pub struct Signal {
    pub resignal: bool,
    pub condition: Option<Condition>,
    /// `SET MESSAGE_TEXT = …, MYSQL_ERRNO = …` (item name upper-cased).
    pub items: Vec<(String, Sql)>,
}

pub enum Stmt {
    /// `[label:] BEGIN … END`; `id` is the block's label id (EXIT handlers and LEAVE
    /// leave it).
    Block {
        id: usize,
        handlers: Vec<Handler>,
        body: Vec<Stmt>,
        /// Cursor slots declared in this block (closed when it ends).
        cursors: Vec<usize>,
    },
    /// `DECLARE a, b type [DEFAULT expr]`.
    Declare {
        slots: Vec<usize>,
        default: Option<Sql>,
    },
    Set(Vec<(Target, Sql)>),
    If {
        branches: Vec<(Sql, Vec<Stmt>)>,
        otherwise: Option<Vec<Stmt>>,
    },
    /// A CASE statement; a simple CASE's WHENs are compared with its operand in SQL.
    Case {
        branches: Vec<(Sql, Vec<Stmt>)>,
        otherwise: Option<Vec<Stmt>>,
    },
    While {
        id: usize,
        cond: Sql,
        body: Vec<Stmt>,
    },
    Repeat {
        id: usize,
        body: Vec<Stmt>,
        until: Sql,
    },
    Loop {
        id: usize,
        body: Vec<Stmt>,
    },
    Leave(usize),
    Iterate(usize),
    Return(Sql),
    Signal(Signal),
    Open(usize),
    Fetch {
        cursor: usize,
        into: Vec<Target>,
    },
    Close(usize),
    /// A plain statement; `into` the targets of `SELECT … INTO`.
    Query {
        sql: Sql,
        into: Option<Vec<Target>>,
    },
    /// `CALL name(args)`.
    Call {
        name: (Option<String>, String),
        args: Vec<Sql>,
        /// For each argument that is a plain variable, where an OUT value goes back.
        targets: Vec<Option<Target>>,
    },
}
