//! The replica's source and applied position, and the table that keeps them across
//! restarts: `mysql.slave_relay_log_info`, one row (Id = 1), a btree (InnoDB-style)
//! table. The applier updates the position — the source file and offset, and the
//! source's GTIDs applied (`gtid`) — in the same transaction as the rows it applies, so
//! after a crash the table says exactly which source transactions the tables hold. Its changes never reach this server's own binary log
//! (`strata_session::replica::POSITION_TABLE`), and its DDL is run with `sql_log_bin=0`.

use strata_session::replica::{POSITION_DB, POSITION_TABLE};
use strata_session::Session;
use strata_types::{ColumnMeta, EndInfo, Error, OkInfo, QueryOutput, Result, Value};

/// Where to replicate from, and how far the tables have applied.
#[derive(Clone, Debug, PartialEq)]
pub struct Source {
    pub host: String,
    pub port: u16,
    pub user: String,
    pub password: String,
    /// SOURCE_CONNECT_RETRY: seconds between connection attempts.
    pub connect_retry: u32,
    /// The source's binary log file and the position in it after the last transaction
    /// applied (empty file: from the source's first file).
    pub log_file: String,
    pub log_pos: u64,
    /// SOURCE_AUTO_POSITION=1: ask a MySQL or Strata source for every transaction not
    /// in `gtid_executed` (COM_BINLOG_DUMP_GTID) instead of from the file and position.
    pub auto_position: bool,
    /// MASTER_USE_GTID=slave_pos|current_pos (MariaDB's auto-positioning, lower case;
    /// empty for no): ask a MariaDB source from `gtid_slave_pos`.
    pub use_gtid: String,
    /// The source's GTIDs applied here, MySQL's form (`uuid:1-5,…`).
    pub gtid_executed: String,
    /// The source's GTID position applied here, MariaDB's form (`0-1-100,…`).
    pub gtid_slave_pos: String,
}

impl Source {
    /// Whether the replica asks by GTID rather than by file and position.
    pub fn gtid_positioned(&self) -> bool {
        self.auto_position || !self.use_gtid.is_empty()
    }
}

impl Default for Source {
    fn default() -> Source {
        Source {
            host: String::new(),
            port: 3306,
            user: String::new(),
            password: String::new(),
            connect_retry: 60,
            log_file: String::new(),
            log_pos: 4,
            auto_position: false,
            use_gtid: String::new(),
            gtid_executed: String::new(),
            gtid_slave_pos: String::new(),
        }
    }
}

fn number<T: std::str::FromStr>(name: &str, v: &str) -> Result<T> {
    v.parse()
        .map_err(|_| Error::Syntax(format!("{name} = {v}: a number is expected")))
}

impl Source {
    /// Applies CHANGE REPLICATION SOURCE TO's options. As in MySQL, changing the host
    /// or port without a position starts from the new source's first file; the GTIDs
    /// applied are kept (a GTID-positioned replica moved to another server of the same
    /// topology goes on from them). A file or position while GTID positioning is on is
    /// 1776, as in MySQL.
    /// On an error nothing is changed.
    pub fn change(&mut self, options: &[(String, String)]) -> Result<()> {
        let mut next = self.clone();
        next.change_all(options)?;
        *self = next;
        Ok(())
    }

