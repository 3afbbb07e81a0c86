//! Results as the seeds print them: one [`Table`] per experiment with rows keyed by
//! thread count (or join column, or cache state) and two measured columns A and B,
//! their ratio B/A, latency percentiles, and the seed's published figures beside them.
//! Tables print as markdown-like text on stdout and are saved as CSV or JSON and as an
//! SVG chart each.

use crate::seeds::SeedTable;
use serde::Serialize;
use std::fmt::Write as _;
use std::path::Path;

/// One measured cell.
#[derive(Clone, Debug, Serialize)]
pub struct Measure {
    /// The table's unit: events per second, or seconds.
    pub value: f64,
    /// Latency percentiles of one event in milliseconds (timed runs only).
    pub p50_ms: Option<f64>,
    pub p95_ms: Option<f64>,
    pub p99_ms: Option<f64>,
    pub max_ms: Option<f64>,
    /// Events (transactions, queries or jobs) counted.
    pub events: u64,
    /// Statements per second, when an event is several statements.
    pub qps: Option<f64>,
    /// Deadlocks, lock wait timeouts and duplicate keys of delete+insert, which are
    /// retried as sysbench does.
    pub retried: u64,
    /// Clients that completed no event in the measured period (timed runs): starved by
    /// the system under test (or by this machine's scheduler) while others ran.
    pub idle_clients: u64,
}

impl Measure {
    /// A fixed-work result: `value` seconds, no latency distribution.
    pub fn seconds(value: f64, events: u64) -> Measure {
        Measure {
            value,
            p50_ms: None,
            p95_ms: None,
            p99_ms: None,
            max_ms: None,
            events,
            qps: None,
            retried: 0,
            idle_clients: 0,
        }
    }
}

/// A cell: measured, or why it could not be.
#[derive(Clone, Debug, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Cell {
    Measured(Measure),
    Missing(String),
}

impl Cell {
    pub fn value(&self) -> Option<f64> {
        match self {
            Cell::Measured(m) => Some(m.value),
            Cell::Missing(_) => None,
        }
    }
}

#[derive(Clone, Debug, Serialize)]
pub struct Row {
    pub key: String,
    pub a: Cell,
    pub b: Cell,
    /// A check of the row's results beside its timings (tpch: `ok`, `mismatch ...`,
    /// `error ...`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub result: Option<String>,
}

impl Row {
    pub fn ratio(&self) -> Option<f64> {
        match (self.a.value(), self.b.value()) {
            (Some(a), Some(b)) if a > 0.0 => Some(b / a),
            _ => None,
        }
    }
}

#[derive(Clone, Debug, Serialize)]
pub struct Table {
    /// File-name-safe identifier, e.g. `mmap-select-primary`.
    pub id: String,
    pub title: String,
    /// Heading of the key column: Threads, Clients, Users, Join on, ...
    pub key_name: String,
    /// What the numbers are, e.g. `events/s` or `seconds per query`.
    pub unit: String,
    pub higher_is_better: bool,
    pub a_name: String,
    pub b_name: String,
    pub rows: Vec<Row>,
    #[serde(skip)]
    pub seed: Option<SeedTable>,
    pub notes: Vec<String>,
}

impl Table {
    pub fn new(id: &str, title: &str, key_name: &str, unit: &str, a: &str, b: &str) -> Table {
        Table {
            id: id.to_string(),
            title: title.to_string(),
            key_name: key_name.to_string(),
            unit: unit.to_string(),
            higher_is_better: true,
            a_name: a.to_string(),
            b_name: b.to_string(),
            rows: Vec::new(),
            seed: None,
            notes: Vec::new(),
        }
    }

    pub fn lower_is_better(mut self) -> Table {
        self.higher_is_better = false;
        self
    }

    pub fn with_seed(mut self, seed: Option<SeedTable>) -> Table {
        self.seed = seed;
        self
    }

    pub fn push(&mut self, key: impl Into<String>, a: Cell, b: Cell) {
        self.rows.push(Row {
            key: key.into(),
            a,
            b,
            result: None,
        });
    }

    /// A row with the check of its results.
    pub fn push_checked(&mut self, key: impl Into<String>, a: Cell, b: Cell, result: String) {
        self.rows.push(Row {
            key: key.into(),
            a,
            b,
            result: Some(result),
        });
    }
}

/// Numbers as the seeds print them: two decimals below 1000, none above; small values
/// (seconds, slow queries per second) keep three significant digits.
pub fn fmt_num(v: f64) -> String {
    if !v.is_finite() {
        return "-".into();
    }
    let a = v.abs();
    if a >= 1000.0 {
        format!("{v:.0}")
    } else if a >= 1.0 || a == 0.0 {
        format!("{v:.2}")
    } else {
        let digits = (2 - a.log10().floor() as i32).clamp(2, 8) as usize;
        format!("{v:.digits$}")
    }
}

fn cell_text(c: &Cell) -> String {
    match c {
        Cell::Measured(m) => fmt_num(m.value),
        Cell::Missing(_) => "n/a".into(),
    }
}

