//! YEAR values: 1901-2155, and 0 (shown `0000`). How a number or a string becomes a
//! YEAR as MySQL 8 converts it: one- and two-digit values are years of 1970-2069
//! (1-69 → 2001-2069, 70-99 → 1970-1999); the number 0 is the zero year 0000 but the
//! strings `'0'` and `'00'` are 2000.

/// The year a number or numeric string denotes, or None when it is outside YEAR's range
/// (the caller gives 1264, or stores 0 outside strict mode). `from_string` tells `'0'`
/// and `'00'` (2000) from the number 0 (0000).
pub fn from_number(n: i64, from_string: bool) -> Option<i64> {
    match n {
        0 if from_string => Some(2000),
        0 => Some(0),
        1..=69 => Some(2000 + n),
        70..=99 => Some(1900 + n),
        1901..=2155 => Some(n),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mysql_two_digit_rules() {
        assert_eq!(from_number(0, false), Some(0));
        assert_eq!(from_number(0, true), Some(2000));
        assert_eq!(from_number(1, false), Some(2001));
        assert_eq!(from_number(69, true), Some(2069));
        assert_eq!(from_number(70, false), Some(1970));
        assert_eq!(from_number(99, false), Some(1999));
        assert_eq!(from_number(1901, false), Some(1901));
        assert_eq!(from_number(2155, false), Some(2155));
        assert_eq!(from_number(100, false), None);
        assert_eq!(from_number(1900, false), None);
        assert_eq!(from_number(2156, false), None);
        assert_eq!(from_number(-1, false), None);
    }
}
