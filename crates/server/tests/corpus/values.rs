//! How a result is turned into the strings the corpus compares, and the comparison.
//!
//! The corpus' expected values were regenerated against MySQL 8 by a harness that renders
//! each value by the column type the *server* reported: integer types as the integer, DECIMAL,
//! FLOAT and DOUBLE as a float printed with three decimals (`%.3f`), everything else as its
//! text, NULL as `NULL`. The type letters in a `query` line are those server types. When it
//! checks a result, that harness lets an integer stand where a real was expected (printed
//! with `.000`) and a whole real where an integer was expected (printed as the integer); a
//! text column must stay a text column. This module follows the same rules, so a server
//! that returns MySQL 8's values passes whatever exact column type it picks among the
//! numeric ones.

use md5::{Digest, Md5};
use mysql::consts::ColumnType;

use super::parser::{Expected, SortMode};

/// The type letter a server column type renders as.
pub fn letter(t: ColumnType) -> char {
    use ColumnType::*;
    match t {
        MYSQL_TYPE_TINY | MYSQL_TYPE_SHORT | MYSQL_TYPE_LONG | MYSQL_TYPE_INT24
        | MYSQL_TYPE_LONGLONG | MYSQL_TYPE_YEAR | MYSQL_TYPE_BIT => 'I',
        MYSQL_TYPE_FLOAT | MYSQL_TYPE_DOUBLE | MYSQL_TYPE_DECIMAL | MYSQL_TYPE_NEWDECIMAL => 'R',
        _ => 'T',
    }
}

/// Renders one value of a column whose type letter is `letter`.
pub fn render(v: &mysql::Value, letter: char) -> String {
    use mysql::Value;
    let text = match v {
        Value::NULL => return "NULL".to_string(),
        Value::Bytes(b) => String::from_utf8_lossy(b).into_owned(),
        Value::Int(i) => i.to_string(),
        Value::UInt(u) => u.to_string(),
        Value::Float(f) => f.to_string(),
        Value::Double(d) => d.to_string(),
        // The text protocol sends only bytes; keep anything else readable.
        other => other.as_sql(true).trim_matches('\'').to_string(),
    };
    match letter {
        'R' => match text.trim().parse::<f64>() {
            Ok(f) => format!("{f:.3}"),
            Err(_) => text,
        },
        _ if text.is_empty() => "(empty)".to_string(),
        _ => text,
    }
}

/// Whether the server's type letters fit the expected ones (`I` and `R` stand for each other).
pub fn types_match(expected: &str, got: &str) -> bool {
    expected.len() == got.len()
        && expected
            .chars()
            .zip(got.chars())
            .all(|(e, g)| e == g || matches!((e, g), ('I', 'R') | ('R', 'I')))
}

/// Adjusts rendered values to the expected type letters: an integer where a real is
/// expected gets `.000`; a whole real where an integer is expected loses its decimals.
pub fn normalize(values: &mut [String], expected_types: &str) {
    let types = expected_types.as_bytes();
    if types.is_empty() {
        return;
    }
    for (i, v) in values.iter_mut().enumerate() {
        match types[i % types.len()] {
            b'R' if !v.contains('.') && v.parse::<i64>().is_ok() => v.push_str(".000"),
            b'I' if v.contains('.') => {
                if let Ok(f) = v.parse::<f64>() {
                    if f.trunc() == f && f.abs() < 9.2e18 {
                        *v = format!("{}", f as i64);
                    }
                }
            }
            _ => {}
        }
    }
}

/// Orders values as the record asks; `columns` is the row width for `rowsort`.
pub fn sort(values: Vec<String>, mode: SortMode, columns: usize) -> Vec<String> {
    match mode {
        SortMode::Unsorted => values,
        SortMode::Values => {
            let mut v = values;
            v.sort();
            v
        }
        SortMode::Rows => {
            let width = columns.max(1);
            let mut rows: Vec<Vec<String>> = Vec::with_capacity(values.len() / width + 1);
            let mut it = values.into_iter().peekable();
            while it.peek().is_some() {
                rows.push(it.by_ref().take(width).collect());
            }
            rows.sort();
            rows.into_iter().flatten().collect()
        }
    }
}

