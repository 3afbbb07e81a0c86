//! The statements that make this server a replica — `CHANGE REPLICATION SOURCE TO` (and
//! `CHANGE MASTER TO`), `START`/`STOP`/`RESET REPLICA` (and `SLAVE`), `SHOW REPLICA
//! STATUS` (and `SLAVE STATUS`) — parsed and privilege-checked here, then handed to the
//! [`ReplicaControl`] the server binary installed (`crates/server/src/replica/`), which
//! owns the replication thread. The session crate only knows the interface: the replica
//! composes sessions (its applier is one), so it lives above them.
//!
//! Also here: the replica's position table, whose rows a commit never writes to this
//! server's own binary log (MySQL does not log its replication metadata tables either).

use crate::Session;
use strata_types::privilege::Privs;
use strata_types::{ColumnMeta, EndInfo, Error, FieldType, OkInfo, QueryOutput, Result, Value};

/// The database and table holding the replica's source and applied position; updated in
/// the applier's transactions, never binary-logged.
pub const POSITION_DB: &str = "mysql";
pub const POSITION_TABLE: &str = "slave_relay_log_info";

/// What the server's replica does for the statements (implemented by the server binary).
pub trait ReplicaControl: Send + Sync {
    /// CHANGE REPLICATION SOURCE TO: `options` as (upper-case name, value) pairs, names
    /// already in the SOURCE_ spelling (MASTER_HOST arrives as SOURCE_HOST).
    fn change_source(&self, options: &[(String, String)]) -> Result<()>;
    /// START REPLICA: false when it was already running (a note, as in MySQL).
    fn start(&self) -> Result<bool>;
    /// STOP REPLICA: false when it was not running.
    fn stop(&self) -> Result<bool>;
    /// RESET REPLICA [ALL].
    fn reset(&self, all: bool) -> Result<()>;
    /// SHOW REPLICA STATUS: the column names and, once configured, the row.
    fn status(&self) -> (Vec<&'static str>, Option<Vec<Value>>);
}

/// Whether `w` (the statement's words, upper-cased) is one of the replica statements.
fn is_replica_statement(us: &[&str]) -> bool {
    matches!(
        us,
        ["CHANGE", "REPLICATION", "SOURCE", "TO", ..]
            | ["CHANGE", "MASTER", "TO", ..]
            | ["START" | "STOP", "REPLICA" | "SLAVE", ..]
            | ["RESET", "REPLICA" | "SLAVE", ..]
            | ["SHOW", "REPLICA" | "SLAVE", "STATUS", ..]
    )
}

impl Session {
    /// The replica's applier: one rows event (WRITE/UPDATE/DELETE_ROWS) applied through
    /// the engine API (`strata_sql::apply_row_event`: no SQL text, no triggers) in the
    /// open transaction, a failure undoing only the event; returns the rows changed.
    /// Errors are MySQL's: 1032 for a row an UPDATE or DELETE cannot find, 1062 for a
    /// WRITE whose key is taken.
    pub fn apply_row_event(&mut self, ev: &strata_sql::RowEvent) -> Result<u64> {
        self.check_row_event_privilege(ev)?;
        if self.txn.is_some() || !self.autocommit() {
            // Its COMMIT waits for (and is held off by) FLUSH TABLES WITH READ LOCK.
            self.txn_wrote = true;
        }
        self.in_transaction(false, |s, txn| {
            let now = s.now();
            let env = crate::SessionEnv::new(s, now);
            let cx = s.exec_ctx(&env, txn)?;
            strata_sql::apply_row_event(&cx, ev)
        })
    }

    /// The replica statements; None when `sql` is not one of them.
    pub(crate) fn replica_statement(
        &mut self,
        sql: &str,
        out: &mut dyn QueryOutput,
    ) -> Option<Result<()>> {
        let w = strata_sql::text::words(sql);
        let u: Vec<String> = w.iter().map(|x| x.to_ascii_uppercase()).collect();
        let us: Vec<&str> = u.iter().map(String::as_str).collect();
        if !is_replica_statement(&us) {
            return None;
        }
        Some(self.run_replica_statement(&w, &us, out))
    }

