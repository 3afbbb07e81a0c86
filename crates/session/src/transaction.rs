//! The transaction statements a session runs itself: BEGIN / START TRANSACTION with
//! its characteristics, COMMIT / ROLLBACK [AND CHAIN], SAVEPOINT, ROLLBACK TO
//! SAVEPOINT, RELEASE SAVEPOINT, and SET [GLOBAL | SESSION] TRANSACTION.
//!
//! The statements' grammar is small, so it is read from `show::words` tokens here
//! rather than through sqlparser; the parsers are plain functions, tested below. What
//! the statements do to the open [`Txn`] (savepoints, read-only mode, the consistent
//! snapshot) is in `strata_engine::Txn` and the engines.

use super::{Com, Session};
use strata_engine::{Isolation, Txn};
use strata_sql::WarnLevel;
use strata_types::{Error, OkInfo, QueryOutput, Result};

/// InnoDB's warning when WITH CONSISTENT SNAPSHOT meets another isolation level
/// (HA_ERR_UNSUPPORTED).
const SNAPSHOT_IGNORED: (u16, &str) = (
    138,
    "InnoDB: WITH CONSISTENT SNAPSHOT was ignored because this phrase can only be used \
     with REPEATABLE READ isolation level.",
);

/// MySQL's warning when ROLLBACK (or ROLLBACK TO) could not undo a MyISAM change.
const NONTRANS_NOT_ROLLED_BACK: (u16, &str) = (
    1196,
    "Some non-transactional changed tables couldn't be rolled back",
);

/// The options of START TRANSACTION.
#[derive(Debug, Default, PartialEq)]
pub(crate) struct StartOptions {
    pub snapshot: bool,
    /// READ ONLY (Some(true)) or READ WRITE (Some(false)); None: the session's mode.
    pub read_only: Option<bool>,
}

/// `[opt [, opt] ...]` after START TRANSACTION (upper-cased words): WITH CONSISTENT
/// SNAPSHOT, READ ONLY, READ WRITE, comma-separated, in any order; READ ONLY with READ
/// WRITE is a syntax error, as in MySQL. None: not the grammar.
pub(crate) fn parse_start_options(w: &[String]) -> Option<StartOptions> {
    let mut o = StartOptions::default();
    if w.is_empty() {
        return Some(o);
    }
    let mut i = 0;
    loop {
        match &w[i..] {
            [a, b, ..] if a == "READ" && (b == "ONLY" || b == "WRITE") => {
                let ro = b == "ONLY";
                if o.read_only.is_some_and(|x| x != ro) {
                    return None;
                }
                o.read_only = Some(ro);
                i += 2;
            }
            [a, b, c, ..] if a == "WITH" && b == "CONSISTENT" && c == "SNAPSHOT" => {
                o.snapshot = true;
                i += 3;
            }
            _ => return None,
        }
        match w.get(i) {
            None => return Some(o),
            Some(x) if x == "," => i += 1,
            Some(_) => return None,
        }
    }
}

/// The characteristics of SET TRANSACTION.
#[derive(Debug, Default, PartialEq)]
pub(crate) struct Characteristics {
    pub isolation: Option<Isolation>,
    pub read_only: Option<bool>,
}

/// `ISOLATION LEVEL level | READ ONLY | READ WRITE`, comma-separated (upper-cased
/// words after TRANSACTION); each kind at most once, as MySQL requires. None: not the
/// grammar.
pub(crate) fn parse_characteristics(w: &[String]) -> Option<Characteristics> {
    let mut c = Characteristics::default();
    let mut i = 0;
    loop {
        let rest = &w[i..];
        let word = |k: usize| rest.get(k).map(String::as_str);
        match (word(0), word(1)) {
            (Some("ISOLATION"), Some("LEVEL")) if c.isolation.is_none() => {
                let (level, n) = match (word(2), word(3)) {
                    (Some("READ"), Some("UNCOMMITTED")) => (Isolation::ReadUncommitted, 2),
                    (Some("READ"), Some("COMMITTED")) => (Isolation::ReadCommitted, 2),
                    (Some("REPEATABLE"), Some("READ")) => (Isolation::RepeatableRead, 2),
                    (Some("SERIALIZABLE"), _) => (Isolation::Serializable, 1),
                    _ => return None,
                };
                c.isolation = Some(level);
                i += 2 + n;
            }
            (Some("READ"), Some(m @ ("ONLY" | "WRITE"))) if c.read_only.is_none() => {
                c.read_only = Some(m == "ONLY");
                i += 2;
            }
            _ => return None,
        }
        match w.get(i) {
            None => return Some(c),
            Some(x) if x == "," => i += 1,
            Some(_) => return None,
        }
    }
}