/// md5 of the values, each followed by a newline, as lowercase hex.
pub fn hash(values: &[String]) -> String {
    let mut h = Md5::new();
    for v in values {
        h.update(v.as_bytes());
        h.update(b"\n");
    }
    h.finalize().iter().map(|b| format!("{b:02x}")).collect()
}

/// Compares sorted, normalised values with the expectation; `Err` says how they differ.
pub fn check(values: &[String], expected: &Expected) -> Result<(), String> {
    if values.len() != expected.count() {
        return Err(format!(
            "expected {} values, got {}: {}",
            expected.count(),
            values.len(),
            preview(values)
        ));
    }
    match expected {
        Expected::Values(want) => match want.iter().zip(values).position(|(w, g)| w != g) {
            None => Ok(()),
            Some(i) => Err(format!(
                "value {} differs: expected {:?}, got {:?} (got {})",
                i + 1,
                want[i],
                values[i],
                preview(values)
            )),
        },
        Expected::Hash { md5, .. } => {
            let got = hash(values);
            if &got == md5 {
                Ok(())
            } else {
                Err(format!(
                    "hash differs: expected {md5}, got {got} (got {})",
                    preview(values)
                ))
            }
        }
    }
}

/// The first few values, for a failure line.
fn preview(values: &[String]) -> String {
    const SHOWN: usize = 12;
    let mut s = values
        .iter()
        .take(SHOWN)
        .cloned()
        .collect::<Vec<_>>()
        .join(" ");
    if values.len() > SHOWN {
        s.push_str(&format!(" … ({} values)", values.len()));
    }
    format!("[{s}]")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn strings(v: &[&str]) -> Vec<String> {
        v.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn reals_print_three_decimals_rounding_half_to_even() {
        let v = |s: &str| mysql::Value::Bytes(s.as_bytes().to_vec());
        assert_eq!(render(&v("12.3456"), 'R'), "12.346");
        assert_eq!(render(&v("0.0625"), 'R'), "0.062");
        assert_eq!(render(&v("-0.0001"), 'R'), "-0.000");
        assert_eq!(render(&v("7"), 'I'), "7");
        assert_eq!(render(&v(""), 'T'), "(empty)");
        assert_eq!(render(&mysql::Value::NULL, 'R'), "NULL");
    }

    #[test]
    fn integers_and_reals_stand_for_each_other() {
        let mut v = strings(&["3", "4.000", "4.500", "NULL", "x"]);
        normalize(&mut v, "R");
        assert_eq!(v, strings(&["3.000", "4.000", "4.500", "NULL", "x"]));
        let mut v = strings(&["3.000", "-2.000", "4.500", "NULL"]);
        normalize(&mut v, "I");
        assert_eq!(v, strings(&["3", "-2", "4.500", "NULL"]));
        assert!(types_match("IRT", "RIT"));
        assert!(!types_match("IT", "II"));
        assert!(!types_match("I", "II"));
    }

    #[test]
    fn sorting_and_hashing() {
        let v = strings(&["2", "b", "10", "a", "2", "a"]);
        assert_eq!(
            sort(v.clone(), SortMode::Rows, 2),
            strings(&["10", "a", "2", "a", "2", "b"])
        );
        assert_eq!(
            sort(v, SortMode::Values, 2),
            strings(&["10", "2", "2", "a", "a", "b"])
        );
        // md5 of "1\n2\n", as `printf '1\n2\n' | md5sum` prints it.
        assert_eq!(
            hash(&strings(&["1", "2"])),
            "6ddb4095eb719e2a9f0a3f95677d24e0"
        );
        let want = Expected::Values(strings(&["1", "2"]));
        assert!(check(&strings(&["1", "2"]), &want).is_ok());
        assert!(check(&strings(&["1", "3"]), &want).is_err());
        assert!(check(&strings(&["1"]), &want).is_err());
    }
}
