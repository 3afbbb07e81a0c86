//! The block's row sources: the join of its FROM clause ([`JoinSource`], run by
//! [`crate::exec::join`]: per level a table scan, an index lookup or range, or a probe of
//! a hash join buffer, nested-loop joined, outer-join groups NULL-extended, each level's
//! WHERE conditions applied as soon as its row is in place), and the engine's exact row
//! count for a bare `SELECT COUNT(*) FROM t` ([`CountStar`]).

use super::{Operator, Sink};
use crate::exec::hash_join::JoinBufferCache;
use crate::expr::EvalCtx;
use crate::plan::block::SelectPlan;
use strata_engine::{Flow, Txn};
use strata_types::{Result, Value};

pub struct JoinSource<'a> {
    pub plan: &'a SelectPlan,
    pub txn: &'a Txn,
    pub ecx: &'a EvalCtx<'a>,
    /// The block's conditions without table columns held: false gives no rows.
    pub const_ok: bool,
    /// Where join buffers outlive this run (the execution), if anywhere.
    pub cache: Option<&'a dyn JoinBufferCache>,
}

impl Operator for JoinSource<'_> {
    fn run(&mut self, sink: &mut Sink<'_>) -> Result<Flow> {
        if !self.const_ok {
            return Ok(Flow::Continue);
        }
        let mut row = vec![Value::Null; self.plan.scope.width()];
        crate::exec::join::run(self.plan, self.txn, &mut row, self.ecx, self.cache, sink)
    }
}

/// `SELECT COUNT(*) FROM t` with nothing else: one row, the engine's exact count, put
/// through the select list.
pub struct CountStar<'a> {
    pub plan: &'a SelectPlan,
    pub ecx: &'a EvalCtx<'a>,
}

impl Operator for CountStar<'_> {
    fn run(&mut self, sink: &mut Sink<'_>) -> Result<Flow> {
        let plan = self.plan;
        let n = plan.scope.tables[plan.levels[0].table].table.status().rows;
        let count = [Value::Int(n as i64)];
        let row: Vec<Value> = plan
            .projection
            .iter()
            .map(|e| e.eval(&count, self.ecx))
            .collect::<Result<_>>()?;
        sink(&row)
    }
}
