//! `@@SESSION.gtid_next` set by clients, as MySQL 8 (what `mysqlbinlog` output of a GTID
//! server and `mysqldump --set-gtid-purged=ON` replay): `AUTOMATIC` (the server's next
//! own GTID), `ANONYMOUS` (only with gtid_mode OFF: no binary log) or `uuid:N`. With a
//! GTID the session owns it ([`strata_binlog::Binlog::own_gtid`]) and its next
//! transaction is logged under it; one the log holds already is skipped (its
//! statements do nothing). When that transaction ends `gtid_next` still shows the
//! GTID but owns nothing (MySQL's UNDEFINED): a statement that would start a
//! transaction is then 1837 until `gtid_next` is set again. Also
//! `SET @@GLOBAL.gtid_purged`. The replica's applier does not come here: it sets the
//! GTID of its groups directly ([`Session::set_gtid_next`]).

use super::Session;
use strata_binlog::gtid::{parse_uuid, uuid_text, Uuid};
use strata_binlog::Ownership;
use strata_types::privilege::Privs;
use strata_types::{Error, OkInfo, QueryOutput, Result, Value};

/// `@@SESSION.gtid_next` and what the session holds under it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) enum GtidNext {
    #[default]
    Automatic,
    Anonymous,
    /// `uuid:gno`; `owned` false when gtid_executed held it at the SET: the
    /// transaction is skipped.
    Assigned {
        uuid: Uuid,
        gno: u64,
        owned: bool,
    },
    /// The transaction of an assigned GTID has ended (MySQL's UNDEFINED).
    Undefined {
        uuid: Uuid,
        gno: u64,
    },
}

impl GtidNext {
    /// What `@@gtid_next` reads.
    pub(crate) fn text(&self) -> String {
        match self {
            GtidNext::Automatic => "AUTOMATIC".into(),
            GtidNext::Anonymous => "ANONYMOUS".into(),
            GtidNext::Assigned { uuid, gno, .. } | GtidNext::Undefined { uuid, gno } => {
                gtid_text(uuid, *gno)
            }
        }
    }

    /// Whether statements go through [`Session::under_gtid_next`] (a GTID was set).
    pub(crate) fn assigned(&self) -> bool {
        matches!(self, GtidNext::Assigned { .. } | GtidNext::Undefined { .. })
    }
}

fn gtid_text(uuid: &Uuid, gno: u64) -> String {
    format!("{}:{gno}", uuid_text(uuid))
}

/// A value for `gtid_next`, as MySQL parses it (case-insensitive keywords; a GNO from
/// 1 to 2^63-1); None for anything else (1231).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Spec {
    Automatic,
    Anonymous,
    Gtid(Uuid, u64),
}

pub(crate) fn parse_spec(text: &str) -> Option<Spec> {
    let t = text.trim();
    if t.eq_ignore_ascii_case("AUTOMATIC") {
        return Some(Spec::Automatic);
    }
    if t.eq_ignore_ascii_case("ANONYMOUS") {
        return Some(Spec::Anonymous);
    }
    let (u, n) = t.rsplit_once(':')?;
    let uuid = parse_uuid(u.trim())?;
    let n = n.trim();
    if n.is_empty() || !n.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let gno: u64 = n.parse().ok()?;
    (1..=i64::MAX as u64)
        .contains(&gno)
        .then_some(Spec::Gtid(uuid, gno))
}

/// What a statement does to a transaction, for the checks MySQL makes before it
/// under an assigned `gtid_next` (`gtid_pre_statement_checks`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Class {
    /// SET, SHOW, a plain SELECT, DO, USE, DESCRIBE, EXPLAIN, ROLLBACK TO SAVEPOINT:
    /// starts no transaction and logs nothing.
    Innocent,
    Begin,
    Commit,
    Rollback,
    /// Commits the open transaction first (DDL, LOCK TABLES, FLUSH, …).
    ImplicitCommit,
    Xa,
    /// Everything else: reads or writes tables in a transaction.
    Other,
}