    fn run_replica_statement(
        &mut self,
        w: &[String],
        us: &[&str],
        out: &mut dyn QueryOutput,
    ) -> Result<()> {
        // MySQL 8: SHOW REPLICA STATUS needs REPLICATION CLIENT (or SUPER); the others
        // REPLICATION_SLAVE_ADMIN (or SUPER).
        if us[0] == "SHOW" {
            self.need_global(Privs::REPL_CLIENT, None, "SUPER, REPLICATION CLIENT")
                .or_else(|_| self.need_global(Privs::SUPER, None, "SUPER, REPLICATION CLIENT"))?;
        } else {
            self.need_global(
                Privs::SUPER,
                Some("REPLICATION_SLAVE_ADMIN"),
                "SUPER or REPLICATION_SLAVE_ADMIN",
            )?;
        }
        let control = self
            .server
            .replica_control()
            .cloned()
            .ok_or_else(|| Error::NotSupported("replication statements here".into()))?;
        // Only the default channel: multi-source replication is not implemented.
        if let Some(i) = us.iter().position(|x| *x == "FOR") {
            let channel = w.get(i + 2).map(|c| c.trim_start_matches('\u{0}'));
            if us.get(i + 1) != Some(&"CHANNEL") || channel != Some("") {
                return Err(Error::NotSupported(
                    "replication channels other than the default one (multi-source)".into(),
                ));
            }
        }
        let end = us.iter().position(|x| *x == "FOR").unwrap_or(us.len());
        match us[0] {
            "CHANGE" => {
                let first = if us[1] == "REPLICATION" { 4 } else { 3 };
                let options = change_options(&w[first..end])?;
                self.commit_open()?;
                control.change_source(&options)?;
                out.ok(&OkInfo::default())
            }
            "START" | "STOP" => {
                if end > 2 {
                    // IO_THREAD / SQL_THREAD / UNTIL …: one thread does both here.
                    return Err(Error::NotSupported(format!(
                        "{} REPLICA {}",
                        us[0],
                        w[2..end].join(" ")
                    )));
                }
                let changed = if us[0] == "START" {
                    control.start()?
                } else {
                    control.stop()?
                };
                let mut info = OkInfo::default();
                if !changed {
                    // MySQL 8: note 3083 / 3084, the replica already running / stopped.
                    let (code, text) = if us[0] == "START" {
                        (
                            3083,
                            "Replication thread(s) for channel '' are already running.",
                        )
                    } else {
                        (
                            3084,
                            "Replication thread(s) for channel '' are already stopped.",
                        )
                    };
                    if let Ok(mut d) = self.diagnostics.lock() {
                        d.push(strata_sql::Warning {
                            level: strata_sql::WarnLevel::Note,
                            code,
                            message: text.to_string(),
                        });
                    }
                    info.warnings = 1;
                }
                out.ok(&info)
            }
            "RESET" => {
                let all = match &us[2..end] {
                    [] => false,
                    ["ALL"] => true,
                    _ => return Err(Error::Syntax(w.join(" "))),
                };
                control.reset(all)?;
                out.ok(&OkInfo::default())
            }
            _ => {
                let old_names = us[1] == "SLAVE";
                let (names, row) = control.status();
                let cols: Vec<ColumnMeta> = names
                    .iter()
                    .enumerate()
                    .map(|(i, n)| {
                        let name = if old_names {
                            n.replace("Replica", "Slave").replace("Source", "Master")
                        } else {
                            n.to_string()
                        };
                        let numeric = row
                            .as_ref()
                            .and_then(|r| r.get(i))
                            .is_some_and(|v| matches!(v, Value::Int(_) | Value::UInt(_)));
                        if numeric {
                            ColumnMeta::computed(&name, FieldType::LongLong)
                        } else {
                            ColumnMeta::computed(&name, FieldType::VarString)
                        }
                    })
                    .collect();
                out.columns(&cols)?;
                if let Some(r) = row {
                    out.row(&r)?;
                }
                out.end(&EndInfo::default())
            }
        }
    }
}

/// `NAME = value, …` after `TO`: names upper-cased and given the SOURCE_ spelling,
/// values without their quotes.
fn change_options(w: &[String]) -> Result<Vec<(String, String)>> {
    let mut out = Vec::new();
    let mut i = 0;
    let syntax = || Error::Syntax(w.join(" "));
    while i < w.len() {
        let name = w[i].to_ascii_uppercase();
        if w.get(i + 1).map(String::as_str) != Some("=") {
            return Err(syntax());
        }
        let name = match name.strip_prefix("MASTER_") {
            Some(rest) => format!("SOURCE_{rest}"),
            None => name,
        };
        let mut j = i + 2;
        let mut value = String::new();
        while j < w.len() && w[j] != "," {
            value.push_str(w[j].trim_start_matches('\u{0}'));
            j += 1;
        }
        if j == i + 2 {
            return Err(syntax());
        }
        out.push((name, value));
        i = j + 1;
    }
    if out.is_empty() {
        return Err(syntax());
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn change_options_take_both_spellings() {
        let w = strata_sql::text::words(
            "CHANGE MASTER TO MASTER_HOST='h', master_port=3306, SOURCE_LOG_FILE = 'b.000001'",
        );
        let o = change_options(&w[3..]).unwrap();
        assert_eq!(
            o,
            vec![
                ("SOURCE_HOST".into(), "h".into()),
                ("SOURCE_PORT".into(), "3306".into()),
                ("SOURCE_LOG_FILE".into(), "b.000001".into()),
            ]
        );
        assert!(change_options(&w[3..4]).is_err());
    }
}
