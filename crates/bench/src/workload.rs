//! sysbench's OLTP statements on the `sbtest1..N` tables: point select, the four range
//! selects, index and non-index updates, delete+insert, the read-only and read-write
//! transactions, and seed 000's batch select of 20,000 rows by primary key. One
//! [`Workload::event`] is what sysbench counts as one event (a query, or a whole
//! transaction for read_only/read_write).

use crate::client::{Client, ClientError};
use rand::rngs::StdRng;
use rand::Rng;

#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
#[value(rename_all = "snake_case")]
pub enum Workload {
    PointSelect,
    SimpleRanges,
    SumRanges,
    OrderRanges,
    DistinctRanges,
    UpdateIndex,
    UpdateNonIndex,
    DeleteInsert,
    ReadOnly,
    ReadWrite,
    BatchSelect,
}

/// The table set and statement sizes of a run.
#[derive(Clone, Copy, Debug)]
pub struct Shape {
    pub tables: usize,
    pub table_size: u64,
    /// Rows per range select (sysbench's --range_size, 100).
    pub range_size: u64,
    /// Point selects per read-only/read-write transaction (sysbench: 10).
    pub point_selects: u32,
    /// Rows of the batch select (seed 000: 20,000), at most the table size.
    pub batch_rows: u64,
}

impl Workload {
    pub fn name(self) -> &'static str {
        match self {
            Workload::PointSelect => "point_select",
            Workload::SimpleRanges => "simple_ranges",
            Workload::SumRanges => "sum_ranges",
            Workload::OrderRanges => "order_ranges",
            Workload::DistinctRanges => "distinct_ranges",
            Workload::UpdateIndex => "update_index",
            Workload::UpdateNonIndex => "update_non_index",
            Workload::DeleteInsert => "delete_insert",
            Workload::ReadOnly => "read_only",
            Workload::ReadWrite => "read_write",
            Workload::BatchSelect => "batch_select",
        }
    }

    /// Whether the workload changes rows (so its tables are reloaded before another
    /// variant measures them, as the seeds compared fresh tables).
    pub fn writes(self) -> bool {
        matches!(
            self,
            Workload::UpdateIndex
                | Workload::UpdateNonIndex
                | Workload::DeleteInsert
                | Workload::ReadWrite
        )
    }

    /// Runs one event; returns how many statements it sent.
    pub fn event(
        self,
        c: &mut dyn Client,
        rng: &mut StdRng,
        s: &Shape,
    ) -> Result<u64, ClientError> {
        let table = rng.gen_range(1..=s.tables.max(1));
        match self {
            Workload::PointSelect => point_select(c, rng, s, table).map(|_| 1),
            Workload::SimpleRanges => range(
                c,
                rng,
                s,
                table,
                "SELECT c FROM sbtest{t} WHERE id BETWEEN {a} AND {b}",
            )
            .map(|_| 1),
            Workload::SumRanges => range(
                c,
                rng,
                s,
                table,
                "SELECT SUM(k) FROM sbtest{t} WHERE id BETWEEN {a} AND {b}",
            )
            .map(|_| 1),
            Workload::OrderRanges => range(
                c,
                rng,
                s,
                table,
                "SELECT c FROM sbtest{t} WHERE id BETWEEN {a} AND {b} ORDER BY c",
            )
            .map(|_| 1),
            Workload::DistinctRanges => range(
                c,
                rng,
                s,
                table,
                "SELECT DISTINCT c FROM sbtest{t} WHERE id BETWEEN {a} AND {b} ORDER BY c",
            )
            .map(|_| 1),
            Workload::UpdateIndex => update_index(c, rng, s, table).map(|_| 1),
            Workload::UpdateNonIndex => update_non_index(c, rng, s, table).map(|_| 1),
            Workload::DeleteInsert => delete_insert(c, rng, s, table).map(|_| 2),
            Workload::ReadOnly => transaction(c, rng, s, table, false),
            Workload::ReadWrite => transaction(c, rng, s, table, true),
            Workload::BatchSelect => {
                let n = s.batch_rows.clamp(1, s.table_size.max(1));
                let a = rng.gen_range(1..=s.table_size.saturating_sub(n - 1).max(1));
                c.exec(&format!(
                    "SELECT c FROM sbtest{table} WHERE id BETWEEN {a} AND {}",
                    a + n - 1
                ))?;
                Ok(1)
            }
        }
    }
}

fn id(rng: &mut StdRng, s: &Shape) -> u64 {
    rng.gen_range(1..=s.table_size.max(1))
}

