//! ENUM and SET values: the number a column stores and the text a client sees.
//!
//! An ENUM column stores the 1-based position of its member (0 is MySQL's "error value",
//! shown as the empty string); a SET column stores a bitmask, bit i for member i+1, and
//! shows its members in definition order, joined by commas. Both engines store only the
//! number and rebuild the [`Value::Member`] from the column's member list when a row is
//! read, so a client's string and the stored number meet here and nowhere else.

use crate::collation::Collation;
use crate::value::Value;

/// Most members an ENUM may have (MySQL's limit; 1097 beyond it).
pub const MAX_ENUM_MEMBERS: usize = 65535;
/// Most members a SET may have (1097 beyond it).
pub const MAX_SET_MEMBERS: usize = 64;

/// The value of ENUM member number `n` (0 and numbers past the list: the error value '').
pub fn enum_value(members: &[String], n: u64) -> Value {
    let text = match n {
        0 => Vec::new(),
        n => members
            .get(n as usize - 1)
            .map(|m| m.as_bytes().to_vec())
            .unwrap_or_default(),
    };
    Value::Member { number: n, text }
}

/// The value of a SET bitmask: its members in definition order, comma-separated. Bits
/// past the member list are dropped.
pub fn set_value(members: &[String], mask: u64) -> Value {
    let mut text = Vec::new();
    let mut kept = 0u64;
    for (i, m) in members.iter().enumerate().take(64) {
        if mask & (1 << i) != 0 {
            if !text.is_empty() {
                text.push(b',');
            }
            text.extend_from_slice(m.as_bytes());
            kept |= 1 << i;
        }
    }
    Value::Member { number: kept, text }
}

/// Trailing spaces never count in an ENUM/SET member or in a value looked up among them.
fn trim_end(s: &[u8]) -> &[u8] {
    let mut end = s.len();
    while end > 0 && s[end - 1] == b' ' {
        end -= 1;
    }
    &s[..end]
}

/// The position (1-based) of the member equal to `s` under the column's collation.
pub fn find_member(members: &[String], s: &[u8], coll: Collation) -> Option<u64> {
    let s = trim_end(s);
    members
        .iter()
        .position(|m| coll.compare(m.as_bytes(), s).is_eq())
        .map(|i| i as u64 + 1)
}

/// What a string stores as in an ENUM column: the member it names, else (MySQL's rule
/// for a string that names no member) the member at the position the string spells as
/// a plain number. None when neither: the caller stores the error value with 1265.
pub fn enum_number_of_text(members: &[String], s: &[u8], coll: Collation) -> Option<u64> {
    if let Some(n) = find_member(members, s, coll) {
        return Some(n);
    }
    let n = plain_number(s)?;
    (1..=members.len() as u64).contains(&n).then_some(n)
}

/// What a string stores as in a SET column: the bitmask of the comma-separated members
/// it names (any order, repeats allowed, '' is the empty set), else the number it
/// spells when that is a valid bitmask. Err with the best mask (unknown parts dropped)
/// when some part names no member: the caller warns or fails with 1265.
pub fn set_mask_of_text(members: &[String], s: &[u8], coll: Collation) -> Result<u64, u64> {
    let s = trim_end(s);
    if s.is_empty() {
        return Ok(0);
    }
    let mut mask = 0u64;
    let mut bad = false;
    for part in s.split(|&b| b == b',') {
        match find_member(members, part, coll) {
            Some(n) => mask |= 1 << (n - 1),
            None => bad = true,
        }
    }
    if !bad {
        return Ok(mask);
    }
    match plain_number(s) {
        Some(n) if n <= full_mask(members.len()) => Ok(n),
        _ => Err(mask),
    }
}

