// Node's mysql2 driver against a running server (STRATA_HOST / STRATA_PORT, set by
// crates/server/tests/drivers.rs), run with `node --test`: a connection stays usable after
// errors of several kinds, the result shape of multi-statement queries, prepared statements
// (`execute`, binary protocol) with parameters of several types, and a pool.
'use strict';

const test = require('node:test');
const assert = require('node:assert/strict');
const mysql = require('mysql2/promise');

const base = {
  host: process.env.STRATA_HOST || '127.0.0.1',
  port: Number(process.env.STRATA_PORT || 3306),
  user: process.env.STRATA_USER || 'root',
  password: '',
  charset: 'utf8mb4',
};
const DB = 'node_mysql2';

test.before(async () => {
  const c = await mysql.createConnection(base);
  await c.query(`DROP DATABASE IF EXISTS ${DB}`);
  await c.query(`CREATE DATABASE ${DB} CHARACTER SET utf8mb4`);
  await c.end();
});

test.after(async () => {
  const c = await mysql.createConnection(base);
  await c.query(`DROP DATABASE IF EXISTS ${DB}`);
  await c.end();
});

const connect = (extra = {}) => mysql.createConnection({ ...base, database: DB, ...extra });

test('errors leave the connection usable', async () => {
  const c = await connect();
  try {
    await c.query('CREATE TABLE e (id INT PRIMARY KEY, v VARCHAR(10) NOT NULL)');
    await c.query("INSERT INTO e VALUES (1, 'a')");
    const cases = [
      ['SELEC 1', 1064, 'ER_PARSE_ERROR'],
      ['SELECT * FROM no_such_table', 1146, 'ER_NO_SUCH_TABLE'],
      ["INSERT INTO e VALUES (1, 'dup')", 1062, 'ER_DUP_ENTRY'],
      ['INSERT INTO e VALUES (2, NULL)', 1048, 'ER_BAD_NULL_ERROR'],
      ['SELECT no_col FROM e', 1054, 'ER_BAD_FIELD_ERROR'],
    ];
    for (const [sql, errno, code] of cases) {
      await assert.rejects(c.query(sql), (e) => {
        assert.equal(e.errno, errno, sql);
        assert.equal(e.code, code, sql);
        return true;
      });
      const [rows] = await c.query('SELECT COUNT(*) AS n FROM e');
      assert.deepEqual(rows, [{ n: 1 }], `after ${sql}`);
    }
    // An error from a prepared statement, then the same statement text works.
    await assert.rejects(c.execute('SELECT * FROM e WHERE no_col = ?', [1]), { errno: 1054 });
    const [rows] = await c.execute('SELECT v FROM e WHERE id = ?', [1]);
    assert.deepEqual(rows, [{ v: 'a' }]);
    // An error inside a transaction keeps the transaction.
    await c.beginTransaction();
    await c.query("INSERT INTO e VALUES (3, 'c')");
    await assert.rejects(c.query("INSERT INTO e VALUES (3, 'c')"), { errno: 1062 });
    await c.commit();
    const [after] = await c.query('SELECT id FROM e ORDER BY id');
    assert.deepEqual(after.map((r) => r.id), [1, 3]);
  } finally {
    await c.end();
  }
});

test('multi-statement results', async () => {
  const c = await connect({ multipleStatements: true });
  try {
    const [results, fields] = await c.query(
      'CREATE TABLE m (id INT AUTO_INCREMENT PRIMARY KEY, s VARCHAR(5));' +
        "INSERT INTO m (s) VALUES ('x'), ('y');" +
        'SELECT id, s FROM m ORDER BY id;' +
        "UPDATE m SET s = 'z' WHERE id = 2;" +
        'SELECT COUNT(*) AS n FROM m'
    );
    assert.equal(results.length, 5);
    assert.equal(results[0].constructor.name, 'ResultSetHeader');
    assert.equal(results[1].affectedRows, 2);
    assert.equal(results[1].insertId, 1);
    assert.deepEqual(results[2].map((r) => ({ ...r })), [{ id: 1, s: 'x' }, { id: 2, s: 'y' }]);
    assert.equal(results[3].affectedRows, 1);
    assert.equal(results[3].changedRows, 1);
    assert.deepEqual(results[4].map((r) => ({ ...r })), [{ n: 2 }]);
    assert.equal(fields.length, 5);
    assert.equal(fields[0], undefined);
    assert.deepEqual(fields[2].map((f) => f.name), ['id', 's']);
    // An error in the middle: the statements before it ran, the rest did not.
    await assert.rejects(
      c.query("INSERT INTO m (s) VALUES ('w'); SELECT * FROM nope; INSERT INTO m (s) VALUES ('v')"),
      { errno: 1146 }
    );
    const [rows] = await c.query('SELECT s FROM m ORDER BY id');
    assert.deepEqual(rows.map((r) => r.s), ['x', 'z', 'w']);
    // Without the flag, a second statement is a syntax error.
    const single = await connect();
    await assert.rejects(single.query('SELECT 1; SELECT 2'), { errno: 1064 });
    const [[one]] = await single.query('SELECT 1 AS one');
    assert.equal(one.one, 1);
    await single.end();
  } finally {
    await c.end();
  }
});

