//! The session's transaction lifecycle, checked in-process against a small
//! transactional fake engine. The fake keeps rows in memory with an undo log per
//! transaction (its [`Participant`]), and records every commit, rollback and
//! rollback_to it is asked for, the read mode of every read and the isolation level and
//! lock wait timeout of every transaction it joins. Rows whose `v` column is 1213 or
//! 1205 make the insert fail with a deadlock or a lock wait timeout, as a real engine's
//! lock manager would.

use parking_lot::Mutex;
use std::any::Any;
use std::collections::BTreeMap;
use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicI64, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;
use strata_engine::*;
use strata_session::{ResultSink, Server, ServerConfig, Session};
use strata_sql::Catalog;
use strata_types::keycode::encode_index_key;
use strata_types::output::CollectedOutput;
use strata_types::{ColumnMeta, EndInfo, OkInfo, QueryOutput};

/// What the fake engine saw, shared by the engine, its tables and its participants.
#[derive(Default)]
struct Record {
    log: Mutex<Vec<String>>,
    read_modes: Mutex<Vec<ReadMode>>,
    /// `Txn::single_statement` at every read.
    singles: Mutex<Vec<bool>>,
    joined: Mutex<Vec<(Isolation, Duration)>>,
    fail_commit: AtomicBool,
    corrupt: AtomicBool,
    flush_log: AtomicI64,
}

impl Record {
    fn take_log(&self) -> Vec<String> {
        std::mem::take(&mut *self.log.lock())
    }
    fn take_modes(&self) -> Vec<ReadMode> {
        std::mem::take(&mut *self.read_modes.lock())
    }
}

type Rows = Arc<Mutex<BTreeMap<u64, Vec<Value>>>>;

/// One change, and how to undo it: the row's previous contents (None: it was new).
struct Undo {
    rows: Rows,
    id: u64,
    before: Option<Vec<Value>>,
}

struct Part {
    rec: Arc<Record>,
    undo: Mutex<Vec<Undo>>,
}

impl Part {
    fn undo_to(&self, n: usize) {
        let mut undo = self.undo.lock();
        while undo.len() > n {
            let Some(u) = undo.pop() else { break };
            let mut rows = u.rows.lock();
            match u.before {
                Some(r) => rows.insert(u.id, r),
                None => rows.remove(&u.id),
            };
        }
    }
}

impl Participant for Part {
    fn commit(&self) -> Result<()> {
        if self.rec.fail_commit.load(Ordering::Relaxed) {
            self.rec.log.lock().push("commit failed".into());
            return Err(Error::Io("log fsync failed".into()));
        }
        self.rec.log.lock().push("commit".into());
        self.undo.lock().clear();
        Ok(())
    }
    fn rollback(&self) -> Result<()> {
        self.rec.log.lock().push("rollback".into());
        self.undo_to(0);
        Ok(())
    }
    fn savepoint(&self) -> u64 {
        self.undo.lock().len() as u64
    }
    fn rollback_to(&self, savepoint: u64) -> Result<()> {
        self.rec.log.lock().push(format!("rollback_to {savepoint}"));
        self.undo_to(savepoint as usize);
        Ok(())
    }
    fn as_any(&self) -> &dyn Any {
        self
    }
}

struct TxEngine(Arc<Record>);

struct TxTable {
    def: Arc<TableDef>,
    rows: Rows,
    next_id: AtomicU64,
    rec: Arc<Record>,
}

impl Engine for TxEngine {
    fn name(&self) -> &'static str {
        "btree"
    }
    fn create_table(&self, _: &TableDef, _: &Path) -> Result<()> {
        Ok(())
    }
    fn open_table(&self, def: Arc<TableDef>, _: &Path) -> Result<Arc<dyn Table>> {
        Ok(Arc::new(TxTable {
            def,
            rows: Arc::default(),
            next_id: AtomicU64::new(1),
            rec: self.0.clone(),
        }))
    }
    fn drop_table(&self, _: &TableDef, _: &Path) -> Result<()> {
        Ok(())
    }
    fn flush(&self) -> Result<()> {
        Ok(())
    }
    fn describe(&self) -> String {
        "transactional fake".into()
    }
    fn transactional(&self) -> bool {
        true
    }
    /// Joins and logs `snapshot`, under REPEATABLE READ only (as InnoDB).
    fn start_consistent_snapshot(&self, txn: &Txn) -> Result<bool> {
        if txn.isolation() != Isolation::RepeatableRead {
            return Ok(false);
        }
        if txn.participant("btree").is_none() {
            let p: Arc<dyn Participant> = Arc::new(Part {
                rec: self.0.clone(),
                undo: Mutex::new(Vec::new()),
            });
            txn.join("btree", p);
        }
        self.0.log.lock().push("snapshot".into());
        Ok(true)
    }
    fn variables(&self) -> Vec<EngineVar> {
        vec![
            EngineVar {
                name: "innodb_flush_log_at_trx_commit",
                value: Value::Int(self.0.flush_log.load(Ordering::Relaxed)),
                dynamic: true,
            },
            EngineVar {
                name: "innodb_buffer_pool_size",
                value: Value::Int(8 << 20),
                dynamic: false,
            },
        ]
    }
    fn set_variable(&self, name: &str, value: &Value) -> Result<()> {
        match name {
            "innodb_flush_log_at_trx_commit" => match value.to_i64() {
                Some(v @ 0..=2) => {
                    self.0.flush_log.store(v, Ordering::Relaxed);
                    Ok(())
                }
                _ => Err(Error::WrongValueForVariable {
                    name: name.into(),
                    value: value.to_text(),
                }),
            },
            "innodb_buffer_pool_size" => Err(Error::VariableReadOnly(name.into())),
            _ => Err(Error::UnknownVariable(name.into())),
        }
    }
}

