//! DECIMAL values and their arithmetic, digit for digit as MySQL computes them.
//!
//! A DECIMAL expression in MySQL has a *declared* scale, fixed when the statement is
//! resolved and sent as the result column's `decimals`; its values may hold more
//! fractional digits than that. A quotient is computed to whole 9-digit groups beyond
//! the operands' digits (`59/14` holds 4.214285714, declared scale 4) and a product
//! keeps the digits of both factors (up to 31). Later arithmetic and comparisons use
//! every digit held (`59/14*14` is 58.999999996); only turning the value into text, for
//! a result row, CONCAT or CAST AS CHAR, rounds it to the declared scale (59.0000).
//!
//! So a [`Decimal`] carries both: `scale`, the fractional digits its mantissa holds, and
//! `shown`, the declared scale. Each operation derives `shown` from its operands'
//! `shown` by the same rules the binder uses for the static type (`bind::arith_type`),
//! so a value prints itself at its expression's declared scale wherever it becomes text,
//! and no layer has to carry the static type to the place of that conversion. Storing
//! into a DECIMAL(p,s) column or CAST AS DECIMAL rounds the full value ([`Decimal::rescale`]).
//!
//! Capacity: 65 significant digits, as MySQL 8. Values within 38 digits (nearly all)
//! keep an `i128` mantissa and its fast arithmetic; a value past that is *wide*
//! ([`wide`]): the same 32 bytes hold its 224-bit magnitude, and its arithmetic is
//! exact in 512 bits on a slow path. An exact result that MySQL's 81-digit buffers
//! hold whole comes out wide when it needs more than 38 digits. Otherwise (an operand
//! that may be off, or a result MySQL itself truncates) the narrow rules apply: low
//! fractional digits past 38 are dropped (truncated) and tracked (see `exact`), and a
//! result whose shown digits would depend on them is None (refused).

mod wide;

use crate::u256::{POW10, U256};
use std::cmp::Ordering;
use std::fmt;

#[derive(Clone, Copy, Debug, serde::Serialize, serde::Deserialize)]
#[serde(from = "Stored", into = "Stored")]
pub struct Decimal {
    /// The value times 10^scale; for a wide value, the low 128 bits of its magnitude.
    /// Private: outside this module a value is read through [`Decimal::mantissa`] or
    /// its text, so no caller takes the low bits of a wide value for the value.
    mantissa: i128,
    /// A wide value's magnitude bits 128..224; zero for a narrow one. (96 bits fill
    /// the padding an `i128` leaves, so a value stays 32 bytes.)
    high: [u32; 3],
    /// 0: narrow (`mantissa` is the value); 1: wide, positive; 2: wide, negative.
    wide: u8,
    /// Fractional digits held.
    pub scale: u8,
    /// Fractional digits shown when the value becomes text: the declared scale.
    pub shown: u8,
    /// How far the held value may be from MySQL's: [`EXACT`] when it is MySQL's value
    /// digit for digit; otherwise less than 10^-exact from it, because an earlier
    /// result dropped digits past 38 that MySQL keeps (it holds up to 81). Every
    /// result checks its shown digits do not depend on that (else None: refused).
    exact: i8,
}

// A wide value fits the padding of a narrow one: no row of values grows.
const _: () = assert!(std::mem::size_of::<Decimal>() == 32);

/// [`Decimal::exact`] of a value that is MySQL's value digit for digit.
const EXACT: i8 = i8::MAX;
/// [`Decimal::exact`] of a wide value (always MySQL's digit for digit): distinct from
/// [`EXACT`] so the `i128` fast paths, which test `exact == EXACT` anyway, need no
/// second test to stay off wide values.
const EXACT_WIDE: i8 = i8::MAX - 1;
/// [`Decimal::exact`] of a rounding whose digits may not be MySQL's: never settled.
const UNSETTLED: i8 = -100;

/// Digits a value may hold, and the most a literal or CAST may declare (MySQL's 65).
pub const MAX_PRECISION: u8 = 65;
/// Digits a narrow value (an `i128` mantissa) holds.
pub const NARROW: u8 = 38;
/// The most fractional digits a DECIMAL expression declares (MySQL's DECIMAL_MAX_SCALE).
pub const MAX_SCALE: u8 = 30;
/// Fractional digits a quotient's declared scale adds to its dividend's
/// (MySQL's `div_precision_increment`, at its default).
pub const DIV_INCREMENT: u8 = 4;
/// Fractional digits a product keeps at most (MySQL's DECIMAL_NOT_SPECIFIED).
const MUL_MAX_SCALE: u32 = 31;
/// 10^38: every mantissa's magnitude stays below it.
const LIMIT: u128 = POW10[38];

/// What [`Decimal::parse_rounded`] makes of a number's text.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Rounded {
    Value(Decimal),
    /// More than 38 digits at the scale asked for (its sign kept for clamping).
    Overflow {
        negative: bool,
    },
}

/// The persisted form (catalog defaults): a stored value is at its column's scale, so
/// only the digits are kept and `shown` is restored equal to `scale`.
#[derive(serde::Serialize, serde::Deserialize)]
struct Stored {
    /// Read as any integer: a table's entry in the catalog is read through serde's
    /// buffered form (`#[serde(flatten)]`), which has no 128-bit integers.
    #[serde(deserialize_with = "any_integer")]
    mantissa: i128,
    scale: u8,
    /// A wide value's digits as text (then `mantissa` is 0); absent for narrow values,
    /// so catalogs written before wide values read unchanged.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    text: Option<String>,
}

/// An integer of any width serde_json hands over (i64, u64; i128 when read directly).
fn any_integer<'de, D: serde::Deserializer<'de>>(d: D) -> Result<i128, D::Error> {
    struct V;
    impl serde::de::Visitor<'_> for V {
        type Value = i128;
        fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
            f.write_str("an integer")
        }
        fn visit_i64<E: serde::de::Error>(self, v: i64) -> Result<i128, E> {
            Ok(v as i128)
        }
        fn visit_u64<E: serde::de::Error>(self, v: u64) -> Result<i128, E> {
            Ok(v as i128)
        }
        fn visit_i128<E: serde::de::Error>(self, v: i128) -> Result<i128, E> {
            Ok(v)
        }
        fn visit_u128<E: serde::de::Error>(self, v: u128) -> Result<i128, E> {
            i128::try_from(v).map_err(E::custom)
        }
    }
    d.deserialize_any(V)
}

impl From<Stored> for Decimal {
    fn from(s: Stored) -> Decimal {
        match s.text.as_deref().and_then(Decimal::parse_held) {
            Some(d) => d,
            None => Decimal::new(s.mantissa, s.scale),
        }
    }
}

impl From<Decimal> for Stored {
    fn from(d: Decimal) -> Stored {
        // Past i64 a number in JSON is read back as a double (or not at all through
        // serde's buffered form): such mantissas go as text, like wide values.
        if d.is_wide() || i64::try_from(d.mantissa).is_err() {
            return Stored {
                mantissa: 0,
                scale: d.scale,
                text: Some(d.digits_text()),
            };
        }
        Stored {
            mantissa: d.mantissa,
            scale: d.scale,
            text: None,
        }
    }
}

