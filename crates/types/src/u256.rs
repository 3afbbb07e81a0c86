//! A 256-bit unsigned integer with just the operations exact decimal arithmetic needs
//! when an intermediate result outgrows `u128`: the full product of two 128-bit
//! magnitudes, multiplication by a power of ten, and division by a 128-bit divisor.
//! [`crate::decimal`] uses it only on its slow path; results are brought back to 38
//! digits before they leave.

use std::cmp::Ordering;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct U256 {
    pub hi: u128,
    pub lo: u128,
}

/// 10^n for n in 0..=38, the powers a `u128` holds.
pub(crate) const POW10: [u128; 39] = {
    let mut t = [1u128; 39];
    let mut i = 1;
    while i < 39 {
        t[i] = t[i - 1] * 10;
        i += 1;
    }
    t
};

impl U256 {
    pub const ZERO: U256 = U256 { hi: 0, lo: 0 };

    pub fn from_u128(v: u128) -> U256 {
        U256 { hi: 0, lo: v }
    }

    /// The value, when it fits in a `u128`.
    pub fn to_u128(self) -> Option<u128> {
        (self.hi == 0).then_some(self.lo)
    }

    /// The full 256-bit product of two 128-bit numbers.
    pub fn mul_wide(a: u128, b: u128) -> U256 {
        let mask = u64::MAX as u128;
        let (a1, a0) = (a >> 64, a & mask);
        let (b1, b0) = (b >> 64, b & mask);
        let p00 = a0 * b0;
        let p01 = a0 * b1;
        let p10 = a1 * b0;
        let p11 = a1 * b1;
        // Middle column: the high half of p00 plus the low halves of the cross terms.
        let mid = (p00 >> 64) + (p01 & mask) + (p10 & mask);
        let lo = (p00 & mask) | (mid << 64);
        let hi = p11 + (p01 >> 64) + (p10 >> 64) + (mid >> 64);
        U256 { hi, lo }
    }

    /// `self * m`, or None when the product needs more than 256 bits.
    pub fn checked_mul_u128(self, m: u128) -> Option<U256> {
        let low = U256::mul_wide(self.lo, m);
        let high = U256::mul_wide(self.hi, m);
        if high.hi != 0 {
            return None;
        }
        let hi = low.hi.checked_add(high.lo)?;
        Some(U256 { hi, lo: low.lo })
    }

    /// `self * 10^n`, or None on overflow.
    pub fn checked_mul_pow10(self, mut n: u32) -> Option<U256> {
        let mut v = self;
        while n > 0 {
            let step = n.min(38);
            v = v.checked_mul_u128(POW10[step as usize])?;
            n -= step;
        }
        Some(v)
    }

    pub fn checked_add(self, o: U256) -> Option<U256> {
        let (lo, carry) = self.lo.overflowing_add(o.lo);
        let hi = self.hi.checked_add(o.hi)?.checked_add(carry as u128)?;
        Some(U256 { hi, lo })
    }

    /// `self - o`; the caller guarantees `self >= o`.
    pub fn sub(self, o: U256) -> U256 {
        let (lo, borrow) = self.lo.overflowing_sub(o.lo);
        U256 {
            hi: self.hi - o.hi - borrow as u128,
            lo,
        }
    }

    /// Quotient and remainder of division by a non-zero `d` (bit by bit past the
    /// first 128 bits; only large intermediate values come here).
    pub fn div_rem(self, d: u128) -> (U256, u128) {
        debug_assert!(d != 0);
        if self.hi == 0 {
            return (U256::from_u128(self.lo / d), self.lo % d);
        }
        let mut q = U256::ZERO;
        let mut r: u128 = 0;
        let bits = 256 - self.hi.leading_zeros();
        for i in (0..bits).rev() {
            let bit = if i >= 128 {
                (self.hi >> (i - 128)) & 1
            } else {
                (self.lo >> i) & 1
            };
            // r < d, so 2r + bit < 2d; the bit shifted out of r says the true value
            // passed 2^128 and so certainly reached d.
            let carry = r >> 127;
            let next = (r << 1) | bit;
            if carry == 1 || next >= d {
                r = next.wrapping_sub(d);
                if i >= 128 {
                    q.hi |= 1 << (i - 128);
                } else {
                    q.lo |= 1 << i;
                }
            } else {
                r = next;
            }
        }
        (q, r)
    }

    /// `self / 10^n`, truncated.
    pub fn div_pow10(self, mut n: u32) -> U256 {
        let mut v = self;
        while n > 0 && v != U256::ZERO {
            let step = n.min(38);
            v = v.div_rem(POW10[step as usize]).0;
            n -= step;
        }
        if n > 0 {
            U256::ZERO
        } else {
            v
        }
    }

    /// A lower bound on the number of decimal digits (exact below 2^128).
    pub fn digits_at_least(self) -> u32 {
        match self.to_u128() {
            Some(0) => 0,
            Some(v) => v.ilog10() + 1,
            None => {
                // 2^(bits-1) <= v, and log10(2) > 0.30102.
                let bits = 256 - self.hi.leading_zeros();
                (bits - 1) * 30102 / 100000 + 1
            }
        }
    }
}

impl PartialOrd for U256 {
    fn partial_cmp(&self, o: &U256) -> Option<Ordering> {
        Some(self.cmp(o))
    }
}

impl Ord for U256 {
    fn cmp(&self, o: &U256) -> Ordering {
        self.hi.cmp(&o.hi).then(self.lo.cmp(&o.lo))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wide_product_and_division_round_trip() {
        let a = POW10[38] - 1;
        let b = 12345678901234567890123456789u128;
        let p = U256::mul_wide(a, b);
        assert!(p.hi > 0);
        let (q, r) = p.div_rem(b);
        assert_eq!((q.to_u128(), r), (Some(a), 0));
        let (q, r) = p.checked_add(U256::from_u128(7)).unwrap().div_rem(a);
        assert_eq!((q.to_u128(), r), (Some(b), 7));
        // A divisor above 2^127 exercises the carry out of the remainder.
        let d = u128::MAX - 5;
        let (q, r) = U256::mul_wide(d, 3)
            .checked_add(U256::from_u128(4))
            .unwrap()
            .div_rem(d);
        assert_eq!((q.to_u128(), r), (Some(3), 4));
    }

    #[test]
    fn powers_of_ten() {
        let x = U256::from_u128(123).checked_mul_pow10(70).unwrap();
        assert_eq!(x.div_pow10(70).to_u128(), Some(123));
        assert_eq!(x.div_pow10(72).to_u128(), Some(1));
        assert!(U256::from_u128(2).checked_mul_pow10(77).is_none());
        assert!(x.digits_at_least() <= 73);
        assert!(x.digits_at_least() >= 60);
        assert_eq!(U256::from_u128(999).digits_at_least(), 3);
        assert_eq!(
            U256::from_u128(5).sub(U256::from_u128(3)).to_u128(),
            Some(2)
        );
    }
}