impl TxTable {
    /// This transaction's part in the engine, joining on first use.
    fn part(&self, txn: &Txn) -> Arc<dyn Participant> {
        if let Some(p) = txn.participant("btree") {
            return p;
        }
        self.rec
            .joined
            .lock()
            .push((txn.isolation(), txn.lock_wait_timeout()));
        let p: Arc<dyn Participant> = Arc::new(Part {
            rec: self.rec.clone(),
            undo: Mutex::new(Vec::new()),
        });
        txn.join("btree", p.clone());
        p
    }

    fn record_change(&self, txn: &Txn, id: u64, before: Option<Vec<Value>>) {
        let p = self.part(txn);
        let part = p
            .as_any()
            .downcast_ref::<Part>()
            .expect("the fake's own part");
        part.undo.lock().push(Undo {
            rows: self.rows.clone(),
            id,
            before,
        });
    }

    fn read(&self, txn: &Txn) -> Vec<(u64, Vec<Value>)> {
        self.part(txn);
        self.rec.read_modes.lock().push(txn.read_mode());
        self.rec.singles.lock().push(txn.single_statement());
        self.rows
            .lock()
            .iter()
            .map(|(k, v)| (*k, v.clone()))
            .collect()
    }

    fn duplicate(&self, row: &[Value], except: Option<u64>) -> Option<Error> {
        let rows = self.rows.lock();
        for ix in self.def.indexes.iter().filter(|i| i.unique) {
            let mut k = Vec::new();
            encode_index_key(&mut k, &self.def, ix, row);
            for (id, r) in rows.iter() {
                let mut k2 = Vec::new();
                encode_index_key(&mut k2, &self.def, ix, r);
                if k == k2 && Some(*id) != except {
                    return Some(Error::DuplicateKey {
                        value: row[ix.columns[0]].to_text(),
                        key: ix.name.clone(),
                    });
                }
            }
        }
        None
    }
}

impl Table for TxTable {
    fn def(&self) -> &Arc<TableDef> {
        &self.def
    }
    fn lock(&self, _: LockMode) -> TableLock {
        TableLock::none()
    }
    fn scan(&self, txn: &Txn, f: &mut RowFn) -> Result<()> {
        for (id, r) in self.read(txn) {
            if f(id, &r)? == Flow::Stop {
                break;
            }
        }
        Ok(())
    }
    fn index_scan(
        &self,
        txn: &Txn,
        index: usize,
        range: &KeyRange,
        reverse: bool,
        f: &mut RowFn,
    ) -> Result<()> {
        let ix = &self.def.indexes[index];
        let mut hits: Vec<(Vec<u8>, u64, Vec<Value>)> = self
            .read(txn)
            .into_iter()
            .map(|(id, r)| {
                let mut k = Vec::new();
                encode_index_key(&mut k, &self.def, ix, &r);
                (k, id, r)
            })
            .filter(|(k, _, _)| range.contains(k))
            .collect();
        hits.sort_by(|a, b| a.0.cmp(&b.0));
        if reverse {
            hits.reverse();
        }
        for (_, id, r) in hits {
            if f(id, &r)? == Flow::Stop {
                break;
            }
        }
        Ok(())
    }
    fn insert(&self, txn: &Txn, row: &mut Vec<Value>) -> Result<Inserted> {
        self.part(txn);
        match row.get(1).and_then(|v| v.to_i64()) {
            Some(1213) => return Err(Error::Deadlock),
            Some(1205) => return Err(Error::LockWaitTimeout),
            _ => {}
        }
        if let Some(e) = self.duplicate(row, None) {
            return Err(e);
        }
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        self.rows.lock().insert(id, row.clone());
        self.record_change(txn, id, None);
        Ok(Inserted {
            row_id: id,
            generated_id: None,
        })
    }
    fn update(&self, txn: &Txn, id: RowId, old: &[Value], new: &[Value]) -> Result<RowId> {
        if let Some(e) = self.duplicate(new, Some(id)) {
            return Err(e);
        }
        self.rows.lock().insert(id, new.to_vec());
        self.record_change(txn, id, Some(old.to_vec()));
        Ok(id)
    }
    fn delete(&self, txn: &Txn, id: RowId, old: &[Value]) -> Result<()> {
        self.rows.lock().remove(&id);
        self.record_change(txn, id, Some(old.to_vec()));
        Ok(())
    }
    fn truncate(&self) -> Result<()> {
        self.rows.lock().clear();
        Ok(())
    }
    fn check(&self, _: &Txn) -> Result<()> {
        if self.rec.corrupt.load(Ordering::Relaxed) {
            return Err(Error::corrupt("d.t", "page 3: checksum mismatch"));
        }
        Ok(())
    }
    fn status(&self) -> TableStatus {
        TableStatus {
            rows: self.rows.lock().len() as u64,
            ..Default::default()
        }
    }
    fn flush(&self) -> Result<()> {
        Ok(())
    }
}

