//! The corpus run's report: the per-file table, the failure list written to a file, the
//! failures grouped by category (error code and message, wrong result, timeout), and the
//! records slower than a second.

use std::collections::BTreeMap;
use std::io::{self, Write};
use std::path::Path;
use std::time::Duration;

use super::runner::{FileResult, Outcome};

/// Records slower than this are listed.
pub const SLOW: Duration = Duration::from_secs(1);

/// The first `n` characters of `sql`, on one line.
pub fn sql_prefix(sql: &str, n: usize) -> String {
    let one_line: String = sql.split_whitespace().collect::<Vec<_>>().join(" ");
    if one_line.chars().count() > n {
        let mut s: String = one_line.chars().take(n).collect();
        s.push('…');
        s
    } else {
        one_line
    }
}

/// Prints the per-file table of one engine's run, with a total line.
pub fn print_table(out: &mut impl Write, title: &str, files: &[FileResult]) -> io::Result<()> {
    writeln!(out, "\n{title}")?;
    writeln!(
        out,
        "{:<34} {:>7} {:>7} {:>7} {:>7} {:>9}",
        "file", "run", "passed", "failed", "skipped", "time"
    )?;
    let (mut run, mut passed, mut failed, mut skipped) = (0, 0, 0, 0);
    let mut time = Duration::ZERO;
    for f in files {
        writeln!(
            out,
            "{:<34} {:>7} {:>7} {:>7} {:>7} {:>8.1}s",
            f.name,
            f.run(),
            f.passed(),
            f.failed(),
            f.skipped(),
            f.elapsed.as_secs_f64()
        )?;
        run += f.run();
        passed += f.passed();
        failed += f.failed();
        skipped += f.skipped();
        time += f.elapsed;
    }
    writeln!(
        out,
        "{:<34} {:>7} {:>7} {:>7} {:>7} {:>8.1}s",
        "total",
        run,
        passed,
        failed,
        skipped,
        time.as_secs_f64()
    )
}

/// Failure counts by category, largest first.
pub fn groups(files: &[FileResult]) -> Vec<(String, usize)> {
    let mut by: BTreeMap<&str, usize> = BTreeMap::new();
    for f in files {
        for r in &f.records {
            if let Outcome::Fail { category, .. } = &r.outcome {
                *by.entry(category.as_str()).or_default() += 1;
            }
        }
    }
    let mut v: Vec<(String, usize)> = by.into_iter().map(|(k, n)| (k.to_string(), n)).collect();
    v.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
    v
}

/// Prints the failure categories with their counts.
pub fn print_groups(out: &mut impl Write, files: &[FileResult]) -> io::Result<()> {
    let g = groups(files);
    if g.is_empty() {
        return Ok(());
    }
    writeln!(out, "failures by category:")?;
    for (category, n) in g {
        writeln!(out, "  {n:>6}  {category}")?;
    }
    Ok(())
}

/// Records that took longer than [`SLOW`]: (file, line, time, SQL prefix), slowest first.
pub fn slow(files: &[FileResult]) -> Vec<(String, usize, Duration, String)> {
    let mut v: Vec<_> = files
        .iter()
        .flat_map(|f| {
            f.records
                .iter()
                .filter(|r| r.elapsed > SLOW)
                .map(|r| (f.name.clone(), r.line, r.elapsed, sql_prefix(&r.sql, 80)))
        })
        .collect();
    v.sort_by_key(|e| std::cmp::Reverse(e.2));
    v
}

/// Upper bounds of the record-time histogram (the last bucket is everything above).
const BUCKETS: [(Duration, &str); 4] = [
    (Duration::from_millis(100), "<0.1s"),
    (Duration::from_millis(500), "<0.5s"),
    (Duration::from_secs(1), "<1s"),
    (Duration::from_secs(2), "<2s"),
];

/// How many records ran in each time bucket (skipped records are not counted).
pub fn histogram(files: &[FileResult]) -> Vec<(&'static str, usize)> {
    let mut counts = vec![0usize; BUCKETS.len() + 1];
    for r in files.iter().flat_map(|f| &f.records) {
        if r.outcome == Outcome::Skip {
            continue;
        }
        let i = BUCKETS
            .iter()
            .position(|(bound, _)| r.elapsed < *bound)
            .unwrap_or(BUCKETS.len());
        counts[i] += 1;
    }
    BUCKETS
        .iter()
        .map(|(_, name)| *name)
        .chain([">=2s"])
        .zip(counts)
        .collect()
}

/// Prints the record-time histogram and the records slower than a second.
pub fn print_slow(out: &mut impl Write, files: &[FileResult]) -> io::Result<()> {
    let h: Vec<String> = histogram(files)
        .into_iter()
        .map(|(name, n)| format!("{name} {n}"))
        .collect();
    writeln!(out, "record times: {}", h.join(", "))?;
    let s = slow(files);
    if s.is_empty() {
        return writeln!(out, "no record took more than {SLOW:?}");
    }
    writeln!(out, "records slower than {SLOW:?}:")?;
    for (file, line, t, sql) in s {
        writeln!(out, "  {:>8.2}s  {file}:{line}  {sql}", t.as_secs_f64())?;
    }
    Ok(())
}

/// Writes every failure (file:line, SQL, what was expected and what came back) to `path`.
pub fn write_failures(path: &Path, title: &str, files: &[FileResult]) -> io::Result<()> {
    let mut out = io::BufWriter::new(std::fs::File::create(path)?);
    writeln!(out, "# corpus failures: {title}")?;
    print_groups(&mut out, files)?;
    writeln!(out)?;
    for f in files {
        for r in &f.records {
            if let Outcome::Fail { category, detail } = &r.outcome {
                writeln!(out, "{}:{}  [{category}]", f.name, r.line)?;
                writeln!(out, "  sql: {}", sql_prefix(&r.sql, 200))?;
                writeln!(out, "  {detail}")?;
            }
        }
    }
    out.flush()
}

#[cfg(test)]
mod tests {
    use super::super::runner::RecordResult;
    use super::*;

    fn rec(line: usize, outcome: Outcome, ms: u64) -> RecordResult {
        RecordResult {
            line,
            sql: "SELECT   1\n FROM t".into(),
            outcome,
            elapsed: Duration::from_millis(ms),
        }
    }

    #[test]
    fn groups_count_categories_and_slow_lists_long_records() {
        let fail = |c: &str| Outcome::Fail {
            category: c.into(),
            detail: String::new(),
        };
        let f = FileResult {
            name: "a.test".into(),
            records: vec![
                rec(1, Outcome::Pass, 1),
                rec(2, fail("1235 x"), 1),
                rec(3, fail("1235 x"), 1),
                rec(4, fail("timeout"), 10_000),
                rec(5, Outcome::Skip, 0),
            ],
            elapsed: Duration::from_secs(10),
        };
        assert_eq!((f.run(), f.passed(), f.failed(), f.skipped()), (4, 1, 3, 1));
        assert_eq!(f.timeouts(), 1);
        let files = [f];
        assert_eq!(
            groups(&files),
            vec![("1235 x".to_string(), 2), ("timeout".to_string(), 1)]
        );
        let s = slow(&files);
        assert_eq!(s.len(), 1);
        assert_eq!((s[0].1, s[0].3.as_str()), (4, "SELECT 1 FROM t"));
        assert_eq!(sql_prefix("abcdef", 3), "abc…");
        let h = histogram(&files);
        assert_eq!(h[0], ("<0.1s", 3));
        assert_eq!(h[4], (">=2s", 1));
    }
}
