//! The stored credential forms of MySQL 8's two authentication plugins, as
//! `mysql.user.authentication_string` holds them: mysql_native_password `*` + hex
//! `SHA1(SHA1(pw))`; caching_sha2_password `$A$005$` + a 20-character salt + the
//! 43-character SHA-256 crypt (glibc's `$5$` scheme, 5000 rounds) of the password.
//! Shared vocabulary: the session computes them for CREATE USER / ALTER USER, the wire
//! layer checks logins against them; the password itself is never kept.

use sha2::{Digest, Sha256};

/// Compares without stopping at the first difference (a login's check must not
/// tell by its time how much of a hash matched).
pub fn same(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |d, (x, y)| d | (x ^ y)) == 0
}

/// SHA-256 of the parts one after another.
pub fn sha256(parts: &[&[u8]]) -> [u8; 32] {
    let mut h = Sha256::new();
    for p in parts {
        h.update(p);
    }
    h.finalize().into()
}

/// mysql_native_password's stored form: `*` + upper-case hex of `SHA1(SHA1(pw))`, or
/// the empty string for an empty password.
pub fn hash_native(password: &str) -> String {
    if password.is_empty() {
        return String::new();
    }
    let stage1 = sha1::Sha1::digest(password.as_bytes());
    let stage2 = sha1::Sha1::digest(stage1);
    let mut out = String::with_capacity(41);
    out.push('*');
    for b in stage2 {
        out.push_str(&format!("{b:02X}"));
    }
    out
}

/// A mysql_native_password scramble checked against the stored `*HEX` form: the
/// client sent `SHA1(pw) XOR SHA1(salt || SHA1(SHA1(pw)))`, so XORing back gives a
/// candidate `SHA1(pw)` whose SHA1 must be the stored one.
pub fn native_matches_hash(salt: &[u8; 20], response: &[u8], stored: &str) -> bool {
    if stored.is_empty() {
        return response.is_empty() || response == [0];
    }
    let Some(stage2) = unhex(stored.strip_prefix('*').unwrap_or("")) else {
        return false;
    };
    if stage2.len() != 20 || response.len() != 20 {
        return false;
    }
    let mut h = sha1::Sha1::new();
    h.update(salt);
    h.update(&stage2);
    let mask = h.finalize();
    let stage1: Vec<u8> = response
        .iter()
        .zip(mask.iter())
        .map(|(a, b)| a ^ b)
        .collect();
    same(&sha1::Sha1::digest(&stage1), &stage2)
}

fn unhex(s: &str) -> Option<Vec<u8>> {
    if !s.len().is_multiple_of(2) {
        return None;
    }
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(s.get(i..i + 2)?, 16).ok())
        .collect()
}

/// caching_sha2_password's stored form for `password` with a fresh random salt
/// (empty for an empty password).
pub fn hash_sha2(password: &str) -> String {
    use rand::Rng;
    if password.is_empty() {
        return String::new();
    }
    let mut rng = rand::thread_rng();
    // Printable salt characters without `$`, so the stored text stays one line.
    let salt: Vec<u8> = (0..20)
        .map(|_| CRYPT_ALPHABET[rng.gen_range(0..64)])
        .collect();
    hash_sha2_with_salt(password, &salt)
}

/// `$A$005$` + salt + SHA-256 crypt of `password` with 5000 rounds.
pub fn hash_sha2_with_salt(password: &str, salt: &[u8]) -> String {
    let mut out = String::from("$A$005$");
    out.push_str(&String::from_utf8_lossy(salt));
    out.push_str(&sha256_crypt(password.as_bytes(), salt, 5000));
    out
}

/// A clear password (caching_sha2_password full authentication) checked against the
/// stored `$A$005$…` form.
pub fn sha2_matches(password: &[u8], stored: &str) -> bool {
    if stored.is_empty() {
        return password.is_empty();
    }
    let Some(rest) = stored.strip_prefix("$A$") else {
        return false;
    };
    let Some((rounds, body)) = rest.split_once('$') else {
        return false;
    };
    let Ok(rounds) = u32::from_str_radix(rounds, 16) else {
        return false;
    };
    let body = body.as_bytes();
    if body.len() != 20 + 43 || rounds == 0 || rounds > 0xFFF {
        return false;
    }
    let (salt, hash) = body.split_at(20);
    let mine = sha256_crypt(password, salt, rounds * 1000);
    same(mine.as_bytes(), hash)
}