/// The stored number of the rows of ENUM/SET column `col` that equal `v` under SQL
/// `=` (a number compares with the member number, anything else with the text under
/// the column's collation), for an index probe. None when no single number is sure to
/// be exactly those rows: the caller scans instead.
pub fn equal_number(col: &crate::schema::ColumnDef, v: &Value) -> Option<u64> {
    use crate::schema::DataType;
    if v.is_numeric() {
        let f = v.to_f64()?;
        return (f >= 0.0 && f.fract() == 0.0 && f < 1.8e19).then_some(f as u64);
    }
    let text: &[u8] = match v {
        Value::Bytes(b) | Value::Member { text: b, .. } => b,
        _ => return None,
    };
    match col.data_type {
        DataType::Enum(_) => match find_member(&col.members, text, col.collation) {
            Some(n) => Some(n),
            // Only the error value's rows show ''.
            None if trim_end(text).is_empty() => Some(0),
            None => None,
        },
        DataType::Set(_) => {
            let m = set_mask_of_text(&col.members, text, col.collation).ok()?;
            let Value::Member { text: shown, .. } = set_value(&col.members, m) else {
                return None;
            };
            // 'b,a' names the same members as 'a,b' but is not equal to its text.
            col.collation.compare(&shown, text).is_eq().then_some(m)
        }
        _ => None,
    }
}

/// Every member's bit set.
pub fn full_mask(count: usize) -> u64 {
    if count >= 64 {
        u64::MAX
    } else {
        (1u64 << count) - 1
    }
}

/// A string of only ASCII digits (leading/trailing spaces allowed) as a number.
fn plain_number(s: &[u8]) -> Option<u64> {
    let t = std::str::from_utf8(s).ok()?.trim();
    if t.is_empty() || !t.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    t.parse().ok()
}

/// The type as SHOW CREATE TABLE prints it: `enum('a','b')` / `set('x','y')`, quotes in
/// members doubled and backslashes escaped, as MySQL writes them.
pub fn type_text(kind: &str, members: &[String]) -> String {
    let mut out = String::from(kind);
    out.push('(');
    for (i, m) in members.iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        out.push('\'');
        for c in m.chars() {
            match c {
                '\'' => out.push_str("''"),
                '\\' => out.push_str("\\\\"),
                c => out.push(c),
            }
        }
        out.push('\'');
    }
    out.push(')');
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn m(list: &[&str]) -> Vec<String> {
        list.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn enum_text_and_numbers() {
        let ms = m(&["small", "medium", "large"]);
        let ci = Collation::GeneralCi;
        assert_eq!(enum_number_of_text(&ms, b"MEDIUM", ci), Some(2));
        assert_eq!(enum_number_of_text(&ms, b"large  ", ci), Some(3));
        assert_eq!(enum_number_of_text(&ms, b"3", ci), Some(3));
        assert_eq!(enum_number_of_text(&ms, b"4", ci), None);
        assert_eq!(enum_number_of_text(&ms, b"huge", ci), None);
        assert_eq!(
            enum_number_of_text(&ms, b"MEDIUM", Collation::Utf8Bin),
            None
        );
        assert_eq!(
            enum_value(&ms, 2),
            Value::Member {
                number: 2,
                text: b"medium".to_vec()
            }
        );
        assert_eq!(enum_value(&ms, 0).to_text(), "");
    }

    #[test]
    fn numeric_member_names_win_over_positions() {
        let ms = m(&["2", "1"]);
        assert_eq!(
            enum_number_of_text(&ms, b"1", Collation::GeneralCi),
            Some(2)
        );
    }

    #[test]
    fn set_masks() {
        let ms = m(&["a", "b", "c", "d"]);
        let ci = Collation::GeneralCi;
        assert_eq!(set_mask_of_text(&ms, b"d,a,a", ci), Ok(0b1001));
        assert_eq!(set_mask_of_text(&ms, b"", ci), Ok(0));
        assert_eq!(set_mask_of_text(&ms, b"a,x", ci), Err(0b1));
        assert_eq!(set_mask_of_text(&ms, b"5", ci), Ok(5));
        assert_eq!(set_mask_of_text(&ms, b"16", ci), Err(0));
        assert_eq!(set_value(&ms, 0b1001).to_text(), "a,d");
        assert_eq!(set_value(&ms, 0b110000).to_text(), "");
        assert_eq!(full_mask(64), u64::MAX);
    }

    #[test]
    fn type_text_escapes_quotes() {
        assert_eq!(
            type_text("enum", &m(&["it's", "a\\b"])),
            r"enum('it''s','a\\b')"
        );
    }
}
