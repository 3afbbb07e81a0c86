//! Bound expressions and their evaluation. The binder (`bind.rs`) turns sqlparser's AST
//! into [`Expr`], resolving every column to a position in the executor's row, so
//! evaluation is a tree walk over `&[Value]` with no name lookups. Comparisons carry the
//! collation chosen at bind time; arithmetic and comparison follow MySQL's type rules
//! (integers stay exact, a string meets a number as a double, NULL propagates).

pub mod convert;
pub mod convert_member;
pub mod convert_temporal;
pub mod datetime;
pub mod env_overlay;
pub mod functions;
pub(crate) mod int_context;
pub mod json;
pub mod keys;
pub mod like_match;
#[cfg(test)]
pub mod test_env;

use functions::Func;
pub use like_match::like;
use std::borrow::Cow;
use std::cmp::Ordering;
use strata_types::memory::{self, Component, Grant, UNGRANTED};
use strata_types::value::{bits_value, parse_leading_f64};
use strata_types::{Collation, DateTime, Decimal, Error, Result, Value};

/// A user-level lock function's request ([`Env::user_lock`]): the lock name is
/// already checked (3057).
#[derive(Clone, Debug, PartialEq)]
pub enum UserLockCall {
    /// GET_LOCK(name, timeout): None waits for ever (a negative timeout).
    Get(String, Option<std::time::Duration>),
    Release(String),
    ReleaseAll,
    IsFree(String),
    IsUsed(String),
}

/// Session facts an expression may read: system and user variables, and the like.
pub trait Env {
    fn system_variable(&self, name: &str, global: bool) -> Result<Value>;
    /// `@@session.name` / `@@local.name`: 1238 for a variable that has no session
    /// value (a global-only one), as MySQL 8 refuses it when the statement is bound.
    fn check_session_scope(&self, _name: &str) -> Result<()> {
        Ok(())
    }
    fn user_variable(&self, name: &str) -> Value;
    fn last_insert_id(&self) -> u64;
    /// `LAST_INSERT_ID(expr)`: the session's value from now on, and the insert id the
    /// statement's OK packet reports when it generated none.
    fn set_last_insert_id(&self, _id: u64) {}
    /// `@name := expr` inside an expression.
    fn set_user_variable(&self, _name: &str, _value: Value) {}
    fn database(&self) -> Option<String>;
    fn user(&self) -> String;
    /// USER() (`account` false: the user and the client's host) or CURRENT_USER()
    /// (true: the account, `user@host pattern`).
    fn user_at_host(&self, _account: bool) -> String {
        format!("{}@localhost", self.user())
    }
    /// CURRENT_ROLE(): the active roles as `` `r`@`%` `` sorted and separated by commas,
    /// or `NONE`.
    fn current_role(&self) -> String {
        "NONE".into()
    }
    /// Whether the session's account may see database `db` (SHOW DATABASES lists only
    /// those); everything is visible without access control.
    fn sees_database(&self, _db: &str) -> bool {
        true
    }
    /// Whether the session's account may see table `db.table` (SHOW TABLES).
    fn sees_table(&self, _db: &str, _table: &str) -> bool {
        true
    }
    /// The rows of the account tables (`mysql.user`, information_schema's
    /// `USER_PRIVILEGES`, …) as this session's account sees them; None without an
    /// account store (they are then empty).
    fn account_rows(&self) -> Option<std::sync::Arc<dyn crate::catalog::systables::AccountRows>> {
        None
    }
    fn connection_id(&self) -> u64;
    /// The statement's start time, so NOW() is stable within a statement.
    fn now(&self) -> DateTime;
    fn found_rows(&self) -> u64 {
        0
    }
    fn row_count(&self) -> i64 {
        -1
    }
    /// RAND() without a seed: the next value of the session's generator (MySQL's
    /// per-connection one). Without a session, a generator seeded from the clock.
    fn random(&self) -> f64 {
        thread_local! {
            static STATE: std::cell::Cell<Option<functions::rand::RandState>> =
                const { std::cell::Cell::new(None) };
        }
        STATE.with(|s| {
            let mut st = s.get().unwrap_or_else(|| {
                let t = std::time::SystemTime::now()
                    .duration_since(std::time::UNIX_EPOCH)
                    .map_or(0, |d| d.as_nanos() as u64);
                functions::rand::RandState::from_seeds(t, t >> 17)
            });
            let v = st.next_f64();
            s.set(Some(st));
            v
        })
    }
    /// RAND(n) with a constant n: the next value of the call at `site` in this
    /// statement, seeded by its first evaluation. Without a statement to keep the
    /// sequence in, each call starts it again.
    fn seeded_random(&self, _site: usize, seed: i64) -> f64 {
        functions::rand::RandState::for_seed(seed).next_f64()
    }
    /// Whether a division by zero is error 1365 rather than a warning: an INSERT or
    /// UPDATE under strict mode with `ERROR_FOR_DIVISION_BY_ZERO`.
    fn division_by_zero_is_error(&self) -> bool {
        false
    }
    /// SLEEP(): waits `d`, or less when the statement is killed or runs out of
    /// `max_execution_time`; true when it was cut short. Without a session, it
    /// simply sleeps.
    fn sleep(&self, d: std::time::Duration) -> bool {
        std::thread::sleep(d);
        false
    }
    /// WAIT_FOR_EXECUTED_GTID_SET: waits until the server's gtid_executed holds `set`
    /// and its transactions are committed, at most `timeout` (None: for ever); Ok(true)
    /// when the timeout passed first. Without a binary log gtid_mode is OFF (1788).
    fn wait_for_executed_gtids(
        &self,
        set: &strata_types::gtid::GtidSet,
        timeout: Option<std::time::Duration>,
    ) -> Result<bool> {
        let _ = (set, timeout);
        Err(Error::GtidModeOff("use WAIT_FOR_EXECUTED_GTID_SET".into()))
    }
    /// GET_LOCK and its family: what [`UserLockCall`] asks, answered with the
    /// function's value. Without a session there are no user-level locks.
    fn user_lock(&self, call: UserLockCall) -> Result<Value> {
        let _ = call;
        Err(Error::NotSupported(
            "user-level locks outside a session".into(),
        ))
    }
    /// Rows a LOAD DATA statement already fed through its INSERT, so the conditions of
    /// the row being inserted name its line in the file ("at row N"); 0 otherwise.
    fn rows_before(&self) -> u64 {
        0
    }
    /// Whether the session's account holds the FILE privilege (LOAD_FILE()); false
    /// without a session.
    fn holds_file_privilege(&self) -> bool {
        false
    }
    /// Adds a note to the statement's diagnostics area (SHOW WARNINGS).
    fn warn(&self, _level: WarnLevel, _code: u16, _message: String) {}
    /// The first warning a strict INSERT or UPDATE turned into its error, taken (see
    /// `env_overlay`); the statement checks before it changes a row.
    fn take_strict_error(&self) -> Option<strata_types::Error> {
        None
    }
    /// The previous statement's diagnostics area, for SHOW WARNINGS.
    fn warnings(&self) -> Vec<Warning> {
        vec![]
    }
    /// How many conditions the statement has raised so far: all of them, where
    /// [`Env::warnings`] lists only the first `max_error_count` (MySQL's
    /// `Warnings: N` counts every one).
    fn warning_count(&self) -> usize {
        self.warnings().len()
    }
    /// Whether a scalar subquery that returns more than one row gives NULL with
    /// warning 1242 instead of that error: in an INSERT, UPDATE or DELETE with IGNORE
    /// (`env_overlay`).
    fn subquery_rows_are_warnings(&self) -> bool {
        false
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WarnLevel {
    Note,
    Warning,
    Error,
}

impl WarnLevel {
    pub fn name(self) -> &'static str {
        match self {
            WarnLevel::Note => "Note",
            WarnLevel::Warning => "Warning",
            WarnLevel::Error => "Error",
        }
    }
}

/// One entry of a diagnostics area.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Warning {
    pub level: WarnLevel,
    pub code: u16,
    pub message: String,
}

