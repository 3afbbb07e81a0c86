//! Views in the catalog: their stored definitions (`catalog.json`'s `views`, format in
//! `docs/format/catalog.md`) and the DDL that changes them. A view has no files: each
//! change is one atomic write of the catalog, like every other DDL commit point, so a
//! crash leaves the old or the new definition.
//!
//! A view shares its database's namespace with the tables (1050 for either name taken);
//! its query is kept as text and bound afresh by every statement that reads it
//! (`planner::views`), so it sees the base tables as they are now.

use super::{Catalog, State};
use serde::{Deserialize, Serialize};
use std::sync::Arc;
use strata_types::{Error, Result};

/// One view as stored.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ViewDef {
    pub db: String,
    pub name: String,
    /// The view's column names, in order: the column list of CREATE VIEW, or the names
    /// its query's columns had when it was created.
    pub columns: Vec<String>,
    /// Whether CREATE VIEW had a column list (SHOW CREATE VIEW prints it then).
    #[serde(default)]
    pub explicit_columns: bool,
    /// The names the query's own columns had at CREATE time: a query whose columns no
    /// longer have these names (`SELECT *` over an altered table) has its columns
    /// picked by them (`planner::views`).
    pub source_names: Vec<String>,
    /// The query after `AS`, as the client wrote it.
    pub query: String,
    /// `UNDEFINED`, `MERGE` or `TEMPTABLE`.
    pub algorithm: String,
    /// The definer account's user and host.
    pub definer_user: String,
    pub definer_host: String,
    /// `DEFINER` or `INVOKER`.
    pub security: String,
    /// `NONE`, `CASCADED` or `LOCAL`.
    pub check_option: String,
    pub character_set_client: String,
    pub collation_connection: String,
    /// Whether MySQL's rules let INSERT/UPDATE/DELETE change rows through it
    /// (`information_schema.VIEWS.IS_UPDATABLE`), decided at CREATE time.
    #[serde(default)]
    pub updatable: bool,
    /// Each column's description at CREATE time, for `information_schema.COLUMNS`
    /// (MySQL keeps a view's columns in its dictionary the same way).
    #[serde(default)]
    pub column_info: Vec<ViewColumnInfo>,
}

/// A view column as `information_schema.COLUMNS` shows it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ViewColumnInfo {
    /// The column type as SHOW COLUMNS prints it (`int`, `varchar(8)`).
    pub type_text: String,
    pub nullable: bool,
    /// The default, as text; None for NULL.
    pub default: Option<String>,
    /// The collation of a text column.
    pub collation: Option<String>,
}

impl ViewDef {
    /// `` `user`@`host` `` as SHOW CREATE VIEW prints the definer.
    pub fn definer(&self) -> String {
        format!(
            "{}@{}",
            quote_ident(&self.definer_user),
            quote_ident(&self.definer_host)
        )
    }
}

/// A name in backquotes, a backquote in it doubled.
pub fn quote_ident(n: &str) -> String {
    format!("`{}`", n.replace('`', "``"))
}

impl State {
    fn has_table(&self, db: &str, name: &str) -> bool {
        self.dbs
            .get(db)
            .is_some_and(|d| d.tables.contains_key(name))
    }

    pub(super) fn has_view(&self, db: &str, name: &str) -> bool {
        self.dbs.get(db).is_some_and(|d| d.views.contains_key(name))
    }
}

impl Catalog {
    /// The view `db`.`name`, if there is one.
    pub fn view(&self, db: &str, name: &str) -> Option<Arc<ViewDef>> {
        self.state
            .read()
            .dbs
            .get(db)
            .and_then(|d| d.views.get(name))
            .cloned()
    }

    /// The views of `db`, by name.
    pub fn views(&self, db: &str) -> Vec<Arc<ViewDef>> {
        self.state
            .read()
            .dbs
            .get(db)
            .map(|d| d.views.values().cloned().collect())
            .unwrap_or_default()
    }

