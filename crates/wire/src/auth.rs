//! Password checks for the two authentication plugins Strata speaks, and what the
//! server keeps for them.
//!
//! - `mysql_native_password`: the client proves the password with
//!   `SHA1(pw) XOR SHA1(salt || SHA1(SHA1(pw)))`.
//! - `caching_sha2_password` (MySQL 8's default plugin): the client first sends
//!   `SHA256(pw) XOR SHA256(SHA256(SHA256(pw)) || salt)`. The server can check that
//!   only with `SHA256(SHA256(pw))` in its in-memory cache ([`Sha2Cache`]), which is empty
//!   after a start: then ("full authentication") the client must send the password
//!   itself, in clear over TLS or the unix socket, or else XORed with the salt and
//!   encrypted with the server's RSA public key (RSA-OAEP with SHA-1, [`RsaKeys`]),
//!   which it may ask for first. A successful full authentication fills the cache, so
//!   the next login of that user takes the fast path.
//!
//! The server never keeps a password, only what MySQL 8 stores in
//! `mysql.user.authentication_string` ([`hash_native`], [`hash_sha2`]): for
//! mysql_native_password `*` + hex `SHA1(SHA1(pw))`, enough to check a scramble; for
//! caching_sha2_password `$A$005$` + a 20-character salt + the 43-character SHA-256
//! crypt (Drepper's algorithm, 5000 rounds) of the password, checked against the clear
//! password of a full authentication ([`sha2_matches`]).

use parking_lot::Mutex;
use rsa::pkcs1::DecodeRsaPrivateKey;
use rsa::pkcs8::{DecodePrivateKey, DecodePublicKey, EncodePublicKey, LineEnding};
use rsa::{Oaep, RsaPrivateKey, RsaPublicKey};
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use strata_types::credential::{same, sha256};

pub const NATIVE: &str = "mysql_native_password";
pub const SHA2: &str = "caching_sha2_password";

/// `SHA256(SHA256(pw))`: what the cache holds for a user.
fn double_sha256(password: &[u8]) -> [u8; 32] {
    sha256(&[&sha256(&[password])])
}

pub use strata_types::credential::{hash_native, hash_sha2, native_matches_hash, sha2_matches};

/// A `mysql_native_password` response checked against the configured password.
pub fn native_matches(salt: &[u8; 20], response: &[u8], password: &str) -> bool {
    if password.is_empty() {
        return response.is_empty() || response == [0];
    }
    mysql_common::auth::plugins::mysql_native_password::scramble_native(salt, password.as_bytes())
        .is_some_and(|s| same(&s, response))
}

/// caching_sha2_password's fast-authentication cache: account (`user@host`) →
/// `SHA256(SHA256(pw))`, with the stored credential it was proved against.
#[derive(Default)]
pub struct Sha2Cache {
    entries: Mutex<HashMap<String, (String, [u8; 32])>>,
}

impl Sha2Cache {
    /// The fast path: true only when the account has an entry, it belongs to the
    /// credential stored now, and the client's scramble proves that password.
    pub fn fast_auth(&self, account: &str, stored: &str, salt: &[u8; 20], response: &[u8]) -> bool {
        let Some((proved, h2)) = self.entries.lock().get(account).cloned() else {
            return false;
        };
        // An entry left from an older password is worthless (MySQL drops it when the
        // password changes).
        if proved != stored || response.len() != 32 {
            return false;
        }
        let mask = sha256(&[&h2, salt]);
        let mut h1 = [0u8; 32];
        for (i, b) in h1.iter_mut().enumerate() {
            *b = response[i] ^ mask[i];
        }
        same(&sha256(&[&h1]), &h2)
    }

    /// After a successful full authentication of `password` against `stored`.
    pub fn remember(&self, account: &str, stored: &str, password: &[u8]) {
        self.entries.lock().insert(
            account.to_string(),
            (stored.to_string(), double_sha256(password)),
        );
    }