/// What evaluation needs besides the row.
pub struct EvalCtx<'a> {
    pub params: &'a [Value],
    pub env: &'a dyn Env,
    /// The values this query reads from the query enclosing it (a correlated subquery's
    /// outer columns, in the order of [`Subquery::correlated`]); read by [`Expr::OuterRef`].
    pub outer: &'a [Value],
    /// Runs subqueries; None where the statement has none (DML value lists, SET).
    pub runner: Option<&'a dyn SubqueryRunner>,
}

impl<'a> EvalCtx<'a> {
    pub fn new(params: &'a [Value], env: &'a dyn Env) -> EvalCtx<'a> {
        EvalCtx {
            params,
            env,
            outer: &[],
            runner: None,
        }
    }

    /// Whether a string function may build a result of `len` bytes. MySQL caps every
    /// string a function builds (REPEAT, REPLACE, CONCAT, LPAD, …) at the session's
    /// `max_allowed_packet`: past it the function returns NULL with warning 1301 rather
    /// than allocating, so one statement cannot exhaust the server's memory. Callers
    /// check the size before they build the string.
    pub fn fits_packet(&self, len: u64, func: &str) -> bool {
        let limit = self
            .env
            .system_variable("max_allowed_packet", false)
            .ok()
            .and_then(|v| v.to_i64())
            .map_or(DEFAULT_MAX_ALLOWED_PACKET, |n| n.max(0) as u64);
        if len <= limit {
            return true;
        }
        self.env.warn(
            WarnLevel::Warning,
            1301,
            format!("Result of {func}() was larger than max_allowed_packet ({limit}) - truncated"),
        );
        false
    }
}

/// MySQL 8's default `max_allowed_packet` (64 MiB), for an environment without the
/// variable.
const DEFAULT_MAX_ALLOWED_PACKET: u64 = 64 << 20;

/// A subquery inside an expression. Its plan lives in the statement's plan, found by
/// `id`; the expression keeps only what it must evaluate in its own row: the outer
/// values the subquery reads (`correlated`) and, for IN/ANY/ALL, the left operand.
#[derive(Clone, Debug)]
pub struct Subquery {
    pub id: usize,
    pub kind: SubqueryKind,
    /// Evaluated in the enclosing row; the subquery reads them as `OuterRef(i)`.
    pub correlated: Vec<Expr>,
}

#[derive(Clone, Debug)]
pub enum SubqueryKind {
    /// `(SELECT x …)`: its one value, NULL for no row, 1242 for more than one.
    Scalar,
    /// `[NOT] EXISTS (SELECT …)`
    Exists { negated: bool },
    /// `lhs [NOT] IN (SELECT …)`, `(a, b) IN (SELECT x, y …)`. `hashable`: the operand and
    /// the subquery's columns compare by value class (numbers with numbers, strings of
    /// one collation), so equal values have equal [`crate::expr::keys::group_key`] bytes and
    /// the subquery's rows can be probed as a hash set.
    In {
        lhs: Vec<Expr>,
        negated: bool,
        colls: Vec<Collation>,
        hashable: bool,
    },
    /// `lhs op ANY|SOME|ALL (SELECT …)`
    Quantified {
        lhs: Box<Expr>,
        op: CmpOp,
        all: bool,
        coll: Collation,
    },
}

/// The rows a subquery produced, with a hash set of them built on first probe.
///
/// Both are working memory of the statement (`memory/sql/subquery_results`): a result
/// past [`UNGRANTED`] bytes holds a grant for its rows and, once built, its hash set.
/// Neither can spill (expressions probe them row by row), so when the budget has no
/// room the statement waits for others to release theirs and then fails with 3170.
pub struct SubqueryRows {
    pub rows: Vec<Vec<Value>>,
    /// Bytes the rows take (as [`memory::row_bytes`] counts them, and their slots).
    bytes: usize,
    /// group_key bytes of every row without NULLs; whether some row has a NULL.
    probe: std::sync::OnceLock<(crate::hash_tables::FastSet<Vec<u8>>, bool)>,
    grant: std::sync::Mutex<Grant>,
}

impl SubqueryRows {
    /// Rows held without a grant (a few, or none).
    pub fn new(rows: Vec<Vec<Value>>) -> SubqueryRows {
        SubqueryRows::granted(rows, 0, Grant::unbounded_floor(Component::Subquery, 0))
    }

    /// Rows of `bytes` bytes, `grant` holding them when they are past [`UNGRANTED`].
    pub fn granted(rows: Vec<Vec<Value>>, bytes: usize, grant: Grant) -> SubqueryRows {
        SubqueryRows {
            rows,
            bytes,
            probe: std::sync::OnceLock::new(),
            grant: std::sync::Mutex::new(grant),
        }
    }

    /// Bytes the rows take.
    pub fn bytes(&self) -> usize {
        self.bytes
    }

    /// Bytes of working memory the rows (and hash set) hold a grant for.
    pub fn granted_bytes(&self) -> usize {
        self.grant.lock().map_or(0, |g| g.held())
    }

    fn probe(&self, colls: &[Collation]) -> Result<&(crate::hash_tables::FastSet<Vec<u8>>, bool)> {
        if let Some(p) = self.probe.get() {
            return Ok(p);
        }
        let mut grant = self
            .grant
            .lock()
            .map_err(|_| Error::Internal("subquery grant".into()))?;
        // The set's table (a slot of 24 bytes and a control byte per bucket, buckets a
        // power of two at most 7/8 full), then each key's block as it is built.
        let buckets = (self.rows.len() * 8 / 7 + 1).next_power_of_two();
        let mut bytes = self.bytes + buckets * 25;
        hold(&mut grant, bytes)?;
        let mut set = crate::hash_tables::FastSet::with_capacity_and_hasher(
            self.rows.len(),
            Default::default(),
        );
        let mut has_null = false;
        for r in &self.rows {
            if r.iter().any(Value::is_null) {
                has_null = true;
                continue;
            }
            let mut k = Vec::new();
            for (v, c) in r.iter().zip(colls) {
                crate::expr::keys::group_key(&mut k, v, *c);
            }
            bytes += memory::malloc_block(k.capacity());
            hold(&mut grant, bytes)?;
            set.insert(k);
        }
        drop(grant);
        Ok(self.probe.get_or_init(|| (set, has_null)))
    }
}

/// Holds `bytes` of a subquery's result in `grant` once they are past [`UNGRANTED`]
/// (within what is held already this is a comparison, no shared counter).
pub fn hold(grant: &mut Grant, bytes: usize) -> Result<()> {
    if bytes > UNGRANTED {
        grant.need(bytes)?;
    }
    Ok(())
}