const CRYPT_ALPHABET: &[u8; 64] =
    b"./0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";

/// SHA-256 crypt (the `$5$` scheme of glibc's crypt, which MySQL's caching_sha2_password
/// stores): the 43-character digest of `password` with `salt` after `rounds` rounds.
pub fn sha256_crypt(password: &[u8], salt: &[u8], rounds: u32) -> String {
    let plen = password.len();
    let b = sha256(&[password, salt, password]);
    let mut a = Sha256::new();
    a.update(password);
    a.update(salt);
    let mut n = plen;
    while n > 32 {
        a.update(b);
        n -= 32;
    }
    a.update(&b[..n]);
    let mut n = plen;
    while n > 0 {
        if n & 1 != 0 {
            a.update(b);
        } else {
            a.update(password);
        }
        n >>= 1;
    }
    let a: [u8; 32] = a.finalize().into();
    // P: SHA256(password repeated len times), stretched to len bytes.
    let mut dp = Sha256::new();
    for _ in 0..plen {
        dp.update(password);
    }
    let dp: [u8; 32] = dp.finalize().into();
    let p: Vec<u8> = (0..plen).map(|i| dp[i % 32]).collect();
    // S: SHA256(salt repeated 16 + a[0] times), stretched to the salt's length.
    let mut ds = Sha256::new();
    for _ in 0..16 + a[0] as usize {
        ds.update(salt);
    }
    let ds: [u8; 32] = ds.finalize().into();
    let s: Vec<u8> = (0..salt.len()).map(|i| ds[i % 32]).collect();
    let mut c = a;
    for i in 0..rounds {
        let mut h = Sha256::new();
        if i & 1 != 0 {
            h.update(&p);
        } else {
            h.update(c);
        }
        if i % 3 != 0 {
            h.update(&s);
        }
        if i % 7 != 0 {
            h.update(&p);
        }
        if i & 1 != 0 {
            h.update(c);
        } else {
            h.update(&p);
        }
        c = h.finalize().into();
    }
    let mut out = String::with_capacity(43);
    let mut put = |b2: u8, b1: u8, b0: u8, n: usize| {
        let mut w = ((b2 as u32) << 16) | ((b1 as u32) << 8) | b0 as u32;
        for _ in 0..n {
            out.push(CRYPT_ALPHABET[(w & 0x3f) as usize] as char);
            w >>= 6;
        }
    };
    for k in 0..10 {
        // MySQL's and glibc's byte order: triples (i, i+10, i+20) rotated by k.
        let (x, y, z) = (k, (k + 10) % 30, (k + 20) % 30);
        let t = [x, y, z];
        let r = (3 - k % 3) % 3;
        put(c[t[r]], c[t[(r + 1) % 3]], c[t[(r + 2) % 3]], 4);
    }
    put(0, c[31], c[30], 3);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sha256_crypt_matches_the_published_vectors() {
        // As `openssl passwd -5 -salt saltstring` and glibc crypt() compute them.
        assert_eq!(
            sha256_crypt(b"Hello world!", b"saltstring", 5000),
            "5B8vYYiY.CVt1RlTTf8KbXBH3hsxY/GNooZaBBGWEc5"
        );
        assert_eq!(
            sha256_crypt(b"Hello world!", b"saltstringsaltst", 10000),
            "3xv.VbSHBb41AL9AvLeujZkZRBAwqFMz2.opqey6IcA"
        );
        let stored = hash_sha2("secret");
        assert!(
            stored.starts_with("$A$005$") && stored.len() == 70,
            "{stored}"
        );
        assert!(sha2_matches(b"secret", &stored));
        assert!(!sha2_matches(b"secreT", &stored));
        assert!(sha2_matches(b"", ""));
        assert!(!sha2_matches(b"x", "$A$005$short"));
    }
}
