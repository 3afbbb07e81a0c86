//! The rows of the account tables (`mysql.user`, `mysql.db`, …, information_schema's
//! `USER_PRIVILEGES`, `APPLICABLE_ROLES`, …; definitions in
//! `strata_sql::catalog::systables`) computed from the account store when a statement
//! scans one. [`AccountView`] is what a session hands the SQL layer when a statement
//! binds such a table: the server's store (read live at each scan, so a cached plan
//! sees GRANTs made since) and the session's account, active roles and time zone.
//!
//! Visibility follows MySQL 8: reading a `mysql` table needs SELECT on it (checked
//! like any table, before the scan); the information_schema privilege tables show
//! every account's grants to an account with SELECT on the `mysql` schema and only its
//! own to others; the role tables show the session's own roles.

use super::roles::Name;
use super::store::{Account, Require};
use crate::Server;
use std::sync::Arc;
use strata_sql::catalog::systables::{
    member, set_of, yes_no, AccountRows, SysTable, COLUMN_PRIV_MEMBERS, DB_PRIVS, SSL_TYPES,
    TABLE_PRIV_MEMBERS, USER_PRIVS, USER_ROLE_PRIVS,
};
use strata_types::privilege::Privs;
use strata_types::{DateTime, Result, Value};

/// Who is looking, captured when the statement was bound.
#[derive(Clone, Debug, Default)]
pub struct Viewer {
    pub user: String,
    /// The account's host pattern (CURRENT_USER()'s host).
    pub host: String,
    pub active: Vec<Name>,
    pub mandatory: Vec<Name>,
    /// The session's time zone offset in seconds (None: the server's, UTC).
    pub tz_offset: Option<i64>,
    /// No privileges are checked (`--skip-grant-tables`, the server's own sessions):
    /// every account's rows are visible.
    pub unrestricted: bool,
}

/// The account tables as one session sees them.
pub struct AccountView {
    pub server: Arc<Server>,
    pub viewer: Viewer,
}

fn s(v: &str) -> Value {
    Value::str(v)
}

fn grantee(a: &Account) -> String {
    format!("'{}'@'{}'", a.user, a.host)
}

fn yes(b: bool) -> Value {
    s(if b { "YES" } else { "NO" })
}

/// MySQL's primary-key order for a row keyed by host patterns and names: host names
/// compare without regard to case (`ascii_general_ci`), user and object names by
/// their bytes.
type SortKey = Vec<String>;

fn sorted(mut rows: Vec<(SortKey, Vec<Value>)>) -> Vec<Vec<Value>> {
    rows.sort_by(|a, b| a.0.cmp(&b.0));
    rows.into_iter().map(|(_, r)| r).collect()
}

fn host_key(h: &str) -> String {
    h.to_ascii_lowercase()
}

impl AccountView {
    /// Whether the viewer may see every account's grants in the information_schema
    /// tables: SELECT on the `mysql` schema (MySQL's check).
    fn sees_all(&self) -> bool {
        if self.viewer.unrestricted || !self.server.acl.enforcing() {
            return true;
        }
        let v = &self.viewer;
        self.server
            .acl
            .effective(&v.user, &v.host, &v.active, &v.mandatory)
            .on_db(strata_sql::catalog::systables::SCHEMA)
            .contains(Privs::SELECT)
    }

    fn is_viewer(&self, a: &Account) -> bool {
        a.user == self.viewer.user && a.host.eq_ignore_ascii_case(&self.viewer.host)
    }

    fn timestamp(&self, secs: u64) -> Value {
        let local = secs as i64 + self.viewer.tz_offset.unwrap_or(0);
        Value::DateTime(DateTime::from_unix(local, 0))
    }

    fn user_row(&self, a: &Account) -> Vec<Value> {
        let g = &a.global;
        let has = |name: &str| g.privs.contains(Privs::named(name).unwrap_or_default());
        let mut r = vec![s(&a.host), s(&a.user)];
        for (_, p) in USER_PRIVS {
            r.push(yes_no(match p {
                Some(name) => has(name),
                None => g.grant_option,
            }));
        }
        let ssl = match a.require {
            Require::None => "",
            Require::Ssl => "ANY",
            Require::X509 => "X509",
        };
        r.extend([
            member(&SSL_TYPES, ssl),
            Value::Bytes(Vec::new()),
            Value::Bytes(Vec::new()),
            Value::Bytes(Vec::new()),
            Value::UInt(0),
            Value::UInt(0),
            Value::UInt(0),
            Value::UInt(a.max_user_connections),
            s(&a.plugin),
            s(&a.auth_string),
            yes_no(a.password_expired),
            self.timestamp(a.password_last_changed),
            Value::Null,
            yes_no(a.locked),
        ]);
        for (_, name) in USER_ROLE_PRIVS {
            r.push(yes_no(has(name)));
        }
        r.extend([Value::Null, Value::Null, Value::Null, Value::Null]);
        r
    }

