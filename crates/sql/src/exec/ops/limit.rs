//! OFFSET and LIMIT: skips the first `offset` rows, passes at most `limit`, and then
//! answers [`Flow::Stop`] so the operators below stop reading. `LIMIT 0` does not run
//! its input at all, as MySQL's "Zero limit" plan.

use super::{BoxedOp, Operator, Sink};
use strata_engine::Flow;
use strata_types::Result;

pub struct Limit<'a> {
    pub input: BoxedOp<'a>,
    pub offset: u64,
    pub limit: Option<u64>,
}

impl Operator for Limit<'_> {
    fn run(&mut self, sink: &mut Sink<'_>) -> Result<Flow> {
        let (offset, limit) = (self.offset, self.limit);
        if limit == Some(0) {
            return Ok(Flow::Continue);
        }
        let (mut skipped, mut sent) = (0u64, 0u64);
        let flow = self.input.run(&mut |r| {
            if skipped < offset {
                skipped += 1;
                return Ok(Flow::Continue);
            }
            sent += 1;
            let f = sink(r)?;
            Ok(if limit.is_some_and(|l| sent >= l) {
                Flow::Stop
            } else {
                f
            })
        })?;
        // Reaching the limit is this operator's own stop, not the consumer's.
        Ok(if limit.is_some_and(|l| sent >= l) {
            Flow::Continue
        } else {
            flow
        })
    }
}
