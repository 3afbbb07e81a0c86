//! `LIKE` matching: `%` any run of characters, `_` one character, the escape character
//! making the next one literal; case folded under the general (case-insensitive)
//! collation, exact otherwise.
//!
//! The pattern is read into tokens once per call and matched greedily, going back only to
//! the last `%` on a mismatch (the classic wildcard matcher): O(text × pattern) at worst,
//! about O(text) for patterns like TPC-H's `'%special%requests%'`, where trying every
//! split at every `%` recursively was O(textᵏ) for k `%`s and allocated a vector of
//! `char`s for the text and the pattern per row. ASCII text and patterns (the common
//! case) are matched as bytes without copying; anything else as Unicode characters,
//! upper-cased one by one under the general collation as before.

use strata_types::Collation;

#[derive(Clone, Copy, PartialEq, Debug)]
enum Tok<T> {
    Any,
    One,
    Lit(T),
}

/// The pattern's tokens: `%`, `_`, an escaped character (the escape as the last
/// character is itself), any other character.
fn tokens<T: Copy + PartialEq>(p: &[T], percent: T, underscore: T, escape: T) -> Vec<Tok<T>> {
    let mut out = Vec::with_capacity(p.len());
    let mut i = 0;
    while i < p.len() {
        let c = p[i];
        if c == percent {
            out.push(Tok::Any);
        } else if c == underscore {
            out.push(Tok::One);
        } else if c == escape && i + 1 < p.len() {
            i += 1;
            out.push(Tok::Lit(p[i]));
        } else {
            out.push(Tok::Lit(c));
        }
        i += 1;
    }
    out
}

/// Greedy wildcard match of `t` against `p`, characters compared by `eq`.
fn matches<T: Copy>(t: &[T], p: &[Tok<T>], eq: impl Fn(T, T) -> bool) -> bool {
    let (mut ti, mut pi) = (0, 0);
    // After the last `%` seen: the pattern position after it and the text position its
    // run currently ends at.
    let mut back: Option<(usize, usize)> = None;
    while ti < t.len() {
        match p.get(pi) {
            Some(Tok::Any) => {
                back = Some((pi + 1, ti));
                pi += 1;
                continue;
            }
            Some(Tok::One) => {
                ti += 1;
                pi += 1;
                continue;
            }
            Some(Tok::Lit(c)) if eq(t[ti], *c) => {
                ti += 1;
                pi += 1;
                continue;
            }
            _ => {}
        }
        // Mismatch: let the last `%` take one more character, or fail.
        match back {
            Some((after, end)) => {
                pi = after;
                ti = end + 1;
                back = Some((after, end + 1));
            }
            None => return false,
        }
    }
    p[pi..].iter().all(|t| matches!(t, Tok::Any))
}

