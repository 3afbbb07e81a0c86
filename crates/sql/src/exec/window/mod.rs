//! Running window functions over a query block's rows: frame bounds ([`frame`]: ROWS and
//! RANGE, peers) and the window operator ([`eval`]) that partitions, orders and computes
//! each call. What the calls and windows are is bound in `crate::bind::window`.

pub mod eval;
pub mod frame;