/// MySQL's spelling of a level, as `transaction_isolation` holds it.
pub(crate) fn isolation_name(i: Isolation) -> &'static str {
    match i {
        Isolation::ReadUncommitted => "READ-UNCOMMITTED",
        Isolation::ReadCommitted => "READ-COMMITTED",
        Isolation::RepeatableRead => "REPEATABLE-READ",
        Isolation::Serializable => "SERIALIZABLE",
    }
}

fn upper_words(sql: &str) -> (Vec<String>, Vec<String>) {
    let w = strata_sql::text::words(sql);
    let u = w.iter().map(|x| x.to_ascii_uppercase()).collect();
    (w, u)
}

fn syntax(sql: &str) -> Error {
    Error::Syntax(sql.chars().take(80).collect())
}

impl Session {
    /// Adds a warning to the current statement's diagnostics area.
    fn push_warning(&self, (code, message): (u16, &str)) {
        if let Ok(mut d) = self.diagnostics.lock() {
            d.push(strata_sql::Warning {
                level: WarnLevel::Warning,
                code,
                message: message.to_string(),
            });
        }
    }

    fn ok_with_warnings(&self, out: &mut dyn QueryOutput) -> Result<()> {
        out.ok(&OkInfo {
            warnings: self.warning_count(),
            ..OkInfo::default()
        })
    }

    /// BEGIN [WORK] / START TRANSACTION [WITH CONSISTENT SNAPSHOT | READ ONLY | READ
    /// WRITE], ...: commits the open transaction (MySQL's implicit commit) and opens a
    /// new one. WITH CONSISTENT SNAPSHOT makes every transactional engine take its read
    /// view now, so rows committed by others after START are not seen.
    pub(crate) fn begin(&mut self, sql: &str, out: &mut dyn QueryOutput) -> Result<()> {
        let (_, w) = upper_words(sql);
        let opts = match w.first().map(String::as_str) {
            Some("START") if w.get(1).is_some_and(|x| x == "TRANSACTION") => {
                parse_start_options(&w[2..]).ok_or_else(|| Error::Syntax(w[2..].join(" ")))?
            }
            Some("BEGIN") if w.len() == 1 || (w.len() == 2 && w[1] == "WORK") => {
                StartOptions::default()
            }
            _ => return Err(syntax(sql)),
        };
        self.server.count(Com::Begin);
        self.commit_open()?;
        let txn = self.new_txn();
        if let Some(ro) = opts.read_only {
            txn.set_read_only(ro);
        }
        if opts.snapshot {
            let mut ignored = false;
            for e in self.server.catalog.engines() {
                if e.transactional() && !e.start_consistent_snapshot(&txn)? {
                    ignored = true;
                }
            }
            if ignored {
                self.push_warning(SNAPSHOT_IGNORED);
            }
        }
        self.txn = Some(txn);
        self.ok_with_warnings(out)
    }