struct Out(CollectedOutput);

impl QueryOutput for Out {
    fn columns(&mut self, c: &[ColumnMeta]) -> Result<()> {
        self.0.columns(c)
    }
    fn row(&mut self, r: &[Value]) -> Result<()> {
        self.0.row(r)
    }
    fn end(&mut self, i: &EndInfo) -> Result<()> {
        self.0.end(i)
    }
    fn ok(&mut self, i: &OkInfo) -> Result<()> {
        self.0.ok(i)
    }
}

impl ResultSink for Out {
    fn next_result(&mut self) -> Result<()> {
        self.0 = CollectedOutput::default();
        Ok(())
    }
}

/// A session on a catalog whose only engine is the fake, with table `t` created and
/// the log cleared.
fn session() -> (tempfile::TempDir, Arc<Record>, Session) {
    let dir = tempfile::tempdir().unwrap();
    let rec = Arc::new(Record::default());
    rec.flush_log.store(1, Ordering::Relaxed);
    let engine: Arc<dyn Engine> = Arc::new(TxEngine(rec.clone()));
    let catalog = Arc::new(Catalog::open(dir.path(), vec![engine]).unwrap());
    let server = Arc::new(Server::new(
        catalog,
        ServerConfig {
            datadir: dir.path().into(),
            port: 0,
            default_engine: "btree".into(),
            key_buffer_size: 1 << 20,
            max_connections: 10,
            max_allowed_packet: 1 << 20,
            sql_mode: "STRICT_TRANS_TABLES".into(),
            hostname: "test".into(),
            tmpdir: std::env::temp_dir(),
            sort_buffer_size: 2 << 20,
        },
    ));
    let mut s = Session::new(server, 1, "root", None).unwrap();
    run(&mut s, "CREATE DATABASE d").unwrap();
    run(&mut s, "USE d").unwrap();
    run(
        &mut s,
        "CREATE TABLE t (id INT PRIMARY KEY, v INT) ENGINE=InnoDB",
    )
    .unwrap();
    rec.take_log();
    rec.take_modes();
    rec.joined.lock().clear();
    (dir, rec, s)
}

fn run(s: &mut Session, sql: &str) -> Result<CollectedOutput> {
    let mut out = Out(CollectedOutput::default());
    s.query(sql, false, &mut out)?;
    Ok(out.0)
}

fn ok(s: &mut Session, sql: &str) {
    if let Err(e) = run(s, sql) {
        panic!("{sql}: {e}");
    }
}

fn err(s: &mut Session, sql: &str) -> u16 {
    match run(s, sql) {
        Ok(_) => panic!("{sql}: expected an error"),
        Err(e) => e.code(),
    }
}

fn rows(s: &mut Session, sql: &str) -> Vec<String> {
    match run(s, sql) {
        Ok(o) => o
            .rows
            .iter()
            .map(|r| r.iter().map(|v| v.to_text()).collect::<Vec<_>>().join("|"))
            .collect(),
        Err(e) => panic!("{sql}: {e}"),
    }
}

fn in_trans(s: &Session) -> bool {
    s.status_flags() & 1 != 0
}