/// `n` rounded up to a whole number of MySQL's 9-digit groups.
fn round_up_9(n: u32) -> u32 {
    n.div_ceil(9) * 9
}

/// A decimal from a sign and a magnitude at `scale`, dropping low fractional digits
/// (truncating) until it fits in 38 digits with at most 38 of them fractional. None when
/// that would drop a digit the value shows: an overflow, never a wrong digit.
///
/// `exact` is how close the magnitude is to MySQL's (see [`Decimal::exact`]); dropping a
/// non-zero digit MySQL keeps lowers it to the scale kept. The result must show the
/// same digits wherever in that distance MySQL's value lies, else None (refused).
fn fit(neg: bool, mut mag: U256, mut scale: u32, shown: u8, mut exact: i8) -> Option<Decimal> {
    let drop = |mag: &mut U256, scale: &mut u32, n: u32, exact: &mut i8| {
        let kept = mag.div_pow10(n);
        if kept.checked_mul_pow10(n) != Some(*mag) {
            *exact = (*exact).min((*scale - n) as i8);
        }
        *mag = kept;
        *scale -= n;
    };
    if scale > NARROW as u32 {
        let n = scale - NARROW as u32;
        drop(&mut mag, &mut scale, n, &mut exact);
    }
    loop {
        if let Some(m) = mag.to_u128().filter(|m| *m < LIMIT) {
            let m = m as i128;
            let d = Decimal {
                exact,
                ..Decimal::new(if neg { -m } else { m }, scale as u8).with_shown(shown)
            };
            return (exact == EXACT || d.settled()).then_some(d);
        }
        if scale <= shown as u32 {
            return None;
        }
        let excess = mag
            .digits_at_least()
            .saturating_sub(38)
            .clamp(1, scale - shown as u32);
        drop(&mut mag, &mut scale, excess, &mut exact);
    }
}

/// The rounding (half away from zero) of `m` at `from` digits to `to` ≤ `from` digits.
fn round_mantissa(m: i128, from: u8, to: u8) -> i128 {
    let div = POW10[(from - to) as usize] as i128;
    let (q, r) = (m / div, m % div);
    if r.abs() * 2 >= div {
        q + m.signum()
    } else {
        q
    }
}

impl Decimal {
    /// A value at `scale`, shown at that scale (a column value, a literal).
    pub fn new(mantissa: i128, scale: u8) -> Decimal {
        Decimal {
            mantissa,
            scale,
            shown: scale,
            exact: EXACT,
            high: [0; 3],
            wide: 0,
        }
    }

    /// The value times 10^scale; for a wide value (past 38 digits) the largest or
    /// smallest `i128`, which keeps its sign and its order against any narrow value
    /// (every caller that needs a wide value's digits asks [`Decimal::is_wide`]).
    #[inline]
    pub fn mantissa(&self) -> i128 {
        match self.wide {
            0 => self.mantissa,
            1 => i128::MAX,
            _ => i128::MIN,
        }
    }

    /// Whether the value needs more than 38 digits (or 38 fractional ones).
    #[inline]
    pub fn is_wide(&self) -> bool {
        self.wide != 0
    }

    /// Whether the digits shown are MySQL's: always for a value that is MySQL's digit
    /// for digit; for one that may be off (see `exact`), when every value within that
    /// distance shows the same digits, and the shown digits are all held.
    pub fn settled(&self) -> bool {
        if self.exact >= EXACT_WIDE {
            return true;
        }
        if self.shown > self.scale || (self.exact as i32) < self.shown as i32 {
            return false;
        }
        // The distance in units of the last digit held (at least one unit).
        let units = (self.scale as i32 - self.exact as i32).max(0) as usize;
        let Some(u) = POW10.get(units).map(|u| *u as i128) else {
            return false;
        };
        let (Some(lo), Some(hi)) = (self.mantissa.checked_sub(u), self.mantissa.checked_add(u))
        else {
            return false;
        };
        let at = |m| round_mantissa(m, self.scale, self.shown);
        at(lo) == at(self.mantissa) && at(hi) == at(self.mantissa)
    }

    /// How close a result computed from `self` and `o` is, given how far each operand
    /// may be: `spread_a`/`spread_b` are the digits each operand's distance is scaled
    /// up by in the result (a factor's integer digits, …). EXACT when both are.
    fn combined(&self, o: &Decimal, spread_a: i32, spread_b: i32) -> i8 {
        let one = |d: &Decimal, spread: i32| {
            (d.exact != EXACT).then(|| (d.exact as i32 - spread).clamp(-100, 100))
        };
        match (one(self, spread_a), one(o, spread_b)) {
            (None, None) => EXACT,
            (Some(e), None) | (None, Some(e)) => e as i8,
            // Two distances add up: one digit less.
            (Some(x), Some(y)) => (x.min(y) - 1).max(-100) as i8,
        }
    }

    /// Whether this value is MySQL's digit for digit (see `exact`).
    pub fn is_exact(&self) -> bool {
        self.exact >= EXACT_WIDE
    }

    pub fn from_i64(v: i64) -> Decimal {
        Decimal::new(v as i128, 0)
    }

    pub fn from_u64(v: u64) -> Decimal {
        Decimal::new(v as i128, 0)
    }

    /// The same value, shown at `shown` fractional digits.
    pub fn with_shown(self, shown: u8) -> Decimal {
        Decimal { shown, ..self }
    }

    pub fn is_zero(&self) -> bool {
        // A wide value is never zero (zero is always narrow).
        self.wide == 0 && self.mantissa == 0
    }

    /// -1, 0 or 1.
    pub fn signum(&self) -> i32 {
        match self.wide {
            0 => self.mantissa.signum() as i32,
            1 => 1,
            _ => -1,
        }
    }

    /// Parses `-123.456` (also `1e3`-free plain forms only). None if not a number.
    pub fn parse(text: &str) -> Option<Decimal> {
        let t = text.trim();
        let (neg, digits) = match t.as_bytes().first()? {
            b'-' => (true, &t[1..]),
            b'+' => (false, &t[1..]),
            _ => (false, t),
        };
        let (int, frac) = match digits.find('.') {
            Some(i) => (&digits[..i], &digits[i + 1..]),
            None => (digits, ""),
        };
        if (int.is_empty() && frac.is_empty())
            || !int.bytes().all(|b| b.is_ascii_digit())
            || !frac.bytes().all(|b| b.is_ascii_digit())
        {
            return None;
        }
        if int.len() + frac.len() > NARROW as usize {
            // Past 38 digits: wide, with at most 38 of them fractional as before.
            if frac.len() > NARROW as usize {
                return None;
            }
            return Decimal::from_digit_text(neg, int.as_bytes(), frac.as_bytes());
        }
        let mut m: i128 = 0;
        for b in int.bytes().chain(frac.bytes()) {
            m = m * 10 + (b - b'0') as i128;
        }
        Some(Decimal::new(if neg { -m } else { m }, frac.len() as u8))
    }

