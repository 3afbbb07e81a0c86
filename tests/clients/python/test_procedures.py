"""Stored procedures through PyMySQL (text protocol, CLIENT_MULTI_RESULTS set): a CALL
whose procedure runs two SELECTs sends two result sets and then the CALL's own OK, each
marked SERVER_MORE_RESULTS_EXISTS but the last; OUT parameters come back through user
variables; the connection stays usable after a CALL that fails. Without
CLIENT_MULTI_RESULTS a procedure's result set is refused with 1312. Run by
crates/server/tests/drivers.rs (and passes against MariaDB the same way)."""

import pymysql
import pytest
from pymysql.constants import CLIENT, SERVER_STATUS

from conftest import HOST, PORT, USER


def connect(db, **kw):
    kw.setdefault("charset", "utf8mb4")
    return pymysql.connect(host=HOST, port=PORT, user=USER, password="", database=db, **kw)


@pytest.fixture
def conn(dbname):
    c = connect(dbname, autocommit=True)
    with c.cursor() as cur:
        cur.execute("DROP TABLE IF EXISTS items")
        cur.execute("CREATE TABLE items (id INT PRIMARY KEY, name VARCHAR(20))")
        cur.execute("INSERT INTO items VALUES (1, 'one'), (2, 'two'), (3, 'three')")
        cur.execute("DROP PROCEDURE IF EXISTS two_sets")
        cur.execute(
            "CREATE PROCEDURE two_sets(IN lo INT, OUT n INT)\n"
            "BEGIN\n"
            "  SELECT id, name FROM items WHERE id >= lo ORDER BY id;\n"
            "  SELECT COUNT(*) AS total FROM items;\n"
            "  SELECT COUNT(*) INTO n FROM items WHERE id >= lo;\n"
            "END"
        )
    yield c
    c.close()


def test_call_sends_each_result_set_then_ok(conn):
    with conn.cursor() as cur:
        cur.execute("CALL two_sets(2, @n)")
        assert [d[0] for d in cur.description] == ["id", "name"]
        assert cur.fetchall() == ((2, "two"), (3, "three"))
        # The result set's EOF said more results follow (PyMySQL keeps it as has_next).
        assert cur._result.has_next
        assert cur.nextset()
        assert [d[0] for d in cur.description] == ["total"]
        assert cur.fetchall() == ((3,),)
        assert cur._result.has_next
        # The CALL's own OK: no columns, and nothing after it.
        assert cur.nextset()
        assert cur.description is None
        assert not conn.server_status & SERVER_STATUS.SERVER_MORE_RESULTS_EXISTS
        assert not cur.nextset()
        cur.execute("SELECT @n")
        assert cur.fetchone() == (2,)


def test_callproc_and_errors_keep_the_connection(conn):
    with conn.cursor() as cur:
        cur.callproc("two_sets", (1, 0))
        assert cur.fetchall() == ((1, "one"), (2, "two"), (3, "three"))
        while cur.nextset():
            pass
        cur.execute("SELECT @_two_sets_1")
        assert cur.fetchone() == (3,)
        with pytest.raises(pymysql.err.OperationalError) as e:
            cur.execute("CALL nope()")
        assert e.value.args[0] == 1305
        with pytest.raises(pymysql.err.OperationalError) as e:
            cur.execute("CALL two_sets(1)")
        assert e.value.args[0] == 1318
        cur.execute("SELECT 1")
        assert cur.fetchone() == (1,)


class WithoutMultiResults(pymysql.connections.Connection):
    """PyMySQL asks for CLIENT_MULTI_RESULTS from any 5.x-or-later server; this one does
    not (it hides the version while the handshake response is built)."""

    def _request_authentication(self):
        version = self.server_version
        self.server_version = "4.1.0"
        self.client_flag &= ~(CLIENT.MULTI_RESULTS | CLIENT.MULTI_STATEMENTS | CLIENT.PS_MULTI_RESULTS)
        try:
            super()._request_authentication()
        finally:
            self.server_version = version


def test_result_set_needs_multi_results(dbname, conn):
    c = WithoutMultiResults(
        host=HOST, port=PORT, user=USER, password="", database=dbname, autocommit=True
    )
    try:
        assert not c.client_flag & CLIENT.MULTI_RESULTS
        with c.cursor() as cur:
            with pytest.raises(pymysql.err.MySQLError) as e:
                cur.execute("CALL two_sets(1, @n)")
            assert e.value.args[0] == 1312
            # A procedure without result sets is fine, and the connection goes on.
            cur.execute("DROP PROCEDURE IF EXISTS setter")
            cur.execute("CREATE PROCEDURE setter() SET @set_by_proc = 7")
            cur.execute("CALL setter()")
            cur.execute("SELECT @set_by_proc")
            assert cur.fetchone() == (7,)
    finally:
        c.close()


def test_procedure_without_result_sets_is_one_ok(conn):
    with conn.cursor() as cur:
        cur.execute("DROP PROCEDURE IF EXISTS quiet")
        cur.execute("CREATE PROCEDURE quiet(INOUT x INT) SET x = x * 10")
        cur.execute("SET @x = 4")
        cur.execute("CALL quiet(@x)")
        assert cur.description is None
        assert not cur.nextset()
        cur.execute("SELECT @x")
        assert cur.fetchone() == (40,)