#[test]
fn autocommit_commits_each_statement() {
    let (_d, rec, mut s) = session();
    ok(&mut s, "INSERT INTO t VALUES (1, 0)");
    assert!(!in_trans(&s));
    ok(&mut s, "INSERT INTO t VALUES (2, 0)");
    assert_eq!(rec.take_log(), ["commit", "commit"]);
    assert_eq!(rows(&mut s, "SELECT id FROM t ORDER BY id"), ["1", "2"]);
    assert_eq!(rec.take_log(), ["commit"]);
    // A statement that reads no table opens no transaction.
    assert_eq!(rows(&mut s, "SELECT 1 + 1"), ["2"]);
    assert!(rec.take_log().is_empty());
    // A failing statement under autocommit is undone and its transaction ends.
    assert_eq!(err(&mut s, "INSERT INTO t VALUES (3, 0), (1, 0)"), 1062);
    assert_eq!(rec.take_log(), ["rollback_to 0", "rollback"]);
    assert!(!in_trans(&s));
    assert_eq!(rows(&mut s, "SELECT id FROM t ORDER BY id"), ["1", "2"]);
}

#[test]
fn begin_commit_commits_once_and_rollback_undoes() {
    let (_d, rec, mut s) = session();
    ok(&mut s, "BEGIN");
    assert!(in_trans(&s));
    ok(&mut s, "INSERT INTO t VALUES (1, 0)");
    ok(&mut s, "UPDATE t SET v = 5 WHERE id = 1");
    assert_eq!(rows(&mut s, "SELECT v FROM t WHERE id = 1"), ["5"]);
    assert!(rec.log.lock().is_empty());
    ok(&mut s, "COMMIT");
    assert!(!in_trans(&s));
    assert_eq!(rec.take_log(), ["commit"]);

    ok(&mut s, "START TRANSACTION WITH CONSISTENT SNAPSHOT");
    ok(&mut s, "DELETE FROM t WHERE id = 1");
    ok(&mut s, "INSERT INTO t VALUES (2, 0)");
    ok(&mut s, "ROLLBACK");
    assert!(!in_trans(&s));
    assert_eq!(rec.take_log(), ["snapshot", "rollback"]);
    assert_eq!(rows(&mut s, "SELECT id, v FROM t"), ["1|5"]);
    rec.take_log();

    // BEGIN inside a transaction commits it first; COMMIT with none open is fine.
    ok(&mut s, "BEGIN");
    ok(&mut s, "INSERT INTO t VALUES (3, 0)");
    ok(&mut s, "START TRANSACTION READ WRITE");
    assert_eq!(rec.take_log(), ["commit"]);
    assert!(in_trans(&s));
    ok(&mut s, "COMMIT");
    ok(&mut s, "COMMIT");
    assert!(rec.take_log().is_empty());
    assert_eq!(err(&mut s, "ROLLBACK TO SAVEPOINT x"), 1305);
}

#[test]
fn savepoints_undo_through_the_participant() {
    let (_d, rec, mut s) = session();
    ok(&mut s, "BEGIN");
    ok(&mut s, "INSERT INTO t VALUES (1, 0)");
    ok(&mut s, "SAVEPOINT a");
    ok(&mut s, "INSERT INTO t VALUES (2, 0)");
    ok(&mut s, "SAVEPOINT b");
    ok(&mut s, "UPDATE t SET v = 9");
    ok(&mut s, "ROLLBACK TO SAVEPOINT a");
    assert_eq!(rec.take_log(), ["rollback_to 1"]);
    assert!(in_trans(&s));
    assert_eq!(rows(&mut s, "SELECT id, v FROM t"), ["1|0"]);
    // b was set after a: gone; a stays until released.
    assert_eq!(err(&mut s, "ROLLBACK TO b"), 1305);
    ok(&mut s, "ROLLBACK WORK TO a");
    ok(&mut s, "RELEASE SAVEPOINT a");
    assert_eq!(err(&mut s, "ROLLBACK TO a"), 1305);
    assert_eq!(err(&mut s, "RELEASE SAVEPOINT a"), 1305);
    rec.take_log();
    ok(&mut s, "SAVEPOINT c");
    ok(&mut s, "COMMIT");
    assert_eq!(rec.take_log(), ["commit"]);
    assert_eq!(err(&mut s, "ROLLBACK TO c"), 1305);

    // Under autocommit outside a transaction: accepted, and nothing to roll back to.
    ok(&mut s, "SAVEPOINT d");
    assert!(!in_trans(&s));
    assert_eq!(err(&mut s, "ROLLBACK TO d"), 1305);

    // autocommit=0: the savepoint belongs to the implicit transaction.
    ok(&mut s, "SET autocommit = 0");
    ok(&mut s, "SAVEPOINT e");
    assert!(in_trans(&s));
    ok(&mut s, "DELETE FROM t");
    ok(&mut s, "ROLLBACK TO e");
    assert_eq!(rec.take_log(), ["rollback_to 0"]);
    assert_eq!(rows(&mut s, "SELECT COUNT(*) FROM t"), ["1"]);
    ok(&mut s, "ROLLBACK");
    assert_eq!(err(&mut s, "ROLLBACK TO e"), 1305);
}

