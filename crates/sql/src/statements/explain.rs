//! EXPLAIN for queries, in MySQL 8's traditional tabular form: one row per table of each
//! query block in join order (blocks of subqueries, derived tables and set operations
//! too) with the access type the planner chose (`const`, `eq_ref`, `ref`, `range`,
//! `index`, `ALL`), the candidate and chosen keys, the key length in MySQL's bytes, what
//! the key is compared with, an estimate of rows read, and Extra notes.

use crate::catalog::stats::count_range;
use crate::context::{ExecCtx, Outcome};
use crate::exec::block::key_ranges;
use crate::expr::{EvalCtx, Expr};
use crate::optimizer::join_order::{access_rows, table_stats};
use crate::plan::block::{Access, Level, SelectPlan};
use crate::plan::query::{QueryPlan, QueryStatement, SetOp};
use std::collections::{HashMap, HashSet};
use strata_types::{
    ColumnDef, ColumnMeta, DataType, Decimal, EndInfo, FieldType, QueryOutput, Result, Value,
};

/// Bytes a key part takes in MySQL's key_len accounting (utf8mb4 strings).
fn key_part_len(c: &ColumnDef) -> u64 {
    let base = match c.data_type {
        DataType::TinyInt { .. } => 1,
        DataType::SmallInt { .. } => 2,
        DataType::MediumInt { .. } => 3,
        DataType::Int { .. } | DataType::Float { .. } => 4,
        DataType::BigInt { .. } | DataType::Double { .. } => 8,
        DataType::Decimal { precision, scale } => {
            let digits = |d: u64| (d / 9) * 4 + [0, 1, 1, 2, 2, 3, 3, 4, 4, 4][(d % 9) as usize];
            digits((precision - scale) as u64) + digits(scale as u64)
        }
        DataType::Char(n) => 4 * n as u64,
        DataType::Binary(n) => n as u64,
        DataType::VarChar(n) => 4 * n as u64 + 2,
        DataType::VarBinary(n) => n as u64 + 2,
        DataType::Text(_) | DataType::Blob(_) => 3072 + 2,
        DataType::Date => 3,
        // InnoDB's sizes: the fraction takes (fsp + 1) / 2 more bytes.
        DataType::DateTime { fsp } => 5 + (fsp as u64).div_ceil(2),
        DataType::Timestamp { fsp } => 4 + (fsp as u64).div_ceil(2),
        DataType::Time { fsp } => 3 + (fsp as u64).div_ceil(2),
        DataType::Year => 1,
        // Never indexed (3152); counted as a BLOB would be.
        DataType::Json => 3072 + 2,
        DataType::Bit(n) => (n as u64).div_ceil(8),
        // InnoDB's: 1 or 2 bytes for an ENUM, 1-8 for a SET.
        DataType::Enum(n) => 1 + (n > 255) as u64,
        DataType::Set(n) => match n {
            0..=8 => 1,
            9..=16 => 2,
            17..=24 => 3,
            25..=32 => 4,
            _ => 8,
        },
    };
    base + c.nullable as u64
}

/// Every expression a join level evaluates: its conditions and its access path's keys.
fn level_exprs(level: &Level, note: &mut dyn FnMut(&Expr)) {
    level.filter.iter().chain(&level.on).for_each(&mut *note);
    match &level.access {
        Access::Index {
            eq, lower, upper, ..
        } => {
            eq.iter().for_each(&mut *note);
            lower.iter().chain(upper).for_each(|b| note(&b.0));
        }
        Access::IndexIn { values, .. } => values.iter().for_each(&mut *note),
        Access::JoinBuffer { keys } => keys.iter().for_each(|k| note(&k.probe)),
        Access::Scan | Access::IndexInSubquery { .. } => {}
    }
}