fn p95_text(c: &Cell) -> String {
    match c {
        Cell::Measured(Measure {
            p95_ms: Some(p), ..
        }) => fmt_num(*p),
        _ => "-".into(),
    }
}

/// The table as text, the seed's figures in the right-hand columns.
pub fn render(t: &Table) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "### {}", t.title);
    let _ = writeln!(
        out,
        "A = {}, B = {}; {} ({} is better)",
        t.a_name,
        t.b_name,
        t.unit,
        if t.higher_is_better {
            "higher"
        } else {
            "lower"
        }
    );
    let timed = t.rows.iter().any(|r| {
        [&r.a, &r.b].iter().any(|c| {
            matches!(
                c,
                Cell::Measured(Measure {
                    p95_ms: Some(_),
                    ..
                })
            )
        })
    });
    let mut header = vec![t.key_name.clone(), "A".into(), "B".into(), "B/A".into()];
    if timed {
        header.push("A p95 ms".into());
        header.push("B p95 ms".into());
    }
    if let Some(s) = &t.seed {
        header.push(format!("seed {}", s.a));
        header.push(format!("seed {}", s.b));
        header.push("seed B/A".into());
    }
    let mut lines = vec![header];
    for r in &t.rows {
        let mut line = vec![
            r.key.clone(),
            cell_text(&r.a),
            cell_text(&r.b),
            r.ratio().map(|x| format!("{x:.2}")).unwrap_or("-".into()),
        ];
        if timed {
            line.push(p95_text(&r.a));
            line.push(p95_text(&r.b));
        }
        if let Some(s) = &t.seed {
            match s.row(&r.key) {
                Some((a, b)) => {
                    line.push(a.show());
                    line.push(b.show());
                    line.push(match (a.num(), b.num()) {
                        (Some(a), Some(b)) if a > 0.0 => format!("{:.2}", b / a),
                        _ => "-".into(),
                    });
                }
                None => line.extend(["-".to_string(), "-".into(), "-".into()]),
            }
        }
        lines.push(line);
    }
    out.push_str(&grid(&lines, &[]));
    if let Some(s) = &t.seed {
        let _ = writeln!(out, "seed figures: {}", s.source);
    }
    // Why cells are missing, once per column and reason, with the rows it hit.
    let mut missing: Vec<(&str, &str, &str, Vec<&str>)> = Vec::new();
    for r in &t.rows {
        for (col, name, c) in [("A", &t.a_name, &r.a), ("B", &t.b_name, &r.b)] {
            if let Cell::Missing(why) = c {
                match missing.iter_mut().find(|m| m.0 == col && m.2 == why) {
                    Some(m) => m.3.push(&r.key),
                    None => missing.push((col, name, why, vec![&r.key])),
                }
            }
        }
    }
    for (col, name, why, keys) in missing {
        let _ = writeln!(
            out,
            "n/a {col} ({name}) at {} {}: {why}",
            t.key_name,
            keys.join(", ")
        );
    }
    for r in &t.rows {
        for (col, name, c) in [("A", &t.a_name, &r.a), ("B", &t.b_name, &r.b)] {
            if let Cell::Measured(m) = c {
                if m.idle_clients > 0 {
                    let _ = writeln!(
                        out,
                        "starved {col} ({name}) at {} {}: {} client(s) completed no event in the measured period",
                        t.key_name, r.key, m.idle_clients
                    );
                }
            }
        }
    }
    for n in &t.notes {
        let _ = writeln!(out, "note: {n}");
    }
    out
}

fn csv_field(s: &str) -> String {
    if s.contains([',', '"', '\n']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_string()
    }
}

fn opt(v: Option<f64>) -> String {
    v.map(|x| x.to_string()).unwrap_or_default()
}

/// Lines as a markdown table, the first being the header; `left` columns (and the
/// first) are left-aligned, others right-aligned.
pub fn grid(lines: &[Vec<String>], left: &[usize]) -> String {
    let cols = lines.first().map(Vec::len).unwrap_or(0);
    let widths: Vec<usize> = (0..cols)
        .map(|i| {
            lines
                .iter()
                .map(|l| l.get(i).map(|c| c.chars().count()).unwrap_or(0))
                .max()
                .unwrap_or(0)
        })
        .collect();
    let mut out = String::new();
    for (n, l) in lines.iter().enumerate() {
        let cells: Vec<String> = (0..cols)
            .map(|i| {
                let c = l.get(i).map(String::as_str).unwrap_or("");
                let pad = widths[i].saturating_sub(c.chars().count());
                if i == 0 || left.contains(&i) {
                    format!("{c}{}", " ".repeat(pad))
                } else {
                    format!("{}{c}", " ".repeat(pad))
                }
            })
            .collect();
        let _ = writeln!(out, "| {} |", cells.join(" | "));
        if n == 0 {
            let rule: Vec<String> = widths
                .iter()
                .enumerate()
                .map(|(i, w)| {
                    if i == 0 || left.contains(&i) {
                        "-".repeat(*w)
                    } else {
                        format!("{}:", "-".repeat(w.saturating_sub(1)))
                    }
                })
                .collect();
            let _ = writeln!(out, "| {} |", rule.join(" | "));
        }
    }
    out
}