    /// Text that is a number in full (`-12.5`, `1e40`, `.5E-3`, surrounding spaces
    /// allowed), rounded half away from zero to `scale` fractional digits, digit for
    /// digit however long the text is (never through a double). `Overflow` when the
    /// rounded value needs more than 65 digits at that scale: past every type, so
    /// callers clamp to the type's maximum or fail. None when the text is not
    /// a number in full (or its exponent is past any i64).
    pub fn parse_rounded(text: &str, scale: u8) -> Option<Rounded> {
        let t = text.trim();
        let (neg, rest) = match t.as_bytes().first()? {
            b'-' => (true, &t[1..]),
            b'+' => (false, &t[1..]),
            _ => (false, t),
        };
        let (mant, exp) = match rest.find(['e', 'E']) {
            Some(i) => (&rest[..i], rest[i + 1..].parse::<i64>().ok()?),
            None => (rest, 0),
        };
        let (int, frac) = match mant.find('.') {
            Some(i) => (&mant[..i], &mant[i + 1..]),
            None => (mant, ""),
        };
        if (int.is_empty() && frac.is_empty())
            || !int.bytes().all(|b| b.is_ascii_digit())
            || !frac.bytes().all(|b| b.is_ascii_digit())
        {
            return None;
        }
        // value = digits * 10^(exp - frac.len()); leading zeros carry nothing.
        let all: Vec<u8> = int.bytes().chain(frac.bytes()).collect();
        let first = all.iter().position(|b| *b != b'0').unwrap_or(all.len());
        let digits = &all[first..];
        let zero = Rounded::Value(Decimal::new(0, scale));
        if digits.is_empty() {
            return Some(zero);
        }
        let shift = exp
            .saturating_sub(frac.len() as i64)
            .saturating_add(scale as i64);
        let value = |m: u128| {
            let m = m as i128;
            Rounded::Value(Decimal::new(if neg { -m } else { m }, scale))
        };
        let number = |ds: &[u8]| ds.iter().fold(0u128, |m, b| m * 10 + (b - b'0') as u128);
        let wide = || {
            Some(
                match Decimal::from_shifted_digits(neg, digits, shift, scale) {
                    Some(d) => Rounded::Value(d),
                    None => Rounded::Overflow { negative: neg },
                },
            )
        };
        if shift >= 0 {
            if digits.len() as i64 + shift > NARROW as i64 {
                return wide();
            }
            return Some(value(number(digits) * POW10[shift as usize]));
        }
        let drop = shift.unsigned_abs();
        if drop > digits.len() as u64 {
            return Some(zero);
        }
        let (kept, gone) = digits.split_at(digits.len() - drop as usize);
        if kept.len() > NARROW as usize {
            return wide();
        }
        let m = number(kept) + u128::from(gone[0] >= b'5');
        if m >= LIMIT || scale > NARROW {
            return wide();
        }
        Some(value(m))
    }

    /// The longest leading part of `text` that is a number (after leading spaces):
    /// sign, digits, point, digits, and an exponent only when digits follow its `e`.
    /// What MySQL converts of `'12.5abc'`; empty when nothing numeric leads.
    pub fn numeric_prefix(text: &str) -> &str {
        let t = text.trim_start();
        let b = t.as_bytes();
        let mut i = 0;
        if matches!(b.first(), Some(b'-' | b'+')) {
            i += 1;
        }
        let digits_from = |mut j: usize| {
            while j < b.len() && b[j].is_ascii_digit() {
                j += 1;
            }
            j
        };
        let int_end = digits_from(i);
        let mut end = int_end;
        if b.get(end) == Some(&b'.') {
            end = digits_from(end + 1);
        }
        if end == i || (end == i + 1 && int_end == i) {
            return ""; // no digit at all ("-", ".", "-.")
        }
        if matches!(b.get(end), Some(b'e' | b'E')) {
            let mut j = end + 1;
            if matches!(b.get(j), Some(b'-' | b'+')) {
                j += 1;
            }
            let k = digits_from(j);
            if k > j {
                end = k;
            }
        }
        &t[..end]
    }

    /// The largest DECIMAL(precision, scale) value, negated when `negative`: where a
    /// value past the type's range is clamped.
    pub fn type_max(precision: u8, scale: u8, negative: bool) -> Decimal {
        if precision > NARROW || scale > NARROW {
            let nines = vec![b'9'; precision.min(MAX_PRECISION) as usize];
            let d =
                Decimal::from_shifted_digits(negative, &nines, 0, 0).unwrap_or(Decimal::new(0, 0));
            return Decimal {
                scale,
                shown: scale,
                ..d
            }
            .renormalized();
        }
        let m = (POW10[precision.min(MAX_PRECISION) as usize] - 1) as i128;
        Decimal::new(if negative { -m } else { m }, scale)
    }

    /// The same digits and scale in canonical form (narrow when they fit).
    fn renormalized(self) -> Decimal {
        let (neg, mag) = self.parts();
        Decimal::from_parts(neg, mag, self.scale as u32, self.shown).unwrap_or(self)
    }

    /// `v` rounded to `scale` digits (storing a double into a DECIMAL column).
    pub fn from_f64(v: f64, scale: u8) -> Option<Decimal> {
        let scaled = (v * 10f64.powi(scale as i32)).round();
        if !scaled.is_finite() {
            return None;
        }
        if scaled.abs() >= 1e38 || scale > NARROW {
            return Decimal::from_f64_wide(v, scale);
        }
        Some(Decimal::new(scaled as i128, scale))
    }

    /// The decimal a double stands for in decimal arithmetic: its shortest round-trip
    /// digits, as MySQL converts a double operand (`1.9e0 DIV 1` is 1, not 0.999…).
    /// None when it does not fit in 38 integer digits (or is not finite).
    pub fn from_f64_digits(v: f64) -> Option<Decimal> {
        if !v.is_finite() {
            return None;
        }
        let text = format!("{v:e}");
        let (mant, exp) = text.split_once('e')?;
        let exp: i32 = exp.parse().ok()?;
        let neg = mant.starts_with('-');
        let digits: String = mant.chars().filter(|c| c.is_ascii_digit()).collect();
        let m: u128 = digits.parse().ok()?;
        // value = m * 10^(exp - (digits - 1))
        let shift = exp - (digits.len() as i32 - 1);
        if shift >= 0 {
            let mag = U256::from_u128(m).checked_mul_pow10(shift as u32)?;
            fit(neg, mag, 0, 0, EXACT).or_else(|| Decimal::from_f64_wide(v, 0))
        } else {
            // Digits past 38 places are dropped as MySQL's conversion drops them.
            let scale = (-shift) as u32;
            let d = fit(neg, U256::from_u128(m), scale, 0, EXACT)?;
            Some(Decimal {
                exact: EXACT,
                ..d.with_shown(d.scale)
            })
        }
    }