/// The columns (table positions) of scope table `ti` that the query reads anywhere.
fn columns_used(plan: &SelectPlan, ti: usize) -> Vec<usize> {
    let t = &plan.scope.tables[ti];
    let range = t.offset..t.offset + t.def.columns.len();
    let mut used = Vec::new();
    let mut note = |e: &Expr| {
        e.walk(&mut |x| {
            if let Expr::Column(p) = x {
                if range.contains(p) && !used.contains(&(p - t.offset)) {
                    used.push(p - t.offset);
                }
            }
        })
    };
    for level in &plan.levels {
        level_exprs(level, &mut note);
    }
    match &plan.group {
        // After grouping the projection reads the grouped row, not the tables.
        Some(g) => {
            g.groups.iter().for_each(|(e, _)| note(e));
            g.aggs
                .iter()
                .filter_map(|a| a.arg.as_ref())
                .for_each(&mut note);
        }
        None => plan.projection.iter().for_each(&mut note),
    }
    used
}

/// Index entries EXPLAIN counts at most for one range estimate.
const RANGE_COUNT_CAP: u64 = 100_000;

/// Rows level `lvl`'s index ranges hold, counted when its bounds are constants.
fn range_count(plan: &SelectPlan, lvl: usize, cx: &ExecCtx) -> Option<u64> {
    let ecx = EvalCtx::new(&[], cx.env);
    let row = vec![Value::Null; plan.scope.width()];
    let (index, ranges, _) = key_ranges(plan, lvl, &row, &ecx).ok()??;
    let table = &plan.scope.tables[plan.levels[lvl].table].table;
    let _lock = cx
        .locked_tables
        .is_none()
        .then(|| table.lock(strata_engine::LockMode::Read));
    count_range(table, cx.txn, index, &ranges, RANGE_COUNT_CAP).ok()
}

/// EXPLAIN of a query statement in MySQL 8's traditional format: one row per table of
/// every query block, the blocks numbered (`id`) in the order the statement nests them —
/// the outer block, then its derived tables, then the subqueries its expressions hold —
/// with MySQL's select types (`SIMPLE`, `PRIMARY`, `SUBQUERY`, `DEPENDENT SUBQUERY`,
/// `DERIVED`, `UNION`, `UNION RESULT`, …) and derived tables shown as `<derivedN>`.
/// (MySQL numbers blocks in text order, so a select-list subquery that precedes a
/// derived table in the text gets the smaller id there; here the derived table's comes
/// first.)
pub fn explain_statement(
    stmt: &QueryStatement,
    cx: &ExecCtx,
    out: &mut dyn QueryOutput,
) -> Result<Outcome> {
    // A merged view or derived table leaves no block of its own (its slot is unused).
    let simple = stmt.subqueries.is_empty()
        && matches!(&stmt.root, QueryPlan::Block(b) if b.derived.is_empty());
    let mut ex = Explainer {
        stmt,
        cx,
        simple,
        rows: Vec::new(),
        next_id: 0,
        slot_ids: HashMap::new(),
        explained: HashSet::new(),
        outer_names: Vec::new(),
    };
    ex.query(&stmt.root, Role::Primary)?;
    // A subquery no block's expressions lead to (none is expected) is still shown.
    for id in 0..stmt.subqueries.len() {
        if !ex.explained.contains(&id) {
            ex.subquery(id, Vec::new())?;
        }
    }
    let names = [
        "id",
        "select_type",
        "table",
        "partitions",
        "type",
        "possible_keys",
        "key",
        "key_len",
        "ref",
        "rows",
        "filtered",
        "Extra",
    ];
    let cols: Vec<ColumnMeta> = names
        .iter()
        .map(|n| match *n {
            "id" | "rows" => ColumnMeta::computed(n, FieldType::LongLong),
            "filtered" => ColumnMeta::computed(n, FieldType::Double),
            _ => ColumnMeta::computed(n, FieldType::VarString),
        })
        .collect();
    out.columns(&cols)?;
    for row in &ex.rows {
        out.row(row)?;
    }
    out.end(&EndInfo::default())?;
    Ok(Outcome {
        ok: None,
        rows_sent: ex.rows.len() as u64,
        generated_id: None,
    })
}

