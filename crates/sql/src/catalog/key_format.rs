//! The form of each table's index keys (`key_format` in `catalog.json`,
//! `docs/format/keys.md`) and the startup upgrade of tables whose keys are in an older
//! form. Format 1 ended a PAD SPACE string's key instead of padding it (`'a'` before
//! `'a\t'`); format 2 orders it as the collation. Only an index holding a PAD SPACE string
//! column differs, so a format-1 table without one is format 2 as it stands; one with
//! such an index is rebuilt at startup, before any statement reads it, by the crash-safe
//! path of `ALTER TABLE … FORCE` ([`Catalog::begin_rebuild`] / [`Catalog::commit_rebuild`]:
//! new files under a hidden stem, one catalog write switching the table to them, which
//! also records its new format). A crash leaves each table old (rebuilt again at the next
//! start) or new.

use super::Catalog;
use std::sync::Arc;
use std::time::Duration;
use strata_engine::{Isolation, Table, Txn};
use strata_types::keycode::has_pad_space_key;
use strata_types::{Error, Result, TableDef};

/// The key format every file this server writes has.
pub const CURRENT: u32 = 2;

/// The format a table's keys are in, from the catalog's word for its files: a format-1
/// table without a PAD SPACE string in any index has the same keys as format 2.
pub fn effective(def: &TableDef, stored: u32) -> u32 {
    if stored >= CURRENT || !has_pad_space_key(def) {
        CURRENT
    } else {
        stored
    }
}

impl Catalog {
    /// Rebuilds every table whose keys are in an older format (see the module comment);
    /// returns how many. Called once at startup, before the server takes connections. A
    /// failure stops the startup with the table's name: its old files are kept.
    pub fn upgrade_key_format(&self) -> Result<usize> {
        let old: Vec<Arc<dyn Table>> = {
            let st = self.state.read();
            st.dbs
                .values()
                .flat_map(|d| d.tables.values())
                .filter(|e| e.key_format < CURRENT)
                .map(|e| e.handle.clone())
                .collect()
        };
        for handle in &old {
            let def = handle.def().clone();
            strata_types::log_note!(
                "rebuilding `{}`.`{}` (as ALTER TABLE … FORCE): its indexes hold PAD SPACE \
                 strings in key format 1, which orders 'a' before 'a\\t'; key format {CURRENT} \
                 orders them as the collation",
                def.db,
                def.name
            );
            let rows = self.rebuild_keys(handle).map_err(|e| {
                Error::Internal(format!(
                    "upgrading the index keys of `{}`.`{}` to key format {CURRENT} failed: \
                     {e}. Its files are unchanged and the next start tries again. A \
                     duplicate entry means two rows that differed under the weights of an \
                     older server (before 2026-11-26 utf8mb4_general_ci told accented \
                     letters apart) are equal now: remove one of them with the server that \
                     wrote this data directory, then start this one again",
                    def.db, def.name
                ))
            })?;
            strata_types::log_note!(
                "rebuilt `{}`.`{}`: {rows} rows, keys in format {CURRENT}",
                def.db,
                def.name
            );
        }
        Ok(old.len())
    }

    /// Copies `old`'s rows into new files of the same definition and switches the table
    /// to them; returns the rows copied. Reads only the table's rows (a scan of its
    /// primary storage), never a key of the old format.
    fn rebuild_keys(&self, old: &Arc<dyn Table>) -> Result<u64> {
        let mut def = (**old.def()).clone();
        // The AUTO_INCREMENT counter carries over, as ALTER TABLE's copy does.
        def.auto_increment_start = old.status().auto_increment.max(1);
        // Every row is written again in full.
        def.instant = None;
        let rebuild = self.begin_rebuild(&def)?;
        let new_txn = || Txn::new(Isolation::RepeatableRead, Duration::from_secs(50));
        let read = new_txn();
        let copied =
            self.fill_rebuild(
                old,
                &read,
                rebuild,
                &new_txn,
                &mut |row, _| Ok(row.to_vec()),
            );
        let _ = read.rollback();
        copied
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use strata_types::{Collation, ColumnDef, DataType, IndexDef};

    fn table(ty: DataType, coll: Collation, indexed: bool) -> TableDef {
        let c = ColumnDef::plain("s", ty, true, coll);
        TableDef {
            options: Default::default(),
            db: "d".into(),
            name: "t".into(),
            engine: "btree".into(),
            columns: vec![c],
            indexes: if indexed {
                vec![IndexDef {
                    invisible: false,
                    name: "s".into(),
                    columns: vec![0],
                    unique: false,
                    primary: false,
                    comment: String::new(),
                }]
            } else {
                vec![]
            },
            auto_increment_start: 1,
            comment: String::new(),
            foreign_keys: vec![],
            checks: vec![],
            instant: None,
            default_collation: Default::default(),
        }
    }

    #[test]
    fn only_an_indexed_pad_space_string_keeps_an_old_format() {
        let v = DataType::VarChar(10);
        assert_eq!(effective(&table(v, Collation::GeneralCi, true), 1), 1);
        assert_eq!(effective(&table(v, Collation::Utf8Bin, true), 1), 1);
        assert_eq!(effective(&table(v, Collation::GeneralCi, true), 2), 2);
        assert_eq!(effective(&table(v, Collation::GeneralCi, false), 1), 2);
        let b = DataType::VarBinary(10);
        assert_eq!(effective(&table(b, Collation::Binary, true), 1), 2);
        let i = DataType::Int { unsigned: false };
        assert_eq!(effective(&table(i, Collation::GeneralCi, true), 1), 2);
    }
}
