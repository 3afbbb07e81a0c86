//! A session's TEMPORARY tables (`CREATE TEMPORARY TABLE`): a per-session namespace the
//! statement context consults before the catalog ([`crate::context::ExecCtx::table`]), so
//! a temporary table shadows a base table of the same name for its session only. The
//! tables never enter `catalog.json`: their definitions live here, their files under
//! `<datadir>/#tmp/<connection id>-<n>` (`docs/format/catalog.md`, "Temporary tables").
//! The session drops them all when it ends ([`TempTables::drop_all`]); a crashed server's
//! leftovers are removed when the catalog opens ([`remove_leftovers`]).

use parking_lot::Mutex;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::Arc;
use strata_engine::{Engine, Table};
use strata_types::{Error, Result, TableDef};

/// The directory of the data directory that holds temporary tables' files.
pub const TMP_DIR: &str = "#tmp";

/// Files [`TempTables::make`] created, until [`TempTables::add`] or
/// [`TempTables::discard`].
pub struct NewTemp {
    pub handle: Arc<dyn Table>,
    engine: Arc<dyn Engine>,
    stem: PathBuf,
}

struct TempEntry {
    handle: Arc<dyn Table>,
    engine: Arc<dyn Engine>,
    stem: PathBuf,
}

#[derive(Default)]
struct Inner {
    tables: Vec<TempEntry>,
}

/// The `n` of the next stem, server-wide: a COM_CHANGE_USER session keeps its
/// connection id, and its stems must not meet the old session's.
static NEXT_FILE: AtomicU64 = AtomicU64::new(1);

/// One session's temporary tables.
#[derive(Default)]
pub struct TempTables {
    /// `<datadir>/#tmp` (empty for a context with no session, which creates none).
    dir: PathBuf,
    connection: u64,
    /// How many tables there are, read without the lock: a session with none (almost
    /// every one) pays one load per table name it resolves.
    count: AtomicUsize,
    inner: Mutex<Inner>,
}

