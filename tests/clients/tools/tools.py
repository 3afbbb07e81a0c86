#!/usr/bin/env python3
"""The MariaDB command-line tools against the server under test (STRATA_HOST / STRATA_PORT):

* `mariadb-dump --single-transaction --routines --triggers` of a database with several
  column types, NULLs, quotes and non-ASCII text, a foreign key and indexes, a view, a
  trigger, a stored procedure and a stored function, loaded back with the `mariadb` client
  into a fresh database on the same server and, when STRATA_PEER_PORT names one, into a
  database on a second server (MariaDB in CI); every copy is compared row for row (the view
  too), its SHOW CREATE TABLE with the original's on the same server, and the trigger,
  procedure and function are run in the copy;
* `mariadb-admin ping / refresh / flush-* / status / processlist / variables / extended-status`;
* `mariadb-show` (databases, tables, columns, --count);
* `mariadb-check` (mysqlcheck): --check and --analyze of every table.

Prints `tools: N checks passed` and exits 0, or stops at the first failed check."""

import datetime
import os
import subprocess
import sys
from decimal import Decimal

import pymysql

HOST = os.environ.get("STRATA_HOST", "127.0.0.1")
PORT = int(os.environ.get("STRATA_PORT", "3306"))
PEER = os.environ.get("STRATA_PEER_PORT")
USER = os.environ.get("STRATA_USER", "root")
checks = 0


def check(cond, what):
    global checks
    if not cond:
        print(f"FAILED: {what}", flush=True)
        sys.exit(1)
    checks += 1


def conn(port=PORT, db=None):
    return pymysql.connect(host=HOST, port=port, user=USER, password="", database=db, autocommit=True, charset="utf8mb4")


def sql(port, db, *stmts):
    c = conn(port, db)
    try:
        with c.cursor() as cur:
            for s in stmts:
                cur.execute(s)
            return cur.fetchall()
    finally:
        c.close()


def tool(name, *args, stdin=None, port=PORT):
    cmd = [name, "--no-defaults", f"--host={HOST}", f"--port={port}", "--protocol=tcp", f"--user={USER}", *args]
    # Bytes through surrogateescape: the dump holds raw binary column values.
    r = subprocess.run(
        cmd, input=stdin.encode("utf-8", "surrogateescape") if stdin is not None else None,
        capture_output=True, timeout=120,
    )
    out = r.stdout.decode("utf-8", "surrogateescape")
    err = r.stderr.decode("utf-8", "replace")
    print(f"$ {' '.join(cmd)} -> {r.returncode}\n{out[:3000].encode('utf-8', 'replace').decode()}{err}", flush=True)
    check(r.returncode == 0, f"{name} {' '.join(args)} exited {r.returncode}: {err}")
    return out


SRC = "tools_src"
TABLES = ["parent", "child", "kinds", "audit"]
sql(
    PORT, None,
    f"DROP DATABASE IF EXISTS {SRC}", f"DROP DATABASE IF EXISTS {SRC}_copy",
    f"CREATE DATABASE {SRC} CHARACTER SET utf8mb4",
)
sql(
    PORT, SRC,
    "CREATE TABLE parent (id INT AUTO_INCREMENT PRIMARY KEY, name VARCHAR(40) NOT NULL, UNIQUE KEY uk_name (name))",
    "CREATE TABLE child (id BIGINT AUTO_INCREMENT PRIMARY KEY, parent_id INT NOT NULL, qty INT DEFAULT 3, "
    "KEY ix_parent_qty (parent_id, qty), CONSTRAINT fk_child_parent FOREIGN KEY (parent_id) REFERENCES parent (id) ON DELETE CASCADE)",
    "CREATE TABLE kinds (id INT PRIMARY KEY, i BIGINT, u INT UNSIGNED, d DECIMAL(12,4), f DOUBLE, s VARCHAR(100), "
    "t TEXT, b VARBINARY(20), bl BLOB, dt DATETIME(6), da DATE, tm TIME, j JSON, n INT NULL)",
    "INSERT INTO parent (name) VALUES ('alpha'), ('beta'), ('it''s \"quoted\"'), ('ünï✓')",
    "INSERT INTO child (parent_id, qty) VALUES (1, 1), (1, 2), (2, NULL), (4, 7)",
    "INSERT INTO child (parent_id) VALUES (3)",
    "INSERT INTO kinds VALUES "
    "(1, -9223372036854775808, 4294967295, -12345678.1234, 1.5e-300, 'back\\\\slash', 'line1\\nline2\\ttab', x'00FF0A0D27', x'DEADBEEF', "
    "'2024-02-29 23:59:59.999999', '1000-01-01', '-838:59:59', '{\"a\": [1, 2.5, null, \"x\"]}', NULL), "
    "(2, 9223372036854775807, 0, 0.0001, -0.0, '', '', x'', x'', '1970-01-01 00:00:01.000001', '9999-12-31', '00:00:00', '[]', 42), "
    "(3, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL)",
    "CREATE TABLE audit (id INT AUTO_INCREMENT PRIMARY KEY, what VARCHAR(60))",
    # Created after the rows, so the dump's own INSERTs are what fill the tables.
    "CREATE VIEW v_child AS SELECT c.id, p.name, c.qty FROM child c JOIN parent p ON p.id = c.parent_id",
    "CREATE TRIGGER trg_parent_ai AFTER INSERT ON parent FOR EACH ROW "
    "INSERT INTO audit (what) VALUES (CONCAT('parent ', NEW.name))",
    "CREATE PROCEDURE p_count(OUT n INT) BEGIN SELECT COUNT(*) INTO n FROM child; END",
    "CREATE FUNCTION f_twice(x INT) RETURNS INT DETERMINISTIC RETURN x * 2",
)