/// How a query expression is used by the one around it, which names its select type.
#[derive(Clone, Copy)]
enum Role {
    Primary,
    Subquery {
        dependent: bool,
    },
    /// A derived table; `dependent` for a LATERAL one that reads tables before it.
    Derived {
        dependent: bool,
    },
}

struct Explainer<'s, 'c> {
    stmt: &'s QueryStatement,
    cx: &'s ExecCtx<'c>,
    /// One block and nothing nested: its select type is SIMPLE.
    simple: bool,
    rows: Vec<Vec<Value>>,
    next_id: u64,
    /// The id of the block that fills each materialization slot (`<derivedN>`).
    slot_ids: HashMap<usize, u64>,
    /// Subqueries (by id in the statement's table) already shown.
    explained: HashSet<usize>,
    /// While a dependent subquery is shown: the outer columns its `OuterRef(i)` read.
    outer_names: Vec<String>,
}

impl Explainer<'_, '_> {
    fn new_id(&mut self) -> u64 {
        self.next_id += 1;
        self.next_id
    }

    /// Explains one query expression; returns the ids of its blocks (a set operation's
    /// parts, for its `<unionM,N>` row).
    fn query(&mut self, q: &QueryPlan, role: Role) -> Result<Vec<u64>> {
        match q {
            QueryPlan::Block(b) => {
                let id = self.new_id();
                let select_type = match role {
                    Role::Primary if self.simple => "SIMPLE",
                    Role::Primary => "PRIMARY",
                    Role::Subquery { dependent: false } => "SUBQUERY",
                    Role::Subquery { dependent: true } => "DEPENDENT SUBQUERY",
                    Role::Derived { dependent: false } => "DERIVED",
                    Role::Derived { dependent: true } => "DEPENDENT DERIVED",
                };
                self.block(b, id, select_type)?;
                Ok(vec![id])
            }
            QueryPlan::Ordered(o) => self.query(&o.input, role),
            QueryPlan::SetOp(s) => {
                let (word, result) = match s.op {
                    SetOp::Union => ("UNION", "union"),
                    SetOp::Intersect => ("INTERSECT", "intersect"),
                    SetOp::Except => ("EXCEPT", "except"),
                };
                let mut ids = self.query(&s.left, role)?;
                let dependent = matches!(role, Role::Subquery { dependent: true });
                ids.extend(self.part(&s.right, word, dependent)?);
                // MySQL 8 reads UNION ALL straight through, with no temporary table.
                if s.distinct || s.op != SetOp::Union {
                    self.result_row(result, &ids);
                }
                Ok(ids)
            }
            QueryPlan::Recursive(r) => {
                let mut ids = self.query(&r.anchor, role)?;
                let first = self.rows.len();
                ids.extend(self.part(&r.step, "UNION", false)?);
                if let Some(extra) = self.rows.get_mut(first).and_then(|row| row.last_mut()) {
                    let mut e = extra.to_text();
                    if !e.is_empty() {
                        e.insert_str(0, "; ");
                    }
                    e.insert_str(0, "Recursive");
                    *extra = Value::str(&e);
                }
                if r.distinct {
                    self.result_row("union", &ids);
                }
                Ok(ids)
            }
        }
    }

    /// A later part of a set operation: its blocks are `UNION` (`DEPENDENT UNION`, …).
    fn part(&mut self, q: &QueryPlan, word: &str, dependent: bool) -> Result<Vec<u64>> {
        match q {
            QueryPlan::Block(b) => {
                let id = self.new_id();
                let t = if dependent {
                    format!("DEPENDENT {word}")
                } else {
                    word.to_string()
                };
                self.block(b, id, &t)?;
                Ok(vec![id])
            }
            QueryPlan::Ordered(o) => self.part(&o.input, word, dependent),
            other => self.query(
                other,
                if dependent {
                    Role::Subquery { dependent }
                } else {
                    Role::Derived { dependent: false }
                },
            ),
        }
    }

