//! The account tables tools read: the `mysql` schema's grant tables (`mysql.user`,
//! `db`, `tables_priv`, `columns_priv`, `procs_priv`, `role_edges`, `default_roles`,
//! `global_grants`, `password_history`) with MySQL 8.0's columns in MySQL 8.0's order,
//! and information_schema's `USER_PRIVILEGES`, `SCHEMA_PRIVILEGES`, `TABLE_PRIVILEGES`,
//! `COLUMN_PRIVILEGES`, `APPLICABLE_ROLES` and `ENABLED_ROLES`.
//!
//! They are read-only views of the session layer's account store, which this crate
//! does not know: the definitions live here (so SHOW TABLES, DESCRIBE and SHOW CREATE
//! TABLE have them), the rows come from an [`AccountRows`] the session hands out
//! through `Env::account_rows` when a statement binds such a table, computed when the
//! table is scanned. Accounts change only through CREATE USER / GRANT / …: a statement
//! writing to a `mysql` table is refused ([`refuse_change`]), never ignored.

use crate::catalog::rowsource::{ReadOnlyTable, RowSource};
use std::sync::Arc;
use strata_engine::Table;
use strata_types::schema::ColumnDefault;
use strata_types::{Collation, ColumnDef, DataType, Error, Result, TableDef, Value};

/// The schema of the grant tables.
pub const SCHEMA: &str = "mysql";

/// One of the tables this module defines.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SysTable {
    User,
    Db,
    TablesPriv,
    ColumnsPriv,
    ProcsPriv,
    RoleEdges,
    DefaultRoles,
    GlobalGrants,
    PasswordHistory,
    /// `general_log` / `slow_log`: MySQL's log tables, which hold rows only under
    /// `log_output=TABLE`; Strata writes no log to tables, so they are always empty
    /// (dump tools read their structure).
    GeneralLog,
    SlowLog,
    UserPrivileges,
    SchemaPrivileges,
    TablePrivileges,
    ColumnPrivileges,
    ApplicableRoles,
    EnabledRoles,
}

/// The `mysql` tables, by their names (lower case, as MySQL 8 names them; table names
/// are case-sensitive there, as on Linux).
const MYSQL: [(&str, SysTable); 11] = [
    ("columns_priv", SysTable::ColumnsPriv),
    ("db", SysTable::Db),
    ("default_roles", SysTable::DefaultRoles),
    ("general_log", SysTable::GeneralLog),
    ("global_grants", SysTable::GlobalGrants),
    ("password_history", SysTable::PasswordHistory),
    ("procs_priv", SysTable::ProcsPriv),
    ("role_edges", SysTable::RoleEdges),
    ("slow_log", SysTable::SlowLog),
    ("tables_priv", SysTable::TablesPriv),
    ("user", SysTable::User),
];

/// The information_schema tables (upper case; matched without regard to case).
const INFOSCHEMA: [(&str, SysTable); 6] = [
    ("APPLICABLE_ROLES", SysTable::ApplicableRoles),
    ("COLUMN_PRIVILEGES", SysTable::ColumnPrivileges),
    ("ENABLED_ROLES", SysTable::EnabledRoles),
    ("SCHEMA_PRIVILEGES", SysTable::SchemaPrivileges),
    ("TABLE_PRIVILEGES", SysTable::TablePrivileges),
    ("USER_PRIVILEGES", SysTable::UserPrivileges),
];

