"""mysql-connector-python with server-side prepared statements (`cursor(prepared=True)`), so
every statement goes through COM_STMT_PREPARE / COM_STMT_EXECUTE and the binary protocol:
parameter and result encodings of each type, NULL parameters, large blobs (also sent with
COM_STMT_SEND_LONG_DATA), re-executing one statement many times, transactions and error
numbers. Every check runs twice: with the pure-Python protocol and with the C extension
(libmysqlclient's own prepared-statement code), as the connector offers both.
Run by crates/server/tests/drivers.rs."""

import datetime
import io
from decimal import Decimal

import mysql.connector
import pytest
from mysql.connector import errorcode, errors

from conftest import HOST, PORT, USER


@pytest.fixture(params=[True, False], ids=["pure", "cext"])
def use_pure(request):
    if not request.param:
        try:
            import _mysql_connector  # noqa: F401  (the C extension ships in the wheel)
        except ImportError:
            pytest.fail("mysql-connector-python's C extension is not installed")
    return request.param


def connect(db, use_pure, **kw):
    return mysql.connector.connect(
        host=HOST, port=PORT, user=USER, password="", database=db, use_pure=use_pure,
        charset="utf8mb4", collation="utf8mb4_general_ci", **kw
    )


@pytest.fixture
def conn(dbname, use_pure):
    c = connect(dbname, use_pure, autocommit=True)
    yield c
    c.close()


def table_name(base, use_pure):
    return f"{base}_{'pure' if use_pure else 'cext'}"


def test_prepared_types(conn, use_pure):
    t = table_name("types", use_pure)
    cur = conn.cursor(prepared=True)
    cur.execute(
        f"CREATE TABLE {t} (id INT NOT NULL PRIMARY KEY, i INT, b BIGINT, d DECIMAL(12,3),"
        " s VARCHAR(40), dt DATETIME, bl BLOB, f DOUBLE, ti TINYINT, si SMALLINT)"
    )
    rows = [
        (1, 7, 9223372036854775807, Decimal("123456789.125"), "plain ✓",
         datetime.datetime(2024, 2, 29, 13, 45, 6), b"\x00\x01\xfe\xff", 1.5, -128, 32767),
        (2, -2147483648, -9223372036854775808, Decimal("-0.001"), "",
         datetime.datetime(1999, 12, 31, 0, 0, 0), b"", -0.25, 127, -32768),
        (3, None, None, None, None, None, None, None, None, None),
    ]
    ins = f"INSERT INTO {t} VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
    for r in rows:
        cur.execute(ins, r)
        assert cur.rowcount == 1
    cur.execute(f"SELECT id, i, b, d, s, dt, bl, f, ti, si FROM {t} WHERE id >= ? ORDER BY id", (0,))
    got = cur.fetchall()
    norm = [tuple(bytes(v) if isinstance(v, bytearray) else v for v in r) for r in got]
    assert norm == rows
    assert type(got[0][3]) is Decimal
    assert isinstance(got[0][5], datetime.datetime)
    assert [d[0] for d in cur.description] == ["id", "i", "b", "d", "s", "dt", "bl", "f", "ti", "si"]

    # NULL parameters in a WHERE compare as SQL NULL.
    cur.execute(f"SELECT COUNT(*) FROM {t} WHERE i <=> ?", (None,))
    assert cur.fetchone()[0] == 1
    cur.execute(f"SELECT COUNT(*) FROM {t} WHERE i = ?", (None,))
    assert cur.fetchone()[0] == 0
    # Expressions over parameters, returned in the binary protocol.
    cur.execute("SELECT ? + 1, CONCAT(?, 'x'), ? IS NULL", (41, "ab", None))
    r = cur.fetchone()
    assert r[0] == 42 and r[1] == "abx" and r[2] == 1, r
    cur.close()