test('prepared execute with parameters of several types', async () => {
  const c = await connect({ dateStrings: false, timezone: 'Z', supportBigNumbers: true, bigNumberStrings: true });
  try {
    await c.query(`CREATE TABLE p (
      id INT PRIMARY KEY, i BIGINT, d DECIMAL(12,3), f DOUBLE, s VARCHAR(40), b VARBINARY(16),
      t DATETIME(6), dt DATE, j JSON, n INT NULL)`);
    const ts = new Date(Date.UTC(2024, 0, 2, 3, 4, 5, 678));
    const rows = [
      [1, 9007199254740993n, '12345.678', 1.5, 'héllo ✓', Buffer.from([0, 1, 255]), ts, '2024-02-29', JSON.stringify({ a: [1, 2] }), null],
      [2, -5, '-0.001', -2.25e10, '', Buffer.alloc(0), new Date(Date.UTC(1999, 11, 31, 23, 59, 59)), '1970-01-01', '[]', 7],
    ];
    for (const r of rows) {
      const [res] = await c.execute('INSERT INTO p VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)', r);
      assert.equal(res.affectedRows, 1);
    }
    const [got] = await c.execute('SELECT * FROM p WHERE id >= ? ORDER BY id', [1]);
    assert.equal(got.length, 2);
    assert.equal(got[0].i, '9007199254740993');
    assert.equal(got[0].d, '12345.678');
    assert.equal(got[0].f, 1.5);
    assert.equal(got[0].s, 'héllo ✓');
    assert.deepEqual([...got[0].b], [0, 1, 255]);
    assert.equal(got[0].t.toISOString(), '2024-01-02T03:04:05.678Z');
    assert.equal(got[0].dt.toISOString().slice(0, 10), '2024-02-29');
    assert.deepEqual(typeof got[0].j === 'string' ? JSON.parse(got[0].j) : got[0].j, { a: [1, 2] });
    assert.equal(got[0].n, null);
    assert.equal(got[1].i, '-5'); // bigNumberStrings: every BIGINT as a string
    assert.equal(got[1].d, '-0.001');
    assert.equal(got[1].f, -2.25e10);
    assert.equal(got[1].s, '');
    assert.equal(got[1].b.length, 0);
    assert.equal(got[1].n, 7);
    // The same statement again (mysql2 caches it), with other parameter types in the slots.
    const [[x]] = await c.execute('SELECT ? + 1 AS a, CONCAT(?, ?) AS b, ? IS NULL AS c', [41, 'ab', 3, null]);
    assert.equal(Number(x.a), 42);
    assert.equal(x.b, 'ab3');
    assert.equal(Number(x.c), 1);
    const [[y]] = await c.execute('SELECT ? + 1 AS a, CONCAT(?, ?) AS b, ? IS NULL AS c', [1.5, 'x', 'y', 0]);
    assert.equal(Number(y.a), 2.5);
    assert.equal(y.b, 'xy');
    assert.equal(Number(y.c), 0);
    const [upd] = await c.execute('UPDATE p SET n = n + ? WHERE id IN (?, ?)', [1, 1, 2]);
    assert.equal(upd.affectedRows, 2);
    assert.equal(upd.changedRows, 1);
  } finally {
    await c.end();
  }
});

test('a pool', async () => {
  const pool = mysql.createPool({ ...base, database: DB, connectionLimit: 4 });
  try {
    await pool.query('CREATE TABLE pl (id INT AUTO_INCREMENT PRIMARY KEY, w INT)');
    await Promise.all(Array.from({ length: 40 }, (_, w) => pool.execute('INSERT INTO pl (w) VALUES (?)', [w])));
    const [[agg]] = await pool.query('SELECT COUNT(*) AS n, SUM(w) AS s, COUNT(DISTINCT w) AS d FROM pl');
    assert.deepEqual({ n: agg.n, s: Number(agg.s), d: agg.d }, { n: 40, s: 780, d: 40 });
    // A transaction on one pooled connection, with an error in it.
    const conn = await pool.getConnection();
    await conn.beginTransaction();
    await conn.query('DELETE FROM pl WHERE w < 10');
    await assert.rejects(conn.query('DELETE FROM nope'), { errno: 1146 });
    await conn.rollback();
    conn.release();
    const [[after]] = await pool.query('SELECT COUNT(*) AS n FROM pl');
    assert.equal(after.n, 40);
    // Connections held at once are distinct sessions.
    const held = await Promise.all([pool.getConnection(), pool.getConnection(), pool.getConnection()]);
    const ids = new Set();
    for (const h of held) {
      const [[r]] = await h.query('SELECT CONNECTION_ID() AS id');
      ids.add(r.id);
    }
    assert.equal(ids.size, 3);
    held.forEach((h) => h.release());
  } finally {
    await pool.end();
  }
});
