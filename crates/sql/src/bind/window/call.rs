//! Binding window calls: the WINDOW clause's named windows (checked as MySQL checks
//! them: 3579, 3580, 3581, 3582, 3583, 3591), each `OVER` clause merged with the named
//! window it refines, frames (3584-3588), and the calls themselves with their result
//! types. Only the select list and ORDER BY bind with a [`Collector`]; any other clause,
//! an aggregate's argument or another window call meets a window function with none
//! and answers 3593.

use super::{marker, Bound, Frame, Unit, WinFunc, Window, WindowCall, WindowPlan};
use crate::bind::{unify, AggFunc, AggSpec, Binder, SType};
use crate::expr::functions::Func;
use crate::expr::Expr;
use sqlparser::ast;
use strata_types::{Collation, Error, Result, Value};

/// The name errors give a window written inline after OVER.
pub const UNNAMED: &str = "<unnamed window>";

/// A block's named windows and the windows and calls bound so far.
pub struct Collector {
    named: Vec<(String, ast::WindowSpec)>,
    /// Each window's bound form as text, so calls over equal windows share one sort.
    keys: Vec<String>,
    pub plan: WindowPlan,
}

/// A window specification with the named windows it refines folded in.
struct Merged {
    spec: ast::WindowSpec,
    /// The window whose ORDER BY it has, for 3583.
    order_from: Option<String>,
}

impl Collector {
    /// Checks the WINDOW clause: every named window must resolve, even one no call uses
    /// (MySQL checks them all).
    pub fn new(defs: &[ast::NamedWindowDefinition]) -> Result<Collector> {
        let mut named: Vec<(String, ast::WindowSpec)> = Vec::with_capacity(defs.len());
        for d in defs {
            let name = d.0.value.clone();
            let spec = match &d.1 {
                ast::NamedWindowExpr::WindowSpec(s) => s.clone(),
                // `WINDOW w AS v` without parentheses is not MySQL syntax.
                ast::NamedWindowExpr::NamedWindow(v) => {
                    return Err(Error::Syntax(format!("{name} AS {v}")))
                }
            };
            if named.iter().any(|(n, _)| n.eq_ignore_ascii_case(&name)) {
                return Err(Error::WindowDuplicateName(name));
            }
            named.push((name, spec));
        }
        let c = Collector {
            named,
            keys: vec![],
            plan: WindowPlan::default(),
        };
        for (name, _) in &c.named {
            c.resolve_named(name, &mut vec![])?;
        }
        Ok(c)
    }

