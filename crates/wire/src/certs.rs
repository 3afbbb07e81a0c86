//! Key material the server makes for itself at first start, as MySQL 8's
//! `auto_generate_certs` and `caching_sha2_password_auto_generate_rsa_keys` do, in the
//! data directory:
//! - `ca.pem`, `ca-key.pem`: a self-signed CA;
//! - `server-cert.pem`, `server-key.pem`: the server's certificate, signed by that CA,
//!   naming `localhost`, `127.0.0.1`, `::1` and the host name (so a client can verify
//!   it with `--ssl-verify-server-cert` against `ca.pem`);
//! - `client-cert.pem`, `client-key.pem`: a client certificate signed by the same CA;
//! - `private_key.pem`, `public_key.pem`: the RSA pair (2048 bits) with which a client
//!   on a connection without TLS sends its password for caching_sha2_password's full
//!   authentication.
//!
//! As MySQL, each set is made only when none of its files exists (a data directory
//! holding some of them is the operator's doing, and is left alone). Private keys are
//! created with mode 0600; certificates and the public key are 0644. Certificates use
//! ECDSA P-256 keys (what the ring backend generates) and are valid for ten years.

use rcgen::{
    BasicConstraints, CertificateParams, DnType, ExtendedKeyUsagePurpose, IsCa, KeyPair,
    KeyUsagePurpose,
};
use rsa::pkcs1::EncodeRsaPrivateKey;
use rsa::pkcs8::{EncodePublicKey, LineEnding};
use std::io::Write;
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};

/// The certificate files of a data directory.
pub struct CertFiles {
    pub ca: PathBuf,
    pub cert: PathBuf,
    pub key: PathBuf,
}

const CERT_SET: [&str; 6] = [
    "ca.pem",
    "ca-key.pem",
    "server-cert.pem",
    "server-key.pem",
    "client-cert.pem",
    "client-key.pem",
];

/// Writes a new file (never replacing one) with `mode`.
fn write_new(path: &Path, text: &str, mode: u32) -> Result<(), String> {
    let mut f = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(mode)
        .open(path)
        .map_err(|e| format!("cannot create {}: {e}", path.display()))?;
    f.write_all(text.as_bytes())
        .and_then(|()| f.sync_all())
        .map_err(|e| format!("cannot write {}: {e}", path.display()))
}

/// Today, as the certificates' start of validity.
fn today() -> (i32, u8, u8) {
    let secs = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs() as i64)
        .unwrap_or(0);
    let d = strata_types::datetime::DateTime::from_unix(secs, 0);
    (d.year as i32, d.month, d.day)
}

fn params(
    names: Vec<String>,
    common_name: &str,
    valid_from: (i32, u8, u8),
) -> Result<CertificateParams, String> {
    let mut p = CertificateParams::new(names).map_err(|e| format!("certificate: {e}"))?;
    p.distinguished_name
        .push(DnType::CommonName, common_name.to_string());
    let (y, m, d) = valid_from;
    p.not_before = rcgen::date_time_ymd(y, m, d);
    p.not_after = rcgen::date_time_ymd(y + 10, m, d.min(28));
    Ok(p)
}