pub(crate) fn classify(sql: &str) -> Class {
    let w: Vec<String> = strata_sql::text::words(sql)
        .iter()
        .take(64)
        .map(|x| x.to_ascii_uppercase())
        .collect();
    let has = |k: &str| w.iter().any(|x| x == k);
    let word = |i: usize| w.get(i).map(String::as_str).unwrap_or("");
    match word(0) {
        "SET" if word(1) == "PASSWORD" => Class::Other,
        "SET" | "SHOW" | "DESCRIBE" | "DESC" | "EXPLAIN" | "DO" | "USE" | "HELP" => Class::Innocent,
        "SELECT" | "WITH" | "(" | "TABLE" => {
            let locking = w.windows(2).any(|p| {
                (p[0] == "FOR" && (p[1] == "UPDATE" || p[1] == "SHARE"))
                    || (p[0] == "LOCK" && p[1] == "IN")
            });
            if locking || has("INSERT") || has("UPDATE") || has("DELETE") || has("REPLACE") {
                Class::Other
            } else {
                Class::Innocent
            }
        }
        "BEGIN" => Class::Begin,
        "START" if word(1) == "TRANSACTION" => Class::Begin,
        "COMMIT" => Class::Commit,
        "ROLLBACK" if has("TO") => Class::Innocent,
        "ROLLBACK" => Class::Rollback,
        "XA" => Class::Xa,
        "CREATE" | "DROP" if word(1) == "TEMPORARY" || word(1) == "PREPARE" => Class::Other,
        "CREATE" | "ALTER" | "DROP" | "RENAME" | "TRUNCATE" | "GRANT" | "REVOKE" | "LOCK"
        | "FLUSH" | "ANALYZE" | "OPTIMIZE" | "REPAIR" => Class::ImplicitCommit,
        _ => Class::Other,
    }
}

impl Session {
    /// `SET [SESSION] gtid_next = value` (MySQL 8's checks, in its order).
    pub(crate) fn set_gtid_next_variable(&mut self, value: Option<Value>) -> Result<()> {
        if let Some(eff) = self.effective() {
            let ok = eff.has_global(Privs::SUPER)
                || [
                    "SYSTEM_VARIABLES_ADMIN",
                    "SESSION_VARIABLES_ADMIN",
                    "REPLICATION_APPLIER",
                ]
                .iter()
                .any(|d| eff.has_dynamic(d));
            if !ok {
                return Err(Error::SpecificAccessDenied(
                    "SUPER, SYSTEM_VARIABLES_ADMIN, SESSION_VARIABLES_ADMIN or REPLICATION_APPLIER"
                        .into(),
                ));
            }
        }
        if self.txn.is_some() || self.xa.is_some() {
            return Err(Error::VariableNotSettableInTransaction("gtid_next".into()));
        }
        let text = match &value {
            None => "AUTOMATIC".to_string(),
            Some(Value::Null) => "NULL".to_string(),
            Some(v) => v.to_text(),
        };
        let spec = parse_spec(&text).ok_or_else(|| Error::WrongValueForVariable {
            name: "gtid_next".into(),
            value: text.clone(),
        })?;
        if let GtidNext::Assigned {
            uuid,
            gno,
            owned: true,
        } = self.gtid_spec
        {
            return Err(Error::GtidNextWhileOwning(gtid_text(&uuid, gno)));
        }
        let binlog = self.server.binlog().cloned();
        self.gtid_spec = match spec {
            Spec::Automatic => GtidNext::Automatic,
            Spec::Anonymous if binlog.is_some() => return Err(Error::GtidNextAnonymousWhenModeOn),
            Spec::Anonymous => GtidNext::Anonymous,
            Spec::Gtid(uuid, gno) => {
                let Some(b) = binlog else {
                    return Err(Error::GtidNextGtidWhenModeOff);
                };
                // Waits while another session owns it (MySQL 8 does): never two
                // transactions under one GTID.
                let interrupt = self.process.interrupt.clone();
                let owned = b.own_gtid(&uuid, gno, self.connection_id, || interrupt.check())?
                    == Ownership::Owned;
                if owned {
                    *self.gtid_next.lock() = Some((uuid, gno));
                }
                GtidNext::Assigned { uuid, gno, owned }
            }
        };
        Ok(())
    }