/// Runs the subquery `id` of the statement with the given outer values (the executor
/// implements it; expressions only ask).
pub trait SubqueryRunner {
    fn rows(&self, id: usize, correlated: Vec<Value>) -> Result<std::rc::Rc<SubqueryRows>>;
    /// Whether the subquery `id` yields any row: `[NOT] EXISTS`, which needs no more than
    /// the first.
    fn exists(&self, id: usize, correlated: Vec<Value>) -> Result<bool> {
        Ok(!self.rows(id, correlated)?.rows.is_empty())
    }
    /// Scalar subquery `id` returned more than one row: error 1242 — or, where the
    /// statement's IGNORE makes that a warning (`Env::subquery_rows_are_warnings`),
    /// NULL with the warning; an uncorrelated subquery (`correlated` false) then keeps
    /// NULL for the rest of the execution and warns once, as MySQL evaluates it once.
    fn more_than_one_row(&self, _id: usize, _correlated: bool) -> Result<Value> {
        Err(Error::SubqueryRows)
    }
    /// The materialized rows of a derived table or CTE.
    fn slot_rows(&self, slot: usize) -> Result<std::rc::Rc<crate::temp_rows::TempRows>>;
    /// Runs a stored function.
    fn call_stored(&self, call: &StoredCall, _args: Vec<Value>) -> Result<Value> {
        Err(Error::NotSupported(format!(
            "a stored function ({}) here",
            call.name
        )))
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CmpOp {
    Eq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
    /// `<=>`: equality where NULL equals NULL.
    NullSafeEq,
}

impl CmpOp {
    /// The operator as SQL writes it (EXPLAIN's expression text, error 1267).
    pub fn symbol(self) -> &'static str {
        match self {
            CmpOp::Eq => "=",
            CmpOp::Ne => "<>",
            CmpOp::Lt => "<",
            CmpOp::Le => "<=",
            CmpOp::Gt => ">",
            CmpOp::Ge => ">=",
            CmpOp::NullSafeEq => "<=>",
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ArithOp {
    Add,
    Sub,
    Mul,
    Div,
    IntDiv,
    Mod,
}

#[derive(Clone, Debug)]
pub enum Expr {
    Literal(Value),
    /// The n-th `?` of a prepared (or normalized) statement.
    Param(usize),
    /// A position in the executor's row.
    Column(usize),
    Cmp(CmpOp, Box<Expr>, Box<Expr>, Collation),
    Arith(ArithOp, Box<Expr>, Box<Expr>),
    Neg(Box<Expr>),
    BitOp(char, Box<Expr>, Box<Expr>),
    And(Box<Expr>, Box<Expr>),
    Or(Box<Expr>, Box<Expr>),
    Xor(Box<Expr>, Box<Expr>),
    Not(Box<Expr>),
    IsNull(Box<Expr>, bool),
    /// `IS [NOT] TRUE/FALSE`: (expr, truth wanted, negated)
    IsTruth(Box<Expr>, bool, bool),
    Between {
        expr: Box<Expr>,
        low: Box<Expr>,
        high: Box<Expr>,
        negated: bool,
        coll: Collation,
    },
    InList {
        expr: Box<Expr>,
        list: Vec<Expr>,
        negated: bool,
        coll: Collation,
    },
    Like {
        expr: Box<Expr>,
        pattern: Box<Expr>,
        negated: bool,
        escape: u8,
        coll: Collation,
    },
    Case {
        operand: Option<Box<Expr>>,
        whens: Vec<(Expr, Expr)>,
        otherwise: Option<Box<Expr>>,
        coll: Collation,
    },
    Func(Func, Vec<Expr>),
    SystemVariable {
        name: String,
        global: bool,
    },
    UserVariable(String),
    /// A scalar subquery already run once (uncorrelated), or a constant folded value.
    Cached(Box<Value>),
    /// The i-th value the enclosing query passes to this (correlated) subquery.
    OuterRef(usize),
    Subquery(Box<Subquery>),
    /// A stored function's call: the function (opaque here; the executor runs it
    /// through the SubqueryRunner) and its arguments.
    StoredCall(StoredCall, Vec<Expr>),
}

/// A stored function bound into an expression, kept opaque so that expressions know
/// nothing of stored programs (`crate::context::StoredFunctionCall` is what it holds).
#[derive(Clone)]
pub struct StoredCall {
    pub name: String,
    pub f: std::sync::Arc<dyn std::any::Any + Send + Sync>,
}

impl std::fmt::Debug for StoredCall {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "StoredCall({})", self.name)
    }
}

impl Expr {
    pub fn lit(v: Value) -> Expr {
        Expr::Literal(v)
    }

    /// True when the expression reads no row column (constants, params, variables).
    pub fn is_row_independent(&self) -> bool {
        let mut independent = true;
        self.walk(&mut |e| {
            if matches!(e, Expr::Column(_)) {
                independent = false;
            }
        });
        independent
    }

    /// Highest row position read, if any.
    pub fn max_column(&self) -> Option<usize> {
        let mut max = None;
        self.walk(&mut |e| {
            if let Expr::Column(c) = e {
                max = Some(max.map_or(*c, |m: usize| m.max(*c)));
            }
        });
        max
    }

    /// Lowest row position read, if any.
    pub fn min_column(&self) -> Option<usize> {
        let mut min = None;
        self.walk(&mut |e| {
            if let Expr::Column(c) = e {
                min = Some(min.map_or(*c, |m: usize| m.min(*c)));
            }
        });
        min
    }

    pub fn walk(&self, f: &mut dyn FnMut(&Expr)) {
        f(self);
        match self {
            Expr::Cmp(_, a, b, _)
            | Expr::Arith(_, a, b)
            | Expr::BitOp(_, a, b)
            | Expr::And(a, b)
            | Expr::Or(a, b)
            | Expr::Xor(a, b) => {
                a.walk(f);
                b.walk(f);
            }
            Expr::Neg(a) | Expr::Not(a) | Expr::IsNull(a, _) | Expr::IsTruth(a, _, _) => a.walk(f),
            Expr::Between {
                expr, low, high, ..
            } => {
                expr.walk(f);
                low.walk(f);
                high.walk(f);
            }
            Expr::InList { expr, list, .. } => {
                expr.walk(f);
                list.iter().for_each(|e| e.walk(f));
            }
            Expr::Like { expr, pattern, .. } => {
                expr.walk(f);
                pattern.walk(f);
            }
            Expr::Case {
                operand,
                whens,
                otherwise,
                ..
            } => {
                if let Some(o) = operand {
                    o.walk(f);
                }
                for (w, t) in whens {
                    w.walk(f);
                    t.walk(f);
                }
                if let Some(o) = otherwise {
                    o.walk(f);
                }
            }
            Expr::Func(_, args) | Expr::StoredCall(_, args) => args.iter().for_each(|e| e.walk(f)),
            // A subquery reads the enclosing row through its correlated expressions (and
            // its left operand); its own columns belong to another row.
            Expr::Subquery(s) => {
                s.correlated.iter().for_each(|e| e.walk(f));
                match &s.kind {
                    SubqueryKind::In { lhs, .. } => lhs.iter().for_each(|e| e.walk(f)),
                    SubqueryKind::Quantified { lhs, .. } => lhs.walk(f),
                    SubqueryKind::Scalar | SubqueryKind::Exists { .. } => {}
                }
            }
            _ => {}
        }
    }

    /// Rewrites every column position with `f` (used when a predicate moves between
    /// row layouts, e.g. into an aggregate's output row).
    pub fn map_columns(&mut self, f: &dyn Fn(usize) -> usize) {
        self.replace_columns(&mut |c| Expr::Column(f(c)));
    }

    /// Replaces every column node with `f`'s expression for its position (a condition
    /// moved into a derived table reads the derived query's select expressions).
    pub fn replace_columns(&mut self, f: &mut dyn FnMut(usize) -> Expr) {
        match self {
            Expr::Column(c) => *self = f(*c),
            Expr::Cmp(_, a, b, _)
            | Expr::Arith(_, a, b)
            | Expr::BitOp(_, a, b)
            | Expr::And(a, b)
            | Expr::Or(a, b)
            | Expr::Xor(a, b) => {
                a.replace_columns(f);
                b.replace_columns(f);
            }
            Expr::Neg(a) | Expr::Not(a) | Expr::IsNull(a, _) | Expr::IsTruth(a, _, _) => {
                a.replace_columns(f)
            }
            Expr::Between {
                expr, low, high, ..
            } => {
                expr.replace_columns(f);
                low.replace_columns(f);
                high.replace_columns(f);
            }
            Expr::InList { expr, list, .. } => {
                expr.replace_columns(f);
                list.iter_mut().for_each(|e| e.replace_columns(f));
            }
            Expr::Like { expr, pattern, .. } => {
                expr.replace_columns(f);
                pattern.replace_columns(f);
            }
            Expr::Case {
                operand,
                whens,
                otherwise,
                ..
            } => {
                if let Some(o) = operand {
                    o.replace_columns(f);
                }
                for (w, t) in whens {
                    w.replace_columns(f);
                    t.replace_columns(f);
                }
                if let Some(o) = otherwise {
                    o.replace_columns(f);
                }
            }
            Expr::Func(_, args) | Expr::StoredCall(_, args) => {
                args.iter_mut().for_each(|e| e.replace_columns(f))
            }
            Expr::Subquery(s) => {
                s.correlated.iter_mut().for_each(|e| e.replace_columns(f));
                match &mut s.kind {
                    SubqueryKind::In { lhs, .. } => {
                        lhs.iter_mut().for_each(|e| e.replace_columns(f))
                    }
                    SubqueryKind::Quantified { lhs, .. } => lhs.replace_columns(f),
                    SubqueryKind::Scalar | SubqueryKind::Exists { .. } => {}
                }
            }
            _ => {}
        }
    }

    pub fn eval(&self, row: &[Value], cx: &EvalCtx) -> Result<Value> {
        Ok(match self {
            Expr::Literal(v) => v.clone(),
            Expr::Cached(v) => (**v).clone(),
            Expr::Param(i) => cx.params.get(*i).cloned().unwrap_or(Value::Null),
            Expr::Column(i) => row.get(*i).cloned().unwrap_or(Value::Null),
            Expr::OuterRef(i) => cx.outer.get(*i).cloned().unwrap_or(Value::Null),
            _ => return self.eval_inner(row, cx),
        })
    }

    /// The value of an operand, borrowed when it is a column, literal, parameter or
    /// outer value (a comparison of a string column with a constant then copies
    /// neither), computed otherwise.
    pub(crate) fn operand<'v>(
        &'v self,
        row: &'v [Value],
        cx: &'v EvalCtx,
    ) -> Result<Cow<'v, Value>> {
        const NULL: &Value = &Value::Null;
        Ok(match self {
            Expr::Literal(v) => Cow::Borrowed(v),
            Expr::Cached(v) => Cow::Borrowed(&**v),
            Expr::Param(i) => Cow::Borrowed(cx.params.get(*i).unwrap_or(NULL)),
            Expr::Column(i) => Cow::Borrowed(row.get(*i).unwrap_or(NULL)),
            Expr::OuterRef(i) => Cow::Borrowed(cx.outer.get(*i).unwrap_or(NULL)),
            _ => Cow::Owned(self.eval_inner(row, cx)?),
        })
    }

