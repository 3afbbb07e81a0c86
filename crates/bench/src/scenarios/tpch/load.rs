//! The TPC-H tables: the specification's schema as MySQL users create it (primary
//! keys, plus a secondary index on each foreign-key column that no primary key
//! already leads with), rows from the `tpchgen` crate (dbgen's generator in Rust, so
//! every server gets the same rows for a scale factor), and loading through SQL with
//! multi-row INSERTs, one client per table (lineitem in two halves) in parallel, under
//! one progress bar.

use crate::client::{Client, Target};
use crate::driver::{bar, connect_db};
use std::fmt::{Display, Write as _};
use std::sync::atomic::{AtomicU64, Ordering};
use tpchgen::generators::{
    CustomerGenerator, LineItemGenerator, NationGenerator, OrderGenerator, PartGenerator,
    PartSuppGenerator, RegionGenerator, SupplierGenerator,
};

/// Rows per INSERT, and the statement size at which a batch is sent early (far below
/// MariaDB's default max_allowed_packet of 16 MiB).
const BATCH_ROWS: u64 = 1000;
const BATCH_BYTES: usize = 1 << 20;
/// lineitem (two thirds of the data) loads in this many parallel parts.
const LINEITEM_PARTS: i32 = 2;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Table {
    Region,
    Nation,
    Part,
    Supplier,
    PartSupp,
    Customer,
    Orders,
    LineItem,
}

impl Table {
    /// Every table, small ones first.
    pub const ALL: [Table; 8] = [
        Table::Region,
        Table::Nation,
        Table::Part,
        Table::Supplier,
        Table::PartSupp,
        Table::Customer,
        Table::Orders,
        Table::LineItem,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Table::Region => "region",
            Table::Nation => "nation",
            Table::Part => "part",
            Table::Supplier => "supplier",
            Table::PartSupp => "partsupp",
            Table::Customer => "customer",
            Table::Orders => "orders",
            Table::LineItem => "lineitem",
        }
    }

    /// The specification's columns and types; DECIMAL(15,2) for its decimals, DATE for
    /// its dates. lineitem's (l_partkey, l_suppkey) is one index: it serves both the
    /// partsupp foreign key and lookups by part.
    fn create_sql(self) -> &'static str {
        match self {
            Table::Region => {
                "CREATE TABLE region (
                r_regionkey INT NOT NULL,
                r_name CHAR(25) NOT NULL,
                r_comment VARCHAR(152),
                PRIMARY KEY (r_regionkey)
            ) ENGINE=InnoDB"
            }
            Table::Nation => {
                "CREATE TABLE nation (
                n_nationkey INT NOT NULL,
                n_name CHAR(25) NOT NULL,
                n_regionkey INT NOT NULL,
                n_comment VARCHAR(152),
                PRIMARY KEY (n_nationkey),
                KEY n_regionkey (n_regionkey)
            ) ENGINE=InnoDB"
            }
            Table::Part => {
                "CREATE TABLE part (
                p_partkey INT NOT NULL,
                p_name VARCHAR(55) NOT NULL,
                p_mfgr CHAR(25) NOT NULL,
                p_brand CHAR(10) NOT NULL,
                p_type VARCHAR(25) NOT NULL,
                p_size INT NOT NULL,
                p_container CHAR(10) NOT NULL,
                p_retailprice DECIMAL(15,2) NOT NULL,
                p_comment VARCHAR(23) NOT NULL,
                PRIMARY KEY (p_partkey)
            ) ENGINE=InnoDB"
            }
            Table::Supplier => {
                "CREATE TABLE supplier (
                s_suppkey INT NOT NULL,
                s_name CHAR(25) NOT NULL,
                s_address VARCHAR(40) NOT NULL,
                s_nationkey INT NOT NULL,
                s_phone CHAR(15) NOT NULL,
                s_acctbal DECIMAL(15,2) NOT NULL,
                s_comment VARCHAR(101) NOT NULL,
                PRIMARY KEY (s_suppkey),
                KEY s_nationkey (s_nationkey)
            ) ENGINE=InnoDB"
            }
            Table::PartSupp => {
                "CREATE TABLE partsupp (
                ps_partkey INT NOT NULL,
                ps_suppkey INT NOT NULL,
                ps_availqty INT NOT NULL,
                ps_supplycost DECIMAL(15,2) NOT NULL,
                ps_comment VARCHAR(199) NOT NULL,
                PRIMARY KEY (ps_partkey, ps_suppkey),
                KEY ps_suppkey (ps_suppkey)
            ) ENGINE=InnoDB"
            }
            Table::Customer => {
                "CREATE TABLE customer (
                c_custkey INT NOT NULL,
                c_name VARCHAR(25) NOT NULL,
                c_address VARCHAR(40) NOT NULL,
                c_nationkey INT NOT NULL,
                c_phone CHAR(15) NOT NULL,
                c_acctbal DECIMAL(15,2) NOT NULL,
                c_mktsegment CHAR(10) NOT NULL,
                c_comment VARCHAR(117) NOT NULL,
                PRIMARY KEY (c_custkey),
                KEY c_nationkey (c_nationkey)
            ) ENGINE=InnoDB"
            }
            Table::Orders => {
                "CREATE TABLE orders (
                o_orderkey INT NOT NULL,
                o_custkey INT NOT NULL,
                o_orderstatus CHAR(1) NOT NULL,
                o_totalprice DECIMAL(15,2) NOT NULL,
                o_orderdate DATE NOT NULL,
                o_orderpriority CHAR(15) NOT NULL,
                o_clerk CHAR(15) NOT NULL,
                o_shippriority INT NOT NULL,
                o_comment VARCHAR(79) NOT NULL,
                PRIMARY KEY (o_orderkey),
                KEY o_custkey (o_custkey)
            ) ENGINE=InnoDB"
            }
            Table::LineItem => {
                "CREATE TABLE lineitem (
                l_orderkey INT NOT NULL,
                l_partkey INT NOT NULL,
                l_suppkey INT NOT NULL,
                l_linenumber INT NOT NULL,
                l_quantity DECIMAL(15,2) NOT NULL,
                l_extendedprice DECIMAL(15,2) NOT NULL,
                l_discount DECIMAL(15,2) NOT NULL,
                l_tax DECIMAL(15,2) NOT NULL,
                l_returnflag CHAR(1) NOT NULL,
                l_linestatus CHAR(1) NOT NULL,
                l_shipdate DATE NOT NULL,
                l_commitdate DATE NOT NULL,
                l_receiptdate DATE NOT NULL,
                l_shipinstruct CHAR(25) NOT NULL,
                l_shipmode CHAR(10) NOT NULL,
                l_comment VARCHAR(44) NOT NULL,
                PRIMARY KEY (l_orderkey, l_linenumber),
                KEY l_partkey_suppkey (l_partkey, l_suppkey),
                KEY l_suppkey (l_suppkey)
            ) ENGINE=InnoDB"
            }
        }
    }

    fn parts(self) -> i32 {
        match self {
            Table::LineItem => LINEITEM_PARTS,
            _ => 1,
        }
    }
}

