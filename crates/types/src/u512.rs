//! A 512-bit unsigned integer (eight 64-bit limbs, least significant first) for the
//! exact arithmetic of DECIMAL values wider than 38 digits ([`crate::decimal_wide`]):
//! a 65-digit magnitude aligned to another's scale, or the product of two, needs
//! up to 130 digits, past a `U256`. Only the slow path of decimal arithmetic comes
//! here, so the operations are the plain schoolbook ones (division bit by bit).

use std::cmp::Ordering;

const LIMBS: usize = 8;
/// 10^19, the largest power of ten in a `u64`.
const TEN19: u64 = 10_000_000_000_000_000_000;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct U512([u64; LIMBS]);

impl U512 {
    pub const ZERO: U512 = U512([0; LIMBS]);

    pub fn from_u128(v: u128) -> U512 {
        let mut l = [0; LIMBS];
        l[0] = v as u64;
        l[1] = (v >> 64) as u64;
        U512(l)
    }

    /// The value from its low 128 bits and the next 96.
    pub fn from_parts(lo: u128, hi: [u32; 3]) -> U512 {
        let mut v = U512::from_u128(lo);
        v.0[2] = hi[0] as u64 | (hi[1] as u64) << 32;
        v.0[3] = hi[2] as u64;
        v
    }

    /// The low 128 bits and the next 96, when the value fits in 224 bits.
    pub fn to_parts(self) -> Option<(u128, [u32; 3])> {
        if self.0[3] >> 32 != 0 || self.0[4..].iter().any(|l| *l != 0) {
            return None;
        }
        let lo = self.0[0] as u128 | (self.0[1] as u128) << 64;
        Some((
            lo,
            [self.0[2] as u32, (self.0[2] >> 32) as u32, self.0[3] as u32],
        ))
    }

    /// The low 256 bits as four limbs, when the value fits in them.
    pub fn to_limbs4(self) -> Option<[u64; 4]> {
        if self.0[4..].iter().any(|l| *l != 0) {
            return None;
        }
        Some([self.0[0], self.0[1], self.0[2], self.0[3]])
    }

    pub fn from_limbs4(l: [u64; 4]) -> U512 {
        U512([l[0], l[1], l[2], l[3], 0, 0, 0, 0])
    }

    pub fn to_u128(self) -> Option<u128> {
        if self.0[2..].iter().any(|l| *l != 0) {
            return None;
        }
        Some(self.0[0] as u128 | (self.0[1] as u128) << 64)
    }

    pub fn is_zero(&self) -> bool {
        self.0.iter().all(|l| *l == 0)
    }

    pub fn checked_add(self, o: U512) -> Option<U512> {
        let mut r = [0; LIMBS];
        let mut carry = 0u64;
        for (i, out) in r.iter_mut().enumerate() {
            let (s, c1) = self.0[i].overflowing_add(o.0[i]);
            let (s, c2) = s.overflowing_add(carry);
            *out = s;
            carry = (c1 || c2) as u64;
        }
        (carry == 0).then_some(U512(r))
    }

    /// `self - o`; the caller guarantees `self >= o`.
    pub fn sub(self, o: U512) -> U512 {
        let mut r = [0; LIMBS];
        let mut borrow = 0u64;
        for (i, out) in r.iter_mut().enumerate() {
            let (s, b1) = self.0[i].overflowing_sub(o.0[i]);
            let (s, b2) = s.overflowing_sub(borrow);
            *out = s;
            borrow = (b1 || b2) as u64;
        }
        U512(r)
    }

    pub fn checked_mul(self, o: U512) -> Option<U512> {
        let mut r = [0u64; 2 * LIMBS];
        for i in 0..LIMBS {
            if self.0[i] == 0 {
                continue;
            }
            let mut carry = 0u128;
            for j in 0..LIMBS {
                let t = self.0[i] as u128 * o.0[j] as u128 + r[i + j] as u128 + carry;
                r[i + j] = t as u64;
                carry = t >> 64;
            }
            r[i + LIMBS] = carry as u64;
        }
        if r[LIMBS..].iter().any(|l| *l != 0) {
            return None;
        }
        let mut l = [0; LIMBS];
        l.copy_from_slice(&r[..LIMBS]);
        Some(U512(l))
    }

    fn checked_mul_small(self, m: u64) -> Option<U512> {
        let mut r = [0; LIMBS];
        let mut carry = 0u128;
        for (i, out) in r.iter_mut().enumerate() {
            let t = self.0[i] as u128 * m as u128 + carry;
            *out = t as u64;
            carry = t >> 64;
        }
        (carry == 0).then_some(U512(r))
    }

    fn div_rem_small(self, d: u64) -> (U512, u64) {
        let mut q = [0; LIMBS];
        let mut rem = 0u128;
        for i in (0..LIMBS).rev() {
            let cur = (rem << 64) | self.0[i] as u128;
            q[i] = (cur / d as u128) as u64;
            rem = cur % d as u128;
        }
        (U512(q), rem as u64)
    }

    /// 10^n, or None past 512 bits.
    pub fn pow10(n: u32) -> Option<U512> {
        U512::from_u128(1).checked_mul_pow10(n)
    }