    pub fn to_f64(&self) -> f64 {
        if self.wide == 0 && self.mantissa.unsigned_abs() < 1 << 53 && self.scale <= 22 {
            // Both exact in a double, so the one division rounds correctly.
            return self.mantissa as f64 / 10f64.powi(self.scale as i32);
        }
        self.digits_text().parse().unwrap_or(0.0)
    }

    /// Rounds half away from zero to `scale` digits (MySQL's rule for DECIMAL), shown
    /// at that scale: storing into a DECIMAL(p,s) column, CAST AS DECIMAL.
    pub fn rescale(&self, scale: u8) -> Decimal {
        if self.wide != 0 || scale > NARROW {
            return self.rescale_any(scale);
        }
        let d = match scale.cmp(&self.scale) {
            Ordering::Equal => Decimal::new(self.mantissa, scale),
            Ordering::Greater => match self
                .mantissa
                .checked_mul(POW10[(scale - self.scale) as usize] as i128)
                .filter(|m| m.unsigned_abs() < LIMIT)
            {
                Some(m) => Decimal::new(m, scale),
                None => return self.rescale_any(scale),
            },
            Ordering::Less => Decimal::new(round_mantissa(self.mantissa, self.scale, scale), scale),
        };
        self.carry_exactness(d, scale)
    }

    /// [`Decimal::rescale`] of a wide value, or to a wide one.
    #[cold]
    #[inline(never)]
    fn rescale_any(&self, scale: u8) -> Decimal {
        let d = self.round_wide(scale as i64, scale, false, scale);
        if self.is_exact() {
            d
        } else {
            // Only narrow values may be off; past 38 digits their distance is not
            // followed: whoever stores or shows this refuses it.
            Decimal {
                exact: UNSETTLED,
                ..d
            }
        }
    }

    /// `rounded` (self rounded to `at` digits) marked exact when every value within
    /// self's distance from MySQL's rounds to the same digits; else it is marked
    /// unsettled, and whoever stores or shows it refuses it ([`Decimal::is_exact`]).
    #[inline]
    fn carry_exactness(&self, rounded: Decimal, at: u8) -> Decimal {
        if self.is_exact() || self.with_shown(at).settled() {
            rounded
        } else {
            Decimal {
                exact: UNSETTLED,
                ..rounded
            }
        }
    }

    /// ROUND(x, d) (or TRUNCATE when `truncate`): to `d` fractional digits, or to tens,
    /// hundreds… when `d` is negative; half away from zero. Shown at `d` (0 when
    /// negative, at most 30) as MySQL declares it.
    pub fn round_to(&self, d: i64, truncate: bool) -> Decimal {
        let d = d.min(MAX_SCALE as i64);
        let shown = d.clamp(0, MAX_SCALE as i64) as u8;
        if d >= self.scale as i64 {
            return self.with_shown(shown);
        }
        if self.wide != 0 {
            return self.round_wide(d, d.max(0) as u8, truncate, shown);
        }
        // Digits to drop from the mantissa; beyond 38 everything goes.
        let drop = (self.scale as i64 - d).min(39) as u32;
        let keep_scale = d.max(0) as u8;
        let at = |mantissa: i128| {
            let (m, neg) = (mantissa.unsigned_abs(), mantissa < 0);
            let r = if drop > 38 {
                0
            } else {
                let div = POW10[drop as usize];
                let (q, rem) = (m / div, m % div);
                let q = if !truncate && rem * 2 >= div {
                    q + 1
                } else {
                    q
                };
                // Back to `keep_scale` digits: a negative `d` leaves zeros left of the point.
                let up = (keep_scale as i64 - d) as u32;
                q.saturating_mul(POW10[up.min(38) as usize])
            };
            let r = r.min(i128::MAX as u128) as i128;
            if neg {
                -r
            } else {
                r
            }
        };
        let mantissa = at(self.mantissa);
        // A value that may be off from MySQL's gives MySQL's digits when every value
        // within that distance gives the same; else the result is marked unsettled and
        // whoever shows or stores it refuses it.
        let exact = if self.exact == EXACT {
            EXACT
        } else {
            let units = (self.scale as i32 - self.exact as i32).max(0) as usize;
            let same = POW10.get(units).is_some_and(|u| {
                let u = *u as i128;
                match (self.mantissa.checked_sub(u), self.mantissa.checked_add(u)) {
                    (Some(lo), Some(hi)) => at(lo) == mantissa && at(hi) == mantissa,
                    _ => false,
                }
            });
            if same {
                EXACT
            } else {
                UNSETTLED
            }
        };
        Decimal {
            exact,
            ..Decimal::new(mantissa, keep_scale).with_shown(shown)
        }
    }

    /// Number of digits left of the point.
    pub fn int_digits(&self) -> u32 {
        if self.wide != 0 {
            return self.int_digits_any();
        }
        let int = (self.mantissa / 10i128.pow(self.scale as u32)).unsigned_abs();
        if int == 0 {
            0
        } else {
            int.ilog10() + 1
        }
    }

    /// Magnitudes of both operands at their common scale `s`.
    fn aligned(&self, o: &Decimal) -> (U256, U256, u32) {
        let s = self.scale.max(o.scale) as u32;
        let up = |d: &Decimal| {
            // Mantissas stay below 10^38 and scales at most 38: no overflow in 256 bits.
            U256::from_u128(d.mantissa.unsigned_abs())
                .checked_mul_pow10(s - d.scale as u32)
                .unwrap_or(U256 {
                    hi: u128::MAX,
                    lo: u128::MAX,
                })
        };
        (up(self), up(o), s)
    }

    /// Exact sum; shown at the larger of the operands' shown scales.
    #[inline]
    pub fn checked_add(&self, o: &Decimal) -> Option<Decimal> {
        if self.exact == EXACT && o.exact == EXACT {
            let s = self.scale.max(o.scale);
            let fast = (|| {
                let a = self
                    .mantissa
                    .checked_mul(POW10[(s - self.scale) as usize] as i128)?;
                let b = o
                    .mantissa
                    .checked_mul(POW10[(s - o.scale) as usize] as i128)?;
                a.checked_add(b).filter(|m| m.unsigned_abs() < LIMIT)
            })();
            if let Some(m) = fast {
                return Some(Decimal::new(m, s).with_shown(self.shown.max(o.shown)));
            }
        }
        self.add_wide(o)
    }

    /// [`Decimal::checked_add`] past an `i128` or with an operand that may be off.
    #[cold]
    #[inline(never)]
    fn add_wide(&self, o: &Decimal) -> Option<Decimal> {
        // Exact operands: the exact sum, when MySQL holds it whole (else the narrow
        // rules below, which may drop digits past 38 and follow how far that goes).
        if let Some(d) = self.add_exact(o) {
            return Some(d);
        }
        if (self.wide | o.wide) != 0 {
            return None;
        }
        let shown = self.shown.max(o.shown);
        let exact = self.combined(o, 0, 0);
        let (a, b, s) = self.aligned(o);
        let (an, bn) = (self.mantissa < 0, o.mantissa < 0);
        let (mag, neg) = if an == bn {
            (a.checked_add(b)?, an)
        } else if a >= b {
            (a.sub(b), an)
        } else {
            (b.sub(a), bn)
        };
        fit(neg, mag, s, shown, exact)
    }

