"""PyMySQL (pure-Python driver, text protocol, client-side parameter interpolation) against a
running Strata server: connecting, DDL, executemany, the Python types each column type comes
back as, transactions on an InnoDB table, error numbers mapped to DB-API exceptions, and
unicode round trips. Run by crates/server/tests/drivers.rs."""

import datetime
from decimal import Decimal

import pymysql
import pymysql.cursors
import pytest
from pymysql.constants import FIELD_TYPE

from conftest import HOST, PORT, USER


def connect(db, **kw):
    kw.setdefault("charset", "utf8mb4")
    return pymysql.connect(host=HOST, port=PORT, user=USER, password="", database=db, **kw)


@pytest.fixture
def conn(dbname):
    c = connect(dbname, autocommit=True)
    yield c
    c.close()


def test_connect_and_server_info(conn):
    assert conn.get_server_info(), "empty server version"
    conn.ping(reconnect=False)
    with conn.cursor() as cur:
        cur.execute("SELECT 1 + 1, 'x', NULL")
        assert cur.fetchone() == (2, "x", None)
        cur.execute("SELECT DATABASE()")
        assert cur.fetchone()[0] == conn.db.decode()


def test_types_roundtrip(conn):
    with conn.cursor() as cur:
        cur.execute(
            "CREATE TABLE types ("
            " id INT NOT NULL AUTO_INCREMENT PRIMARY KEY,"
            " i INT, b BIGINT, d DECIMAL(12,3), s VARCHAR(40), dt DATETIME, bl BLOB, f DOUBLE)"
        )
        rows = [
            (7, 9223372036854775807, Decimal("123456789.125"), "plain",
             datetime.datetime(2024, 2, 29, 13, 45, 6), b"\x00\x01\xfe\xff", 1.5),
            (-2147483648, -9223372036854775808, Decimal("-0.001"), "it's \"quoted\" \\ back",
             datetime.datetime(1999, 12, 31, 23, 59, 59), b"", -0.25),
            (None, None, None, None, None, None, None),
        ]
        n = cur.executemany(
            "INSERT INTO types (i, b, d, s, dt, bl, f) VALUES (%s, %s, %s, %s, %s, %s, %s)", rows
        )
        assert n == 3
        assert cur.rowcount == 3
        cur.execute("SELECT i, b, d, s, dt, bl, f FROM types ORDER BY id")
        got = cur.fetchall()
        assert [tuple(r) for r in got] == rows
        # The Python types come from the column types the server reports.
        first = got[0]
        assert type(first[0]) is int and type(first[1]) is int
        assert type(first[2]) is Decimal
        assert type(first[3]) is str
        assert type(first[4]) is datetime.datetime
        assert type(first[5]) is bytes
        assert type(first[6]) is float
        codes = [d[1] for d in cur.description]
        assert codes == [
            FIELD_TYPE.LONG, FIELD_TYPE.LONGLONG, FIELD_TYPE.NEWDECIMAL, FIELD_TYPE.VAR_STRING,
            FIELD_TYPE.DATETIME, FIELD_TYPE.BLOB, FIELD_TYPE.DOUBLE,
        ], cur.description
        assert [d[0] for d in cur.description] == ["i", "b", "d", "s", "dt", "bl", "f"]

        # A parameterized WHERE with client-side escaping.
        cur.execute("SELECT id FROM types WHERE s = %s", ("it's \"quoted\" \\ back",))
        assert cur.fetchall() == ((2,),)
        cur.execute("SELECT COUNT(*) FROM types WHERE i IS NULL")
        assert cur.fetchone() == (1,)


def test_lastrowid_and_rowcount(conn):
    with conn.cursor() as cur:
        cur.execute("CREATE TABLE seq (id BIGINT AUTO_INCREMENT PRIMARY KEY, v VARCHAR(10))")
        cur.execute("INSERT INTO seq (v) VALUES (%s)", ("a",))
        assert cur.lastrowid == 1
        cur.execute("INSERT INTO seq (v) VALUES (%s)", ("b",))
        assert cur.lastrowid == 2
        assert cur.rowcount == 1
        cur.execute("UPDATE seq SET v = 'z' WHERE id >= 1")
        assert cur.rowcount == 2
        cur.execute("DELETE FROM seq WHERE id = 99")
        assert cur.rowcount == 0


