//! XA transactions for external coordinators: `XA START|BEGIN xid [JOIN|RESUME]`,
//! `XA END xid [SUSPEND [FOR MIGRATE]]`, `XA PREPARE xid`, `XA COMMIT xid [ONE PHASE]`,
//! `XA ROLLBACK xid` and `XA RECOVER [CONVERT XID]`, with MySQL 8's state machine and
//! errors (1397–1400, 1440, 1614).
//!
//! The grammar is read by a small lexer here ([`parse`]). A session's own XA transaction
//! is its ordinary [`Txn`] plus an [`XaSession`] (its xid and state); the server-wide
//! [`Registry`] holds every xid in use, so a second XA START of it is 1440 and XA
//! RECOVER lists the prepared ones. A prepared transaction outlives its connection: at
//! disconnect the session hands its `Txn` to the registry (detached), where XA COMMIT or
//! XA ROLLBACK from any connection finds it. Those a crash left prepared come back from
//! the engines at startup (`Engine::take_recovered_xa`) as detached ones too. The engine
//! side (the durable XA prepare record, the recovered transaction's locks and versions)
//! is in `strata_btree` (docs/format/btree.md, kind 6).
//!
//! With the binary log on, XA PREPARE writes the transaction's events to the log as
//! their own group after the engine's prepare, and XA COMMIT / XA ROLLBACK of a
//! prepared transaction write theirs before the engine finishes it; at startup the log
//! decides what a crash left ([`crate::Server::adopt_recovered_xa`]; docs/format/binlog.md,
//! "An XA transaction").

use crate::Session;
use std::collections::HashMap;
use strata_engine::Txn;
use strata_types::output::{flags, ColumnMeta, EndInfo, FieldType};
use strata_types::{Error, OkInfo, QueryOutput, Result, Value};

/// An XA xid: formatID, gtrid (1–64 bytes), bqual (0–64 bytes).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Xid {
    pub format_id: i32,
    pub gtrid: Vec<u8>,
    pub bqual: Vec<u8>,
}

impl Xid {
    /// The bytes engines keep (`strata_engine::xa_xid_bytes`).
    pub fn to_bytes(&self) -> Vec<u8> {
        strata_engine::xa_xid_bytes(self.format_id, &self.gtrid, &self.bqual)
    }

    /// The xid as the binary log writes it.
    pub fn logged(&self) -> strata_binlog::event::XaXid {
        strata_binlog::event::XaXid {
            format_id: self.format_id,
            gtrid: self.gtrid.clone(),
            bqual: self.bqual.clone(),
        }
    }

    pub fn from_bytes(b: &[u8]) -> Option<Xid> {
        let (format_id, g, q) = strata_engine::xa_xid_parts(b)?;
        Some(Xid {
            format_id,
            gtrid: g.to_vec(),
            bqual: q.to_vec(),
        })
    }
}

/// One parsed XA statement.
#[derive(Debug, PartialEq, Eq)]
pub enum XaStmt {
    Start { xid: Xid, resume: bool },
    End { xid: Xid },
    Prepare { xid: Xid },
    Commit { xid: Xid, one_phase: bool },
    Rollback { xid: Xid },
    Recover { convert: bool },
}

#[derive(Debug, PartialEq, Eq)]
enum Tok {
    Word(String),
    Str(Vec<u8>),
    Num(String),
    Comma,
}

