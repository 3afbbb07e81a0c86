//! The projection operator: evaluates the select list (and the hidden ORDER BY keys
//! after it) over each input row.

use super::{BoxedOp, Operator, Sink};
use crate::expr::{EvalCtx, Expr};
use strata_engine::Flow;
use strata_types::{Result, Value};

pub struct Project<'a> {
    pub input: BoxedOp<'a>,
    pub exprs: &'a [Expr],
    pub ecx: &'a EvalCtx<'a>,
}

impl Operator for Project<'_> {
    fn run(&mut self, sink: &mut Sink<'_>) -> Result<Flow> {
        let (exprs, ecx) = (self.exprs, self.ecx);
        // One output buffer for the whole run: a streaming scan allocates no row.
        let mut out: Vec<Value> = Vec::with_capacity(exprs.len());
        self.input.run(&mut |r| {
            out.clear();
            for e in exprs {
                out.push(e.eval(r, ecx)?);
            }
            sink(&out)
        })
    }
}