impl TempTables {
    pub fn new(datadir: &Path, connection: u64) -> TempTables {
        TempTables {
            dir: datadir.join(TMP_DIR),
            connection,
            count: AtomicUsize::new(0),
            inner: Mutex::new(Inner::default()),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.count.load(Ordering::Acquire) == 0
    }

    /// The temporary table `db.name` of this session.
    pub fn get(&self, db: &str, name: &str) -> Option<Arc<dyn Table>> {
        if self.is_empty() {
            return None;
        }
        let inner = self.inner.lock();
        inner
            .tables
            .iter()
            .find(|e| e.handle.def().db == db && e.handle.def().name == name)
            .map(|e| e.handle.clone())
    }

    /// Whether `t` is one of this session's temporary tables (its rows are not logged
    /// in the binary log; SHOW CREATE TABLE says TEMPORARY).
    pub fn holds(&self, t: &Arc<dyn Table>) -> bool {
        if self.is_empty() {
            return false;
        }
        let inner = self.inner.lock();
        inner.tables.iter().any(|e| Arc::ptr_eq(&e.handle, t))
    }

    /// Creates the files of `def` under a fresh stem and adds the table. 1050 when this
    /// session already has a temporary table of that name (a base table of the name is
    /// no obstacle: the new table hides it).
    pub fn create(&self, engine: Arc<dyn Engine>, def: TableDef) -> Result<Arc<dyn Table>> {
        if self.get(&def.db, &def.name).is_some() {
            return Err(Error::TableExists(def.name));
        }
        let made = self.make(engine, def)?;
        let handle = made.handle.clone();
        self.add(made, None)?;
        Ok(handle)
    }

    /// New files for `def`, not yet a table of the session: CREATE TEMPORARY TABLE …
    /// SELECT fills them first, a rebuild copies into them.
    pub fn make(&self, engine: Arc<dyn Engine>, def: TableDef) -> Result<NewTemp> {
        if self.dir.as_os_str().is_empty() {
            return Err(Error::NotSupported(
                "CREATE TEMPORARY TABLE outside a session".into(),
            ));
        }
        std::fs::create_dir_all(&self.dir)
            .map_err(|e| Error::io(format!("creating {}", self.dir.display()), e))?;
        let n = NEXT_FILE.fetch_add(1, Ordering::Relaxed);
        let stem = self.dir.join(format!("{}-{n}", self.connection));
        engine.create_table(&def, &stem)?;
        let handle = engine
            .open_table(Arc::new(def.clone()), &stem)
            .inspect_err(|_| {
                let _ = engine.drop_table(&def, &stem);
            })?;
        Ok(NewTemp {
            handle,
            engine,
            stem,
        })
    }

    /// Makes `made` a table of the session, in place of `replaces` when given (whose
    /// files are then removed).
    pub fn add(&self, made: NewTemp, replaces: Option<&Arc<dyn Table>>) -> Result<()> {
        let old = {
            let mut inner = self.inner.lock();
            let old = replaces.and_then(|r| {
                let i = inner
                    .tables
                    .iter()
                    .position(|e| Arc::ptr_eq(&e.handle, r))?;
                Some(inner.tables.remove(i))
            });
            inner.tables.push(TempEntry {
                handle: made.handle,
                engine: made.engine,
                stem: made.stem,
            });
            self.count.store(inner.tables.len(), Ordering::Release);
            old
        };
        match old {
            Some(e) => drop_entry(e),
            None => Ok(()),
        }
    }

    /// Drops files made by [`TempTables::make`] that never became a table.
    pub fn discard(&self, made: NewTemp) -> Result<()> {
        drop_entry(TempEntry {
            handle: made.handle,
            engine: made.engine,
            stem: made.stem,
        })
    }

    /// Drops `db.name`; false when the session has no such temporary table.
    pub fn drop_table(&self, db: &str, name: &str) -> Result<bool> {
        let entry = {
            let mut inner = self.inner.lock();
            let Some(i) = inner
                .tables
                .iter()
                .position(|e| e.handle.def().db == db && e.handle.def().name == name)
            else {
                return Ok(false);
            };
            let e = inner.tables.remove(i);
            self.count.store(inner.tables.len(), Ordering::Release);
            e
        };
        drop_entry(entry)?;
        Ok(true)
    }

    /// Renames `db.name` to `to` (ALTER TABLE … RENAME on a temporary table): the files
    /// stay, the definition changes.
    pub fn rename(&self, db: &str, name: &str, to: (&str, &str)) -> Result<()> {
        if self.get(to.0, to.1).is_some() {
            return Err(Error::TableExists(to.1.to_string()));
        }
        let mut inner = self.inner.lock();
        let Some(e) = inner
            .tables
            .iter_mut()
            .find(|e| e.handle.def().db == db && e.handle.def().name == name)
        else {
            return Err(Error::NoSuchTable {
                db: db.to_string(),
                table: name.to_string(),
            });
        };
        let mut def = TableDef::clone(e.handle.def());
        def.db = to.0.to_string();
        def.name = to.1.to_string();
        // The engine reads the definition from the handle it opens: close and reopen
        // the same files under the new one.
        let old = std::mem::replace(&mut e.handle, e.engine.open_table(Arc::new(def), &e.stem)?);
        old.retire();
        Ok(())
    }

    /// The session ends: every temporary table goes, files and all. Errors are logged
    /// (there is no client left to tell); the next start removes what is left.
    pub fn drop_all(&self) {
        let all = {
            let mut inner = self.inner.lock();
            self.count.store(0, Ordering::Release);
            std::mem::take(&mut inner.tables)
        };
        for e in all {
            let stem = e.stem.clone();
            if let Err(err) = drop_entry(e) {
                strata_types::log_note!("removing the temporary table {}: {err}", stem.display());
            }
        }
    }

    /// `(db, name)` of every temporary table of the session.
    pub fn names(&self) -> Vec<(String, String)> {
        self.inner
            .lock()
            .tables
            .iter()
            .map(|e| (e.handle.def().db.clone(), e.handle.def().name.clone()))
            .collect()
    }
}

fn drop_entry(e: TempEntry) -> Result<()> {
    let def = e.handle.def().clone();
    e.handle.retire();
    drop(e.handle);
    e.engine.drop_table(&def, &e.stem)
}

impl Drop for TempTables {
    fn drop(&mut self) {
        if !self.inner.get_mut().tables.is_empty() {
            self.drop_all();
        }
    }
}

/// Startup: removes `<datadir>/#tmp/` and what a crashed server left in it (the
/// catalog has already dropped the engine-registered spaces there, see
/// `Catalog::clean_up`).
pub fn remove_leftovers(datadir: &Path) -> Result<()> {
    let dir = datadir.join(TMP_DIR);
    let Ok(entries) = std::fs::read_dir(&dir) else {
        return Ok(());
    };
    let n = entries.count();
    if n > 0 {
        strata_types::log_note!(
            "removing {} file(s) of temporary tables left in {}",
            n,
            dir.display()
        );
    }
    std::fs::remove_dir_all(&dir).map_err(|e| Error::io(format!("removing {}", dir.display()), e))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn leftovers_are_removed_and_a_missing_directory_is_fine() {
        let d = tempfile::tempdir().unwrap();
        remove_leftovers(d.path()).unwrap();
        let tmp = d.path().join(TMP_DIR);
        std::fs::create_dir_all(&tmp).unwrap();
        std::fs::write(tmp.join("7-1.MYD"), b"x").unwrap();
        remove_leftovers(d.path()).unwrap();
        assert!(!tmp.exists());
    }

    #[test]
    fn a_context_without_a_session_has_no_temporary_tables() {
        let t = TempTables::default();
        assert!(t.is_empty());
        assert!(t.get("db", "t").is_none());
        assert!(t.names().is_empty());
    }
}