    /// `SET @@GLOBAL.gtid_purged = 'set'` or `'+set'` (the SUPER or
    /// SYSTEM_VARIABLES_ADMIN check was made): the rules and the durable record are the
    /// log's ([`strata_binlog::Binlog::add_purged`]).
    pub(crate) fn set_gtid_purged(&mut self, value: Option<Value>) -> Result<()> {
        let Some(b) = self.server.binlog().cloned() else {
            return Err(Error::NotSupported(
                "SET @@GLOBAL.gtid_purged without the binary log".into(),
            ));
        };
        let text = match value {
            None => {
                return Err(Error::NotSupported(
                    "SET @@GLOBAL.gtid_purged = DEFAULT".into(),
                ))
            }
            Some(Value::Null) => return Err(Error::MalformedGtidSet("NULL".into())),
            Some(v) => v.to_text(),
        };
        let t = text.trim_start();
        let (plus, body) = match t.strip_prefix('+') {
            Some(rest) => (true, rest),
            None => (false, t),
        };
        let set = strata_binlog::gtid::GtidSet::parse_text(body.as_bytes())
            .map_err(|m| Error::MalformedGtidSet(m.text))?;
        b.add_purged(&set, plus)
    }

    /// The GTID this session owns, if any (3173 for WAIT_FOR_EXECUTED_GTID_SET).
    pub(crate) fn owned_gtid(&self) -> Option<(Uuid, u64)> {
        match self.gtid_spec {
            GtidNext::Assigned {
                uuid,
                gno,
                owned: true,
            } => Some((uuid, gno)),
            _ => None,
        }
    }

    /// Gives up the owned GTID without logging it (ROLLBACK, a failed statement, the
    /// session's end, COM_RESET_CONNECTION); `gtid_next` becomes UNDEFINED unless
    /// `automatic` (the session is gone or reset).
    pub(crate) fn release_gtid_next(&mut self, automatic: bool) {
        if let (Some((uuid, gno)), Some(b)) = (self.owned_gtid(), self.server.binlog()) {
            b.release_gtid(&uuid, gno, self.connection_id);
        }
        *self.gtid_next.lock() = None;
        self.gtid_spec = match self.gtid_spec {
            _ if automatic => GtidNext::Automatic,
            GtidNext::Assigned { uuid, gno, .. } => GtidNext::Undefined { uuid, gno },
            other => other,
        };
    }

    /// Runs one client statement (`body`) under an assigned or undefined `gtid_next`:
    /// MySQL's checks before it and the end of the GTID's transaction after it.
    pub(crate) fn under_gtid_next(
        &mut self,
        sql: &str,
        out: &mut dyn QueryOutput,
        body: impl FnOnce(&mut Session, &mut dyn QueryOutput) -> Result<()>,
    ) -> Result<()> {
        let class = classify(sql);
        match self.gtid_spec {
            GtidNext::Automatic | GtidNext::Anonymous => body(self, out),
            GtidNext::Undefined { uuid, gno } => match class {
                Class::Other | Class::ImplicitCommit | Class::Xa => {
                    Err(Error::GtidExecuted(gtid_text(&uuid, gno)))
                }
                _ => body(self, out),
            },
            GtidNext::Assigned { owned: false, .. } => match class {
                Class::Innocent | Class::Begin => body(self, out),
                Class::Commit | Class::Rollback => {
                    let r = body(self, out);
                    if self.txn.is_none() {
                        self.release_gtid_next(false);
                    }
                    r
                }
                Class::Xa => Err(Error::NotSupported(
                    "XA transactions under an assigned @@SESSION.GTID_NEXT".into(),
                )),
                Class::Other | Class::ImplicitCommit => {
                    // Executed already: the statement is skipped, as MySQL does.
                    if self.txn.is_none() && self.autocommit() {
                        self.release_gtid_next(false);
                    }
                    out.ok(&OkInfo::default())
                }
            },
            GtidNext::Assigned { owned: true, .. } => {
                if class == Class::Xa {
                    return Err(Error::NotSupported(
                        "XA transactions under an assigned @@SESSION.GTID_NEXT".into(),
                    ));
                }
                if matches!(class, Class::Begin | Class::ImplicitCommit) && self.txn.is_some() {
                    return Err(Error::ImplicitCommitWithGtidNext);
                }
                let r = body(self, out);
                let ended = self.end_owned_transaction(class, &r);
                r.and(ended)
            }
        }
    }