def test_large_blobs(conn, use_pure):
    t = table_name("blobs", use_pure)
    cur = conn.cursor(prepared=True)
    cur.execute(f"CREATE TABLE {t} (id INT PRIMARY KEY, data LONGBLOB)")
    big = bytes((i * 7 + 3) % 251 for i in range(3 * 1024 * 1024))
    cur.execute(f"INSERT INTO {t} VALUES (?, ?)", (1, big))
    cur.execute(f"INSERT INTO {t} VALUES (?, ?)", (2, b""))
    cur.execute(f"INSERT INTO {t} VALUES (?, ?)", (3, None))
    if use_pure:
        # A file-like parameter is streamed with COM_STMT_SEND_LONG_DATA in chunks.
        cur.execute(f"INSERT INTO {t} VALUES (?, ?)", (4, io.BytesIO(big[: 1024 * 1024 + 17])))
    cur.execute(f"SELECT id, LENGTH(data), data FROM {t} WHERE id = ?", (1,))
    rid, n, data = cur.fetchone()
    assert rid == 1 and n == len(big)
    assert bytes(data) == big
    cur.execute(f"SELECT LENGTH(data), data IS NULL FROM {t} ORDER BY id")
    lengths = cur.fetchall()
    expected = [(len(big), 0), (0, 0), (None, 1)]
    if use_pure:
        expected.append((1024 * 1024 + 17, 0))
    assert [tuple(r) for r in lengths] == expected
    if use_pure:
        cur.execute(f"SELECT data FROM {t} WHERE id = ?", (4,))
        assert bytes(cur.fetchone()[0]) == big[: 1024 * 1024 + 17]
    cur.close()


def test_reexecute_many_times(conn, use_pure):
    t = table_name("reexec", use_pure)
    cur = conn.cursor(prepared=True)
    cur.execute(f"CREATE TABLE {t} (id INT PRIMARY KEY, v VARCHAR(20), n BIGINT)")
    ins = f"INSERT INTO {t} (id, v, n) VALUES (?, ?, ?)"
    for i in range(500):
        # Alternate a NULL in, so the parameter types change between executions.
        cur.execute(ins, (i, f"row{i}" if i % 3 else None, i * i))
    sel = f"SELECT v, n FROM {t} WHERE id = ?"
    for i in range(0, 500, 7):
        cur.execute(sel, (i,))
        assert cur.fetchone() == ((f"row{i}" if i % 3 else None), i * i)
    cur.execute(f"SELECT COUNT(*), SUM(n), COUNT(v) FROM {t}")
    cnt, total, nv = cur.fetchone()
    assert cnt == 500 and int(total) == sum(i * i for i in range(500))
    assert nv == 500 - len(range(0, 500, 3))
    # executemany on a prepared cursor re-executes the one prepared statement.
    cur.executemany(f"UPDATE {t} SET n = ? WHERE id = ?", [(-1, i) for i in range(10)])
    cur.execute(f"SELECT COUNT(*) FROM {t} WHERE n = ?", (-1,))
    assert cur.fetchone()[0] == 10
    cur.close()


def test_transactions(dbname, use_pure):
    t = table_name("acct", use_pure)
    a = connect(dbname, use_pure, autocommit=True)
    cur = a.cursor(prepared=True)
    cur.execute(f"CREATE TABLE {t} (id INT PRIMARY KEY, bal INT NOT NULL) ENGINE=InnoDB")
    cur.execute(f"INSERT INTO {t} VALUES (?, ?)", (1, 100))
    a.autocommit = False
    cur.execute(f"UPDATE {t} SET bal = bal - ? WHERE id = ?", (40, 1))
    a.rollback()
    cur.execute(f"SELECT bal FROM {t} WHERE id = ?", (1,))
    assert cur.fetchone()[0] == 100
    # That SELECT opened a transaction (autocommit is off); end it before starting one.
    a.commit()
    a.autocommit = True
    a.start_transaction()
    cur.execute(f"UPDATE {t} SET bal = bal - ? WHERE id = ?", (40, 1))
    cur.execute(f"INSERT INTO {t} VALUES (?, ?)", (2, 40))
    b = connect(dbname, use_pure, autocommit=True)
    bc = b.cursor(prepared=True)
    bc.execute(f"SELECT COUNT(*) FROM {t}")
    assert bc.fetchone()[0] == 1, "uncommitted insert visible to another session"
    a.commit()
    bc.execute(f"SELECT id, bal FROM {t} ORDER BY id")
    assert [tuple(r) for r in bc.fetchall()] == [(1, 60), (2, 40)]
    bc.close()
    b.close()
    cur.close()
    a.close()


