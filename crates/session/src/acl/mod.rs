//! Accounts and privileges: the server's account store ([`Acl`]), the privileges one
//! session's account holds ([`Effective`], cached per session and rebuilt when the
//! store's generation moves), and the checks the session makes before a statement runs.
//!
//! Layers: the sql crate says what a bound statement needs (`strata_sql::privileges`);
//! this module, in the session, knows who is asking and answers 1142 / 1044 / 1227; the
//! wire layer checks passwords against what [`Acl::find_login`] returns. Account
//! statements (CREATE USER, GRANT, SHOW GRANTS, …) are parsed and run by
//! [`statements`]; the file is [`store`]; host patterns are [`host`]; the `mysql.*` and
//! information_schema account tables' rows are [`systables`].
//!
//! Roles are accounts (CREATE ROLE makes a locked one): an account's grants are its own
//! plus those of the roles active in the session and, transitively, of the roles granted
//! to those ([`Acl::effective`]); [`roles`] holds the graph walks.
//!
//! Until the server binary opens the store ([`Acl::open`]) nothing is enforced: the
//! in-process benchmark and unit tests run as before, and so does a server started with
//! `--skip-grant-tables`.

pub mod host;
pub mod roles;
pub mod statements;
pub mod store;
pub mod systables;

use parking_lot::{Mutex, RwLock};
use std::collections::{BTreeSet, HashMap};
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use store::{Account, Grant};
use strata_types::privilege::{Privs, DYNAMIC};
use strata_types::{Error, Result};

/// The server's accounts.
#[derive(Default)]
pub struct Acl {
    path: Mutex<Option<PathBuf>>,
    accounts: RwLock<Arc<Vec<Account>>>,
    /// Bumped by every change, so sessions know their cached privileges are stale.
    generation: AtomicU64,
    enforcing: AtomicBool,
    /// Serialises writers: each change is read, written to the file and published whole.
    writer: Mutex<()>,
}

/// What one account may do, flattened for cheap checks.
#[derive(Clone, Debug, Default)]
pub struct Effective {
    pub exists: bool,
    pub global: Privs,
    pub dynamic: BTreeSet<String>,
    pub dbs: HashMap<String, Privs>,
    pub tables: HashMap<(String, String), Privs>,
    /// Column grants: (db, table) → lower-case column name → privileges.
    pub columns: HashMap<(String, String), HashMap<String, Privs>>,
}

impl Effective {
    /// Whether the account holds a global privilege, static or dynamic (`SUPER` counts
    /// for the dynamic administrative ones, as in MySQL 8).
    pub fn has_global(&self, p: Privs) -> bool {
        self.global.contains(p)
    }

    pub fn has_dynamic(&self, name: &str) -> bool {
        self.dynamic.contains(name) || self.global.contains(Privs::SUPER)
    }

    /// Every privilege on `db.table` from any level.
    pub fn on_table(&self, db: &str, table: &str) -> Privs {
        let mut p = self.global;
        if let Some(d) = self.dbs.get(db) {
            p = p.union(*d);
        }
        if let Some(t) = self.tables.get(&(db.to_string(), table.to_string())) {
            p = p.union(*t);
        }
        p
    }

    /// Every privilege on database `db` (not its tables).
    pub fn on_db(&self, db: &str) -> Privs {
        self.global
            .union(self.dbs.get(db).copied().unwrap_or_default())
    }

    /// Whether anything at all is granted in `db`: USE, SHOW DATABASES and
    /// information_schema show a database on that condition.
    pub fn sees_db(&self, db: &str) -> bool {
        !self.global.is_empty()
            || self.dbs.get(db).is_some_and(|p| !p.is_empty())
            || self.tables.keys().any(|(d, _)| d == db)
            || self.columns.keys().any(|(d, _)| d == db)
    }

    /// Whether `db.table` is visible (any privilege on it at any level, a column's
    /// included).
    pub fn sees_table(&self, db: &str, table: &str) -> bool {
        !self.on_table(db, table).is_empty() || self.column_grants(db, table).is_some()
    }