    /// Evaluates a node that has operands: each such level checks the stack first, so
    /// a tree deeper than the thread can hold ends in 1436, not a crash.
    fn eval_inner(&self, row: &[Value], cx: &EvalCtx) -> Result<Value> {
        strata_types::stack::check()?;
        Ok(match self {
            Expr::Literal(_)
            | Expr::Cached(_)
            | Expr::Param(_)
            | Expr::Column(_)
            | Expr::OuterRef(_) => return self.eval(row, cx),
            Expr::Subquery(s) => return eval_subquery(s, row, cx),
            Expr::StoredCall(call, args) => {
                let mut values = Vec::with_capacity(args.len());
                for a in args {
                    values.push(a.eval(row, cx)?);
                }
                let runner = cx.runner.ok_or_else(|| {
                    Error::NotSupported(format!("a stored function ({}) here", call.name))
                })?;
                return runner.call_stored(call, values);
            }
            Expr::Cmp(op, a, b, coll) => {
                let (a, b) = (a.operand(row, cx)?, b.operand(row, cx)?);
                let (a, b) = (a.as_ref(), b.as_ref());
                warn_numeric_text(a, b, cx);
                if *op == CmpOp::NullSafeEq {
                    return Ok(bool_value(match (a.is_null(), b.is_null()) {
                        (true, true) => true,
                        (false, false) => compare(a, b, *coll) == Some(Ordering::Equal),
                        _ => false,
                    }));
                }
                match compare(a, b, *coll) {
                    None => Value::Null,
                    Some(ord) => bool_value(match op {
                        CmpOp::Eq => ord == Ordering::Equal,
                        CmpOp::Ne => ord != Ordering::Equal,
                        CmpOp::Lt => ord == Ordering::Less,
                        CmpOp::Le => ord != Ordering::Greater,
                        CmpOp::Gt => ord == Ordering::Greater,
                        CmpOp::Ge => ord != Ordering::Less,
                        CmpOp::NullSafeEq => unreachable!("handled above"),
                    }),
                }
            }
            Expr::Arith(op, a, b) => {
                let x = a.eval(row, cx)?;
                if x.is_null() {
                    // As MySQL's operators: a NULL left operand is the answer, and the
                    // right one is not evaluated (so its overflow, 1690, is not raised).
                    return Ok(Value::Null);
                }
                let y = b.eval(row, cx)?;
                for v in [&x, &y] {
                    if let Value::Bytes(t) = v {
                        if !functions::cast::is_whole_number(t) {
                            functions::cast::warn_truncated(cx, "DOUBLE", t);
                        }
                    }
                }
                arith_in(*op, &x, &y, cx)?
            }
            Expr::Neg(a) => match a.eval(row, cx)? {
                Value::Null => Value::Null,
                Value::Int(i) => match i.checked_neg() {
                    Some(v) => Value::Int(v),
                    None => {
                        return Err(Error::ValueOutOfRange {
                            kind: "BIGINT".into(),
                            expr: format!("-({i})"),
                        })
                    }
                },
                Value::UInt(u) if u <= i64::MAX as u64 + 1 => Value::Int((u as i64).wrapping_neg()),
                // A BIGINT UNSIGNED past -BIGINT's range: 1690, as MySQL (it is no
                // DOUBLE there).
                Value::UInt(u) => {
                    return Err(Error::ValueOutOfRange {
                        kind: "BIGINT".into(),
                        expr: format!("-({u})"),
                    })
                }
                Value::Decimal(d) => Value::Decimal(-d),
                other => Value::Double(-other.to_f64().unwrap_or(0.0)),
            },
            Expr::BitOp(op, a, b) => {
                let (a, b) = (a.eval(row, cx)?, b.eval(row, cx)?);
                if a.is_null() || b.is_null() {
                    return Ok(Value::Null);
                }
                let (x, y) = (int_context::uint_arg(&a, cx), int_context::uint_arg(&b, cx));
                Value::UInt(match op {
                    '&' => x & y,
                    '|' => x | y,
                    '^' => x ^ y,
                    '<' => x.checked_shl(y as u32).unwrap_or(0),
                    _ => x.checked_shr(y as u32).unwrap_or(0),
                })
            }
            Expr::And(a, b) => {
                let x = a.eval(row, cx)?.truth();
                if x == Some(false) {
                    return Ok(Value::Int(0));
                }
                let y = b.eval(row, cx)?.truth();
                match (x, y) {
                    (_, Some(false)) => Value::Int(0),
                    (Some(true), Some(true)) => Value::Int(1),
                    _ => Value::Null,
                }
            }
            Expr::Or(a, b) => {
                let x = a.eval(row, cx)?.truth();
                if x == Some(true) {
                    return Ok(Value::Int(1));
                }
                let y = b.eval(row, cx)?.truth();
                match (x, y) {
                    (_, Some(true)) => Value::Int(1),
                    (Some(false), Some(false)) => Value::Int(0),
                    _ => Value::Null,
                }
            }
            Expr::Xor(a, b) => match (a.eval(row, cx)?.truth(), b.eval(row, cx)?.truth()) {
                (Some(x), Some(y)) => bool_value(x != y),
                _ => Value::Null,
            },
            Expr::Not(a) => match a.eval(row, cx)?.truth() {
                None => Value::Null,
                Some(t) => bool_value(!t),
            },
            Expr::IsNull(a, negated) => bool_value(a.operand(row, cx)?.is_null() != *negated),
            Expr::IsTruth(a, want, negated) => {
                let t = a.eval(row, cx)?.truth();
                bool_value((t == Some(*want)) != *negated)
            }
            Expr::Between {
                expr,
                low,
                high,
                negated,
                coll,
            } => {
                let v = expr.operand(row, cx)?;
                let lo = compare(&v, &*low.operand(row, cx)?, *coll);
                let hi = compare(&v, &*high.operand(row, cx)?, *coll);
                match (lo, hi) {
                    (Some(l), Some(h)) => {
                        bool_value((l != Ordering::Less && h != Ordering::Greater) != *negated)
                    }
                    (Some(Ordering::Less), None) | (None, Some(Ordering::Greater)) => {
                        bool_value(*negated)
                    }
                    _ => Value::Null,
                }
            }
            Expr::InList {
                expr,
                list,
                negated,
                coll,
            } => {
                let v = expr.operand(row, cx)?;
                if v.is_null() {
                    return Ok(Value::Null);
                }
                let mut saw_null = false;
                for item in list {
                    let x = item.operand(row, cx)?;
                    // A string against a string (`SUBSTRING(c, 1, 2) IN ('13', '31', …)`)
                    // is the collation's comparison: straight to it, without the
                    // general dispatch over every pair of kinds.
                    if let (Value::Bytes(a), Value::Bytes(b)) = (&*v, &*x) {
                        if coll.compare(a, b) == Ordering::Equal {
                            return Ok(bool_value(!*negated));
                        }
                        continue;
                    }
                    match compare(&v, &x, *coll) {
                        Some(Ordering::Equal) => return Ok(bool_value(!*negated)),
                        None => saw_null = true,
                        _ => {}
                    }
                }
                if saw_null {
                    Value::Null
                } else {
                    bool_value(*negated)
                }
            }
            Expr::Like {
                expr,
                pattern,
                negated,
                escape,
                coll,
            } => {
                let (v, p) = (expr.operand(row, cx)?, pattern.operand(row, cx)?);
                if v.is_null() || p.is_null() {
                    return Ok(Value::Null);
                }
                // A string (the usual case: a column against a literal pattern) is
                // matched where it lies; anything else as its text.
                let (mut vb, mut pb) = (Vec::new(), Vec::new());
                let text = |x: &'_ Value, buf: &mut Vec<u8>| match x {
                    Value::Bytes(_) => {}
                    other => other.write_text(buf),
                };
                text(&v, &mut vb);
                text(&p, &mut pb);
                let vt: &[u8] = match &*v {
                    Value::Bytes(b) => b,
                    _ => &vb,
                };
                let pt: &[u8] = match &*p {
                    Value::Bytes(b) => b,
                    _ => &pb,
                };
                bool_value(like(vt, pt, *escape, *coll) != *negated)
            }
            Expr::Case {
                operand,
                whens,
                otherwise,
                coll,
            } => {
                let op = match operand {
                    Some(o) => Some(o.eval(row, cx)?),
                    None => None,
                };
                for (w, then) in whens {
                    let hit = match &op {
                        Some(o) => compare(o, &w.eval(row, cx)?, *coll) == Some(Ordering::Equal),
                        None => w.eval(row, cx)?.truth() == Some(true),
                    };
                    if hit {
                        return then.eval(row, cx);
                    }
                }
                match otherwise {
                    Some(o) => o.eval(row, cx)?,
                    None => Value::Null,
                }
            }
            Expr::Func(f, args) => functions::call(*f, args, row, cx)?,
            Expr::SystemVariable { name, global } => cx.env.system_variable(name, *global)?,
            Expr::UserVariable(name) => cx.env.user_variable(name),
        })
    }

    /// Evaluates as a WHERE/ON/HAVING condition: only TRUE passes.
    pub fn test(&self, row: &[Value], cx: &EvalCtx) -> Result<bool> {
        Ok(self.eval(row, cx)?.truth() == Some(true))
    }
}