def test_errors(conn, use_pure):
    t = table_name("dup", use_pure)
    cur = conn.cursor(prepared=True)
    cur.execute(f"CREATE TABLE {t} (id INT PRIMARY KEY, s VARCHAR(3))")
    cur.execute(f"INSERT INTO {t} VALUES (?, ?)", (1, "a"))
    with pytest.raises(errors.IntegrityError) as e:
        cur.execute(f"INSERT INTO {t} VALUES (?, ?)", (1, "b"))
    assert e.value.errno == errorcode.ER_DUP_ENTRY == 1062
    assert e.value.sqlstate == "23000"
    with pytest.raises(errors.DataError) as e:
        cur.execute(f"INSERT INTO {t} VALUES (?, ?)", (2, "abcd"))
    assert e.value.errno == 1406
    # Errors at prepare time.
    with pytest.raises(errors.ProgrammingError) as e:
        cur.execute("SELEKT ?", (1,))
    assert e.value.errno == 1064
    with pytest.raises(errors.ProgrammingError) as e:
        cur.execute("SELECT * FROM no_such_table WHERE id = ?", (1,))
    assert e.value.errno == 1146
    cur.close()
    cur = conn.cursor(prepared=True)
    cur.execute(f"SELECT s FROM {t} WHERE id = ?", (1,))
    assert cur.fetchall() == [("a",)]
    cur.close()


def test_unicode_and_text_cursor_mix(conn, use_pure):
    t = table_name("uni", use_pure)
    words = ["héllo", "日本語", "emoji 😀", "Ελληνικά"]
    pc = conn.cursor(prepared=True)
    pc.execute(f"CREATE TABLE {t} (id INT PRIMARY KEY, s VARCHAR(20))")
    for i, w in enumerate(words):
        pc.execute(f"INSERT INTO {t} VALUES (?, ?)", (i, w))
    pc.execute(f"SELECT s, CHAR_LENGTH(s) FROM {t} ORDER BY id")
    assert [tuple(r) for r in pc.fetchall()] == [(w, len(w)) for w in words]
    pc.close()
    # The plain (text protocol) cursor on the same connection sees the same data.
    tc = conn.cursor()
    tc.execute(f"SELECT s FROM {t} WHERE id = %s", (2,))
    assert tc.fetchone() == ("emoji 😀",)
    tc.close()


def test_prepared_fractional_seconds(conn, use_pure):
    """DATETIME(6)/TIME(6)/YEAR as binary-protocol parameters and result values: a Python
    datetime with microseconds round-trips (issue #15)."""
    t = table_name("fsp", use_pure)
    cur = conn.cursor(prepared=True)
    cur.execute(
        f"CREATE TABLE {t} (id INT PRIMARY KEY, a DATETIME(6), ts TIMESTAMP(3) NULL,"
        " tm TIME(6), y YEAR)"
    )
    dt = datetime.datetime(2020, 1, 1, 10, 0, 0, 123456)
    td = datetime.timedelta(days=1, hours=2, minutes=3, seconds=4, microseconds=500000)
    # The C extension binds a timedelta parameter wrongly (MariaDB 10.11 stores 00:00:00
    # from it too): the TIME goes in as text there, as a timedelta with the pure protocol.
    tm_param = td if use_pure else "26:03:04.5"
    cur.execute(f"INSERT INTO {t} VALUES (?, ?, ?, ?, ?)", (1, dt, dt, tm_param, 2024))
    cur.execute(f"SELECT a, ts, tm, y FROM {t} WHERE id = ?", (1,))
    a, ts, tm, y = cur.fetchone()
    assert a == dt
    assert ts == datetime.datetime(2020, 1, 1, 10, 0, 0, 123000)
    assert tm == td
    # The pure protocol (9.x) reads a binary-protocol YEAR as a one-byte string (the same
    # with MariaDB); the C extension reads the 2-byte integer.
    if not use_pure:
        assert y == 2024
    cur.execute(f"SELECT id FROM {t} WHERE a = ?", (dt,))
    assert cur.fetchall() == [(1,)]
    text = conn.cursor()
    text.execute(f"SELECT y FROM {t}")
    assert text.fetchall() == [(2024,)]