/// Tokens of an XA statement: words (upper-cased), string and hex literals (as bytes),
/// unsigned numbers, commas. None: a character the grammar has no use for.
fn lex(sql: &str) -> Option<Vec<Tok>> {
    let b = sql.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    let hex = |s: &[u8]| -> Option<Vec<u8>> {
        // An odd number of digits has an implied leading zero, as in MySQL.
        let digits: Vec<u8> = if s.len() % 2 == 1 {
            std::iter::once(b'0').chain(s.iter().copied()).collect()
        } else {
            s.to_vec()
        };
        digits
            .chunks(2)
            .map(|p| u8::from_str_radix(std::str::from_utf8(p).ok()?, 16).ok())
            .collect()
    };
    while i < b.len() {
        let c = b[i];
        if c.is_ascii_whitespace() || c == b';' {
            i += 1;
        } else if c == b',' {
            out.push(Tok::Comma);
            i += 1;
        } else if (c == b'x' || c == b'X') && b.get(i + 1) == Some(&b'\'') {
            let end = i + 2 + b[i + 2..].iter().position(|&x| x == b'\'')?;
            let s = &b[i + 2..end];
            if s.len() % 2 == 1 {
                return None; // X'…' needs whole bytes
            }
            out.push(Tok::Str(hex(s)?));
            i = end + 1;
        } else if c == b'0' && matches!(b.get(i + 1), Some(b'x')) {
            let start = i + 2;
            let mut end = start;
            while end < b.len() && b[end].is_ascii_hexdigit() {
                end += 1;
            }
            if end == start || b.get(end).is_some_and(|x| x.is_ascii_alphanumeric()) {
                return None;
            }
            out.push(Tok::Str(hex(&b[start..end])?));
            i = end;
        } else if c.is_ascii_digit() {
            let start = i;
            while i < b.len() && b[i].is_ascii_digit() {
                i += 1;
            }
            if b.get(i)
                .is_some_and(|x| x.is_ascii_alphabetic() || *x == b'.')
            {
                return None;
            }
            out.push(Tok::Num(sql[start..i].to_string()));
        } else if c == b'\'' || c == b'"' {
            let q = c;
            let mut s = Vec::new();
            i += 1;
            loop {
                let x = *b.get(i)?;
                if x == q {
                    if b.get(i + 1) == Some(&q) {
                        s.push(q);
                        i += 2;
                        continue;
                    }
                    i += 1;
                    break;
                }
                if x == b'\\' {
                    let e = *b.get(i + 1)?;
                    s.push(match e {
                        b'n' => b'\n',
                        b't' => b'\t',
                        b'r' => b'\r',
                        b'0' => 0,
                        b'b' => 8,
                        b'Z' => 26,
                        other => other,
                    });
                    i += 2;
                    continue;
                }
                s.push(x);
                i += 1;
            }
            out.push(Tok::Str(s));
        } else if c.is_ascii_alphabetic() || c == b'_' {
            let start = i;
            while i < b.len() && (b[i].is_ascii_alphanumeric() || b[i] == b'_') {
                i += 1;
            }
            out.push(Tok::Word(sql[start..i].to_ascii_uppercase()));
        } else {
            return None;
        }
    }
    Some(out)
}

/// The longest gtrid and bqual (MySQL's MAXGTRIDSIZE, MAXBQUALSIZE).
const MAX_PART: usize = 64;

/// `gtrid [, bqual [, formatID]]` at the start of `t`; returns the xid and the tokens
/// after it. A part over 64 bytes or a formatID outside 0..2^31 is a syntax error (as
/// in MySQL's grammar); an empty gtrid is XAER_INVAL.
fn parse_xid(t: &[Tok]) -> std::result::Result<(Xid, &[Tok]), Option<Error>> {
    let Some(Tok::Str(gtrid)) = t.first() else {
        return Err(None);
    };
    let mut xid = Xid {
        format_id: 1,
        gtrid: gtrid.clone(),
        bqual: Vec::new(),
    };
    let mut rest = &t[1..];
    if let [Tok::Comma, Tok::Str(bqual), r @ ..] = rest {
        xid.bqual = bqual.clone();
        rest = r;
        if let [Tok::Comma, Tok::Num(n), r @ ..] = rest {
            xid.format_id = n
                .parse::<u64>()
                .ok()
                .filter(|&v| v <= i32::MAX as u64)
                .ok_or(None)? as i32;
            rest = r;
        }
    }
    if xid.gtrid.len() > MAX_PART || xid.bqual.len() > MAX_PART {
        return Err(None);
    }
    if xid.gtrid.is_empty() {
        return Err(Some(Error::XaInval));
    }
    Ok((xid, rest))
}

fn words(t: &[Tok]) -> Option<Vec<&str>> {
    t.iter()
        .map(|x| match x {
            Tok::Word(w) => Some(w.as_str()),
            _ => None,
        })
        .collect()
}