/// Evaluates a subquery expression with MySQL's NULL rules for IN, ANY and ALL.
fn eval_subquery(s: &Subquery, row: &[Value], cx: &EvalCtx) -> Result<Value> {
    let Some(runner) = cx.runner else {
        return Err(Error::NotSupported("a subquery in this statement".into()));
    };
    let correlated = s
        .correlated
        .iter()
        .map(|e| e.eval(row, cx))
        .collect::<Result<Vec<_>>>()?;
    // Operands first: MySQL evaluates the left side before running the subquery.
    match &s.kind {
        SubqueryKind::Scalar => {
            let rows = runner.rows(s.id, correlated)?;
            match rows.rows.as_slice() {
                [] => Ok(Value::Null),
                [one] => Ok(one.first().cloned().unwrap_or(Value::Null)),
                _ => runner.more_than_one_row(s.id, !s.correlated.is_empty()),
            }
        }
        SubqueryKind::Exists { negated } => {
            let found = runner.exists(s.id, correlated)?;
            Ok(bool_value(found != *negated))
        }
        SubqueryKind::In {
            lhs,
            negated,
            colls,
            hashable,
        } => {
            let left = lhs
                .iter()
                .map(|e| e.eval(row, cx))
                .collect::<Result<Vec<_>>>()?;
            let rows = runner.rows(s.id, correlated)?;
            let found = in_rows(&left, &rows, colls, *hashable)?;
            Ok(match found {
                None => Value::Null,
                Some(b) => bool_value(b != *negated),
            })
        }
        SubqueryKind::Quantified { lhs, op, all, coll } => {
            let left = lhs.eval(row, cx)?;
            let rows = runner.rows(s.id, correlated)?;
            // ANY: TRUE if some comparison is TRUE, else NULL if some is NULL, else
            // FALSE. ALL: FALSE if some is FALSE, else NULL if some is NULL, else TRUE.
            let mut saw_null = false;
            for r in &rows.rows {
                let right = r.first().cloned().unwrap_or(Value::Null);
                let cmp = Expr::Cmp(
                    *op,
                    Box::new(Expr::Literal(left.clone())),
                    Box::new(Expr::Literal(right)),
                    *coll,
                );
                match cmp.eval(&[], cx)?.truth() {
                    None => saw_null = true,
                    Some(t) if t != *all => return Ok(bool_value(t)),
                    Some(_) => {}
                }
            }
            Ok(if saw_null {
                Value::Null
            } else {
                bool_value(*all)
            })
        }
    }
}

