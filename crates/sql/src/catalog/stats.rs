//! Table and index statistics for the planner: how many rows a table has and, for each
//! index and each prefix of its columns, how many rows share one key value (MySQL's
//! `rec_per_key`). The join order and EXPLAIN's `rows` come from these.
//!
//! Statistics are gathered by sampling, as InnoDB's persistent statistics are: the first
//! [`SAMPLE_ROWS`] entries of each index in key order, with the distinct prefixes counted
//! as the sorted entries go by. They are computed when the planner first needs them (a
//! join, or EXPLAIN; a single-table query with one usable index never asks) and again
//! once the statements that changed the table have touched a tenth of its rows, or on
//! `ANALYZE TABLE`. The cache lives in the catalog, keyed by the open table handle, so a
//! dropped or re-created table starts afresh. Each entry keeps a weak reference to its
//! handle: a handle's address can be reused by a table opened after it was dropped (DROP
//! DATABASE, a closed table), and such a table must not inherit the old one's figures.

use crate::expr::keys::group_key;
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use strata_engine::{Flow, KeyRange, Table, Txn};
use strata_types::{Result, Value};

/// Index entries read per index when sampling.
pub const SAMPLE_ROWS: u64 = 20_000;

#[derive(Clone, Debug, Default)]
pub struct TableStats {
    pub rows: u64,
    /// `rec_per_key[index][k]`: rows per distinct value of the first `k + 1` columns.
    pub rec_per_key: Vec<Vec<f64>>,
}

impl TableStats {
    /// Rows an equality lookup on the first `parts` columns of `index` matches.
    pub fn rows_per_lookup(&self, index: usize, parts: usize) -> f64 {
        match self.rec_per_key.get(index) {
            Some(v) if parts > 0 => v.get(parts - 1).copied().unwrap_or(1.0),
            _ => self.rows.max(1) as f64,
        }
    }
}

struct Entry {
    /// The handle the stats were taken from; while the entry holds it, its address
    /// cannot be given to another table, and a dead one marks the entry stale.
    table: std::sync::Weak<dyn Table>,
    stats: Arc<TableStats>,
    /// Rows changed since the stats were taken.
    changes: u64,
}

#[derive(Default)]
pub struct StatsCache {
    map: Mutex<HashMap<usize, Entry>>,
}

fn key_of(table: &Arc<dyn Table>) -> usize {
    Arc::as_ptr(table) as *const () as usize
}

impl StatsCache {
    /// The table's statistics, sampled now if there are none or they are stale.
    pub fn get(&self, table: &Arc<dyn Table>, txn: &Txn) -> Result<Arc<TableStats>> {
        let key = key_of(table);
        if let Ok(map) = self.map.lock() {
            if let Some(e) = map.get(&key) {
                if e.table.strong_count() > 0 && e.changes.saturating_mul(10) <= e.stats.rows + 100
                {
                    return Ok(e.stats.clone());
                }
            }
        }
        let stats = Arc::new(sample(table, txn)?);
        if let Ok(mut map) = self.map.lock() {
            // Entries of handles dropped since are of no use to anyone.
            map.retain(|_, e| e.table.strong_count() > 0);
            map.insert(
                key,
                Entry {
                    table: Arc::downgrade(table),
                    stats: stats.clone(),
                    changes: 0,
                },
            );
        }
        Ok(stats)
    }

    /// Counts rows a statement inserted, updated or deleted, so stale stats are redone.
    pub fn note_changes(&self, table: &Arc<dyn Table>, rows: u64) {
        if rows == 0 {
            return;
        }
        if let Ok(mut map) = self.map.lock() {
            if let Some(e) = map.get_mut(&key_of(table)) {
                e.changes += rows;
            }
        }
    }

    /// Drops the table's stats (ANALYZE TABLE, DROP, ALTER).
    pub fn forget(&self, table: &Arc<dyn Table>) {
        if let Ok(mut map) = self.map.lock() {
            map.remove(&key_of(table));
        }
    }
}