    /// The column grants on `db.table`, when there are any.
    pub fn column_grants(&self, db: &str, table: &str) -> Option<&HashMap<String, Privs>> {
        if self.columns.is_empty() {
            return None;
        }
        self.columns
            .get(&(db.to_string(), table.to_string()))
            .filter(|c| !c.is_empty())
    }

    /// Adds everything `a` holds (an account's own grants, or an active role's).
    fn absorb(&mut self, a: &Account) {
        self.global = self.global.union(a.global.privs);
        self.dynamic.extend(a.dynamic.iter().cloned());
        for (d, g) in &a.dbs {
            let e = self.dbs.entry(d.clone()).or_default();
            *e = e.union(g.privs);
        }
        for (k, g) in &a.tables {
            let e = self.tables.entry(k.clone()).or_default();
            *e = e.union(g.privs);
        }
        for (k, cols) in &a.columns {
            let t = self.columns.entry(k.clone()).or_default();
            for (c, p) in cols {
                let e = t.entry(c.to_lowercase()).or_default();
                *e = e.union(*p);
            }
        }
    }
}

impl Acl {
    /// Reads the store of `datadir` and starts enforcing it. On a first start (no file)
    /// creates `root@localhost` with every privilege and an empty password. Returns
    /// whether it was a first start.
    pub fn open(&self, datadir: &std::path::Path) -> Result<bool> {
        let path = store::path(datadir);
        let (accounts, first) = match store::load(&path)? {
            Some(a) => (a, false),
            None => {
                let root = Account {
                    user: "root".into(),
                    host: "localhost".into(),
                    plugin: strata_wire_plugins::NATIVE.into(),
                    password_last_changed: now_secs(),
                    global: Grant {
                        privs: Privs::GLOBAL_ALL,
                        grant_option: true,
                    },
                    dynamic: DYNAMIC.iter().map(|d| d.to_string()).collect(),
                    ..Default::default()
                };
                let v = vec![root];
                store::write(&path, &v)?;
                (v, true)
            }
        };
        *self.path.lock() = Some(path);
        *self.accounts.write() = Arc::new(sorted(accounts));
        self.generation.fetch_add(1, Ordering::SeqCst);
        self.enforcing.store(true, Ordering::SeqCst);
        Ok(first)
    }

    /// A `--user NAME[:PASSWORD]` of the command line: the account `NAME@%` (root:
    /// `root@localhost`) is created or updated with this password (in `plugin`) and
    /// every privilege WITH GRANT OPTION, so configurations written before accounts
    /// existed keep working. Returns the account as `'user'@'host'`.
    pub fn ensure_admin(&self, user: &str, password: &str, plugin: &str) -> Result<String> {
        let host = if user == "root" { "localhost" } else { "%" };
        let auth_string = if plugin == strata_wire_plugins::SHA2 {
            strata_types::credential::hash_sha2(password)
        } else {
            strata_types::credential::hash_native(password)
        };
        self.change(|accounts| {
            let i = match accounts
                .iter()
                .position(|a| a.user == user && a.host == host)
            {
                Some(i) => i,
                None => {
                    accounts.push(Account {
                        user: user.to_string(),
                        host: host.to_string(),
                        ..Default::default()
                    });
                    accounts.len() - 1
                }
            };
            let a = &mut accounts[i];
            // The same password keeps its stored form (and the caching_sha2 cache).
            let same = if a.plugin == strata_wire_plugins::SHA2 {
                strata_types::credential::sha2_matches(password.as_bytes(), &a.auth_string)
            } else {
                a.plugin == plugin && a.auth_string == auth_string
            };
            if !same || a.plugin.is_empty() {
                a.plugin = plugin.to_string();
                a.auth_string = auth_string.clone();
                a.password_last_changed = now_secs();
            }
            a.global = Grant {
                privs: Privs::GLOBAL_ALL,
                grant_option: true,
            };
            a.dynamic = DYNAMIC.iter().map(|d| d.to_string()).collect();
            Ok(a.quoted())
        })
    }

    /// Whether privileges are checked (false before [`Acl::open`], and with
    /// `--skip-grant-tables`).
    pub fn enforcing(&self) -> bool {
        self.enforcing.load(Ordering::Relaxed)
    }