/// `mysql.user`'s privilege columns, in MySQL 8.0's order, with the privilege each
/// shows (`Grant_priv` is the global WITH GRANT OPTION: None). `Create_role_priv` and
/// `Drop_role_priv` come after `account_locked` ([`USER_ROLE_PRIVS`]).
pub const USER_PRIVS: [(&str, Option<&str>); 29] = [
    ("Select_priv", Some("SELECT")),
    ("Insert_priv", Some("INSERT")),
    ("Update_priv", Some("UPDATE")),
    ("Delete_priv", Some("DELETE")),
    ("Create_priv", Some("CREATE")),
    ("Drop_priv", Some("DROP")),
    ("Reload_priv", Some("RELOAD")),
    ("Shutdown_priv", Some("SHUTDOWN")),
    ("Process_priv", Some("PROCESS")),
    ("File_priv", Some("FILE")),
    ("Grant_priv", None),
    ("References_priv", Some("REFERENCES")),
    ("Index_priv", Some("INDEX")),
    ("Alter_priv", Some("ALTER")),
    ("Show_db_priv", Some("SHOW DATABASES")),
    ("Super_priv", Some("SUPER")),
    ("Create_tmp_table_priv", Some("CREATE TEMPORARY TABLES")),
    ("Lock_tables_priv", Some("LOCK TABLES")),
    ("Execute_priv", Some("EXECUTE")),
    ("Repl_slave_priv", Some("REPLICATION SLAVE")),
    ("Repl_client_priv", Some("REPLICATION CLIENT")),
    ("Create_view_priv", Some("CREATE VIEW")),
    ("Show_view_priv", Some("SHOW VIEW")),
    ("Create_routine_priv", Some("CREATE ROUTINE")),
    ("Alter_routine_priv", Some("ALTER ROUTINE")),
    ("Create_user_priv", Some("CREATE USER")),
    ("Event_priv", Some("EVENT")),
    ("Trigger_priv", Some("TRIGGER")),
    ("Create_tablespace_priv", Some("CREATE TABLESPACE")),
];

/// `mysql.user`'s last two privilege columns.
pub const USER_ROLE_PRIVS: [(&str, &str); 2] = [
    ("Create_role_priv", "CREATE ROLE"),
    ("Drop_role_priv", "DROP ROLE"),
];

/// `mysql.db`'s privilege columns, in MySQL 8.0's order (`Grant_priv`: None).
pub const DB_PRIVS: [(&str, Option<&str>); 19] = [
    ("Select_priv", Some("SELECT")),
    ("Insert_priv", Some("INSERT")),
    ("Update_priv", Some("UPDATE")),
    ("Delete_priv", Some("DELETE")),
    ("Create_priv", Some("CREATE")),
    ("Drop_priv", Some("DROP")),
    ("Grant_priv", None),
    ("References_priv", Some("REFERENCES")),
    ("Index_priv", Some("INDEX")),
    ("Alter_priv", Some("ALTER")),
    ("Create_tmp_table_priv", Some("CREATE TEMPORARY TABLES")),
    ("Lock_tables_priv", Some("LOCK TABLES")),
    ("Create_view_priv", Some("CREATE VIEW")),
    ("Show_view_priv", Some("SHOW VIEW")),
    ("Create_routine_priv", Some("CREATE ROUTINE")),
    ("Alter_routine_priv", Some("ALTER ROUTINE")),
    ("Execute_priv", Some("EXECUTE")),
    ("Event_priv", Some("EVENT")),
    ("Trigger_priv", Some("TRIGGER")),
];

/// `tables_priv.Table_priv`'s members, in MySQL 8.0's order, with the privilege each
/// means (`Grant`: the table's WITH GRANT OPTION).
pub const TABLE_PRIV_MEMBERS: [(&str, &str); 13] = [
    ("Select", "SELECT"),
    ("Insert", "INSERT"),
    ("Update", "UPDATE"),
    ("Delete", "DELETE"),
    ("Create", "CREATE"),
    ("Drop", "DROP"),
    ("Grant", "GRANT OPTION"),
    ("References", "REFERENCES"),
    ("Index", "INDEX"),
    ("Alter", "ALTER"),
    ("Create View", "CREATE VIEW"),
    ("Show view", "SHOW VIEW"),
    ("Trigger", "TRIGGER"),
];

/// `Column_priv`'s members (tables_priv and columns_priv).
pub const COLUMN_PRIV_MEMBERS: [(&str, &str); 4] = [
    ("Select", "SELECT"),
    ("Insert", "INSERT"),
    ("Update", "UPDATE"),
    ("References", "REFERENCES"),
];

/// A value of an `enum('N','Y')` column.
pub fn yes_no(y: bool) -> Value {
    Value::Member {
        number: if y { 2 } else { 1 },
        text: if y { b"Y".to_vec() } else { b"N".to_vec() },
    }
}