    fn find(&self, name: &str) -> Option<&ast::WindowSpec> {
        self.named
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, s)| s)
    }

    /// A named window with every window it refines folded in; `seen` holds the names
    /// on the way, to find a cycle.
    fn resolve_named(&self, name: &str, seen: &mut Vec<String>) -> Result<Merged> {
        if seen.iter().any(|s| s.eq_ignore_ascii_case(name)) {
            return Err(Error::WindowCircularity);
        }
        let def = self
            .find(name)
            .ok_or_else(|| Error::WindowNoSuchWindow(name.to_string()))?
            .clone();
        seen.push(name.to_string());
        let merged = self.refine(&def, name, seen);
        seen.pop();
        merged
    }

    /// `spec` (named `own`) on top of the window it names, if any: the base gives the
    /// partitioning and may give the ORDER BY; the frame is the refining window's own.
    fn refine(&self, spec: &ast::WindowSpec, own: &str, seen: &mut Vec<String>) -> Result<Merged> {
        let own_order = (!spec.order_by.is_empty()).then(|| own.to_string());
        let Some(base) = &spec.window_name else {
            return Ok(Merged {
                spec: spec.clone(),
                order_from: own_order,
            });
        };
        let base_frame = self
            .find(&base.value)
            .ok_or_else(|| Error::WindowNoSuchWindow(base.value.clone()))?
            .window_frame
            .is_some();
        let resolved = self.resolve_named(&base.value, seen)?;
        if !spec.partition_by.is_empty() {
            return Err(Error::WindowNoChildPartitioning);
        }
        if let (Some(mine), Some(theirs)) = (&own_order, &resolved.order_from) {
            return Err(Error::WindowNoRedefineOrderBy(mine.clone(), theirs.clone()));
        }
        if base_frame {
            return Err(Error::WindowNoInheritFrame(base.value.clone()));
        }
        let order_from = own_order.or(resolved.order_from);
        let order_by = if spec.order_by.is_empty() {
            resolved.spec.order_by
        } else {
            spec.order_by.clone()
        };
        Ok(Merged {
            spec: ast::WindowSpec {
                window_name: None,
                partition_by: resolved.spec.partition_by,
                order_by,
                window_frame: spec.window_frame.clone(),
            },
            order_from,
        })
    }

    /// The window a call's OVER clause names, and the name its errors give.
    fn window_of(&self, over: &ast::WindowType) -> Result<(ast::WindowSpec, String)> {
        Ok(match over {
            ast::WindowType::NamedWindow(id) => (
                self.resolve_named(&id.value, &mut vec![])?.spec,
                id.value.clone(),
            ),
            ast::WindowType::WindowSpec(s) => (
                self.refine(s, UNNAMED, &mut vec![])?.spec,
                UNNAMED.to_string(),
            ),
        })
    }

    /// The index of a bound window, shared with an equal one already bound.
    fn add_window(&mut self, w: Window) -> usize {
        let key = format!("{:?}|{:?}|{:?}", w.partition, w.order, w.frame);
        if let Some(i) = self.keys.iter().position(|k| *k == key) {
            return i;
        }
        self.keys.push(key);
        self.plan.windows.push(w);
        self.plan.windows.len() - 1
    }
}

/// Binds a windowed call (`f.over` is set) met by `b`: 3593 when the clause `b` binds
/// allows none. Returns the call's marker column.
pub fn bind_call(
    b: &mut Binder,
    f: &ast::Function,
    name: &str,
) -> Result<(Expr, SType, Collation)> {
    let lname = name.to_ascii_lowercase();
    let Some(over) = &f.over else {
        return Err(Error::Internal(format!("{name} has no OVER")));
    };
    // Taken while the call's arguments and window bind, so a window function inside
    // them finds none and is refused.
    let Some(collector) = b.windows.take() else {
        return Err(Error::WindowInvalidUse(lname));
    };
    let bound = bind_with(b, &mut *collector, f, &lname, over);
    b.windows = Some(collector);
    bound
}

fn function_args(f: &ast::Function) -> Result<(Vec<ast::Expr>, bool, bool)> {
    Ok(match &f.args {
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
            (args, distinct, star)
        }
        ast::FunctionArguments::Subquery(_) => {
            return Err(Error::NotSupported("subqueries".into()))
        }
    })
}

/// True when a window function occurs in the expression (outside subqueries, whose
/// windows are their own).
fn has_window_call(e: &ast::Expr) -> bool {
    crate::bind::has_call_of_this_block(e, &|f| f.over.is_some())
}

/// True when a bound expression is a constant of the statement: no column, no outer
/// reference, no subquery (parameters and literals are).
fn is_constant(e: &Expr) -> bool {
    let mut constant = true;
    e.walk(&mut |x| {
        if matches!(x, Expr::Column(_) | Expr::OuterRef(_) | Expr::Subquery(_)) {
            constant = false;
        }
    });
    constant
}

/// A count argument (NTILE's buckets, LAG's offset, NTH_VALUE's N) as a number of at
/// least `min`; 1210 for anything else.
pub fn count_value(v: &Value, min: u64, func: &str) -> Result<u64> {
    match v {
        Value::Int(i) if *i >= 0 && *i as u64 >= min => Ok(*i as u64),
        Value::UInt(u) if *u >= min => Ok(*u),
        _ => Err(Error::WrongArguments(func.to_string())),
    }
}