def rows(port, db, table):
    return sql(port, db, f"SELECT * FROM {table} ORDER BY 1")


source = {t: rows(PORT, SRC, t) for t in TABLES}
check(len(source["kinds"]) == 3 and len(source["child"]) == 5, "source tables loaded")
check(source["kinds"][0][9] == datetime.datetime(2024, 2, 29, 23, 59, 59, 999999), "DATETIME(6) stored")
check(source["kinds"][0][3] == Decimal("-12345678.1234"), "DECIMAL stored")

# --- mariadb-dump --single-transaction, loaded back -------------------------------------------
view_rows = sql(PORT, SRC, "SELECT * FROM v_child ORDER BY id")
check(len(view_rows) == 5, "the view reads the source rows")
dump = tool("mariadb-dump", "--single-transaction", "--routines", "--triggers", "--skip-dump-date", SRC)
check("CREATE TABLE `kinds`" in dump and "INSERT INTO `kinds`" in dump, "dump has the schema and the rows")
check("VIEW `v_child`" in dump, "dump has the view")
check("TRIGGER" in dump and "trg_parent_ai" in dump, "dump has the trigger")
check("PROCEDURE `p_count`" in dump and "FUNCTION `f_twice`" in dump, "dump has the routines")
check("CONSTRAINT `fk_child_parent` FOREIGN KEY (`parent_id`) REFERENCES `parent` (`id`)" in dump, "dump has the foreign key")
check("-- Dump completed" in dump, "dump finished")

targets = [("same server", PORT)]
if PEER:
    targets.append(("peer server", int(PEER)))
else:
    print("NOTE: STRATA_PEER_PORT not set: the dump is loaded back on the same server only", flush=True)
if PEER:
    # Views, triggers and routines run as their DEFINER; the dump names the source's
    # account (`root`@`localhost` from Strata), which must exist where the dump is loaded.
    definer = sql(PORT, SRC, "SELECT DEFINER FROM information_schema.VIEWS WHERE TABLE_NAME = 'v_child'")[0][0]
    user, host = definer.rsplit("@", 1)
    try:
        sql(int(PEER), None, f"CREATE USER IF NOT EXISTS '{user}'@'{host}'", f"GRANT ALL ON *.* TO '{user}'@'{host}'")
    except pymysql.err.OperationalError as e:
        # 1290: a peer started with --skip-grant-tables has no accounts and checks no definer.
        check(e.args[0] == 1290, f"creating the definer account on the peer: {e}")