/// A value of an ENUM column with `members` (1-based position; '' when absent).
pub fn member(members: &[&str], text: &str) -> Value {
    let number = members
        .iter()
        .position(|m| *m == text)
        .map_or(0, |i| i as u64 + 1);
    Value::Member {
        number,
        text: text.as_bytes().to_vec(),
    }
}

/// A value of a SET column with `members`: the members present, in definition order.
pub fn set_of(members: &[&str], present: impl Fn(&str) -> bool) -> Value {
    let mut number = 0u64;
    let mut text = Vec::new();
    for (i, m) in members.iter().enumerate() {
        if present(m) {
            number |= 1 << i;
            if !text.is_empty() {
                text.push(b',');
            }
            text.extend_from_slice(m.as_bytes());
        }
    }
    Value::Member { number, text }
}

/// `ssl_type`'s members.
pub const SSL_TYPES: [&str; 4] = ["", "ANY", "X509", "SPECIFIED"];

impl SysTable {
    /// `mysql.<name>`, if it is one of the tables served here.
    pub fn in_mysql(name: &str) -> Option<SysTable> {
        MYSQL.iter().find(|(n, _)| *n == name).map(|(_, t)| *t)
    }

    /// `information_schema.<name>`, if it is one of the tables served here.
    pub fn in_infoschema(name: &str) -> Option<SysTable> {
        INFOSCHEMA
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, t)| *t)
    }

    pub fn is_mysql(self) -> bool {
        MYSQL.iter().any(|(_, t)| *t == self)
    }

    pub fn name(self) -> &'static str {
        MYSQL
            .iter()
            .chain(INFOSCHEMA.iter())
            .find(|(_, t)| *t == self)
            .map_or("", |(n, _)| n)
    }

    /// MySQL 8.0's table comment (SHOW TABLE STATUS, SHOW CREATE TABLE).
    fn comment(self) -> &'static str {
        match self {
            SysTable::User => "Users and global privileges",
            SysTable::Db => "Database privileges",
            SysTable::TablesPriv => "Table privileges",
            SysTable::ColumnsPriv => "Column privileges",
            SysTable::ProcsPriv => "Procedure privileges",
            SysTable::RoleEdges => "Role hierarchy and role grants",
            SysTable::DefaultRoles => "Default roles",
            SysTable::GlobalGrants => "Extended global grants",
            SysTable::PasswordHistory => "Password history for user accounts",
            SysTable::GeneralLog => "General log",
            SysTable::SlowLog => "Slow log",
            _ => "",
        }
    }

    /// The columns, with MySQL 8.0's names, order, types and NULL-ness (character sets
    /// are Strata's: utf8mb4 where MySQL has utf8mb3 or ascii).
    pub fn columns(self) -> Vec<ColumnDef> {
        match self {
            SysTable::User => {
                let mut c = vec![host("Host"), user("User")];
                c.extend(USER_PRIVS.iter().map(|(n, _)| yn(n)));
                c.extend([
                    enm("ssl_type", &SSL_TYPES, ""),
                    blob("ssl_cipher"),
                    blob("x509_issuer"),
                    blob("x509_subject"),
                    uint("max_questions"),
                    uint("max_updates"),
                    uint("max_connections"),
                    uint("max_user_connections"),
                    chr(
                        "plugin",
                        64,
                        Collation::Utf8Bin,
                        Some("caching_sha2_password"),
                    ),
                    nullable(ColumnDef::plain(
                        "authentication_string",
                        DataType::Text(65535),
                        true,
                        Collation::Utf8Bin,
                    )),
                    yn("password_expired"),
                    nullable(ColumnDef::plain(
                        "password_last_changed",
                        DataType::Timestamp { fsp: 0 },
                        true,
                        Collation::Binary,
                    )),
                    small_null("password_lifetime"),
                    yn("account_locked"),
                ]);
                c.extend(USER_ROLE_PRIVS.iter().map(|(n, _)| yn(n)));
                c.extend([
                    small_null("Password_reuse_history"),
                    small_null("Password_reuse_time"),
                    nullable(enm("Password_require_current", &["N", "Y"], "")),
                    nullable(ColumnDef::plain(
                        "User_attributes",
                        DataType::Json,
                        true,
                        Collation::Binary,
                    )),
                ]);
                c
            }
            SysTable::Db => {
                let mut c = vec![host("Host"), name64("Db"), user("User")];
                c.extend(DB_PRIVS.iter().map(|(n, _)| yn(n)));
                c
            }
            SysTable::TablesPriv => vec![
                host("Host"),
                name64("Db"),
                user("User"),
                name64("Table_name"),
                ColumnDef {
                    default: Some(ColumnDefault::Value(Value::str(""))),
                    ..ColumnDef::plain("Grantor", DataType::VarChar(288), false, Collation::Utf8Bin)
                },
                timestamp("Timestamp"),
                set("Table_priv", &TABLE_PRIV_MEMBERS.map(|(m, _)| m)),
                set("Column_priv", &COLUMN_PRIV_MEMBERS.map(|(m, _)| m)),
            ],
            SysTable::ColumnsPriv => vec![
                host("Host"),
                name64("Db"),
                user("User"),
                name64("Table_name"),
                name64("Column_name"),
                timestamp("Timestamp"),
                set("Column_priv", &COLUMN_PRIV_MEMBERS.map(|(m, _)| m)),
            ],
            SysTable::ProcsPriv => vec![
                host("Host"),
                name64("Db"),
                user("User"),
                ColumnDef {
                    default: Some(ColumnDefault::Value(Value::str(""))),
                    ..ColumnDef::plain(
                        "Routine_name",
                        DataType::Char(64),
                        false,
                        Collation::GeneralCi,
                    )
                },
                ColumnDef {
                    members: vec!["FUNCTION".into(), "PROCEDURE".into()],
                    ..ColumnDef::plain("Routine_type", DataType::Enum(2), false, Collation::Utf8Bin)
                },
                ColumnDef {
                    default: Some(ColumnDefault::Value(Value::str(""))),
                    ..ColumnDef::plain("Grantor", DataType::VarChar(288), false, Collation::Utf8Bin)
                },
                set("Proc_priv", &["Execute", "Alter Routine", "Grant"]),
                timestamp("Timestamp"),
            ],
            SysTable::RoleEdges => vec![
                host("FROM_HOST"),
                user("FROM_USER"),
                host("TO_HOST"),
                user("TO_USER"),
                yn("WITH_ADMIN_OPTION"),
            ],
            SysTable::DefaultRoles => vec![
                host("HOST"),
                user("USER"),
                ColumnDef {
                    default: Some(ColumnDefault::Value(Value::str("%"))),
                    ..ColumnDef::plain(
                        "DEFAULT_ROLE_HOST",
                        DataType::Char(255),
                        false,
                        Collation::GeneralCi,
                    )
                },
                user("DEFAULT_ROLE_USER"),
            ],
            SysTable::GlobalGrants => vec![
                user("USER"),
                host("HOST"),
                chr("PRIV", 32, Collation::GeneralCi, Some("")),
                yn("WITH_GRANT_OPTION"),
            ],
            SysTable::PasswordHistory => vec![
                host("Host"),
                user("User"),
                ColumnDef {
                    default: Some(ColumnDefault::CurrentTimestamp),
                    ..ColumnDef::plain(
                        "Password_timestamp",
                        DataType::Timestamp { fsp: 6 },
                        false,
                        Collation::Binary,
                    )
                },
                nullable(ColumnDef::plain(
                    "Password",
                    DataType::Text(65535),
                    true,
                    Collation::Utf8Bin,
                )),
            ],
            SysTable::GeneralLog => vec![
                log_time("event_time"),
                mediumtext("user_host"),
                plain_num("thread_id", DataType::BigInt { unsigned: true }),
                plain_num("server_id", DataType::Int { unsigned: true }),
                ColumnDef::plain(
                    "command_type",
                    DataType::VarChar(64),
                    false,
                    Collation::GeneralCi,
                ),
                ColumnDef::plain(
                    "argument",
                    DataType::Blob(16_777_215),
                    false,
                    Collation::Binary,
                ),
            ],
            SysTable::SlowLog => vec![
                log_time("start_time"),
                mediumtext("user_host"),
                ColumnDef::plain(
                    "query_time",
                    DataType::Time { fsp: 6 },
                    false,
                    Collation::Binary,
                ),
                ColumnDef::plain(
                    "lock_time",
                    DataType::Time { fsp: 6 },
                    false,
                    Collation::Binary,
                ),
                plain_num("rows_sent", DataType::Int { unsigned: false }),
                plain_num("rows_examined", DataType::Int { unsigned: false }),
                ColumnDef::plain("db", DataType::VarChar(512), false, Collation::GeneralCi),
                plain_num("last_insert_id", DataType::Int { unsigned: false }),
                plain_num("insert_id", DataType::Int { unsigned: false }),
                plain_num("server_id", DataType::Int { unsigned: true }),
                ColumnDef::plain(
                    "sql_text",
                    DataType::Blob(16_777_215),
                    false,
                    Collation::Binary,
                ),
                plain_num("thread_id", DataType::BigInt { unsigned: true }),
            ],
            SysTable::UserPrivileges => {
                privilege_columns(&[("GRANTEE", 292), ("TABLE_CATALOG", 512)])
            }
            SysTable::SchemaPrivileges => privilege_columns(&[
                ("GRANTEE", 292),
                ("TABLE_CATALOG", 512),
                ("TABLE_SCHEMA", 64),
            ]),
            SysTable::TablePrivileges => privilege_columns(&[
                ("GRANTEE", 292),
                ("TABLE_CATALOG", 512),
                ("TABLE_SCHEMA", 64),
                ("TABLE_NAME", 64),
            ]),
            SysTable::ColumnPrivileges => privilege_columns(&[
                ("GRANTEE", 292),
                ("TABLE_CATALOG", 512),
                ("TABLE_SCHEMA", 64),
                ("TABLE_NAME", 64),
                ("COLUMN_NAME", 64),
            ]),
            SysTable::ApplicableRoles => vec![
                is_text("USER", 97, false),
                is_text("HOST", 256, false),
                is_text("GRANTEE", 97, false),
                is_text("GRANTEE_HOST", 256, false),
                is_text("ROLE_NAME", 255, false),
                is_text("ROLE_HOST", 255, false),
                is_text("IS_GRANTABLE", 3, false),
                is_text("IS_DEFAULT", 3, false),
                is_text("IS_MANDATORY", 3, false),
            ],
            SysTable::EnabledRoles => vec![
                is_text("ROLE_NAME", 255, true),
                is_text("ROLE_HOST", 255, true),
                is_text("IS_DEFAULT", 3, true),
                is_text("IS_MANDATORY", 3, false),
            ],
        }
    }

    /// The table's definition (`mysql.x` or `information_schema.X`).
    pub fn def(self) -> TableDef {
        TableDef {
            options: Default::default(),
            db: if self.is_mysql() {
                SCHEMA.into()
            } else {
                "information_schema".into()
            },
            name: self.name().to_string(),
            engine: if self.is_mysql() { "btree" } else { "system" }.into(),
            columns: self.columns(),
            // No indexes: the planner scans (the rows are computed); SHOW CREATE TABLE
            // therefore shows no PRIMARY KEY.
            indexes: vec![],
            auto_increment_start: 1,
            comment: self.comment().into(),
            foreign_keys: Vec::new(),
            checks: Vec::new(),
            instant: None,
            default_collation: Default::default(),
        }
    }
}