def test_dict_cursor_and_fetch_variants(dbname):
    c = connect(dbname, autocommit=True, cursorclass=pymysql.cursors.DictCursor)
    try:
        with c.cursor() as cur:
            cur.execute("CREATE TABLE many (k INT PRIMARY KEY, v VARCHAR(10))")
            cur.executemany("INSERT INTO many VALUES (%s, %s)", [(k, f"v{k}") for k in range(50)])
            cur.execute("SELECT k, v FROM many ORDER BY k")
            assert cur.fetchone() == {"k": 0, "v": "v0"}
            assert [r["k"] for r in cur.fetchmany(3)] == [1, 2, 3]
            rest = cur.fetchall()
            assert len(rest) == 46 and rest[-1] == {"k": 49, "v": "v49"}
        # An unbuffered cursor streams the rows.
        with c.cursor(pymysql.cursors.SSCursor) as cur:
            cur.execute("SELECT k FROM many WHERE k < 10 ORDER BY k DESC")
            assert [r[0] for r in cur] == list(range(9, -1, -1))
    finally:
        c.close()


def test_transactions_commit_and_rollback(dbname):
    setup = connect(dbname, autocommit=True)
    with setup.cursor() as cur:
        cur.execute("CREATE TABLE acct (id INT PRIMARY KEY, bal INT NOT NULL) ENGINE=InnoDB")
        cur.execute("INSERT INTO acct VALUES (1, 100), (2, 0)")
    setup.close()

    a = connect(dbname, autocommit=False)
    b = connect(dbname, autocommit=True)
    try:
        with a.cursor() as cur:
            cur.execute("UPDATE acct SET bal = bal - 30 WHERE id = 1")
            cur.execute("UPDATE acct SET bal = bal + 30 WHERE id = 2")
            cur.execute("SELECT bal FROM acct ORDER BY id")
            assert cur.fetchall() == ((70,), (30,))
        # Another session does not see the uncommitted transfer.
        with b.cursor() as cur:
            cur.execute("SELECT bal FROM acct ORDER BY id")
            assert cur.fetchall() == ((100,), (0,))
        a.rollback()
        with a.cursor() as cur:
            cur.execute("SELECT bal FROM acct ORDER BY id")
            assert cur.fetchall() == ((100,), (0,))
            cur.execute("UPDATE acct SET bal = bal - 10 WHERE id = 1")
            cur.execute("INSERT INTO acct VALUES (3, 10)")
        a.commit()
        with b.cursor() as cur:
            cur.execute("SELECT id, bal FROM acct ORDER BY id")
            assert cur.fetchall() == ((1, 90), (2, 0), (3, 10))
        # begin() on an autocommit connection, then rollback.
        b.begin()
        with b.cursor() as cur:
            cur.execute("DELETE FROM acct")
        b.rollback()
        with b.cursor() as cur:
            cur.execute("SELECT COUNT(*) FROM acct")
            assert cur.fetchone() == (3,)
    finally:
        a.close()
        b.close()