/// One line per cell: scenario, table, key, column, value, latencies, seed value and
/// the row's result check (tpch).
pub fn write_csv(path: &Path, scenario: &str, tables: &[Table]) -> Result<(), String> {
    let mut s = String::from(
        "scenario,table,unit,key,column,name,value,qps,p50_ms,p95_ms,p99_ms,max_ms,events,retried,idle_clients,missing,seed_value,result\n",
    );
    for t in tables {
        for r in &t.rows {
            let seed = t.seed.as_ref().and_then(|s| s.row(&r.key));
            for (col, name, cell, seed_v) in [
                ("A", &t.a_name, &r.a, seed.map(|x| x.0)),
                ("B", &t.b_name, &r.b, seed.map(|x| x.1)),
            ] {
                // value, qps, p50, p95, p99, max, events, retried, idle clients, missing
                let measured: [String; 10] = match cell {
                    Cell::Measured(m) => [
                        m.value.to_string(),
                        opt(m.qps),
                        opt(m.p50_ms),
                        opt(m.p95_ms),
                        opt(m.p99_ms),
                        opt(m.max_ms),
                        m.events.to_string(),
                        m.retried.to_string(),
                        m.idle_clients.to_string(),
                        String::new(),
                    ],
                    Cell::Missing(why) => {
                        let mut f: [String; 10] = Default::default();
                        f[9] = why.clone();
                        f
                    }
                };
                let mut fields = vec![
                    scenario.to_string(),
                    t.id.clone(),
                    t.unit.clone(),
                    r.key.clone(),
                    col.to_string(),
                    name.clone(),
                ];
                fields.extend(measured);
                fields.push(seed_v.map(|v| v.show()).unwrap_or_default());
                fields.push(r.result.clone().unwrap_or_default());
                let line: Vec<String> = fields.iter().map(|f| csv_field(f)).collect();
                s.push_str(&line.join(","));
                s.push('\n');
            }
        }
    }
    std::fs::write(path, s).map_err(|e| format!("writing {}: {e}", path.display()))
}

#[derive(Serialize)]
struct JsonSeed<'a> {
    source: &'a str,
    a: &'a str,
    b: &'a str,
    rows: Vec<(String, String, String)>,
}

#[derive(Serialize)]
struct JsonTable<'a> {
    #[serde(flatten)]
    table: &'a Table,
    seed: Option<JsonSeed<'a>>,
}

#[derive(Serialize)]
struct JsonReport<'a> {
    scenario: &'a str,
    target: &'a str,
    tables: Vec<JsonTable<'a>>,
    unavailable: &'a [String],
}

pub fn write_json(
    path: &Path,
    scenario: &str,
    target: &str,
    tables: &[Table],
    unavailable: &[String],
) -> Result<(), String> {
    let report = JsonReport {
        scenario,
        target,
        tables: tables
            .iter()
            .map(|t| JsonTable {
                table: t,
                seed: t.seed.as_ref().map(|s| JsonSeed {
                    source: s.source,
                    a: s.a,
                    b: s.b,
                    rows: s
                        .rows
                        .iter()
                        .map(|(k, a, b)| (k.to_string(), a.show(), b.show()))
                        .collect(),
                }),
            })
            .collect(),
        unavailable,
    };
    let text = serde_json::to_string_pretty(&report)
        .map_err(|e| format!("encoding {}: {e}", path.display()))?;
    std::fs::write(path, text).map_err(|e| format!("writing {}: {e}", path.display()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn m(v: f64) -> Cell {
        Cell::Measured(Measure::seconds(v, 1))
    }

    #[test]
    fn numbers_like_the_seeds() {
        assert_eq!(fmt_num(8894.0), "8894");
        assert_eq!(fmt_num(249.584), "249.58");
        assert_eq!(fmt_num(0.0598), "0.0598");
        assert_eq!(fmt_num(0.24), "0.240");
    }

    #[test]
    fn table_has_ratio_and_seed_columns() {
        let mut t = Table::new(
            "join",
            "Joins",
            "Join on",
            "seconds per query",
            "heap",
            "btree",
        )
        .lower_is_better()
        .with_seed(Some(crate::seeds::JOIN));
        t.push("id", m(0.2), m(0.1));
        t.push("c", m(1.0), Cell::Missing("no engine".into()));
        let text = render(&t);
        let lines: Vec<&str> = text.lines().filter(|l| l.starts_with('|')).collect();
        assert_eq!(lines.len(), 4, "{text}");
        assert!(lines[2].contains("| 0.50 |"), "{text}");
        assert!(
            lines[2].contains("0.240") && lines[2].contains("0.29"),
            "{text}"
        );
        assert!(lines[3].contains("n/a"), "{text}");
        assert!(text.contains("no engine"));
    }
}
