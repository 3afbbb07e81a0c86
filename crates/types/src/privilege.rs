//! MySQL 8's static privileges as a bit set ([`Privs`]), with the names GRANT and SHOW
//! GRANTS use, in the order MySQL 8 prints them, and which of them each grant level
//! (global `*.*`, database `db.*`, table `db.t`) accepts. Shared vocabulary: the sql
//! crate says which privileges a bound statement needs, the session's account store
//! says which ones an account holds; both speak in these bits.

/// A set of static privileges. `GRANT OPTION` is kept beside it (a grant's flag), not in
/// the set.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct Privs(pub u64);

/// The static privileges in SHOW GRANTS order: (bit, name).
pub const NAMES: [(u64, &str); 30] = [
    (Privs::SELECT.0, "SELECT"),
    (Privs::INSERT.0, "INSERT"),
    (Privs::UPDATE.0, "UPDATE"),
    (Privs::DELETE.0, "DELETE"),
    (Privs::CREATE.0, "CREATE"),
    (Privs::DROP.0, "DROP"),
    (Privs::RELOAD.0, "RELOAD"),
    (Privs::SHUTDOWN.0, "SHUTDOWN"),
    (Privs::PROCESS.0, "PROCESS"),
    (Privs::FILE.0, "FILE"),
    (Privs::REFERENCES.0, "REFERENCES"),
    (Privs::INDEX.0, "INDEX"),
    (Privs::ALTER.0, "ALTER"),
    (Privs::SHOW_DATABASES.0, "SHOW DATABASES"),
    (Privs::SUPER.0, "SUPER"),
    (Privs::CREATE_TMP.0, "CREATE TEMPORARY TABLES"),
    (Privs::LOCK_TABLES.0, "LOCK TABLES"),
    (Privs::EXECUTE.0, "EXECUTE"),
    (Privs::REPL_SLAVE.0, "REPLICATION SLAVE"),
    (Privs::REPL_CLIENT.0, "REPLICATION CLIENT"),
    (Privs::CREATE_VIEW.0, "CREATE VIEW"),
    (Privs::SHOW_VIEW.0, "SHOW VIEW"),
    (Privs::CREATE_ROUTINE.0, "CREATE ROUTINE"),
    (Privs::ALTER_ROUTINE.0, "ALTER ROUTINE"),
    (Privs::CREATE_USER.0, "CREATE USER"),
    (Privs::EVENT.0, "EVENT"),
    (Privs::TRIGGER.0, "TRIGGER"),
    (Privs::CREATE_TABLESPACE.0, "CREATE TABLESPACE"),
    (Privs::CREATE_ROLE.0, "CREATE ROLE"),
    (Privs::DROP_ROLE.0, "DROP ROLE"),
];

impl Privs {
    pub const NONE: Privs = Privs(0);
    pub const SELECT: Privs = Privs(1);
    pub const INSERT: Privs = Privs(1 << 1);
    pub const UPDATE: Privs = Privs(1 << 2);
    pub const DELETE: Privs = Privs(1 << 3);
    pub const CREATE: Privs = Privs(1 << 4);
    pub const DROP: Privs = Privs(1 << 5);
    pub const RELOAD: Privs = Privs(1 << 6);
    pub const SHUTDOWN: Privs = Privs(1 << 7);
    pub const PROCESS: Privs = Privs(1 << 8);
    pub const FILE: Privs = Privs(1 << 9);
    pub const REFERENCES: Privs = Privs(1 << 10);
    pub const INDEX: Privs = Privs(1 << 11);
    pub const ALTER: Privs = Privs(1 << 12);
    pub const SHOW_DATABASES: Privs = Privs(1 << 13);
    pub const SUPER: Privs = Privs(1 << 14);
    pub const CREATE_TMP: Privs = Privs(1 << 15);
    pub const LOCK_TABLES: Privs = Privs(1 << 16);
    pub const EXECUTE: Privs = Privs(1 << 17);
    pub const REPL_SLAVE: Privs = Privs(1 << 18);
    pub const REPL_CLIENT: Privs = Privs(1 << 19);
    pub const CREATE_VIEW: Privs = Privs(1 << 20);
    pub const SHOW_VIEW: Privs = Privs(1 << 21);
    pub const CREATE_ROUTINE: Privs = Privs(1 << 22);
    pub const ALTER_ROUTINE: Privs = Privs(1 << 23);
    pub const CREATE_USER: Privs = Privs(1 << 24);
    pub const EVENT: Privs = Privs(1 << 25);
    pub const TRIGGER: Privs = Privs(1 << 26);
    pub const CREATE_TABLESPACE: Privs = Privs(1 << 27);
    pub const CREATE_ROLE: Privs = Privs(1 << 28);
    pub const DROP_ROLE: Privs = Privs(1 << 29);