/// `left IN rows`: Some(true) on a match, None when no match is certain only because of
/// NULLs, Some(false) otherwise (MySQL's three-valued IN).
fn in_rows(
    left: &[Value],
    rows: &SubqueryRows,
    colls: &[Collation],
    hashable: bool,
) -> Result<Option<bool>> {
    if rows.rows.is_empty() {
        return Ok(Some(false));
    }
    if left.iter().any(Value::is_null) && left.len() == 1 {
        return Ok(None);
    }
    if hashable && !left.iter().any(Value::is_null) {
        let (set, has_null) = rows.probe(colls)?;
        let mut k = Vec::new();
        for (v, c) in left.iter().zip(colls) {
            crate::expr::keys::group_key(&mut k, v, *c);
        }
        if set.contains(&k) {
            return Ok(Some(true));
        }
        if !has_null {
            return Ok(Some(false));
        }
    }
    // Row by row: a row matches when every column is equal; a row none of whose columns
    // is unequal but some compare NULL makes the answer NULL unless another matches.
    let mut saw_null = false;
    for r in &rows.rows {
        let mut all_equal = true;
        let mut unknown = false;
        for ((l, v), c) in left.iter().zip(r).zip(colls) {
            match compare(l, v, *c) {
                Some(Ordering::Equal) => {}
                Some(_) => {
                    all_equal = false;
                    unknown = false;
                    break;
                }
                None => unknown = true,
            }
        }
        if all_equal && !unknown {
            return Ok(Some(true));
        }
        if all_equal && unknown {
            saw_null = true;
        }
    }
    Ok(if saw_null { None } else { Some(false) })
}

pub fn bool_value(b: bool) -> Value {
    Value::Int(b as i64)
}

/// Compares two values the way MySQL does for `=`/`<`: None when either is NULL.
/// Numbers compare numerically (exactly for integers and decimals), two strings by the
/// collation, a string and a number as doubles, a date and a string as dates.
pub fn compare(a: &Value, b: &Value, coll: Collation) -> Option<Ordering> {
    use Value::*;
    Some(match (a, b) {
        (Null, _) | (_, Null) => return None,
        (Int(x), Int(y)) => x.cmp(y),
        (UInt(x), UInt(y)) => x.cmp(y),
        (Int(x), UInt(y)) => (*x as i128).cmp(&(*y as i128)),
        (UInt(x), Int(y)) => (*x as i128).cmp(&(*y as i128)),
        (Bytes(x), Bytes(y)) => coll.compare(x, y),
        (Decimal(x), Decimal(y)) => x.cmp(y),
        (Decimal(x), Int(y)) => x.cmp(&strata_types::Decimal::from_i64(*y)),
        (Int(x), Decimal(y)) => strata_types::Decimal::from_i64(*x).cmp(y),
        (Decimal(x), UInt(y)) => x.cmp(&strata_types::Decimal::from_u64(*y)),
        (UInt(x), Decimal(y)) => strata_types::Decimal::from_u64(*x).cmp(y),
        (DateTime(x), DateTime(y)) => x.cmp(y),
        // A number meets a date-time as one when it reads as one (20240101, as MySQL
        // reads a numeric constant: the binder converts literals, this catches the
        // statement parameters the plan cache makes of them); otherwise as numbers.
        (DateTime(x), Int(_) | UInt(_)) => {
            match b.to_i64().and_then(strata_types::DateTime::from_number) {
                Some(y) => x.cmp(&y),
                None => return compare_as_doubles(a, b),
            }
        }
        (Int(_) | UInt(_), DateTime(y)) => {
            match a.to_i64().and_then(strata_types::DateTime::from_number) {
                Some(x) => x.cmp(y),
                None => return compare_as_doubles(a, b),
            }
        }
        (DateTime(x), Bytes(y)) => x.cmp(&date_of_text(y)),
        (Json(_), _) | (_, Json(_)) => return json::compare::compare_values(a, b).ok().flatten(),
        // A bit value meets a bit value or a number as its unsigned number.
        (Bits(x), Bits(y)) => bits_value(x).cmp(&bits_value(y)),
        (Bits(x), y) if y.is_numeric() => return compare(&UInt(bits_value(x)), y, coll),
        (x, Bits(y)) if x.is_numeric() => return compare(x, &UInt(bits_value(y)), coll),
        // An ENUM/SET value meets a number as its member number, anything else as its
        // text (two ENUM values compare as strings, as in MySQL).
        (Member { number, .. }, y) if y.is_numeric() => return compare(&UInt(*number), y, coll),
        (x, Member { number, .. }) if x.is_numeric() => return compare(x, &UInt(*number), coll),
        (Member { text: x, .. }, Member { text: y, .. })
        | (Member { text: x, .. }, Bytes(y))
        | (Bytes(x), Member { text: y, .. }) => coll.compare(x, y),
        (Member { text, .. }, y) => return compare(&Bytes(text.clone()), y, coll),
        (x, Member { text, .. }) => return compare(x, &Bytes(text.clone()), coll),
        (Bytes(x), DateTime(y)) => date_of_text(x).cmp(y),
        _ => return compare_as_doubles(a, b),
    })
}

/// A string compared with a date: the date-time it reads as; else the one its leading
/// date-like part reads as (`'2020-01-01x'`); else the zero date, as MySQL compares a
/// string that is no date (`'abc'`, `''`) with a DATE column (warning 1292 there, which
/// a comparison has no place to raise here). Comparing such strings as text instead
/// put `'abc'` after every date.
fn date_of_text(text: &[u8]) -> strata_types::DateTime {
    let parse = |t: &[u8]| {
        std::str::from_utf8(t)
            .ok()
            .and_then(strata_types::DateTime::parse)
    };
    if let Some(d) = parse(text) {
        return d;
    }
    let date_like = |b: &u8| b.is_ascii_digit() || b" -:./T".contains(b);
    let prefix = text
        .iter()
        .position(|b| !date_like(b))
        .unwrap_or(text.len());
    (prefix < text.len())
        .then(|| parse(&text[..prefix]))
        .flatten()
        .unwrap_or_default()
}

fn compare_as_doubles(a: &Value, b: &Value) -> Option<Ordering> {
    let (x, y) = (a.to_f64()?, b.to_f64()?);
    Some(x.partial_cmp(&y).unwrap_or(Ordering::Equal))
}

/// Total order for sorting (ORDER BY): NULL first, then as [`compare`], except that a
/// decimal sorts by its value rounded to the scale it shows, as MySQL builds a sort key
/// from an expression's declared scale (`1/70000` and `2/70000` both sort as 0.0000).
pub fn sort_compare(a: &Value, b: &Value, coll: Collation) -> Ordering {
    match (a, b) {
        (Value::Null, Value::Null) => Ordering::Equal,
        (Value::Null, _) => Ordering::Less,
        (_, Value::Null) => Ordering::Greater,
        // ORDER BY an ENUM/SET column sorts by member number, as MySQL.
        (Value::Member { number: x, .. }, Value::Member { number: y, .. }) => x.cmp(y),
        (Value::Decimal(x), _) if x.scale > x.shown => {
            sort_compare(&Value::Decimal(x.rescale(x.shown)), b, coll)
        }
        (_, Value::Decimal(y)) if y.scale > y.shown => {
            sort_compare(a, &Value::Decimal(y.rescale(y.shown)), coll)
        }
        _ => compare(a, b, coll).unwrap_or(Ordering::Equal),
    }
}

fn numeric(v: &Value) -> Value {
    match v {
        Value::Bytes(b) => {
            let f = parse_leading_f64(b);
            Value::Double(f)
        }
        // A DATE or whole DATETIME is an integer, one with a fraction a DECIMAL (MySQL).
        Value::DateTime(_) => v.temporal_number().unwrap_or(Value::Null),
        Value::Bits(b) => Value::UInt(bits_value(b)),
        Value::Member { number, .. } => Value::UInt(*number),
        // A JSON value is its number, a DOUBLE (MySQL's val_real of JSON): `j->'$.a' + 1`
        // of {"a": 5} is 6. It used to stay JSON here and add as 0.
        Value::Json(_) => Value::Double(v.to_f64().unwrap_or(0.0)),
        other => other.clone(),
    }
}