    pub fn checked_mul_pow10(self, mut n: u32) -> Option<U512> {
        let mut v = self;
        while n > 0 {
            let step = n.min(19);
            v = v.checked_mul_small(10u64.pow(step))?;
            n -= step;
        }
        Some(v)
    }

    /// `self / 10^n`, truncated.
    pub fn div_pow10(self, mut n: u32) -> U512 {
        let mut v = self;
        while n > 0 && !v.is_zero() {
            let step = n.min(19);
            v = v.div_rem_small(10u64.pow(step)).0;
            n -= step;
        }
        v
    }

    fn bit(&self, i: u32) -> bool {
        (self.0[(i / 64) as usize] >> (i % 64)) & 1 == 1
    }

    fn bits(&self) -> u32 {
        for i in (0..LIMBS).rev() {
            if self.0[i] != 0 {
                return i as u32 * 64 + 64 - self.0[i].leading_zeros();
            }
        }
        0
    }

    fn shl1(self) -> U512 {
        let mut r = [0; LIMBS];
        for (i, out) in r.iter_mut().enumerate() {
            *out = self.0[i] << 1 | if i > 0 { self.0[i - 1] >> 63 } else { 0 };
        }
        U512(r)
    }

    /// Quotient and remainder of division by a non-zero `d`, bit by bit.
    pub fn div_rem(self, d: U512) -> (U512, U512) {
        debug_assert!(!d.is_zero());
        if let (Some(a), Some(b)) = (self.to_u128(), d.to_u128()) {
            return (U512::from_u128(a / b), U512::from_u128(a % b));
        }
        let mut q = U512::ZERO;
        let mut r = U512::ZERO;
        for i in (0..self.bits()).rev() {
            // r < d < 2^511 here (d is at most 224 bits wide), so the shift cannot lose a bit.
            r = r.shl1();
            if self.bit(i) {
                r.0[0] |= 1;
            }
            if r >= d {
                r = r.sub(d);
                q.0[(i / 64) as usize] |= 1 << (i % 64);
            }
        }
        (q, r)
    }

    /// The decimal digits (`"0"` for zero).
    pub fn to_dec_string(self) -> String {
        if self.is_zero() {
            return "0".into();
        }
        let mut parts = Vec::new();
        let mut v = self;
        while !v.is_zero() {
            let (q, r) = v.div_rem_small(TEN19);
            parts.push(r);
            v = q;
        }
        let mut s = parts.pop().map(|p| p.to_string()).unwrap_or_default();
        for p in parts.iter().rev() {
            s.push_str(&format!("{p:019}"));
        }
        s
    }

    /// Number of decimal digits (0 for zero).
    pub fn digits(self) -> u32 {
        if self.is_zero() {
            0
        } else {
            self.to_dec_string().len() as u32
        }
    }

    /// The number a string of ASCII digits spells, or None past 512 bits.
    pub fn from_digits(ds: &[u8]) -> Option<U512> {
        let mut v = U512::ZERO;
        for chunk in ds.chunks(19) {
            let n = chunk.iter().fold(0u64, |m, b| m * 10 + (b - b'0') as u64);
            v = v
                .checked_mul_small(10u64.pow(chunk.len() as u32))?
                .checked_add(U512::from_u128(n as u128))?;
        }
        Some(v)
    }
}

impl PartialOrd for U512 {
    fn partial_cmp(&self, o: &U512) -> Option<Ordering> {
        Some(self.cmp(o))
    }
}

impl Ord for U512 {
    fn cmp(&self, o: &U512) -> Ordering {
        for i in (0..LIMBS).rev() {
            match self.0[i].cmp(&o.0[i]) {
                Ordering::Equal => {}
                other => return other,
            }
        }
        Ordering::Equal
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn arithmetic_against_u128() {
        let a = U512::from_u128(123456789012345678901234567890);
        let b = U512::from_u128(987654321);
        let p = a.checked_mul(b).unwrap();
        assert_eq!(p.to_dec_string(), "121932631124828532112482853211126352690");
        let (q, r) = p.checked_add(U512::from_u128(5)).unwrap().div_rem(b);
        assert_eq!((q, r), (a, U512::from_u128(5)));
        let big = U512::pow10(130).unwrap();
        assert_eq!(big.digits(), 131);
        assert_eq!(big.div_pow10(129), U512::from_u128(10));
        assert_eq!(
            U512::from_digits(b"98765432109876543210987654321098765432109876543210")
                .unwrap()
                .to_dec_string(),
            "98765432109876543210987654321098765432109876543210"
        );
        assert!(U512::pow10(155).is_none());
        let x = U512::pow10(64).unwrap().sub(U512::from_u128(1));
        let (lo, hi) = x.to_parts().unwrap();
        assert_eq!(U512::from_parts(lo, hi), x);
        let (q, r) = x.div_rem(U512::pow10(40).unwrap());
        assert_eq!(q.to_dec_string(), "9".repeat(24));
        assert_eq!(r.to_dec_string(), "9".repeat(40));
    }
}
