//! DECIMAL values past 38 digits (up to MySQL's 65): their exact arithmetic in
//! [`U512`], off the `i128` fast path of [`super`].
//!
//! A wide value keeps the layout of a narrow one (see `Decimal::high`): the low 128
//! bits of its magnitude in `mantissa`, the next 96 in `high`, its sign in `wide`.
//! A value is wide exactly when its magnitude reaches 10^38 or it holds more than 38
//! fractional digits, so every value that fits stays on the narrow path.
//!
//! MySQL computes in buffers of nine 9-digit words (81 digits) and, when a result's
//! integer and fractional words do not all fit, drops fractional words. These results
//! are computed exactly and returned only when MySQL's buffer holds them exactly too
//! (counted with a spare word, as MySQL's own count may be one larger) and they fit
//! in 65 digits; otherwise None, which callers turn into error 1235. Only exact
//! operands come here (see `Decimal::exact`).

use super::{round_up_9, Decimal, DIV_INCREMENT, EXACT_WIDE, MAX_SCALE, MUL_MAX_SCALE, NARROW};
use crate::u512::U512;
use std::cmp::Ordering;

/// Digits a wide value may hold: MySQL's DECIMAL_MAX_PRECISION.
pub const WIDE_DIGITS: u32 = 65;
/// MySQL's decimal buffer: nine words of nine digits.
const BUFFER_WORDS: u32 = 9;

fn words(digits: u32) -> u32 {
    digits.div_ceil(9)
}

impl Decimal {
    /// Sign and magnitude (the value times 10^scale).
    pub(super) fn parts(&self) -> (bool, U512) {
        match self.wide {
            0 => (
                self.mantissa < 0,
                U512::from_u128(self.mantissa.unsigned_abs()),
            ),
            w => (w == 2, U512::from_parts(self.mantissa as u128, self.high)),
        }
    }

    /// An exact value from its sign and magnitude at `scale`: narrow when it fits,
    /// else wide; None past 65 digits.
    pub(super) fn from_parts(neg: bool, mag: U512, scale: u32, shown: u8) -> Option<Decimal> {
        if mag.is_zero() {
            return Some(Decimal {
                shown,
                ..Decimal::new(0, scale.min(NARROW as u32) as u8)
            });
        }
        if scale <= NARROW as u32 {
            if let Some(m) = mag.to_u128().filter(|m| *m < super::LIMIT) {
                let m = m as i128;
                return Some(Decimal {
                    shown,
                    ..Decimal::new(if neg { -m } else { m }, scale as u8)
                });
            }
        }
        let digits = mag.digits();
        if digits.saturating_sub(scale) + scale > WIDE_DIGITS {
            return None;
        }
        let (lo, high) = mag.to_parts()?;
        Some(Decimal {
            mantissa: lo as i128,
            high,
            scale: scale as u8,
            shown,
            exact: EXACT_WIDE,
            wide: if neg { 2 } else { 1 },
        })
    }

    /// Digits left of the point, of any value.
    pub(super) fn int_digits_any(&self) -> u32 {
        let (_, mag) = self.parts();
        mag.digits().saturating_sub(self.scale as u32)
    }

    /// Both magnitudes at the larger scale.
    fn aligned_wide(&self, o: &Decimal) -> Option<(bool, U512, bool, U512, u32)> {
        let s = self.scale.max(o.scale) as u32;
        let (an, a) = self.parts();
        let (bn, b) = o.parts();
        Some((
            an,
            a.checked_mul_pow10(s - self.scale as u32)?,
            bn,
            b.checked_mul_pow10(s - o.scale as u32)?,
            s,
        ))
    }

    /// The exact sum, when MySQL's buffer holds it whole.
    pub(super) fn add_exact(&self, o: &Decimal) -> Option<Decimal> {
        if !self.is_exact() || !o.is_exact() {
            return None;
        }
        let (an, a, bn, b, s) = self.aligned_wide(o)?;
        let (wa, wb) = (words(self.int_digits_any()), words(o.int_digits_any()));
        // MySQL's do_add gives a sum of like signs a carry word when the leading words
        // could carry (the longer operand's leading word, or both leading words added
        // when they are as long, reach 999999999); a difference never grows.
        let carry = if an != bn {
            0
        } else {
            let x = match wa.cmp(&wb) {
                Ordering::Greater => self.leading_word(wa),
                Ordering::Less => o.leading_word(wb),
                Ordering::Equal => self.leading_word(wa) + o.leading_word(wb),
            };
            u32::from(x >= 999_999_999)
        };
        if wa.max(wb) + carry + words(s) > BUFFER_WORDS {
            return None;
        }
        let (neg, mag) = if an == bn {
            (an, a.checked_add(b)?)
        } else if a >= b {
            (an, a.sub(b))
        } else {
            (bn, b.sub(a))
        };
        Decimal::from_parts(neg, mag, s, self.shown.max(o.shown))
    }

