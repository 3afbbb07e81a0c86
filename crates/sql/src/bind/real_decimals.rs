//! The decimals a DOUBLE result carries, as MySQL resolves them: a number below
//! NOT_FIXED (31) means the value is shown with that many digits after the point
//! (`123.00`), NOT_FIXED that it is shown in its shortest form (`123`). Only the text
//! shown changes; values are computed and compared as the same f64 either way.
//!
//! MySQL's rules (Item_func::count_real_length, Item_func_div, Item_func_round,
//! Item_func_int_val, Item_sum_sum / avg / variance): `+ - * %` and the branches of
//! IF/CASE/COALESCE/GREATEST/UNION take the largest of their operands' decimals, and
//! NOT_FIXED when any operand has it; `/` adds div_precision_increment (4) to that
//! largest, at most NOT_FIXED; ROUND/TRUNCATE with a constant n ≥ 0 show n decimals
//! (0 for a negative n), with any other n their argument's; CEIL/FLOOR 0; SUM keeps its
//! argument's, AVG and the variances add 4. An integer operand has 0 decimals, a
//! DECIMAL its scale, a temporal one its fraction digits, a string NOT_FIXED.

use super::SType;
use strata_types::Value;

/// MySQL's NOT_FIXED_DEC: shown as many digits as the value needs.
pub const NOT_FIXED: u8 = strata_types::output::NOT_FIXED_DECIMALS;

/// MySQL's default div_precision_increment, which `/` adds.
const DIV_INCREMENT: u8 = strata_types::decimal::DIV_INCREMENT;

/// The decimals an operand of type `t` brings to a DOUBLE result.
pub fn of(t: SType) -> u8 {
    match t {
        SType::Double(d) => d.min(NOT_FIXED),
        SType::Decimal(s) => s,
        SType::DateTime(f) | SType::Time(f) => f,
        SType::Int | SType::UInt | SType::Date | SType::Null => 0,
        SType::Text | SType::Binary | SType::Json => NOT_FIXED,
    }
}

/// The decimals of `+`, `-`, `*`, `%` or of branches together: the larger, and
/// NOT_FIXED when either is.
pub fn combined(a: u8, b: u8) -> u8 {
    if a >= NOT_FIXED || b >= NOT_FIXED {
        NOT_FIXED
    } else {
        a.max(b)
    }
}

/// The decimals of a DOUBLE `a / b`: the larger plus 4, at most NOT_FIXED.
pub fn quotient(a: u8, b: u8) -> u8 {
    combined(a, b).saturating_add(DIV_INCREMENT).min(NOT_FIXED)
}

/// The decimals of ROUND/TRUNCATE of a DOUBLE with `arg` decimals and digits `n`:
/// a constant n gives n (0 when negative, NOT_FIXED from 31 on); anything else keeps
/// the argument's.
pub fn rounded(arg: u8, n: Option<&Value>) -> u8 {
    match n {
        Some(Value::Int(i)) => (*i).clamp(0, i64::from(NOT_FIXED)) as u8,
        Some(Value::UInt(u)) => (*u).min(u64::from(NOT_FIXED)) as u8,
        Some(v @ (Value::Double(_) | Value::Decimal(_) | Value::Bytes(_))) => {
            v.to_i64().unwrap_or(0).clamp(0, i64::from(NOT_FIXED)) as u8
        }
        // NULL digits read as 0, as MySQL's val_int reads them (the result is NULL).
        Some(Value::Null) => 0,
        _ => arg,
    }
}

/// The decimals of AVG, STD and VARIANCE over a DOUBLE: four more, at most NOT_FIXED.
pub fn averaged(arg: u8) -> u8 {
    arg.saturating_add(4).min(NOT_FIXED)
}

/// The decimals of STD and VARIANCE (MySQL's `Item_sum_variance`): four more than the
/// argument's, an integer's being 0 and a DECIMAL's its scale (at most 30, the largest
/// DECIMAL scale), a string's and a DOUBLE's as [`averaged`].
pub fn variance(arg: SType) -> u8 {
    match arg {
        SType::Int | SType::UInt => 4,
        SType::Decimal(s) => s.saturating_add(4).min(strata_types::decimal::MAX_SCALE),
        SType::Double(d) => averaged(d),
        _ => NOT_FIXED,
    }
}

/// The display length MySQL gives a DOUBLE of these decimals (float_length): 17 plus
/// the decimals, 23 when not fixed.
pub fn float_length(d: u8) -> u32 {
    if d < NOT_FIXED {
        17 + u32::from(d)
    } else {
        23
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn operands_bring_their_scale_and_strings_none() {
        assert_eq!(of(SType::Int), 0);
        assert_eq!(of(SType::Decimal(3)), 3);
        assert_eq!(of(SType::Double(2)), 2);
        assert_eq!(of(SType::Double(NOT_FIXED)), NOT_FIXED);
        assert_eq!(of(SType::Text), NOT_FIXED);
        assert_eq!(of(SType::DateTime(4)), 4);
    }

    #[test]
    fn arithmetic_takes_the_larger_unless_one_is_not_fixed() {
        assert_eq!(combined(2, 0), 2);
        assert_eq!(combined(2, 3), 3);
        assert_eq!(combined(2, NOT_FIXED), NOT_FIXED);
        assert_eq!(combined(NOT_FIXED, 0), NOT_FIXED);
    }

    #[test]
    fn division_adds_four_up_to_not_fixed() {
        assert_eq!(quotient(2, 0), 6);
        assert_eq!(quotient(3, 2), 7);
        assert_eq!(quotient(26, 0), 30);
        assert_eq!(quotient(27, 0), NOT_FIXED);
        assert_eq!(quotient(2, NOT_FIXED), NOT_FIXED);
    }

    #[test]
    fn round_shows_a_constant_count_of_digits() {
        assert_eq!(rounded(NOT_FIXED, Some(&Value::Int(1))), 1);
        assert_eq!(rounded(NOT_FIXED, Some(&Value::Int(0))), 0);
        assert_eq!(rounded(2, Some(&Value::Int(-1))), 0);
        assert_eq!(rounded(NOT_FIXED, Some(&Value::Int(40))), NOT_FIXED);
        assert_eq!(rounded(NOT_FIXED, Some(&Value::Int(30))), 30);
        assert_eq!(rounded(NOT_FIXED, Some(&Value::UInt(u64::MAX))), NOT_FIXED);
        assert_eq!(rounded(NOT_FIXED, Some(&Value::str("2"))), 2);
        // Not a constant: the argument's own.
        assert_eq!(rounded(NOT_FIXED, None), NOT_FIXED);
        assert_eq!(rounded(2, None), 2);
    }

    #[test]
    fn averages_add_four_and_lengths_follow_float_length() {
        assert_eq!(averaged(2), 6);
        assert_eq!(averaged(28), NOT_FIXED);
        assert_eq!(averaged(NOT_FIXED), NOT_FIXED);
        assert_eq!(float_length(2), 19);
        assert_eq!(float_length(0), 17);
        assert_eq!(float_length(NOT_FIXED), 23);
    }

    #[test]
    fn variance_shows_four_more_than_its_argument() {
        assert_eq!(variance(SType::Int), 4);
        assert_eq!(variance(SType::UInt), 4);
        assert_eq!(variance(SType::Decimal(2)), 6);
        assert_eq!(variance(SType::Decimal(29)), 30);
        assert_eq!(variance(SType::Double(1)), 5);
        assert_eq!(variance(SType::DOUBLE), NOT_FIXED);
        assert_eq!(variance(SType::Text), NOT_FIXED);
    }
}
