//! Host patterns of accounts (`user@host`) and MySQL's matching order.
//!
//! A pattern is `%`, a name or an IP with `%` / `_` wildcards (`192.168.%`,
//! `%.example.com`), `localhost`, or `ip/netmask` (`10.0.0.0/255.0.0.0`). A client is
//! known by its address and, as MySQL's name resolution gives for loopback, the name
//! `localhost` (the unix socket and 127.0.0.1 / ::1). No DNS lookups are made, as with
//! MySQL's `skip_name_resolve`, except that loopback is `localhost`.
//!
//! Order (MySQL's ACL sort): the most specific host first — a host without wildcards,
//! then wildcard patterns by the length of their literal prefix, `%` last — and for the
//! same host a named user before the anonymous `''`. A login takes the first account
//! that matches, even when a later one would have the password it sent.

use std::net::IpAddr;

/// Who is connecting: None for the unix socket.
#[derive(Clone, Copy, Debug)]
pub struct Client {
    pub ip: Option<IpAddr>,
}

impl Client {
    fn is_local(&self) -> bool {
        self.ip.is_none_or(|ip| ip.is_loopback())
    }
}

/// Whether `pattern` (an account's host) matches `client`.
pub fn matches(pattern: &str, client: Client) -> bool {
    if pattern == "%" {
        return true;
    }
    if client.is_local() && like(pattern, "localhost") {
        return true;
    }
    let Some(ip) = client.ip else {
        return false;
    };
    if let Some((net, mask)) = pattern.split_once('/') {
        return match (net.parse::<IpAddr>(), mask.parse::<IpAddr>(), ip) {
            (Ok(IpAddr::V4(n)), Ok(IpAddr::V4(m)), IpAddr::V4(a)) => {
                u32::from(a) & u32::from(m) == u32::from(n)
            }
            _ => false,
        };
    }
    // An IPv4 client over an IPv6 socket is matched by its IPv4 text.
    let ip = match ip {
        IpAddr::V6(v6) => v6.to_ipv4_mapped().map_or(ip, IpAddr::V4),
        v4 => v4,
    };
    like(pattern, &ip.to_string())
}

/// SQL LIKE with `%` and `_`, ASCII case-insensitive (host names are), `\` escaping.
fn like(pattern: &str, text: &str) -> bool {
    let p: Vec<char> = pattern.chars().collect();
    let t: Vec<char> = text.chars().collect();
    // Iterative matching with one backtrack point for the last `%`.
    let (mut i, mut j) = (0, 0);
    let mut star: Option<(usize, usize)> = None;
    while j < t.len() {
        if i < p.len() && p[i] == '%' {
            star = Some((i, j));
            i += 1;
            continue;
        }
        let (pc, step) = if i + 1 < p.len() && p[i] == '\\' {
            (Some(p[i + 1]), 2)
        } else {
            (p.get(i).copied(), 1)
        };
        let ok = match pc {
            Some('_') if step == 1 => true,
            Some(c) => c.eq_ignore_ascii_case(&t[j]),
            None => false,
        };
        if ok {
            i += step;
            j += 1;
        } else if let Some((si, sj)) = star {
            i = si + 1;
            j = sj + 1;
            star = Some((si, sj + 1));
        } else {
            return false;
        }
    }
    while i < p.len() && p[i] == '%' {
        i += 1;
    }
    i == p.len()
}

/// The sort key of an account: smaller sorts first (more specific).
pub fn order_key(user: &str, host: &str) -> (u8, usize, u8) {
    let wildcard = host.find(['%', '_']);
    let (rank, prefix) = match wildcard {
        None => (0, usize::MAX - host.len()),
        Some(_) if host == "%" => (2, 0),
        Some(at) => (1, usize::MAX - at),
    };
    (rank, prefix, user.is_empty() as u8)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(ip: &str) -> Client {
        Client {
            ip: Some(ip.parse().unwrap()),
        }
    }

    #[test]
    fn patterns() {
        let socket = Client { ip: None };
        assert!(matches("%", socket));
        assert!(matches("localhost", socket));
        assert!(matches("localhost", at("127.0.0.1")));
        assert!(matches("LOCALHOST", at("::1")));
        assert!(!matches("localhost", at("10.1.2.3")));
        assert!(matches("10.1.%", at("10.1.2.3")));
        assert!(!matches("10.1.%", at("10.11.2.3")));
        assert!(matches("10.1.2._", at("10.1.2.3")));
        assert!(!matches("10.1.2._", at("10.1.2.33")));
        assert!(matches("127.0.0.1", at("127.0.0.1")));
        assert!(matches("10.0.0.0/255.0.0.0", at("10.200.1.1")));
        assert!(!matches("10.0.0.0/255.0.0.0", at("11.0.0.1")));
        assert!(matches("192.168.1.5", at("::ffff:192.168.1.5")));
        assert!(!matches("192.168.1.5", socket));
        assert!(like("a%b%c", "aXXbYYc"));
        assert!(!like("a%b%c", "aXXbYY"));
        assert!(like("a\\_b", "a_b"));
        assert!(!like("a\\_b", "axb"));
    }

    #[test]
    fn most_specific_host_first_then_named_user() {
        let mut v = vec![
            ("", "%"),
            ("u", "%"),
            ("u", "10.1.%"),
            ("u", "10.%"),
            ("u", "localhost"),
            ("", "localhost"),
        ];
        v.sort_by_key(|(u, h)| order_key(u, h));
        assert_eq!(
            v,
            vec![
                ("u", "localhost"),
                ("", "localhost"),
                ("u", "10.1.%"),
                ("u", "10.%"),
                ("u", "%"),
                ("", "%"),
            ]
        );
    }
}