/// Parses one XA statement (its first word is XA). Errors: 1064 for what the grammar
/// does not have, 1398 (XAER_INVAL) for what MySQL parses but does not implement
/// (JOIN, SUSPEND [FOR MIGRATE]) and an empty gtrid.
pub fn parse(sql: &str) -> Result<XaStmt> {
    let syntax = || Error::Syntax(sql.chars().take(80).collect());
    let t = lex(sql).ok_or_else(syntax)?;
    let verb = match t.as_slice() {
        [Tok::Word(xa), Tok::Word(v), ..] if xa == "XA" => v.as_str(),
        _ => return Err(syntax()),
    };
    if verb == "RECOVER" {
        return match words(&t[2..]).ok_or_else(syntax)?.as_slice() {
            [] => Ok(XaStmt::Recover { convert: false }),
            ["CONVERT", "XID"] => Ok(XaStmt::Recover { convert: true }),
            _ => Err(syntax()),
        };
    }
    let (xid, rest) = match parse_xid(&t[2..]) {
        Ok(x) => x,
        Err(e) => return Err(e.unwrap_or_else(syntax)),
    };
    let opts = words(rest).ok_or_else(syntax)?;
    match (verb, opts.as_slice()) {
        ("START" | "BEGIN", []) => Ok(XaStmt::Start { xid, resume: false }),
        ("START" | "BEGIN", ["RESUME"]) => Ok(XaStmt::Start { xid, resume: true }),
        ("START" | "BEGIN", ["JOIN"]) => Err(Error::XaInval),
        ("END", []) => Ok(XaStmt::End { xid }),
        ("END", ["SUSPEND"] | ["SUSPEND", "FOR", "MIGRATE"]) => Err(Error::XaInval),
        ("PREPARE", []) => Ok(XaStmt::Prepare { xid }),
        ("COMMIT", []) => Ok(XaStmt::Commit {
            xid,
            one_phase: false,
        }),
        ("COMMIT", ["ONE", "PHASE"]) => Ok(XaStmt::Commit {
            xid,
            one_phase: true,
        }),
        ("ROLLBACK", []) => Ok(XaStmt::Rollback { xid }),
        _ => Err(syntax()),
    }
}

/// The state of a session's XA transaction (MySQL's `XID_STATE`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum XaState {
    Active,
    Idle,
    Prepared,
    /// A deadlock rolled the branch back: only XA ROLLBACK is left.
    RollbackOnly,
}

impl XaState {
    /// The name error 1399 prints.
    pub fn name(self) -> &'static str {
        match self {
            XaState::Active => "ACTIVE",
            XaState::Idle => "IDLE",
            XaState::Prepared => "PREPARED",
            XaState::RollbackOnly => "ROLLBACK ONLY",
        }
    }
}

/// The name error 1399 prints for a session in no XA transaction.
pub const NON_EXISTING: &str = "NON-EXISTING";

/// A session's XA transaction (its `Txn` is the session's open transaction).
#[derive(Debug)]
pub struct XaSession {
    pub xid: Xid,
    pub state: XaState,
}

/// What the registry knows of an xid in use.
enum Slot {
    /// A live session's XA transaction (`prepared` once XA PREPARE succeeded).
    Attached { prepared: bool },
    /// A prepared transaction whose connection is gone (or that a crash left), or one
    /// an XA COMMIT / XA ROLLBACK of another connection is finishing (None).
    Detached(Option<Txn>),
}

/// Every xid in use on the server.
#[derive(Default)]
pub struct Registry {
    map: parking_lot::Mutex<HashMap<Xid, Slot>>,
}

impl Registry {
    /// XA START: takes `xid` for a session; 1440 when it is in use.
    pub fn claim(&self, xid: &Xid) -> Result<()> {
        let mut m = self.map.lock();
        if m.contains_key(xid) {
            return Err(Error::XaDupId);
        }
        m.insert(xid.clone(), Slot::Attached { prepared: false });
        Ok(())
    }

    /// The session's XA transaction prepared: XA RECOVER lists it from now on.
    pub fn mark_prepared(&self, xid: &Xid) {
        if let Some(Slot::Attached { prepared }) = self.map.lock().get_mut(xid) {
            *prepared = true;
        }
    }

    /// The xid is free again (the transaction ended).
    pub fn release(&self, xid: &Xid) {
        self.map.lock().remove(xid);
    }