/// `v` as a quoted SQL string literal (quote and backslash escaped, as MySQL reads
/// them without NO_BACKSLASH_ESCAPES).
fn lit(out: &mut String, v: impl Display) {
    let s = v.to_string();
    out.push('\'');
    for c in s.chars() {
        match c {
            '\'' => out.push_str("''"),
            '\\' => out.push_str("\\\\"),
            c => out.push(c),
        }
    }
    out.push('\'');
}

/// Generates part `part` of `parts` (1-based) of `table` at scale factor `sf` and hands
/// each row to `emit` as a VALUES tuple `(…)`.
fn generate(
    table: Table,
    sf: f64,
    part: i32,
    parts: i32,
    emit: &mut dyn FnMut(&str) -> Result<(), String>,
) -> Result<(), String> {
    let mut t = String::with_capacity(512);
    // Integers and decimals go in as written; text and dates as quoted literals.
    macro_rules! row {
        ($($body:tt)*) => {{
            t.clear();
            t.push('(');
            $($body)*
            t.push(')');
            emit(&t)?;
        }};
    }
    match table {
        Table::Region => {
            for r in RegionGenerator::new(sf, part, parts).iter() {
                row! {
                    let _ = write!(t, "{},", r.r_regionkey);
                    lit(&mut t, r.r_name);
                    t.push(',');
                    lit(&mut t, r.r_comment);
                }
            }
        }
        Table::Nation => {
            for n in NationGenerator::new(sf, part, parts).iter() {
                row! {
                    let _ = write!(t, "{},", n.n_nationkey);
                    lit(&mut t, n.n_name);
                    let _ = write!(t, ",{},", n.n_regionkey);
                    lit(&mut t, n.n_comment);
                }
            }
        }
        Table::Part => {
            for p in PartGenerator::new(sf, part, parts).iter() {
                row! {
                    let _ = write!(t, "{},", p.p_partkey);
                    lit(&mut t, &p.p_name);
                    t.push(',');
                    lit(&mut t, p.p_mfgr);
                    t.push(',');
                    lit(&mut t, p.p_brand);
                    t.push(',');
                    lit(&mut t, p.p_type);
                    let _ = write!(t, ",{},", p.p_size);
                    lit(&mut t, p.p_container);
                    let _ = write!(t, ",{},", p.p_retailprice);
                    lit(&mut t, p.p_comment);
                }
            }
        }
        Table::Supplier => {
            for s in SupplierGenerator::new(sf, part, parts).iter() {
                row! {
                    let _ = write!(t, "{},", s.s_suppkey);
                    lit(&mut t, s.s_name);
                    t.push(',');
                    lit(&mut t, &s.s_address);
                    let _ = write!(t, ",{},", s.s_nationkey);
                    lit(&mut t, &s.s_phone);
                    let _ = write!(t, ",{},", s.s_acctbal);
                    lit(&mut t, &s.s_comment);
                }
            }
        }
        Table::PartSupp => {
            for ps in PartSuppGenerator::new(sf, part, parts).iter() {
                row! {
                    let _ = write!(
                        t,
                        "{},{},{},{},",
                        ps.ps_partkey, ps.ps_suppkey, ps.ps_availqty, ps.ps_supplycost
                    );
                    lit(&mut t, ps.ps_comment);
                }
            }
        }
        Table::Customer => {
            for c in CustomerGenerator::new(sf, part, parts).iter() {
                row! {
                    let _ = write!(t, "{},", c.c_custkey);
                    lit(&mut t, c.c_name);
                    t.push(',');
                    lit(&mut t, &c.c_address);
                    let _ = write!(t, ",{},", c.c_nationkey);
                    lit(&mut t, &c.c_phone);
                    let _ = write!(t, ",{},", c.c_acctbal);
                    lit(&mut t, c.c_mktsegment);
                    t.push(',');
                    lit(&mut t, c.c_comment);
                }
            }
        }
        Table::Orders => {
            for o in OrderGenerator::new(sf, part, parts).iter() {
                row! {
                    let _ = write!(t, "{},{},", o.o_orderkey, o.o_custkey);
                    lit(&mut t, o.o_orderstatus);
                    let _ = write!(t, ",{},", o.o_totalprice);
                    lit(&mut t, o.o_orderdate);
                    t.push(',');
                    lit(&mut t, o.o_orderpriority);
                    t.push(',');
                    lit(&mut t, o.o_clerk);
                    let _ = write!(t, ",{},", o.o_shippriority);
                    lit(&mut t, o.o_comment);
                }
            }
        }
        Table::LineItem => {
            for l in LineItemGenerator::new(sf, part, parts).iter() {
                row! {
                    let _ = write!(
                        t,
                        "{},{},{},{},{},{},{},{},",
                        l.l_orderkey,
                        l.l_partkey,
                        l.l_suppkey,
                        l.l_linenumber,
                        l.l_quantity,
                        l.l_extendedprice,
                        l.l_discount,
                        l.l_tax
                    );
                    lit(&mut t, l.l_returnflag);
                    t.push(',');
                    lit(&mut t, l.l_linestatus);
                    t.push(',');
                    lit(&mut t, l.l_shipdate);
                    t.push(',');
                    lit(&mut t, l.l_commitdate);
                    t.push(',');
                    lit(&mut t, l.l_receiptdate);
                    t.push(',');
                    lit(&mut t, l.l_shipinstruct);
                    t.push(',');
                    lit(&mut t, l.l_shipmode);
                    t.push(',');
                    lit(&mut t, l.l_comment);
                }
            }
        }
    }
    Ok(())
}