    pub fn checked_sub(&self, o: &Decimal) -> Option<Decimal> {
        self.checked_add(&-*o)
    }

    pub fn abs(&self) -> Decimal {
        if self.wide != 0 {
            return Decimal { wide: 1, ..*self };
        }
        Decimal {
            mantissa: self.mantissa.abs(),
            ..*self
        }
    }

    /// Product, keeping at most 31 fractional digits (truncated); shown at the sum of
    /// the shown scales, at most 30.
    pub fn checked_mul(&self, o: &Decimal) -> Option<Decimal> {
        let shown = (self.shown as u32 + o.shown as u32).min(MAX_SCALE as u32) as u8;
        let full = self.scale as u32 + o.scale as u32;
        let scale = full.min(MUL_MAX_SCALE);
        let neg = (self.mantissa < 0) != (o.mantissa < 0);
        let (a, b) = (self.mantissa.unsigned_abs(), o.mantissa.unsigned_abs());
        // The common case (every TPC-H product): exact factors, a product that fits
        // as it is.
        if self.exact == EXACT && o.exact == EXACT && full == scale {
            if let Some(p) = a.checked_mul(b).filter(|p| *p < LIMIT) {
                let p = p as i128;
                return Some(Decimal::new(if neg { -p } else { p }, scale as u8).with_shown(shown));
            }
        }
        self.mul_slow(o)
    }

    /// [`Decimal::checked_mul`] past an `i128`, with a wide operand or one that may be off.
    #[cold]
    #[inline(never)]
    fn mul_slow(&self, o: &Decimal) -> Option<Decimal> {
        if let Some(d) = self.mul_exact(o) {
            return Some(d);
        }
        if (self.wide | o.wide) != 0 {
            return None;
        }
        let shown = (self.shown as u32 + o.shown as u32).min(MAX_SCALE as u32) as u8;
        let full = self.scale as u32 + o.scale as u32;
        let scale = full.min(MUL_MAX_SCALE);
        let neg = (self.mantissa < 0) != (o.mantissa < 0);
        let (a, b) = (self.mantissa.unsigned_abs(), o.mantissa.unsigned_abs());
        let mag = match a.checked_mul(b) {
            Some(p) => U256::from_u128(p),
            None => U256::mul_wide(a, b),
        }
        .div_pow10(full - scale);
        // A distance grows with the other factor's integer digits.
        let exact = if self.exact == EXACT && o.exact == EXACT {
            EXACT
        } else {
            self.combined(o, o.int_digits() as i32, self.int_digits() as i32)
        };
        fit(neg, mag, scale, shown, exact)
    }

    /// Quotient as MySQL's decimal division computes it: the dividend's and divisor's
    /// fractional digits are taken in whole 9-digit groups, the increment (4) is added
    /// less the digits that rounding-up already added, the sum is rounded up to whole
    /// groups again, and the quotient is truncated there (`59/14` holds 4.214285714,
    /// `1/3/3` 0.111111111000000000). Shown at the dividend's shown scale plus 4.
    /// None when `o` is zero or the integer part overflows.
    pub fn checked_div(&self, o: &Decimal) -> Option<Decimal> {
        if o.is_zero() {
            return None;
        }
        let shown = (self.shown + DIV_INCREMENT).min(MAX_SCALE);
        if self.is_zero() {
            return Some(Decimal {
                exact: self.exact,
                ..Decimal::new(0, 0).with_shown(shown)
            });
        }
        if (self.wide | o.wide) != 0 {
            return self.div_exact(o);
        }
        let (sa, sb) = (self.scale as u32, o.scale as u32);
        let (ra, rb) = (round_up_9(sa), round_up_9(sb));
        let incr = (DIV_INCREMENT as u32).saturating_sub((ra - sa) + (rb - sb));
        let frac = round_up_9(ra + rb + incr);
        let mysql_frac = frac;
        // Keep the numerator within 77 digits (256 bits); the quotient then still has
        // more than the 38 digits `fit` keeps, so the truncation point is unaffected.
        let (a, b) = (self.mantissa.unsigned_abs(), o.mantissa.unsigned_abs());
        let room = 77 - (a.ilog10() as i64 + 1) + sa as i64 - sb as i64;
        let frac = (frac as i64)
            .min(38)
            .min(room)
            .max(sa as i64 - sb as i64)
            .max(0) as u32;
        let k = frac + sb - sa;
        let neg = (self.mantissa < 0) != (o.mantissa < 0);
        let fast = (k <= 38)
            .then(|| a.checked_mul(POW10[k as usize]))
            .flatten();
        let (q, rem) = match fast {
            Some(n) => (U256::from_u128(n / b), n % b),
            None => U256::from_u128(a).checked_mul_pow10(k)?.div_rem(b),
        };
        let exact = if self.exact == EXACT && o.exact == EXACT {
            // Cut before MySQL's point with digits left: off by less than 10^-frac.
            if frac < mysql_frac && rem != 0 {
                frac as i8
            } else {
                EXACT
            }
        } else {
            // MySQL divides values held to more digits, and cuts elsewhere: the
            // dividend's distance shrinks by the divisor's size, the divisor's grows
            // by the dividend's over the divisor's squared; this cut adds 10^-frac.
            let (ka, kb) = (self.int_digits() as i32, o.int_digits() as i32);
            let (sb, small) = (o.scale as i32, kb == 0);
            let spread_a = if small { sb } else { 1 - kb };
            let spread_b = if small {
                ka + 2 * sb + 1
            } else {
                ka - 2 * (kb - 1) + 1
            };
            (self.combined(o, spread_a, spread_b) as i32)
                .min(frac as i32 - 1)
                .max(-100) as i8
        };
        let r = fit(neg, q, frac, shown, exact);
        if r.is_none_or(|d| !d.is_exact()) {
            // Digits dropped past 38: the exact quotient instead, when it can be had.
            if let Some(d) = self.div_exact(o) {
                return Some(d);
            }
        }
        r
    }

    /// `self DIV o`: the quotient truncated toward zero, exactly. None when `o` is zero
    /// or the quotient does not fit in an `i128` (the caller's range check fails it).
    pub fn div_trunc(&self, o: &Decimal) -> Option<i128> {
        if o.is_zero() || !self.is_exact() || !o.is_exact() {
            return None;
        }
        if (self.wide | o.wide) != 0 {
            return self.div_trunc_wide(o);
        }
        let (a, b, _) = self.aligned(o);
        let q = match b.to_u128() {
            Some(b) => a.div_rem(b).0.to_u128()?,
            None => 0, // b >= 2^128 > a: only the larger-scale side was scaled up.
        };
        let q = i128::try_from(q).ok()?;
        Some(if (self.mantissa < 0) != (o.mantissa < 0) {
            -q
        } else {
            q
        })
    }

