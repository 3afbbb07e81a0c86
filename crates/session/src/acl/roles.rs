//! The role graph (MySQL's `mysql.role_edges`): which roles an account reaches through
//! the roles granted to it, whether a new edge would close a loop (4027), the roles a
//! session starts with (default roles, or every granted one under
//! `activate_all_roles_on_login`), and the `mandatory_roles` list.

use super::store::Account;
use std::collections::BTreeSet;

pub type Name = (String, String);

/// `start` and every role granted to them, transitively, each once (roles that are
/// no longer accounts are skipped).
pub fn closure(accounts: &[Account], start: &[Name]) -> Vec<Name> {
    let mut seen: BTreeSet<Name> = BTreeSet::new();
    let mut out = Vec::new();
    let mut todo: Vec<Name> = start.to_vec();
    while let Some(r) = todo.pop() {
        if !seen.insert(r.clone()) {
            continue;
        }
        if let Some(a) = accounts.iter().find(|a| a.user == r.0 && a.host == r.1) {
            todo.extend(a.roles.keys().cloned());
            out.push(r);
        }
    }
    out
}

/// Whether `from` is `target` or reaches it through granted roles: granting `target`
/// to `from`… is a loop when `target` reaches `from`.
pub fn reaches(accounts: &[Account], from: &Name, target: &Name) -> bool {
    closure(accounts, std::slice::from_ref(from))
        .iter()
        .any(|r| r == target)
}

/// The roles a session of `a` starts with: every granted (and mandatory) role when
/// `all`, else its default roles.
pub fn at_login(a: &Account, mandatory: &[Name], all: bool) -> Vec<Name> {
    if all {
        let mut v: Vec<Name> = a.roles.keys().cloned().collect();
        for m in mandatory {
            if !v.contains(m) {
                v.push(m.clone());
            }
        }
        v
    } else {
        a.default_roles.iter().cloned().collect()
    }
}

/// The roles named by `mandatory_roles`: `role`, `role@host`, `'role'@'host'` or
/// `` `role`@`host` `` separated by commas (host `%` when not given).
pub fn parse_list(text: &str) -> Vec<Name> {
    let unquote = |s: &str| {
        let s = s.trim();
        let q = s.chars().next();
        if matches!(q, Some('\'' | '"' | '`')) && s.len() >= 2 && s.ends_with(q.unwrap_or(' ')) {
            s[1..s.len() - 1].to_string()
        } else {
            s.to_string()
        }
    };
    text.split(',')
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(|item| match item.rsplit_once('@') {
            Some((u, h)) => (unquote(u), unquote(h).to_ascii_lowercase()),
            None => (unquote(item), "%".to_string()),
        })
        .collect()
}

/// MySQL's `` `user`@`host` `` spelling of a role in CURRENT_ROLE(), SHOW GRANTS and
/// the role errors.
pub fn backquoted(r: &Name) -> String {
    format!("`{}`@`{}`", r.0.replace('`', "``"), r.1.replace('`', "``"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn acct(u: &str, roles: &[&str]) -> Account {
        Account {
            user: u.into(),
            host: "%".into(),
            roles: roles
                .iter()
                .map(|r| ((r.to_string(), "%".to_string()), false))
                .collect(),
            ..Default::default()
        }
    }

    fn n(u: &str) -> Name {
        (u.into(), "%".into())
    }

    #[test]
    fn closure_follows_roles_of_roles_and_finds_loops() {
        let accounts = vec![
            acct("u", &["r1"]),
            acct("r1", &["r2"]),
            acct("r2", &[]),
            acct("r3", &["gone"]),
        ];
        let mut c = closure(&accounts, &[n("r1")]);
        c.sort();
        assert_eq!(c, vec![n("r1"), n("r2")]);
        assert_eq!(
            closure(&accounts, &[n("r3")]),
            vec![n("r3")],
            "a dropped role adds nothing"
        );
        assert!(reaches(&accounts, &n("u"), &n("r2")));
        assert!(!reaches(&accounts, &n("r2"), &n("u")));
        assert!(reaches(&accounts, &n("r2"), &n("r2")));
    }

    #[test]
    fn login_roles_and_the_mandatory_list() {
        let mut a = acct("u", &["r1", "r2"]);
        a.default_roles.insert(n("r2"));
        assert_eq!(at_login(&a, &[], false), vec![n("r2")]);
        let mut all = at_login(&a, &[n("m")], true);
        all.sort();
        assert_eq!(all, vec![n("m"), n("r1"), n("r2")]);
        assert_eq!(
            parse_list(" r1, `r2`@`LocalHost` ,'r3'@'%',"),
            vec![n("r1"), ("r2".into(), "localhost".into()), n("r3")]
        );
        assert!(parse_list("").is_empty());
    }
}