/// The `mysql` tables, sorted, for SHOW TABLES FROM mysql.
pub fn mysql_table_names() -> Vec<&'static str> {
    MYSQL.iter().map(|(n, _)| *n).collect()
}

/// The information_schema tables served here, for SHOW TABLES.
pub fn infoschema_table_names() -> Vec<&'static str> {
    INFOSCHEMA.iter().map(|(n, _)| *n).collect()
}

/// Computes the rows of the account tables: the session layer's account store, seen
/// by the account (and active roles) of the session that bound the statement.
pub trait AccountRows: Send + Sync {
    fn rows(&self, table: SysTable) -> Result<Vec<Vec<Value>>>;
}

struct SysRows {
    def: Arc<TableDef>,
    table: SysTable,
    source: Option<Arc<dyn AccountRows>>,
}

impl RowSource for SysRows {
    fn def(&self) -> &Arc<TableDef> {
        &self.def
    }
    fn rows(&self) -> Result<Vec<Vec<Value>>> {
        match &self.source {
            Some(s) => s.rows(self.table),
            // No account store (a catalog opened without a server): no accounts.
            None => Ok(Vec::new()),
        }
    }
}

/// A handle on `table` whose rows `source` computes when it is scanned.
pub fn open(table: SysTable, source: Option<Arc<dyn AccountRows>>) -> Arc<dyn Table> {
    Arc::new(ReadOnlyTable(SysRows {
        def: Arc::new(table.def()),
        table,
        source,
    }))
}