#[test]
fn read_only_transactions_refuse_writes() {
    let (_d, rec, mut s) = session();
    ok(&mut s, "INSERT INTO t VALUES (1, 0)");
    ok(&mut s, "START TRANSACTION READ ONLY");
    assert_eq!(err(&mut s, "INSERT INTO t VALUES (2, 0)"), 1792);
    assert_eq!(err(&mut s, "UPDATE t SET v = 1"), 1792);
    assert_eq!(err(&mut s, "SELECT id FROM t FOR UPDATE"), 1792);
    assert_eq!(rows(&mut s, "SELECT id FROM t LOCK IN SHARE MODE"), ["1"]);
    assert!(in_trans(&s));
    assert_eq!(err(&mut s, "SET TRANSACTION READ WRITE"), 1568);
    ok(&mut s, "COMMIT");
    // Next transaction only: one autocommitted statement uses it up.
    ok(&mut s, "SET TRANSACTION READ ONLY");
    assert_eq!(err(&mut s, "DELETE FROM t"), 1792);
    ok(&mut s, "DELETE FROM t");
    // The session's mode, and DDL under it.
    ok(&mut s, "SET SESSION TRANSACTION READ ONLY");
    assert_eq!(err(&mut s, "INSERT INTO t VALUES (3, 0)"), 1792);
    assert_eq!(err(&mut s, "CREATE TABLE u (a INT)"), 1792);
    ok(&mut s, "START TRANSACTION READ WRITE");
    ok(&mut s, "INSERT INTO t VALUES (3, 0)");
    ok(&mut s, "COMMIT");
    ok(&mut s, "SET @@session.transaction_read_only = 0");
    ok(&mut s, "SET @@transaction_read_only = 1");
    assert_eq!(err(&mut s, "INSERT INTO t VALUES (4, 0)"), 1792);
    ok(&mut s, "INSERT INTO t VALUES (4, 0)");
    assert_eq!(rows(&mut s, "SELECT id FROM t ORDER BY id"), ["3", "4"]);
    rec.take_log();
}

#[test]
fn consistent_snapshot_is_taken_at_start() {
    let (_d, rec, mut s) = session();
    ok(
        &mut s,
        "START TRANSACTION WITH CONSISTENT SNAPSHOT, READ ONLY",
    );
    assert_eq!(rec.take_log(), ["snapshot"]);
    assert_eq!(rec.joined.lock().len(), 0, "joined by the engine itself");
    ok(&mut s, "COMMIT");
    assert_eq!(rec.take_log(), ["commit"]);
    ok(
        &mut s,
        "SET SESSION TRANSACTION ISOLATION LEVEL READ COMMITTED",
    );
    let o = run(&mut s, "START TRANSACTION WITH CONSISTENT SNAPSHOT").unwrap();
    assert_eq!(o.ok.map(|i| i.warnings), Some(1));
    assert_eq!(
        rows(&mut s, "SHOW WARNINGS")
            .iter()
            .map(|r| r.split('|').nth(1).unwrap_or("").to_string())
            .collect::<Vec<_>>(),
        ["138"]
    );
    assert!(rec.take_log().is_empty());
    assert_eq!(err(&mut s, "START TRANSACTION READ ONLY, READ WRITE"), 1064);
}

#[test]
fn serializable_locks_plain_reads_only_inside_a_transaction() {
    let (_d, rec, mut s) = session();
    ok(
        &mut s,
        "SET SESSION TRANSACTION ISOLATION LEVEL SERIALIZABLE",
    );
    rows(&mut s, "SELECT * FROM t");
    ok(&mut s, "BEGIN");
    rows(&mut s, "SELECT * FROM t");
    ok(&mut s, "COMMIT");
    ok(&mut s, "SET autocommit = 0");
    rows(&mut s, "SELECT * FROM t");
    ok(&mut s, "COMMIT");
    assert_eq!(*rec.singles.lock(), [true, false, false]);
}