    /// CREATE [OR REPLACE] VIEW (`replace`), or ALTER VIEW (`alter`: the view must exist).
    pub fn put_view(&self, def: ViewDef, replace: bool, alter: bool) -> Result<()> {
        super::check_name(&def.name, false)?;
        let mut st = self.state.write();
        if !st.dbs.contains_key(&def.db) {
            return Err(Error::UnknownDatabase(def.db.clone()));
        }
        if st.has_table(&def.db, &def.name) {
            return Err(if alter || replace {
                Error::WrongObject {
                    name: format!("{}.{}", def.db, def.name),
                    expected: "VIEW",
                }
            } else {
                Error::TableExists(def.name.clone())
            });
        }
        let exists = st.has_view(&def.db, &def.name);
        if alter && !exists {
            return Err(Error::NoSuchTable {
                db: def.db.clone(),
                table: def.name.clone(),
            });
        }
        if exists && !replace && !alter {
            return Err(Error::TableExists(def.name.clone()));
        }
        let (db, name) = (def.db.clone(), def.name.clone());
        let Some(d) = st.dbs.get_mut(&db) else {
            return Err(Error::UnknownDatabase(db));
        };
        let old = d.views.insert(name.clone(), Arc::new(def));
        if let Err(e) = self.persist(&st) {
            if let Some(d) = st.dbs.get_mut(&db) {
                match old {
                    Some(o) => d.views.insert(name, o),
                    None => d.views.remove(&name),
                };
            }
            return Err(e);
        }
        Ok(())
    }

    /// DROP VIEW of every name, in one write: names of tables are refused (1347) before
    /// anything is dropped; missing views are reported together (1051) unless
    /// `if_exists`, after the others are dropped, as MySQL does.
    pub fn drop_views(&self, names: &[super::TableName], if_exists: bool) -> Result<()> {
        let mut st = self.state.write();
        for (db, name) in names {
            if st.has_table(db, name) {
                return Err(Error::WrongObject {
                    name: format!("{db}.{name}"),
                    expected: "VIEW",
                });
            }
        }
        let mut removed = Vec::new();
        let mut missing = Vec::new();
        for (db, name) in names {
            match st.dbs.get_mut(db).and_then(|d| d.views.remove(name)) {
                Some(v) => removed.push(v),
                None => missing.push(format!("{db}.{name}")),
            }
        }
        if !removed.is_empty() {
            if let Err(e) = self.persist(&st) {
                for v in removed {
                    if let Some(d) = st.dbs.get_mut(&v.db) {
                        d.views.insert(v.name.clone(), v);
                    }
                }
                return Err(e);
            }
        }
        if !missing.is_empty() && !if_exists {
            return Err(Error::UnknownTable(missing.join(",")));
        }
        Ok(())
    }

    /// RENAME TABLE of views: each keeps its definition under its new name, the pairs
    /// applied in order and recorded in one write (all or none).
    pub fn rename_views(&self, pairs: &[(super::TableName, super::TableName)]) -> Result<()> {
        let mut st = self.state.write();
        let mut done: Vec<(super::TableName, super::TableName, Arc<ViewDef>)> = Vec::new();
        let undo =
            |st: &mut State, done: Vec<(super::TableName, super::TableName, Arc<ViewDef>)>| {
                for (from, to, old) in done.into_iter().rev() {
                    if let Some(d) = st.dbs.get_mut(&to.0) {
                        d.views.remove(&to.1);
                    }
                    if let Some(d) = st.dbs.get_mut(&from.0) {
                        d.views.insert(from.1.clone(), old);
                    }
                }
            };
        for (from, to) in pairs {
            let refused = if let Err(e) = super::check_name(&to.1, false) {
                Some(e)
            } else if !st.dbs.contains_key(&to.0) {
                Some(Error::UnknownDatabase(to.0.clone()))
            } else if st.has_table(&to.0, &to.1) || st.has_view(&to.0, &to.1) {
                Some(Error::TableExists(to.1.clone()))
            } else {
                None
            };
            if let Some(e) = refused {
                undo(&mut st, done);
                return Err(e);
            }
            let Some(old) = st
                .dbs
                .get_mut(&from.0)
                .and_then(|d| d.views.remove(&from.1))
            else {
                undo(&mut st, done);
                return Err(Error::NoSuchTable {
                    db: from.0.clone(),
                    table: from.1.clone(),
                });
            };
            let mut def = (*old).clone();
            def.db = to.0.clone();
            def.name = to.1.clone();
            if let Some(d) = st.dbs.get_mut(&to.0) {
                d.views.insert(to.1.clone(), Arc::new(def));
            }
            done.push((from.clone(), to.clone(), old));
        }
        if let Err(e) = self.persist(&st) {
            undo(&mut st, done);
            return Err(e);
        }
        Ok(())
    }
}
