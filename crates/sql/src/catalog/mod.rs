//! The catalog: which databases and tables exist, their definitions, and their open
//! engine handles. It is persisted as `catalog.json` in the data directory and replaced
//! atomically on every DDL statement (write a temporary file, fsync it, rename it over
//! the old one, fsync the directory), so a crash leaves either the old or the new
//! catalog, never a torn one. Each database is also a directory holding its tables'
//! files (`<datadir>/<db>/<table>.<ext>`, the extensions chosen by the engine).
//!
//! DML takes the catalog's read lock only long enough to clone a table handle; DDL takes
//! the write lock and bumps [`Catalog::version`], which invalidates cached plans.

pub mod engines;
pub mod infoschema;
pub mod processes;
pub mod rowsource;
pub mod stats;

use parking_lot::RwLock;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use strata_engine::{Engine, Table};
use strata_types::{Error, Result, TableDef};

const CATALOG_FILE: &str = "catalog.json";
const FORMAT_VERSION: u32 = 1;

#[derive(Serialize, Deserialize)]
struct CatalogFile {
    format_version: u32,
    databases: Vec<String>,
    tables: Vec<TableDef>,
}

struct Db {
    tables: BTreeMap<String, Arc<dyn Table>>,
}

pub struct Catalog {
    datadir: PathBuf,
    engines: Vec<Arc<dyn Engine>>,
    dbs: RwLock<BTreeMap<String, Db>>,
    version: AtomicU64,
    stats: crate::catalog::stats::StatsCache,
    /// The server's connections, for SHOW PROCESSLIST (installed by the session layer).
    pub processes: crate::catalog::processes::ProcessSlot,
    /// The metadata locks every session takes on the names in here.
    mdl: Arc<crate::mdl::MdlManager>,
}

/// Databases every MySQL server shows and that cannot be created or dropped.
pub const SYSTEM_SCHEMAS: [&str; 2] = ["information_schema", "performance_schema"];

impl Catalog {
    /// Opens (or creates) the catalog of `datadir`, opening every table with its engine.
    pub fn open(datadir: &Path, engines: Vec<Arc<dyn Engine>>) -> Result<Catalog> {
        std::fs::create_dir_all(datadir)
            .map_err(|e| Error::io(format!("creating {}", datadir.display()), e))?;
        let cat = Catalog {
            datadir: datadir.to_path_buf(),
            engines,
            dbs: RwLock::new(BTreeMap::new()),
            version: AtomicU64::new(1),
            processes: Default::default(),
            stats: Default::default(),
            mdl: Default::default(),
        };
        let path = datadir.join(CATALOG_FILE);
        if path.exists() {
            let text = std::fs::read(&path).map_err(|e| Error::io("reading catalog.json", e))?;
            let file: CatalogFile = serde_json::from_slice(&text)
                .map_err(|e| Error::corrupt("catalog.json", e.to_string()))?;
            if file.format_version != FORMAT_VERSION {
                return Err(Error::corrupt(
                    "catalog.json",
                    format!(
                        "format version {} is not {FORMAT_VERSION}",
                        file.format_version
                    ),
                ));
            }
            let mut dbs = cat.dbs.write();
            for name in file.databases {
                dbs.insert(
                    name,
                    Db {
                        tables: BTreeMap::new(),
                    },
                );
            }
            for def in file.tables {
                let engine = cat.engine(&def.engine)?;
                let stem = cat.table_stem(&def.db, &def.name);
                let handle = engine.open_table(Arc::new(def.clone()), &stem)?;
                dbs.entry(def.db.clone())
                    .or_insert_with(|| Db {
                        tables: BTreeMap::new(),
                    })
                    .tables
                    .insert(def.name.clone(), handle);
            }
        }
        Ok(cat)
    }

    /// The metadata lock manager (`crate::mdl`).
    pub fn mdl(&self) -> &Arc<crate::mdl::MdlManager> {
        &self.mdl
    }

    /// The planner's table statistics.
    pub fn stats(&self) -> &crate::catalog::stats::StatsCache {
        &self.stats
    }

    pub fn datadir(&self) -> &Path {
        &self.datadir
    }

    pub fn engines(&self) -> &[Arc<dyn Engine>] {
        &self.engines
    }