    fn change_all(&mut self, options: &[(String, String)]) -> Result<()> {
        let mut position_given = false;
        let mut source_changed = false;
        for (name, v) in options {
            match name.as_str() {
                "SOURCE_HOST" => {
                    source_changed |= *v != self.host;
                    self.host = v.clone();
                }
                "SOURCE_PORT" => {
                    let p = number(name, v)?;
                    source_changed |= p != self.port;
                    self.port = p;
                }
                "SOURCE_USER" => self.user = v.clone(),
                "SOURCE_PASSWORD" => self.password = v.clone(),
                "SOURCE_CONNECT_RETRY" => self.connect_retry = number(name, v)?,
                "SOURCE_LOG_FILE" => {
                    self.log_file = v.clone();
                    position_given = true;
                }
                "SOURCE_LOG_POS" => {
                    self.log_pos = number::<u64>(name, v)?.max(4);
                    position_given = true;
                }
                "SOURCE_AUTO_POSITION" => match v.as_str() {
                    "0" => self.auto_position = false,
                    "1" => self.auto_position = true,
                    _ => {
                        return Err(Error::Syntax(format!(
                            "SOURCE_AUTO_POSITION = {v}: 0 or 1 is expected"
                        )))
                    }
                },
                // MariaDB's spelling (MASTER_USE_GTID arrives as SOURCE_USE_GTID). This
                // server has no MariaDB GTIDs of its own, so current_pos is slave_pos.
                "SOURCE_USE_GTID" => {
                    let l = v.to_ascii_lowercase();
                    match l.as_str() {
                        "no" => self.use_gtid.clear(),
                        "slave_pos" | "current_pos" => self.use_gtid = l,
                        _ => {
                            return Err(Error::Syntax(format!(
                                "MASTER_USE_GTID = {v}: no, slave_pos or current_pos is expected"
                            )))
                        }
                    }
                }
                other => {
                    return Err(Error::NotSupported(format!(
                        "CHANGE REPLICATION SOURCE option {other}"
                    )))
                }
            }
        }
        if self.auto_position && !self.use_gtid.is_empty() {
            return Err(Error::NotSupported(
                "SOURCE_AUTO_POSITION=1 together with MASTER_USE_GTID (one is MySQL's \
                 GTID positioning, the other MariaDB's)"
                    .into(),
            ));
        }
        if position_given && self.gtid_positioned() {
            return Err(Error::BadReplicaAutoPosition);
        }
        if source_changed && !position_given {
            self.log_file.clear();
            self.log_pos = 4;
        }
        Ok(())
    }
}

/// Discards results; keeps an OK's counts.
#[derive(Default)]
pub struct Sink {
    pub ok: Option<OkInfo>,
    pub rows: Vec<Vec<Value>>,
}

impl QueryOutput for Sink {
    fn columns(&mut self, _cols: &[ColumnMeta]) -> Result<()> {
        Ok(())
    }
    fn row(&mut self, row: &[Value]) -> Result<()> {
        self.rows.push(row.to_vec());
        Ok(())
    }
    fn end(&mut self, _info: &EndInfo) -> Result<()> {
        Ok(())
    }
    fn ok(&mut self, info: &OkInfo) -> Result<()> {
        self.ok = Some(info.clone());
        Ok(())
    }
}

impl strata_session::ResultSink for Sink {
    fn next_result(&mut self) -> Result<()> {
        Ok(())
    }
}

/// Runs one statement on `s` as a client's (so its statement-long metadata locks go at
/// its end), returning what it produced.
pub fn run(s: &mut Session, sql: &str) -> Result<Sink> {
    let mut sink = Sink::default();
    s.query(sql, false, &mut sink)?;
    Ok(sink)
}

/// A string literal for the position table's statements (file names, GTID sets).
fn q(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('\'');
    for c in s.chars() {
        match c {
            '\'' => out.push_str("''"),
            '\\' => out.push_str("\\\\"),
            '\0' => out.push_str("\\0"),
            c => out.push(c),
        }
    }
    out.push('\'');
    out
}

/// Creates the position table when missing, outside the binary log.
pub fn ensure_table(s: &mut Session) -> Result<()> {
    if s.server()
        .catalog
        .table(POSITION_DB, POSITION_TABLE)
        .is_ok()
    {
        return Ok(());
    }
    run(s, "SET sql_log_bin = 0")?;
    let r = run(s, &format!("CREATE DATABASE IF NOT EXISTS {POSITION_DB}")).and_then(|_| {
        run(
            s,
            &format!(
                "CREATE TABLE IF NOT EXISTS {POSITION_DB}.{POSITION_TABLE} (
                   Id INT UNSIGNED NOT NULL PRIMARY KEY,
                   Host VARCHAR(255) NOT NULL,
                   Port INT UNSIGNED NOT NULL,
                   User_name VARCHAR(255) NOT NULL,
                   User_password VARCHAR(255) NOT NULL,
                   Connect_retry INT UNSIGNED NOT NULL,
                   Source_log_name VARCHAR(512) NOT NULL,
                   Source_log_pos BIGINT UNSIGNED NOT NULL,
                   {GTID_COLUMNS}
                 ) ENGINE=InnoDB"
            ),
        )
    });
    run(s, "SET sql_log_bin = 1")?;
    r.map(|_| ())
}

