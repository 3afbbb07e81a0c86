//! Startup of the server's transport security: the TLS certificate (given, or generated
//! into the data directory at first start), caching_sha2_password's RSA key pair
//! (likewise), the greeting's authentication plugin, the unix socket, and the system
//! variables that report them (`have_ssl`, `ssl_cert`, `ssl_key`, `ssl_ca`,
//! `tls_version`, `require_secure_transport`, `caching_sha2_password_*_key_path`,
//! `default_authentication_plugin`, `socket`). The wire crate does the work; this
//! only decides which files it uses.

use crate::config::Settings;
use std::os::unix::net::{UnixListener, UnixStream};
use std::path::{Path, PathBuf};
use strata_session::Server;
use strata_types::{log_note, Value};
use strata_wire::{certs, security, tls::Tls, Security};

fn path_text(p: &Path) -> Value {
    Value::str(&p.display().to_string())
}

/// A relative key path names a file in the data directory (MySQL's rule for the RSA
/// key paths).
fn in_datadir(datadir: &Path, p: &Path) -> PathBuf {
    if p.is_absolute() {
        p.to_path_buf()
    } else {
        datadir.join(p)
    }
}

/// Loads (or first generates) what connections need to be secured and authenticated,
/// and sets the variables that report it.
pub fn prepare(s: &Settings, server: &Server) -> Result<Security, String> {
    let datadir = &server.config.datadir;
    let g = &server.globals;
    let tls = if s.ssl {
        let (cert, key, ca) = match (&s.ssl_cert, &s.ssl_key) {
            (Some(cert), Some(key)) => (cert.clone(), key.clone(), s.ssl_ca.clone()),
            _ => {
                let (files, made) = certs::ensure_certificates(datadir, &server.config.hostname)?;
                if made {
                    log_note!(
                        "generated a self-signed CA and server certificate: {}, {}, {}",
                        files.ca.display(),
                        files.cert.display(),
                        files.key.display()
                    );
                }
                (
                    files.cert,
                    files.key,
                    Some(s.ssl_ca.clone().unwrap_or(files.ca)),
                )
            }
        };
        Some(Tls::load(&cert, &key, ca.as_deref())?)
    } else {
        None
    };
    let private = in_datadir(datadir, &s.rsa_private_key);
    let public = in_datadir(datadir, &s.rsa_public_key);
    if !private.exists() && !public.exists() {
        // Generated only where MySQL would: the default names in the data directory.
        let defaults =
            private == datadir.join("private_key.pem") && public == datadir.join("public_key.pem");
        if !defaults {
            return Err(format!(
                "caching_sha2_password key files {} and {} do not exist",
                private.display(),
                public.display()
            ));
        }
        certs::ensure_rsa_keys(datadir)?;
        log_note!(
            "generated the caching_sha2_password RSA key pair: {}, {}",
            private.display(),
            public.display()
        );
    }
    let rsa = strata_wire::auth::RsaKeys::load(&private, &public)?;
    let default_plugin = security::plugin_named(&s.default_authentication_plugin)
        .ok_or_else(|| format!("unknown plugin {}", s.default_authentication_plugin))?;

    let (have, version) = if tls.is_some() {
        ("YES", strata_wire::tls::TLS_VERSIONS)
    } else {
        ("DISABLED", "")
    };
    g.set("have_ssl", Value::str(have));
    g.set("have_openssl", Value::str(have));
    g.set("tls_version", Value::str(version));
    if let Some(t) = &tls {
        g.set("ssl_cert", path_text(&t.cert));
        g.set("ssl_key", path_text(&t.key));
        g.set(
            "ssl_ca",
            t.ca.as_deref().map(path_text).unwrap_or(Value::str("")),
        );
    }
    g.set(
        "require_secure_transport",
        Value::Int(s.require_secure_transport as i64),
    );
    g.set(
        "caching_sha2_password_private_key_path",
        path_text(&private),
    );
    g.set("caching_sha2_password_public_key_path", path_text(&public));
    g.set("default_authentication_plugin", Value::str(default_plugin));
    Ok(Security {
        tls,
        rsa: Some(rsa),
        sha2_cache: Default::default(),
        default_plugin,
    })
}

/// Listens on the unix socket `path`. A socket file left by a server that is gone is
/// replaced; one a server still answers on is an error.
pub fn bind_socket(path: &Path, server: &Server) -> Result<UnixListener, String> {
    if path.exists() {
        if UnixStream::connect(path).is_ok() {
            return Err(format!(
                "another server is listening on the socket {}",
                path.display()
            ));
        }
        std::fs::remove_file(path)
            .map_err(|e| format!("cannot remove the stale socket {}: {e}", path.display()))?;
    }
    let l = UnixListener::bind(path)
        .map_err(|e| format!("cannot listen on the socket {}: {e}", path.display()))?;
    server.globals.set("socket", path_text(path));
    Ok(l)
}

/// The startup lines about TLS and authentication.
pub fn log_startup(s: &Settings, sec: &Security) {
    match &sec.tls {
        Some(t) => log_note!(
            "TLS ({}): certificate {}, key {}, CA {}; require_secure_transport {}",
            strata_wire::tls::TLS_VERSIONS,
            t.cert.display(),
            t.key.display(),
            t.ca.as_deref()
                .map_or("(none)".into(), |p| p.display().to_string()),
            if s.require_secure_transport {
                "ON"
            } else {
                "OFF"
            }
        ),
        None => log_note!("TLS: disabled (--ssl=OFF)"),
    }
    if let Some(k) = &sec.rsa {
        log_note!(
            "authentication: greeting proposes {}; caching_sha2_password RSA keys {}, {}",
            sec.default_plugin,
            k.private_path.display(),
            k.public_path.display()
        );
    }
    if let Some(p) = &s.socket {
        log_note!("also listening on the unix socket {}", p.display());
    }
}