    fn mysql_rows(&self, table: SysTable, accounts: &[Account]) -> Vec<Vec<Value>> {
        let mut rows: Vec<(SortKey, Vec<Value>)> = Vec::new();
        for a in accounts {
            let (hk, u) = (host_key(&a.host), a.user.clone());
            match table {
                SysTable::User => rows.push((vec![hk, u], self.user_row(a))),
                SysTable::Db => {
                    for (db, g) in &a.dbs {
                        let mut r = vec![s(&a.host), s(db), s(&a.user)];
                        for (_, p) in DB_PRIVS {
                            r.push(yes_no(match p {
                                Some(name) => {
                                    g.privs.contains(Privs::named(name).unwrap_or_default())
                                }
                                None => g.grant_option,
                            }));
                        }
                        rows.push((vec![hk.clone(), u.clone(), db.clone()], r));
                    }
                }
                SysTable::TablesPriv => {
                    let mut keys: Vec<&(String, String)> =
                        a.tables.keys().chain(a.columns.keys()).collect();
                    keys.sort();
                    keys.dedup();
                    for key in keys {
                        let g = a.tables.get(key).copied().unwrap_or_default();
                        let meta = a.grant_meta.get(key);
                        let cols = Privs(
                            a.columns
                                .get(key)
                                .map_or(0, |c| c.values().fold(0, |acc, p| acc | p.0)),
                        );
                        let r = vec![
                            s(&a.host),
                            s(&key.0),
                            s(&a.user),
                            s(&key.1),
                            s(meta.map_or("", |m| m.grantor.as_str())),
                            self.timestamp(meta.map_or(0, |m| m.timestamp)),
                            set_of(&TABLE_PRIV_MEMBERS.map(|(m, _)| m), |m| {
                                let name = TABLE_PRIV_MEMBERS
                                    .iter()
                                    .find(|(x, _)| *x == m)
                                    .map_or("", |(_, n)| n);
                                if name == "GRANT OPTION" {
                                    g.grant_option
                                } else {
                                    g.privs.contains(Privs::named(name).unwrap_or_default())
                                }
                            }),
                            column_privs(cols),
                        ];
                        rows.push((vec![hk.clone(), u.clone(), key.0.clone(), key.1.clone()], r));
                    }
                }
                SysTable::ColumnsPriv => {
                    for (key, cols) in &a.columns {
                        let meta = a.grant_meta.get(key);
                        for (c, p) in cols {
                            let r = vec![
                                s(&a.host),
                                s(&key.0),
                                s(&a.user),
                                s(&key.1),
                                s(c),
                                self.timestamp(meta.map_or(0, |m| m.timestamp)),
                                column_privs(*p),
                            ];
                            rows.push((
                                vec![
                                    hk.clone(),
                                    u.clone(),
                                    key.0.clone(),
                                    key.1.clone(),
                                    c.clone(),
                                ],
                                r,
                            ));
                        }
                    }
                }
                SysTable::RoleEdges => {
                    for (role, admin) in &a.roles {
                        let r = vec![
                            s(&role.1),
                            s(&role.0),
                            s(&a.host),
                            s(&a.user),
                            yes_no(*admin),
                        ];
                        rows.push((
                            vec![host_key(&role.1), role.0.clone(), hk.clone(), u.clone()],
                            r,
                        ));
                    }
                }
                SysTable::DefaultRoles => {
                    for role in &a.default_roles {
                        let r = vec![s(&a.host), s(&a.user), s(&role.1), s(&role.0)];
                        rows.push((
                            vec![hk.clone(), u.clone(), host_key(&role.1), role.0.clone()],
                            r,
                        ));
                    }
                }
                SysTable::GlobalGrants => {
                    for d in &a.dynamic {
                        let r = vec![s(&a.user), s(&a.host), s(d), yes_no(a.global.grant_option)];
                        rows.push((vec![u.clone(), hk.clone(), d.to_ascii_lowercase()], r));
                    }
                }
                // No routine grants (refused with 1235) and no password history kept
                // (`password_history` is 0): MySQL has no rows either.
                _ => {}
            }
        }
        sorted(rows)
    }