    pub fn len(&self) -> usize {
        self.entries.lock().len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// The password a client sent in full authentication, in clear (over a secure
/// transport): the bytes up to the terminating NUL.
pub fn clear_password(payload: &[u8]) -> &[u8] {
    payload.strip_suffix(&[0]).unwrap_or(payload)
}

/// The RSA key pair of caching_sha2_password (`caching_sha2_password_private_key_path`,
/// `caching_sha2_password_public_key_path`).
pub struct RsaKeys {
    pub private_path: PathBuf,
    pub public_path: PathBuf,
    private: RsaPrivateKey,
    /// Sent as is to a client that asks for it (AuthMoreData `01` + the PEM text).
    public_pem: String,
}

impl RsaKeys {
    /// Loads the pair; the private key may be PKCS#1 (`BEGIN RSA PRIVATE KEY`, what
    /// MySQL writes) or PKCS#8. The public key must be the private key's.
    pub fn load(private: &Path, public: &Path) -> Result<RsaKeys, String> {
        let read = |p: &Path| {
            std::fs::read_to_string(p).map_err(|e| format!("cannot read {}: {e}", p.display()))
        };
        let private_text = read(private)?;
        let key = RsaPrivateKey::from_pkcs1_pem(&private_text)
            .or_else(|_| RsaPrivateKey::from_pkcs8_pem(&private_text))
            .map_err(|e| format!("{}: not an RSA private key: {e}", private.display()))?;
        let public_text = read(public)?;
        let pubkey = RsaPublicKey::from_public_key_pem(&public_text)
            .map_err(|e| format!("{}: not an RSA public key: {e}", public.display()))?;
        if pubkey != key.to_public_key() {
            return Err(format!(
                "{} is not the public key of {}",
                public.display(),
                private.display()
            ));
        }
        // Sent in the canonical form, whatever the file's line endings.
        let public_pem = pubkey
            .to_public_key_pem(LineEnding::LF)
            .map_err(|e| format!("{}: {e}", public.display()))?;
        Ok(RsaKeys {
            private_path: private.to_path_buf(),
            public_path: public.to_path_buf(),
            private: key,
            public_pem,
        })
    }

    pub fn public_pem(&self) -> &str {
        &self.public_pem
    }

    /// The password inside an encrypted full-authentication answer: RSA-OAEP (SHA-1)
    /// decrypted, XORed with the salt repeated, up to its NUL. None when it does not
    /// decrypt (a wrong key or garbage).
    pub fn decrypt_password(&self, ciphertext: &[u8], salt: &[u8; 20]) -> Option<Vec<u8>> {
        let mut plain = self
            .private
            .decrypt_blinded(
                &mut rand::rngs::OsRng,
                Oaep::new::<sha1::Sha1>(),
                ciphertext,
            )
            .ok()?;
        for (i, b) in plain.iter_mut().enumerate() {
            *b ^= salt[i % salt.len()];
        }
        Some(clear_password(&plain).to_vec())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const SALT: [u8; 20] = *b"abcdefghijklmnopqrst";

    #[test]
    fn native_hash_checks_scrambles() {
        // MySQL's PASSWORD('secret') / authentication_string of IDENTIFIED BY 'secret'.
        assert_eq!(
            hash_native("secret"),
            "*14E65567ABDB5135D0CFD9A70B3032C179A49EE7"
        );
        let r =
            mysql_common::auth::plugins::mysql_native_password::scramble_native(&SALT, b"secret")
                .unwrap();
        assert!(native_matches_hash(&SALT, &r, &hash_native("secret")));
        assert!(!native_matches_hash(&SALT, &r, &hash_native("other")));
        assert!(native_matches_hash(&SALT, &[], ""));
        assert!(!native_matches_hash(&SALT, &r, ""));
        assert!(!native_matches_hash(&SALT, &r, "*zz"));
    }

    #[test]
    fn native_scramble() {
        let r =
            mysql_common::auth::plugins::mysql_native_password::scramble_native(&SALT, b"secret")
                .unwrap();
        assert!(native_matches(&SALT, &r, "secret"));
        assert!(!native_matches(&SALT, &r, "other"));
        assert!(native_matches(&SALT, &[], ""));
        assert!(!native_matches(&SALT, &r, ""));
    }

    #[test]
    fn sha2_fast_path_needs_a_cache_entry() {
        let cache = Sha2Cache::default();
        let r =
            mysql_common::auth::plugins::caching_sha2_password::scramble_sha256(&SALT, b"secret")
                .unwrap();
        let stored = hash_sha2("secret");
        assert!(!cache.fast_auth("u@%", &stored, &SALT, &r), "empty cache");
        cache.remember("u@%", &stored, b"secret");
        assert!(cache.fast_auth("u@%", &stored, &SALT, &r));
        let wrong =
            mysql_common::auth::plugins::caching_sha2_password::scramble_sha256(&SALT, b"nope")
                .unwrap();
        assert!(!cache.fast_auth("u@%", &stored, &SALT, &wrong));
        assert!(
            !cache.fast_auth("v@%", &stored, &SALT, &r),
            "another account"
        );
        assert!(
            !cache.fast_auth("u@%", &hash_sha2("secret"), &SALT, &r),
            "an entry of an old credential"
        );
    }

    #[test]
    fn rsa_round_trip_with_a_clients_encryption() {
        let dir = tempfile::tempdir().unwrap();
        let (private, public, _) = crate::certs::ensure_rsa_keys(dir.path()).unwrap();
        let keys = RsaKeys::load(&private, &public).unwrap();
        // What a client sends: (password NUL) XOR salt, RSA-OAEP encrypted with the
        // public key it was given (mysql_common's client-side encryption).
        let mut plain = b"s3cret\0".to_vec();
        for (i, b) in plain.iter_mut().enumerate() {
            *b ^= SALT[i % 20];
        }
        let ct = mysql_common::crypto::encrypt(&plain, keys.public_pem().as_bytes()).unwrap();
        assert_eq!(keys.decrypt_password(&ct, &SALT).unwrap(), b"s3cret");
        assert!(keys.decrypt_password(&ct[1..], &SALT).is_none());
        assert!(keys.decrypt_password(b"garbage", &SALT).is_none());
    }

    #[test]
    fn mismatched_public_key_is_refused() {
        let a = tempfile::tempdir().unwrap();
        let b = tempfile::tempdir().unwrap();
        let (pa, _, _) = crate::certs::ensure_rsa_keys(a.path()).unwrap();
        let (_, pb, _) = crate::certs::ensure_rsa_keys(b.path()).unwrap();
        let err = RsaKeys::load(&pa, &pb).err().unwrap();
        assert!(err.contains("not the public key"), "{err}");
    }
}
