//! The catalog: which databases and tables exist, their definitions, the files that hold
//! each table, and their open engine handles. It is persisted as `catalog.json` in the
//! data directory and is the one commit point of every DDL statement
//! (`docs/format/catalog.md`): each change rewrites it atomically (write a temporary file,
//! fsync it, rename it over the old one, fsync the directory), so a crash leaves either
//! the old or the new catalog, never a torn one. A table rebuild (ALTER TABLE) fills new
//! files under a hidden stem (`#sql-<n>`) and one write switches the table to them; files
//! the catalog does not reference after a crash (half-built or replaced ones, in its DDL
//! log, or registered by an engine) are removed when it opens. Each database is also a
//! directory holding its tables' files (`<datadir>/<db>/<stem>.<ext>`, the extensions
//! chosen by the engine).
//!
//! DML takes the catalog's read lock only long enough to clone a table handle; DDL takes
//! the write lock and bumps [`Catalog::version`], which invalidates cached plans. A handle
//! DDL replaced is *retired*: a statement that waited for its table lock and then finds
//! its handle retired fails with 1412 rather than write into files that are gone.

pub mod engines;
pub mod infoschema;
pub mod infoschema_constraints;
pub mod infoschema_programs;
pub mod key_format;
pub mod processes;
pub mod rebuild_fill;
mod redefine;
pub mod routines;
pub mod rowsource;
pub mod stats;
pub mod systables;
pub mod temporary;
pub mod triggers;
pub mod views;

use parking_lot::RwLock;
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, BTreeSet};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use strata_engine::{Engine, Table};
use strata_types::{Error, Result, TableDef};

const CATALOG_FILE: &str = "catalog.json";
/// Version 1 had no file stems and no DDL log; version 2 no `key_format` per table
/// (its keys are format 1). Both are read, and written back as 3; a server that predates
/// version 3 refuses it rather than read keys in an order it does not know.
const FORMAT_VERSION: u32 = 3;

#[derive(Serialize, Deserialize)]
struct CatalogFile {
    format_version: u32,
    databases: Vec<String>,
    /// Databases whose default collation is not the server's (docs/format/catalog.md);
    /// absent in catalogs written before it.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    database_collations: BTreeMap<String, strata_types::Collation>,
    tables: Vec<StoredTable>,
    #[serde(default = "first_file")]
    next_file: u64,
    #[serde(default)]
    ddl_log: Vec<LogEntry>,
    /// Absent when there are none, so catalogs without views read and write as before.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    views: Vec<views::ViewDef>,
    /// Absent in catalogs written before triggers existed.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    triggers: Vec<triggers::TriggerDef>,
    /// Absent in catalogs written before stored routines existed.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    routines: Vec<routines::RoutineDef>,
}

fn first_file() -> u64 {
    1
}

#[derive(Serialize, Deserialize)]
struct StoredTable {
    #[serde(flatten)]
    def: TableDef,
    /// The file stem relative to the data directory; absent in format 1 (the stem
    /// derived from the names).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    file: Option<String>,
    /// The form of the table's index keys (`docs/format/keys.md`): absent in catalogs
    /// before version 3, which wrote format 1.
    #[serde(default = "key_format_1")]
    key_format: u32,
    /// When the table's files were made (CREATE TABLE, or the rebuild that made the
    /// current ones), in seconds since the Unix epoch: information_schema's
    /// CREATE_TIME. Absent for tables of catalogs written before it (NULL there).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    created: Option<i64>,
}

fn key_format_1() -> u32 {
    1
}

/// Files to remove once no table references them (`docs/format/catalog.md`).
#[derive(Clone, Serialize, Deserialize)]
struct LogEntry {
    engine: String,
    file: String,
    def: TableDef,
}

struct Entry {
    handle: Arc<dyn Table>,
    /// The file stem relative to the data directory.
    file: String,
    /// The form of the keys in its files ([`key_format::CURRENT`] for every file this
    /// server writes; an older one only until the startup upgrade rebuilt the table).
    key_format: u32,
    /// When its files were made (seconds since the epoch; `StoredTable::created`).
    created: Option<i64>,
}

#[derive(Default)]
struct Db {
    /// The database's default collation (CREATE/ALTER DATABASE … COLLATE): new tables'.
    collation: strata_types::Collation,
    tables: BTreeMap<String, Entry>,
    /// Views share the tables' namespace (`views.rs`).
    views: BTreeMap<String, Arc<views::ViewDef>>,
}

/// Everything the catalog file holds, behind one lock.
struct State {
    dbs: BTreeMap<String, Db>,
    next_file: u64,
    ddl_log: Vec<LogEntry>,
    /// Every trigger, in action order (`catalog/triggers.rs`).
    triggers: Vec<triggers::TriggerDef>,
    /// Every stored procedure and function (`catalog/routines.rs`).
    routines: Vec<routines::RoutineDef>,
}

impl State {
    fn references(&self, file: &str) -> bool {
        self.dbs
            .values()
            .any(|d| d.tables.values().any(|e| e.file == file))
    }

    /// A table's natural stem can take new files: no table lives there, and no
    /// leftover the DDL log still owes a removal (a full disk kept it) sits there.
    fn stem_is_free(&self, file: &str) -> bool {
        !self.references(file) && !self.ddl_log.iter().any(|l| l.file == file)
    }

