//! The window operator: takes every input row (the block's rows after WHERE, or its
//! groups after HAVING), appends the value of each window function call
//! ([`crate::exec::window::eval::compute`]), and passes the rows on in input order.

use super::{BoxedOp, Operator, Sink};
use crate::bind::window::WindowPlan;
use crate::expr::EvalCtx;
use strata_engine::Flow;
use strata_types::{Result, Value};

pub struct Window<'a> {
    pub input: BoxedOp<'a>,
    pub plan: &'a WindowPlan,
    pub ecx: &'a EvalCtx<'a>,
}

impl Operator for Window<'_> {
    fn run(&mut self, sink: &mut Sink<'_>) -> Result<Flow> {
        let mut rows: Vec<Vec<Value>> = Vec::new();
        self.input.run(&mut |r| {
            rows.push(r.to_vec());
            Ok(Flow::Continue)
        })?;
        crate::exec::window::eval::compute(self.plan, &mut rows, self.ecx)?;
        for r in &rows {
            if sink(r)? == Flow::Stop {
                return Ok(Flow::Stop);
            }
        }
        Ok(Flow::Continue)
    }
}