    fn result_row(&mut self, kind: &str, ids: &[u64]) {
        let list = ids.iter().map(u64::to_string).collect::<Vec<_>>().join(",");
        let mut row = vec![Value::Null; 12];
        row[1] = Value::str(&format!("{} RESULT", kind.to_ascii_uppercase()));
        row[2] = Value::str(&format!("<{kind}{list}>"));
        row[4] = Value::str("ALL");
        row[11] = Value::str("Using temporary");
        self.rows.push(row);
    }

    /// Shows subquery `id`; `outer` names the outer columns it reads (none: it is
    /// run once, `SUBQUERY`; some: per outer row, `DEPENDENT SUBQUERY`).
    fn subquery(&mut self, id: usize, outer: Vec<String>) -> Result<()> {
        // (A LATERAL table's subquery is shown with the block that reads it.)
        if !self.explained.insert(id) {
            return Ok(());
        }
        let stmt = self.stmt;
        let Some(plan) = stmt.subqueries.get(id) else {
            return Ok(());
        };
        let dependent = !outer.is_empty();
        let saved = std::mem::replace(&mut self.outer_names, outer);
        let shown = self.query(plan, Role::Subquery { dependent });
        self.outer_names = saved;
        shown.map(|_| ())
    }

    fn block(&mut self, plan: &SelectPlan, id: u64, select_type: &str) -> Result<()> {
        if plan.windows.is_some() {
            // MySQL's note: the traditional format shows only the sorts and temporary
            // tables windowing adds (in Extra), FORMAT=JSON the windows themselves.
            self.cx.env.warn(
                crate::expr::WarnLevel::Note,
                3598,
                "To get information about window functions use EXPLAIN FORMAT=JSON".into(),
            );
        }
        // Derived tables are numbered before their rows are shown, so the block's rows can
        // name them; each slot's plan is shown once (a CTE read twice fills one slot).
        let mut derived = Vec::new();
        for (slot, sub) in &plan.derived {
            if let (Some(sub), false) = (sub, self.slot_ids.contains_key(slot)) {
                derived.push((*slot, sub.clone()));
                self.slot_ids.insert(*slot, 0);
            }
        }
        let first_row = self.rows.len();
        self.table_rows(plan, id, select_type)?;
        for (slot, sub) in derived {
            let first = self.next_id + 1;
            self.slot_ids.insert(slot, first);
            self.query(&sub, Role::Derived { dependent: false })?;
        }
        // LATERAL derived tables, in join order: DEPENDENT DERIVED when they read a table
        // before them, which MySQL marks "Rematerialize" on the table read just before.
        let mut lateral_ids = Vec::new();
        for (lvl, level) in plan.levels.iter().enumerate() {
            let Some(lateral) = &plan.scope.tables[level.table].lateral else {
                continue;
            };
            let Some(sub) = self.stmt.subqueries.get(lateral.subquery).cloned() else {
                continue;
            };
            self.explained.insert(lateral.subquery);
            let id = self.next_id + 1;
            lateral_ids.push((lvl, id));
            let outer = lateral
                .correlated
                .iter()
                .map(|e| self.ref_name(plan, e))
                .collect();
            let saved = std::mem::replace(&mut self.outer_names, outer);
            let dependent = !lateral.correlated.is_empty();
            let shown = self.query(&sub, Role::Derived { dependent });
            self.outer_names = saved;
            shown?;
        }
        // Now that the derived tables have ids, the block's rows can name them.
        let levels = plan.levels.iter().map(|l| &plan.scope.tables[l.table]);
        for (row, t) in self.rows[first_row..].iter_mut().zip(levels) {
            if let Some(id) = t.slot.and_then(|s| self.slot_ids.get(&s)) {
                row[2] = Value::str(&format!("<derived{id}>"));
            }
        }
        for (lvl, id) in lateral_ids {
            if let Some(row) = self.rows.get_mut(first_row + lvl) {
                row[2] = Value::str(&format!("<derived{id}>"));
            }
            let dependent = plan.scope.tables[plan.levels[lvl].table]
                .lateral
                .as_ref()
                .is_some_and(|l| !l.correlated.is_empty());
            if let Some(row) = lvl
                .checked_sub(1)
                .filter(|_| dependent)
                .and_then(|p| self.rows.get_mut(first_row + p))
            {
                let mut e = row[11].to_text();
                if !e.is_empty() && !row[11].is_null() {
                    e.push_str("; ");
                } else {
                    e.clear();
                }
                e.push_str(&format!("Rematerialize (<derived{id}>)"));
                row[11] = Value::str(&e);
            }
        }
        for (sub, correlated) in subqueries_of(plan) {
            let outer = correlated.iter().map(|e| self.ref_name(plan, e)).collect();
            self.subquery(sub, outer)?;
        }
        Ok(())
    }

