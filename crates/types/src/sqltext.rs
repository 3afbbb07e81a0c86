//! SQL text as it arrives: bytes, usually UTF-8, but a string literal may hold any bytes
//! (mysqldump writes BLOB values raw inside quotes). The parser works on `str`, so bytes
//! that are not valid UTF-8 are carried through it as code points of a private-use range
//! (U+10FF00 + byte) and turned back into those bytes when a literal becomes a value.
//! Nothing is lost, and valid UTF-8 text passes through untouched.

use std::borrow::Cow;

/// The first code point of the range that carries raw bytes.
const RAW_BASE: u32 = 0x10FF00;

/// The statement text for the parser; invalid UTF-8 bytes become private code points.
pub fn decode(bytes: &[u8]) -> Cow<'_, str> {
    match std::str::from_utf8(bytes) {
        Ok(s) => Cow::Borrowed(s),
        Err(_) => {
            let mut out = String::with_capacity(bytes.len() + 16);
            let mut rest = bytes;
            while !rest.is_empty() {
                match std::str::from_utf8(rest) {
                    Ok(s) => {
                        out.push_str(s);
                        break;
                    }
                    Err(e) => {
                        let (good, bad) = rest.split_at(e.valid_up_to());
                        // `good` was just validated.
                        out.push_str(std::str::from_utf8(good).unwrap_or_default());
                        let n = e.error_len().unwrap_or(bad.len()).max(1);
                        for &b in &bad[..n] {
                            out.push(char::from_u32(RAW_BASE + b as u32).unwrap_or('\u{FFFD}'));
                        }
                        rest = &bad[n..];
                    }
                }
            }
            Cow::Owned(out)
        }
    }
}

/// A literal's bytes: the UTF-8 of `text` with every carried raw byte put back.
pub fn literal_bytes(text: &[u8]) -> Vec<u8> {
    // U+10FF00..=U+10FFFF is F4 8F (BC..=BF) (80..=BF) in UTF-8.
    if !text.windows(2).any(|w| w == [0xF4, 0x8F]) {
        return text.to_vec();
    }
    let mut out = Vec::with_capacity(text.len());
    let mut i = 0;
    while i < text.len() {
        if i + 3 < text.len()
            && text[i] == 0xF4
            && text[i + 1] == 0x8F
            && (0xBC..=0xBF).contains(&text[i + 2])
            && (0x80..=0xBF).contains(&text[i + 3])
        {
            out.push(((text[i + 2] - 0xBC) << 6) | (text[i + 3] & 0x3F));
            i += 4;
        } else {
            out.push(text[i]);
            i += 1;
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn valid_text_is_borrowed_unchanged() {
        assert!(matches!(decode("SELECT 'ü'".as_bytes()), Cow::Borrowed(_)));
        assert_eq!(literal_bytes("ü".as_bytes()), "ü".as_bytes());
    }

    #[test]
    fn every_byte_round_trips_through_the_parser_text() {
        let mut raw = b"INSERT INTO t VALUES ('".to_vec();
        let payload: Vec<u8> = (0..=255u8).chain([0xC3, 0xBC, 0xFF, 0xC3]).collect();
        raw.extend_from_slice(&payload);
        raw.extend_from_slice(b"')");
        let text = decode(&raw);
        let start = text.find('\'').unwrap_or(0) + 1;
        let end = text.rfind('\'').unwrap_or(text.len());
        assert_eq!(literal_bytes(text[start..end].as_bytes()), payload);
    }
}