    /// The session's prepared transaction stays when its connection goes.
    pub fn detach(&self, xid: &Xid, txn: Txn) {
        self.map
            .lock()
            .insert(xid.clone(), Slot::Detached(Some(txn)));
    }

    /// A detached prepared transaction, for XA COMMIT / XA ROLLBACK from any
    /// connection; the xid stays in use until [`Registry::release`]. 1397 when no
    /// detached transaction has that xid (a live session's own is not another's to
    /// finish, as in MySQL).
    pub fn take_detached(&self, xid: &Xid) -> Result<Txn> {
        match self.map.lock().get_mut(xid) {
            Some(Slot::Detached(t)) => t.take().ok_or(Error::XaNota),
            _ => Err(Error::XaNota),
        }
    }

    /// The xids of the prepared transactions, attached or not (XA RECOVER).
    pub fn prepared(&self) -> Vec<Xid> {
        let mut v: Vec<Xid> = self
            .map
            .lock()
            .iter()
            .filter(|(_, s)| match s {
                Slot::Attached { prepared } => *prepared,
                Slot::Detached(t) => t.is_some(),
            })
            .map(|(x, _)| x.clone())
            .collect();
        v.sort_by(|a, b| (&a.gtrid, &a.bqual, a.format_id).cmp(&(&b.gtrid, &b.bqual, b.format_id)));
        v
    }

    /// How many prepared transactions are detached (the server's startup line).
    pub fn detached_count(&self) -> usize {
        self.map
            .lock()
            .values()
            .filter(|s| matches!(s, Slot::Detached(Some(_))))
            .count()
    }
}

impl Session {
    /// Runs one XA statement.
    pub(crate) fn xa_statement(&mut self, sql: &str, out: &mut dyn QueryOutput) -> Result<()> {
        match parse(sql)? {
            XaStmt::Start { xid, resume } => self.xa_start(xid, resume)?,
            XaStmt::End { xid } => {
                let x = self.xa_state(XaState::Active)?;
                if x.xid != xid {
                    return Err(Error::XaNota);
                }
                x.state = XaState::Idle;
            }
            XaStmt::Prepare { xid } => {
                self.xa_prepare(xid)?;
                // pseudo_slave_mode (a binary-log replay): the prepared branch leaves
                // the session as the replica's applier's does, so the script's next
                // transaction can start; its XA COMMIT later finds it detached.
                if self.get_variable("pseudo_slave_mode", false)?.truth() == Some(true) {
                    self.detach_prepared_xa();
                }
            }
            XaStmt::Commit { xid, one_phase } => self.xa_finish(xid, Some(one_phase))?,
            XaStmt::Rollback { xid } => self.xa_finish(xid, None)?,
            XaStmt::Recover { convert } => return self.xa_recover(convert, out),
        }
        out.ok(&OkInfo::default())
    }

    /// The session's XA transaction when it is in `want` (1399 naming the state it is
    /// in otherwise; 1614 at XA END of a branch a deadlock rolled back).
    fn xa_state(&mut self, want: XaState) -> Result<&mut XaSession> {
        let state = self.xa.as_ref().map(|x| x.state);
        match (state, self.xa.as_mut()) {
            (Some(s), Some(x)) if s == want => Ok(x),
            (Some(XaState::RollbackOnly), _) if want == XaState::Active => Err(Error::XaRbDeadlock),
            (Some(s), _) => Err(Error::XaRmFail(s.name().into())),
            (None, _) => Err(Error::XaRmFail(NON_EXISTING.into())),
        }
    }

    fn xa_start(&mut self, xid: Xid, resume: bool) -> Result<()> {
        if resume {
            return match &mut self.xa {
                Some(x) if x.state == XaState::Idle => {
                    if x.xid != xid {
                        return Err(Error::XaNota);
                    }
                    x.state = XaState::Active;
                    Ok(())
                }
                _ => Err(Error::XaInval),
            };
        }
        if let Some(x) = &self.xa {
            return Err(Error::XaRmFail(x.state.name().into()));
        }
        // BEGIN (or autocommit=0 work) already open, or LOCK TABLES: XAER_OUTSIDE.
        if self.txn.is_some() || self.locked.is_some() {
            return Err(Error::XaOutside);
        }
        self.server.xa.claim(&xid)?;
        let txn = self.new_txn();
        self.txn = Some(txn);
        self.xa = Some(XaSession {
            xid,
            state: XaState::Active,
        });
        Ok(())
    }

