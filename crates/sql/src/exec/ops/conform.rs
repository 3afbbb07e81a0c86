//! Conversion of rows to a query expression's result columns: the rows of a set
//! operation's parts, of a parenthesised query and of a recursive CTE take the types
//! their result declares (`SELECT 1 UNION SELECT 2.5` gives `1.0`), as MySQL converts
//! them; and the collation a result column compares with.

use super::{BoxedOp, Operator, Sink};
use strata_engine::Flow;
use strata_types::{Collation, ColumnMeta, Decimal, Result, Value};

/// Passes each input row on converted to `columns`.
pub struct Conform<'a> {
    pub input: BoxedOp<'a>,
    pub columns: &'a [ColumnMeta],
}

impl Operator for Conform<'_> {
    fn run(&mut self, sink: &mut Sink<'_>) -> Result<Flow> {
        let columns = self.columns;
        let mut row: Vec<Value> = Vec::new();
        self.input.run(&mut |r| {
            row.clear();
            row.extend_from_slice(r);
            conform_row(&mut row, columns);
            sink(&row)
        })
    }
}

/// Converts every value of `row` to its column's type.
pub fn conform_row(row: &mut [Value], columns: &[ColumnMeta]) {
    for (v, m) in row.iter_mut().zip(columns) {
        conform(v, m);
    }
}

/// The collation a result column's values compare with (for DISTINCT, UNION, INTERSECT
/// and EXCEPT).
pub fn column_collation(m: &ColumnMeta) -> Collation {
    Collation::from_id(m.charset)
}

/// Converts a value to a result column's type.
fn conform(v: &mut Value, m: &ColumnMeta) {
    use strata_types::FieldType as F;
    let converted = match (&*v, m.field_type) {
        (Value::Null, _) => return,
        (Value::Int(i), F::NewDecimal) => Value::Decimal(Decimal::from_i64(*i).rescale(m.decimals)),
        (Value::UInt(u), F::NewDecimal) => {
            Value::Decimal(Decimal::new(*u as i128, 0).rescale(m.decimals))
        }
        (Value::Decimal(d), F::NewDecimal) if d.scale < m.decimals => {
            Value::Decimal(d.rescale(m.decimals))
        }
        // A DATE (or a DATETIME of other fraction digits) in a DATETIME column: shown
        // as the column's type, so equal instants are equal rows (`date UNION datetime`).
        (Value::DateTime(d), F::DateTime | F::Timestamp) if d.fsp != m.decimals => {
            let mut d = *d;
            d.fsp = m.decimals;
            Value::DateTime(d)
        }
        // A TIME (held as its text) in a TIME column of more fraction digits.
        (Value::Bytes(text), F::Time) if m.decimals > 0 => {
            match strata_types::time_value::parse_canonical(text) {
                Some(micros) => Value::str(&strata_types::time_value::format(micros, m.decimals)),
                None => return,
            }
        }
        (Value::Int(_) | Value::UInt(_) | Value::Decimal(_), F::Double) => {
            Value::Double(v.to_f64().unwrap_or(0.0))
        }
        (Value::Int(_) | Value::UInt(_) | Value::Decimal(_) | Value::Double(_), F::VarString)
        | (Value::DateTime(_), F::VarString) => {
            let mut text = Vec::new();
            v.write_text(&mut text);
            Value::Bytes(text)
        }
        _ => return,
    };
    *v = converted;
}
