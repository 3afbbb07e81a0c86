//! How strings compare. CHAR/VARCHAR/TEXT columns use `utf8mb4_general_ci` by default
//! (case-insensitive by simple upper-casing, trailing spaces ignored — MySQL's PAD SPACE);
//! `utf8mb4_bin` compares code points with trailing spaces ignored; BLOB and BINARY
//! columns compare raw bytes.

use serde::{Deserialize, Serialize};
use std::cmp::Ordering;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize, Default)]
pub enum Collation {
    #[default]
    GeneralCi,
    Utf8Bin,
    Binary,
}

impl Collation {
    pub fn name(self) -> &'static str {
        match self {
            Collation::GeneralCi => "utf8mb4_general_ci",
            Collation::Utf8Bin => "utf8mb4_bin",
            Collation::Binary => "binary",
        }
    }

    /// The MySQL collation id sent in column definitions.
    pub fn id(self) -> u16 {
        match self {
            Collation::GeneralCi => 45,
            Collation::Utf8Bin => 46,
            Collation::Binary => 63,
        }
    }

    pub fn from_name(name: &str) -> Option<Collation> {
        match name.to_ascii_lowercase().as_str() {
            "utf8mb4_general_ci" | "utf8_general_ci" | "utf8mb3_general_ci"
            | "latin1_swedish_ci" | "utf8mb4_unicode_ci" | "utf8_unicode_ci"
            | "utf8mb4_0900_ai_ci" => Some(Collation::GeneralCi),
            "utf8mb4_bin" | "utf8_bin" | "utf8mb3_bin" | "latin1_bin" => Some(Collation::Utf8Bin),
            "binary" => Some(Collation::Binary),
            _ => None,
        }
    }

    pub fn compare(self, a: &[u8], b: &[u8]) -> Ordering {
        match self {
            Collation::Binary => a.cmp(b),
            Collation::Utf8Bin => trim_trailing_spaces(a).cmp(trim_trailing_spaces(b)),
            Collation::GeneralCi => {
                let (a, b) = (trim_trailing_spaces(a), trim_trailing_spaces(b));
                if a.is_ascii() && b.is_ascii() {
                    let n = a.len().min(b.len());
                    for i in 0..n {
                        let (x, y) = (a[i].to_ascii_uppercase(), b[i].to_ascii_uppercase());
                        if x != y {
                            return x.cmp(&y);
                        }
                    }
                    return a.len().cmp(&b.len());
                }
                let ca = String::from_utf8_lossy(a)
                    .chars()
                    .map(weight)
                    .collect::<Vec<_>>();
                let cb = String::from_utf8_lossy(b)
                    .chars()
                    .map(weight)
                    .collect::<Vec<_>>();
                ca.cmp(&cb)
            }
        }
    }

    /// A character as this collation compares it one character at a time (LOCATE,
    /// FIND_IN_SET, REGEXP under a `_ci` collation): its general_ci weight, or itself
    /// under a case-sensitive collation.
    pub fn fold_char(self, c: char) -> char {
        match self {
            Collation::GeneralCi => weight(c),
            Collation::Utf8Bin | Collation::Binary => c,
        }
    }

    /// Whether this collation ignores case.
    pub fn is_case_insensitive(self) -> bool {
        self == Collation::GeneralCi
    }

    /// Appends the bytes whose byte order is this collation's order (the "weight string").
    pub fn weight_string(self, s: &[u8], out: &mut Vec<u8>) {
        match self {
            Collation::Binary => out.extend_from_slice(s),
            Collation::Utf8Bin => out.extend_from_slice(trim_trailing_spaces(s)),
            Collation::GeneralCi => {
                let s = trim_trailing_spaces(s);
                if s.is_ascii() {
                    out.extend(s.iter().map(|b| b.to_ascii_uppercase()));
                } else {
                    let mut buf = [0u8; 4];
                    for c in String::from_utf8_lossy(s).chars() {
                        out.extend_from_slice(weight(c).encode_utf8(&mut buf).as_bytes());
                    }
                }
            }
        }
    }
}

/// General_ci's per-character weight: the simple upper-case mapping when it is one char;
/// characters outside the Basic Multilingual Plane all weigh as U+FFFD, as in MySQL.
fn weight(c: char) -> char {
    if c as u32 > 0xFFFF {
        return '\u{FFFD}';
    }
    let mut up = c.to_uppercase();
    match (up.next(), up.next()) {
        (Some(u), None) => u,
        _ => c,
    }
}

fn trim_trailing_spaces(s: &[u8]) -> &[u8] {
    let mut end = s.len();
    while end > 0 && s[end - 1] == b' ' {
        end -= 1;
    }
    &s[..end]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn general_ci_ignores_case_and_trailing_space() {
        let c = Collation::GeneralCi;
        assert_eq!(c.compare(b"Abc ", b"aBC"), Ordering::Equal);
        assert_eq!(c.compare(b"abc", b"abd"), Ordering::Less);
        assert_eq!(c.compare("é".as_bytes(), "É".as_bytes()), Ordering::Equal);
        let (mut a, mut b) = (vec![], vec![]);
        c.weight_string(b"Hello  ", &mut a);
        c.weight_string(b"hELLO", &mut b);
        assert_eq!(a, b);
        assert_eq!(Collation::Binary.compare(b"a", b"A"), Ordering::Greater);
    }
}