#[test]
fn sql_prepared_statements() {
    let (_d, rec, mut s) = session();
    ok(&mut s, "PREPARE ins FROM 'INSERT INTO t VALUES (?, ?)'");
    ok(&mut s, "SET @a = 1, @b = 7");
    ok(&mut s, "EXECUTE ins USING @a, @b");
    assert_eq!(err(&mut s, "EXECUTE ins USING @a"), 1210);
    ok(&mut s, "SET @q = 'SELECT v FROM t WHERE id = ?'");
    ok(&mut s, "PREPARE sel FROM @q");
    assert_eq!(rows(&mut s, "EXECUTE SEL USING @a"), ["7"]);
    ok(&mut s, "DEALLOCATE PREPARE sel");
    assert_eq!(err(&mut s, "EXECUTE sel USING @a"), 1243);
    assert_eq!(err(&mut s, "DROP PREPARE sel"), 1243);
    // Prepared transaction statements run as the session's own.
    ok(&mut s, "PREPARE b FROM 'BEGIN'");
    ok(&mut s, "PREPARE sp FROM 'SAVEPOINT x'");
    rec.take_log();
    ok(&mut s, "EXECUTE b");
    ok(&mut s, "EXECUTE sp");
    ok(&mut s, "UPDATE t SET v = 8");
    ok(&mut s, "ROLLBACK TO x");
    assert_eq!(rec.take_log(), ["rollback_to 0"]);
    ok(&mut s, "COMMIT");
    assert_eq!(rows(&mut s, "SELECT v FROM t"), ["7"]);
    assert_eq!(err(&mut s, "PREPARE p FROM 'EXECUTE ins'"), 1295);
}

#[test]
fn failing_statement_rolls_back_to_its_start_only() {
    let (_d, rec, mut s) = session();
    ok(&mut s, "BEGIN");
    ok(&mut s, "INSERT INTO t VALUES (1, 0)");
    // The second row is a duplicate: the first row of this statement is undone.
    assert_eq!(err(&mut s, "INSERT INTO t VALUES (2, 0), (1, 0)"), 1062);
    assert_eq!(rec.take_log(), ["rollback_to 1"]);
    assert!(in_trans(&s));
    ok(&mut s, "INSERT INTO t VALUES (3, 0)");
    ok(&mut s, "COMMIT");
    assert_eq!(rec.take_log(), ["commit"]);
    assert_eq!(rows(&mut s, "SELECT id FROM t ORDER BY id"), ["1", "3"]);
}

#[test]
fn deadlock_rolls_back_everything_timeout_only_the_statement() {
    let (_d, rec, mut s) = session();
    ok(&mut s, "BEGIN");
    ok(&mut s, "INSERT INTO t VALUES (1, 0)");
    assert_eq!(err(&mut s, "INSERT INTO t VALUES (2, 1205)"), 1205);
    assert_eq!(rec.take_log(), ["rollback_to 1"]);
    assert!(in_trans(&s));
    assert_eq!(err(&mut s, "INSERT INTO t VALUES (2, 1213)"), 1213);
    assert_eq!(rec.take_log(), ["rollback"]);
    assert!(!in_trans(&s));
    assert!(rows(&mut s, "SELECT id FROM t").is_empty());
    // The next statement is outside any transaction (autocommit again).
    rec.take_log();
    ok(&mut s, "INSERT INTO t VALUES (5, 0)");
    assert_eq!(rec.take_log(), ["commit"]);
}

#[test]
fn ddl_and_lock_tables_commit_implicitly() {
    let (_d, rec, mut s) = session();
    ok(&mut s, "BEGIN");
    ok(&mut s, "INSERT INTO t VALUES (1, 0)");
    ok(&mut s, "CREATE TABLE t2 (id INT PRIMARY KEY)");
    assert_eq!(rec.take_log(), ["commit"]);
    assert!(!in_trans(&s));
    ok(&mut s, "ROLLBACK");
    assert!(rec.take_log().is_empty());
    assert_eq!(rows(&mut s, "SELECT id FROM t"), ["1"]);
    rec.take_log();

    ok(&mut s, "SET autocommit = 0");
    ok(&mut s, "INSERT INTO t VALUES (2, 0)");
    ok(&mut s, "TRUNCATE TABLE t2");
    assert_eq!(rec.take_log(), ["commit"]);
    assert!(
        !in_trans(&s),
        "DDL leaves no transaction open, even with autocommit=0"
    );
    ok(&mut s, "INSERT INTO t VALUES (3, 0)");
    ok(&mut s, "LOCK TABLES t WRITE");
    assert_eq!(rec.take_log(), ["commit"]);
    ok(&mut s, "UNLOCK TABLES");
    // A failing DDL still committed what was open before it.
    ok(&mut s, "INSERT INTO t VALUES (4, 0)");
    assert_eq!(err(&mut s, "CREATE TABLE t (x INT)"), 1050);
    assert_eq!(rec.take_log(), ["commit"]);
}