/// Rows the generator makes for each table of [`Table::ALL`] at `sf` (lineitem's count
/// is random per order, so every table is counted by generating it).
pub fn generated_rows(sf: f64) -> Vec<u64> {
    Table::ALL
        .iter()
        .map(|&t| {
            let mut n = 0u64;
            // Counting cannot fail: the closure never returns an error.
            let _ = generate(t, sf, 1, 1, &mut |_| {
                n += 1;
                Ok(())
            });
            n
        })
        .collect()
}

/// Creates the 8 tables in `db` (which must exist and be empty) and loads them at
/// `sf`; `total` rows (from [`generated_rows`]) size the progress bar. Returns the
/// seconds the load took and a note when ANALYZE TABLE was refused.
pub fn load(
    target: &Target,
    db: &str,
    label: &str,
    sf: f64,
    total: u64,
) -> Result<(f64, Option<String>), String> {
    let start = std::time::Instant::now();
    let mut c = connect_db(target, db)?;
    for t in Table::ALL {
        c.exec(t.create_sql())
            .map_err(|e| format!("{label}: CREATE TABLE {}: {e}", t.name()))?;
    }
    let pb = bar(
        total,
        "{msg} [{bar:30}] {pos}/{len} rows, {elapsed}",
        format!("loading TPC-H SF {sf} into {label}"),
    );
    let loaded = AtomicU64::new(0);
    let jobs: Vec<(Table, i32)> = Table::ALL
        .iter()
        .flat_map(|&t| (1..=t.parts()).map(move |p| (t, p)))
        .collect();
    let result: Result<(), String> = std::thread::scope(|scope| {
        let handles: Vec<_> = jobs
            .iter()
            .map(|&(table, part)| {
                let (pb, loaded) = (&pb, &loaded);
                scope.spawn(move || -> Result<(), String> {
                    let mut c = connect_db(target, db)?;
                    load_part(c.as_mut(), table, sf, part, &mut |n| {
                        loaded.fetch_add(n, Ordering::Relaxed);
                        pb.inc(n);
                    })
                    .map_err(|e| format!("{label}: {e}"))
                })
            })
            .collect();
        let mut first_err = Ok(());
        for h in handles {
            let r = h
                .join()
                .map_err(|_| "a loading thread panicked".to_string())
                .and_then(|r| r);
            if first_err.is_ok() {
                first_err = r;
            }
        }
        first_err
    });
    pb.finish_and_clear();
    result?;
    let n = loaded.load(Ordering::Relaxed);
    if n != total {
        return Err(format!("{label}: loaded {n} rows of {total}"));
    }
    // Statistics for the optimiser, as a DBA would gather them after a bulk load; a
    // server without ANALYZE TABLE still runs the queries, so a refusal is a note.
    let names: Vec<&str> = Table::ALL.iter().map(|t| t.name()).collect();
    let note = c
        .rows(&format!("ANALYZE TABLE {}", names.join(", ")))
        .err()
        .map(|e| format!("{label}: ANALYZE TABLE refused ({e})"));
    Ok((start.elapsed().as_secs_f64(), note))
}