    /// Bumped by every DDL statement; plans cached under an older version are stale.
    pub fn version(&self) -> u64 {
        self.version.load(Ordering::Acquire)
    }

    pub fn engine(&self, name: &str) -> Result<Arc<dyn Engine>> {
        self.engines
            .iter()
            .find(|e| e.name() == name)
            .cloned()
            .ok_or_else(|| Error::UnknownEngine(name.to_string()))
    }

    /// The file stem of a table: `<datadir>/<db>/<table>` with unsafe characters encoded.
    pub fn table_stem(&self, db: &str, table: &str) -> PathBuf {
        self.datadir.join(file_name(db)).join(file_name(table))
    }

    pub fn database_exists(&self, db: &str) -> bool {
        self.dbs.read().contains_key(db) || is_system_schema(db)
    }

    pub fn databases(&self) -> Vec<String> {
        self.dbs.read().keys().cloned().collect()
    }

    pub fn tables(&self, db: &str) -> Result<Vec<Arc<dyn Table>>> {
        let dbs = self.dbs.read();
        match dbs.get(db) {
            Some(d) => Ok(d.tables.values().cloned().collect()),
            None if is_system_schema(db) => Ok(vec![]),
            None => Err(Error::UnknownDatabase(db.to_string())),
        }
    }

    pub fn table(&self, db: &str, name: &str) -> Result<Arc<dyn Table>> {
        let dbs = self.dbs.read();
        dbs.get(db)
            .and_then(|d| d.tables.get(name))
            .cloned()
            .ok_or_else(|| Error::NoSuchTable {
                db: db.to_string(),
                table: name.to_string(),
            })
    }

    pub fn create_database(&self, db: &str, if_not_exists: bool) -> Result<bool> {
        check_name(db, true)?;
        let mut dbs = self.dbs.write();
        if dbs.contains_key(db) || is_system_schema(db) {
            return if if_not_exists {
                Ok(false)
            } else {
                Err(Error::DatabaseExists(db.into()))
            };
        }
        let dir = self.datadir.join(file_name(db));
        std::fs::create_dir_all(&dir)
            .map_err(|e| Error::io(format!("creating {}", dir.display()), e))?;
        dbs.insert(
            db.to_string(),
            Db {
                tables: BTreeMap::new(),
            },
        );
        self.persist(&dbs)?;
        Ok(true)
    }

    /// Drops a database and its tables; returns how many tables were dropped.
    pub fn drop_database(&self, db: &str, if_exists: bool) -> Result<Option<usize>> {
        let mut dbs = self.dbs.write();
        let Some(entry) = dbs.remove(db) else {
            return if if_exists {
                Ok(None)
            } else {
                Err(Error::DropMissingDatabase(db.into()))
            };
        };
        self.persist(&dbs)?;
        let n = entry.tables.len();
        for (name, table) in entry.tables {
            let def = table.def().clone();
            drop(table);
            self.engine(&def.engine)?
                .drop_table(&def, &self.table_stem(db, &name))?;
        }
        let _ = std::fs::remove_dir(self.datadir.join(file_name(db)));
        Ok(Some(n))
    }

    pub fn create_table(&self, def: TableDef, if_not_exists: bool) -> Result<bool> {
        check_name(&def.name, false)?;
        let mut dbs = self.dbs.write();
        let Some(db) = dbs.get(&def.db) else {
            return Err(Error::UnknownDatabase(def.db.clone()));
        };
        if db.tables.contains_key(&def.name) {
            return if if_not_exists {
                Ok(false)
            } else {
                Err(Error::TableExists(def.name))
            };
        }
        let engine = self.engine(&def.engine)?;
        let stem = self.table_stem(&def.db, &def.name);
        engine.create_table(&def, &stem)?;
        let handle = match engine.open_table(Arc::new(def.clone()), &stem) {
            Ok(h) => h,
            Err(e) => {
                let _ = engine.drop_table(&def, &stem);
                return Err(e);
            }
        };
        if let Some(db) = dbs.get_mut(&def.db) {
            db.tables.insert(def.name.clone(), handle);
        }
        if let Err(e) = self.persist(&dbs) {
            if let Some(db) = dbs.get_mut(&def.db) {
                db.tables.remove(&def.name);
            }
            let _ = engine.drop_table(&def, &stem);
            return Err(e);
        }
        Ok(true)
    }