    /// `self MOD o`: the remainder of truncating division, with the dividend's sign,
    /// exact at the larger scale; shown at the larger shown scale. None when `o` is zero.
    pub fn checked_rem(&self, o: &Decimal) -> Option<Decimal> {
        if o.is_zero() || !self.is_exact() || !o.is_exact() {
            return None;
        }
        if (self.wide | o.wide) != 0 {
            return self.rem_wide(o);
        }
        let (a, b, s) = self.aligned(o);
        let r = match b.to_u128() {
            Some(b) => a.div_rem(b).1,
            // b >= 2^128 means only b was scaled up, so a is the dividend's own
            // mantissa and smaller than b.
            None => a.lo,
        };
        let r = r as i128;
        Some(
            Decimal::new(if self.mantissa < 0 { -r } else { r }, s as u8)
                .with_shown(self.shown.max(o.shown)),
        )
    }

    /// Every digit held, without rounding to the shown scale (what
    /// [`Decimal::parse_held`] reads back to the same value and scale).
    pub fn held_text(&self) -> String {
        self.digits_text()
    }

    /// The value [`Decimal::held_text`] wrote, at its scale (any number of fractional
    /// digits, up to 65 digits in all).
    pub fn parse_held(text: &str) -> Option<Decimal> {
        let (neg, digits) = match text.strip_prefix('-') {
            Some(rest) => (true, rest),
            None => (false, text),
        };
        let (int, frac) = digits.split_once('.').unwrap_or((digits, ""));
        if !int.bytes().chain(frac.bytes()).all(|b| b.is_ascii_digit()) {
            return None;
        }
        Decimal::from_digit_text(neg, int.as_bytes(), frac.as_bytes())
    }

    /// Every digit held, without rounding to the shown scale.
    fn digits_text(&self) -> String {
        if self.wide != 0 {
            return self.digits_text_wide();
        }
        let digits = self.mantissa.unsigned_abs().to_string();
        let scale = self.scale as usize;
        let sign = if self.mantissa < 0 { "-" } else { "" };
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
}

impl std::ops::Neg for Decimal {
    type Output = Decimal;

    fn neg(self) -> Decimal {
        if self.wide != 0 {
            return Decimal {
                wide: 3 - self.wide,
                ..self
            };
        }
        Decimal {
            mantissa: -self.mantissa,
            ..self
        }
    }
}

impl PartialEq for Decimal {
    fn eq(&self, o: &Decimal) -> bool {
        self.cmp(o) == Ordering::Equal
    }
}
impl Eq for Decimal {}
impl PartialOrd for Decimal {
    fn partial_cmp(&self, o: &Decimal) -> Option<Ordering> {
        Some(self.cmp(o))
    }
}
impl Ord for Decimal {
    /// By value, every digit held (`shown` plays no part), as MySQL compares decimals.
    fn cmp(&self, o: &Decimal) -> Ordering {
        if (self.wide | o.wide) != 0 {
            return self.cmp_wide(o);
        }
        if self.scale == o.scale {
            return self.mantissa.cmp(&o.mantissa);
        }
        let s = self.scale.max(o.scale);
        let up = |d: &Decimal| {
            d.mantissa
                .checked_mul(*POW10.get((s - d.scale) as usize)? as i128)
        };
        if let (Some(a), Some(b)) = (up(self), up(o)) {
            return a.cmp(&b);
        }
        let (an, bn) = (self.mantissa < 0, o.mantissa < 0);
        if an != bn {
            return if an {
                Ordering::Less
            } else {
                Ordering::Greater
            };
        }
        let (a, b, _) = self.aligned(o);
        if an {
            b.cmp(&a)
        } else {
            a.cmp(&b)
        }
    }
}

impl fmt::Display for Decimal {
    /// The text form at the shown scale: rounded (half away from zero) when more
    /// digits are held, padded with zeros when fewer.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let d = if self.scale > self.shown {
            self.rescale(self.shown)
        } else {
            *self
        };
        let text = d.digits_text();
        let pad = (self.shown - d.scale) as usize;
        if pad == 0 {
            return f.write_str(&text);
        }
        let point = if d.scale == 0 { "." } else { "" };
        write!(f, "{text}{point}{}", "0".repeat(pad))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A stored value reads back through serde's buffered form too (a table's catalog
    /// entry is `#[serde(flatten)]`), whatever its width: small mantissas as numbers,
    /// past i64 and past 38 digits as text.
    #[test]
    fn stored_values_read_back_through_a_flattened_struct() {
        #[derive(serde::Serialize, serde::Deserialize)]
        struct Inner {
            v: Decimal,
        }
        #[derive(serde::Serialize, serde::Deserialize)]
        struct Outer {
            #[serde(flatten)]
            inner: Inner,
            other: u32,
        }
        for (text, scale) in [
            ("3.25", 10u8),
            ("-1.5", 1),
            ("0", 0),
            ("12345678901234567890.123", 3),
            ("-99999999999999999999999999999999999999", 0),
            (
                "-12345678901234567890123456789012345678901234567890.0123456789",
                10,
            ),
        ] {
            let d = Decimal::parse(text).unwrap().rescale(scale);
            let json = serde_json::to_string(&Outer {
                inner: Inner { v: d },
                other: 1,
            })
            .unwrap();
            let back: Outer = serde_json::from_str(&json).unwrap();
            assert_eq!(back.inner.v, d, "{json}");
            assert_eq!(back.inner.v.to_string(), d.to_string(), "{json}");
            let direct: Decimal =
                serde_json::from_str(&serde_json::to_string(&d).unwrap()).unwrap();
            assert_eq!(direct.to_string(), d.to_string());
        }
    }

    fn d(s: &str) -> Decimal {
        Decimal::parse(s).unwrap()
    }

    /// Every digit held, for checking the internal value.
    fn held(x: Decimal) -> String {
        x.digits_text()
    }

    #[test]
    fn parse_format_round() {
        let x = d("-12.345");
        assert_eq!(x.to_string(), "-12.345");
        assert_eq!(x.rescale(2).to_string(), "-12.35");
        assert_eq!(d("0.5").rescale(0).to_string(), "1");
        assert_eq!(d("3").rescale(2).to_string(), "3.00");
        assert_eq!(d(".05").to_string(), "0.05");
        assert!(Decimal::parse("1x").is_none());
        assert_eq!(d("1.50"), d("1.5"));
        assert_eq!(d("1.5").with_shown(4).to_string(), "1.5000");
        assert_eq!(d("2").with_shown(2).to_string(), "2.00");
    }