fn load_part(
    c: &mut dyn Client,
    table: Table,
    sf: f64,
    part: i32,
    progress: &mut dyn FnMut(u64),
) -> Result<(), String> {
    let prefix = format!("INSERT INTO {} VALUES ", table.name());
    let mut sql = prefix.clone();
    let mut n = 0u64;
    let mut send = |sql: &mut String, n: &mut u64| -> Result<(), String> {
        let out = c
            .exec(sql)
            .map_err(|e| format!("loading {}: {e}", table.name()))?;
        // A silent short insert would make every result wrong.
        if out.affected != *n {
            return Err(format!(
                "loading {}: an INSERT of {n} rows affected {}",
                table.name(),
                out.affected
            ));
        }
        progress(*n);
        sql.truncate(prefix.len());
        *n = 0;
        Ok(())
    };
    generate(table, sf, part, table.parts(), &mut |tuple| {
        if n > 0 {
            sql.push(',');
        }
        sql.push_str(tuple);
        n += 1;
        if n >= BATCH_ROWS || sql.len() >= BATCH_BYTES {
            send(&mut sql, &mut n)?;
        }
        Ok(())
    })?;
    if n > 0 {
        send(&mut sql, &mut n)?;
    }
    Ok(())
}

/// SELECT COUNT(*) of each table of [`Table::ALL`], or the error.
pub fn counts(target: &Target, db: &str) -> Vec<Result<u64, String>> {
    let mut c = match connect_db(target, db) {
        Ok(c) => c,
        Err(e) => return Table::ALL.iter().map(|_| Err(e.clone())).collect(),
    };
    Table::ALL
        .iter()
        .map(|t| {
            let v = c
                .scalar(&format!("SELECT COUNT(*) FROM {}", t.name()))
                .map_err(|e| e.to_string())?;
            v.as_deref()
                .and_then(|s| s.parse::<u64>().ok())
                .ok_or_else(|| format!("COUNT(*) of {} gave {v:?}", t.name()))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn literals_are_escaped() {
        let mut s = String::new();
        lit(&mut s, "it's a \\ test");
        assert_eq!(s, "'it''s a \\\\ test'");
    }

    #[test]
    fn row_counts_follow_the_scale_factor() {
        // The specification's cardinalities: SF × 10,000 suppliers, 200,000 parts,
        // 800,000 partsupp, 150,000 customers, 1,500,000 orders; about 4 lineitems per
        // order.
        let n = generated_rows(0.01);
        assert_eq!(&n[..7], &[5, 25, 2000, 100, 8000, 1500, 15000]);
        assert!((55_000..65_000).contains(&n[7]), "{n:?}");
        // Generating in parts gives the same rows as generating at once.
        let mut whole = Vec::new();
        generate(Table::LineItem, 0.01, 1, 1, &mut |t| {
            whole.push(t.to_string());
            Ok(())
        })
        .unwrap();
        let mut halves = Vec::new();
        for p in 1..=2 {
            generate(Table::LineItem, 0.01, p, 2, &mut |t| {
                halves.push(t.to_string());
                Ok(())
            })
            .unwrap();
        }
        assert_eq!(whole, halves);
        assert_eq!(whole.len() as u64, n[7]);
    }
}