/// An exact operand as a decimal; a double by its shortest digits (DIV only). None
/// when a double is beyond 38 digits.
fn as_decimal(v: &Value) -> Option<Decimal> {
    match v {
        Value::Int(i) => Some(Decimal::from_i64(*i)),
        Value::UInt(u) => Some(Decimal::from_u64(*u)),
        Value::Decimal(d) => Some(*d),
        Value::Double(f) => Decimal::from_f64_digits(*f),
        _ => None,
    }
}

fn op_text(op: ArithOp) -> &'static str {
    match op {
        ArithOp::Add => "+",
        ArithOp::Sub => "-",
        ArithOp::Mul => "*",
        ArithOp::Div => "/",
        ArithOp::IntDiv => "DIV",
        ArithOp::Mod => "%",
    }
}

/// Error 1690 for `a op b` whose result does not fit `kind`.
fn out_of_range(kind: &str, op: ArithOp, a: &Value, b: &Value) -> Error {
    Error::ValueOutOfRange {
        kind: kind.into(),
        expr: format!("({} {} {})", a.to_text(), op_text(op), b.to_text()),
    }
}

/// An integer result as BIGINT (UNSIGNED when `unsigned`), or error 1690.
fn fit_integer(r: i128, unsigned: bool, op: ArithOp, a: &Value, b: &Value) -> Result<Value> {
    if unsigned {
        u64::try_from(r)
            .map(Value::UInt)
            .map_err(|_| out_of_range("BIGINT UNSIGNED", op, a, b))
    } else {
        i64::try_from(r)
            .map(Value::Int)
            .map_err(|_| out_of_range("BIGINT", op, a, b))
    }
}

/// MySQL arithmetic. Integers stay exact BIGINTs (UNSIGNED when an operand is; for `%`
/// when the dividend is); an overflow is error 1690. DECIMAL when either side is
/// decimal, with MySQL's digits (see `strata_types::decimal`), and for `/` of two
/// exact operands. DOUBLE when either side is a double or a string, except `DIV`,
/// which divides exactly in decimal whenever an operand is not an integer and
/// truncates toward zero (`1.9 DIV 1` is 1). Division by zero (`/`, `DIV`, `%`) is NULL.
pub fn arith(op: ArithOp, a: &Value, b: &Value) -> Result<Value> {
    if a.is_null() || b.is_null() {
        return Ok(Value::Null);
    }
    let (x, y) = (numeric(a), numeric(b));
    // A DECIMAL result past 65 digits, or one whose digits MySQL's 81-digit buffers
    // would cut (see strata_types::decimal): refused (1235), never a clamped value.
    let decimal_overflow = || {
        Error::NotSupported(format!(
            "DECIMAL results of more than 65 digits ({} {} {})",
            a.to_text(),
            op_text(op),
            b.to_text()
        ))
    };
    let unsigned_either = matches!(x, Value::UInt(_)) || matches!(y, Value::UInt(_));
    let integers =
        matches!(x, Value::Int(_) | Value::UInt(_)) && matches!(y, Value::Int(_) | Value::UInt(_));
    if op == ArithOp::IntDiv && !integers {
        let (Some(p), Some(q)) = (as_decimal(&x), as_decimal(&y)) else {
            return Err(out_of_range("BIGINT", op, a, b));
        };
        if q.is_zero() {
            return Ok(Value::Null);
        }
        let kind = if unsigned_either {
            "BIGINT UNSIGNED"
        } else {
            "BIGINT"
        };
        let r = p
            .div_trunc(&q)
            .ok_or_else(|| out_of_range(kind, op, a, b))?;
        return fit_integer(r, unsigned_either, op, a, b);
    }
    match (&x, &y) {
        (Value::Double(_), _) | (_, Value::Double(_)) => {
            let (f, g) = (x.to_f64().unwrap_or(0.0), y.to_f64().unwrap_or(0.0));
            let r = match op {
                ArithOp::Add => f + g,
                ArithOp::Sub => f - g,
                ArithOp::Mul => f * g,
                ArithOp::Div | ArithOp::Mod if g == 0.0 => return Ok(Value::Null),
                ArithOp::Div => f / g,
                ArithOp::Mod => f % g,
                ArithOp::IntDiv => unreachable!("decimal above"),
            };
            // MySQL has no infinite or NaN DOUBLE: a result past its range is 1690
            // (`1e308 * 10`), never `inf`.
            if !r.is_finite() {
                return Err(out_of_range("DOUBLE", op, a, b));
            }
            Ok(Value::Double(r))
        }
        (Value::Decimal(_), _) | (_, Value::Decimal(_)) | (_, _) if op == ArithOp::Div => {
            let (p, q) = (
                as_decimal(&x).ok_or_else(decimal_overflow)?,
                as_decimal(&y).ok_or_else(decimal_overflow)?,
            );
            if q.is_zero() {
                return Ok(Value::Null);
            }
            p.checked_div(&q)
                .map(Value::Decimal)
                .ok_or_else(decimal_overflow)
        }
        (Value::Decimal(_), _) | (_, Value::Decimal(_)) => {
            let (p, q) = (
                as_decimal(&x).ok_or_else(decimal_overflow)?,
                as_decimal(&y).ok_or_else(decimal_overflow)?,
            );
            let r = match op {
                ArithOp::Add => p.checked_add(&q),
                ArithOp::Sub => p.checked_sub(&q),
                ArithOp::Mul => p.checked_mul(&q),
                ArithOp::Mod if q.is_zero() => return Ok(Value::Null),
                ArithOp::Mod => p.checked_rem(&q),
                ArithOp::Div | ArithOp::IntDiv => unreachable!("handled above"),
            };
            r.map(Value::Decimal).ok_or_else(decimal_overflow)
        }
        _ => {
            // Both integers (signed or unsigned): compute in i128, then fit.
            let int = |v: &Value| match v {
                Value::Int(i) => *i as i128,
                Value::UInt(u) => *u as i128,
                _ => 0,
            };
            let (p, q) = (int(&x), int(&y));
            let r = match op {
                ArithOp::Add => p + q,
                ArithOp::Sub => p - q,
                ArithOp::Mul => p
                    .checked_mul(q)
                    .ok_or_else(|| out_of_range("BIGINT", op, a, b))?,
                ArithOp::IntDiv | ArithOp::Mod if q == 0 => return Ok(Value::Null),
                ArithOp::IntDiv => p / q,
                ArithOp::Mod => p % q,
                ArithOp::Div => unreachable!("handled above"),
            };
            // `%` is unsigned when its dividend is, the others when either operand is.
            let unsigned = if op == ArithOp::Mod {
                matches!(x, Value::UInt(_))
            } else {
                unsigned_either
            };
            fit_integer(r, unsigned, op, a, b)
        }
    }
}

/// [`arith`] in a statement: a division by zero (`/`, `DIV`, `%`) is NULL, with warning
/// 1365 when sql_mode has ERROR_FOR_DIVISION_BY_ZERO, or error 1365 where the session
/// makes it one (see [`Env::division_by_zero_is_error`]).
pub fn arith_in(op: ArithOp, a: &Value, b: &Value, cx: &EvalCtx) -> Result<Value> {
    let r = arith(op, a, b)?;
    if r.is_null()
        && !a.is_null()
        && !b.is_null()
        && matches!(op, ArithOp::Div | ArithOp::IntDiv | ArithOp::Mod)
    {
        if cx.env.division_by_zero_is_error() {
            return Err(Error::DivisionByZero);
        }
        // Without ERROR_FOR_DIVISION_BY_ZERO in sql_mode MySQL 8 says nothing.
        if env_overlay::mode_is_set(cx.env) {
            cx.env
                .warn(WarnLevel::Warning, 1365, "Division by 0".into());
        }
    }
    Ok(r)
}