    pub fn generation(&self) -> u64 {
        self.generation.load(Ordering::Acquire)
    }

    pub fn snapshot(&self) -> Arc<Vec<Account>> {
        self.accounts.read().clone()
    }

    /// The account a login as `user` from `client` matches (MySQL's order, see
    /// [`host`]).
    pub fn find_login(&self, user: &str, client: host::Client) -> Option<Account> {
        self.snapshot()
            .iter()
            .find(|a| (a.user == user || a.user.is_empty()) && host::matches(&a.host, client))
            .cloned()
    }

    /// The account named exactly `user@host`.
    pub fn account(&self, user: &str, host: &str) -> Option<Account> {
        self.snapshot()
            .iter()
            .find(|a| a.user == user && a.host.eq_ignore_ascii_case(host))
            .cloned()
    }

    /// Applies `change` to a copy of the accounts, writes the result to the file and
    /// only then publishes it (and bumps the generation). An error leaves everything as
    /// it was.
    pub fn change<T>(&self, change: impl FnOnce(&mut Vec<Account>) -> Result<T>) -> Result<T> {
        let _w = self.writer.lock();
        let mut next: Vec<Account> = self.snapshot().as_ref().clone();
        let out = change(&mut next)?;
        let next = sorted(next);
        if let Some(path) = self.path.lock().as_ref() {
            store::write(path, &next)?;
        }
        *self.accounts.write() = Arc::new(next);
        self.generation.fetch_add(1, Ordering::AcqRel);
        Ok(out)
    }

    /// Reads the file again (FLUSH PRIVILEGES).
    pub fn reload(&self) -> Result<()> {
        let _w = self.writer.lock();
        let Some(path) = self.path.lock().clone() else {
            return Ok(());
        };
        if let Some(a) = store::load(&path)? {
            *self.accounts.write() = Arc::new(sorted(a));
            self.generation.fetch_add(1, Ordering::AcqRel);
        }
        Ok(())
    }

    /// The flattened privileges of `user@host` with the roles `active` in its session
    /// and every role granted to those (an account that no longer exists has none; a
    /// role dropped since, or no longer granted, adds nothing).
    /// `mandatory` are the roles of `mandatory_roles`, granted to every account.
    pub fn effective(
        &self,
        user: &str,
        host: &str,
        active: &[(String, String)],
        mandatory: &[(String, String)],
    ) -> Effective {
        let accounts = self.snapshot();
        let Some(a) = accounts
            .iter()
            .find(|a| a.user == user && a.host.eq_ignore_ascii_case(host))
        else {
            return Effective::default();
        };
        let mut e = Effective {
            exists: true,
            ..Default::default()
        };
        e.absorb(a);
        if !active.is_empty() {
            // A role revoked since it was activated no longer counts.
            let granted: Vec<(String, String)> = active
                .iter()
                .filter(|r| a.roles.contains_key(*r) || mandatory.contains(r))
                .cloned()
                .collect();
            for r in roles::closure(&accounts, &granted) {
                if let Some(ra) = accounts.iter().find(|x| x.user == r.0 && x.host == r.1) {
                    e.absorb(ra);
                }
            }
        }
        e
    }
}

/// The wire layer's plugin names, without importing the wire crate (the session sits
/// below it).
pub mod strata_wire_plugins {
    pub const NATIVE: &str = "mysql_native_password";
    pub const SHA2: &str = "caching_sha2_password";
}

fn sorted(mut v: Vec<Account>) -> Vec<Account> {
    v.sort_by(|a, b| {
        host::order_key(&a.user, &a.host)
            .cmp(&host::order_key(&b.user, &b.host))
            .then_with(|| a.host.cmp(&b.host))
            .then_with(|| a.user.cmp(&b.user))
    });
    v
}

pub fn now_secs() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

/// Who a session runs as, for checks and error messages.
#[derive(Clone, Debug, Default)]
pub struct Identity {
    pub user: String,
    /// The account's host pattern (CURRENT_USER()).
    pub account_host: String,
    /// The client's host (USER(), and the host errors 1142 / 1044 name).
    pub client_host: String,
}

