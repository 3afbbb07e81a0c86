//! The accounts and their grants as data, and their file `mysql-accounts.json` in the
//! data directory (layout and crash safety in `docs/format/accounts.md`): read once at
//! startup, written whole (temporary file, fsync, rename, directory fsync) by every
//! account statement before the change is published.

use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use strata_types::privilege::{dynamic_named, Privs};
use strata_types::{Error, Result};

pub const FILE: &str = "mysql-accounts.json";
const VERSION: u64 = 2;
/// The version written before roles and column grants: read as having none.
const VERSION_1: u64 = 1;

/// REQUIRE of an account.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Require {
    #[default]
    None,
    Ssl,
    X509,
}

/// A set of privileges at one level with its WITH GRANT OPTION flag.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Grant {
    pub privs: Privs,
    pub grant_option: bool,
}

/// One account (`mysql.user` row) with everything granted to it.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Account {
    pub user: String,
    pub host: String,
    pub plugin: String,
    pub auth_string: String,
    pub password_last_changed: u64,
    pub password_expired: bool,
    pub locked: bool,
    pub require: Require,
    pub max_user_connections: u64,
    pub global: Grant,
    pub dynamic: BTreeSet<String>,
    pub dbs: BTreeMap<String, Grant>,
    pub tables: BTreeMap<(String, String), Grant>,
    /// Column grants: (db, table) → column (as written) → SELECT / INSERT / UPDATE /
    /// REFERENCES.
    pub columns: BTreeMap<(String, String), BTreeMap<String, Privs>>,
    /// Roles granted to this account: (user, host) → WITH ADMIN OPTION.
    pub roles: BTreeMap<(String, String), bool>,
    /// Roles activated at login (each also in `roles`).
    pub default_roles: BTreeSet<(String, String)>,
    /// Who last granted or revoked on a table of `tables` / `columns`, and when
    /// (`mysql.tables_priv.Grantor` / `Timestamp`).
    pub grant_meta: BTreeMap<(String, String), GrantMeta>,
}

/// The grantor and time of a table's grants.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct GrantMeta {
    /// `user@host` of the account that ran the GRANT / REVOKE.
    pub grantor: String,
    /// Seconds since 1970-01-01 UTC.
    pub timestamp: u64,
}

impl Account {
    /// `'user'@'host'`, as errors name an account.
    pub fn quoted(&self) -> String {
        format!("'{}'@'{}'", self.user, self.host)
    }
}

#[derive(Serialize, Deserialize)]
struct FileDoc {
    version: u64,
    accounts: Vec<FileAccount>,
}

#[derive(Serialize, Deserialize)]
struct FileAccount {
    user: String,
    host: String,
    plugin: String,
    authentication_string: String,
    password_last_changed: u64,
    password_expired: bool,
    account_locked: bool,
    ssl_type: String,
    max_user_connections: u64,
    global: Vec<String>,
    global_grant_option: bool,
    dynamic: Vec<String>,
    databases: Vec<FileDb>,
    tables: Vec<FileTable>,
    #[serde(default)]
    columns: Vec<FileColumn>,
    #[serde(default)]
    roles: Vec<FileRole>,
    #[serde(default)]
    default_roles: Vec<FileDefaultRole>,
    #[serde(default)]
    table_grant_info: Vec<FileGrantInfo>,
}

#[derive(Serialize, Deserialize)]
struct FileGrantInfo {
    db: String,
    table: String,
    grantor: String,
    timestamp: u64,
}

#[derive(Serialize, Deserialize)]
struct FileColumn {
    db: String,
    table: String,
    column: String,
    privileges: Vec<String>,
}

#[derive(Serialize, Deserialize)]
struct FileRole {
    user: String,
    host: String,
    admin_option: bool,
}

#[derive(Serialize, Deserialize)]
struct FileDefaultRole {
    user: String,
    host: String,
}

#[derive(Serialize, Deserialize)]
struct FileDb {
    db: String,
    privileges: Vec<String>,
    grant_option: bool,
}

#[derive(Serialize, Deserialize)]
struct FileTable {
    db: String,
    table: String,
    privileges: Vec<String>,
    grant_option: bool,
}

fn names(p: Privs) -> Vec<String> {
    p.names().into_iter().map(String::from).collect()
}

fn privs_of(names: &[String], path: &Path) -> Result<Privs> {
    let mut p = Privs::NONE;
    for n in names {
        p = p.union(Privs::named(n).ok_or_else(|| {
            Error::Internal(format!("{}: unknown privilege '{n}'", path.display()))
        })?);
    }
    Ok(p)
}