    /// MySQL's first buffer word of this value: the leading 9-digit group of the
    /// integer part (`int_words` of them), or the first 9 fractional digits when
    /// there is no integer part.
    fn leading_word(&self, int_words: u32) -> u64 {
        let (_, mag) = self.parts();
        let s = self.scale as u32;
        let word = if int_words > 0 {
            mag.div_pow10(s + 9 * (int_words - 1))
        } else if s >= 9 {
            mag.div_pow10(s - 9)
        } else {
            mag.checked_mul_pow10(9 - s).unwrap_or(U512::ZERO)
        };
        // Below 10^9 by construction, except for a value with no integer part whose
        // first nine fractional digits are all there is.
        word.to_u128()
            .map_or(u64::MAX, |w| w.min(u64::MAX as u128) as u64)
    }

    /// The product, its fractional digits truncated at 31, when MySQL's buffer holds
    /// the full product.
    pub(super) fn mul_exact(&self, o: &Decimal) -> Option<Decimal> {
        if !self.is_exact() || !o.is_exact() {
            return None;
        }
        let (sa, sb) = (self.scale as u32, o.scale as u32);
        let used = words(self.int_digits_any()) + words(o.int_digits_any()) + words(sa) + words(sb);
        if used > BUFFER_WORDS {
            return None;
        }
        let (an, a) = self.parts();
        let (bn, b) = o.parts();
        let full = sa + sb;
        let scale = full.min(MUL_MAX_SCALE);
        let mag = a.checked_mul(b)?.div_pow10(full - scale);
        let shown = (self.shown as u32 + o.shown as u32).min(MAX_SCALE as u32) as u8;
        Decimal::from_parts(an != bn, mag, scale, shown)
    }

    /// The quotient as MySQL's decimal division computes it (see `checked_div`),
    /// when MySQL's buffer holds all of its fractional digits.
    pub(super) fn div_exact(&self, o: &Decimal) -> Option<Decimal> {
        if !self.is_exact() || !o.is_exact() {
            return None;
        }
        let (an, a) = self.parts();
        let (bn, b) = o.parts();
        if b.is_zero() {
            return None;
        }
        let (sa, sb) = (self.scale as u32, o.scale as u32);
        let (ra, rb) = (round_up_9(sa), round_up_9(sb));
        let incr = (DIV_INCREMENT as u32).saturating_sub((ra - sa) + (rb - sb));
        let frac = round_up_9(ra + rb + incr);
        let shown = (self.shown + DIV_INCREMENT).min(MAX_SCALE);
        if a.is_zero() {
            return Decimal::from_parts(false, U512::ZERO, 0, shown);
        }
        // q = a/10^sa / (b/10^sb) * 10^frac
        let q = a.checked_mul_pow10(frac + sb - sa)?.div_rem(b).0;
        let int = q.digits().saturating_sub(frac);
        if words(int) + 1 + frac / 9 > BUFFER_WORDS {
            return None;
        }
        Decimal::from_parts(an != bn, q, frac, shown)
    }

    /// `self DIV o` truncated toward zero, when it fits in an `i128`.
    pub(super) fn div_trunc_wide(&self, o: &Decimal) -> Option<i128> {
        let (an, a, bn, b, _) = self.aligned_wide(o)?;
        let q = a.div_rem(b).0.to_u128()?;
        let q = i128::try_from(q).ok()?;
        Some(if an != bn { -q } else { q })
    }

    /// `self MOD o`: the dividend's sign, at the larger scale.
    pub(super) fn rem_wide(&self, o: &Decimal) -> Option<Decimal> {
        let (an, a, _, b, s) = self.aligned_wide(o)?;
        let r = a.div_rem(b).1;
        Decimal::from_parts(an, r, s, self.shown.max(o.shown))
    }