/// The columns of `db.table` a statement uses under one privilege (see
/// `strata_sql::privileges::columns_used`); None: not known.
pub type ColumnsUsed<'a> =
    &'a dyn Fn(&str, &str, Privs) -> Option<strata_sql::privileges::ColumnUse>;

/// Checks the needs of a bound statement against `eff`: 1142 naming the first missing
/// privilege and the table, 1044 for a database-level need. A table privilege the
/// account lacks may be made up by column grants: then every column the statement uses
/// under it (`columns`) must carry it (1143 naming the first that does not), and a
/// statement that names no column needs the privilege on some column.
pub fn check_needs(
    eff: &Effective,
    who: &Identity,
    needs: &[strata_sql::privileges::Need],
    columns: ColumnsUsed,
) -> Result<()> {
    for n in needs {
        match &n.table {
            Some(t) => {
                let have = eff.on_table(&n.db, t);
                if !have.contains(n.privs) {
                    let missing = n.privs.minus(have);
                    let denied = |p: Privs| Error::TableAccessDenied {
                        command: p.first_name().to_string(),
                        user: who.user.clone(),
                        host: who.client_host.clone(),
                        table: t.clone(),
                    };
                    let Some(grants) = eff.column_grants(&n.db, t) else {
                        return Err(denied(missing));
                    };
                    for (_, name) in strata_types::privilege::NAMES {
                        let Some(one) = Privs::named(name).filter(|p| missing.contains(*p)) else {
                            continue;
                        };
                        // No column holding it: the table is refused as a whole (MySQL
                        // checks the union of the table's column privileges first).
                        if !Privs::COLUMN_ALL.contains(one)
                            || !grants.values().any(|p| p.contains(one))
                        {
                            return Err(denied(one));
                        }
                        let Some(used) = columns(&n.db, t, one) else {
                            return Err(denied(one));
                        };
                        for c in &used.columns {
                            if !grants
                                .get(&c.to_lowercase())
                                .is_some_and(|p| p.contains(one))
                            {
                                if used.star {
                                    return Err(denied(one));
                                }
                                return Err(Error::ColumnAccessDenied {
                                    command: name.to_string(),
                                    user: who.user.clone(),
                                    host: who.client_host.clone(),
                                    column: c.clone(),
                                    table: t.clone(),
                                });
                            }
                        }
                    }
                }
            }
            None => {
                if !eff.on_db(&n.db).contains(n.privs) {
                    return Err(Error::DbAccessDenied {
                        user: who.user.clone(),
                        host: who.client_host.clone(),
                        db: n.db.clone(),
                    });
                }
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use strata_sql::privileges::Need;

    fn eff() -> Effective {
        let mut e = Effective {
            exists: true,
            ..Default::default()
        };
        e.dbs
            .insert("shop".into(), Privs::SELECT.union(Privs::INSERT));
        e.tables
            .insert(("crm".into(), "leads".into()), Privs::UPDATE);
        e
    }

    fn need(db: &str, t: Option<&str>, p: Privs) -> Need {
        Need {
            db: db.into(),
            table: t.map(String::from),
            privs: p,
        }
    }

    fn none(_: &str, _: &str, _: Privs) -> Option<strata_sql::privileges::ColumnUse> {
        None
    }

    #[test]
    fn column_grants_make_up_for_a_missing_table_privilege() {
        let who = Identity {
            user: "u".into(),
            account_host: "%".into(),
            client_host: "localhost".into(),
        };
        let mut e = Effective {
            exists: true,
            ..Default::default()
        };
        e.columns.insert(
            ("d".into(), "t".into()),
            [("a".to_string(), Privs::SELECT.union(Privs::UPDATE))]
                .into_iter()
                .collect(),
        );
        let reads = |cols: &'static [&'static str]| {
            move |_: &str, _: &str, _: Privs| {
                Some(strata_sql::privileges::ColumnUse {
                    columns: cols.iter().map(|c| c.to_string()).collect(),
                    star: false,
                })
            }
        };
        let star = |_: &str, _: &str, _: Privs| {
            Some(strata_sql::privileges::ColumnUse {
                columns: vec!["a".into(), "b".into()],
                star: true,
            })
        };
        let sel = [need("d", Some("t"), Privs::SELECT)];
        assert!(check_needs(&e, &who, &sel, &reads(&["A"])).is_ok());
        assert!(check_needs(&e, &who, &sel, &reads(&[])).is_ok(), "COUNT(*)");
        let err = check_needs(&e, &who, &sel, &reads(&["a", "b"])).unwrap_err();
        assert_eq!(err.code(), 1143);
        assert_eq!(
            err.to_string(),
            "SELECT command denied to user 'u'@'localhost' for column 'b' in table 't'"
        );
        assert_eq!(check_needs(&e, &who, &sel, &none).unwrap_err().code(), 1142);
        assert_eq!(
            check_needs(&e, &who, &sel, &star).unwrap_err().to_string(),
            "SELECT command denied to user 'u'@'localhost' for table 't'",
            "SELECT * names the table"
        );
        let ins = [need("d", Some("t"), Privs::INSERT)];
        assert_eq!(
            check_needs(&e, &who, &ins, &reads(&[])).unwrap_err().code(),
            1142
        );
        let del = [need("d", Some("t"), Privs::DELETE)];
        assert_eq!(
            check_needs(&e, &who, &del, &reads(&["a"]))
                .unwrap_err()
                .code(),
            1142
        );
        assert!(e.sees_table("d", "t") && e.sees_db("d") && !e.sees_table("d", "x"));
    }

    #[test]
    fn privileges_resolve_across_levels() {
        let who = Identity {
            user: "u".into(),
            account_host: "%".into(),
            client_host: "localhost".into(),
        };
        let e = eff();
        assert!(check_needs(&e, &who, &[need("shop", Some("t"), Privs::SELECT)], &none).is_ok());
        let err =
            check_needs(&e, &who, &[need("shop", Some("t"), Privs::DELETE)], &none).unwrap_err();
        assert_eq!(err.code(), 1142);
        assert_eq!(
            err.to_string(),
            "DELETE command denied to user 'u'@'localhost' for table 't'"
        );
        assert!(check_needs(
            &e,
            &who,
            &[need("crm", Some("leads"), Privs::UPDATE)],
            &none
        )
        .is_ok());
        assert!(check_needs(
            &e,
            &who,
            &[need("crm", Some("other"), Privs::UPDATE)],
            &none
        )
        .is_err());
        let err = check_needs(&e, &who, &[need("crm", None, Privs::CREATE)], &none).unwrap_err();
        assert_eq!(err.code(), 1044);
        assert!(e.sees_db("crm") && e.sees_db("shop") && !e.sees_db("mysql"));
        assert!(e.sees_table("crm", "leads") && !e.sees_table("crm", "x"));
        let mut g = e.clone();
        g.global = Privs::GLOBAL_ALL;
        assert!(check_needs(&g, &who, &[need("any", None, Privs::DROP)], &none).is_ok());
    }

    #[test]
    fn the_store_publishes_only_what_it_wrote() {
        let dir = tempfile::tempdir().unwrap();
        let acl = Acl::default();
        assert!(!acl.enforcing());
        assert!(acl.open(dir.path()).unwrap(), "first start");
        let g0 = acl.generation();
        let root = acl
            .find_login("root", host::Client { ip: None })
            .expect("root@localhost");
        assert_eq!(root.host, "localhost");
        assert!(acl
            .find_login(
                "root",
                host::Client {
                    ip: Some("10.0.0.1".parse().unwrap())
                }
            )
            .is_none());
        acl.change(|v| {
            v.push(Account {
                user: "app".into(),
                host: "%".into(),
                ..Default::default()
            });
            Ok(())
        })
        .unwrap();
        assert!(acl.generation() > g0);
        let failed: Result<()> = acl.change(|v| {
            v.clear();
            Err(Error::NoMatchingUser)
        });
        assert!(failed.is_err());
        assert_eq!(acl.snapshot().len(), 2, "a failed change publishes nothing");
        // Reopened from the file: the same accounts, not a first start.
        let again = Acl::default();
        assert!(!again.open(dir.path()).unwrap());
        assert_eq!(again.snapshot().len(), 2);
    }
}