    fn forget_log(&mut self, file: &str) {
        self.ddl_log.retain(|l| l.file != file);
    }
}

pub struct Catalog {
    datadir: PathBuf,
    engines: Vec<Arc<dyn Engine>>,
    state: RwLock<State>,
    version: AtomicU64,
    stats: crate::catalog::stats::StatsCache,
    /// The server's connections, for SHOW PROCESSLIST (installed by the session layer).
    pub processes: crate::catalog::processes::ProcessSlot,
    /// The metadata locks every session takes on the names in here.
    mdl: Arc<crate::mdl::MdlManager>,
}

/// New files of a table being rebuilt, filled by the caller between
/// [`Catalog::begin_rebuild`] and [`Catalog::commit_rebuild`] (or
/// [`Catalog::abort_rebuild`]).
pub struct Rebuild {
    pub handle: Arc<dyn Table>,
    file: String,
    /// Other tables that take a new definition in the same catalog write (children
    /// whose foreign keys follow a renamed parent column or table).
    followers: Vec<(Arc<dyn Table>, TableDef)>,
}

impl Rebuild {
    /// Other tables (and their new definitions) that change in the commit's write.
    pub fn follow(&mut self, followers: Vec<(Arc<dyn Table>, TableDef)>) {
        self.followers = followers;
    }
}

/// Databases every MySQL server shows and that cannot be created or dropped. `mysql`
/// ([`systables::SCHEMA`]) always exists and cannot be dropped either, but it is a real
/// database: it holds tables of its own (the replica's `slave_relay_log_info`) beside the
/// account tables, which are views of the account store ([`systables::is_account_table`]).
pub const SYSTEM_SCHEMAS: [&str; 2] = ["information_schema", "performance_schema"];

impl Catalog {
    /// Opens (or creates) the catalog of `datadir`, opening every table with its engine,
    /// then removes what a crash left behind: files in the DDL log and tables an engine
    /// registered that no table references.
    pub fn open(datadir: &Path, engines: Vec<Arc<dyn Engine>>) -> Result<Catalog> {
        std::fs::create_dir_all(datadir)
            .map_err(|e| Error::io(format!("creating {}", datadir.display()), e))?;
        let cat = Catalog {
            datadir: datadir.to_path_buf(),
            engines,
            state: RwLock::new(State {
                dbs: BTreeMap::new(),
                next_file: 1,
                ddl_log: Vec::new(),
                triggers: Vec::new(),
                routines: Vec::new(),
            }),
            version: AtomicU64::new(1),
            processes: Default::default(),
            stats: Default::default(),
            mdl: Default::default(),
        };
        let path = datadir.join(CATALOG_FILE);
        let mut st = cat.state.write();
        if path.exists() {
            let text = std::fs::read(&path).map_err(|e| Error::io("reading catalog.json", e))?;
            let file: CatalogFile = serde_json::from_slice(&text)
                .map_err(|e| Error::corrupt("catalog.json", e.to_string()))?;
            if !(1..=FORMAT_VERSION).contains(&file.format_version) {
                return Err(Error::corrupt(
                    "catalog.json",
                    format!(
                        "format version {} is not {FORMAT_VERSION}",
                        file.format_version
                    ),
                ));
            }
            st.next_file = file.next_file;
            st.ddl_log = file.ddl_log;
            st.triggers = file.triggers;
            st.routines = file.routines;
            for name in file.databases {
                let collation = file
                    .database_collations
                    .get(&name)
                    .copied()
                    .unwrap_or_default();
                st.dbs.insert(
                    name,
                    Db {
                        collation,
                        ..Db::default()
                    },
                );
            }
            for t in file.tables {
                let def = t.def;
                let engine = cat.engine(&def.engine)?;
                let rel = t.file.unwrap_or_else(|| natural_file(&def.db, &def.name));
                let handle = engine.open_table(Arc::new(def.clone()), &datadir.join(&rel))?;
                let key_format = key_format::effective(&def, t.key_format);
                st.dbs.entry(def.db.clone()).or_default().tables.insert(
                    def.name.clone(),
                    Entry {
                        handle,
                        file: rel,
                        key_format,
                        created: t.created,
                    },
                );
            }
            for v in file.views {
                st.dbs
                    .entry(v.db.clone())
                    .or_default()
                    .views
                    .insert(v.name.clone(), Arc::new(v));
            }
        }
        if cat.clean_up(&mut st)? {
            // Only the DDL log changed: if it cannot be written (a full disk), the next
            // start finds the same entries, whose files are gone, and drops nothing.
            if let Err(e) = cat.persist(&st) {
                strata_types::log_warning!(
                    "could not record the removal of DDL leftovers in {CATALOG_FILE}: {e}; \
                     the next start repeats it"
                );
            }
        }
        // After clean_up dropped the spaces a crashed server's temporary tables had.
        temporary::remove_leftovers(datadir)?;
        drop(st);
        // Before any statement can read a table: keys of an older format are rebuilt.
        cat.upgrade_key_format()?;
        Ok(cat)
    }

    /// The metadata lock manager (`crate::mdl`).
    pub fn mdl(&self) -> &Arc<crate::mdl::MdlManager> {
        &self.mdl
    }