/// The file's text for `accounts`.
pub fn render(accounts: &[Account]) -> String {
    let doc = FileDoc {
        version: VERSION,
        accounts: accounts
            .iter()
            .map(|a| FileAccount {
                user: a.user.clone(),
                host: a.host.clone(),
                plugin: a.plugin.clone(),
                authentication_string: a.auth_string.clone(),
                password_last_changed: a.password_last_changed,
                password_expired: a.password_expired,
                account_locked: a.locked,
                ssl_type: match a.require {
                    Require::None => "",
                    Require::Ssl => "ANY",
                    Require::X509 => "X509",
                }
                .into(),
                max_user_connections: a.max_user_connections,
                global: names(a.global.privs),
                global_grant_option: a.global.grant_option,
                dynamic: a.dynamic.iter().cloned().collect(),
                databases: a
                    .dbs
                    .iter()
                    .map(|(db, g)| FileDb {
                        db: db.clone(),
                        privileges: names(g.privs),
                        grant_option: g.grant_option,
                    })
                    .collect(),
                tables: a
                    .tables
                    .iter()
                    .map(|((db, t), g)| FileTable {
                        db: db.clone(),
                        table: t.clone(),
                        privileges: names(g.privs),
                        grant_option: g.grant_option,
                    })
                    .collect(),
                columns: a
                    .columns
                    .iter()
                    .flat_map(|((db, t), cols)| {
                        cols.iter()
                            .filter(|(_, p)| !p.is_empty())
                            .map(|(c, p)| FileColumn {
                                db: db.clone(),
                                table: t.clone(),
                                column: c.clone(),
                                privileges: names(*p),
                            })
                    })
                    .collect(),
                roles: a
                    .roles
                    .iter()
                    .map(|((user, host), admin)| FileRole {
                        user: user.clone(),
                        host: host.clone(),
                        admin_option: *admin,
                    })
                    .collect(),
                default_roles: a
                    .default_roles
                    .iter()
                    .map(|(user, host)| FileDefaultRole {
                        user: user.clone(),
                        host: host.clone(),
                    })
                    .collect(),
                table_grant_info: a
                    .grant_meta
                    .iter()
                    .filter(|(k, _)| a.tables.contains_key(*k) || a.columns.contains_key(*k))
                    .map(|((db, t), m)| FileGrantInfo {
                        db: db.clone(),
                        table: t.clone(),
                        grantor: m.grantor.clone(),
                        timestamp: m.timestamp,
                    })
                    .collect(),
            })
            .collect(),
    };
    let mut text = serde_json::to_string_pretty(&doc).unwrap_or_default();
    text.push('\n');
    text
}

/// Parses the file's text (`path` names it in errors).
pub fn parse(text: &str, path: &Path) -> Result<Vec<Account>> {
    let bad = |why: String| Error::Internal(format!("{}: {why}", path.display()));
    let doc: FileDoc = serde_json::from_str(text).map_err(|e| bad(format!("not valid: {e}")))?;
    if doc.version != VERSION && doc.version != VERSION_1 {
        return Err(bad(format!("version {} (expected {VERSION})", doc.version)));
    }
    let mut out = Vec::with_capacity(doc.accounts.len());
    for f in doc.accounts {
        let require = match f.ssl_type.as_str() {
            "" => Require::None,
            "ANY" => Require::Ssl,
            "X509" => Require::X509,
            other => return Err(bad(format!("ssl_type '{other}'"))),
        };
        let mut dynamic = BTreeSet::new();
        for d in &f.dynamic {
            let name =
                dynamic_named(d).ok_or_else(|| bad(format!("unknown dynamic privilege '{d}'")))?;
            dynamic.insert(name.to_string());
        }
        let mut dbs = BTreeMap::new();
        for d in f.databases {
            dbs.insert(
                d.db,
                Grant {
                    privs: privs_of(&d.privileges, path)?,
                    grant_option: d.grant_option,
                },
            );
        }
        let mut tables = BTreeMap::new();
        for t in f.tables {
            tables.insert(
                (t.db, t.table),
                Grant {
                    privs: privs_of(&t.privileges, path)?,
                    grant_option: t.grant_option,
                },
            );
        }
        let mut columns: BTreeMap<(String, String), BTreeMap<String, Privs>> = BTreeMap::new();
        for c in f.columns {
            let p = privs_of(&c.privileges, path)?;
            if !Privs::COLUMN_ALL.contains(p) {
                return Err(bad(format!(
                    "column {}.{}.{}: a privilege columns cannot have",
                    c.db, c.table, c.column
                )));
            }
            columns
                .entry((c.db, c.table))
                .or_default()
                .insert(c.column, p);
        }
        out.push(Account {
            grant_meta: f
                .table_grant_info
                .into_iter()
                .map(|g| {
                    (
                        (g.db, g.table),
                        GrantMeta {
                            grantor: g.grantor,
                            timestamp: g.timestamp,
                        },
                    )
                })
                .collect(),
            columns,
            roles: f
                .roles
                .into_iter()
                .map(|r| ((r.user, r.host), r.admin_option))
                .collect(),
            default_roles: f
                .default_roles
                .into_iter()
                .map(|r| (r.user, r.host))
                .collect(),
            user: f.user,
            host: f.host,
            plugin: f.plugin,
            auth_string: f.authentication_string,
            password_last_changed: f.password_last_changed,
            password_expired: f.password_expired,
            locked: f.account_locked,
            require,
            max_user_connections: f.max_user_connections,
            global: Grant {
                privs: privs_of(&f.global, path)?,
                grant_option: f.global_grant_option,
            },
            dynamic,
            dbs,
            tables,
        });
    }
    Ok(out)
}

