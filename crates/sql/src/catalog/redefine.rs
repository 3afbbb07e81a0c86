//! New definitions for tables over their existing files: the step that RENAME TABLE,
//! an in-place ALTER TABLE, and the tables that follow another's change (a child whose
//! foreign key names a renamed parent or parent column) share. Each changed table is
//! taken out of the catalog's state, its handle flushed and reopened under the new
//! definition, and put back; the caller then persists the state (the commit point) or
//! undoes the swap when that write fails, so the catalog in memory never differs from
//! the one on disk.

use super::{Catalog, Entry, State, TableName};
use std::sync::Arc;
use strata_engine::Table;
use strata_types::{Error, Result, TableDef};

/// Tables whose entries [`Catalog::redefine`] swapped in memory, not yet persisted.
pub(super) struct Redefined {
    /// The old entries, by their old names.
    taken: Vec<(String, String, Entry)>,
    /// The new entries' names.
    placed: Vec<TableName>,
    /// (old name, new name) of each table, in the order of the changes.
    pub(super) renames: Vec<(TableName, TableName)>,
}

impl Redefined {
    /// After the catalog was written: the old handles stop serving statements.
    pub(super) fn retire_old(self, catalog: &Catalog) {
        for (_, _, e) in &self.taken {
            catalog.retire(&e.handle);
        }
    }

    /// The write failed: the old entries come back (their files are unchanged, so the
    /// old handles are still right for them).
    pub(super) fn undo(self, st: &mut State) {
        for (db, name) in &self.placed {
            if let Some(d) = st.dbs.get_mut(db) {
                d.tables.remove(name);
            }
        }
        put_back(st, self.taken);
    }
}

fn put_back(st: &mut State, taken: Vec<(String, String, Entry)>) {
    for (db, name, e) in taken {
        st.dbs.entry(db).or_default().tables.insert(name, e);
    }
}

impl Catalog {
    /// Gives each handle in `changes` its new definition (and name) in `st`. Every
    /// handle must still be the catalog's entry for its name: otherwise 1412 when
    /// `expect` names the statement's own table, else 1146. A new name must be free
    /// (1050) in a database that exists (1049). Nothing is persisted here.
    pub(super) fn redefine(
        &self,
        st: &mut State,
        changes: &[(Arc<dyn Table>, TableDef)],
        expect: Option<&TableName>,
    ) -> Result<Redefined> {
        // Take every old entry out, checking it is still current.
        let mut taken: Vec<(String, String, Entry)> = Vec::new();
        for (h, _) in changes {
            let (db, name) = (h.def().db.clone(), h.def().name.clone());
            let current = st
                .dbs
                .get(&db)
                .and_then(|d| d.tables.get(&name))
                .is_some_and(|e| Arc::ptr_eq(&e.handle, h));
            if !current {
                put_back(st, taken);
                return Err(match expect {
                    Some(_) => Error::TableDefChanged,
                    None => Error::NoSuchTable { db, table: name },
                });
            }
            if let Some(e) = st.dbs.get_mut(&db).and_then(|d| d.tables.remove(&name)) {
                taken.push((db, name, e));
            }
        }
        for (_, def) in changes {
            let clash = st.dbs.get(&def.db).is_some_and(|d| {
                d.tables.contains_key(&def.name) || d.views.contains_key(&def.name)
            });
            if clash || !st.dbs.contains_key(&def.db) {
                put_back(st, taken);
                return Err(if clash {
                    Error::TableExists(def.name.clone())
                } else {
                    Error::UnknownDatabase(def.db.clone())
                });
            }
        }
        // Flush each old handle so the reopened one reads what it wrote, then reopen.
        let mut opened: Vec<Arc<dyn Table>> = Vec::new();
        for ((h, def), (_, _, e)) in changes.iter().zip(&taken) {
            let reopened = h.flush().and_then(|()| {
                self.engine(&def.engine)?
                    .open_table(Arc::new(def.clone()), &self.datadir.join(&e.file))
            });
            match reopened {
                Ok(n) => opened.push(n),
                Err(err) => {
                    put_back(st, taken);
                    return Err(err);
                }
            }
        }
        let mut placed = Vec::new();
        for ((_, def), ((_, _, e), n)) in changes.iter().zip(taken.iter().zip(opened)) {
            st.dbs.entry(def.db.clone()).or_default().tables.insert(
                def.name.clone(),
                Entry {
                    handle: n,
                    file: e.file.clone(),
                    key_format: e.key_format,
                    created: e.created,
                },
            );
            placed.push((def.db.clone(), def.name.clone()));
        }
        let renames = taken
            .iter()
            .zip(changes)
            .map(|((db, name, _), (_, def))| {
                (
                    (db.clone(), name.clone()),
                    (def.db.clone(), def.name.clone()),
                )
            })
            .collect();
        Ok(Redefined {
            taken,
            placed,
            renames,
        })
    }
}