    fn xa_prepare(&mut self, xid: Xid) -> Result<()> {
        let x = self.xa_state(XaState::Idle)?;
        if x.xid != xid {
            return Err(Error::XaNota);
        }
        let bytes = x.xid.to_bytes();
        // With the binary log on, the prepared transaction's events go to the log at
        // PREPARE (docs/format/binlog.md, "An XA transaction"): the engine's prepare
        // record first, then the log's group, durable before XA PREPARE succeeds. A
        // session that keeps its changes out of the log cannot prepare: recovery would
        // find no prepare group and roll the transaction back.
        let log = self.binlog_on().cloned();
        if log.is_none() && self.server.binlog().is_some() {
            return Err(Error::NotSupported(
                "XA PREPARE with sql_log_bin=0 while the binary log is on".into(),
            ));
        }
        let r = match &self.txn {
            Some(t) => t.prepare_xa(&bytes),
            None => Ok(()),
        };
        let r = r.and_then(|()| match &log {
            Some(b) => {
                let rows = match &self.txn {
                    Some(t) => crate::binlog::loggable_rows(t),
                    None => Vec::new(),
                };
                let cx = self.binlog_context();
                b.write(&strata_binlog::Entry::XaPrepare {
                    cx: &cx,
                    xid: &xid.logged(),
                    changes: &rows,
                })
            }
            None => Ok(()),
        });
        if let Err(e) = r {
            // As MySQL: a branch that cannot prepare (or whose prepare group could not
            // be logged) is rolled back and ended.
            let x = self.xa.take();
            let _ = self.rollback_open();
            if let Some(x) = x {
                self.server.xa.release(&x.xid);
            }
            return Err(e);
        }
        self.server.xa.mark_prepared(&xid);
        if let Some(x) = &mut self.xa {
            x.state = XaState::Prepared;
        }
        Ok(())
    }

    /// XA COMMIT (`one_phase` Some) or XA ROLLBACK (None) of `xid`: the session's own
    /// XA transaction, or a detached prepared one.
    fn xa_finish(&mut self, xid: Xid, one_phase: Option<bool>) -> Result<()> {
        let own = self.xa.as_ref().map(|x| (x.xid == xid, x.state));
        match own {
            Some((true, state)) => {
                let ok = match (one_phase, state) {
                    (Some(true), XaState::Idle) | (Some(false), XaState::Prepared) => true,
                    (None, XaState::Idle | XaState::Prepared | XaState::RollbackOnly) => true,
                    (Some(_), XaState::RollbackOnly) => {
                        // The branch is gone already (MySQL rolls it back and says so).
                        if let Some(x) = self.xa.take() {
                            let _ = self.rollback_open();
                            self.server.xa.release(&x.xid);
                        }
                        return Err(Error::XaRbDeadlock);
                    }
                    _ => false,
                };
                if !ok {
                    return Err(Error::XaRmFail(state.name().into()));
                }
                if state == XaState::Prepared {
                    // Its prepare group is in the log (when logging): the commit or
                    // rollback group goes there before the engine finishes it.
                    let Some(txn) = self.txn.take() else {
                        if let Some(x) = self.xa.take() {
                            self.server.xa.release(&x.xid);
                        }
                        self.end_transaction_locks();
                        return Ok(());
                    };
                    return match self.finish_prepared(&xid, one_phase.is_some(), txn) {
                        Ok(r) => {
                            self.xa = None;
                            self.server.xa.release(&xid);
                            self.end_transaction_locks();
                            r
                        }
                        Err(failed) => {
                            let (e, txn) = *failed;
                            // Nothing was logged or done: still prepared.
                            self.txn = Some(txn);
                            Err(e)
                        }
                    };
                }
                let Some(x) = self.xa.take() else {
                    return Ok(());
                };
                let r = if one_phase.is_some() {
                    self.commit_open()
                } else {
                    self.rollback_open()
                };
                self.server.xa.release(&x.xid);
                r
            }
            // Another xid while in an XA transaction, or inside BEGIN: MySQL's
            // XAER_OUTSIDE.
            Some((false, _)) => Err(Error::XaOutside),
            None if self.txn.is_some() => Err(Error::XaOutside),
            None => {
                if one_phase == Some(true) {
                    // ONE PHASE is for a branch the session itself ended (IDLE).
                    return Err(Error::XaInval);
                }
                let txn = self.server.xa.take_detached(&xid)?;
                match self.finish_prepared(&xid, one_phase.is_some(), txn) {
                    Ok(r) => {
                        self.server.xa.release(&xid);
                        r
                    }
                    Err(failed) => {
                        let (e, txn) = *failed;
                        // Nothing was logged or done: still prepared, still detached.
                        self.server.xa.detach(&xid, txn);
                        Err(e)
                    }
                }
            }
        }
    }

