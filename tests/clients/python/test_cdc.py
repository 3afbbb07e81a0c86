"""A change-data-capture client on Strata's binary log: python-mysql-replication 1.0 (the
library behind many CDC pipelines) registers as a replica, streams the row events over
COM_BINLOG_DUMP and names every value by the TABLE_MAP's optional metadata
(`--binlog-row-metadata=FULL`, started by crates/server/tests/drivers.rs).

What must hold: every committed change is seen exactly once, in commit order (not statement
order), with full before/after images decoded to the right Python values (an UNSIGNED
INT past 2^31, ENUM and SET members, DECIMAL, TEXT, DATETIME(3)); a rolled-back
transaction and a session with sql_log_bin=0 are not seen at all."""

import datetime
import decimal

import pymysql
from pymysqlreplication import BinLogStreamReader
from pymysqlreplication.event import XidEvent
from pymysqlreplication.row_event import DeleteRowsEvent, UpdateRowsEvent, WriteRowsEvent

from conftest import HOST, PORT, USER

SETTINGS = {"host": HOST, "port": PORT, "user": USER, "passwd": ""}


def connect(db):
    return pymysql.connect(host=HOST, port=PORT, user=USER, password="", database=db,
                           autocommit=True)


def stream_all(db):
    """Every row change of `db` in the log, from its first file, as (kind, row) tuples,
    with ("commit",) after each transaction's XID."""
    stream = BinLogStreamReader(
        connection_settings=SETTINGS,
        server_id=4242,
        blocking=False,
        only_events=[WriteRowsEvent, UpdateRowsEvent, DeleteRowsEvent, XidEvent],
    )
    out = []
    try:
        for ev in stream:
            if isinstance(ev, XidEvent):
                if out and out[-1] != ("commit",):
                    out.append(("commit",))
                continue
            if ev.schema != db:
                continue
            for row in ev.rows:
                if isinstance(ev, WriteRowsEvent):
                    out.append(("insert", ev.table, row["values"]))
                elif isinstance(ev, UpdateRowsEvent):
                    out.append(("update", ev.table, row["before_values"], row["after_values"]))
                else:
                    out.append(("delete", ev.table, row["values"]))
    finally:
        stream.close()
    return out


def row(id_, name, qty, kind, tags, price, note, made):
    return {"id": id_, "name": name, "qty": qty, "kind": kind, "tags": tags,
            "price": price, "note": note, "made": made}


def test_every_committed_change_once_in_commit_order(dbname):
    a, b = connect(dbname), connect(dbname)
    with a.cursor() as ca, b.cursor() as cb:
        ca.execute(
            "CREATE TABLE items (id INT PRIMARY KEY, name VARCHAR(20) NOT NULL,"
            " qty INT UNSIGNED, kind ENUM('small','large'), tags SET('red','blue'),"
            " price DECIMAL(8,2), note TEXT, made DATETIME(3))")
        made = "2026-11-29 10:11:12.345"
        ca.execute(
            "INSERT INTO items VALUES"
            " (1, 'bolt', 4000000000, 'small', 'red,blue', 12.50, 'first', %s),"
            " (2, 'nut', 7, 'large', '', -3.25, NULL, %s)", (made, made))
        ca.execute("UPDATE items SET qty = qty + 1, tags = 'blue' WHERE id = 1")
        # Rolled back: never in the log.
        ca.execute("BEGIN")
        ca.execute("INSERT INTO items (id, name) VALUES (99, 'ghost')")
        ca.execute("ROLLBACK")
        # Kept out of the log by the session.
        cb.execute("SET sql_log_bin = 0")
        cb.execute("INSERT INTO items (id, name) VALUES (98, 'unlogged')")
        cb.execute("SET sql_log_bin = 1")
        # Interleaved: a's transaction starts first but commits after b's.
        ca.execute("BEGIN")
        ca.execute("INSERT INTO items (id, name, qty) VALUES (10, 'late', 1)")
        cb.execute("INSERT INTO items (id, name, qty) VALUES (11, 'early', 2)")
        ca.execute("UPDATE items SET qty = 5 WHERE id = 10")
        ca.execute("COMMIT")
        ca.execute("DELETE FROM items WHERE id = 2")
    a.close()
    b.close()

    got = stream_all(dbname)
    when = datetime.datetime(2026, 11, 29, 10, 11, 12, 345000)
    r1 = row(1, "bolt", 4000000000, "small", {"red", "blue"}, decimal.Decimal("12.50"),
             "first", when)
    # The library gives an empty SET as None (none source EMPTY_SET), from MySQL too.
    r2 = row(2, "nut", 7, "large", None, decimal.Decimal("-3.25"), None, when)
    r1b = dict(r1, qty=4000000001, tags={"blue"})
    r10 = row(10, "late", 1, None, None, None, None, None)
    r11 = row(11, "early", 2, None, None, None, None, None)
    want = [
        ("insert", "items", r1), ("insert", "items", r2), ("commit",),
        ("update", "items", r1, r1b), ("commit",),
        ("insert", "items", r11), ("commit",),
        ("insert", "items", r10), ("update", "items", r10, dict(r10, qty=5)), ("commit",),
        ("delete", "items", r2), ("commit",),
    ]
    assert got == want, f"\n got: {got}\nwant: {want}"


def test_column_names_come_from_the_log_not_the_server(dbname):
    """With FULL metadata a renamed column keeps, for old events, the name it had when
    they were written (the library does not have to query information_schema)."""
    c = connect(dbname)
    with c.cursor() as cur:
        cur.execute("CREATE TABLE renamed (k INT PRIMARY KEY, old_name INT)")
        cur.execute("INSERT INTO renamed VALUES (1, 2)")
        cur.execute("ALTER TABLE renamed RENAME COLUMN old_name TO new_name")
        cur.execute("INSERT INTO renamed VALUES (3, 4)")
    c.close()
    got = [e for e in stream_all(dbname) if e[0] != "commit" and e[1] == "renamed"]
    assert got == [
        ("insert", "renamed", {"k": 1, "old_name": 2}),
        ("insert", "renamed", {"k": 3, "new_name": 4}),
    ], got
