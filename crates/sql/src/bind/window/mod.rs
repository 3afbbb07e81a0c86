//! Window functions (`… OVER (…)`): the bound windows and calls of one query block.
//!
//! A block's windows are computed after WHERE, GROUP BY and HAVING and before DISTINCT,
//! ORDER BY and LIMIT. The executor collects the rows the projection would read (a
//! FROM row, or a grouped row), [`eval::compute`] appends one value per window call to
//! each, and the projection reads those values as extra columns: call `k` is column
//! `base + k`, where `base` is the width of the rows collected.
//!
//! While a block is being bound its width is not known yet (a grouped row grows with
//! every aggregate the binder meets), so a call first binds to a marker column far past
//! any real row ([`marker`]); [`place`] moves the markers once the width is known.
//!
//! [`bind`] turns `OVER` clauses and the WINDOW clause into [`Window`]s, [`frame`] finds
//! each row's frame in its partition, and [`eval`] runs the calls.

pub mod call;

use crate::bind::{AggSpec, SType};
use crate::expr::Expr;
use strata_types::{Collation, Error, Result, Value};

/// What a window call computes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WinFunc {
    RowNumber,
    Rank,
    DenseRank,
    PercentRank,
    CumeDist,
    Ntile,
    Lag,
    Lead,
    FirstValue,
    LastValue,
    NthValue,
    /// COUNT, SUM, AVG, MIN or MAX over the frame ([`WindowCall::agg`] says which).
    Aggregate,
}

impl WinFunc {
    /// The functions that read the frame; the others see the whole partition (MySQL
    /// ignores a frame given to them).
    pub fn uses_frame(self) -> bool {
        matches!(
            self,
            WinFunc::FirstValue | WinFunc::LastValue | WinFunc::NthValue | WinFunc::Aggregate
        )
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Unit {
    Rows,
    Range,
}

/// One end of a frame; an offset is a constant (a literal or a parameter), evaluated
/// once per execution.
#[derive(Clone, Debug)]
pub enum Bound {
    UnboundedPreceding,
    Preceding(Expr),
    CurrentRow,
    Following(Expr),
    UnboundedFollowing,
}

#[derive(Clone, Debug)]
pub struct Frame {
    pub unit: Unit,
    pub start: Bound,
    pub end: Bound,
}

impl Frame {
    /// MySQL's frame when a window gives none: with ORDER BY, from the partition's start
    /// to the current row's last peer; without, the whole partition (every row is a
    /// peer of every other, so the same RANGE frame says both).
    pub fn default_frame() -> Frame {
        Frame {
            unit: Unit::Range,
            start: Bound::UnboundedPreceding,
            end: Bound::CurrentRow,
        }
    }
}

/// One window: the rows of a partition in their order, and the frame.
#[derive(Clone, Debug)]
pub struct Window {
    /// The name errors quote: the window's own, or `<unnamed window>`.
    pub name: String,
    pub partition: Vec<(Expr, Collation)>,
    /// (key, descending, collation)
    pub order: Vec<(Expr, bool, Collation)>,
    pub frame: Frame,
}

/// One windowed call of the block.
#[derive(Clone, Debug)]
pub struct WindowCall {
    pub func: WinFunc,
    /// Index into [`WindowPlan::windows`].
    pub window: usize,
    /// The arguments, bound in the layout of the rows collected (`LAG(x, 2, 0)`: three).
    pub args: Vec<Expr>,
    /// For [`WinFunc::Aggregate`]: the aggregate, as grouping runs it.
    pub agg: Option<AggSpec>,
    pub ty: SType,
    pub coll: Collation,
}

/// The windows of a query block and the calls over them.
#[derive(Clone, Debug, Default)]
pub struct WindowPlan {
    pub windows: Vec<Window>,
    pub calls: Vec<WindowCall>,
}

/// Where the markers start: far past any row a block can have.
const MARK: usize = usize::MAX / 2;

/// The column a call's value is read from while its block is still being bound.
pub fn marker(call: usize) -> Expr {
    Expr::Column(MARK + call)
}

/// The call a marker column stands for.
pub fn marker_call(e: &Expr) -> Option<usize> {
    match e {
        Expr::Column(c) if *c >= MARK => Some(c - MARK),
        _ => None,
    }
}

/// True when the expression reads a window call's value.
pub fn has_marker(e: &Expr) -> bool {
    let mut found = false;
    e.walk(&mut |x| {
        if marker_call(x).is_some() {
            found = true;
        }
    });
    found
}

/// Moves the markers to the columns the calls' values take: `base + call`.
pub fn place(e: &mut Expr, base: usize) {
    e.map_columns(&|c| if c >= MARK { base + (c - MARK) } else { c });
}

/// 3586 unless `v` is an offset the unit takes: a non-negative integer for ROWS, a
/// non-negative number for RANGE.
pub fn check_offset(unit: Unit, v: &Value, window: &str) -> Result<()> {
    let ok = match (unit, v) {
        (_, Value::Int(i)) => *i >= 0,
        (_, Value::UInt(_)) => true,
        (Unit::Range, Value::Decimal(d)) => d.mantissa() >= 0,
        (Unit::Range, Value::Double(f)) => *f >= 0.0,
        _ => false,
    };
    if ok {
        Ok(())
    } else {
        Err(Error::WindowFrameIllegal(window.to_string()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn markers_move_past_the_collected_row() {
        let mut e = Expr::Arith(
            crate::expr::ArithOp::Add,
            Box::new(marker(1)),
            Box::new(Expr::Column(3)),
        );
        assert!(has_marker(&e));
        assert_eq!(marker_call(&marker(4)), Some(4));
        assert_eq!(marker_call(&Expr::Column(4)), None);
        place(&mut e, 10);
        assert!(!has_marker(&e));
        let Expr::Arith(_, a, b) = e else { panic!() };
        assert!(matches!(*a, Expr::Column(11)));
        assert!(matches!(*b, Expr::Column(3)));
    }
}