    /// XA COMMIT (`commit`) or XA ROLLBACK of the prepared transaction `txn`. With the
    /// log on, its `XA COMMIT` / `XA ROLLBACK` group is written (and synced under
    /// sync_binlog) first and the engine finishes it in the log's order; Ok(result)
    /// then, the result being the engine's. Err((error, txn)): the group could not be
    /// written and nothing was done — the transaction stays prepared. A session with
    /// sql_log_bin=0 finishes it without logging, as MySQL.
    fn finish_prepared(
        &self,
        xid: &Xid,
        commit: bool,
        txn: Txn,
    ) -> std::result::Result<Result<()>, Box<(Error, Txn)>> {
        let finish = |t: Txn| if commit { t.commit() } else { t.rollback() };
        let Some(b) = self.binlog_on() else {
            return Ok(finish(txn));
        };
        let cx = self.binlog_context();
        let mut slot = Some(txn);
        let r = b.commit_ordered(
            &strata_binlog::Entry::XaFinish {
                cx: &cx,
                xid: &xid.logged(),
                commit,
            },
            || match slot.take() {
                Some(t) => finish(t),
                None => Ok(()),
            },
        );
        match (r, slot) {
            (Err(e), Some(t)) => Err(Box::new((e, t))),
            (r, _) => Ok(r),
        }
    }

    /// XA RECOVER [CONVERT XID]: the prepared XA transactions, MySQL's columns.
    fn xa_recover(&mut self, convert: bool, out: &mut dyn QueryOutput) -> Result<()> {
        let num = |name: &str| {
            let mut c = ColumnMeta::computed(name, FieldType::LongLong);
            c.flags |= flags::NUM;
            c
        };
        out.columns(&[
            num("formatID"),
            num("gtrid_length"),
            num("bqual_length"),
            ColumnMeta::computed("data", FieldType::VarString),
        ])?;
        for x in self.server.xa.prepared() {
            let mut data = x.gtrid.clone();
            data.extend_from_slice(&x.bqual);
            let data = if convert {
                let mut s = String::from("0x");
                for b in &data {
                    s.push_str(&format!("{b:02X}"));
                }
                Value::str(&s)
            } else {
                Value::Bytes(data)
            };
            out.row(&[
                Value::Int(x.format_id as i64),
                Value::Int(x.gtrid.len() as i64),
                Value::Int(x.bqual.len() as i64),
                data,
            ])?;
        }
        out.end(&EndInfo::default())
    }

    /// The replica's applier: the XA branch it just prepared leaves its session (as at
    /// a disconnect), so the source's next transactions can run there; the source's
    /// later XA COMMIT / XA ROLLBACK finds it detached.
    pub fn detach_prepared_xa(&mut self) {
        if self
            .xa
            .as_ref()
            .is_some_and(|x| x.state == XaState::Prepared)
        {
            self.detach_xa();
            self.end_transaction_locks();
        }
    }

    /// The connection ends (or is reset): its prepared XA transaction is handed to the
    /// registry, where XA COMMIT / XA ROLLBACK of any connection finds it; an XA
    /// transaction in any other state is rolled back with the rest, its xid freed.
    pub(crate) fn detach_xa(&mut self) {
        let Some(x) = self.xa.take() else {
            return;
        };
        match (x.state, self.txn.take()) {
            (XaState::Prepared, Some(t)) => self.server.xa.detach(&x.xid, t),
            (_, t) => {
                if let Some(t) = t {
                    let _ = t.rollback();
                }
                self.server.xa.release(&x.xid);
            }
        }
    }
}