/// 1210 unless a count argument is a constant; a literal is checked now, a parameter
/// when the statement runs.
fn check_count_arg(e: &Expr, min: u64, func: &str) -> Result<()> {
    if !is_constant(e) {
        return Err(Error::WrongArguments(func.to_string()));
    }
    if let Expr::Literal(v) = e {
        count_value(v, min, func)?;
    }
    Ok(())
}

/// The static type of an aggregate's result, as grouping gives it.
pub fn aggregate_type(func: AggFunc, arg: SType) -> SType {
    crate::bind::aggregate_type(func, arg, &[])
}

/// A position (`PARTITION BY 1`) in a window, or a parameter where one may have been
/// (the plan cache turns literals after FROM into parameters): not a key to sort by.
fn is_position(e: &ast::Expr) -> bool {
    matches!(e, ast::Expr::Value(v)
        if matches!(v.value, ast::Value::Number(..) | ast::Value::Placeholder(_)))
}

fn bind_with(
    b: &mut Binder,
    c: &mut Collector,
    f: &ast::Function,
    lname: &str,
    over: &ast::WindowType,
) -> Result<(Expr, SType, Collation)> {
    if matches!(f.null_treatment, Some(ast::NullTreatment::IgnoreNulls)) {
        // MySQL 8 parses IGNORE NULLS but refuses it, as here.
        return Err(Error::NotSupported("IGNORE NULLS".into()));
    }
    if f.filter.is_some() || !f.within_group.is_empty() {
        return Err(Error::Syntax(f.to_string()));
    }
    let (args, distinct, star) = function_args(f)?;
    if distinct {
        return Err(Error::NotSupported("<window function>(DISTINCT ..)".into()));
    }
    let (func, agg_func) = match lname {
        "row_number" => (WinFunc::RowNumber, None),
        "rank" => (WinFunc::Rank, None),
        "dense_rank" => (WinFunc::DenseRank, None),
        "percent_rank" => (WinFunc::PercentRank, None),
        "cume_dist" => (WinFunc::CumeDist, None),
        "ntile" => (WinFunc::Ntile, None),
        "lag" => (WinFunc::Lag, None),
        "lead" => (WinFunc::Lead, None),
        "first_value" => (WinFunc::FirstValue, None),
        "last_value" => (WinFunc::LastValue, None),
        "nth_value" => (WinFunc::NthValue, None),
        "count" if star => (WinFunc::Aggregate, Some(AggFunc::CountStar)),
        "count" => (WinFunc::Aggregate, Some(AggFunc::Count)),
        "sum" => (WinFunc::Aggregate, Some(AggFunc::Sum)),
        "avg" => (WinFunc::Aggregate, Some(AggFunc::Avg)),
        "min" => (WinFunc::Aggregate, Some(AggFunc::Min)),
        "max" => (WinFunc::Aggregate, Some(AggFunc::Max)),
        "bit_and" => (WinFunc::Aggregate, Some(AggFunc::BitAnd)),
        "bit_or" => (WinFunc::Aggregate, Some(AggFunc::BitOr)),
        "bit_xor" => (WinFunc::Aggregate, Some(AggFunc::BitXor)),
        "std" | "stddev" | "stddev_pop" => (WinFunc::Aggregate, Some(AggFunc::StdPop)),
        "stddev_samp" => (WinFunc::Aggregate, Some(AggFunc::StdSamp)),
        "variance" | "var_pop" => (WinFunc::Aggregate, Some(AggFunc::VarPop)),
        "var_samp" => (WinFunc::Aggregate, Some(AggFunc::VarSamp)),
        _ => {
            return Err(Error::NotSupported(format!(
                "window function {}() OVER",
                lname.to_ascii_uppercase()
            )))
        }
    };
    let (lo, hi) = match func {
        WinFunc::RowNumber
        | WinFunc::Rank
        | WinFunc::DenseRank
        | WinFunc::PercentRank
        | WinFunc::CumeDist => (0, 0),
        WinFunc::Lag | WinFunc::Lead => (1, 3),
        WinFunc::NthValue => (2, 2),
        WinFunc::Aggregate if star => (0, 0),
        _ => (1, 1),
    };
    if (star && agg_func != Some(AggFunc::CountStar)) || args.len() < lo || args.len() > hi {
        // MySQL's grammar has these arities, so anything else is a syntax error there.
        return Err(Error::Syntax(f.to_string()));
    }

    // The arguments read the row the window sees (a grouped row in a grouped query).
    let mut bound = Vec::with_capacity(args.len());
    for a in &args {
        bound.push(b.bind(a)?);
    }
    match func {
        WinFunc::Ntile => check_count_arg(&bound[0].0, 1, lname)?,
        WinFunc::Lag | WinFunc::Lead => {
            if let Some((e, _, _)) = bound.get(1) {
                check_count_arg(e, 0, lname)?;
            }
            // A parameter's type is known only when the statement runs, but the
            // result's type (the argument's and the default's together) is sent first:
            // a string default of an integer column would show as a number.
            if let Some((e, SType::Null, _)) = bound.get(2) {
                let mut param = false;
                e.walk(&mut |x| param |= matches!(x, Expr::Param(_)));
                if param {
                    return Err(Error::NotSupported(format!(
                        "a parameter as the default of {}",
                        lname.to_ascii_uppercase()
                    )));
                }
            }
        }
        WinFunc::NthValue => check_count_arg(&bound[1].0, 1, lname)?,
        _ => {}
    }

    let (spec, wname) = c.window_of(over)?;
    let spec_exprs = spec
        .partition_by
        .iter()
        .chain(spec.order_by.iter().map(|o| &o.expr));
    for e in spec_exprs {
        if has_window_call(e) {
            return Err(Error::WindowNestedInSpec(wname));
        }
        if is_position(e) {
            return Err(Error::NotSupported(
                "a position in a window's PARTITION BY or ORDER BY".into(),
            ));
        }
    }
    let mut partition = Vec::with_capacity(spec.partition_by.len());
    for p in &spec.partition_by {
        let (e, _, coll) = b.bind(p)?;
        partition.push((e, coll));
    }
    let mut order = Vec::with_capacity(spec.order_by.len());
    let mut order_types = Vec::with_capacity(spec.order_by.len());
    for o in &spec.order_by {
        if o.options.nulls_first.is_some() {
            return Err(Error::Syntax(o.to_string()));
        }
        let desc = matches!(o.options.sort, Some(ast::OrderBySort::Desc));
        let (e, t, coll) = b.bind(&o.expr)?;
        crate::bind::refuse_time_order(t.meta("").field_type)?;
        order.push((e, desc, coll));
        order_types.push(t);
    }
    let frame = match &spec.window_frame {
        None => Frame::default_frame(),
        Some(fr) => bind_frame(b, fr, &order_types, &wname)?,
    };
    let window = c.add_window(Window {
        name: wname,
        partition,
        order,
        frame,
    });

    let (arg_ty, arg_coll) = bound
        .first()
        .map(|(_, t, c)| (*t, *c))
        .unwrap_or((SType::Int, Collation::GeneralCi));
    let ty = match func {
        WinFunc::RowNumber | WinFunc::Rank | WinFunc::DenseRank | WinFunc::Ntile => SType::UInt,
        WinFunc::PercentRank | WinFunc::CumeDist => SType::DOUBLE,
        WinFunc::Lag | WinFunc::Lead => match bound.get(2) {
            Some((_, t, _)) => unify(arg_ty, *t),
            None => arg_ty,
        },
        WinFunc::FirstValue | WinFunc::LastValue | WinFunc::NthValue => arg_ty,
        WinFunc::Aggregate => aggregate_type(agg_func.unwrap_or(AggFunc::Count), arg_ty),
    };
    if let Some(func) = agg_func {
        crate::bind::refuse_time_extreme(func, arg_ty, "MIN/MAX() OVER")?;
        if func.is_bitwise() && arg_ty == SType::Binary {
            // As grouped: MySQL 8 works bytewise on binary strings, not written yet.
            return Err(Error::NotSupported(format!(
                "{}() OVER of a binary string",
                lname.to_ascii_uppercase()
            )));
        }
    }
    let agg = agg_func.map(|func| {
        AggSpec::new(
            func,
            bound.first().map(|(e, _, _)| e.clone()),
            false,
            arg_ty,
            arg_coll,
        )
    });
    c.plan.calls.push(WindowCall {
        func,
        window,
        args: bound.into_iter().map(|(e, _, _)| e).collect(),
        agg,
        ty,
        coll: arg_coll,
    });
    let value = marker(c.plan.calls.len() - 1);
    // A DECIMAL result shows its declared scale whatever the value (`LAG(d, 1, 0)`
    // shows its default as 0.00).
    let value = match ty {
        SType::Decimal(scale) => Expr::Func(Func::ShowScale(scale), vec![value]),
        _ => value,
    };
    Ok((value, ty, arg_coll))
}