for label, port in targets:
    copy = f"{SRC}_copy"
    sql(port, None, f"DROP DATABASE IF EXISTS {copy}", f"CREATE DATABASE {copy} CHARACTER SET utf8mb4")
    tool("mariadb", copy, stdin=dump, port=port)
    for t in TABLES:
        got = rows(port, copy, t)
        check(got == source[t], f"{label}: {t} differs after the round trip:\n{source[t]}\n{got}")
    check(sql(port, copy, "SELECT * FROM v_child ORDER BY id") == view_rows, f"{label}: the view reads the same rows")
    check(sql(port, copy, "SELECT f_twice(21)") == ((42,),), f"{label}: the function runs")
    check(sql(port, copy, "CALL p_count(@n)", "SELECT @n") == ((5,),), f"{label}: the procedure runs")
    if port == PORT:
        for t in TABLES:
            a = sql(PORT, SRC, f"SHOW CREATE TABLE {t}")[0][1]
            b = sql(PORT, copy, f"SHOW CREATE TABLE {t}")[0][1]
            check(a == b, f"SHOW CREATE TABLE {t} differs:\n{a}\n{b}")
    # The AUTO_INCREMENT counter came along: the next row gets the next id.
    sql(port, copy, "INSERT INTO parent (name) VALUES ('next')")
    check(sql(port, copy, "SELECT MAX(id) FROM parent") == ((5,),), f"{label}: AUTO_INCREMENT continues")
    check(sql(port, copy, "SELECT what FROM audit") == (("parent next",),), f"{label}: the trigger fires")
    # The foreign key came along and is enforced.
    try:
        sql(port, copy, "INSERT INTO child (parent_id) VALUES (99)")
        check(False, f"{label}: the foreign key is not enforced in the copy")
    except pymysql.err.IntegrityError as e:
        check(e.args[0] == 1452, f"{label}: FK error {e}")
    sql(port, None, f"DROP DATABASE {copy}")

# --- mariadb-admin ------------------------------------------------------------------------------
check("mysqld is alive" in tool("mariadb-admin", "ping"), "mariadb-admin ping")
tool("mariadb-admin", "refresh")  # COM_REFRESH; exits non-zero on an error
tool("mariadb-admin", "flush-tables", "flush-logs", "flush-status")
status = tool("mariadb-admin", "status")
check(all(w in status for w in ("Uptime:", "Threads:", "Questions:", "Open tables:")), "mariadb-admin status")
plist = tool("mariadb-admin", "processlist")
check("| Id" in plist and "| User" in plist and "| Command" in plist and "processlist" in plist.lower(), "mariadb-admin processlist shows itself")
variables = tool("mariadb-admin", "variables")
version = sql(PORT, None, "SELECT @@version")[0][0]
check(any(l.startswith("| version ") and version in l for l in variables.splitlines()), "mariadb-admin variables shows version")
check("| autocommit " in variables and "| max_allowed_packet " in variables, "mariadb-admin variables: autocommit, max_allowed_packet")
ext = tool("mariadb-admin", "extended-status")
check(all(f"| {v} " in ext for v in ("Uptime", "Threads_connected", "Questions")), "mariadb-admin extended-status")

# --- mariadb-show -------------------------------------------------------------------------------
dbs = tool("mariadb-show")
check(f"| {SRC} " in dbs and "| information_schema " in dbs, "mariadb-show lists databases")
tables = tool("mariadb-show", SRC)
check(all(f"| {t} " in tables for t in TABLES), "mariadb-show lists tables")
cols = tool("mariadb-show", SRC, "child")
check(all(f"| {c} " in cols for c in ("id", "parent_id", "qty")), "mariadb-show lists columns")
counted = tool("mariadb-show", "--count", SRC)
line = [l for l in counted.splitlines() if l.startswith("| child ")]
check(line and line[0].split("|")[3].strip() == "5", f"mariadb-show --count: {line}")
keys = tool("mariadb-show", "--keys", SRC, "child")
check("ix_parent_qty" in keys and "PRIMARY" in keys, "mariadb-show --keys")

# --- mariadb-check (mysqlcheck) -----------------------------------------------------------------
out = tool("mariadb-check", "--check", SRC)
for t in TABLES:
    check(any(l.startswith(f"{SRC}.{t} ") and l.rstrip().endswith("OK") for l in out.splitlines()), f"mariadb-check --check {t}")
out = tool("mariadb-check", "--analyze", SRC)
for t in TABLES:
    check(any(l.startswith(f"{SRC}.{t}") for l in out.splitlines()), f"mariadb-check --analyze {t}")
check("error" not in out.lower(), f"mariadb-check --analyze reported an error")

sql(PORT, None, f"DROP DATABASE {SRC}")
print(f"tools: {checks} checks passed")