/// Makes the CA, server and client certificates in `dir` unless one of their files is
/// already there. Returns the files to use and whether they were made now.
pub fn ensure_certificates(dir: &Path, hostname: &str) -> Result<(CertFiles, bool), String> {
    let files = CertFiles {
        ca: dir.join("ca.pem"),
        cert: dir.join("server-cert.pem"),
        key: dir.join("server-key.pem"),
    };
    if CERT_SET.iter().any(|f| dir.join(f).exists()) {
        return Ok((files, false));
    }
    let err = |e: rcgen::Error| format!("generating certificates: {e}");
    let version = crate::conn::SERVER_VERSION.trim_end_matches("-Strata");
    let from = today();

    let ca_key = KeyPair::generate().map_err(err)?;
    let mut ca = params(
        vec![],
        &format!("Strata_Server_{version}_Auto_Generated_CA_Certificate"),
        from,
    )?;
    ca.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    ca.key_usages = vec![
        KeyUsagePurpose::KeyCertSign,
        KeyUsagePurpose::CrlSign,
        KeyUsagePurpose::DigitalSignature,
    ];
    let ca_cert = ca.self_signed(&ca_key).map_err(err)?;

    let mut names = vec!["localhost".to_string(), "127.0.0.1".into(), "::1".into()];
    if !hostname.is_empty() && !names.iter().any(|n| n == hostname) {
        names.push(hostname.to_string());
    }
    let server_key = KeyPair::generate().map_err(err)?;
    let mut server = params(
        names,
        &format!("Strata_Server_{version}_Auto_Generated_Server_Certificate"),
        from,
    )?;
    server.extended_key_usages = vec![ExtendedKeyUsagePurpose::ServerAuth];
    let server_cert = server
        .signed_by(&server_key, &ca_cert, &ca_key)
        .map_err(err)?;

    let client_key = KeyPair::generate().map_err(err)?;
    let mut client = params(
        vec![],
        &format!("Strata_Server_{version}_Auto_Generated_Client_Certificate"),
        from,
    )?;
    client.extended_key_usages = vec![ExtendedKeyUsagePurpose::ClientAuth];
    let client_cert = client
        .signed_by(&client_key, &ca_cert, &ca_key)
        .map_err(err)?;

    write_new(&dir.join("ca-key.pem"), &ca_key.serialize_pem(), 0o600)?;
    write_new(
        &dir.join("server-key.pem"),
        &server_key.serialize_pem(),
        0o600,
    )?;
    write_new(
        &dir.join("client-key.pem"),
        &client_key.serialize_pem(),
        0o600,
    )?;
    write_new(&dir.join("server-cert.pem"), &server_cert.pem(), 0o644)?;
    write_new(&dir.join("client-cert.pem"), &client_cert.pem(), 0o644)?;
    // Last: its presence is what says the set is complete.
    write_new(&dir.join("ca.pem"), &ca_cert.pem(), 0o644)?;
    Ok((files, true))
}

/// Makes `private_key.pem` / `public_key.pem` in `dir` unless one of them exists.
/// Returns (private, public) and whether they were made now.
pub fn ensure_rsa_keys(dir: &Path) -> Result<(PathBuf, PathBuf, bool), String> {
    let private = dir.join("private_key.pem");
    let public = dir.join("public_key.pem");
    if private.exists() || public.exists() {
        return Ok((private, public, false));
    }
    let key = rsa::RsaPrivateKey::new(&mut rand::rngs::OsRng, 2048)
        .map_err(|e| format!("generating the RSA key pair: {e}"))?;
    let private_pem = key
        .to_pkcs1_pem(LineEnding::LF)
        .map_err(|e| format!("encoding the RSA private key: {e}"))?;
    let public_pem = key
        .to_public_key()
        .to_public_key_pem(LineEnding::LF)
        .map_err(|e| format!("encoding the RSA public key: {e}"))?;
    write_new(&private, &private_pem, 0o600)?;
    write_new(&public, &public_pem, 0o644)?;
    Ok((private, public, true))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    #[test]
    fn generated_once_with_private_modes_and_loadable() {
        let dir = tempfile::tempdir().unwrap();
        let (files, made) = ensure_certificates(dir.path(), "testhost").unwrap();
        assert!(made);
        for f in CERT_SET {
            let mode = std::fs::metadata(dir.path().join(f))
                .unwrap()
                .permissions()
                .mode()
                & 0o777;
            let want = if f.ends_with("-key.pem") {
                0o600
            } else {
                0o644
            };
            assert_eq!(mode, want, "{f}");
        }
        let first = std::fs::read(&files.cert).unwrap();
        let (_, made) = ensure_certificates(dir.path(), "testhost").unwrap();
        assert!(!made, "an existing set is kept");
        assert_eq!(std::fs::read(&files.cert).unwrap(), first);
        crate::tls::Tls::load(&files.cert, &files.key, Some(&files.ca)).unwrap();

        let (private, public, made) = ensure_rsa_keys(dir.path()).unwrap();
        assert!(made);
        let mode = std::fs::metadata(&private).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o600);
        crate::auth::RsaKeys::load(&private, &public).unwrap();
        assert!(!ensure_rsa_keys(dir.path()).unwrap().2);
    }

    #[test]
    fn a_partial_set_is_left_alone() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("server-key.pem"), "x").unwrap();
        let (_, made) = ensure_certificates(dir.path(), "h").unwrap();
        assert!(!made);
        assert!(!dir.path().join("ca.pem").exists());
    }
}