/// Whether `db.name` is one of the account tables served here (not a table of the
/// `mysql` database's own, which the catalog holds).
pub fn is_account_table(db: &str, name: &str) -> bool {
    db == SCHEMA && SysTable::in_mysql(name).is_some()
}

/// `mysql.<name>`: 1146 for a table the schema does not have.
pub fn mysql_table(name: &str, source: Option<Arc<dyn AccountRows>>) -> Result<Arc<dyn Table>> {
    match SysTable::in_mysql(name) {
        Some(t) => Ok(open(t, source)),
        None => Err(Error::NoSuchTable {
            db: SCHEMA.into(),
            table: name.to_string(),
        }),
    }
}

/// The error a change to a `mysql` table gets: accounts change through the account
/// statements, which keep the store (and its file) consistent.
pub fn refuse_change(table: &str) -> Error {
    Error::NotSupported(format!(
        "changing {SCHEMA}.{table} directly; accounts and privileges change through CREATE USER, ALTER USER, DROP USER, RENAME USER, GRANT and REVOKE (to load a dump, leave the mysql schema out of it: mariadb-dump --ignore-database=mysql, or --databases …)"
    ))
}

fn nullable(mut c: ColumnDef) -> ColumnDef {
    c.nullable = true;
    c
}

fn host(name: &str) -> ColumnDef {
    chr(name, 255, Collation::GeneralCi, Some(""))
}

