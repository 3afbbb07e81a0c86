//! Checking one server's TPC-H result against another's. Values are compared as text,
//! numbers as numbers: two servers print the same DECIMAL or DOUBLE with different
//! scales (an AVG with 4 or 6 decimals, a double in its shortest form), so two numbers
//! are equal when they differ by at most a relative 1e-6, or agree once both are
//! rounded to the smaller of the two printed scales. Rows of a query whose ORDER BY is
//! not total are sorted first (numbers by value), since tied rows may come in any order.

use std::cmp::Ordering;

const REL_TOLERANCE: f64 = 1e-6;

/// A number as printed: its value and digits after the decimal point.
fn number(s: &str) -> Option<(f64, usize)> {
    let t = s.trim();
    // Only plain decimal numbers: "1e5" and "inf" are text here, and so is a phone
    // number like 25-989-741-2988 (f64 would refuse it anyway).
    if t.is_empty()
        || !t
            .chars()
            .all(|c| c.is_ascii_digit() || c == '.' || c == '-' || c == '+')
    {
        return None;
    }
    let v = t.parse::<f64>().ok()?;
    let scale = t.split_once('.').map(|(_, f)| f.len()).unwrap_or(0);
    Some((v, scale))
}

fn close(a: f64, b: f64) -> bool {
    a == b || (a - b).abs() <= REL_TOLERANCE * a.abs().max(b.abs())
}

fn round_to(v: f64, scale: usize) -> f64 {
    let p = 10f64.powi(scale.min(15) as i32);
    (v * p).round() / p
}

/// Whether two printed values are the same value.
pub fn values_equal(a: &str, b: &str) -> bool {
    if a == b {
        return true;
    }
    match (number(a), number(b)) {
        (Some((x, sx)), Some((y, sy))) => {
            let s = sx.min(sy);
            close(x, y) || close(round_to(x, s), round_to(y, s))
        }
        _ => false,
    }
}

fn cmp_value(a: &str, b: &str) -> Ordering {
    match (number(a), number(b)) {
        (Some((x, _)), Some((y, _))) => x.partial_cmp(&y).unwrap_or(Ordering::Equal),
        _ => a.cmp(b),
    }
}

fn cmp_row(a: &[String], b: &[String]) -> Ordering {
    for (x, y) in a.iter().zip(b) {
        match cmp_value(x, y) {
            Ordering::Equal => {}
            o => return o,
        }
    }
    a.len().cmp(&b.len())
}

/// A row for a message: values joined, long ones cut.
pub fn show_row(r: &[String]) -> String {
    let cells: Vec<String> = r
        .iter()
        .map(|v| {
            if v.chars().count() > 40 {
                format!("{}…", v.chars().take(40).collect::<String>())
            } else {
                v.clone()
            }
        })
        .collect();
    format!("({})", cells.join(", "))
}

/// Compares result `a` (named `a_name`) with `b`: `Ok` when equal, else the first
/// difference (the first differing row, or the row counts).
pub fn compare(
    a: &[Vec<String>],
    b: &[Vec<String>],
    total_order: bool,
    a_name: &str,
    b_name: &str,
) -> Result<(), String> {
    let (mut a, mut b): (Vec<&Vec<String>>, Vec<&Vec<String>>) =
        (a.iter().collect(), b.iter().collect());
    if !total_order {
        a.sort_by(|x, y| cmp_row(x, y));
        b.sort_by(|x, y| cmp_row(x, y));
    }
    let sorted = if total_order { "" } else { " (rows sorted)" };
    for (i, (x, y)) in a.iter().zip(&b).enumerate() {
        let same = x.len() == y.len() && x.iter().zip(y.iter()).all(|(u, v)| values_equal(u, v));
        if !same {
            return Err(format!(
                "row {} of {}{sorted}: {a_name} {} vs {b_name} {}",
                i + 1,
                a.len().max(b.len()),
                show_row(x),
                show_row(y)
            ));
        }
    }
    if a.len() != b.len() {
        let (longer, name) = if a.len() > b.len() {
            (&a, a_name)
        } else {
            (&b, b_name)
        };
        let first_extra = longer[a.len().min(b.len())];
        return Err(format!(
            "{a_name} {} rows vs {b_name} {} rows; first extra row on {name}: {}",
            a.len(),
            b.len(),
            show_row(first_extra)
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rows(v: &[&[&str]]) -> Vec<Vec<String>> {
        v.iter()
            .map(|r| r.iter().map(|s| s.to_string()).collect())
            .collect()
    }

    #[test]
    fn numbers_compare_by_value_and_displayed_scale() {
        assert!(values_equal("25.5022", "25.502231"));
        assert!(values_equal("0.05", "0.050000"));
        assert!(values_equal("1234567.891", "1234567.8910004"));
        assert!(values_equal("16.38077862639553", "16.3808"));
        assert!(!values_equal("25.51", "25.502231"));
        assert!(!values_equal("100", "101"));
        assert!(!values_equal("25-989-741-2988", "25-989-741-2989"));
        assert!(values_equal("BUILDING", "BUILDING"));
        assert!(!values_equal("NULL", "0"));
    }

    #[test]
    fn unordered_results_are_sorted_ordered_ones_are_not() {
        let a = rows(&[&["1", "x"], &["2", "y"]]);
        let b = rows(&[&["2", "y"], &["1.00", "x"]]);
        assert!(compare(&a, &b, false, "A", "B").is_ok());
        let e = compare(&a, &b, true, "A", "B").unwrap_err();
        assert!(e.starts_with("row 1 of 2: A (1, x) vs B (2, y)"), "{e}");
    }

    #[test]
    fn row_counts_differ() {
        let a = rows(&[&["1"]]);
        let b = rows(&[&["1"], &["2"]]);
        let e = compare(&a, &b, true, "A", "B").unwrap_err();
        assert!(
            e.contains("A 1 rows vs B 2 rows") && e.contains("(2)"),
            "{e}"
        );
    }
}
