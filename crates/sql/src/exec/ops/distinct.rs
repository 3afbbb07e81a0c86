//! SELECT DISTINCT: passes the first row of each set of equal visible columns (compared
//! by each column's collation; hidden sort keys after them do not count).

use super::{BoxedOp, Operator, Sink};
use crate::expr::keys::group_key;
use crate::hash_tables::FastSet;
use strata_engine::Flow;
use strata_types::{Collation, ColumnMeta, Result};

pub struct Distinct<'a> {
    pub input: BoxedOp<'a>,
    /// The visible columns, whose charset picks the comparison.
    pub columns: &'a [ColumnMeta],
}

impl Operator for Distinct<'_> {
    fn run(&mut self, sink: &mut Sink<'_>) -> Result<Flow> {
        let columns = self.columns;
        let mut seen: FastSet<Vec<u8>> = FastSet::default();
        self.input.run(&mut |r| {
            let mut key = Vec::new();
            for (v, c) in r.iter().zip(columns) {
                let coll = Collation::from_id(c.charset);
                group_key(&mut key, v, coll);
            }
            if seen.insert(key) {
                sink(r)
            } else {
                Ok(Flow::Continue)
            }
        })
    }
}
