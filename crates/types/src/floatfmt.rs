//! The text form of a FLOAT (single-precision) value, as MySQL prints one: six
//! significant digits (FLT_DIG), trailing zeros dropped, in fixed notation when it fits
//! a 12-character field and in `1.5e-11` notation otherwise. A FLOAT column holds its
//! value widened to f64 everywhere else (arithmetic on it is double arithmetic, so
//! `f * 1` shows `0.10000000149011612` in MySQL too); only showing the value as a FLOAT
//! — a FLOAT result column in the text protocol, CAST(f AS CHAR), CONCAT(f) — uses this.

/// The field width MySQL formats a FLOAT into (FLT_DIG + 6).
const WIDTH: i32 = 12;
/// Significant digits of a FLOAT (FLT_DIG).
const DIGITS: usize = 6;

/// `x` (a FLOAT's value, widened) as MySQL shows a FLOAT.
pub fn format_float(x: f64) -> String {
    if x == 0.0 {
        return "0".into();
    }
    if !x.is_finite() {
        return format!("{x}");
    }
    let neg = x < 0.0;
    // A minus sign takes one of the field's places.
    let width = if neg { WIDTH - 1 } else { WIDTH };
    let (digits, decpt) = significant(x.abs(), DIGITS);
    let len = digits.len() as i32;
    let exp_len =
        1 + i32::from(decpt >= 101 || decpt <= -99) + i32::from(decpt >= 11 || decpt <= -9);
    let fixed_len = if decpt <= 0 {
        len - decpt + 2
    } else if decpt < len {
        len + 1
    } else {
        decpt
    };
    let have_space = fixed_len <= width;
    let force_e = decpt <= 0 && width <= 2 - decpt && width >= 3 + exp_len;
    let fixed = !force_e
        && (have_space
            || (decpt <= width && (decpt >= -1 || (decpt == -2 && (len > 1 || !neg))))
            || (decpt < 0 && width - len >= -decpt));
    let mut out = String::new();
    if neg {
        out.push('-');
    }
    if fixed {
        let (digits, decpt) = if have_space {
            (digits, decpt)
        } else {
            // Fewer digits, so the fixed form fits the field.
            let keep = if decpt <= 0 {
                width - 2 + decpt
            } else {
                width - 1
            };
            significant(x.abs(), keep.max(1) as usize)
        };
        push_fixed(&mut out, &digits, decpt);
    } else {
        out.push_str(&digits[..1]);
        if digits.len() > 1 {
            out.push('.');
            out.push_str(&digits[1..]);
        }
        out.push('e');
        out.push_str(&(decpt - 1).to_string());
    }
    out
}

/// The first `n` significant decimal digits of `x` > 0, correctly rounded, trailing
/// zeros dropped, and the position of the decimal point: x ≈ 0.DIGITS × 10^decpt.
fn significant(x: f64, n: usize) -> (String, i32) {
    let s = format!("{:.*e}", n.saturating_sub(1), x);
    let (mantissa, exp) = s.split_once('e').unwrap_or((&s, "0"));
    let exp: i32 = exp.parse().unwrap_or(0);
    let mut digits: String = mantissa.chars().filter(|c| c.is_ascii_digit()).collect();
    while digits.len() > 1 && digits.ends_with('0') {
        digits.pop();
    }
    (digits, exp + 1)
}

fn push_fixed(out: &mut String, digits: &str, decpt: i32) {
    let len = digits.len() as i32;
    if decpt <= 0 {
        out.push_str("0.");
        out.extend(std::iter::repeat_n('0', (-decpt) as usize));
        out.push_str(digits);
    } else if decpt < len {
        out.push_str(&digits[..decpt as usize]);
        out.push('.');
        out.push_str(&digits[decpt as usize..]);
    } else {
        out.push_str(digits);
        out.extend(std::iter::repeat_n('0', (decpt - len) as usize));
    }
}

#[cfg(test)]
mod tests {
    use super::format_float;

    fn f(x: f32) -> String {
        format_float(x as f64)
    }

    #[test]
    fn six_significant_digits_as_mysql_shows_a_float() {
        // Each pair checked against MariaDB 10.11, which shares MySQL's formatting.
        assert_eq!(f(0.1), "0.1");
        assert_eq!(f(123456789.0), "123457000");
        assert_eq!(f(2.7182817), "2.71828");
        assert_eq!(f(1e20), "1e20");
        assert_eq!(f(1.0000001), "1");
        assert_eq!(f(16777217.0), "16777200");
        assert_eq!(f(0.000012345678), "0.0000123457");
        assert_eq!(f(1e-10), "0.0000000001");
        assert_eq!(f(-2.5e-7), "-0.00000025");
        assert_eq!(f(0.0), "0");
        assert_eq!(f(-1.5), "-1.5");
        assert_eq!(f(100.0), "100");
    }

    #[test]
    fn small_values_switch_to_exponent_form() {
        assert_eq!(f(1.5e-11), "1.5e-11");
        assert_eq!(f(1e12), "1e12");
        assert_eq!(f(1e11), "100000000000");
    }
}
