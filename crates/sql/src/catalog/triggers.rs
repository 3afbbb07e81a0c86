//! Triggers in the data dictionary: their stored definitions (`docs/format/catalog.md`,
//! the `triggers` list of `catalog.json`), kept in action order, and the DDL on them.
//! Each change is one atomic write of the catalog, as table DDL is; DROP TABLE and
//! DROP DATABASE take a table's triggers with it in that same write, RENAME TABLE
//! moves them to the new name. What a trigger does is `crate::routines`' business:
//! here it is text.

use super::{Catalog, State};
use serde::{Deserialize, Serialize};
use strata_types::{Error, Result};

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Timing {
    Before,
    After,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Event {
    Insert,
    Update,
    Delete,
}

impl Timing {
    pub fn word(self) -> &'static str {
        match self {
            Timing::Before => "BEFORE",
            Timing::After => "AFTER",
        }
    }
}

impl Event {
    pub fn word(self) -> &'static str {
        match self {
            Event::Insert => "INSERT",
            Event::Update => "UPDATE",
            Event::Delete => "DELETE",
        }
    }
}

/// One trigger as stored.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct TriggerDef {
    pub db: String,
    pub name: String,
    pub table: String,
    pub timing: Timing,
    pub event: Event,
    /// The body as written (a statement, compound or not).
    pub body: String,
    /// `user@host`, as given by DEFINER= or the creating session's user.
    pub definer: String,
    /// The session's sql_mode when it was created (SHOW TRIGGERS shows it).
    pub sql_mode: String,
    /// When it was created: `YYYY-MM-DD hh:mm:ss.ff` (SHOW TRIGGERS' Created).
    pub created: String,
}

/// Where CREATE TRIGGER puts a trigger among the table's triggers of the same timing
/// and event (FOLLOWS / PRECEDES another; last otherwise).
pub enum Placement {
    Last,
    Follows(String),
    Precedes(String),
}

/// Errors 1359 and friends are checked against this list.
pub(super) fn same_name(a: &TriggerDef, db: &str, name: &str) -> bool {
    a.db == db && a.name.eq_ignore_ascii_case(name)
}

impl Catalog {
    /// Every trigger of `db` (all databases when None), in action order per table.
    pub fn triggers(&self, db: Option<&str>) -> Vec<TriggerDef> {
        let st = self.state.read();
        st.triggers
            .iter()
            .filter(|t| db.is_none_or(|d| t.db == d))
            .cloned()
            .collect()
    }

    /// The triggers of table `db.table`, in action order.
    pub fn table_triggers(&self, db: &str, table: &str) -> Vec<TriggerDef> {
        let st = self.state.read();
        st.triggers
            .iter()
            .filter(|t| t.db == db && t.table == table)
            .cloned()
            .collect()
    }

    /// Adds a trigger (1359 when its schema has one of that name; `if_not_exists`
    /// turns that into false). The table must exist (1146).
    pub fn create_trigger(
        &self,
        def: TriggerDef,
        placement: Placement,
        if_not_exists: bool,
    ) -> Result<bool> {
        let mut st = self.state.write();
        let exists = st
            .dbs
            .get(&def.db)
            .is_some_and(|d| d.tables.contains_key(&def.table));
        if !exists {
            return Err(Error::NoSuchTable {
                db: def.db.clone(),
                table: def.table.clone(),
            });
        }
        if st.triggers.iter().any(|t| same_name(t, &def.db, &def.name)) {
            return if if_not_exists {
                Ok(false)
            } else {
                Err(Error::TriggerExists)
            };
        }
        let at = match &placement {
            Placement::Last => st.triggers.len(),
            Placement::Follows(other) | Placement::Precedes(other) => {
                let i = st
                    .triggers
                    .iter()
                    .position(|t| {
                        same_name(t, &def.db, other)
                            && t.table == def.table
                            && t.timing == def.timing
                            && t.event == def.event
                    })
                    .ok_or_else(|| Error::Signal {
                        code: 3011,
                        sqlstate: "HY000".into(),
                        message: format!("Referenced trigger '{other}' for the given action time and event type does not exist."),
                    })?;
                if matches!(placement, Placement::Follows(_)) {
                    i + 1
                } else {
                    i
                }
            }
        };
        st.triggers.insert(at, def);
        if let Err(e) = self.persist(&st) {
            st.triggers.remove(at);
            return Err(e);
        }
        Ok(true)
    }

    /// Removes trigger `db.name`; false when there is none (the caller decides between
    /// 1360 and IF EXISTS' note).
    pub fn drop_trigger(&self, db: &str, name: &str) -> Result<bool> {
        let mut st = self.state.write();
        let Some(i) = st.triggers.iter().position(|t| same_name(t, db, name)) else {
            return Ok(false);
        };
        let t = st.triggers.remove(i);
        if let Err(e) = self.persist(&st) {
            st.triggers.insert(i, t);
            return Err(e);
        }
        Ok(true)
    }
}

/// DROP TABLE / DROP DATABASE: the triggers that go with the table (`table` None: every
/// table of `db`). Returns what was removed, for undoing a failed write.
pub(super) fn remove_for(
    st: &mut State,
    db: &str,
    table: Option<&str>,
) -> Vec<(usize, TriggerDef)> {
    let mut removed = Vec::new();
    let mut i = 0;
    let mut n = 0;
    st.triggers.retain(|t| {
        let gone = t.db == db && table.is_none_or(|x| t.table == x);
        if gone {
            removed.push((i + n, t.clone()));
            n += 1;
        } else {
            i += 1;
        }
        !gone
    });
    removed
}

/// Puts back what [`remove_for`] took out.
pub(super) fn restore(st: &mut State, removed: Vec<(usize, TriggerDef)>) {
    for (i, t) in removed {
        let at = i.min(st.triggers.len());
        st.triggers.insert(at, t);
    }
}

/// RENAME TABLE: triggers follow their table to its new name (and database).
pub(super) fn follow_renames(st: &mut State, renames: &[(super::TableName, super::TableName)]) {
    for t in &mut st.triggers {
        if let Some((_, to)) = renames
            .iter()
            .find(|(from, _)| from.0 == t.db && from.1 == t.table)
        {
            t.db = to.0.clone();
            t.table = to.1.clone();
        }
    }
}