    /// `self` rounded half away from zero (or truncated) to `to` fractional digits,
    /// held at `keep` ≥ `to` digits (a negative ROUND position leaves zeros); the
    /// largest magnitude 65 digits allow when it would need more (callers' range
    /// checks then fail it, as for any value past the type).
    pub(super) fn round_wide(&self, to: i64, keep: u8, truncate: bool, shown: u8) -> Decimal {
        let (neg, mag) = self.parts();
        let from = self.scale as i64;
        let mut m = mag;
        if to < from {
            let drop = (from - to) as u32;
            match U512::pow10(drop) {
                Some(p) if drop <= 154 => {
                    let (q, r) = m.div_rem(p);
                    let up = !truncate && r.checked_add(r).is_some_and(|twice| twice >= p);
                    m = if up {
                        q.checked_add(U512::from_u128(1)).unwrap_or(q)
                    } else {
                        q
                    };
                }
                _ => m = U512::ZERO,
            }
            m = m
                .checked_mul_pow10((keep as i64 - to) as u32)
                .unwrap_or(U512::ZERO);
        } else {
            match m.checked_mul_pow10((keep as i64 - from).max(0) as u32) {
                Some(v) => m = v,
                None => return Decimal::saturated(neg, keep, shown),
            }
        }
        Decimal::from_parts(neg, m, keep as u32, shown)
            .unwrap_or_else(|| Decimal::saturated(neg, keep, shown))
    }

    /// The largest magnitude 65 digits hold at `scale`, with a sign.
    fn saturated(neg: bool, scale: u8, shown: u8) -> Decimal {
        let scale = (scale as u32).min(WIDE_DIGITS);
        let max = U512::pow10(WIDE_DIGITS)
            .unwrap_or(U512::ZERO)
            .sub(U512::from_u128(1));
        Decimal::from_parts(neg, max, scale, shown).unwrap_or(Decimal::new(0, 0))
    }

    /// Compares two values either of which is wide.
    pub(super) fn cmp_wide(&self, o: &Decimal) -> Ordering {
        let (an, a) = self.parts();
        let (bn, b) = o.parts();
        let (az, bz) = (a.is_zero(), b.is_zero());
        if az && bz {
            return Ordering::Equal;
        }
        let (an, bn) = (an && !az, bn && !bz);
        if an != bn {
            return if an {
                Ordering::Less
            } else {
                Ordering::Greater
            };
        }
        let s = self.scale.max(o.scale) as u32;
        // Magnitudes at most 65 digits scaled by at most 65 more: within 512 bits.
        let up = |m: U512, from: u8| m.checked_mul_pow10(s - from as u32).unwrap_or(m);
        let ord = up(a, self.scale).cmp(&up(b, o.scale));
        if an {
            ord.reverse()
        } else {
            ord
        }
    }

    /// Every digit held of a wide value, without rounding to the shown scale.
    pub(super) fn digits_text_wide(&self) -> String {
        let (neg, mag) = self.parts();
        let digits = mag.to_dec_string();
        let scale = self.scale as usize;
        let sign = if neg && !mag.is_zero() { "-" } else { "" };
        if scale == 0 {
            return format!("{sign}{digits}");
        }
        let padded = if digits.len() <= scale {
            format!("{}{}", "0".repeat(scale + 1 - digits.len()), digits)
        } else {
            digits
        };
        let (i, fr) = padded.split_at(padded.len() - scale);
        format!("{sign}{i}.{fr}")
    }

    /// A value from its digits (`int` then `frac`, ASCII), exact; None past 65 digits.
    pub(super) fn from_digit_text(neg: bool, int: &[u8], frac: &[u8]) -> Option<Decimal> {
        let all: Vec<u8> = int.iter().chain(frac).copied().collect();
        let first = all.iter().position(|b| *b != b'0').unwrap_or(all.len());
        if all.len() - first > WIDE_DIGITS as usize + frac.len() {
            return None;
        }
        let mag = U512::from_digits(&all[first..])?;
        Decimal::from_parts(neg, mag, frac.len() as u32, frac.len().min(255) as u8)
            .map(|d| d.with_shown(d.scale))
    }