/// Whether `text` matches the LIKE `pattern` with `escape` under `coll`.
pub fn like(text: &[u8], pattern: &[u8], escape: u8, coll: Collation) -> bool {
    let ci = coll == Collation::GeneralCi;
    // A binary string matches byte by byte: `_` is one byte (`x'C3A9' LIKE '__'`).
    if coll == Collation::Binary || (text.is_ascii() && pattern.is_ascii()) {
        let p = tokens(pattern, b'%', b'_', escape);
        return if ci {
            matches(text, &p, |a: u8, b: u8| a.eq_ignore_ascii_case(&b))
        } else {
            matches(text, &p, |a: u8, b: u8| a == b)
        };
    }
    // One weight per character, as the collation compares them (`é` is `E`, `ß` is one
    // `S`, not the two letters of its upper case).
    let fold = |s: &[u8]| -> Vec<char> {
        let s = String::from_utf8_lossy(s);
        s.chars().map(|c| coll.fold_char(c)).collect()
    };
    let (t, p) = (fold(text), fold(pattern));
    let p = tokens(&p, '%', '_', escape as char);
    matches(&t, &p, |a: char, b: char| a == b)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The matcher this one replaced: every split at every `%`, recursively.
    fn reference(text: &[u8], pattern: &[u8], escape: u8, coll: Collation) -> bool {
        let fold = |s: &[u8]| -> Vec<char> {
            if coll == Collation::Binary {
                // Binary strings are bytes: one "character" per byte.
                return s.iter().map(|&b| char::from(b)).collect();
            }
            let s = String::from_utf8_lossy(s);
            s.chars().map(|c| coll.fold_char(c)).collect()
        };
        let (t, p) = (fold(text), fold(pattern));
        fn rec(t: &[char], p: &[char], esc: char) -> bool {
            if p.is_empty() {
                return t.is_empty();
            }
            match p[0] {
                '%' => (0..=t.len()).any(|i| rec(&t[i..], &p[1..], esc)),
                '_' => !t.is_empty() && rec(&t[1..], &p[1..], esc),
                c if c == esc && p.len() > 1 => {
                    !t.is_empty() && t[0] == p[1] && rec(&t[1..], &p[2..], esc)
                }
                c => !t.is_empty() && t[0] == c && rec(&t[1..], &p[1..], esc),
            }
        }
        rec(&t, &p, escape as char)
    }

    #[test]
    fn binary_matches_bytes() {
        let bin = Collation::Binary;
        assert!(like("é".as_bytes(), b"__", b'\\', bin));
        assert!(!like("é".as_bytes(), b"_", b'\\', bin));
        assert!(like("é".as_bytes(), b"_", b'\\', Collation::GeneralCi));
        assert!(like(b"\xC3\xA9z", b"\xC3%", b'\\', bin));
    }

    #[test]
    fn wildcards_escapes_and_case() {
        let ci = Collation::GeneralCi;
        let bin = Collation::Binary;
        assert!(like(b"Hello", b"h%o", b'\\', ci));
        assert!(!like(b"Hello", b"h%o", b'\\', bin));
        assert!(!like(b"Hello", b"h_o", b'\\', ci));
        assert!(like(b"a%b", b"a\\%b", b'\\', bin));
        assert!(!like(b"axb", b"a\\%b", b'\\', bin));
        assert!(like(b"", b"%", b'\\', bin));
        assert!(!like(b"", b"_", b'\\', bin));
        assert!(
            like(b"a\\", b"a\\", b'\\', bin),
            "a trailing escape is itself"
        );
        assert!(like(
            b"final special accounts haggle requests",
            b"%special%requests%",
            b'\\',
            ci
        ));
        assert!(!like(b"special requsts", b"%special%requests%", b'\\', ci));
        // general_ci weighs ß as one S (MySQL's and MariaDB's answer).
        assert!(!like("Straße".as_bytes(), b"%STRASSE", b'\\', ci));
        assert!(like("Straße".as_bytes(), b"STRASE", b'\\', ci));
        assert!(like("é".as_bytes(), b"e", b'\\', ci));
        assert!(like("über".as_bytes(), "Ü%".as_bytes(), b'\\', ci));
        // A binary string's `_` is one byte (`'x€y' LIKE BINARY 'x_y'` is 0).
        assert!(!like("x€y".as_bytes(), b"x_y", b'\\', bin));
        assert!(like("x€y".as_bytes(), b"x___y", b'\\', bin));
        assert!(like("x€y".as_bytes(), b"x_y", b'\\', ci));
    }

    #[test]
    fn agrees_with_the_recursive_matcher() {
        // Every text and pattern over a small alphabet up to a few characters, with
        // wildcards, the escape and a non-ASCII letter: the two matchers must agree.
        let alphabet: [&[u8]; 7] = [b"a", b"B", b"%", b"_", b"\\", "é".as_bytes(), b"b"];
        let mut words: Vec<Vec<u8>> = vec![vec![]];
        let mut frontier = words.clone();
        for _ in 0..4 {
            let mut next = Vec::new();
            for w in &frontier {
                for a in alphabet {
                    let mut x = w.clone();
                    x.extend_from_slice(a);
                    next.push(x);
                }
            }
            words.extend(next.iter().cloned());
            frontier = next;
        }
        let mut checked = 0;
        for t in words.iter().filter(|w| w.len() <= 5) {
            for p in &words {
                for coll in [Collation::GeneralCi, Collation::Binary] {
                    assert_eq!(
                        like(t, p, b'\\', coll),
                        reference(t, p, b'\\', coll),
                        "{:?} LIKE {:?} under {coll:?}",
                        String::from_utf8_lossy(t),
                        String::from_utf8_lossy(p)
                    );
                    checked += 1;
                }
            }
        }
        assert!(checked > 100_000, "{checked}");
    }
}