fn user(name: &str) -> ColumnDef {
    chr(name, 32, Collation::Utf8Bin, Some(""))
}

fn name64(name: &str) -> ColumnDef {
    chr(name, 64, Collation::Utf8Bin, Some(""))
}

fn chr(name: &str, n: u32, collation: Collation, default: Option<&str>) -> ColumnDef {
    ColumnDef {
        default: default.map(|d| ColumnDefault::Value(Value::str(d))),
        ..ColumnDef::plain(name, DataType::Char(n), false, collation)
    }
}

fn enm(name: &str, members: &[&str], default: &str) -> ColumnDef {
    ColumnDef {
        default: Some(ColumnDefault::Value(member(members, default))),
        members: members.iter().map(|m| m.to_string()).collect(),
        ..ColumnDef::plain(
            name,
            DataType::Enum(members.len() as u16),
            false,
            Collation::GeneralCi,
        )
    }
}

fn yn(name: &str) -> ColumnDef {
    enm(name, &["N", "Y"], "N")
}

fn set(name: &str, members: &[&str]) -> ColumnDef {
    ColumnDef {
        default: Some(ColumnDefault::Value(set_of(members, |_| false))),
        members: members.iter().map(|m| m.to_string()).collect(),
        ..ColumnDef::plain(
            name,
            DataType::Set(members.len() as u8),
            false,
            Collation::GeneralCi,
        )
    }
}

fn blob(name: &str) -> ColumnDef {
    ColumnDef::plain(name, DataType::Blob(65535), false, Collation::Binary)
}

fn uint(name: &str) -> ColumnDef {
    ColumnDef {
        default: Some(ColumnDefault::Value(Value::UInt(0))),
        ..ColumnDef::plain(
            name,
            DataType::Int { unsigned: true },
            false,
            Collation::Binary,
        )
    }
}