/// The GTID columns (added to a table an older version created, by `upgrade_table`).
const GTID_COLUMNS: &str = "Auto_position TINYINT UNSIGNED NOT NULL DEFAULT 0,
                   Use_gtid VARCHAR(16) NOT NULL DEFAULT '',
                   Gtid_executed LONGTEXT NOT NULL,
                   Gtid_slave_pos TEXT NOT NULL";

/// A position table without the GTID columns (written before they existed) gets them,
/// outside the binary log.
fn upgrade_table(s: &mut Session) -> Result<()> {
    let Ok(t) = s.server().catalog.table(POSITION_DB, POSITION_TABLE) else {
        return Ok(());
    };
    if t.def()
        .columns
        .iter()
        .any(|c| c.name.eq_ignore_ascii_case("Gtid_executed"))
    {
        return Ok(());
    }
    run(s, "SET sql_log_bin = 0")?;
    let r = run(
        s,
        &format!(
            "ALTER TABLE {POSITION_DB}.{POSITION_TABLE} ADD COLUMN {}",
            GTID_COLUMNS.replace(",\n", ", ADD COLUMN ")
        ),
    );
    run(s, "SET sql_log_bin = 1")?;
    r.map(|_| ())
}

/// The stored source, if CHANGE REPLICATION SOURCE ran (and no RESET REPLICA ALL since).
pub fn load(s: &mut Session) -> Result<Option<Source>> {
    if s.server()
        .catalog
        .table(POSITION_DB, POSITION_TABLE)
        .is_err()
    {
        return Ok(None);
    }
    upgrade_table(s)?;
    let sink = run(
        s,
        &format!(
            "SELECT Host, Port, User_name, User_password, Connect_retry, Source_log_name,
               Source_log_pos, Auto_position, Use_gtid, Gtid_executed, Gtid_slave_pos
             FROM {POSITION_DB}.{POSITION_TABLE} WHERE Id = 1"
        ),
    )?;
    let Some(r) = sink.rows.first() else {
        return Ok(None);
    };
    let int = |v: &Value| v.to_i64().unwrap_or(0);
    Ok(Some(Source {
        host: r[0].to_text(),
        port: int(&r[1]) as u16,
        user: r[2].to_text(),
        password: r[3].to_text(),
        connect_retry: int(&r[4]) as u32,
        log_file: r[5].to_text(),
        log_pos: int(&r[6]) as u64,
        auto_position: int(&r[7]) != 0,
        use_gtid: r[8].to_text(),
        gtid_executed: r[9].to_text(),
        gtid_slave_pos: r[10].to_text(),
    }))
}

/// Writes the whole row (CHANGE REPLICATION SOURCE), in its own transaction.
pub fn save(s: &mut Session, src: &Source) -> Result<()> {
    ensure_table(s)?;
    upgrade_table(s)?;
    run(
        s,
        &format!(
            "REPLACE INTO {POSITION_DB}.{POSITION_TABLE} (Id, Host, Port, User_name,
               User_password, Connect_retry, Source_log_name, Source_log_pos, Auto_position,
               Use_gtid, Gtid_executed, Gtid_slave_pos)
             VALUES (1, {}, {}, {}, {}, {}, {}, {}, {}, {}, {}, {})",
            q(&src.host),
            src.port,
            q(&src.user),
            q(&src.password),
            src.connect_retry,
            q(&src.log_file),
            src.log_pos,
            u8::from(src.auto_position),
            q(&src.use_gtid),
            q(&src.gtid_executed),
            q(&src.gtid_slave_pos)
        ),
    )?;
    Ok(())
}