def test_error_codes(conn):
    with conn.cursor() as cur:
        cur.execute("CREATE TABLE u (id INT PRIMARY KEY, name VARCHAR(5) NOT NULL, UNIQUE KEY (name))")
        cur.execute("INSERT INTO u VALUES (1, 'a')")
        with pytest.raises(pymysql.err.IntegrityError) as e:
            cur.execute("INSERT INTO u VALUES (1, 'b')")
        assert e.value.args[0] == 1062, e.value.args
        assert "Duplicate entry" in e.value.args[1]
        with pytest.raises(pymysql.err.IntegrityError) as e:
            cur.execute("INSERT INTO u VALUES (%s, %s)", (2, "a"))
        assert e.value.args[0] == 1062
        with pytest.raises(pymysql.err.IntegrityError) as e:
            cur.execute("INSERT INTO u VALUES (3, NULL)")
        assert e.value.args[0] == 1048, e.value.args
        with pytest.raises(pymysql.err.ProgrammingError) as e:
            cur.execute("SELEKT 1")
        assert e.value.args[0] == 1064
        with pytest.raises(pymysql.err.ProgrammingError) as e:
            cur.execute("SELECT * FROM no_such_table")
        assert e.value.args[0] == 1146
        with pytest.raises(pymysql.err.OperationalError) as e:
            cur.execute("SELECT no_such_column FROM u")
        assert e.value.args[0] == 1054
        with pytest.raises(pymysql.err.DataError) as e:
            cur.execute("INSERT INTO u VALUES (4, 'toolong')")
        assert e.value.args[0] == 1406, e.value.args
        # The connection is still usable after every error.
        cur.execute("SELECT id, name FROM u")
        assert cur.fetchall() == ((1, "a"),)


def test_unknown_database():
    with pytest.raises(pymysql.err.OperationalError) as e:
        connect("py_no_such_db")
    assert e.value.args[0] == 1049


def test_unicode(conn):
    words = ["héllo wörld", "✓ check", "日本語のテキスト", "emoji 😀🎉", "Ελληνικά", ""]
    with conn.cursor() as cur:
        cur.execute(
            "CREATE TABLE uni (id INT PRIMARY KEY, s VARCHAR(40)) DEFAULT CHARSET=utf8mb4"
        )
        cur.executemany("INSERT INTO uni VALUES (%s, %s)", list(enumerate(words)))
        cur.execute("SELECT s, CHAR_LENGTH(s), LENGTH(s) FROM uni ORDER BY id")
        got = cur.fetchall()
        assert [r[0] for r in got] == words
        assert [r[1] for r in got] == [len(w) for w in words]
        assert [r[2] for r in got] == [len(w.encode()) for w in words]
        cur.execute("SELECT id FROM uni WHERE s = %s", ("日本語のテキスト",))
        assert cur.fetchone() == (2,)
        cur.execute("SELECT %s", ("😀",))
        assert cur.fetchone() == ("😀",)


def test_multiple_statements_and_select_db(dbname):
    c = connect(dbname, autocommit=True,
                client_flag=pymysql.constants.CLIENT.MULTI_STATEMENTS)
    try:
        with c.cursor() as cur:
            cur.execute("SELECT 1; SELECT 2, 3")
            assert cur.fetchall() == ((1,),)
            assert cur.nextset()
            assert cur.fetchall() == ((2, 3),)
            assert not cur.nextset()
        c.select_db("information_schema")
        with c.cursor() as cur:
            cur.execute("SELECT DATABASE()")
            assert cur.fetchone() == ("information_schema",)
    finally:
        c.close()


def test_fractional_seconds_time_and_year(conn):
    """DATETIME(6)/TIME(6)/YEAR through PyMySQL's text protocol: a Python datetime with
    microseconds comes back equal (issue #15: the fraction was silently dropped)."""
    cur = conn.cursor()
    cur.execute(
        "CREATE TABLE fsp (id INT PRIMARY KEY, a DATETIME(6), b DATETIME(3), t TIME(6), y YEAR)"
    )
    dt = datetime.datetime(2020, 1, 1, 10, 0, 0, 123456)
    td = -datetime.timedelta(hours=26, minutes=3, seconds=4, microseconds=500000)
    cur.execute("INSERT INTO fsp VALUES (%s, %s, %s, %s, %s)", (1, dt, dt, td, 2024))
    cur.execute("SELECT a, b, t, y FROM fsp WHERE id = 1")
    a, b, t, y = cur.fetchone()
    assert a == dt
    assert b == datetime.datetime(2020, 1, 1, 10, 0, 0, 123000)
    assert t == td
    assert y == 2024
    cur.execute("SELECT a FROM fsp WHERE a = %s", (dt,))
    assert cur.fetchone() == (dt,)
