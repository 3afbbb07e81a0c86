//! DECIMAL(p,s) values: an exact integer mantissa with a decimal scale, enough for the
//! 38 digits a column may declare here (MySQL allows 65; wider declarations are refused).

use std::cmp::Ordering;
use std::fmt;

#[derive(Clone, Copy, Debug, serde::Serialize, serde::Deserialize)]
pub struct Decimal {
    /// The value times 10^scale.
    pub mantissa: i128,
    pub scale: u8,
}

pub const MAX_PRECISION: u8 = 38;

impl Decimal {
    pub fn new(mantissa: i128, scale: u8) -> Decimal {
        Decimal { mantissa, scale }
    }

    pub fn from_i64(v: i64) -> Decimal {
        Decimal {
            mantissa: v as i128,
            scale: 0,
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
            || int.len() + frac.len() > MAX_PRECISION as usize
        {
            return None;
        }
        let mut m: i128 = 0;
        for b in int.bytes().chain(frac.bytes()) {
            m = m * 10 + (b - b'0') as i128;
        }
        Some(Decimal {
            mantissa: if neg { -m } else { m },
            scale: frac.len() as u8,
        })
    }

    pub fn from_f64(v: f64, scale: u8) -> Option<Decimal> {
        let scaled = (v * 10f64.powi(scale as i32)).round();
        if !scaled.is_finite() || scaled.abs() >= 1e38 {
            return None;
        }
        Some(Decimal {
            mantissa: scaled as i128,
            scale,
        })
    }

    pub fn to_f64(&self) -> f64 {
        self.mantissa as f64 / 10f64.powi(self.scale as i32)
    }

    /// Rounds half away from zero to `scale` digits (MySQL's rule for DECIMAL).
    pub fn rescale(&self, scale: u8) -> Decimal {
        match scale.cmp(&self.scale) {
            Ordering::Equal => *self,
            Ordering::Greater => Decimal {
                mantissa: self
                    .mantissa
                    .saturating_mul(10i128.pow((scale - self.scale) as u32)),
                scale,
            },
            Ordering::Less => {
                let div = 10i128.pow((self.scale - scale) as u32);
                let q = self.mantissa / div;
                let r = self.mantissa % div;
                let q = if r.abs() * 2 >= div {
                    q + self.mantissa.signum()
                } else {
                    q
                };
                Decimal { mantissa: q, scale }
            }
        }
    }

    /// Number of digits left of the point.
    pub fn int_digits(&self) -> u32 {
        let int = (self.mantissa / 10i128.pow(self.scale as u32)).unsigned_abs();
        if int == 0 {
            0
        } else {
            int.ilog10() + 1
        }
    }

    pub fn checked_add(&self, o: &Decimal) -> Option<Decimal> {
        let s = self.scale.max(o.scale);
        let a = self.rescale(s).mantissa;
        let b = o.rescale(s).mantissa;
        Some(Decimal {
            mantissa: a.checked_add(b)?,
            scale: s,
        })
    }

    pub fn checked_sub(&self, o: &Decimal) -> Option<Decimal> {
        self.checked_add(&Decimal {
            mantissa: -o.mantissa,
            scale: o.scale,
        })
    }

    pub fn checked_mul(&self, o: &Decimal) -> Option<Decimal> {
        let m = self.mantissa.checked_mul(o.mantissa)?;
        let d = Decimal {
            mantissa: m,
            scale: self.scale + o.scale,
        };
        Some(if d.scale > 30 { d.rescale(30) } else { d })
    }

    /// Division with 4 more digits than the dividend, as MySQL's div_precision_increment.
    pub fn checked_div(&self, o: &Decimal) -> Option<Decimal> {
        if o.mantissa == 0 {
            return None;
        }
        let scale = (self.scale + 4).min(30);
        // self/o = (a/10^sa)/(b/10^sb); result mantissa = a*10^(scale - sa + sb) / b
        let shift = scale as i32 - self.scale as i32 + o.scale as i32;
        let num = if shift >= 0 {
            self.mantissa
                .checked_mul(10i128.checked_pow(shift as u32)?)?
        } else {
            self.mantissa / 10i128.pow((-shift) as u32)
        };
        let q = num / o.mantissa;
        let r = num % o.mantissa;
        let q = if r.abs() * 2 >= o.mantissa.abs() {
            q + (num.signum() * o.mantissa.signum())
        } else {
            q
        };
        Some(Decimal { mantissa: q, scale })
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
    fn cmp(&self, o: &Decimal) -> Ordering {
        let s = self.scale.max(o.scale);
        self.rescale(s).mantissa.cmp(&o.rescale(s).mantissa)
    }
}

impl fmt::Display for Decimal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let neg = self.mantissa < 0;
        let digits = self.mantissa.unsigned_abs().to_string();
        let scale = self.scale as usize;
        let sign = if neg { "-" } else { "" };
        if scale == 0 {
            return write!(f, "{sign}{digits}");
        }
        let padded = if digits.len() <= scale {
            format!("{}{}", "0".repeat(scale + 1 - digits.len()), digits)
        } else {
            digits
        };
        let (i, fr) = padded.split_at(padded.len() - scale);
        write!(f, "{sign}{i}.{fr}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parse_format_round() {
        let d = Decimal::parse("-12.345").unwrap();
        assert_eq!(d.to_string(), "-12.345");
        assert_eq!(d.rescale(2).to_string(), "-12.35");
        assert_eq!(Decimal::parse("0.5").unwrap().rescale(0).to_string(), "1");
        assert_eq!(Decimal::parse("3").unwrap().rescale(2).to_string(), "3.00");
        assert_eq!(Decimal::parse(".05").unwrap().to_string(), "0.05");
        assert!(Decimal::parse("1x").is_none());
        let q = Decimal::from_i64(1)
            .checked_div(&Decimal::from_i64(3))
            .unwrap();
        assert_eq!(q.to_string(), "0.3333");
        assert_eq!(
            Decimal::parse("1.50").unwrap(),
            Decimal::parse("1.5").unwrap()
        );
    }
}
