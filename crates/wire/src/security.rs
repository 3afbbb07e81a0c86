//! What every connection shares for securing and authenticating itself: the TLS
//! identity (None: CLIENT_SSL is not offered), caching_sha2_password's RSA key pair
//! and its fast-authentication cache, and the plugin the greeting proposes.
//! Built once at startup by the server binary and handed to [`crate::serve`].

use crate::auth::{RsaKeys, Sha2Cache, NATIVE, SHA2};
use crate::tls::Tls;

pub struct Security {
    pub tls: Option<Tls>,
    pub rsa: Option<RsaKeys>,
    pub sha2_cache: Sha2Cache,
    /// `default_authentication_plugin`: the plugin named in the greeting, whose
    /// scramble a client sends first.
    pub default_plugin: &'static str,
}

impl Default for Security {
    fn default() -> Self {
        Security {
            tls: None,
            rsa: None,
            sha2_cache: Sha2Cache::default(),
            default_plugin: NATIVE,
        }
    }
}

/// A plugin name as `default_authentication_plugin` takes it.
pub fn plugin_named(name: &str) -> Option<&'static str> {
    [NATIVE, SHA2]
        .into_iter()
        .find(|p| p.eq_ignore_ascii_case(name))
}