/// Samples every index of the table (or scans a table without one, up to the cap).
fn sample(table: &Arc<dyn Table>, txn: &Txn) -> Result<TableStats> {
    let def = table.def().clone();
    let mut rec_per_key = Vec::with_capacity(def.indexes.len());
    let mut exact_rows: Option<u64> = None;
    for (ix, index) in def.indexes.iter().enumerate() {
        let parts = index.columns.len();
        let mut seen = 0u64;
        let mut distinct = vec![0u64; parts];
        let mut prev: Vec<Vec<u8>> = vec![Vec::new(); parts];
        let mut cur = Vec::new();
        let mut first = true;
        let mut cb = |_id, row: &[Value]| -> Result<Flow> {
            cur.clear();
            let mut changed = first;
            for (k, &col) in index.columns.iter().enumerate() {
                let c = &def.columns[col];
                group_key(&mut cur, &row[col], c.collation);
                if changed || prev[k] != cur {
                    changed = true;
                    distinct[k] += 1;
                    prev[k].clear();
                    prev[k].extend_from_slice(&cur);
                }
            }
            first = false;
            seen += 1;
            Ok(if seen >= SAMPLE_ROWS {
                Flow::Stop
            } else {
                Flow::Continue
            })
        };
        table.index_scan(txn, ix, &KeyRange::all(), false, &mut cb)?;
        if seen < SAMPLE_ROWS && exact_rows.is_none() {
            exact_rows = Some(seen);
        }
        rec_per_key.push(
            distinct
                .iter()
                .map(|&d| if d == 0 { 1.0 } else { seen as f64 / d as f64 })
                .collect(),
        );
    }
    let rows = match exact_rows {
        Some(n) => n,
        None if def.indexes.is_empty() => {
            let mut n = 0u64;
            table.scan(txn, &mut |_, _| {
                n += 1;
                Ok(if n >= SAMPLE_ROWS {
                    Flow::Stop
                } else {
                    Flow::Continue
                })
            })?;
            if n >= SAMPLE_ROWS {
                table.status().rows.max(n)
            } else {
                n
            }
        }
        None => table.status().rows.max(SAMPLE_ROWS),
    };
    Ok(TableStats { rows, rec_per_key })
}

/// Rows of one index in `range`, counted up to `cap` (EXPLAIN's estimate for a range).
pub fn count_range(
    table: &Arc<dyn Table>,
    txn: &Txn,
    index: usize,
    ranges: &[KeyRange],
    cap: u64,
) -> Result<u64> {
    let mut n = 0u64;
    for r in ranges {
        table.index_scan(txn, index, r, false, &mut |_, _| {
            n += 1;
            Ok(if n >= cap { Flow::Stop } else { Flow::Continue })
        })?;
        if n >= cap {
            break;
        }
    }
    Ok(n)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::catalog::rowsource::{ReadOnlyTable, RowSource};
    use strata_types::TableDef;

    /// A table of `n` rows and no index (stats come from a scan).
    struct Rows(Arc<TableDef>, i64);

    impl RowSource for Rows {
        fn def(&self) -> &Arc<TableDef> {
            &self.0
        }
        fn rows(&self) -> Result<Vec<Vec<Value>>> {
            Ok((0..self.1).map(|i| vec![Value::Int(i)]).collect())
        }
    }

    fn table(n: i64) -> Arc<dyn Table> {
        let def = TableDef {
            options: Default::default(),
            db: "d".into(),
            name: "t".into(),
            engine: "test".into(),
            columns: vec![],
            indexes: vec![],
            auto_increment_start: 1,
            comment: String::new(),
            foreign_keys: Vec::new(),
            checks: Vec::new(),
            instant: None,
            default_collation: Default::default(),
        };
        Arc::new(ReadOnlyTable(Rows(Arc::new(def), n)))
    }

    #[test]
    fn a_table_opened_after_another_was_dropped_gets_its_own_stats() {
        let cache = StatsCache::default();
        let txn = Txn::default();
        // Freed and allocated again at once, the second handle would often get the first
        // one's address; its stats must still be its own.
        for n in [3, 5, 3, 8] {
            let t = table(n);
            assert_eq!(cache.get(&t, &txn).unwrap().rows, n as u64);
        }
    }
}