fn bind_frame(
    b: &mut Binder,
    fr: &ast::WindowFrame,
    order_types: &[SType],
    wname: &str,
) -> Result<Frame> {
    let unit = match fr.units {
        ast::WindowFrameUnits::Rows => Unit::Rows,
        ast::WindowFrameUnits::Range => Unit::Range,
        // Not MySQL syntax.
        ast::WindowFrameUnits::Groups => return Err(Error::Syntax("GROUPS".into())),
    };
    if fr.end_bound.is_none() && matches!(fr.start_bound, ast::WindowFrameBound::Following(_)) {
        // `ROWS 1 FOLLOWING` alone is not MySQL syntax either.
        return Err(Error::Syntax(fr.start_bound.to_string()));
    }
    let mut bound = |wb: &ast::WindowFrameBound| -> Result<Bound> {
        Ok(match wb {
            ast::WindowFrameBound::CurrentRow => Bound::CurrentRow,
            ast::WindowFrameBound::Preceding(None) => Bound::UnboundedPreceding,
            ast::WindowFrameBound::Following(None) => Bound::UnboundedFollowing,
            ast::WindowFrameBound::Preceding(Some(e))
            | ast::WindowFrameBound::Following(Some(e)) => {
                match e.as_ref() {
                    ast::Expr::Interval(_) => {
                        return Err(Error::NotSupported("INTERVAL in a window frame".into()))
                    }
                    // MySQL's grammar takes an unsigned number or a `?` here, nothing else.
                    ast::Expr::Value(v)
                        if matches!(
                            v.value,
                            ast::Value::Number(..) | ast::Value::Placeholder(_)
                        ) => {}
                    other => return Err(Error::Syntax(other.to_string())),
                }
                let (x, _, _) = b.bind(e)?;
                if let Expr::Literal(v) = &x {
                    super::check_offset(unit, v, wname)?;
                }
                if matches!(wb, ast::WindowFrameBound::Preceding(_)) {
                    Bound::Preceding(x)
                } else {
                    Bound::Following(x)
                }
            }
        })
    };
    let start = bound(&fr.start_bound)?;
    let end = match &fr.end_bound {
        Some(e) => bound(e)?,
        None => Bound::CurrentRow,
    };
    if matches!(start, Bound::UnboundedFollowing) {
        return Err(Error::WindowFrameStartIllegal(wname.to_string()));
    }
    if matches!(end, Bound::UnboundedPreceding) {
        return Err(Error::WindowFrameEndIllegal(wname.to_string()));
    }
    let offset = |x: &Bound| matches!(x, Bound::Preceding(_) | Bound::Following(_));
    if unit == Unit::Range && (offset(&start) || offset(&end)) {
        match order_types {
            [SType::Int | SType::UInt | SType::Double(_) | SType::Decimal(_)] => {}
            [SType::Date | SType::DateTime(_)] => {
                return Err(Error::WindowRangeFrameTemporalType(wname.to_string()))
            }
            _ => return Err(Error::WindowRangeFrameOrderType(wname.to_string())),
        }
    }
    Ok(Frame { unit, start, end })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn defs(sql: &str) -> Vec<ast::NamedWindowDefinition> {
        match crate::parse::parse(sql).unwrap().remove(0) {
            ast::Statement::Query(q) => match *q.body {
                ast::SetExpr::Select(s) => s.named_window,
                other => panic!("{other}"),
            },
            other => panic!("{other}"),
        }
    }

    fn code(sql: &str) -> u16 {
        match Collector::new(&defs(sql)) {
            Ok(_) => 0,
            Err(e) => e.code(),
        }
    }

    #[test]
    fn named_windows_are_checked_as_mysql_does() {
        assert_eq!(
            code("SELECT 1 FROM t WINDOW w AS (), v AS (w ORDER BY a)"),
            0
        );
        assert_eq!(code("SELECT 1 FROM t WINDOW w AS (), W AS ()"), 3591);
        assert_eq!(code("SELECT 1 FROM t WINDOW w AS (nowhere)"), 3579);
        assert_eq!(code("SELECT 1 FROM t WINDOW a AS (b), b AS (a)"), 3580);
        assert_eq!(
            code("SELECT 1 FROM t WINDOW w AS (), v AS (w PARTITION BY a)"),
            3581
        );
        assert_eq!(
            code("SELECT 1 FROM t WINDOW w AS (ROWS UNBOUNDED PRECEDING), v AS (w)"),
            3582
        );
        let err = Collector::new(&defs(
            "SELECT 1 FROM t WINDOW w AS (ORDER BY a), v AS (w ORDER BY b)",
        ))
        .err()
        .unwrap();
        assert_eq!(err.code(), 3583);
        assert_eq!(
            err.to_string(),
            "Window 'v' cannot inherit 'w' since both contain an ORDER BY clause."
        );
    }

    #[test]
    fn a_refining_window_takes_the_base_partition_and_order() {
        let c = Collector::new(&defs(
            "SELECT 1 FROM t WINDOW w AS (PARTITION BY g), v AS (w ORDER BY a), u AS (v ROWS 2 PRECEDING)",
        ))
        .unwrap();
        let m = c.resolve_named("u", &mut vec![]).unwrap();
        assert_eq!(m.spec.partition_by.len(), 1);
        assert_eq!(m.spec.order_by.len(), 1);
        assert!(m.spec.window_frame.is_some());
        assert_eq!(m.order_from.as_deref(), Some("v"));
        // An inline window refining a named one with ORDER BY gives 3583 too.
        let inline = ast::WindowSpec {
            window_name: Some(ast::Ident::new("v")),
            partition_by: vec![],
            order_by: m.spec.order_by.clone(),
            window_frame: None,
        };
        let err = c.refine(&inline, UNNAMED, &mut vec![]).err().unwrap();
        assert_eq!(
            err.to_string(),
            "Window '<unnamed window>' cannot inherit 'v' since both contain an ORDER BY clause."
        );
    }

    #[test]
    fn count_arguments_are_constant_integers() {
        assert_eq!(count_value(&Value::Int(3), 1, "ntile").unwrap(), 3);
        assert_eq!(
            count_value(&Value::Int(0), 1, "ntile").unwrap_err().code(),
            1210
        );
        assert_eq!(count_value(&Value::Int(0), 0, "lag").unwrap(), 0);
        assert_eq!(
            count_value(&Value::Null, 0, "lag").unwrap_err().code(),
            1210
        );
        assert_eq!(
            check_count_arg(&Expr::Column(0), 0, "lag")
                .unwrap_err()
                .code(),
            1210
        );
        assert!(check_count_arg(&Expr::Param(0), 1, "ntile").is_ok());
    }

    #[test]
    fn windowed_calls_are_found_outside_subqueries_only() {
        let e = crate::parse::test_expr;
        assert!(has_window_call(&e("1 + ROW_NUMBER() OVER ()")));
        assert!(!has_window_call(&e("SUM(x)")));
        assert!(!has_window_call(&e("(SELECT RANK() OVER () FROM u)")));
    }
}