impl crate::Server {
    /// Takes the XA transactions the engines' recovery kept prepared: detached, for XA
    /// RECOVER / XA COMMIT / XA ROLLBACK of any connection. Returns how many stay
    /// prepared. Called by the server binary once, after [`crate::Server::install_binlog`]
    /// and before clients connect.
    ///
    /// With the binary log on, the log is the coordinator (docs/format/binlog.md, "An XA
    /// transaction"): one whose last group in the log is its prepare group stays
    /// prepared; an `XA COMMIT` / `XA ROLLBACK` group in the log is finished now (the
    /// crash came before the engine did it); one the log never names is rolled back when
    /// the log was left in use (the crash came before its prepare group was written, so
    /// no XA PREPARE succeeded), and refused (1235, before anything is changed) when the
    /// log was closed cleanly: a server without the log prepared it, and its rows are in
    /// no log.
    pub fn adopt_recovered_xa(&self) -> Result<usize> {
        let mut found = Vec::new();
        for e in self.catalog.engines() {
            for (bytes, part) in e.take_recovered_xa() {
                match Xid::from_bytes(&bytes) {
                    Some(xid) => found.push((xid, Txn::adopt(e.name(), part))),
                    None => {
                        strata_types::log_error!(
                            "XA: a recovered transaction has a malformed xid; it is rolled back"
                        );
                        let _ = Txn::adopt(e.name(), part).rollback();
                    }
                }
            }
        }
        let Some(b) = self.binlog() else {
            let n = found.len();
            for (xid, t) in found {
                self.xa.detach(&xid, t);
            }
            return Ok(n);
        };
        let logged: Vec<_> = found.iter().map(|(x, _)| x.logged()).collect();
        let said = b.xa_outcomes(&logged)?;
        let unlogged: Vec<String> = found
            .iter()
            .filter(|(x, _)| !said.contains_key(&x.logged()))
            .map(|(x, _)| x.logged().serialized())
            .collect();
        if !unlogged.is_empty() && !b.opened_after_crash() {
            return Err(Error::NotSupported(format!(
                "starting with --log-bin while {} XA transaction(s) prepared without the \
                 binary log are pending ({}); start without --log-bin, end them with XA \
                 COMMIT or XA ROLLBACK, then start with it again",
                unlogged.len(),
                unlogged.join(" ")
            )));
        }
        let mut kept = 0;
        for (xid, t) in found {
            match said.get(&xid.logged()) {
                Some(strata_binlog::XaLogged::Prepared) => {
                    self.xa.detach(&xid, t);
                    kept += 1;
                }
                Some(strata_binlog::XaLogged::Committed) => {
                    strata_types::log_note!(
                        "recovery: XA transaction {} committed (its XA COMMIT is in the binary log)",
                        xid.logged().serialized()
                    );
                    t.commit()?;
                }
                Some(strata_binlog::XaLogged::RolledBack) | None => {
                    strata_types::log_note!(
                        "recovery: XA transaction {} rolled back ({})",
                        xid.logged().serialized(),
                        if said.contains_key(&xid.logged()) {
                            "its XA ROLLBACK is in the binary log"
                        } else {
                            "its XA PREPARE is not in the binary log"
                        }
                    );
                    t.rollback()?;
                }
            }
        }
        Ok(kept)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn xid(g: &str, b: &str, f: i32) -> Xid {
        Xid {
            format_id: f,
            gtrid: g.as_bytes().to_vec(),
            bqual: b.as_bytes().to_vec(),
        }
    }

    #[test]
    fn statements_parse() {
        assert_eq!(
            parse("XA START 'a'").unwrap(),
            XaStmt::Start {
                xid: xid("a", "", 1),
                resume: false
            }
        );
        assert_eq!(
            parse("xa begin 'a','b',3 resume").unwrap(),
            XaStmt::Start {
                xid: xid("a", "b", 3),
                resume: true
            }
        );
        assert_eq!(
            parse("XA START X'6162', 0x6364, 0").unwrap(),
            XaStmt::Start {
                xid: xid("ab", "cd", 0),
                resume: false
            }
        );
        assert_eq!(
            parse("XA END 'it''s'").unwrap(),
            XaStmt::End {
                xid: xid("it's", "", 1)
            }
        );
        // Inside double quotes, two single quotes are two characters.
        assert_eq!(
            parse("XA END \"it''s\", \"q\"\"\"").unwrap(),
            XaStmt::End {
                xid: xid("it''s", "q\"", 1)
            }
        );
        assert_eq!(
            parse("XA COMMIT 'a' ONE PHASE").unwrap(),
            XaStmt::Commit {
                xid: xid("a", "", 1),
                one_phase: true
            }
        );
        assert_eq!(
            parse("XA ROLLBACK 'a', '', 2147483647").unwrap(),
            XaStmt::Rollback {
                xid: xid("a", "", i32::MAX)
            }
        );
        assert_eq!(
            parse("XA RECOVER CONVERT XID").unwrap(),
            XaStmt::Recover { convert: true }
        );
        assert_eq!(
            parse("XA PREPARE 'a\\nb'").unwrap(),
            XaStmt::Prepare {
                xid: xid("a\nb", "", 1)
            }
        );
    }

    #[test]
    fn refused_forms() {
        let code = |s: &str| parse(s).unwrap_err().code();
        // Parsed by MySQL but not implemented: XAER_INVAL.
        assert_eq!(code("XA START 'a' JOIN"), 1398);
        assert_eq!(code("XA END 'a' SUSPEND"), 1398);
        assert_eq!(code("XA END 'a' SUSPEND FOR MIGRATE"), 1398);
        assert_eq!(code("XA START ''"), 1398);
        // Not the grammar.
        let long = "x".repeat(65);
        assert_eq!(code(&format!("XA START '{long}'")), 1064);
        assert_eq!(code(&format!("XA START 'a', '{long}'")), 1064);
        assert_eq!(code("XA START 'a','b',-1"), 1064);
        assert_eq!(code("XA START 'a','b',2147483648"), 1064);
        assert_eq!(code("XA START 'a','b','c'"), 1064);
        assert_eq!(code("XA START a"), 1064);
        assert_eq!(code("XA START 1"), 1064);
        assert_eq!(code("XA START 'a' FOR MIGRATE"), 1064);
        assert_eq!(code("XA RECOVER FORMAT='SQL'"), 1064);
        assert_eq!(code("XA COMMIT 'a' ONE"), 1064);
        assert_eq!(code("XA"), 1064);
        assert_eq!(code("XA START X'616'"), 1064);
    }

    #[test]
    fn longest_parts_are_accepted() {
        let g = "x".repeat(64);
        let s = parse(&format!("XA START '{g}', '{g}'")).unwrap();
        assert_eq!(
            s,
            XaStmt::Start {
                xid: xid(&g, &g, 1),
                resume: false
            }
        );
    }

    #[test]
    fn xid_bytes_round_trip() {
        let x = xid("gtrid", "bq", -5);
        assert_eq!(Xid::from_bytes(&x.to_bytes()), Some(x));
        assert_eq!(Xid::from_bytes(&[1, 0, 0, 0, 3, 0, b'a']), None);
    }

    #[test]
    fn registry_tracks_xids() {
        let r = Registry::default();
        let a = xid("a", "", 1);
        r.claim(&a).unwrap();
        assert_eq!(r.claim(&a).unwrap_err().code(), 1440);
        assert!(r.prepared().is_empty());
        r.mark_prepared(&a);
        assert_eq!(r.prepared(), vec![a.clone()]);
        // Attached to a live session: not another connection's to finish.
        assert_eq!(r.take_detached(&a).err().map(|e| e.code()), Some(1397));
        r.detach(&a, Txn::default());
        assert_eq!(r.detached_count(), 1);
        let t = r.take_detached(&a).unwrap();
        drop(t);
        // Being finished: still in use, no longer listed, not taken twice.
        assert_eq!(r.claim(&a).unwrap_err().code(), 1440);
        assert!(r.prepared().is_empty());
        assert_eq!(r.take_detached(&a).err().map(|e| e.code()), Some(1397));
        r.release(&a);
        r.claim(&a).unwrap();
        // Another formatID is another xid.
        r.claim(&xid("a", "", 2)).unwrap();
    }
}