    /// Every static privilege: what `GRANT ALL ON *.*` gives.
    pub const GLOBAL_ALL: Privs = Privs((1 << 30) - 1);

    /// What a database-level grant (`db.*`) may hold; `ALL` there means these.
    pub const DB_ALL: Privs = Privs(
        Privs::SELECT.0
            | Privs::INSERT.0
            | Privs::UPDATE.0
            | Privs::DELETE.0
            | Privs::CREATE.0
            | Privs::DROP.0
            | Privs::REFERENCES.0
            | Privs::INDEX.0
            | Privs::ALTER.0
            | Privs::CREATE_TMP.0
            | Privs::LOCK_TABLES.0
            | Privs::EXECUTE.0
            | Privs::CREATE_VIEW.0
            | Privs::SHOW_VIEW.0
            | Privs::CREATE_ROUTINE.0
            | Privs::ALTER_ROUTINE.0
            | Privs::EVENT.0
            | Privs::TRIGGER.0,
    );

    /// What a table-level grant (`db.t`) may hold.
    pub const TABLE_ALL: Privs = Privs(
        Privs::SELECT.0
            | Privs::INSERT.0
            | Privs::UPDATE.0
            | Privs::DELETE.0
            | Privs::CREATE.0
            | Privs::DROP.0
            | Privs::REFERENCES.0
            | Privs::INDEX.0
            | Privs::ALTER.0
            | Privs::CREATE_VIEW.0
            | Privs::SHOW_VIEW.0
            | Privs::TRIGGER.0,
    );

    /// What a column grant (`GRANT SELECT (c) ON db.t`) may hold.
    pub const COLUMN_ALL: Privs =
        Privs(Privs::SELECT.0 | Privs::INSERT.0 | Privs::UPDATE.0 | Privs::REFERENCES.0);

    pub const fn union(self, o: Privs) -> Privs {
        Privs(self.0 | o.0)
    }

    pub const fn minus(self, o: Privs) -> Privs {
        Privs(self.0 & !o.0)
    }

    pub const fn contains(self, o: Privs) -> bool {
        self.0 & o.0 == o.0
    }

    pub const fn intersects(self, o: Privs) -> bool {
        self.0 & o.0 != 0
    }

    pub const fn is_empty(self) -> bool {
        self.0 == 0
    }

    /// The privilege named `name` (upper case, words separated by one space).
    pub fn named(name: &str) -> Option<Privs> {
        NAMES
            .iter()
            .find(|(_, n)| n.eq_ignore_ascii_case(name))
            .map(|(b, _)| Privs(*b))
    }

    /// The names of the privileges in the set, in SHOW GRANTS order.
    pub fn names(self) -> Vec<&'static str> {
        NAMES
            .iter()
            .filter(|(b, _)| self.0 & b != 0)
            .map(|(_, n)| *n)
            .collect()
    }

    /// The first privilege of the set, as error 1142 names a denied command.
    pub fn first_name(self) -> &'static str {
        NAMES
            .iter()
            .find(|(b, _)| self.0 & b != 0)
            .map_or("USAGE", |(_, n)| n)
    }
}

/// MySQL 8's dynamic privileges Strata knows, granted only at the global level
/// (`mysql.global_grants`); `GRANT ALL ON *.*` gives every one of them.
pub const DYNAMIC: [&str; 10] = [
    "BACKUP_ADMIN",
    "BINLOG_ADMIN",
    "CONNECTION_ADMIN",
    "PERSIST_RO_VARIABLES_ADMIN",
    "REPLICATION_APPLIER",
    "REPLICATION_SLAVE_ADMIN",
    "ROLE_ADMIN",
    "SESSION_VARIABLES_ADMIN",
    "SYSTEM_USER",
    "SYSTEM_VARIABLES_ADMIN",
];

/// The dynamic privilege named `name`, as spelt in [`DYNAMIC`].
pub fn dynamic_named(name: &str) -> Option<&'static str> {
    DYNAMIC
        .iter()
        .find(|d| d.eq_ignore_ascii_case(name))
        .copied()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip_and_levels_nest() {
        for (b, n) in NAMES {
            assert_eq!(Privs::named(n), Some(Privs(b)));
        }
        assert_eq!(
            Privs::named("create temporary tables"),
            Some(Privs::CREATE_TMP)
        );
        assert!(Privs::GLOBAL_ALL.contains(Privs::DB_ALL));
        assert!(Privs::DB_ALL.contains(Privs::TABLE_ALL));
        assert!(!Privs::DB_ALL.contains(Privs::SUPER));
        assert_eq!(
            Privs::SELECT.union(Privs::DELETE).names(),
            vec!["SELECT", "DELETE"]
        );
        assert_eq!(Privs::GLOBAL_ALL.names().len(), 30);
        assert_eq!(Privs::NONE.first_name(), "USAGE");
    }
}