/// Where the file of `datadir` lives.
pub fn path(datadir: &Path) -> PathBuf {
    datadir.join(FILE)
}

/// Reads the file; None when there is none (a first start).
pub fn load(path: &Path) -> Result<Option<Vec<Account>>> {
    match std::fs::read_to_string(path) {
        Ok(text) => parse(&text, path).map(Some),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(Error::io(path.display(), e)),
    }
}

/// Writes the whole file through a temporary file and a rename, both fsynced, so a crash
/// leaves the old contents or the new ones.
pub fn write(path: &Path, accounts: &[Account]) -> Result<()> {
    use std::io::Write;
    let tmp = path.with_extension("json.tmp");
    let io = |e| Error::io(path.display(), e);
    let mut f = std::fs::File::create(&tmp).map_err(io)?;
    f.write_all(render(accounts).as_bytes()).map_err(io)?;
    f.sync_all().map_err(io)?;
    drop(f);
    std::fs::rename(&tmp, path).map_err(io)?;
    if let Some(dir) = path.parent() {
        std::fs::File::open(dir)
            .and_then(|d| d.sync_all())
            .map_err(io)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip_through_the_file() {
        let dir = tempfile::tempdir().unwrap();
        let p = path(dir.path());
        assert_eq!(load(&p).unwrap(), None);
        let mut a = Account {
            user: "app".into(),
            host: "10.%".into(),
            plugin: "caching_sha2_password".into(),
            auth_string: "$A$005$x".into(),
            require: Require::Ssl,
            max_user_connections: 3,
            locked: true,
            ..Default::default()
        };
        a.global.privs = Privs::SELECT.union(Privs::PROCESS);
        a.dynamic.insert("CONNECTION_ADMIN".into());
        a.dbs.insert(
            "shop".into(),
            Grant {
                privs: Privs::DB_ALL,
                grant_option: true,
            },
        );
        a.tables.insert(
            ("shop".into(), "t".into()),
            Grant {
                privs: Privs::UPDATE,
                grant_option: false,
            },
        );
        a.columns
            .entry(("shop".into(), "t".into()))
            .or_default()
            .insert("Note".into(), Privs::SELECT.union(Privs::REFERENCES));
        a.roles.insert(("r".into(), "%".into()), true);
        a.default_roles.insert(("r".into(), "%".into()));
        write(&p, std::slice::from_ref(&a)).unwrap();
        assert_eq!(load(&p).unwrap(), Some(vec![a.clone()]));
        std::fs::write(&p, "{\"version\": 3, \"accounts\": []}").unwrap();
        assert!(load(&p).is_err(), "another version is refused");
        // A version 1 file (before roles and column grants) reads as having none.
        let v1 = render(std::slice::from_ref(&a)).replace("\"version\": 2", "\"version\": 1");
        let v1: serde_json::Value = serde_json::from_str(&v1).unwrap();
        let mut v1 = v1;
        for f in ["columns", "roles", "default_roles"] {
            v1["accounts"][0].as_object_mut().unwrap().remove(f);
        }
        std::fs::write(&p, v1.to_string()).unwrap();
        let old = load(&p).unwrap().unwrap();
        assert!(old[0].columns.is_empty() && old[0].roles.is_empty());
        assert_eq!(old[0].tables, a.tables);
        // A column privilege no column can hold is refused.
        let bad = render(std::slice::from_ref(&a)).replace("\"REFERENCES\"", "\"DELETE\"");
        std::fs::write(&p, bad).unwrap();
        assert!(load(&p).is_err());
        std::fs::write(&p, "not json").unwrap();
        assert!(load(&p).is_err());
    }
}
