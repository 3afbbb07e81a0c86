//! Stored procedures and functions in the data dictionary: their stored definitions
//! (`docs/format/catalog.md`, the `routines` list of `catalog.json`) and the DDL on
//! them, each change one atomic write of the catalog. DROP DATABASE takes a database's
//! routines with it. The body is text; `crate::routines` parses and runs it.

use super::{Catalog, State};
use serde::{Deserialize, Serialize};
use strata_types::{Error, Result};

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum RoutineKind {
    Procedure,
    Function,
}

impl RoutineKind {
    pub fn word(self) -> &'static str {
        match self {
            RoutineKind::Procedure => "PROCEDURE",
            RoutineKind::Function => "FUNCTION",
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum ParamMode {
    In,
    Out,
    InOut,
}

impl ParamMode {
    pub fn word(self) -> &'static str {
        match self {
            ParamMode::In => "IN",
            ParamMode::Out => "OUT",
            ParamMode::InOut => "INOUT",
        }
    }
}

#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct ParamDef {
    pub mode: ParamMode,
    pub name: String,
    /// The type as written (`DECIMAL(10,2)`, `VARCHAR(20) CHARSET utf8mb4`).
    pub data_type: String,
}

/// One stored procedure or function as stored.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct RoutineDef {
    pub db: String,
    pub name: String,
    pub kind: RoutineKind,
    pub params: Vec<ParamDef>,
    /// A function's RETURNS type as written.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub returns: Option<String>,
    pub body: String,
    pub deterministic: bool,
    /// CONTAINS SQL, NO SQL, READS SQL DATA or MODIFIES SQL DATA.
    pub data_access: String,
    /// DEFINER or INVOKER (recorded and shown; Strata has one privilege level).
    pub security: String,
    pub comment: String,
    pub definer: String,
    pub sql_mode: String,
    pub created: String,
    pub modified: String,
}

fn same(r: &RoutineDef, db: &str, name: &str, kind: RoutineKind) -> bool {
    r.db == db && r.kind == kind && r.name.eq_ignore_ascii_case(name)
}

impl Catalog {
    /// Every routine of `db` (all databases when None), by name.
    pub fn routines(&self, db: Option<&str>) -> Vec<RoutineDef> {
        let st = self.state.read();
        let mut v: Vec<RoutineDef> = st
            .routines
            .iter()
            .filter(|r| db.is_none_or(|d| r.db == d))
            .cloned()
            .collect();
        v.sort_by(|a, b| (&a.db, &a.name).cmp(&(&b.db, &b.name)));
        v
    }

    pub fn routine(&self, db: &str, name: &str, kind: RoutineKind) -> Option<RoutineDef> {
        let st = self.state.read();
        st.routines
            .iter()
            .find(|r| same(r, db, name, kind))
            .cloned()
    }

    /// Adds a routine (1304 when one of that kind and name exists; `if_not_exists` turns
    /// that into false). The database must exist (1049).
    pub fn create_routine(&self, def: RoutineDef, if_not_exists: bool) -> Result<bool> {
        let mut st = self.state.write();
        if !st.dbs.contains_key(&def.db) {
            return Err(Error::UnknownDatabase(def.db.clone()));
        }
        if st
            .routines
            .iter()
            .any(|r| same(r, &def.db, &def.name, def.kind))
        {
            return if if_not_exists {
                Ok(false)
            } else {
                Err(Error::RoutineExists {
                    kind: def.kind.word(),
                    name: def.name.clone(),
                })
            };
        }
        st.routines.push(def);
        if let Err(e) = self.persist(&st) {
            st.routines.pop();
            return Err(e);
        }
        Ok(true)
    }

    /// Removes a routine; false when there is none.
    pub fn drop_routine(&self, db: &str, name: &str, kind: RoutineKind) -> Result<bool> {
        let mut st = self.state.write();
        let Some(i) = st.routines.iter().position(|r| same(r, db, name, kind)) else {
            return Ok(false);
        };
        let r = st.routines.remove(i);
        if let Err(e) = self.persist(&st) {
            st.routines.insert(i, r);
            return Err(e);
        }
        Ok(true)
    }

    /// ALTER PROCEDURE/FUNCTION: replaces the stored definition (its characteristics).
    pub fn replace_routine(&self, def: RoutineDef) -> Result<()> {
        let mut st = self.state.write();
        let Some(i) = st
            .routines
            .iter()
            .position(|r| same(r, &def.db, &def.name, def.kind))
        else {
            return Err(Error::RoutineDoesNotExist {
                kind: def.kind.word(),
                name: format!("{}.{}", def.db, def.name),
            });
        };
        let old = std::mem::replace(&mut st.routines[i], def);
        if let Err(e) = self.persist(&st) {
            st.routines[i] = old;
            return Err(e);
        }
        Ok(())
    }
}

/// DROP DATABASE: the database's routines go in the same write.
pub(super) fn remove_for(st: &mut State, db: &str) -> Vec<RoutineDef> {
    let (gone, kept): (Vec<RoutineDef>, Vec<RoutineDef>) = std::mem::take(&mut st.routines)
        .into_iter()
        .partition(|r| r.db == db);
    st.routines = kept;
    gone
}