    /// Drops the files of the DDL log and the engine-registered tables that no table
    /// references; true when the log changed. A leftover that cannot be removed now (a
    /// full disk cannot take the engine's rewritten space directory) stays for the next
    /// start with a warning: it is garbage, and refusing to start over it would turn a
    /// full disk into an outage.
    fn clean_up(&self, st: &mut State) -> Result<bool> {
        let log = std::mem::take(&mut st.ddl_log);
        let logged = log.len();
        let mut failed = std::collections::HashSet::new();
        for l in log {
            if st.references(&l.file) {
                continue;
            }
            strata_types::log_note!(
                "removing {}, the files of an unfinished or replaced table definition \
                 (`{}`.`{}`) left by DDL the server did not finish",
                l.file,
                l.def.db,
                l.def.name
            );
            let dropped = self
                .engine(&l.engine)?
                .drop_table(&l.def, &self.datadir.join(&l.file));
            if let Err(e) = dropped {
                strata_types::log_warning!(
                    "could not remove {} now: {e}; the next start tries again",
                    l.file
                );
                failed.insert(l.file.clone());
                st.ddl_log.push(l);
            }
        }
        for e in &self.engines {
            for stem in e.table_files() {
                let rel = self.relative(&stem);
                if st.references(&rel) || failed.contains(&rel) {
                    continue;
                }
                strata_types::log_note!(
                    "removing {rel}: a {} table no table of {CATALOG_FILE} references \
                     (DDL interrupted before its commit)",
                    e.name()
                );
                let def = TableDef {
                    options: Default::default(),
                    db: String::new(),
                    name: rel.clone(),
                    engine: e.name().to_string(),
                    columns: Vec::new(),
                    indexes: Vec::new(),
                    auto_increment_start: 1,
                    comment: String::new(),
                    foreign_keys: Vec::new(),
                    checks: Vec::new(),
                    instant: None,
                    default_collation: Default::default(),
                };
                if let Err(err) = e.drop_table(&def, &stem) {
                    strata_types::log_warning!(
                        "could not remove {rel} now: {err}; the next start tries again"
                    );
                }
            }
        }
        Ok(st.ddl_log.len() != logged)
    }