#[test]
fn autocommit_off_keeps_the_transaction_open() {
    let (_d, rec, mut s) = session();
    ok(&mut s, "SET autocommit = 0");
    assert_eq!(s.status_flags() & 2, 0);
    assert!(!in_trans(&s));
    ok(&mut s, "INSERT INTO t VALUES (1, 0)");
    assert!(in_trans(&s));
    ok(&mut s, "INSERT INTO t VALUES (2, 0)");
    assert!(rec.log.lock().is_empty());
    ok(&mut s, "COMMIT");
    assert_eq!(rec.take_log(), ["commit"]);
    assert!(!in_trans(&s));
    ok(&mut s, "DELETE FROM t WHERE id = 2");
    ok(&mut s, "ROLLBACK");
    assert_eq!(rec.take_log(), ["rollback"]);
    assert_eq!(rows(&mut s, "SELECT id FROM t ORDER BY id"), ["1", "2"]);
    ok(&mut s, "INSERT INTO t VALUES (3, 0)");
    // Turning autocommit back on commits.
    ok(&mut s, "SET autocommit = 1");
    assert_eq!(rec.take_log(), ["commit"]);
    assert!(!in_trans(&s));
    assert_eq!(s.status_flags() & 2, 2);
}

#[test]
fn prepared_statements_follow_the_same_rules() {
    let (_d, rec, mut s) = session();
    let (ins, _, _) = s.prepare("INSERT INTO t VALUES (?, ?)").unwrap();
    let (begin, _, _) = s.prepare("BEGIN").unwrap();
    let (commit, _, _) = s.prepare("COMMIT").unwrap();
    let mut out = Out(CollectedOutput::default());
    s.execute(ins, &[Value::Int(1), Value::Int(0)], &mut out)
        .unwrap();
    assert_eq!(rec.take_log(), ["commit"]);
    s.execute(begin, &[], &mut out).unwrap();
    s.execute(ins, &[Value::Int(2), Value::Int(0)], &mut out)
        .unwrap();
    let e = s.execute(ins, &[Value::Int(2), Value::Int(0)], &mut out);
    assert_eq!(e.unwrap_err().code(), 1062);
    assert_eq!(rec.take_log(), ["rollback_to 1"]);
    s.execute(commit, &[], &mut out).unwrap();
    assert_eq!(rec.take_log(), ["commit"]);
    assert_eq!(rows(&mut s, "SELECT id FROM t ORDER BY id"), ["1", "2"]);
}

#[test]
fn reset_and_close_roll_back() {
    let (_d, rec, mut s) = session();
    ok(&mut s, "BEGIN");
    ok(&mut s, "INSERT INTO t VALUES (1, 0)");
    s.reset();
    assert_eq!(rec.take_log(), ["rollback"]);
    assert!(!in_trans(&s));
    ok(&mut s, "BEGIN");
    ok(&mut s, "INSERT INTO t VALUES (1, 0)");
    s.close();
    assert_eq!(rec.take_log(), ["rollback"]);
}

#[test]
fn commit_errors_reach_the_client() {
    let (_d, rec, mut s) = session();
    rec.fail_commit.store(true, Ordering::Relaxed);
    assert_eq!(err(&mut s, "INSERT INTO t VALUES (1, 0)"), 1030);
    assert!(!in_trans(&s));
    ok(&mut s, "BEGIN");
    ok(&mut s, "INSERT INTO t VALUES (2, 0)");
    assert_eq!(err(&mut s, "COMMIT"), 1030);
    assert!(!in_trans(&s));
    assert_eq!(rec.take_log(), ["commit failed", "commit failed"]);
}

#[test]
fn read_modes_follow_the_statement() {
    use ReadMode::*;
    let (_d, rec, mut s) = session();
    ok(&mut s, "INSERT INTO t VALUES (1, 0), (2, 0)");
    rec.take_modes();
    rows(&mut s, "SELECT v FROM t WHERE id = 1");
    rows(&mut s, "SELECT v FROM t WHERE id = 1 FOR UPDATE");
    rows(&mut s, "SELECT v FROM t WHERE id = 1 LOCK IN SHARE MODE");
    rows(&mut s, "SELECT v FROM t WHERE id = 1 FOR SHARE");
    rows(&mut s, "SELECT COUNT(*) FROM t");
    assert_eq!(
        rec.take_modes(),
        [
            Consistent,
            LockExclusive,
            LockShared,
            LockShared,
            Consistent
        ]
    );
    ok(&mut s, "UPDATE t SET v = v + 1 WHERE id = 1");
    ok(&mut s, "DELETE FROM t WHERE id = 2");
    assert_eq!(rec.take_modes(), [LockExclusive, LockExclusive]);
    ok(&mut s, "CREATE TABLE u (id INT PRIMARY KEY, v INT)");
    rec.take_modes();
    ok(&mut s, "INSERT INTO u SELECT id, v FROM t");
    assert_eq!(rec.take_modes(), [Consistent]);
    // REPLACE reads the row it replaces with a lock.
    ok(&mut s, "REPLACE INTO u VALUES (1, 7)");
    assert_eq!(rec.take_modes(), [LockExclusive]);
    // NOWAIT / SKIP LOCKED are locking reads too (what they do with a locked row is
    // the engine's: crates/server/tests/locking_reads.rs).
    ok(&mut s, "SELECT v FROM t FOR UPDATE NOWAIT");
    assert_eq!(rec.take_modes(), [LockExclusive]);
    ok(&mut s, "SELECT v FROM t FOR SHARE SKIP LOCKED");
    assert_eq!(rec.take_modes(), [LockShared]);
    assert_eq!(err(&mut s, "SELECT v FROM t FOR UPDATE OF t"), 1235);
    // COUNT(*) on a transactional table counts what the transaction sees.
    assert_eq!(rows(&mut s, "SELECT COUNT(*) FROM t"), ["1"]);
}