/// The statement that records the applied position, run inside the applier's
/// transaction (or alone after DDL and rotations); `gtids`: the source GTIDs applied
/// (MySQL's set, MariaDB's position) when they changed.
pub fn position_update(file: &str, pos: u64, gtids: Option<(&str, &str)>) -> String {
    let gtid_sets = match gtids {
        Some((executed, slave_pos)) => format!(
            ", Gtid_executed = {}, Gtid_slave_pos = {}",
            q(executed),
            q(slave_pos)
        ),
        None => String::new(),
    };
    format!(
        "UPDATE {POSITION_DB}.{POSITION_TABLE} SET Source_log_name = {}, Source_log_pos = {pos}
         {gtid_sets} WHERE Id = 1",
        q(file)
    )
}

/// RESET REPLICA: the position back to the start (the GTIDs applied stay, as MySQL's
/// gtid_executed and MariaDB's gtid_slave_pos do); ALL: the source forgotten too, and
/// the GTIDs with it (they are kept with the source).
pub fn reset(s: &mut Session, all: bool) -> Result<()> {
    if s.server()
        .catalog
        .table(POSITION_DB, POSITION_TABLE)
        .is_err()
    {
        return Ok(());
    }
    let sql = if all {
        format!("DELETE FROM {POSITION_DB}.{POSITION_TABLE}")
    } else {
        format!(
            "UPDATE {POSITION_DB}.{POSITION_TABLE} SET Source_log_name = '', Source_log_pos = 4"
        )
    };
    run(s, &sql).map(|_| ())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn opts(list: &[(&str, &str)]) -> Vec<(String, String)> {
        list.iter()
            .map(|(a, b)| (a.to_string(), b.to_string()))
            .collect()
    }

    #[test]
    fn change_keeps_or_resets_the_position() {
        let mut s = Source::default();
        s.change(&opts(&[
            ("SOURCE_HOST", "h"),
            ("SOURCE_LOG_FILE", "b.000002"),
            ("SOURCE_LOG_POS", "120"),
        ]))
        .unwrap();
        assert_eq!((s.log_file.as_str(), s.log_pos), ("b.000002", 120));
        s.change(&opts(&[("SOURCE_USER", "u")])).unwrap();
        assert_eq!((s.log_file.as_str(), s.log_pos), ("b.000002", 120));
        s.change(&opts(&[("SOURCE_PORT", "3307")])).unwrap();
        assert_eq!((s.log_file.as_str(), s.log_pos), ("", 4));
        assert!(s.change(&opts(&[("SOURCE_PORT", "x")])).is_err());
    }

    #[test]
    fn gtid_positioning_options() {
        let mut s = Source::default();
        s.change(&opts(&[
            ("SOURCE_HOST", "h"),
            ("SOURCE_AUTO_POSITION", "1"),
        ]))
        .unwrap();
        assert!(s.auto_position && s.gtid_positioned());
        // A position while auto-positioning: 1776, also in the same statement.
        let e = s.change(&opts(&[("SOURCE_LOG_POS", "120")])).unwrap_err();
        assert_eq!(e.code(), 1776);
        // MySQL's and MariaDB's positioning together: 1235.
        let e = s
            .change(&opts(&[("SOURCE_USE_GTID", "slave_pos")]))
            .unwrap_err();
        assert_eq!(e.code(), 1235);
        s.change(&opts(&[
            ("SOURCE_AUTO_POSITION", "0"),
            ("SOURCE_LOG_FILE", "b.000001"),
        ]))
        .unwrap();
        assert!(!s.gtid_positioned());
        s.change(&opts(&[("SOURCE_USE_GTID", "Current_Pos")]))
            .unwrap();
        assert_eq!(s.use_gtid, "current_pos");
        s.change(&opts(&[("SOURCE_USE_GTID", "no")])).unwrap();
        assert!(!s.gtid_positioned());
        assert!(s.change(&opts(&[("SOURCE_USE_GTID", "yes")])).is_err());
        assert!(s.change(&opts(&[("SOURCE_AUTO_POSITION", "2")])).is_err());
    }
}