    /// Magnitude `digits` times 10^shift (`shift` may be negative: rounded half away
    /// from zero there), at `scale`; None past 65 digits.
    pub(super) fn from_shifted_digits(
        neg: bool,
        digits: &[u8],
        shift: i64,
        scale: u8,
    ) -> Option<Decimal> {
        let mag = if shift >= 0 {
            if digits.len() as i64 + shift > WIDE_DIGITS as i64 + scale as i64 {
                return None;
            }
            U512::from_digits(digits)?.checked_mul_pow10(shift as u32)?
        } else {
            let drop = shift.unsigned_abs() as usize;
            if drop > digits.len() {
                U512::ZERO
            } else {
                let (kept, gone) = digits.split_at(digits.len() - drop);
                if kept.len() > WIDE_DIGITS as usize + 1 {
                    return None;
                }
                let m = U512::from_digits(kept)?;
                if gone[0] >= b'5' {
                    m.checked_add(U512::from_u128(1))?
                } else {
                    m
                }
            }
        };
        Decimal::from_parts(neg, mag, scale as u32, scale)
    }

    /// The mantissa (the value times 10^scale, at the scale held: callers rescale to
    /// the column's first) as a 256-bit two's-complement integer, 32 bytes
    /// little-endian: a DECIMAL(39..65) column's row form (docs/format/btree.md,
    /// heap.md). None when it does not fit (never for a value of 65 digits).
    pub fn to_i256_le(&self) -> Option<[u8; 32]> {
        let (neg, mag) = self.parts();
        let mut l = mag.to_limbs4()?;
        if l[3] >> 63 != 0 {
            return None;
        }
        if neg {
            l = negate4(l);
        }
        let mut out = [0u8; 32];
        for (i, limb) in l.iter().enumerate() {
            out[i * 8..i * 8 + 8].copy_from_slice(&limb.to_le_bytes());
        }
        Some(out)
    }

    /// The value [`Decimal::to_i256_le`] wrote, at `scale`. None past 65 digits
    /// (bytes no valid row holds).
    pub fn from_i256_le(bytes: &[u8; 32], scale: u8) -> Option<Decimal> {
        let mut l = [0u64; 4];
        for (i, limb) in l.iter_mut().enumerate() {
            *limb = u64::from_le_bytes(bytes[i * 8..i * 8 + 8].try_into().ok()?);
        }
        let neg = l[3] >> 63 != 0;
        if neg {
            l = negate4(l);
        }
        Decimal::from_parts(neg, U512::from_limbs4(l), scale as u32, scale)
    }

    /// The key form of a DECIMAL(39..65) column's value (at the column's scale): the
    /// 256-bit two's-complement mantissa with its sign bit flipped, big-endian, so
    /// byte order is numeric order (docs/format/keys.md).
    pub fn key_bytes_wide(&self) -> Option<[u8; 32]> {
        let le = self.to_i256_le()?;
        let mut out = [0u8; 32];
        for (i, b) in le.iter().rev().enumerate() {
            out[i] = *b;
        }
        out[0] ^= 0x80;
        Some(out)
    }

    /// The value of a double past 38 digits, from its shortest round-trip digits.
    pub(super) fn from_f64_wide(v: f64, scale: u8) -> Option<Decimal> {
        if !v.is_finite() {
            return None;
        }
        let text = format!("{v:e}");
        let (mant, exp) = text.split_once('e')?;
        let exp: i64 = exp.parse().ok()?;
        let neg = mant.starts_with('-');
        let digits: Vec<u8> = mant.bytes().filter(|c| c.is_ascii_digit()).collect();
        let shift = exp - (digits.len() as i64 - 1) + scale as i64;
        Decimal::from_shifted_digits(neg, &digits, shift, scale)
    }
}

