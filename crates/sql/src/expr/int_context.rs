//! A value read in integer context, as MySQL's `val_int()` reads an argument that must
//! be an integer (a length, a position, a count, a number of digits, a bit operand):
//! numbers as [`Value::to_i64`] converts them, and a string by its leading integer
//! with warning 1292 "Truncated incorrect INTEGER value" when anything but trailing
//! spaces follows it, or when it holds no digits at all (MySQL's
//! `longlong_from_string_with_check`). Without the warning `LEFT(s, '2.6')` answered
//! like MySQL (two characters) but silently, where MySQL tells the client that `'2.6'`
//! was cut; under strict mode a data change that stores such a result fails with the
//! same 1292, as the session's strict handler turns the warning into an error.

use super::functions::cast::warn_truncated;
use super::EvalCtx;
use strata_types::value::parse_leading_i64;
use strata_types::Value;

/// `v` as an integer argument: None for NULL.
pub(crate) fn int_arg(v: &Value, cx: &EvalCtx) -> Option<i64> {
    match v {
        Value::Int(i) => Some(*i),
        Value::Bytes(b) => {
            if !is_clean_integer(b) {
                warn_truncated(cx, "INTEGER", b);
            }
            Some(parse_leading_i64(b))
        }
        other => other.to_i64(),
    }
}

/// `v` as a bit operand (`val_uint`): an unsigned 64-bit integer, a negative number as
/// its two's complement; a string warns as [`int_arg`].
pub(crate) fn uint_arg(v: &Value, cx: &EvalCtx) -> u64 {
    match v {
        Value::UInt(u) => *u,
        other => int_arg(other, cx).unwrap_or(0) as u64,
    }
}

/// Whether a string reads as an integer with nothing lost: optional leading spaces, an
/// optional sign, at least one digit, then only spaces, and no overflow of BIGINT.
fn is_clean_integer(b: &[u8]) -> bool {
    let space = |c: &u8| matches!(c, b' ' | b'\t' | b'\n' | b'\r');
    let mut i = b.iter().position(|c| !space(c)).unwrap_or(b.len());
    let negative = b.get(i) == Some(&b'-');
    if matches!(b.get(i), Some(b'-' | b'+')) {
        i += 1;
    }
    let start = i;
    let mut n: u128 = 0;
    while let Some(c @ b'0'..=b'9') = b.get(i) {
        n = (n * 10 + u128::from(c - b'0')).min(u128::from(u64::MAX) + 1);
        i += 1;
    }
    let limit = if negative {
        1u128 << 63
    } else {
        i64::MAX as u128
    };
    i > start && n <= limit && b[i..].iter().all(space)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::expr::test_env::TestEnv;

    fn read(s: &str) -> (Option<i64>, Vec<String>) {
        let env = TestEnv::default();
        let cx = EvalCtx::new(&[], &env);
        let n = int_arg(&Value::str(s), &cx);
        let warnings = env
            .warnings
            .borrow()
            .iter()
            .map(|(c, m)| format!("{c} {m}"))
            .collect();
        (n, warnings)
    }

    #[test]
    fn clean_integers_do_not_warn() {
        for (s, n) in [("2", 2), (" 2", 2), ("2 ", 2), ("-7", -7), ("+3", 3)] {
            assert_eq!(read(s), (Some(n), vec![]), "{s:?}");
        }
    }

    #[test]
    fn anything_cut_warns_1292() {
        for (s, n) in [
            ("2.6", 2),
            ("1e1", 1),
            (" 2x", 2),
            ("", 0),
            ("abc", 0),
            ("-", 0),
        ] {
            let (got, warnings) = read(s);
            assert_eq!(got, Some(n), "{s:?}");
            assert_eq!(
                warnings,
                vec![format!("1292 Truncated incorrect INTEGER value: '{s}'")],
                "{s:?}"
            );
        }
    }

    #[test]
    fn overflow_saturates_and_warns() {
        let (n, w) = read("99999999999999999999");
        assert_eq!(n, Some(i64::MAX));
        assert_eq!(w.len(), 1);
    }

    #[test]
    fn numbers_are_read_without_warnings() {
        let env = TestEnv::default();
        let cx = EvalCtx::new(&[], &env);
        assert_eq!(int_arg(&Value::Double(2.5), &cx), Some(2));
        assert_eq!(int_arg(&Value::Null, &cx), None);
        assert_eq!(uint_arg(&Value::Int(-1), &cx), u64::MAX);
        assert!(env.codes().is_empty());
    }
}