#[test]
fn isolation_and_lock_wait_timeout_reach_the_txn() {
    let (_d, rec, mut s) = session();
    ok(&mut s, "SET TRANSACTION ISOLATION LEVEL READ COMMITTED");
    ok(&mut s, "INSERT INTO t VALUES (1, 0)");
    ok(&mut s, "INSERT INTO t VALUES (2, 0)");
    ok(
        &mut s,
        "SET SESSION TRANSACTION ISOLATION LEVEL SERIALIZABLE",
    );
    ok(&mut s, "SET innodb_lock_wait_timeout = 7");
    ok(&mut s, "INSERT INTO t VALUES (3, 0)");
    let fifty = Duration::from_secs(50);
    assert_eq!(
        *rec.joined.lock(),
        [
            (Isolation::ReadCommitted, fifty),
            (Isolation::RepeatableRead, fifty),
            (Isolation::Serializable, Duration::from_secs(7)),
        ]
    );
    assert_eq!(
        rows(
            &mut s,
            "SELECT @@transaction_isolation, @@innodb_lock_wait_timeout"
        ),
        ["SERIALIZABLE|7"]
    );
    // Below the minimum: clamped to 1 with a warning, as MySQL does; refused (1231)
    // under STRICT_ALL_TABLES.
    ok(&mut s, "SET innodb_lock_wait_timeout = 0");
    assert_eq!(rows(&mut s, "SELECT @@innodb_lock_wait_timeout"), ["1"]);
    ok(&mut s, "SET sql_mode = 'STRICT_ALL_TABLES'");
    assert_eq!(err(&mut s, "SET innodb_lock_wait_timeout = 0"), 1231);
}

#[test]
fn engine_variables_are_global() {
    let (_d, _rec, mut s) = session();
    assert_eq!(
        rows(&mut s, "SHOW VARIABLES LIKE 'innodb%'"),
        [
            "innodb_buffer_pool_size|8388608",
            "innodb_flush_log_at_trx_commit|1",
            "innodb_lock_wait_timeout|50",
        ]
    );
    assert_eq!(
        rows(&mut s, "SHOW GLOBAL VARIABLES LIKE 'innodb_flush%'"),
        ["innodb_flush_log_at_trx_commit|1"]
    );
    ok(&mut s, "SET GLOBAL innodb_flush_log_at_trx_commit = 2");
    assert_eq!(
        rows(
            &mut s,
            "SELECT @@innodb_flush_log_at_trx_commit, @@global.innodb_flush_log_at_trx_commit"
        ),
        ["2|2"]
    );
    assert_eq!(err(&mut s, "SET innodb_flush_log_at_trx_commit = 0"), 1229);
    assert_eq!(
        err(&mut s, "SET SESSION innodb_flush_log_at_trx_commit = 0"),
        1229
    );
    assert_eq!(
        err(&mut s, "SET GLOBAL innodb_flush_log_at_trx_commit = 7"),
        1231
    );
    assert_eq!(err(&mut s, "SET GLOBAL innodb_buffer_pool_size = 1"), 1238);
    assert_eq!(err(&mut s, "SELECT @@innodb_nope"), 1193);
}

#[test]
fn check_table_reports_engine_errors() {
    let (_d, rec, mut s) = session();
    assert_eq!(rows(&mut s, "CHECK TABLE t"), ["d.t|check|status|OK"]);
    rec.corrupt.store(true, Ordering::Relaxed);
    let got = rows(&mut s, "CHECK TABLE t");
    assert_eq!(got.len(), 2);
    assert!(
        got[0].starts_with("d.t|check|error|") && got[0].contains("checksum mismatch"),
        "{got:?}"
    );
    assert_eq!(got[1], "d.t|check|status|Operation failed");
    let got = rows(&mut s, "CHECK TABLE nope");
    assert!(got[0].starts_with("d.nope|check|Error|"), "{got:?}");
    assert_eq!(got[1], "d.nope|check|status|Operation failed");
}