    #[test]
    fn division_keeps_whole_groups_of_nine_digits() {
        let q = Decimal::from_i64(59)
            .checked_div(&Decimal::from_i64(14))
            .unwrap();
        assert_eq!(held(q), "4.214285714");
        assert_eq!(q.to_string(), "4.2143");
        let p = q.checked_mul(&Decimal::from_i64(14)).unwrap();
        assert_eq!(held(p), "58.999999996");
        assert_eq!(p.to_string(), "59.0000");
        assert!(p < Decimal::from_i64(59));
        // 1/3/3: the second quotient takes another group.
        let third = Decimal::from_i64(1)
            .checked_div(&Decimal::from_i64(3))
            .unwrap();
        let ninth = third.checked_div(&Decimal::from_i64(3)).unwrap();
        assert_eq!(held(ninth), "0.111111111000000000");
        assert_eq!(ninth.to_string(), "0.11111111");
        // Digits the dividend's group already pads count against the increment.
        let q = d("1.12345678").checked_div(&Decimal::from_i64(7)).unwrap();
        assert_eq!(held(q), "0.160493825714285714");
        assert_eq!(q.to_string(), "0.160493825714");
        let q = Decimal::from_i64(1).checked_div(&d("0.3")).unwrap();
        assert_eq!(held(q), "3.333333333");
        let q = Decimal::from_i64(1)
            .checked_div(&d("0.33333333333"))
            .unwrap();
        assert_eq!(held(q), "3.000000000030000000");
        // Signs, zero, a zero divisor.
        let q = Decimal::from_i64(-2)
            .checked_div(&Decimal::from_i64(3))
            .unwrap();
        assert_eq!(
            (held(q).as_str(), q.to_string().as_str()),
            ("-0.666666666", "-0.6667")
        );
        let z = Decimal::from_i64(0)
            .checked_div(&Decimal::from_i64(3))
            .unwrap();
        assert_eq!(z.to_string(), "0.0000");
        assert!(Decimal::from_i64(1).checked_div(&d("0.0")).is_none());
    }

    #[test]
    fn deep_chains_truncate_past_38_digits() {
        // 1/7 five times: MySQL holds 45 fractional digits; 38 are kept here, and the
        // shown 20 agree.
        let mut x = Decimal::from_i64(1);
        for _ in 0..5 {
            x = x.checked_div(&Decimal::from_i64(7)).unwrap();
        }
        assert_eq!(x.shown, 20);
        assert_eq!(x.to_string(), "0.00005949901790920450");
        // A product of two long quotients needs the wide path and keeps 31 digits.
        let a = d("0.020408163142857142");
        let p = a.checked_mul(&a).unwrap();
        assert_eq!(p.scale, 31);
        assert_eq!(held(p), "0.0004164931228654726997084550204");
        // A big integer part leaves less room for held digits, but a shown digit is
        // never dropped: that is an overflow. Nor is a shown digit whose rounding
        // depends on dropped ones (MySQL shows 6666…6666.6667 for 2·10^34/3, from
        // digits this value cannot hold): refused.
        let big = Decimal::from_i64(10i64.pow(17))
            .checked_mul(&Decimal::from_i64(10i64.pow(17)))
            .unwrap();
        let two_big = big.checked_mul(&Decimal::from_i64(2)).unwrap();
        // Past 38 digits the quotient is exact, as MySQL's.
        let q = two_big.checked_div(&Decimal::from_i64(3)).unwrap();
        assert!(q.is_wide());
        assert_eq!(q.to_string(), "6666666666666666666666666666666666.6667");
        let q = Decimal::from_i64(10i64.pow(17))
            .checked_mul(&Decimal::from_i64(10i64.pow(16)))
            .unwrap()
            .checked_div(&Decimal::from_i64(3))
            .unwrap();
        assert_eq!(held(q), "333333333333333333333333333333333.333333333");
        assert_eq!(q.to_string(), "333333333333333333333333333333333.3333");
        assert_eq!(
            held(q.checked_add(&d("0.000001")).unwrap()),
            "333333333333333333333333333333333.333334333"
        );
        // 65 integer digits are the most.
        let e64 = d(&format!("1{}", "0".repeat(64)));
        assert!(e64.checked_mul(&Decimal::from_i64(9)).is_some());
        assert!(e64.checked_mul(&Decimal::from_i64(10)).is_none());
    }

    #[test]
    fn products_sums_and_comparisons() {
        assert_eq!(
            d("2.50")
                .checked_mul(&Decimal::from_i64(4))
                .unwrap()
                .to_string(),
            "10.00"
        );
        assert_eq!(
            d("0.01").checked_mul(&d("0.01")).unwrap().to_string(),
            "0.0001"
        );
        assert_eq!(d("0.1").checked_add(&d("0.2")).unwrap(), d("0.3"));
        assert_eq!(
            d("1.5").checked_sub(&d("2.25")).unwrap().to_string(),
            "-0.75"
        );
        assert!(d("-1.5") < d("-1.25"));
        assert!(d("-0.000000001") < Decimal::from_i64(0));
        let tiny = Decimal::new(1, 38).with_shown(30);
        assert!(tiny > Decimal::from_i64(0));
        assert!(Decimal::from_i64(i64::MAX) > tiny);
        assert_eq!(tiny.to_string(), "0.000000000000000000000000000000");
    }

    #[test]
    fn integer_division_and_remainder() {
        let one = Decimal::from_i64(1);
        assert_eq!(d("1.9").div_trunc(&one), Some(1));
        assert_eq!(d("-1.9").div_trunc(&one), Some(-1));
        assert_eq!(d("7.5").div_trunc(&d("2.5")), Some(3));
        assert_eq!(Decimal::from_i64(5).div_trunc(&d("0.3")), Some(16));
        assert_eq!(one.div_trunc(&d("0")), None);
        let r = d("7.5").checked_rem(&Decimal::from_i64(2)).unwrap();
        assert_eq!(r.to_string(), "1.5");
        let r = d("-7.5").checked_rem(&Decimal::from_i64(-2)).unwrap();
        assert_eq!(r.to_string(), "-1.5");
        assert_eq!(d("5.3").checked_rem(&d("0.7")).unwrap().to_string(), "0.4");
        assert!(d("5.3").checked_rem(&d("0.00")).is_none());
    }

    #[test]
    fn rounding_functions() {
        let q = Decimal::from_i64(59)
            .checked_div(&Decimal::from_i64(14))
            .unwrap();
        assert_eq!(q.round_to(6, false).to_string(), "4.214286");
        assert_eq!(q.round_to(6, true).to_string(), "4.214285");
        assert_eq!(q.round_to(0, false).to_string(), "4");
        assert_eq!(d("1.5").round_to(3, false).to_string(), "1.500");
        assert_eq!(d("1234.5678").round_to(-2, false).to_string(), "1200");
        assert_eq!(d("-2.5").round_to(0, false).to_string(), "-3");
        assert_eq!(d("-1250").round_to(-2, false).to_string(), "-1300");
        assert_eq!(d("99.5").round_to(-3, false).to_string(), "0");
    }