fn point_select(
    c: &mut dyn Client,
    rng: &mut StdRng,
    s: &Shape,
    t: usize,
) -> Result<(), ClientError> {
    c.exec(&format!("SELECT c FROM sbtest{t} WHERE id={}", id(rng, s)))?;
    Ok(())
}

fn range(
    c: &mut dyn Client,
    rng: &mut StdRng,
    s: &Shape,
    t: usize,
    pattern: &str,
) -> Result<(), ClientError> {
    let a = id(rng, s);
    let b = a + s.range_size.max(1) - 1;
    let sql = pattern
        .replace("{t}", &t.to_string())
        .replace("{a}", &a.to_string())
        .replace("{b}", &b.to_string());
    c.exec(&sql)?;
    Ok(())
}

fn update_index(
    c: &mut dyn Client,
    rng: &mut StdRng,
    s: &Shape,
    t: usize,
) -> Result<(), ClientError> {
    c.exec(&format!(
        "UPDATE sbtest{t} SET k=k+1 WHERE id={}",
        id(rng, s)
    ))?;
    Ok(())
}

fn update_non_index(
    c: &mut dyn Client,
    rng: &mut StdRng,
    s: &Shape,
    t: usize,
) -> Result<(), ClientError> {
    let v = c_value(rng);
    c.exec(&format!(
        "UPDATE sbtest{t} SET c='{v}' WHERE id={}",
        id(rng, s)
    ))?;
    Ok(())
}

fn delete_insert(
    c: &mut dyn Client,
    rng: &mut StdRng,
    s: &Shape,
    t: usize,
) -> Result<(), ClientError> {
    let i = id(rng, s);
    c.exec(&format!("DELETE FROM sbtest{t} WHERE id={i}"))?;
    let k = id(rng, s);
    let (cv, pad) = (c_value(rng), pad_value(rng));
    c.exec(&format!(
        "INSERT INTO sbtest{t} (id, k, c, pad) VALUES ({i}, {k}, '{cv}', '{pad}')"
    ))?;
    Ok(())
}

/// sysbench's oltp_read_only / oltp_read_write transaction. On an error the transaction
/// is rolled back before the error is returned, so the session is clean for the next.
fn transaction(
    c: &mut dyn Client,
    rng: &mut StdRng,
    s: &Shape,
    t: usize,
    write: bool,
) -> Result<u64, ClientError> {
    c.exec("BEGIN")?;
    let body = |c: &mut dyn Client, rng: &mut StdRng| -> Result<u64, ClientError> {
        let mut n = 0;
        for _ in 0..s.point_selects {
            point_select(c, rng, s, t)?;
            n += 1;
        }
        for p in [
            "SELECT c FROM sbtest{t} WHERE id BETWEEN {a} AND {b}",
            "SELECT SUM(k) FROM sbtest{t} WHERE id BETWEEN {a} AND {b}",
            "SELECT c FROM sbtest{t} WHERE id BETWEEN {a} AND {b} ORDER BY c",
            "SELECT DISTINCT c FROM sbtest{t} WHERE id BETWEEN {a} AND {b} ORDER BY c",
        ] {
            range(c, rng, s, t, p)?;
            n += 1;
        }
        if write {
            update_index(c, rng, s, t)?;
            update_non_index(c, rng, s, t)?;
            delete_insert(c, rng, s, t)?;
            n += 4;
        }
        c.exec("COMMIT")?;
        Ok(n + 2)
    };
    match body(c, rng) {
        Ok(n) => Ok(n),
        Err(e) => {
            // The error is what matters; a failing ROLLBACK adds nothing to it.
            let _ = c.exec("ROLLBACK");
            Err(e)
        }
    }
}

/// Digits in groups of 11 separated by '-', as sysbench's `###########-` templates.
fn digits(rng: &mut StdRng, groups: usize) -> String {
    let mut s = String::with_capacity(groups * 12);
    for g in 0..groups {
        if g > 0 {
            s.push('-');
        }
        for _ in 0..11 {
            s.push(char::from(b'0' + rng.gen_range(0..10u8)));
        }
    }
    s
}

/// A value for column c (CHAR(120)): 10 groups, 119 characters.
pub fn c_value(rng: &mut StdRng) -> String {
    digits(rng, 10)
}

/// A value for column pad (CHAR(60)): 5 groups, 59 characters.
pub fn pad_value(rng: &mut StdRng) -> String {
    digits(rng, 5)
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;

    #[test]
    fn values_fit_their_columns() {
        let mut rng = StdRng::seed_from_u64(1);
        assert_eq!(c_value(&mut rng).len(), 119);
        assert_eq!(pad_value(&mut rng).len(), 59);
    }
}
