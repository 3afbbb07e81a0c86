//! Running window functions over a query block's rows: frame bounds ([`frame`]: ROWS and
//! RANGE, peers), the in-memory evaluation ([`eval`]) that partitions, orders and
//! computes each call, and, past the window's share of memory (`tmp_table_size`), the
//! spilling path ([`external`]: sorted passes, one partition held at a time) with its
//! evaluation along a partition written to disk ([`stream`]). What the calls and
//! windows are is bound in `crate::bind::window`.

pub mod eval;
pub mod external;
pub mod frame;
pub mod stream;