    #[test]
    fn text_rounds_digit_for_digit_at_any_length() {
        let r = |t: &str, s: u8| Decimal::parse_rounded(t, s);
        let v = |t: &str, s: u8| match r(t, s) {
            Some(Rounded::Value(x)) => x.to_string(),
            other => panic!("{t}: {other:?}"),
        };
        assert_eq!(v(" -12.345 ", 2), "-12.35");
        assert_eq!(v("2.5", 0), "3");
        assert_eq!(v("-2.5", 0), "-3");
        assert_eq!(v("2.4999", 0), "2");
        assert_eq!(v("1.5e3", 0), "1500");
        assert_eq!(v(".5E-3", 4), "0.0005");
        assert_eq!(v("1e-400", 2), "0.00");
        assert_eq!(v("000.000", 1), "0.0");
        // 39 and more digits: exact, not through a double.
        assert_eq!(
            v("1234567890123456789012345678901234567.89", 1),
            "1234567890123456789012345678901234567.9"
        );
        assert_eq!(
            v("12345678901234567890123456789e0", 0),
            "12345678901234567890123456789"
        );
        assert_eq!(
            v(&format!("0.{}", "9".repeat(60)), 30),
            "1.".to_owned() + &"0".repeat(30)
        );
        // 38 nines stay narrow; rounding up to 10^38 goes wide; 65 nines fit, but
        // rounding up to 10^65 does not.
        let nines = "9".repeat(38);
        assert_eq!(v(&nines, 0), nines);
        assert_eq!(v(&format!("{nines}.5"), 0), format!("1{}", "0".repeat(38)));
        assert_eq!(v("-1e40", 0), format!("-1{}", "0".repeat(40)));
        assert_eq!(v("1e37", 2), format!("1{}.00", "0".repeat(37)));
        let nines65 = "9".repeat(65);
        assert_eq!(v(&nines65, 0), nines65);
        assert_eq!(
            r(&format!("{nines65}.5"), 0),
            Some(Rounded::Overflow { negative: false })
        );
        assert_eq!(r("-1e65", 0), Some(Rounded::Overflow { negative: true }));
        assert_eq!(r("1e60", 6), Some(Rounded::Overflow { negative: false }));
        assert_eq!(r("1e400", 0), Some(Rounded::Overflow { negative: false }));
        assert_eq!(r("12abc", 0), None);
        assert_eq!(r("", 0), None);
        assert_eq!(r("-", 0), None);
        assert_eq!(r("1e", 0), None);
        assert_eq!(Decimal::type_max(5, 2, true).to_string(), "-999.99");
        assert_eq!(Decimal::type_max(38, 0, false).to_string(), nines);
    }

    #[test]
    fn numeric_prefixes() {
        let p = Decimal::numeric_prefix;
        assert_eq!(p("  12.5abc"), "12.5");
        assert_eq!(p("-1e5x"), "-1e5");
        assert_eq!(p("1e+x"), "1");
        assert_eq!(p(".5."), ".5");
        assert_eq!(p("5."), "5.");
        assert_eq!(p("-.x"), "");
        assert_eq!(p("abc"), "");
    }

    #[test]
    fn digits_dropped_past_38_never_reach_a_shown_digit() {
        // 1/7 five times: MySQL holds 45 fractional digits, 38 here.
        let seven = Decimal::from_i64(7);
        let mut x = Decimal::from_i64(1);
        for _ in 0..5 {
            x = x.checked_div(&seven).unwrap();
        }
        // Exact now (45 digits, wide), and MySQL's digits past 38 with it.
        assert!(x.is_exact() && x.is_wide());
        assert_eq!(
            x.checked_mul(&d("100000000000000000000"))
                .unwrap()
                .to_string(),
            "5949901790920449.56268221428571428571"
        );
        // The same value held to 38 digits (as an operand MySQL's buffer cut would
        // leave): off by less than 10^-38.
        let x = Decimal {
            exact: 38,
            ..d(&x.digits_text()[..40]).with_shown(20)
        };
        assert!(!x.is_exact());
        assert_eq!(x.to_string(), "0.00005949901790920450");
        // Times 10^16: the 20 digits shown are still MySQL's.
        let p = x.checked_mul(&d("10000000000000000")).unwrap();
        assert_eq!(p.to_string(), "594990179092.04495626822142857143");
        // Times 10^20: the last shown digits would come from the dropped ones
        // (MySQL: 5949901790920449.56268221428571428571): refused.
        assert!(x.checked_mul(&d("100000000000000000000")).is_none());
        // Rounding at a scale the held digits settle is exact again; past them not.
        assert!(x.round_to(20, false).is_exact());
        assert_eq!(x.round_to(20, false).to_string(), "0.00005949901790920450");
        assert!(x.rescale(30).is_exact());
        // Dividing by a small number magnifies the distance as multiplying does.
        assert!(x.checked_div(&d("0.00000000000000000001")).is_none());
        // A sum keeps the distance: shown at 20 digits it is settled.
        let s = x.checked_add(&Decimal::from_i64(1)).unwrap();
        assert_eq!(s.to_string(), "1.00005949901790920450");
        // DIV and MOD of such a value are refused.
        assert!(x.checked_rem(&seven).is_none());
        assert!(x.div_trunc(&seven).is_none());
        // Exact operands whose digits past 38 are zero stay exact.
        let q = d("1").checked_div(&d("4")).unwrap();
        assert!(q.is_exact());
        // Boundaries: 38 nines, negative, scale 30, half away from zero, overflow.
        let nines = d(&"9".repeat(38));
        assert_eq!(nines.checked_add(&d("0")).unwrap(), nines);
        let e38 = format!("1{}", "0".repeat(38));
        assert_eq!(nines.checked_add(&d("1")).unwrap().to_string(), e38);
        assert_eq!(
            (-nines).checked_sub(&d("1")).unwrap().to_string(),
            format!("-{e38}")
        );
        let nines65 = d(&"9".repeat(65));
        assert!(nines65.checked_add(&d("1")).is_none());
        assert!((-nines65).checked_sub(&d("1")).is_none());
        let s30 = d(&format!("0.{}5", "0".repeat(29)));
        assert_eq!(
            s30.rescale(29).to_string(),
            format!("0.{}1", "0".repeat(28))
        );
        assert_eq!(
            (-s30).rescale(29).to_string(),
            format!("-0.{}1", "0".repeat(28))
        );
    }

    #[test]
    fn doubles_by_their_shortest_digits() {
        assert_eq!(Decimal::from_f64_digits(1.9).unwrap(), d("1.9"));
        assert_eq!(Decimal::from_f64_digits(0.3).unwrap(), d("0.3"));
        assert_eq!(Decimal::from_f64_digits(-2.5e-7).unwrap(), d("-0.00000025"));
        assert_eq!(
            Decimal::from_f64_digits(1e20).unwrap(),
            d("100000000000000000000")
        );
        assert!(Decimal::from_f64_digits(1e300).is_none());
        assert_eq!(d("58.999999996").to_f64(), 58.999999996);
    }
}