/// Two's-complement negation of a 256-bit integer.
fn negate4(l: [u64; 4]) -> [u64; 4] {
    let mut out = [0u64; 4];
    let mut carry = 1u64;
    for i in 0..4 {
        let (v, c) = (!l[i]).overflowing_add(carry);
        out[i] = v;
        carry = c as u64;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn d(s: &str) -> Decimal {
        Decimal::parse(s).unwrap()
    }

    /// A small deterministic generator (xorshift), so failures reproduce.
    fn next(state: &mut u64) -> u64 {
        *state ^= *state << 13;
        *state ^= *state >> 7;
        *state ^= *state << 17;
        *state
    }

    /// A random value of up to 65 digits at scale 10, either sign.
    fn random_value(state: &mut u64) -> Decimal {
        let len = 1 + (next(state) % 65) as usize;
        let digits: String = (0..len)
            .map(|_| char::from(b'0' + (next(state) % 10) as u8))
            .collect();
        let sign = if next(state).is_multiple_of(2) {
            "-"
        } else {
            ""
        };
        let text = if len > 10 {
            format!("{sign}{}.{}", &digits[..len - 10], &digits[len - 10..])
        } else {
            format!("{sign}0.{}{digits}", "0".repeat(10 - len))
        };
        d(&text).rescale(10)
    }

    #[test]
    fn key_bytes_order_as_the_numbers_and_rows_read_back() {
        let mut state = 0x9e37_79b9_7f4a_7c15;
        let values: Vec<Decimal> = (0..2000).map(|_| random_value(&mut state)).collect();
        for w in values.windows(2) {
            let (a, b) = (w[0], w[1]);
            let (ka, kb) = (a.key_bytes_wide().unwrap(), b.key_bytes_wide().unwrap());
            assert_eq!(ka.cmp(&kb), a.cmp(&b), "{a} vs {b}");
            let row = a.to_i256_le().unwrap();
            let back = Decimal::from_i256_le(&row, 10).unwrap();
            assert_eq!(back.held_text(), a.held_text());
        }
        // The extremes of DECIMAL(65,0) and zero.
        let max = Decimal::type_max(65, 0, false);
        let min = Decimal::type_max(65, 0, true);
        let zero = Decimal::new(0, 0);
        assert!(min.key_bytes_wide() < zero.key_bytes_wide());
        assert!(zero.key_bytes_wide() < max.key_bytes_wide());
        assert!(d("-1").key_bytes_wide() < zero.key_bytes_wide());
        let row = min.to_i256_le().unwrap();
        assert_eq!(Decimal::from_i256_le(&row, 0).unwrap(), min);
    }

    #[test]
    fn arithmetic_at_65_digits() {
        let nines = d(&"9".repeat(65));
        assert_eq!(nines.to_string(), "9".repeat(65));
        // Past 65 digits: refused (None), never clamped.
        assert!(nines.checked_add(&d("1")).is_none());
        assert!(nines.checked_mul(&d("2")).is_none());
        assert_eq!((-nines).checked_add(&nines).unwrap().to_string(), "0");
        // Sums of 38-digit values past 38 digits are exact.
        let a = d(&"9".repeat(38));
        let s = a.checked_add(&a).unwrap().checked_add(&a).unwrap();
        assert_eq!(s.to_string(), format!("2{}7", "9".repeat(37)));
        assert!(s.is_wide());
        // Back under 38 digits: narrow again.
        let back = s.checked_sub(&a).unwrap().checked_sub(&a).unwrap();
        assert!(!back.is_wide());
        assert_eq!(back, a);
        // Rounding half away from zero, both signs, and truncation.
        let x = d("123456789012345678901234567890123456789012.345");
        assert_eq!(
            x.rescale(2).to_string(),
            "123456789012345678901234567890123456789012.35"
        );
        assert_eq!(
            (-x).rescale(2).to_string(),
            "-123456789012345678901234567890123456789012.35"
        );
        assert_eq!(
            x.round_to(-3, true).to_string(),
            "123456789012345678901234567890123456789000"
        );
        assert_eq!(
            x.round_to(0, false).to_string(),
            "123456789012345678901234567890123456789012"
        );
        // Division as MySQL: the increment of 4 shown, 9 held.
        let q = x.checked_div(&d("7")).unwrap();
        assert_eq!(
            q.held_text(),
            "17636684144620811271604938270017636684144.620714285"
        );
        assert_eq!(
            q.to_string(),
            "17636684144620811271604938270017636684144.6207143"
        );
        // A wide divisor.
        let q = d("1").checked_div(&x).unwrap();
        assert_eq!(q.to_string(), "0.0000");
        // Products of 40-digit factors: 80 digits, past 65: refused.
        let f = d(&format!("1{}", "0".repeat(39)));
        assert!(f.checked_mul(&f).is_none());
        // Parse and format round trip, and comparisons across scales.
        let y = d("-0.00000000000000000000000000000000000001");
        assert!(y < Decimal::new(0, 0));
        assert_eq!(
            Decimal::parse_held(&x.held_text()).unwrap().held_text(),
            x.held_text()
        );
        assert!(x > d(&"9".repeat(38)));
        assert!(-x < -d(&"9".repeat(38)));
        assert_eq!(x.int_digits(), 42);
        // Text with an exponent, rounded at a scale.
        match Decimal::parse_rounded("1.5e60", 0) {
            Some(super::super::Rounded::Value(v)) => {
                assert_eq!(v.to_string(), format!("15{}", "0".repeat(59)))
            }
            other => panic!("{other:?}"),
        }
    }
}