    /// COMMIT / ROLLBACK [WORK] [AND [NO] CHAIN] [[NO] RELEASE], and ROLLBACK [WORK] TO
    /// [SAVEPOINT] name.
    pub(crate) fn end_transaction(
        &mut self,
        first: &str,
        sql: &str,
        out: &mut dyn QueryOutput,
    ) -> Result<()> {
        let (orig, w) = upper_words(sql);
        let mut at = 1;
        if w.get(at).is_some_and(|x| x == "WORK") {
            at += 1;
        }
        let rest = &w[at..];
        let mut chain = false;
        match rest {
            [] => {}
            [a, b] if a == "AND" && b == "CHAIN" => chain = true,
            [a, b, c] if a == "AND" && b == "NO" && c == "CHAIN" => {}
            [to, ..] if to == "TO" && first == "ROLLBACK" => {
                let name = match rest {
                    [_, _] => orig[at + 1].clone(),
                    [_, sp, _] if sp == "SAVEPOINT" => orig[at + 2].clone(),
                    _ => return Err(syntax(sql)),
                };
                return self.rollback_to_savepoint(&name, out);
            }
            _ if rest.iter().any(|x| x == "RELEASE") => {
                return Err(Error::NotSupported(format!("{first} ... RELEASE")))
            }
            _ => return Err(syntax(sql)),
        }
        // Inside an XA transaction only XA COMMIT / XA ROLLBACK end it.
        if let Some(x) = &self.xa {
            return Err(Error::XaRmFail(x.state.name().into()));
        }
        // AND CHAIN starts the next transaction with this one's characteristics.
        let characteristics = self.txn.as_ref().map(|t| (t.isolation(), t.read_only()));
        if first == "COMMIT" {
            self.server.count(Com::Commit);
            self.commit_open()?;
        } else {
            self.server.count(Com::Rollback);
            // Only transactional engines undo anything: heap changes stay, as on
            // MyISAM, and MySQL says so.
            if self
                .txn
                .as_ref()
                .is_some_and(|t| t.nontransactional_changed())
            {
                self.push_warning(NONTRANS_NOT_ROLLED_BACK);
            }
            self.rollback_open()?;
        }
        if chain {
            let txn = match characteristics {
                Some((isolation, read_only)) => {
                    let t = Txn::new(isolation, self.lock_wait_timeout);
                    t.set_read_only(read_only);
                    t.set_interrupt(self.process.interrupt.clone());
                    t
                }
                None => self.new_txn(),
            };
            self.txn = Some(txn);
        }
        self.ok_with_warnings(out)
    }

    /// SAVEPOINT name. Under autocommit with no transaction open it does nothing, as
    /// MySQL (a later ROLLBACK TO gives 1305); with autocommit=0 it opens the
    /// transaction the next statement would have.
    pub(crate) fn savepoint(&mut self, sql: &str, out: &mut dyn QueryOutput) -> Result<()> {
        let w = strata_sql::text::words(sql);
        let [_, name] = w.as_slice() else {
            return Err(syntax(sql));
        };
        if self.txn.is_none() && !self.autocommit() {
            let txn = self.new_txn();
            self.txn = Some(txn);
        }
        if let Some(t) = &self.txn {
            t.set_savepoint(name);
        }
        out.ok(&OkInfo::default())
    }

    /// ROLLBACK TO SAVEPOINT name: undoes the changes made after it in transactional
    /// engines; row locks taken since stay, as in InnoDB.
    /// (MySQL counts it as Com_rollback_to_savepoint, not Com_rollback; Strata keeps no
    /// such counter, so it counts nowhere.)
    fn rollback_to_savepoint(&mut self, name: &str, out: &mut dyn QueryOutput) -> Result<()> {
        let Some(t) = &self.txn else {
            return Err(Error::SavepointNotExist(name.to_string()));
        };
        match t.rollback_to_savepoint(name) {
            Ok(true) => {}
            Ok(false) => return Err(Error::SavepointNotExist(name.to_string())),
            Err(e) => {
                // The partial undo failed part way: nothing of the transaction can be
                // trusted any more, so all of it goes (its own error would hide the
                // first).
                if let Some(t) = self.txn.take() {
                    let _ = t.rollback();
                }
                return Err(e);
            }
        }
        if t.nontransactional_changed() {
            self.push_warning(NONTRANS_NOT_ROLLED_BACK);
        }
        self.ok_with_warnings(out)
    }

    /// RELEASE SAVEPOINT name: forgets it and every later one.
    pub(crate) fn release_savepoint(&mut self, sql: &str, out: &mut dyn QueryOutput) -> Result<()> {
        let w = strata_sql::text::words(sql);
        let name = match w.as_slice() {
            [_, sp, name] if sp.eq_ignore_ascii_case("SAVEPOINT") => name,
            _ => return Err(syntax(sql)),
        };
        let released = self.txn.as_ref().is_some_and(|t| t.release_savepoint(name));
        if !released {
            return Err(Error::SavepointNotExist(name.clone()));
        }
        out.ok(&OkInfo::default())
    }

