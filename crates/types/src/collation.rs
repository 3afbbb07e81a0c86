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
    /// utf8mb4_general_ci, the server's default (what catalogs leave unwritten).
    pub fn is_server_default(&self) -> bool {
        *self == Collation::GeneralCi
    }

    /// The character set SHOW CREATE and information_schema name for the collation.
    pub fn charset_name(self) -> &'static str {
        match self {
            Collation::Binary => "binary",
            Collation::GeneralCi | Collation::Utf8Bin => "utf8mb4",
        }
    }

    /// Whether the collation is its character set's default (SHOW CREATE TABLE prints
    /// `COLLATE` for a column only when it is not, as MySQL).
    pub fn is_primary(self) -> bool {
        matches!(self, Collation::GeneralCi | Collation::Binary)
    }

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

    /// The collation a column definition's id names (`ColumnMeta::charset`): how the
    /// values of a result column compare when a derived table, a UNION, DISTINCT or an
    /// outer ORDER BY reads them again. Ids of the `_bin` collations compare as
    /// [`Collation::Utf8Bin`], 63 as binary, every other (case-insensitive) one as
    /// [`Collation::GeneralCi`].
    pub fn from_id(id: u16) -> Collation {
        match id {
            63 => Collation::Binary,
            // utf8mb4_bin, latin1_bin, utf8mb3_bin, ascii_bin, utf8mb4_0900_bin.
            46 | 47 | 83 | 65 | 309 => Collation::Utf8Bin,
            _ => Collation::GeneralCi,
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
            Collation::Utf8Bin => {
                // UTF-8's byte order is code point order.
                let n = a.len().min(b.len());
                match a[..n].cmp(&b[..n]) {
                    Ordering::Equal => pad_space_tail(a, b, n, |c| c as u32),
                    decided => decided,
                }
            }
            Collation::GeneralCi => {
                // ASCII fast path: byte by byte with case folding. Every byte before `i`
                // was ASCII, so `i` is a character boundary in both strings.
                let n = a.len().min(b.len());
                for i in 0..n {
                    let (x, y) = (a[i], b[i]);
                    if x == y && x < 0x80 {
                        continue;
                    }
                    if (x | y) >= 0x80 {
                        return general_ci_from(&a[i..], &b[i..]);
                    }
                    let (x, y) = (x.to_ascii_uppercase(), y.to_ascii_uppercase());
                    if x != y {
                        return x.cmp(&y);
                    }
                }
                pad_space_tail(a, b, n, |c| weight(c) as u32)
            }
        }
    }

    /// Whether `a` and `b` are equal under this collation with trailing spaces counted
    /// (MySQL's `my_strnncoll`, where comparisons use `my_strnncollsp`): `'a '` is not
    /// `'a'`. Equal under PAD SPACE means equal once trailing spaces are trimmed (a
    /// space weighs only as itself), so the trailing spaces decide the rest.
    pub fn eq_no_pad(self, a: &[u8], b: &[u8]) -> bool {
        let trailing = |s: &[u8]| s.iter().rev().take_while(|&&c| c == b' ').count();
        self.compare(a, b) == Ordering::Equal && trailing(a) == trailing(b)
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

    /// Whether this collation is PAD SPACE (the shorter string compared as if padded with
    /// spaces); binary is NO PAD.
    pub fn pads_spaces(self) -> bool {
        self != Collation::Binary
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

impl Collation {
    /// SQL's `WEIGHT_STRING(s)`: under general_ci two bytes per character (its weight,
    /// big-endian), under utf8mb4_bin three (the code point), under binary the bytes
    /// themselves. Trailing spaces are kept, as MySQL 5.6's and MariaDB's function does.
    pub fn sql_weight_string(self, s: &[u8]) -> Vec<u8> {
        match self {
            Collation::Binary => s.to_vec(),
            Collation::GeneralCi => String::from_utf8_lossy(s)
                .chars()
                .flat_map(|c| (weight(c) as u32 as u16).to_be_bytes())
                .collect(),
            Collation::Utf8Bin => String::from_utf8_lossy(s)
                .chars()
                .flat_map(|c| {
                    let b = (c as u32).to_be_bytes();
                    [b[1], b[2], b[3]]
                })
                .collect(),
        }
    }
}

/// General_ci's per-character weight, as MySQL's `utf8mb4_general_ci` tables give it:
/// a letter with accents weighs as its base letter (`é` = `e`, in the Latin, Greek and
/// Cyrillic blocks, found by canonical decomposition), then as its upper case when
/// MySQL's tables have that case pair (those date from an early Unicode version, so
/// pairs added later, such as Cyrillic Supplement, Georgian Mtavruli or Latin Extended-B's
/// newer letters, are left as they are). Characters outside the Basic Multilingual Plane
/// all weigh as U+FFFD. The few characters that follow none of these rules are listed
/// in [`WEIGHT_EXCEPTIONS`]; the whole plane was checked against MariaDB 10.11's
/// `WEIGHT_STRING` (the same tables).
fn weight(c: char) -> char {
    let code = c as u32;
    if code < 0x80 {
        return c.to_ascii_uppercase();
    }
    if code > 0xFFFF {
        return '\u{FFFD}';
    }
    if let Ok(i) = WEIGHT_EXCEPTIONS.binary_search_by_key(&(code as u16), |e| e.0) {
        return char::from_u32(WEIGHT_EXCEPTIONS[i].1 as u32).unwrap_or(c);
    }
    let mut base = c;
    if strips_accents(code) {
        let mut first = None;
        unicode_normalization::char::decompose_canonical(c, |d| {
            first.get_or_insert(d);
        });
        if let Some(f) = first {
            if unicode_normalization::char::canonical_combining_class(f) == 0 {
                base = f;
            }
        }
    }
    let mut up = base.to_uppercase();
    match (up.next(), up.next()) {
        (Some(u), None) if has_case_pair(base as u32, u as u32) => u,
        _ => base,
    }
}

/// The blocks whose precomposed letters weigh as their base letter.
fn strips_accents(c: u32) -> bool {
    (0xC0..0x250).contains(&c) || (0x370..0x500).contains(&c) || (0x1E00..0x2000).contains(&c)
}

/// Whether MySQL's general_ci tables fold `c` to its upper case `u`.
fn has_case_pair(c: u32, u: u32) -> bool {
    let both = |lo: u32, hi: u32| (lo..hi).contains(&c) && (lo..hi).contains(&u);
    both(0, 0x250)
        || both(0x370, 0x530)
        || both(0x1E00, 0x2000)
        || (0x531..0x590).contains(&u)
        || (0x2170..0x2180).contains(&c)
        || (0x24D0..0x24EA).contains(&c)
        || (0xFF41..=0xFF5A).contains(&c)
}

/// (character, weight) pairs of general_ci that the rules of [`weight`] do not give,
/// sorted by character.
const WEIGHT_EXCEPTIONS: &[(u16, u16)] = &[
    // Found by comparing every BMP character's weight with MariaDB's WEIGHT_STRING
    // under utf8mb4_general_ci: MICRO SIGN as GREEK MU, SHARP S as S, Greek tonos
    // forms and Latin letters whose case pair is newer than the tables, and so on.
    (0x00B5, 0x039C),
    (0x00DF, 0x0053),
    (0x0180, 0x0180),
    (0x019A, 0x019A),
    (0x019E, 0x019E),
    (0x01EF, 0x01B7),
    (0x023C, 0x023C),
    (0x0242, 0x0242),
    (0x0247, 0x0247),
    (0x0249, 0x0249),
    (0x024B, 0x024B),
    (0x024D, 0x024D),
    (0x024F, 0x024F),
    (0x0253, 0x0181),
    (0x0254, 0x0186),
    (0x0256, 0x0189),
    (0x0257, 0x018A),
    (0x0259, 0x018F),
    (0x025B, 0x0190),
    (0x0260, 0x0193),
    (0x0263, 0x0194),
    (0x0268, 0x0197),
    (0x0269, 0x0196),
    (0x026F, 0x019C),
    (0x0272, 0x019D),
    (0x0275, 0x019F),
    (0x0280, 0x01A6),
    (0x0283, 0x01A9),
    (0x0288, 0x01AE),
    (0x028A, 0x01B1),
    (0x028B, 0x01B2),
    (0x0292, 0x01B7),
    (0x0345, 0x0399),
    (0x0371, 0x0371),
    (0x0373, 0x0373),
    (0x0374, 0x0374),
    (0x0377, 0x0377),
    (0x037B, 0x037B),
    (0x037C, 0x037C),
    (0x037D, 0x037D),
    (0x037E, 0x037E),
    (0x0385, 0x0385),
    (0x0387, 0x0387),
    (0x03D7, 0x03D7),
    (0x03D9, 0x03D9),
    (0x03F2, 0x03A3),
    (0x03F3, 0x03F3),
    (0x03F5, 0x03F5),
    (0x03F8, 0x03F8),
    (0x03FB, 0x03FB),
    (0x0419, 0x0419),
    (0x0439, 0x0419),
    (0x048B, 0x048B),
    (0x04C6, 0x04C6),
    (0x04CA, 0x04CA),
    (0x04CE, 0x04CE),
    (0x04CF, 0x04CF),
    (0x04F7, 0x04F7),
    (0x04FB, 0x04FB),
    (0x04FD, 0x04FD),
    (0x04FF, 0x04FF),
    (0x0501, 0x0501),
    (0x0503, 0x0503),
    (0x0505, 0x0505),
    (0x0507, 0x0507),
    (0x0509, 0x0509),
    (0x050B, 0x050B),
    (0x050D, 0x050D),
    (0x050F, 0x050F),
    (0x0511, 0x0511),
    (0x0513, 0x0513),
    (0x0515, 0x0515),
    (0x0517, 0x0517),
    (0x0519, 0x0519),
    (0x051B, 0x051B),
    (0x051D, 0x051D),
    (0x051F, 0x051F),
    (0x0521, 0x0521),
    (0x0523, 0x0523),
    (0x0525, 0x0525),
    (0x0527, 0x0527),
    (0x0529, 0x0529),
    (0x052B, 0x052B),
    (0x052D, 0x052D),
    (0x052F, 0x052F),
    (0x1EFB, 0x1EFB),
    (0x1EFD, 0x1EFD),
    (0x1EFF, 0x1EFF),
    (0x1F71, 0x1FBB),
    (0x1F73, 0x1FC9),
    (0x1F75, 0x1FCB),
    (0x1F77, 0x1FDB),
    (0x1F79, 0x1FF9),
    (0x1F7B, 0x1FEB),
    (0x1F7D, 0x1FFB),
    (0x1FBB, 0x1FBB),
    (0x1FC1, 0x1FC1),
    (0x1FC9, 0x1FC9),
    (0x1FCB, 0x1FCB),
    (0x1FCD, 0x1FCD),
    (0x1FCE, 0x1FCE),
    (0x1FCF, 0x1FCF),
    (0x1FD3, 0x1FD3),
    (0x1FDB, 0x1FDB),
    (0x1FDD, 0x1FDD),
    (0x1FDE, 0x1FDE),
    (0x1FDF, 0x1FDF),
    (0x1FE3, 0x1FE3),
    (0x1FEB, 0x1FEB),
    (0x1FED, 0x1FED),
    (0x1FEE, 0x1FEE),
    (0x1FEF, 0x1FEF),
    (0x1FF9, 0x1FF9),
    (0x1FFB, 0x1FFB),
    (0x1FFD, 0x1FFD),
];

/// PAD SPACE, past the common prefix `a[..n] == b[..n]` (equal under the collation): the
/// shorter string compares as if padded with spaces, so the longer one's first character
/// that is not a space decides — a character weighing less than a space (a tab, a
/// newline) makes the longer string the smaller, as in MySQL (`'a\t' < 'a'`).
fn pad_space_tail(a: &[u8], b: &[u8], n: usize, weigh: impl Fn(char) -> u32) -> Ordering {
    let (rest, longer) = if a.len() > n {
        (&a[n..], Ordering::Greater)
    } else if b.len() > n {
        (&b[n..], Ordering::Less)
    } else {
        return Ordering::Equal;
    };
    let Some(first) = rest.iter().position(|&c| c != b' ') else {
        return Ordering::Equal;
    };
    let c = String::from_utf8_lossy(&rest[first..])
        .chars()
        .next()
        .unwrap_or(' ');
    match weigh(c).cmp(&(' ' as u32)) {
        Ordering::Less => longer.reverse(),
        Ordering::Equal => Ordering::Equal,
        Ordering::Greater => longer,
    }
}

/// general_ci character by character (weights), from a character boundary of both.
fn general_ci_from(a: &[u8], b: &[u8]) -> Ordering {
    let (a, b) = (String::from_utf8_lossy(a), String::from_utf8_lossy(b));
    let (mut ca, mut cb) = (a.chars(), b.chars());
    loop {
        match (ca.next(), cb.next()) {
            (Some(x), Some(y)) => match weight(x).cmp(&weight(y)) {
                Ordering::Equal => {}
                decided => return decided,
            },
            (None, None) => return Ordering::Equal,
            // The longer one's rest against spaces (PAD SPACE).
            (Some(x), None) => return pad_rest(x, ca, Ordering::Greater),
            (None, Some(y)) => return pad_rest(y, cb, Ordering::Less),
        }
    }
}

/// [`pad_space_tail`] for a rest of characters starting with `first`.
fn pad_rest(first: char, rest: std::str::Chars<'_>, longer: Ordering) -> Ordering {
    match std::iter::once(first).chain(rest).find(|&c| c != ' ') {
        None => Ordering::Equal,
        Some(c) if (weight(c) as u32) < ' ' as u32 => longer.reverse(),
        Some(_) => longer,
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

    /// Every collation's own id reads back as it; other `_bin` ids compare as
    /// utf8mb4_bin, everything else case-insensitively.
    #[test]
    fn ids_read_back() {
        for c in [Collation::GeneralCi, Collation::Utf8Bin, Collation::Binary] {
            assert_eq!(Collation::from_id(c.id()), c);
        }
        assert_eq!(Collation::from_id(83), Collation::Utf8Bin);
        assert_eq!(Collation::from_id(255), Collation::GeneralCi);
        assert_eq!(Collation::from_id(33), Collation::GeneralCi);
    }

    #[test]
    fn eq_no_pad_counts_trailing_spaces() {
        for c in [Collation::GeneralCi, Collation::Utf8Bin, Collation::Binary] {
            assert!(!c.eq_no_pad(b"a ", b"a"), "{c:?}");
            assert!(c.eq_no_pad(b"a  ", b"a  "), "{c:?}");
        }
        assert!(Collation::GeneralCi.eq_no_pad(b"Ab ", b"aB "));
        assert!(!Collation::Utf8Bin.eq_no_pad(b"Ab", b"aB"));
        assert!(!Collation::GeneralCi.eq_no_pad(b"a\t", b"a"));
    }

    /// PAD SPACE by its definition: the shorter string padded with spaces to the
    /// longer's length, then the weights compared in order.
    fn padded_reference(c: Collation, a: &str, b: &str) -> Ordering {
        let w = |s: &str| -> Vec<u32> {
            s.chars()
                .map(|ch| match c {
                    Collation::GeneralCi => weight(ch) as u32,
                    _ => ch as u32,
                })
                .collect()
        };
        let (mut x, mut y) = (w(a), w(b));
        let n = x.len().max(y.len());
        x.resize(n, ' ' as u32);
        y.resize(n, ' ' as u32);
        x.cmp(&y)
    }

    #[test]
    fn pad_space_puts_a_control_character_tail_before_the_shorter_string() {
        for c in [Collation::GeneralCi, Collation::Utf8Bin] {
            assert_eq!(c.compare(b"a\t", b"a"), Ordering::Less, "{c:?}");
            assert_eq!(c.compare(b"a", b"a\n"), Ordering::Greater, "{c:?}");
            assert_eq!(c.compare(b"a  \x01", b"a"), Ordering::Less, "{c:?}");
            assert_eq!(c.compare(b"a  b", b"a"), Ordering::Greater, "{c:?}");
            assert_eq!(c.compare(b"a   ", b"a"), Ordering::Equal, "{c:?}");
            assert_eq!(c.compare("a\té".as_bytes(), b"a"), Ordering::Less, "{c:?}");
            assert_eq!(
                c.compare("aé".as_bytes(), b"a "),
                Ordering::Greater,
                "{c:?}"
            );
        }
        // NO PAD: raw bytes.
        assert_eq!(Collation::Binary.compare(b"a\t", b"a"), Ordering::Greater);
        assert_eq!(Collation::Binary.compare(b"a ", b"a"), Ordering::Greater);
    }

    #[test]
    fn compare_agrees_with_padding_on_every_short_string() {
        // Every string of up to three characters over an alphabet with spaces, control
        // characters, case pairs and accented letters, against every other.
        let alphabet = ["a", "A", " ", "\t", "\u{1}", "b", "é", "E", "ß", "~"];
        let mut strings = vec![String::new()];
        for _ in 0..3 {
            let longer: Vec<String> = strings
                .iter()
                .flat_map(|s| alphabet.iter().map(move |c| format!("{s}{c}")))
                .collect();
            strings.extend(longer);
        }
        strings.sort();
        strings.dedup();
        for c in [Collation::GeneralCi, Collation::Utf8Bin] {
            for a in &strings {
                for b in &strings {
                    assert_eq!(
                        c.compare(a.as_bytes(), b.as_bytes()),
                        padded_reference(c, a, b),
                        "{c:?} {a:?} {b:?}"
                    );
                }
            }
        }
    }

    #[test]
    fn general_ci_ignores_case_and_trailing_space() {
        let c = Collation::GeneralCi;
        assert_eq!(c.compare(b"Abc ", b"aBC"), Ordering::Equal);
        assert_eq!(c.compare(b"abc", b"abd"), Ordering::Less);
        assert_eq!(c.compare("é".as_bytes(), "É".as_bytes()), Ordering::Equal);
        // Accents weigh as their base letter, as MySQL's general_ci tables say.
        for (a, b) in [
            ("é", "e"),
            ("ß", "s"),
            ("Å", "a"),
            ("ñ", "N"),
            ("ά", "α"),
            ("ё", "е"),
        ] {
            assert_eq!(
                c.compare(a.as_bytes(), b.as_bytes()),
                Ordering::Equal,
                "{a} {b}"
            );
        }
        for (a, b) in [("œ", "oe"), ("Ø", "o"), ("ß", "ss"), ("й", "и"), ("æ", "a")] {
            assert_ne!(
                c.compare(a.as_bytes(), b.as_bytes()),
                Ordering::Equal,
                "{a} {b}"
            );
        }
        assert_eq!(weight('µ'), 'Μ');
        assert_eq!(c.sql_weight_string(b"aB "), [0, 0x41, 0, 0x42, 0, 0x20]);
        assert_eq!(
            Collation::Utf8Bin.sql_weight_string(b"ab"),
            [0, 0, 0x61, 0, 0, 0x62]
        );
        assert_eq!(weight('\u{1F600}'), '\u{FFFD}');
        let (mut a, mut b) = (vec![], vec![]);
        c.weight_string(b"Hello  ", &mut a);
        c.weight_string(b"hELLO", &mut b);
        assert_eq!(a, b);
        assert_eq!(Collation::Binary.compare(b"a", b"A"), Ordering::Greater);
    }
}
