//! The replica's source and applied position, and the table that keeps them across
//! restarts: `mysql.slave_relay_log_info`, one row (Id = 1), a btree (InnoDB-style)
//! table. The applier updates the position in the same transaction as the rows it
//! applies, so after a crash the table says exactly which source transactions the
//! tables hold. Its changes never reach this server's own binary log
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
        }
    }
}

fn number<T: std::str::FromStr>(name: &str, v: &str) -> Result<T> {
    v.parse()
        .map_err(|_| Error::Syntax(format!("{name} = {v}: a number is expected")))
}

impl Source {
    /// Applies CHANGE REPLICATION SOURCE TO's options. As in MySQL, changing the host
    /// or port without a position starts from the new source's first file.
    pub fn change(&mut self, options: &[(String, String)]) -> Result<()> {
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
                // Position-based replication is what this replica does: saying so is
                // accepted, asking for GTID auto-positioning is not.
                "SOURCE_USE_GTID" if v.eq_ignore_ascii_case("NO") => {}
                "SOURCE_AUTO_POSITION" if v == "0" => {}
                other => {
                    return Err(Error::NotSupported(format!(
                        "CHANGE REPLICATION SOURCE option {other}"
                    )))
                }
            }
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

fn q(s: &str) -> String {
    crate::replica::literal::quoted(s.as_bytes())
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
                   Source_log_pos BIGINT UNSIGNED NOT NULL
                 ) ENGINE=InnoDB"
            ),
        )
    });
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
    let sink = run(
        s,
        &format!(
            "SELECT Host, Port, User_name, User_password, Connect_retry, Source_log_name,
               Source_log_pos FROM {POSITION_DB}.{POSITION_TABLE} WHERE Id = 1"
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
    }))
}

/// Writes the whole row (CHANGE REPLICATION SOURCE), in its own transaction.
pub fn save(s: &mut Session, src: &Source) -> Result<()> {
    ensure_table(s)?;
    run(
        s,
        &format!(
            "REPLACE INTO {POSITION_DB}.{POSITION_TABLE} VALUES (1, {}, {}, {}, {}, {}, {}, {})",
            q(&src.host),
            src.port,
            q(&src.user),
            q(&src.password),
            src.connect_retry,
            q(&src.log_file),
            src.log_pos
        ),
    )?;
    Ok(())
}

/// The statement that records the applied position, run inside the applier's
/// transaction (or alone after DDL and rotations).
pub fn position_update(file: &str, pos: u64) -> String {
    format!(
        "UPDATE {POSITION_DB}.{POSITION_TABLE} SET Source_log_name = {}, Source_log_pos = {pos}
         WHERE Id = 1",
        q(file)
    )
}

/// RESET REPLICA: the position back to the start; ALL: the source forgotten too.
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
        assert!(s.change(&opts(&[("SOURCE_AUTO_POSITION", "1")])).is_err());
        assert!(s.change(&opts(&[("SOURCE_PORT", "x")])).is_err());
    }
}