    /// SET [GLOBAL | SESSION] TRANSACTION characteristic, ...: GLOBAL and SESSION set
    /// the variables; without either, the characteristics are the next transaction's
    /// only, and that is refused inside a transaction (1568).
    pub(crate) fn set_transaction(&mut self, body: &str, out: &mut dyn QueryOutput) -> Result<()> {
        let (_, w) = upper_words(body);
        let (scope, at) = match w.first().map(String::as_str) {
            Some("GLOBAL") => (Some(true), 1),
            Some("SESSION") | Some("LOCAL") => (Some(false), 1),
            _ => (None, 0),
        };
        if w.get(at).is_none_or(|x| x != "TRANSACTION") {
            return Err(syntax(body));
        }
        let c = parse_characteristics(&w[at + 1..]).ok_or_else(|| syntax(body))?;
        match scope {
            None => {
                if self.txn.is_some() {
                    return Err(Error::TxCharacteristicsInProgress);
                }
                if c.isolation.is_some() {
                    self.next_isolation = c.isolation;
                }
                if c.read_only.is_some() {
                    self.next_read_only = c.read_only;
                }
            }
            Some(global) => {
                if let Some(i) = c.isolation {
                    let v = strata_types::Value::str(isolation_name(i));
                    self.set_variable("transaction_isolation", global, Some(v))?;
                }
                if let Some(ro) = c.read_only {
                    let v = strata_types::Value::Int(ro as i64);
                    self.set_variable("transaction_read_only", global, Some(v))?;
                }
            }
        }
        out.ok(&OkInfo::default())
    }

    /// `SET @@transaction_isolation = …` / `SET @@transaction_read_only = …` (and the
    /// tx_ names) without a scope: like SET TRANSACTION without GLOBAL or SESSION, the
    /// next transaction's only (MySQL's rule for these two variables).
    pub(crate) fn set_next_transaction_variable(
        &mut self,
        key: &str,
        value: Option<strata_types::Value>,
    ) -> Result<()> {
        if self.txn.is_some() {
            return Err(Error::TxCharacteristicsInProgress);
        }
        let def = super::vars::lookup(key).ok_or_else(|| Error::UnknownVariable(key.into()))?;
        // DEFAULT: the session's value.
        let v = match value {
            Some(v) => super::vars::normalize(def, &v)?,
            None => self.get_variable(key, false)?,
        };
        if key == "transaction_isolation" {
            self.next_isolation = Isolation::parse(&v.to_text());
        } else {
            self.next_read_only = v.truth();
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn up(s: &str) -> Vec<String> {
        strata_sql::text::words(s)
            .into_iter()
            .map(|x| x.to_ascii_uppercase())
            .collect()
    }

    #[test]
    fn start_transaction_options() {
        assert_eq!(parse_start_options(&[]), Some(StartOptions::default()));
        let o = parse_start_options(&up("read only, with consistent snapshot")).unwrap();
        assert!(o.snapshot && o.read_only == Some(true));
        let o = parse_start_options(&up("WITH CONSISTENT SNAPSHOT, READ WRITE")).unwrap();
        assert!(o.snapshot && o.read_only == Some(false));
        assert!(parse_start_options(&up("read only, read only")).is_some());
        for bad in [
            "read only, read write",
            "read only,",
            ", read only",
            "read only with consistent snapshot",
            "with consistent",
            "read",
        ] {
            assert_eq!(parse_start_options(&up(bad)), None, "{bad}");
        }
    }

    #[test]
    fn set_transaction_characteristics() {
        let c = parse_characteristics(&up("isolation level read committed, read only")).unwrap();
        assert_eq!(c.isolation, Some(Isolation::ReadCommitted));
        assert_eq!(c.read_only, Some(true));
        let c = parse_characteristics(&up("READ WRITE, ISOLATION LEVEL SERIALIZABLE")).unwrap();
        assert_eq!(c.isolation, Some(Isolation::Serializable));
        assert_eq!(c.read_only, Some(false));
        for bad in [
            "",
            "read only, read write",
            "isolation level serializable, isolation level read committed",
            "isolation level read",
            "isolation level bogus",
            "read only,",
        ] {
            assert_eq!(parse_characteristics(&up(bad)), None, "{bad}");
        }
    }
}