/// A string compared with a number is read as a DOUBLE, as MySQL compares them; text
/// that is not entirely a number warns 1292, as MySQL does.
fn warn_numeric_text(a: &Value, b: &Value, cx: &EvalCtx) {
    let numeric = |v: &Value| {
        matches!(
            v,
            Value::Int(_) | Value::UInt(_) | Value::Double(_) | Value::Decimal(_)
        )
    };
    let t = match (a, b) {
        (Value::Bytes(t), n) | (n, Value::Bytes(t)) if numeric(n) => t,
        _ => return,
    };
    if !functions::cast::is_whole_number(t) {
        functions::cast::warn_truncated(cx, "DOUBLE", t);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn comparisons_follow_mysql_rules() {
        let ci = Collation::GeneralCi;
        assert_eq!(
            compare(&Value::Int(1), &Value::str("1.0"), ci),
            Some(Ordering::Equal)
        );
        assert_eq!(
            compare(&Value::str("a"), &Value::str("A "), ci),
            Some(Ordering::Equal)
        );
        assert_eq!(compare(&Value::Null, &Value::Int(1), ci), None);
        assert_eq!(
            compare(&Value::Int(-1), &Value::UInt(1), ci),
            Some(Ordering::Less)
        );
    }

    #[test]
    fn arithmetic_types() {
        assert_eq!(
            arith(ArithOp::Add, &Value::Int(1), &Value::Int(2)).unwrap(),
            Value::Int(3)
        );
        assert_eq!(
            arith(ArithOp::Div, &Value::Int(1), &Value::Int(0)).unwrap(),
            Value::Null
        );
        assert_eq!(
            arith(ArithOp::Div, &Value::Int(1), &Value::Int(4))
                .unwrap()
                .to_text(),
            "0.2500"
        );
        assert!(arith(ArithOp::Sub, &Value::UInt(0), &Value::Int(1)).is_err());
        assert_eq!(
            arith(ArithOp::Mul, &Value::Double(1.5), &Value::Int(2)).unwrap(),
            Value::Double(3.0)
        );
    }

    fn dec(s: &str) -> Value {
        Value::Decimal(Decimal::parse(s).unwrap())
    }

    fn text(v: Result<Value>) -> String {
        v.unwrap().to_text()
    }

    #[test]
    fn division_keeps_hidden_digits() {
        // 59/14 holds 4.214285714 and shows 4.2143; times 14 it is 58.999999996,
        // shown 59.0000, and not equal to 59 (MySQL compares every digit).
        let q = arith(ArithOp::Div, &Value::Int(59), &Value::Int(14)).unwrap();
        assert_eq!(q.to_text(), "4.2143");
        let p = arith(ArithOp::Mul, &q, &Value::Int(14)).unwrap();
        assert_eq!(p.to_text(), "59.0000");
        assert_eq!(
            compare(&p, &Value::Int(59), Collation::Binary),
            Some(Ordering::Less)
        );
        assert_eq!(p.to_f64(), Some(58.999999996));
        assert_eq!(text(arith(ArithOp::IntDiv, &p, &Value::Int(1))), "58");
        // Sorting uses the shown value: ties with 59.0000.
        assert_eq!(
            sort_compare(&p, &dec("59.0000"), Collation::Binary),
            Ordering::Equal
        );
        // 1/3/3 shows 8 digits; the dividend's scale plus 4.
        let third = arith(ArithOp::Div, &Value::Int(1), &Value::Int(3)).unwrap();
        assert_eq!(
            text(arith(ArithOp::Div, &third, &Value::Int(3))),
            "0.11111111"
        );
        assert_eq!(
            text(arith(ArithOp::Div, &dec("1.5"), &Value::Int(7))),
            "0.21429"
        );
        assert_eq!(text(arith(ArithOp::Div, &dec("1.5"), &dec("0.0"))), "NULL");
    }

    #[test]
    fn integer_division_truncates() {
        let one = Value::Int(1);
        assert_eq!(text(arith(ArithOp::IntDiv, &dec("1.9"), &one)), "1");
        assert_eq!(text(arith(ArithOp::IntDiv, &dec("-1.9"), &one)), "-1");
        assert_eq!(
            text(arith(
                ArithOp::IntDiv,
                &Value::Double(0.3),
                &Value::Double(0.1)
            )),
            "3"
        );
        assert_eq!(
            text(arith(
                ArithOp::IntDiv,
                &Value::str("0.3"),
                &Value::str("0.1")
            )),
            "3"
        );
        assert_eq!(
            text(arith(ArithOp::IntDiv, &Value::Int(5), &dec("0.3"))),
            "16"
        );
        assert_eq!(
            text(arith(ArithOp::IntDiv, &Value::Int(-10), &Value::Int(3))),
            "-3"
        );
        assert_eq!(
            text(arith(ArithOp::IntDiv, &dec("1.9"), &Value::Int(0))),
            "NULL"
        );
        assert_eq!(
            arith(ArithOp::IntDiv, &Value::UInt(u64::MAX), &one).unwrap(),
            Value::UInt(u64::MAX)
        );
        assert_eq!(
            arith(ArithOp::IntDiv, &dec("-0.5"), &Value::UInt(1)).unwrap(),
            Value::UInt(0)
        );
        for (a, b) in [
            (Value::Double(1e300), one.clone()),
            (dec("92233720368547758070.9"), one.clone()),
            (dec("-1.5"), Value::UInt(1)),
            (Value::Int(-1), Value::UInt(1)),
            (Value::Int(i64::MIN), Value::Int(-1)),
        ] {
            let e = arith(ArithOp::IntDiv, &a, &b).unwrap_err();
            assert_eq!(e.code(), 1690, "{a:?} DIV {b:?}");
        }
    }

    #[test]
    fn remainders() {
        assert_eq!(
            text(arith(ArithOp::Mod, &dec("7.5"), &Value::Int(2))),
            "1.5"
        );
        assert_eq!(
            text(arith(ArithOp::Mod, &dec("-7.5"), &Value::Int(2))),
            "-1.5"
        );
        assert_eq!(
            text(arith(ArithOp::Mod, &Value::Int(7), &dec("2.25"))),
            "0.25"
        );
        assert_eq!(
            text(arith(ArithOp::Mod, &dec("1.9"), &Value::Int(0))),
            "NULL"
        );
        assert_eq!(
            text(arith(ArithOp::Mod, &Value::Double(7.5), &Value::Int(2))),
            "1.5"
        );
        // The dividend decides UNSIGNED.
        assert_eq!(
            arith(ArithOp::Mod, &Value::Int(10), &Value::UInt(3)).unwrap(),
            Value::Int(1)
        );
        assert_eq!(
            arith(ArithOp::Mod, &Value::UInt(10), &Value::Int(-3)).unwrap(),
            Value::UInt(1)
        );
        assert_eq!(
            arith(ArithOp::Mul, &Value::Int(i64::MAX), &Value::Int(2))
                .unwrap_err()
                .code(),
            1690
        );
    }

    #[test]
    fn like_patterns() {
        assert!(like(b"Hello", b"h%o", b'\\', Collation::GeneralCi));
        assert!(!like(b"Hello", b"h_o", b'\\', Collation::GeneralCi));
        assert!(like(b"a%b", b"a\\%b", b'\\', Collation::Binary));
    }
}