    /// What EXPLAIN's `ref` shows for a key compared with `e` in `plan`: a column's
    /// full name, `const`, an outer column of a dependent subquery, or `func`.
    fn ref_name(&self, plan: &SelectPlan, e: &Expr) -> String {
        match e {
            Expr::Column(p) => {
                let (st, c) = plan.scope.column(*p);
                format!("{}.{}.{}", st.db, st.alias, c.name)
            }
            Expr::OuterRef(i) => self.outer_names.get(*i).cloned().unwrap_or("func".into()),
            e if reads_no_row(e) => "const".into(),
            _ => "func".into(),
        }
    }

    fn table_rows(&mut self, plan: &SelectPlan, id: u64, select_type: &str) -> Result<()> {
        let cx = self.cx;
        let n = plan.levels.len();
        if n == 0 {
            let extra = if plan.const_filter.is_empty() {
                "No tables used"
            } else {
                "Impossible WHERE"
            };
            let mut row = vec![Value::Null; 12];
            row[0] = Value::Int(id as i64);
            row[1] = Value::str(select_type);
            row[11] = Value::str(extra);
            self.rows.push(row);
            return Ok(());
        }
        // Tables read as one row known before the join runs (MySQL's "const" tables): a
        // unique key equal to constants or to columns of other const tables.
        let mut const_tables: Vec<usize> = Vec::new();
        let all_stats: Option<Vec<_>> = plan
            .scope
            .tables
            .iter()
            .map(|t| table_stats(cx, &t.table))
            .collect();
        let window = window_extras(plan);
        for (i, level) in plan.levels.iter().enumerate() {
            let t = &plan.scope.tables[level.table];
            let def = &t.def;
            let stats = table_stats(cx, &t.table).unwrap_or_default();
            let table_rows = stats.rows.max(1);
            let estimate = access_rows(&level.access, def, &stats).round().max(1.0) as u64;
            let (kind, key, key_len, refs, rows) = match &level.access {
                Access::Scan | Access::JoinBuffer { .. } => ("ALL", None, None, None, table_rows),
                Access::IndexIn { index, .. } | Access::IndexInSubquery { index, .. } => {
                    let ix = &def.indexes[*index];
                    (
                        "range",
                        Some(ix.name.clone()),
                        Some(key_part_len(&def.columns[ix.columns[0]])),
                        None,
                        range_count(plan, i, cx).unwrap_or(estimate).max(1),
                    )
                }
                Access::Index {
                    index,
                    eq,
                    lower,
                    upper,
                    ..
                } => {
                    let ix = &def.indexes[*index];
                    // The primary key columns a secondary key goes on into count too, as
                    // MySQL's key_len counts them.
                    let key_cols = crate::plan::block::key_columns(t, *index);
                    let ranged = lower.is_some() || upper.is_some();
                    let used = eq.len() + usize::from(ranged);
                    let len: u64 = key_cols
                        .iter()
                        .take(used)
                        .map(|&c| key_part_len(&def.columns[c]))
                        .sum();
                    let all_eq = eq.len() == ix.columns.len() && ix.unique;
                    let consts = eq.iter().all(|e| {
                        reads_no_row(e)
                            || matches!(e, Expr::Column(p) if const_tables.contains(&plan.scope.table_of(*p)))
                    });
                    let refs: Vec<String> = eq.iter().map(|e| self.ref_name(plan, e)).collect();
                    if ranged {
                        // A range with constant bounds is counted (up to a cap), as the
                        // index dives of MySQL's records_in_range; otherwise guessed.
                        let counted = if eq
                            .iter()
                            .chain(lower.iter().map(|b| &b.0))
                            .chain(upper.iter().map(|b| &b.0))
                            .all(reads_no_row)
                        {
                            range_count(plan, i, cx)
                        } else {
                            None
                        };
                        (
                            "range",
                            Some(ix.name.clone()),
                            Some(len),
                            None,
                            counted.unwrap_or(estimate).max(1),
                        )
                    } else if eq.is_empty() {
                        let full: u64 = ix
                            .columns
                            .iter()
                            .map(|&c| key_part_len(&def.columns[c]))
                            .sum();
                        ("index", Some(ix.name.clone()), Some(full), None, table_rows)
                    } else if all_eq && consts {
                        const_tables.push(level.table);
                        (
                            "const",
                            Some(ix.name.clone()),
                            Some(len),
                            Some(vec!["const"; refs.len()].join(",")),
                            1,
                        )
                    } else if all_eq {
                        (
                            "eq_ref",
                            Some(ix.name.clone()),
                            Some(len),
                            Some(refs.join(",")),
                            1,
                        )
                    } else {
                        (
                            "ref",
                            Some(ix.name.clone()),
                            Some(len),
                            Some(refs.join(",")),
                            estimate,
                        )
                    }
                }
            };
            let possible = if level.possible.is_empty() {
                Value::Null
            } else {
                Value::str(
                    &level
                        .possible
                        .iter()
                        .map(|&p| def.indexes[p].name.clone())
                        .collect::<Vec<_>>()
                        .join(","),
                )
            };
            let mut extra = Vec::new();
            // An outer join's ON conditions are checked on the row like WHERE's.
            let checks = level.filter.len() + level.on.len();
            let enforced_by_key = matches!(kind, "const" | "eq_ref" | "ref")
                && checks
                    <= match &level.access {
                        Access::Index { eq, .. } => eq.len(),
                        _ => 0,
                    };
            // A key compared with an expression ("func") is rechecked on the row.
            let func_ref = matches!(&level.access, Access::Index { eq, .. }
                if eq.iter().any(|e| !matches!(e, Expr::Column(_) | Expr::OuterRef(_)) && !reads_no_row(e)));
            if (checks > 0 && !enforced_by_key) || func_ref {
                extra.push("Using where");
            }
            // An index-only read: only possible here through a clustered primary key (the
            // record is the index entry) when every column the query reads of this table is
            // a key column, MySQL's rule for "Using index".
            // Through a secondary index the engine may answer from the entries alone
            // (`Table::covers`).
            if let Access::Index { index, .. }
            | Access::IndexIn { index, .. }
            | Access::IndexInSubquery { index, .. } = &level.access
            {
                let ix = &def.indexes[*index];
                let covered = if ix.primary {
                    t.table.clustered_primary() && {
                        let used = columns_used(plan, level.table);
                        used.iter().all(|c| ix.columns.contains(c))
                    }
                } else {
                    let all = vec![true; def.columns.len()];
                    t.table
                        .covers(*index, level.columns.as_deref().unwrap_or(&all))
                };
                if covered {
                    extra.push("Using index");
                }
            }
            if let Access::JoinBuffer { .. } = level.access {
                extra.push("Using join buffer (hash join)");
            }
            if i == 0
                && (plan.group.as_ref().is_some_and(|g| !g.groups.is_empty())
                    || plan.distinct
                    || window.temporary)
            {
                extra.push("Using temporary");
            }
            if i == 0 && ((!plan.order.is_empty() && !plan.order_satisfied) || window.sorts) {
                extra.push("Using filesort");
            }
            // A const table is read before the join: what it yields is known, one row.
            let filtered = if kind == "const" {
                1.0
            } else {
                crate::optimizer::filtered::filtered(&plan.scope, level, all_stats.as_deref())
            };
            let row = vec![
                Value::Int(id as i64),
                Value::str(select_type),
                Value::str(&t.alias),
                Value::Null,
                Value::str(kind),
                possible,
                key.map(|k| Value::str(&k)).unwrap_or(Value::Null),
                key_len
                    .map(|l| Value::str(&l.to_string()))
                    .unwrap_or(Value::Null),
                refs.map(|r| Value::str(&r)).unwrap_or(Value::Null),
                Value::UInt(rows),
                Value::Decimal(Decimal::new((filtered * 10000.0).round() as i128, 2)),
                Value::str(&extra.join("; ")),
            ];
            self.rows.push(row);
        }
        Ok(())
    }
}