    /// After a statement run while owning a GTID: when the transaction is over, the
    /// GTID is given up — logged (an empty `GTID, BEGIN, COMMIT` group if nothing of
    /// the transaction was, as MySQL logs it) when it committed, or not (rolled back).
    fn end_owned_transaction(&mut self, class: Class, r: &Result<()>) -> Result<()> {
        let Some((uuid, gno)) = self.owned_gtid() else {
            return Ok(());
        };
        if self.txn.is_some() || self.xa.is_some() {
            return Ok(());
        }
        let logged = self.gtid_next.lock().is_none();
        if !logged && matches!(class, Class::Innocent | Class::Begin) {
            // No transaction was started or ended.
            return Ok(());
        }
        // A statement that did not parse never ran: the GTID is still the next one's.
        if matches!(r, Err(e) if e.code() == 1064) && !logged {
            return Ok(());
        }
        let mut written = Ok(());
        if !logged && class != Class::Rollback && r.is_ok() {
            if let Some(b) = self.server.binlog().cloned() {
                let mut cx = self.binlog_context();
                cx.gtid = Some((uuid, gno));
                written = b.write(&strata_binlog::Entry::Rows {
                    cx: &cx,
                    changes: &[],
                    xid: None,
                });
            }
        }
        self.release_gtid_next(false);
        written
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const U: &str = "3e11fa47-71ca-11e1-9e33-c80aa9429562";

    #[test]
    fn parses_mysql_values() {
        assert_eq!(parse_spec("automatic"), Some(Spec::Automatic));
        assert_eq!(parse_spec(" ANONYMOUS "), Some(Spec::Anonymous));
        let u = parse_uuid(U).unwrap();
        assert_eq!(parse_spec(&format!("{U}:7")), Some(Spec::Gtid(u, 7)));
        assert_eq!(
            parse_spec(&format!("{}:7", U.to_ascii_uppercase())),
            Some(Spec::Gtid(u, 7))
        );
        for bad in [
            "",
            "NULL",
            "auto",
            &format!("{U}:0"),
            &format!("{U}:"),
            &format!("{U}:1-5"),
            &format!("{U}:-1"),
            &format!("{U}:9223372036854775808"),
            "3e11fa47:1",
        ] {
            assert_eq!(parse_spec(bad), None, "{bad}");
        }
        assert_eq!(
            parse_spec(&format!("{U}:9223372036854775807")),
            Some(Spec::Gtid(u, i64::MAX as u64))
        );
    }

    #[test]
    fn shows_the_gtid_while_undefined() {
        let u = parse_uuid(U).unwrap();
        assert_eq!(GtidNext::default().text(), "AUTOMATIC");
        assert_eq!(
            GtidNext::Undefined { uuid: u, gno: 3 }.text(),
            format!("{U}:3")
        );
        assert!(!GtidNext::Anonymous.assigned());
    }

    #[test]
    fn classifies_statements_as_mysql_does() {
        use Class::*;
        for (sql, c) in [
            ("SET @@SESSION.GTID_NEXT= 'AUTOMATIC'", Innocent),
            ("SET PASSWORD = 'x'", Other),
            ("select 1", Innocent),
            ("SELECT * FROM t FOR UPDATE", Other),
            ("SELECT * FROM t LOCK IN SHARE MODE", Other),
            ("SHOW BINLOG EVENTS", Innocent),
            ("BEGIN", Begin),
            ("START TRANSACTION", Begin),
            ("START REPLICA", Other),
            ("COMMIT", Commit),
            ("ROLLBACK", Rollback),
            ("ROLLBACK TO SAVEPOINT a", Innocent),
            ("INSERT INTO t VALUES (1)", Other),
            ("CREATE TABLE t (a INT)", ImplicitCommit),
            ("CREATE TEMPORARY TABLE t (a INT)", Other),
            ("DROP PREPARE s", Other),
            ("XA START 'x'", Xa),
        ] {
            assert_eq!(classify(sql), c, "{sql}");
        }
    }
}