    fn relative(&self, stem: &Path) -> String {
        stem.strip_prefix(&self.datadir)
            .unwrap_or(stem)
            .to_string_lossy()
            .into_owned()
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

    /// Makes every cached plan stale without a catalog change: a session's temporary
    /// table appeared or went, which changes what a name means for it.
    pub fn invalidate_plans(&self) {
        self.version.fetch_add(1, Ordering::AcqRel);
    }

    pub fn engine(&self, name: &str) -> Result<Arc<dyn Engine>> {
        self.engines
            .iter()
            .find(|e| e.name() == name)
            .cloned()
            .ok_or_else(|| Error::UnknownEngine(name.to_string()))
    }

    /// The file stems (without extension) of every table, as absolute paths.
    pub fn table_files(&self) -> Vec<PathBuf> {
        let st = self.state.read();
        st.dbs
            .values()
            .flat_map(|d| d.tables.values().map(|e| self.datadir.join(&e.file)))
            .collect()
    }

    pub fn database_exists(&self, db: &str) -> bool {
        self.state.read().dbs.contains_key(db) || is_system_schema(db) || db == systables::SCHEMA
    }

    pub fn databases(&self) -> Vec<String> {
        self.state.read().dbs.keys().cloned().collect()
    }

    pub fn tables(&self, db: &str) -> Result<Vec<Arc<dyn Table>>> {
        let st = self.state.read();
        match st.dbs.get(db) {
            Some(d) => Ok(d.tables.values().map(|e| e.handle.clone()).collect()),
            None if is_system_schema(db) || db == systables::SCHEMA => Ok(vec![]),
            None => Err(Error::UnknownDatabase(db.to_string())),
        }
    }

    pub fn table(&self, db: &str, name: &str) -> Result<Arc<dyn Table>> {
        let st = self.state.read();
        st.dbs
            .get(db)
            .and_then(|d| d.tables.get(name))
            .map(|e| e.handle.clone())
            .ok_or_else(|| Error::NoSuchTable {
                db: db.to_string(),
                table: name.to_string(),
            })
    }

    /// True when DDL replaced or dropped this handle: a statement holding it must not
    /// use it (1412). The mark lives in the handle, so this is one load.
    /// When table `db`.`name`'s files were made (seconds since the epoch), if known:
    /// information_schema.TABLES.CREATE_TIME, SHOW TABLE STATUS' Create_time.
    pub fn table_created(&self, db: &str, name: &str) -> Option<i64> {
        self.state.read().dbs.get(db)?.tables.get(name)?.created
    }

    pub fn is_retired(&self, t: &Arc<dyn Table>) -> bool {
        t.retired()
    }

    fn retire(&self, t: &Arc<dyn Table>) {
        t.retire();
    }

    /// A database's default collation; None for a database that does not exist (the
    /// system schemas have the server's).
    pub fn database_collation(&self, db: &str) -> Option<strata_types::Collation> {
        match self.state.read().dbs.get(db) {
            Some(d) => Some(d.collation),
            None => self.database_exists(db).then_some(Default::default()),
        }
    }

    /// ALTER DATABASE … COLLATE: one catalog write; the tables keep theirs.
    pub fn alter_database_collation(
        &self,
        db: &str,
        collation: strata_types::Collation,
    ) -> Result<()> {
        if is_system_schema(db) || db == systables::SCHEMA {
            return Err(Error::SystemSchemaAccess(db.into()));
        }
        let mut st = self.state.write();
        let Some(d) = st.dbs.get_mut(db) else {
            return Err(Error::UnknownDatabase(db.into()));
        };
        let before = std::mem::replace(&mut d.collation, collation);
        if let Err(e) = self.persist(&st) {
            if let Some(d) = st.dbs.get_mut(db) {
                d.collation = before;
            }
            return Err(e);
        }
        Ok(())
    }

    pub fn create_database(
        &self,
        db: &str,
        if_not_exists: bool,
        collation: strata_types::Collation,
    ) -> Result<bool> {
        check_name(db, true)?;
        let mut st = self.state.write();
        if db == systables::SCHEMA {
            self.ensure_mysql(&mut st)?;
        }
        if st.dbs.contains_key(db) || is_system_schema(db) {
            return if if_not_exists {
                Ok(false)
            } else {
                Err(Error::DatabaseExists(db.into()))
            };
        }
        let dir = self.datadir.join(file_name(db));
        std::fs::create_dir_all(&dir)
            .map_err(|e| Error::io(format!("creating {}", dir.display()), e))?;
        st.dbs.insert(
            db.to_string(),
            Db {
                collation,
                ..Db::default()
            },
        );
        if let Err(e) = self.persist(&st) {
            st.dbs.remove(db);
            return Err(e);
        }
        Ok(true)
    }

    /// Drops a database and its tables; returns how many tables were dropped.
    pub fn drop_database(&self, db: &str, if_exists: bool) -> Result<Option<usize>> {
        if db == systables::SCHEMA {
            return Err(Error::SystemSchemaAccess(db.into()));
        }
        let mut st = self.state.write();
        let Some(entry) = st.dbs.remove(db) else {
            return if if_exists {
                Ok(None)
            } else {
                Err(Error::DropMissingDatabase(db.into()))
            };
        };
        let logged: Vec<LogEntry> = entry
            .tables
            .values()
            .map(|e| LogEntry {
                engine: e.handle.def().engine.clone(),
                file: e.file.clone(),
                def: (**e.handle.def()).clone(),
            })
            .collect();
        st.ddl_log.extend(logged.iter().cloned());
        let removed_triggers = triggers::remove_for(&mut st, db, None);
        let removed_routines = routines::remove_for(&mut st, db);
        if let Err(e) = self.persist(&st) {
            st.routines.extend(removed_routines);
            st.ddl_log
                .retain(|l| !logged.iter().any(|x| x.file == l.file));
            st.dbs.insert(db.to_string(), entry);
            triggers::restore(&mut st, removed_triggers);
            return Err(e);
        }
        let n = entry.tables.len();
        for (_, e) in entry.tables {
            self.retire(&e.handle);
            let def = e.handle.def().clone();
            drop(e.handle);
            self.engine(&def.engine)?
                .drop_table(&def, &self.datadir.join(&e.file))?;
            st.forget_log(&e.file);
        }
        let _ = std::fs::remove_dir(self.datadir.join(file_name(db)));
        Ok(Some(n))
    }

    /// A fresh hidden stem in `db`'s directory (`docs/format/catalog.md`).
    fn new_file(&self, st: &mut State, db: &str) -> String {
        let n = st.next_file;
        st.next_file += 1;
        format!("{}/#sql-{n}", file_name(db))
    }

    /// `mysql` exists from the start (its account tables); a table of its own needs
    /// the directory and the catalog entry, made the first time one is created.
    fn ensure_mysql(&self, st: &mut State) -> Result<()> {
        let db = systables::SCHEMA;
        if st.dbs.contains_key(db) {
            return Ok(());
        }
        let dir = self.datadir.join(file_name(db));
        std::fs::create_dir_all(&dir)
            .map_err(|e| Error::io(format!("creating {}", dir.display()), e))?;
        st.dbs.insert(db.to_string(), Db::default());
        if let Err(e) = self.persist(st) {
            st.dbs.remove(db);
            return Err(e);
        }
        Ok(())
    }

    pub fn create_table(&self, def: TableDef, if_not_exists: bool) -> Result<bool> {
        check_name(&def.name, false)?;
        let mut st = self.state.write();
        if def.db == systables::SCHEMA {
            self.ensure_mysql(&mut st)?;
        }
        let Some(db) = st.dbs.get(&def.db) else {
            return Err(Error::UnknownDatabase(def.db.clone()));
        };
        if db.tables.contains_key(&def.name) || db.views.contains_key(&def.name) {
            return if if_not_exists {
                Ok(false)
            } else {
                Err(Error::TableExists(def.name))
            };
        }
        let engine = self.engine(&def.engine)?;
        // The natural stem, unless a table renamed away from this name or a leftover
        // still lives there.
        let natural = natural_file(&def.db, &def.name);
        let file = if st.stem_is_free(&natural) {
            natural
        } else {
            self.new_file(&mut st, &def.db)
        };
        let stem = self.datadir.join(&file);
        // Intent first: a crash before the commit below leaves files the log names.
        st.ddl_log.push(LogEntry {
            engine: def.engine.clone(),
            file: file.clone(),
            def: def.clone(),
        });
        if let Err(e) = self.persist(&st) {
            st.forget_log(&file);
            return Err(e);
        }
        let made = engine.create_table(&def, &stem).and_then(|()| {
            engine
                .open_table(Arc::new(def.clone()), &stem)
                .inspect_err(|_| {
                    let _ = engine.drop_table(&def, &stem);
                })
        });
        let handle = match made {
            Ok(h) => h,
            Err(e) => {
                // Files that were there already (1050) are not ours to remove: the log
                // entry goes, and the next write records that.
                st.forget_log(&file);
                return Err(e);
            }
        };
        st.forget_log(&file);
        if let Some(db) = st.dbs.get_mut(&def.db) {
            db.tables.insert(
                def.name.clone(),
                Entry {
                    handle,
                    file: file.clone(),
                    key_format: key_format::CURRENT,
                    created: Some(unix_now()),
                },
            );
        }
        if let Err(e) = self.persist(&st) {
            if let Some(db) = st.dbs.get_mut(&def.db) {
                db.tables.remove(&def.name);
            }
            let _ = engine.drop_table(&def, &stem);
            return Err(e);
        }
        Ok(true)
    }

    pub fn drop_table(&self, db: &str, name: &str) -> Result<()> {
        let mut st = self.state.write();
        let entry = st
            .dbs
            .get_mut(db)
            .and_then(|d| d.tables.remove(name))
            .ok_or_else(|| Error::UnknownTable(format!("{db}.{name}")))?;
        let def = entry.handle.def().clone();
        st.ddl_log.push(LogEntry {
            engine: def.engine.clone(),
            file: entry.file.clone(),
            def: (*def).clone(),
        });
        let removed_triggers = triggers::remove_for(&mut st, db, Some(name));
        if let Err(e) = self.persist(&st) {
            st.forget_log(&entry.file);
            if let Some(d) = st.dbs.get_mut(db) {
                d.tables.insert(name.to_string(), entry);
            }
            triggers::restore(&mut st, removed_triggers);
            return Err(e);
        }
        self.retire(&entry.handle);
        drop(entry.handle);
        self.engine(&def.engine)?
            .drop_table(&def, &self.datadir.join(&entry.file))?;
        st.forget_log(&entry.file);
        Ok(())
    }

    /// Creates the files of `def`, the new definition of an existing table, under a
    /// hidden stem recorded in the DDL log first. The table itself is unchanged until
    /// [`Catalog::commit_rebuild`].
    pub fn begin_rebuild(&self, def: &TableDef) -> Result<Rebuild> {
        self.begin_files(def, false)
    }

    /// The files of `def` under a stem recorded in the DDL log first: a fresh hidden
    /// one, or (`natural`) the table's natural stem when no table uses it.
    fn begin_files(&self, def: &TableDef, natural: bool) -> Result<Rebuild> {
        let mut st = self.state.write();
        let file = match natural_file(&def.db, &def.name) {
            f if natural && st.stem_is_free(&f) => f,
            _ => self.new_file(&mut st, &def.db),
        };
        let engine = self.engine(&def.engine)?;
        st.ddl_log.push(LogEntry {
            engine: def.engine.clone(),
            file: file.clone(),
            def: def.clone(),
        });
        if let Err(e) = self.persist(&st) {
            st.forget_log(&file);
            return Err(e);
        }
        let stem = self.datadir.join(&file);
        let hidden = file.contains("#sql-");
        if let Err(e) = engine.create_table(def, &stem) {
            // Files that were at a natural stem already (1050) are not ours to remove.
            if hidden {
                let _ = engine.drop_table(def, &stem);
            }
            st.forget_log(&file);
            return Err(e);
        }
        match engine.open_table(Arc::new(def.clone()), &stem) {
            Ok(handle) => Ok(Rebuild {
                handle,
                file,
                followers: Vec::new(),
            }),
            Err(e) => {
                let _ = engine.drop_table(def, &stem);
                st.forget_log(&file);
                Err(e)
            }
        }
    }

    /// CREATE TABLE … SELECT, first step: the files of new table `def`, made under its
    /// stem (as CREATE TABLE chooses it) recorded in the DDL log, so a crash before
    /// [`Catalog::commit_create`] leaves no table and the next start removes them.
    /// The name must be free now (1050) and the database exist (1049).
    pub fn begin_create(&self, def: &TableDef) -> Result<Rebuild> {
        check_name(&def.name, false)?;
        if def.db == systables::SCHEMA {
            self.ensure_mysql(&mut self.state.write())?;
        }
        {
            let st = self.state.read();
            let Some(db) = st.dbs.get(&def.db) else {
                return Err(Error::UnknownDatabase(def.db.clone()));
            };
            if db.tables.contains_key(&def.name) || db.views.contains_key(&def.name) {
                return Err(Error::TableExists(def.name.clone()));
            }
        }
        self.engine(&def.engine)?;
        self.begin_files(def, true)
    }

    /// CREATE TABLE … SELECT, last step: the filled table, its contents durable already,
    /// becomes visible under its name in one write of the catalog (the commit point).
    /// Any failure removes its files.
    pub fn commit_create(&self, r: Rebuild) -> Result<()> {
        let mut st = self.state.write();
        let def = r.handle.def().clone();
        let refusal = match st.dbs.get(&def.db) {
            None => Some(Error::UnknownDatabase(def.db.clone())),
            Some(d) if d.tables.contains_key(&def.name) || d.views.contains_key(&def.name) => {
                Some(Error::TableExists(def.name.clone()))
            }
            Some(_) => None,
        };
        if let Some(e) = refusal {
            drop(st);
            self.abort_rebuild(r);
            return Err(e);
        }
        if let Some(d) = st.dbs.get_mut(&def.db) {
            d.tables.insert(
                def.name.clone(),
                Entry {
                    handle: r.handle.clone(),
                    file: r.file.clone(),
                    key_format: key_format::CURRENT,
                    created: Some(unix_now()),
                },
            );
        }
        st.forget_log(&r.file);
        if let Err(e) = self.persist(&st) {
            if let Some(d) = st.dbs.get_mut(&def.db) {
                d.tables.remove(&def.name);
            }
            drop(st);
            self.abort_rebuild(r);
            return Err(e);
        }
        Ok(())
    }

    /// Removes the files of a rebuild that failed; the table keeps its old files.
    pub fn abort_rebuild(&self, r: Rebuild) {
        let mut st = self.state.write();
        let def = r.handle.def().clone();
        drop(r.handle);
        if let Ok(engine) = self.engine(&def.engine) {
            if let Err(e) = engine.drop_table(&def, &self.datadir.join(&r.file)) {
                strata_types::log_warning!(
                    "could not remove {} after a failed ALTER TABLE: {e}; it is removed at \
                     the next start",
                    r.file
                );
                return;
            }
        }
        st.forget_log(&r.file);
    }

    /// Switches table `old` (still the catalog's handle for its name) to the rebuilt
    /// files, whose contents must be durable already, in one write of the catalog (under
    /// the new definition's name, when the statement also renamed the table); then
    /// removes the old files.
    pub fn commit_rebuild(&self, old: &Arc<dyn Table>, mut r: Rebuild) -> Result<()> {
        let mut st = self.state.write();
        let (db, name) = (old.def().db.clone(), old.def().name.clone());
        let new_def = r.handle.def().clone();
        let current = st
            .dbs
            .get(&db)
            .and_then(|d| d.tables.get(&name))
            .is_some_and(|e| Arc::ptr_eq(&e.handle, old));
        let moved = new_def.db != db || new_def.name != name;
        let clash = if moved {
            st.dbs.get(&new_def.db).map(|d| {
                d.tables.contains_key(&new_def.name) || d.views.contains_key(&new_def.name)
            })
        } else {
            Some(false)
        };
        let refusal = if !current {
            Some(Error::TableDefChanged)
        } else if clash == Some(true) {
            Some(Error::TableExists(new_def.name.clone()))
        } else if clash.is_none() {
            Some(Error::UnknownDatabase(new_def.db.clone()))
        } else {
            None
        };
        if let Some(e) = refusal {
            drop(st);
            self.abort_rebuild(r);
            return Err(e);
        }
        let followers = std::mem::take(&mut r.followers);
        let followed = match self.redefine(&mut st, &followers, None) {
            Ok(f) => f,
            Err(e) => {
                drop(st);
                self.abort_rebuild(r);
                return Err(e);
            }
        };
        let Some(old_entry) = st.dbs.get_mut(&db).and_then(|d| d.tables.remove(&name)) else {
            followed.undo(&mut st);
            drop(st);
            self.abort_rebuild(r);
            return Err(Error::TableDefChanged);
        };
        let old_def = old_entry.handle.def().clone();
        st.dbs.entry(new_def.db.clone()).or_default().tables.insert(
            new_def.name.clone(),
            Entry {
                handle: r.handle.clone(),
                file: r.file.clone(),
                key_format: key_format::CURRENT,
                created: Some(unix_now()),
            },
        );
        st.forget_log(&r.file);
        st.ddl_log.push(LogEntry {
            engine: old_def.engine.clone(),
            file: old_entry.file.clone(),
            def: (*old_def).clone(),
        });
        // Snapshots older than now see none of the copied rows: they get 1412.
        r.handle.mark_new_contents();
        // The table's triggers follow it to its new name.
        let triggers_before = st.triggers.clone();
        if moved {
            let to = (new_def.db.clone(), new_def.name.clone());
            triggers::follow_renames(&mut st, &[((db.clone(), name.clone()), to)]);
        }
        if let Err(e) = self.persist(&st) {
            st.triggers = triggers_before;
            st.forget_log(&old_entry.file);
            if let Some(d) = st.dbs.get_mut(&new_def.db) {
                d.tables.remove(&new_def.name);
            }
            st.dbs.entry(db).or_default().tables.insert(name, old_entry);
            followed.undo(&mut st);
            drop(st);
            self.abort_rebuild(r);
            return Err(e);
        }
        followed.retire_old(self);
        self.retire(&old_entry.handle);
        drop(old_entry.handle);
        self.engine(&old_def.engine)?
            .drop_table(&old_def, &self.datadir.join(&old_entry.file))?;
        st.forget_log(&old_entry.file);
        Ok(())
    }

    /// Gives table `old` a new definition over the same files (a change no row's bytes
    /// depend on: names, defaults, comment, AUTO_INCREMENT of `btree`), possibly under a
    /// new name or database, in one write of the catalog, together with `followers`:
    /// other tables' new definitions (children whose foreign keys follow the change).
    pub fn alter_in_place(
        &self,
        old: &Arc<dyn Table>,
        def: TableDef,
        followers: Vec<(Arc<dyn Table>, TableDef)>,
    ) -> Result<()> {
        let from = (old.def().db.clone(), old.def().name.clone());
        let mut changes = vec![(old.clone(), def)];
        changes.extend(followers);
        self.rename_and_redefine(&changes, Some(&from))
    }

    /// RENAME TABLE a TO b, c TO d: every pair in order, all in one write or none. Each
    /// pair is (database, name) from and to.
    pub fn rename_tables(&self, pairs: &[(TableName, TableName)]) -> Result<()> {
        let st = self.state.read();
        // Resolve the handles as the renames go, so `a TO tmp, b TO a, tmp TO b` works.
        let mut names: BTreeMap<(String, String), Arc<dyn Table>> = BTreeMap::new();
        let mut gone: BTreeSet<(String, String)> = BTreeSet::new();
        let lookup = |k: &(String, String),
                      names: &BTreeMap<(String, String), Arc<dyn Table>>,
                      gone: &BTreeSet<(String, String)>| {
            names.get(k).cloned().or_else(|| {
                if gone.contains(k) {
                    None
                } else {
                    st.dbs
                        .get(&k.0)
                        .and_then(|d| d.tables.get(&k.1))
                        .map(|e| e.handle.clone())
                }
            })
        };
        let mut changes: Vec<(Arc<dyn Table>, TableDef)> = Vec::new();
        for (from, to) in pairs {
            let Some(h) = lookup(from, &names, &gone) else {
                return Err(Error::NoSuchTable {
                    db: from.0.clone(),
                    table: from.1.clone(),
                });
            };
            if !st.dbs.contains_key(&to.0) {
                return Err(Error::UnknownDatabase(to.0.clone()));
            }
            check_name(&to.1, false)?;
            if lookup(to, &names, &gone).is_some() || st.has_view(&to.0, &to.1) {
                return Err(Error::TableExists(to.1.clone()));
            }
            names.remove(from);
            gone.insert(from.clone());
            gone.remove(to);
            names.insert(to.clone(), h.clone());
            // The latest definition this statement gave the handle.
            let mut def = changes
                .iter()
                .rev()
                .find(|(x, _)| Arc::ptr_eq(x, &h))
                .map(|(_, d)| d.clone())
                .unwrap_or_else(|| (**h.def()).clone());
            def.db = to.0.clone();
            def.name = to.1.clone();
            changes.retain(|(x, _)| !Arc::ptr_eq(x, &h));
            changes.push((h, def));
        }
        // Foreign keys that refer to a renamed table follow it, in the same write.
        let all: Vec<Arc<dyn Table>> = st
            .dbs
            .values()
            .flat_map(|d| d.tables.values().map(|e| e.handle.clone()))
            .collect();
        for h in all {
            let i = changes.iter().position(|(x, _)| Arc::ptr_eq(x, &h));
            let mut def = match i {
                Some(i) => changes[i].1.clone(),
                None => (**h.def()).clone(),
            };
            if retarget_foreign_keys(&mut def, pairs) {
                match i {
                    Some(i) => changes[i].1 = def,
                    None => changes.push((h, def)),
                }
            }
        }
        drop(st);
        self.rename_and_redefine(&changes, None)
    }

    /// Reopens each handle's files under its new definition (and name) and records all
    /// of them in one write. `expect` names the table the single change applies to, so
    /// a handle that was replaced meanwhile is refused (1412).
    fn rename_and_redefine(
        &self,
        changes: &[(Arc<dyn Table>, TableDef)],
        expect: Option<&(String, String)>,
    ) -> Result<()> {
        let mut st = self.state.write();
        let swapped = self.redefine(&mut st, changes, expect)?;
        let triggers_before = st.triggers.clone();
        triggers::follow_renames(&mut st, &swapped.renames);
        if let Err(err) = self.persist(&st) {
            st.triggers = triggers_before;
            swapped.undo(&mut st);
            return Err(err);
        }
        swapped.retire_old(self);
        Ok(())
    }

    /// Writes every engine's cached changes (shutdown, FLUSH TABLES).
    pub fn flush(&self) -> Result<()> {
        for e in &self.engines {
            e.flush()?;
        }
        Ok(())
    }

    fn persist(&self, st: &State) -> Result<()> {
        self.version.fetch_add(1, Ordering::AcqRel);
        let file = CatalogFile {
            format_version: FORMAT_VERSION,
            databases: st.dbs.keys().cloned().collect(),
            database_collations: st
                .dbs
                .iter()
                .filter(|(_, d)| !d.collation.is_server_default())
                .map(|(n, d)| (n.clone(), d.collation))
                .collect(),
            tables: st
                .dbs
                .values()
                .flat_map(|d| {
                    d.tables.values().map(|e| StoredTable {
                        def: (**e.handle.def()).clone(),
                        file: Some(e.file.clone()),
                        key_format: e.key_format,
                        created: e.created,
                    })
                })
                .collect(),
            next_file: st.next_file,
            ddl_log: st.ddl_log.clone(),
            views: st
                .dbs
                .values()
                .flat_map(|d| d.views.values().map(|v| (**v).clone()))
                .collect(),
            triggers: st.triggers.clone(),
            routines: st.routines.clone(),
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

/// A table's (database, name).
pub type TableName = (String, String);

/// Now, in seconds since the Unix epoch (a table's `created`).
fn unix_now() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs() as i64)
}

/// Points the foreign keys of `def` that refer to a renamed table at its new name, the
/// renames applied in order; true when one changed.
fn retarget_foreign_keys(def: &mut TableDef, pairs: &[(TableName, TableName)]) -> bool {
    let mut changed = false;
    for fk in &mut def.foreign_keys {
        for (from, to) in pairs {
            if fk.references(&from.0, &from.1) {
                fk.parent_db = to.0.clone();
                fk.parent_table = to.1.clone();
                changed = true;
            }
        }
    }
    changed
}

/// The stem a table's files get from its names: `<db>/<table>`, encoded.
fn natural_file(db: &str, table: &str) -> String {
    format!("{}/{}", file_name(db), file_name(table))
}

/// information_schema and performance_schema: no tables of their own, nothing created
/// or dropped in them.
pub fn is_system_schema(db: &str) -> bool {
    is_open_schema(db)
}

/// information_schema and performance_schema: every account may read them (each table
/// shows what the account may see), so reading them needs no privilege. `mysql` is a
/// system schema too, but reading it needs SELECT there, as in MySQL.
pub fn is_open_schema(db: &str) -> bool {
    SYSTEM_SCHEMAS.iter().any(|s| s.eq_ignore_ascii_case(db))
}

pub(crate) fn check_name(name: &str, is_db: bool) -> Result<()> {
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
pub fn file_name(name: &str) -> String {
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

    /// An engine that owns no table and whose DROP fails while `fail` is set, as
    /// the btree engine's does when the disk cannot take its rewritten space directory.
    struct DropFails {
        fail: std::sync::atomic::AtomicBool,
        dropped: parking_lot::Mutex<Vec<PathBuf>>,
    }

    impl Engine for DropFails {
        fn name(&self) -> &'static str {
            "dropfails"
        }
        fn create_table(&self, _: &TableDef, _: &Path) -> Result<()> {
            Err(Error::Internal("not in this test".into()))
        }
        fn open_table(&self, _: Arc<TableDef>, _: &Path) -> Result<Arc<dyn Table>> {
            Err(Error::Internal("not in this test".into()))
        }
        fn drop_table(&self, _: &TableDef, path: &Path) -> Result<()> {
            if self.fail.load(Ordering::SeqCst) {
                return Err(Error::io(
                    path.display(),
                    std::io::Error::from_raw_os_error(28),
                ));
            }
            self.dropped.lock().push(path.to_path_buf());
            Ok(())
        }
        fn flush(&self) -> Result<()> {
            Ok(())
        }
        fn describe(&self) -> String {
            String::new()
        }
    }

    /// A DDL leftover whose files cannot be removed at startup (ENOSPC) does not stop
    /// the start: it stays in the log, its stem is not handed to a new table, and the
    /// next start removes it.
    #[test]
    fn leftover_that_cannot_be_removed_waits_for_the_next_start() {
        let dir = tempfile::tempdir().unwrap();
        let def = TableDef {
            options: Default::default(),
            db: "d".into(),
            name: "t2".into(),
            engine: "dropfails".into(),
            columns: Vec::new(),
            indexes: Vec::new(),
            auto_increment_start: 1,
            comment: String::new(),
            foreign_keys: Vec::new(),
            checks: Vec::new(),
            instant: None,
            default_collation: Default::default(),
        };
        let file = CatalogFile {
            format_version: FORMAT_VERSION,
            databases: vec!["d".into()],
            tables: Vec::new(),
            next_file: 1,
            ddl_log: vec![LogEntry {
                engine: "dropfails".into(),
                file: natural_file("d", "t2"),
                def,
            }],
            views: Vec::new(),
            triggers: Vec::new(),
            routines: Vec::new(),
            database_collations: Default::default(),
        };
        std::fs::write(
            dir.path().join(CATALOG_FILE),
            serde_json::to_vec(&file).unwrap(),
        )
        .unwrap();
        let engine = Arc::new(DropFails {
            fail: std::sync::atomic::AtomicBool::new(true),
            dropped: Default::default(),
        });
        let cat = Catalog::open(dir.path(), vec![engine.clone()]).expect("starts");
        {
            let st = cat.state.read();
            assert_eq!(st.ddl_log.len(), 1, "the leftover is still owed a removal");
            assert!(!st.stem_is_free(&natural_file("d", "t2")));
        }
        drop(cat);
        engine.fail.store(false, Ordering::SeqCst);
        let cat = Catalog::open(dir.path(), vec![engine.clone()]).expect("starts");
        assert!(cat.state.read().ddl_log.is_empty());
        assert_eq!(
            *engine.dropped.lock(),
            vec![dir.path().join(natural_file("d", "t2"))]
        );
        // Written down: a third start has nothing left to remove.
        drop(cat);
        let _cat = Catalog::open(dir.path(), vec![engine.clone()]).expect("starts");
        assert_eq!(engine.dropped.lock().len(), 1);
    }

    #[test]
    fn file_names_are_safe() {
        assert_eq!(file_name("sbtest1"), "sbtest1");
        assert_eq!(file_name("a-b/c"), "a@2db@2fc");
    }
}