fn small_null(name: &str) -> ColumnDef {
    ColumnDef::plain(
        name,
        DataType::SmallInt { unsigned: true },
        true,
        Collation::Binary,
    )
}

fn timestamp(name: &str) -> ColumnDef {
    ColumnDef {
        default: Some(ColumnDefault::CurrentTimestamp),
        on_update_now: true,
        ..ColumnDef::plain(
            name,
            DataType::Timestamp { fsp: 0 },
            false,
            Collation::Binary,
        )
    }
}

fn log_time(name: &str) -> ColumnDef {
    ColumnDef {
        default: Some(ColumnDefault::CurrentTimestamp),
        on_update_now: true,
        ..ColumnDef::plain(
            name,
            DataType::Timestamp { fsp: 6 },
            false,
            Collation::Binary,
        )
    }
}

fn mediumtext(name: &str) -> ColumnDef {
    ColumnDef::plain(
        name,
        DataType::Text(16_777_215),
        false,
        Collation::GeneralCi,
    )
}

fn plain_num(name: &str, t: DataType) -> ColumnDef {
    ColumnDef::plain(name, t, false, Collation::Binary)
}

fn is_text(name: &str, n: u32, nullable: bool) -> ColumnDef {
    let mut c = crate::catalog::infoschema::col(name, DataType::VarChar(n));
    c.nullable = nullable;
    c
}

/// The columns of the `*_PRIVILEGES` tables: `leading` then PRIVILEGE_TYPE and
/// IS_GRANTABLE, NOT NULL as in MySQL 8.
fn privilege_columns(leading: &[(&str, u32)]) -> Vec<ColumnDef> {
    let mut c: Vec<ColumnDef> = leading
        .iter()
        .map(|(n, len)| is_text(n, *len, false))
        .collect();
    c.push(is_text("PRIVILEGE_TYPE", 64, false));
    c.push(is_text("IS_GRANTABLE", 3, false));
    c
}

#[cfg(test)]
mod tests {
    use super::*;

    /// MySQL 8.0.36's `mysql.user` has 51 columns; the ones tools read by position
    /// (the privilege columns) are where MySQL has them.
    #[test]
    fn mysql_user_has_mysql_8_columns_in_order() {
        let cols = SysTable::User.columns();
        assert_eq!(cols.len(), 51);
        let names: Vec<&str> = cols.iter().map(|c| c.name.as_str()).collect();
        assert_eq!(&names[..4], ["Host", "User", "Select_priv", "Insert_priv"]);
        assert_eq!(names[12], "Grant_priv");
        assert_eq!(names[31], "ssl_type");
        assert_eq!(names[39], "plugin");
        assert_eq!(names[40], "authentication_string");
        assert_eq!(names[44], "account_locked");
        assert_eq!(names[45], "Create_role_priv");
        assert_eq!(names[50], "User_attributes");
        assert_eq!(SysTable::Db.columns().len(), 22);
        assert_eq!(cols[2].type_text(), "enum('N','Y')");
        assert_eq!(
            SysTable::TablesPriv.columns()[6].type_text(),
            "set('Select','Insert','Update','Delete','Create','Drop','Grant','References','Index','Alter','Create View','Show view','Trigger')"
        );
    }

    #[test]
    fn names_resolve_and_members_number() {
        assert_eq!(SysTable::in_mysql("user"), Some(SysTable::User));
        assert_eq!(
            SysTable::in_mysql("USER"),
            None,
            "case-sensitive, as on Linux"
        );
        assert_eq!(
            SysTable::in_infoschema("user_privileges"),
            Some(SysTable::UserPrivileges)
        );
        assert_eq!(
            yes_no(true),
            Value::Member {
                number: 2,
                text: b"Y".to_vec()
            }
        );
        assert_eq!(
            set_of(&["Select", "Insert", "Update"], |m| m != "Insert"),
            Value::Member {
                number: 0b101,
                text: b"Select,Update".to_vec()
            }
        );
        assert_eq!(
            member(&SSL_TYPES, "X509"),
            Value::Member {
                number: 3,
                text: b"X509".to_vec()
            }
        );
    }
}
