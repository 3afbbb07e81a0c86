//! TLS for client connections (MySQL's `--ssl-cert`, `--ssl-key`, `--ssl-ca`): the
//! rustls server configuration built from PEM files, the upgrade of a connection after
//! the client's SSLRequest packet, and the names the session reports (`Ssl_cipher`,
//! `Ssl_version`).
//!
//! Protocols are TLS 1.2 and 1.3 (MySQL 8.0.36's default `tls_version`); the crypto
//! backend is rustls' `ring` provider. With `--ssl-ca` a client may present a
//! certificate, which must then chain to that CA (MySQL asks for one and does not
//! require it); without it no client certificate is asked for.

use crate::transport::{Socket, TlsStream};
use rustls::crypto::CryptoProvider;
use rustls::server::WebPkiClientVerifier;
use rustls::{CipherSuite, ProtocolVersion, RootCertStore, ServerConfig, ServerConnection};
use rustls_pki_types::pem::PemObject;
use rustls_pki_types::{CertificateDer, PrivateKeyDer};
use std::io::{self, Read, Write};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Instant;

/// `tls_version` as MySQL 8.0.36 reports it.
pub const TLS_VERSIONS: &str = "TLSv1.2,TLSv1.3";

/// The server's TLS identity: the files it came from and the rustls configuration.
pub struct Tls {
    pub cert: PathBuf,
    pub key: PathBuf,
    pub ca: Option<PathBuf>,
    config: Arc<ServerConfig>,
}

fn provider() -> Arc<CryptoProvider> {
    Arc::new(rustls::crypto::ring::default_provider())
}

fn read_certs(path: &Path) -> Result<Vec<CertificateDer<'static>>, String> {
    let certs = CertificateDer::pem_file_iter(path)
        .map_err(|e| format!("{}: {e}", path.display()))?
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| format!("{}: {e}", path.display()))?;
    if certs.is_empty() {
        return Err(format!("{}: no certificate in the file", path.display()));
    }
    Ok(certs)
}

impl Tls {
    /// Loads the certificate chain, its private key and (optionally) the CA that client
    /// certificates must chain to. Every problem is reported with the file's name.
    pub fn load(cert: &Path, key: &Path, ca: Option<&Path>) -> Result<Tls, String> {
        let chain = read_certs(cert)?;
        let private =
            PrivateKeyDer::from_pem_file(key).map_err(|e| format!("{}: {e}", key.display()))?;
        let provider = provider();
        let builder = ServerConfig::builder_with_provider(provider.clone())
            .with_protocol_versions(&[&rustls::version::TLS13, &rustls::version::TLS12])
            .map_err(|e| format!("TLS: {e}"))?;
        let builder = match ca {
            Some(ca) => {
                let mut roots = RootCertStore::empty();
                for c in read_certs(ca)? {
                    roots.add(c).map_err(|e| format!("{}: {e}", ca.display()))?;
                }
                let verifier = WebPkiClientVerifier::builder_with_provider(roots.into(), provider)
                    .allow_unauthenticated()
                    .build()
                    .map_err(|e| format!("{}: {e}", ca.display()))?;
                builder.with_client_cert_verifier(verifier)
            }
            None => builder.with_no_client_auth(),
        };
        let config = builder
            .with_single_cert(chain, private)
            .map_err(|e| format!("{} and {}: {e}", cert.display(), key.display()))?;
        Ok(Tls {
            cert: cert.to_path_buf(),
            key: key.to_path_buf(),
            ca: ca.map(Path::to_path_buf),
            config: Arc::new(config),
        })
    }

    /// Runs the TLS handshake on `sock` (which the client's SSLRequest asked for),
    /// finishing by `deadline` (connect_timeout). `early` holds bytes of the client's
    /// first TLS records that were read together with the SSLRequest packet.
    pub(crate) fn accept(
        &self,
        mut sock: Socket,
        early: &[u8],
        deadline: Instant,
    ) -> io::Result<TlsStream> {
        let mut conn = ServerConnection::new(self.config.clone())
            .map_err(|e| io::Error::new(io::ErrorKind::InvalidData, e))?;
        let mut early = early;
        while !early.is_empty() {
            conn.read_tls(&mut early)?;
            conn.process_new_packets()
                .map_err(|e| io::Error::new(io::ErrorKind::InvalidData, e))?;
        }
        let mut io = DeadlineIo {
            sock: &mut sock,
            deadline,
        };
        while conn.is_handshaking() {
            conn.complete_io(&mut io)?;
        }
        Ok(TlsStream { conn, sock })
    }
}

/// The socket during the TLS handshake: each read and write may wait only for what is
/// left of the handshake's deadline, so a client trickling bytes cannot stretch it.
struct DeadlineIo<'a> {
    sock: &'a mut Socket,
    deadline: Instant,
}

impl DeadlineIo<'_> {
    fn arm(&mut self, read: bool) -> io::Result<()> {
        let left = self
            .deadline
            .checked_duration_since(Instant::now())
            .filter(|d| !d.is_zero())
            .ok_or(io::ErrorKind::TimedOut)?;
        if read {
            self.sock.set_read_timeout(Some(left))
        } else {
            self.sock.set_write_timeout(Some(left))
        }
    }
}

impl Read for DeadlineIo<'_> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        self.arm(true)?;
        self.sock.read(buf)
    }
}

impl Write for DeadlineIo<'_> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.arm(false)?;
        self.sock.write(buf)
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

/// What a TLS session reports: `Ssl_version` and `Ssl_cipher`, named as OpenSSL names
/// them (MySQL's clients and tools compare these strings).
pub fn session_names(s: &TlsStream) -> (String, String) {
    let version = match s.conn.protocol_version() {
        Some(ProtocolVersion::TLSv1_3) => "TLSv1.3",
        Some(ProtocolVersion::TLSv1_2) => "TLSv1.2",
        _ => "",
    };
    let cipher = s
        .conn
        .negotiated_cipher_suite()
        .map(|c| openssl_name(c.suite()))
        .unwrap_or_default();
    (version.to_string(), cipher)
}

/// OpenSSL's name of a cipher suite rustls negotiates (TLS 1.3 suites keep their IANA
/// names in OpenSSL; TLS 1.2 ones have OpenSSL's own).
fn openssl_name(s: CipherSuite) -> String {
    let name = match s {
        CipherSuite::TLS13_AES_256_GCM_SHA384 => "TLS_AES_256_GCM_SHA384",
        CipherSuite::TLS13_AES_128_GCM_SHA256 => "TLS_AES_128_GCM_SHA256",
        CipherSuite::TLS13_CHACHA20_POLY1305_SHA256 => "TLS_CHACHA20_POLY1305_SHA256",
        CipherSuite::TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384 => "ECDHE-ECDSA-AES256-GCM-SHA384",
        CipherSuite::TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256 => "ECDHE-ECDSA-AES128-GCM-SHA256",
        CipherSuite::TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256 => {
            "ECDHE-ECDSA-CHACHA20-POLY1305"
        }
        CipherSuite::TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384 => "ECDHE-RSA-AES256-GCM-SHA384",
        CipherSuite::TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256 => "ECDHE-RSA-AES128-GCM-SHA256",
        CipherSuite::TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256 => "ECDHE-RSA-CHACHA20-POLY1305",
        other => return format!("{other:?}"),
    };
    name.to_string()
}