    pub fn drop_table(&self, db: &str, name: &str) -> Result<()> {
        let mut dbs = self.dbs.write();
        let handle = dbs
            .get_mut(db)
            .and_then(|d| d.tables.remove(name))
            .ok_or_else(|| Error::UnknownTable(format!("{db}.{name}")))?;
        self.persist(&dbs)?;
        let def = handle.def().clone();
        drop(handle);
        self.engine(&def.engine)?
            .drop_table(&def, &self.table_stem(db, name))
    }

    /// Replaces a table by a new definition with new, empty files (CREATE INDEX on an
    /// empty table, and the rebuild path of ALTER-like statements). The caller copies rows.
    pub fn replace_table(&self, def: TableDef) -> Result<Arc<dyn Table>> {
        let mut dbs = self.dbs.write();
        let old = dbs
            .get_mut(&def.db)
            .and_then(|d| d.tables.remove(&def.name))
            .ok_or_else(|| Error::NoSuchTable {
                db: def.db.clone(),
                table: def.name.clone(),
            })?;
        let stem = self.table_stem(&def.db, &def.name);
        let old_def = old.def().clone();
        drop(old);
        self.engine(&old_def.engine)?.drop_table(&old_def, &stem)?;
        let engine = self.engine(&def.engine)?;
        engine.create_table(&def, &stem)?;
        let handle = engine.open_table(Arc::new(def.clone()), &stem)?;
        if let Some(d) = dbs.get_mut(&def.db) {
            d.tables.insert(def.name.clone(), handle.clone());
        }
        self.persist(&dbs)?;
        Ok(handle)
    }

    /// Writes every engine's cached changes (shutdown, FLUSH TABLES).
    pub fn flush(&self) -> Result<()> {
        for e in &self.engines {
            e.flush()?;
        }
        Ok(())
    }

    fn persist(&self, dbs: &BTreeMap<String, Db>) -> Result<()> {
        self.version.fetch_add(1, Ordering::AcqRel);
        let file = CatalogFile {
            format_version: FORMAT_VERSION,
            databases: dbs.keys().cloned().collect(),
            tables: dbs
                .values()
                .flat_map(|d| d.tables.values().map(|t| (**t.def()).clone()))
                .collect(),
        };
        let text = serde_json::to_vec_pretty(&file).map_err(|e| Error::Internal(e.to_string()))?;
        let tmp = self.datadir.join("catalog.json.tmp");
        let io = |e| Error::io("writing catalog.json", e);
        let mut f = std::fs::File::create(&tmp).map_err(io)?;
        f.write_all(&text).map_err(io)?;
        f.sync_all().map_err(io)?;
        std::fs::rename(&tmp, self.datadir.join(CATALOG_FILE)).map_err(io)?;
        std::fs::File::open(&self.datadir)
            .and_then(|d| d.sync_all())
            .map_err(io)?;
        Ok(())
    }
}

pub fn is_system_schema(db: &str) -> bool {
    SYSTEM_SCHEMAS.iter().any(|s| s.eq_ignore_ascii_case(db))
}

fn check_name(name: &str, is_db: bool) -> Result<()> {
    if name.is_empty() || name.len() > 64 || name.ends_with(' ') || name.contains(['/', '\\', '\0'])
    {
        return Err(if is_db {
            Error::WrongDatabaseName(name.into())
        } else {
            Error::WrongTableName(name.into())
        });
    }
    Ok(())
}

/// Maps a database or table name to a file name: ASCII letters, digits and `_` stay,
/// every other byte becomes `@xx` (hex), so any name is a safe, reversible file name.
fn file_name(name: &str) -> String {
    let mut out = String::with_capacity(name.len());
    for b in name.bytes() {
        if b.is_ascii_alphanumeric() || b == b'_' {
            out.push(b as char);
        } else {
            out.push_str(&format!("@{b:02x}"));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn file_names_are_safe() {
        assert_eq!(file_name("sbtest1"), "sbtest1");
        assert_eq!(file_name("a-b/c"), "a@2db@2fc");
    }
}