/// What windowing adds to the first table's Extra, as MySQL 8 shows it.
#[derive(Default)]
struct WindowExtras {
    /// Some window sorts its input by PARTITION BY / ORDER BY: "Using filesort".
    sorts: bool,
    /// A window's rows are written to a temporary table first: a second window with
    /// another ordering reads the first one's output, and so do a final ORDER BY or
    /// DISTINCT: "Using temporary".
    temporary: bool,
}

fn window_extras(plan: &SelectPlan) -> WindowExtras {
    let Some(w) = &plan.windows else {
        return WindowExtras::default();
    };
    // Windows with the same partitioning and ordering share one sort and one pass.
    let mut orderings: Vec<String> = Vec::new();
    for win in &w.windows {
        let key = format!("{:?}{:?}", win.partition, win.order);
        if !orderings.contains(&key) {
            orderings.push(key);
        }
    }
    WindowExtras {
        sorts: w
            .windows
            .iter()
            .any(|win| !win.partition.is_empty() || !win.order.is_empty()),
        temporary: orderings.len() > 1
            || (!plan.order.is_empty() && !plan.order_satisfied)
            || plan.distinct,
    }
}

/// A key value known before any row of this block or an enclosing one is read.
fn reads_no_row(e: &Expr) -> bool {
    let mut none = true;
    e.walk(&mut |x| {
        if matches!(x, Expr::Column(_) | Expr::OuterRef(_)) {
            none = false;
        }
    });
    none
}

/// The subqueries a block's expressions hold (ids in the statement's table, first
/// mention first), with the outer values each reads (correlated: `DEPENDENT`).
fn subqueries_of(plan: &SelectPlan) -> Vec<(usize, Vec<Expr>)> {
    let mut found: Vec<(usize, Vec<Expr>)> = Vec::new();
    let mut note = |e: &Expr| {
        e.walk(&mut |x| {
            if let Expr::Subquery(s) = x {
                if !found.iter().any(|(id, _)| *id == s.id) {
                    found.push((s.id, s.correlated.clone()));
                }
            }
        })
    };
    plan.const_filter.iter().for_each(&mut note);
    for level in &plan.levels {
        level_exprs(level, &mut note);
    }
    if let Some(g) = &plan.group {
        g.groups.iter().for_each(|(e, _)| note(e));
        for a in &g.aggs {
            a.arg.iter().for_each(&mut note);
            a.more_args.iter().for_each(|(e, _, _)| note(e));
            a.order.iter().for_each(|(e, _, _)| note(e));
        }
        g.having.iter().for_each(&mut note);
    }
    plan.projection.iter().for_each(&mut note);
    found
}