    /// USER_PRIVILEGES, SCHEMA_PRIVILEGES, TABLE_PRIVILEGES, COLUMN_PRIVILEGES.
    fn privilege_rows(&self, table: SysTable, accounts: &[Account]) -> Vec<Vec<Value>> {
        let all = self.sees_all();
        let mut out = Vec::new();
        for a in accounts.iter().filter(|a| all || self.is_viewer(a)) {
            let who = s(&grantee(a));
            let row = |lead: &[Value], privilege: &str, grantable: bool| {
                let mut r = vec![who.clone(), s("def")];
                r.extend_from_slice(lead);
                r.push(s(privilege));
                r.push(yes(grantable));
                r
            };
            match table {
                SysTable::UserPrivileges => {
                    let g = &a.global;
                    if g.privs.is_empty() {
                        out.push(row(&[], "USAGE", g.grant_option));
                    }
                    for name in g.privs.names() {
                        out.push(row(&[], name, g.grant_option));
                    }
                    for d in &a.dynamic {
                        out.push(row(&[], d, g.grant_option));
                    }
                }
                SysTable::SchemaPrivileges => {
                    for (db, g) in &a.dbs {
                        let lead = [s(db)];
                        if g.privs.is_empty() {
                            out.push(row(&lead, "USAGE", g.grant_option));
                        }
                        for name in g.privs.names() {
                            out.push(row(&lead, name, g.grant_option));
                        }
                    }
                }
                SysTable::TablePrivileges => {
                    for ((db, t), g) in &a.tables {
                        let lead = [s(db), s(t)];
                        // A table with only column grants has no row here (MySQL).
                        if g.privs.is_empty() && a.columns.contains_key(&(db.clone(), t.clone())) {
                            continue;
                        }
                        if g.privs.is_empty() {
                            out.push(row(&lead, "USAGE", g.grant_option));
                        }
                        for name in g.privs.names() {
                            out.push(row(&lead, name, g.grant_option));
                        }
                    }
                }
                SysTable::ColumnPrivileges => {
                    for ((db, t), cols) in &a.columns {
                        let grantable = a
                            .tables
                            .get(&(db.clone(), t.clone()))
                            .is_some_and(|g| g.grant_option);
                        for (c, p) in cols {
                            for name in p.names() {
                                out.push(row(&[s(db), s(t), s(c)], name, grantable));
                            }
                        }
                    }
                }
                _ => {}
            }
        }
        out
    }

    /// APPLICABLE_ROLES: the roles granted to the session's account, and (walking
    /// `role_edges` from them) the roles granted to those, plus the mandatory roles,
    /// as MySQL 8's view walks them; ENABLED_ROLES: the session's active roles.
    fn role_rows(&self, table: SysTable, accounts: &[Account]) -> Vec<Vec<Value>> {
        let v = &self.viewer;
        let me = accounts.iter().find(|a| self.is_viewer(a));
        let find = |n: &Name| accounts.iter().find(|a| a.user == n.0 && a.host == n.1);
        let is_default = |r: &Name| me.is_some_and(|a| a.default_roles.contains(r));
        let is_mandatory = |r: &Name| v.mandatory.contains(r);
        if table == SysTable::EnabledRoles {
            return v
                .active
                .iter()
                .map(|r| vec![s(&r.0), s(&r.1), yes(is_default(r)), yes(is_mandatory(r))])
                .collect();
        }
        let Some(me) = me else {
            return Vec::new();
        };
        // (role, grantee, admin option), each once.
        let mut edges: Vec<(Name, Name, bool)> = Vec::new();
        let me_name: Name = (me.user.clone(), me.host.clone());
        let mut todo: Vec<Name> = Vec::new();
        for (r, admin) in &me.roles {
            edges.push((r.clone(), me_name.clone(), *admin));
            todo.push(r.clone());
        }
        for m in &v.mandatory {
            if !me.roles.contains_key(m) && find(m).is_some() {
                edges.push((m.clone(), me_name.clone(), false));
                todo.push(m.clone());
            }
        }
        let mut seen: Vec<Name> = vec![me_name.clone()];
        while let Some(x) = todo.pop() {
            if seen.contains(&x) {
                continue;
            }
            seen.push(x.clone());
            if let Some(xa) = find(&x) {
                for (r, admin) in &xa.roles {
                    let e = (r.clone(), x.clone(), *admin);
                    if !edges.contains(&e) {
                        edges.push(e);
                    }
                    todo.push(r.clone());
                }
            }
        }
        edges
            .into_iter()
            .map(|(role, to, admin)| {
                vec![
                    s(&me.user),
                    s(&me.host),
                    s(&to.0),
                    s(&to.1),
                    s(&role.0),
                    s(&role.1),
                    yes(admin),
                    yes(is_default(&role)),
                    yes(is_mandatory(&role)),
                ]
            })
            .collect()
    }
}

fn column_privs(p: Privs) -> Value {
    set_of(&COLUMN_PRIV_MEMBERS.map(|(m, _)| m), |m| {
        let name = COLUMN_PRIV_MEMBERS
            .iter()
            .find(|(x, _)| *x == m)
            .map_or("", |(_, n)| n);
        p.contains(Privs::named(name).unwrap_or_default())
    })
}

impl AccountRows for AccountView {
    fn rows(&self, table: SysTable) -> Result<Vec<Vec<Value>>> {
        let accounts = self.server.acl.snapshot();
        Ok(match table {
            SysTable::UserPrivileges
            | SysTable::SchemaPrivileges
            | SysTable::TablePrivileges
            | SysTable::ColumnPrivileges => self.privilege_rows(table, &accounts),
            SysTable::ApplicableRoles | SysTable::EnabledRoles => self.role_rows(table, &accounts),
            _ => self.mysql_rows(table, &accounts),
        })
    }
}
