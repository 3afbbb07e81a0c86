#!/usr/bin/env python3
"""Random differential testing of Strata against a MySQL-family reference server.

Generates random queries (and, in the `dml` mode, data changes) over two small tables
with NULLs and seven column types, runs each on Strata and on the reference (MariaDB
10.11 on this project's machines, run with MySQL 8's default sql_mode), and reports every
statement whose results differ: rows compared as multisets (as sorted lists when the
query orders every output column), numbers compared by value, strings case-insensitively
with trailing spaces removed (the two servers' default collations differ in case and pad
rules the queries do not test). A statement that fails on one server only is a
difference too, except Strata's 1235 "not supported yet", which is counted separately.

Usage:
    random_queries.py --strata PORT [--reference PORT] [--seed N] [--count N]
                      [--engine innodb|myisam] [--mode select|extra|dml|funcs] [--verbose]
                      [--exact] [--prepared] [--wide-columns]

`select` mode: joins, LEFT JOINs, IN/EXISTS/scalar subqueries, GROUP BY with aggregates,
DISTINCT, CASE/IF/COALESCE and the common functions. `extra` adds UNION, derived tables
and window functions. `funcs` is `extra` with about seventy more string, number, date and
bit functions, GROUP_CONCAT, STD/VARIANCE/BIT_* aggregates and ORDER BY … LIMIT under a
total order. `dml` runs UPDATE, multi-table UPDATE, DELETE, INSERT … SELECT,
REPLACE and INSERT … ON DUPLICATE KEY UPDATE and compares both tables after each one.
`--wide-columns` adds a BIGINT UNSIGNED (now and then past 2^63), a TINYINT, a CHAR(4) and
a DATETIME(3) column to both tables in any mode. The exit status is 1 when any difference was found. Everything is reproducible from the
seed. Needs PyMySQL (tests/clients/python/requirements.txt).
"""

import argparse
import decimal
import random
import sys

import pymysql

# MySQL 8.0's default sql_mode, so that the reference behaves as MySQL 8 where MariaDB's
# own default differs (MariaDB 10.11 has no ONLY_FULL_GROUP_BY or NO_ZERO_DATE by default).
MYSQL8_SQL_MODE = ("ONLY_FULL_GROUP_BY,STRICT_TRANS_TABLES,NO_ZERO_IN_DATE,NO_ZERO_DATE,"
                   "ERROR_FOR_DIVISION_BY_ZERO,NO_ENGINE_SUBSTITUTION")
DATABASE = "rqg"

# (name, SQL type, generator of a literal or None for NULL)
COLUMNS = [
    ("a", "INT", "int"),
    ("b", "INT NOT NULL", "int_nn"),
    ("c", "VARCHAR(12)", "str"),
    ("d", "DECIMAL(8,2)", "dec"),
    ("f", "DOUBLE", "dbl"),
    ("dt", "DATE", "date"),
    ("u", "INT UNSIGNED", "uint"),
]
# `--wide-columns`: four more column types, in every mode.
WIDE_COLUMNS = [
    ("bu", "BIGINT UNSIGNED", "ubig"),
    ("ti", "TINYINT", "tiny"),
    ("ch", "CHAR(4)", "chr"),
    ("dtm", "DATETIME(3)", "datetime"),
]
WORDS = ["a", "b", "abc", "B", "xyz", "10", "2", "-3", "0", "1.5", "2020-01-02", "zz", "", " a"]
DATES = ["2019-12-31", "2020-01-01", "2020-02-29", "2021-06-15", "1999-01-01", "2020-01-02"]
SHORT_WORDS = ["a", "b", "abc", "B", "10", "2", "-3", "0", "1.5", "", " a", "Ab "]
DATETIMES = ["2019-12-31 23:59:59.999", "2020-01-01 00:00:00.000", "2020-02-29 12:30:00.500",
             "2021-06-15 08:05:03.000", "2020-01-02 00:00:00.001", "1999-01-01 13:14:15.160"]


class Gen:
    """The random source and the statement generators; one per run, seeded."""

    def __init__(self, seed, wide=False):
        self.r = random.Random(seed)
        # `--mode funcs`: many more functions in expressions, GROUP_CONCAT, ORDER BY … LIMIT.
        self.wide = wide

    def pick(self, xs):
        return self.r.choice(xs)

    def chance(self, p):
        return self.r.random() < p

    # --- data -----------------------------------------------------------------------------
    def literal(self, kind, nullable=True):
        if nullable and kind != "int_nn" and self.chance(0.15):
            return "NULL"
        if kind in ("int", "int_nn"):
            return str(self.r.randint(-5, 12))
        if kind == "uint":
            return str(self.r.randint(0, 12))
        if kind == "ubig":
            # Now and then past BIGINT's signed range.
            if self.chance(0.15):
                return str(18446744073709551610 + self.r.randint(0, 5))
            return str(self.r.randint(0, 12))
        if kind == "tiny":
            return str(self.r.randint(-5, 12))
        if kind == "chr":
            return "'" + self.pick(SHORT_WORDS) + "'"
        if kind == "datetime":
            return "'" + self.pick(DATETIMES) + "'"
        if kind == "str":
            return "'" + self.pick(WORDS) + "'"
        if kind == "dec":
            return "%d.%02d" % (self.r.randint(-20, 40), self.r.randint(0, 99))
        if kind == "dbl":
            return repr(self.r.choice([0.5, 1.25, -2.5, 3.0, 1e3, 0.1, 7.75, -0.5]))
        if kind == "date":
            return "'" + self.pick(DATES) + "'"
        raise ValueError(kind)

    def rows(self, n, first_id=1):
        out = []
        for i in range(first_id, first_id + n):
            vals = [str(i)] + [self.literal(k) for _, _, k in COLUMNS]
            out.append("(" + ",".join(vals) + ")")
        return out

    # --- expressions ----------------------------------------------------------------------
    # Expressions are typed (num, str, date) so that most comparisons and branches mix
    # only values of one kind: where MySQL 8 and MariaDB convert differently (a DATE
    # against a number, a number against a non-numeric string) a difference says nothing
    # about Strata. A few numeric strings still meet numbers, as applications send them.
    def column(self, tables, ty=None):
        t = self.pick(tables)
        cols = [(n, k) for n, _, k in COLUMNS + [("id", "INT", "int_nn")]
                if ty is None or kind_type(k) == ty]
        name, kind = self.pick(cols)
        return f"{t}.{name}", kind

    def scalar(self, tables, depth=0, ty=None):
        """An expression of type `ty` (any when None) over `tables`; depth bounds nesting."""
        ty = ty or self.pick(["num", "num", "str", "date"])
        if depth > 2 or self.chance(0.35):
            if self.chance(0.8):
                return self.column(tables, ty)[0]
            if ty == "num":
                return self.literal(self.pick(["int", "dec", "dbl"]), False)
            if ty == "str":
                return self.literal("str", False)
            return self.literal("date", False)
        x = lambda t=ty: self.scalar(tables, depth + 1, t)  # noqa: E731
        p = lambda: self.predicate(tables, depth + 1)  # noqa: E731
        # Branches of one type, now and then a number with a numeric string.
        other = lambda: (f"'{self.r.randint(-3, 12)}'" if ty == "num" and self.chance(0.15)  # noqa: E731
                         else x())
        generic = [
            lambda: f"COALESCE({x()}, {other()})",
            lambda: f"IF({p()}, {x()}, {other()})",
            lambda: f"CASE WHEN {p()} THEN {x()} ELSE {other()} END",
            lambda: f"IFNULL({x()}, {other()})",
            lambda: f"{self.pick(['GREATEST', 'LEAST'])}({x()}, {x()})",
            lambda: f"NULLIF({x()}, {x()})",
        ]
        if ty == "num":
            forms = generic + [
                lambda: f"({x()} {self.pick(['+', '-', '*'])} {x()})",
                lambda: f"({x()} + {x()})",
                lambda: f"({x()} / {self.pick(['2', '3', '0.5', x()])})",
                lambda: f"{self.pick(['ABS', 'FLOOR', 'CEIL', 'SIGN'])}({x()})",
                lambda: f"ROUND({x()}, {self.r.randint(0, 2)})",
                lambda: f"TRUNCATE({x()}, {self.r.randint(0, 1)})",
                lambda: f"MOD({x()}, {self.pick(['3', '2', x()])})",
                lambda: f"{x()} DIV {self.pick(['2', '3', x()])}",
                lambda: f"-{x()}",
                lambda: f"{self.pick(['LENGTH', 'CHAR_LENGTH'])}({x('str')})",
                lambda: f"{self.pick(['YEAR', 'MONTH', 'DAYOFWEEK', 'DAYOFMONTH'])}({x('date')})",
                lambda: f"DATEDIFF({x('date')}, {x('date')})",
                lambda: f"CAST({x()} AS {self.pick(['SIGNED', 'DECIMAL(10,2)', 'DOUBLE'])})",
                lambda: f"({p()})",
            ]
            if self.wide:
                forms += [
                    lambda: f"{self.pick(['LOCATE', 'INSTR', 'STRCMP'])}({x('str')}, {x('str')})",
                    lambda: f"FIELD({x('str')}, 'a', 'abc', '10', '')",
                    lambda: f"FIND_IN_SET({x('str')}, 'a,b,abc,10')",
                    lambda: f"{self.pick(['ASCII', 'ORD', 'BIT_LENGTH', 'OCTET_LENGTH'])}({x('str')})",
                    lambda: f"{self.pick(['SQRT', 'EXP', 'LN', 'LOG10', 'LOG2', 'SIN', 'ATAN', 'DEGREES', 'RADIANS'])}({x()})",
                    lambda: f"POW({x()}, {self.r.randint(0, 3)})",
                    lambda: f"{self.pick(['QUARTER', 'WEEK', 'WEEKDAY', 'DAYOFYEAR', 'TO_DAYS', 'YEARWEEK'])}({x('date')})",
                    lambda: f"WEEK({x('date')}, {self.r.randint(0, 7)})",
                    lambda: f"EXTRACT({self.pick(['YEAR', 'MONTH', 'DAY', 'YEAR_MONTH', 'QUARTER', 'WEEK'])} FROM {x('date')})",
                    lambda: f"TIMESTAMPDIFF({self.pick(['DAY', 'MONTH', 'YEAR', 'WEEK', 'QUARTER', 'HOUR'])}, {x('date')}, {x('date')})",
                    lambda: f"UNIX_TIMESTAMP({x('date')})",
                    lambda: f"{x()} {self.pick(['&', '|', '^', '<<', '>>'])} {self.r.randint(0, 3)}",
                    lambda: f"BIT_COUNT({x()})",
                    lambda: f"CONV({x()}, 10, {self.pick(['2', '16'])}) + 0",
                    lambda: f"CRC32({x('str')})",
                    lambda: f"INTERVAL({x()}, 0, 3, 7)",
                    lambda: f"{x()} {self.pick(['IS TRUE', 'IS FALSE', 'IS NOT TRUE'])}",
                    lambda: f"CAST({x()} AS {self.pick(['UNSIGNED', 'DECIMAL(6,1)', 'FLOAT'])})",
                    lambda: f"ROUND({x()}, -{self.r.randint(0, 1)})",
                    lambda: f"FORMAT({x()}, {self.r.randint(0, 2)}) = FORMAT({x()}, 1)",
                ]
        elif ty == "str":
            forms = generic + [
                lambda: f"CONCAT({x()}, {x(self.pick(['str', 'num']))})",
                lambda: f"{self.pick(['UPPER', 'LOWER', 'TRIM', 'REVERSE'])}({x()})",
                lambda: f"SUBSTRING({x()}, {self.r.randint(1, 3)}, {self.r.randint(1, 4)})",
                lambda: f"CAST({x('num')} AS CHAR)",
                lambda: f"REPLACE({x()}, '{self.pick(['a', 'b', '1'])}', '{self.pick(['', 'x'])}')",
                lambda: f"LPAD({x()}, {self.r.randint(0, 5)}, '*')",
            ]
            if self.wide:
                forms += [
                    lambda: f"{self.pick(['LEFT', 'RIGHT'])}({x()}, {self.r.randint(0, 4)})",
                    lambda: f"SUBSTRING_INDEX({x()}, '{self.pick(['a', ',', '1', '-'])}', {self.r.randint(-2, 2)})",
                    lambda: f"CONCAT_WS('{self.pick([',', '-', ''])}', {x()}, {x()}, {x(self.pick(['num', 'date']))})",
                    lambda: f"RPAD({x()}, {self.r.randint(0, 6)}, '{self.pick(['-', 'ab'])}')",
                    lambda: f"REPEAT({x()}, {self.r.randint(0, 3)})",
                    lambda: f"{self.pick(['LTRIM', 'RTRIM', 'HEX', 'QUOTE', 'SOUNDEX'])}({x()})",
                    lambda: f"INSERT({x()}, {self.r.randint(0, 3)}, {self.r.randint(0, 2)}, 'Q')",
                    lambda: f"ELT({self.r.randint(0, 3)}, {x()}, {x()})",
                    lambda: f"MID({x()}, {self.r.randint(-3, 3)})",
                    lambda: f"TRIM({self.pick(['LEADING', 'TRAILING', 'BOTH'])} '{self.pick(['a', ' ', 'x'])}' FROM {x()})",
                    lambda: f"DATE_FORMAT({x('date')}, '{self.pick(['%Y-%m', '%d/%m/%y', '%W %M %e', '%j %U %u', '%a %b %D', '%x-%v'])}')",
                    lambda: f"{self.pick(['DAYNAME', 'MONTHNAME'])}({x('date')})",
                    lambda: f"CAST({x('date')} AS CHAR)",
                    lambda: f"FORMAT({x('num')}, {self.r.randint(0, 3)})",
                    lambda: f"{self.pick(['BIN', 'OCT'])}({x('num')})",
                    lambda: f"CHAR_LENGTH({x()}) || ''",
                    lambda: f"REGEXP_REPLACE({x()}, '{self.pick(['[ab]', '^a', '[0-9]+'])}', '#')",
                    lambda: f"IF({x()} REGEXP '{self.pick(['^a', 'b$', '[0-9]', '^$'])}', 'y', 'n')",
                ]
        else:
            forms = generic + [
                lambda: f"DATE_ADD({x()}, INTERVAL {self.r.randint(-40, 40)} DAY)",
                lambda: f"DATE_SUB({x()}, INTERVAL {self.r.randint(1, 3)} MONTH)",
                lambda: f"LAST_DAY({x()})",
            ]
            if self.wide:
                forms += [
                    lambda: f"ADDDATE({x()}, {self.r.randint(-400, 400)})",
                    lambda: f"DATE_ADD({x()}, INTERVAL {self.r.randint(-30, 30)} {self.pick(['WEEK', 'QUARTER', 'YEAR'])})",
                    lambda: f"FROM_DAYS(TO_DAYS({x()}) + {self.r.randint(-3, 3)})",
                    lambda: f"MAKEDATE({self.pick(['2020', '2019', '1999'])}, {self.r.randint(1, 366)})",
                    lambda: f"STR_TO_DATE(DATE_FORMAT({x()}, '%d.%m.%Y'), '%d.%m.%Y')",
                    lambda: f"DATE(DATE_ADD({x()}, INTERVAL {self.r.randint(-48, 48)} HOUR))",
                    lambda: f"SUBDATE({x()}, INTERVAL {self.r.randint(-5, 5)} MONTH)",
                ]
        return self.pick(forms)()

    def predicate(self, tables, depth=0, outer=None):
        ty = self.pick(["num", "num", "str", "date"])
        x = lambda t=ty: self.scalar(tables, depth + 1, t)  # noqa: E731
        choice = self.r.randint(0, 13)
        if depth < 2 and choice <= 1:
            op = self.pick(["AND", "OR"])
            return (f"({self.predicate(tables, depth + 1, outer)} {op} "
                    f"{self.predicate(tables, depth + 1, outer)})")
        if choice == 2:
            return f"NOT ({self.predicate(tables, depth + 1, outer)})"
        if choice == 3:
            return f"{x()} IS {self.pick(['', 'NOT '])}NULL"
        if choice == 4:
            kind = {"num": self.pick(["int", "dec"]), "str": "str", "date": "date"}[ty]
            vals = ", ".join(self.literal(kind, False) for _ in range(self.r.randint(1, 4)))
            return f"{x()} {self.pick(['', 'NOT '])}IN ({vals})"
        if choice == 5:
            if ty == "date":
                lo, hi = sorted([self.pick(DATES), self.pick(DATES)])
                return f"{x()} BETWEEN '{lo}' AND '{hi}'"
            lo, hi = sorted([self.r.randint(-5, 12), self.r.randint(-5, 12)])
            return f"{x('num')} BETWEEN {lo} AND {hi}"
        if choice == 6:
            return f"{self.column(tables, 'str')[0]} LIKE '{self.pick(['a%', '%b%', '_', '1%', '%'])}'"
        if choice in (7, 8) and depth < 2:
            return self.subquery_predicate(tables, outer)
        op = self.pick(["=", "<>", "<", "<=", ">", ">=", "<=>"])
        if ty == "num" and self.chance(0.1):
            # A number against a numeric string literal.
            return f"{x()} {op} '{self.r.randint(-3, 12)}'"
        return f"{x()} {op} {x()}"

    def subquery_predicate(self, tables, outer):
        inner = self.pick(["t1", "t2"])
        alias = "s" + str(self.r.randint(0, 999))
        ty = self.pick(["num", "num", "str", "date"])
        corr = ""
        if self.chance(0.5):
            ot = self.pick(tables)
            cty = self.pick(["num", "str"])
            oc, _ = self.column([ot], cty)
            ic, _ = self.column([alias], cty)
            corr = f" AND {ic} {self.pick(['=', '<', '>'])} {oc}"
        col, _ = self.column([alias], ty)
        where = f"{self.predicate([alias], 2)}{corr}"
        lhs = self.scalar(tables, 2, ty)
        kind = self.r.randint(0, 3)
        if kind == 0:
            return f"{lhs} {self.pick(['', 'NOT '])}IN (SELECT {col} FROM {inner} {alias} WHERE {where})"
        if kind == 1:
            return f"{self.pick(['', 'NOT '])}EXISTS (SELECT 1 FROM {inner} {alias} WHERE {where})"
        if kind == 2:
            agg = self.pick(["MAX", "MIN", "COUNT", "SUM"])
            if agg in ("COUNT", "SUM"):
                lhs = self.scalar(tables, 2, "num")
                if agg == "SUM":
                    col, _ = self.column([alias], "num")
            return (f"{lhs} {self.pick(['=', '<', '>', '>='])} "
                    f"(SELECT {agg}({col}) FROM {inner} {alias} WHERE {where})")
        return (f"{lhs} {self.pick(['>', '<', '='])} {self.pick(['ANY', 'ALL'])} "
                f"(SELECT {col} FROM {inner} {alias} WHERE {where})")

    # --- statements -----------------------------------------------------------------------
    def from_clause(self):
        k = self.r.randint(0, 4)
        if k == 0:
            return "t1", ["t1"]
        if k == 1:
            return "t2", ["t2"]
        if k == 2:
            return f"t1 JOIN t2 ON {self.predicate(['t1', 't2'], 1)}", ["t1", "t2"]
        if k == 3:
            return (f"t1 LEFT JOIN t2 ON t1.{self.pick(['a', 'b', 'id'])} = t2.{self.pick(['a', 'b', 'id'])}",
                    ["t1", "t2"])
        return "t1, t2", ["t1", "t2"]

    def select(self, extra):
        frm, tables = self.from_clause()
        where = f" WHERE {self.predicate(tables, 0, tables)}" if self.chance(0.8) else ""
        if frm == "t1, t2" and not where:
            where = f" WHERE t1.a = t2.b"
        style = self.r.randint(0, 3)
        if style == 0:
            # GROUP BY: only grouping expressions and aggregates in the select list.
            keys = [self.scalar(tables, 1) for _ in range(self.r.randint(1, 2))]
            aggs = []
            for _ in range(self.r.randint(1, 3)):
                fn = self.pick(["COUNT", "SUM", "MIN", "MAX", "AVG", "COUNT(DISTINCT"])
                arg = self.scalar(tables, 2, "num" if fn in ("SUM", "AVG") else None)
                aggs.append(f"COUNT(DISTINCT {arg})" if fn == "COUNT(DISTINCT" else f"{fn}({arg})")
            if self.chance(0.2):
                aggs.append("COUNT(*)")
            if self.wide and self.chance(0.4):
                arg = self.scalar(tables, 2)
                order = ", ".join(f"{t}.id" for t in tables)
                aggs.append(f"GROUP_CONCAT({self.pick(['', 'DISTINCT '])}{arg} ORDER BY {arg}, {order}"
                            f"{self.pick(['', ' SEPARATOR ' + repr('|')])})")
                if "DISTINCT" in aggs[-1]:
                    aggs[-1] = f"GROUP_CONCAT(DISTINCT {arg} ORDER BY {arg})"
            if self.wide and self.chance(0.2):
                aggs.append(f"{self.pick(['STD', 'VARIANCE', 'BIT_OR', 'BIT_AND', 'BIT_XOR'])}"
                            f"({self.scalar(tables, 2, 'num')})")
            names = [f"k{i}" for i in range(len(keys))]
            sel = ", ".join([f"{k} AS {n}" for k, n in zip(keys, names)] + aggs)
            having = f" HAVING COUNT(*) > {self.r.randint(0, 2)}" if self.chance(0.3) else ""
            return f"SELECT {sel} FROM {frm}{where} GROUP BY {', '.join(names)}{having}"
        if style == 1 and not extra:
            # Aggregates without GROUP BY.
            aggs = []
            for _ in range(self.r.randint(1, 3)):
                fn = self.pick(["COUNT", "SUM", "MIN", "MAX", "AVG"])
                aggs.append(f"{fn}({self.scalar(tables, 1, 'num' if fn in ('SUM', 'AVG') else None)})")
            return f"SELECT {', '.join(aggs)} FROM {frm}{where}"
        types = [self.pick(["num", "num", "str", "date"]) for _ in range(self.r.randint(1, 4))]
        cols = [self.scalar(tables, 0, t) for t in types]
        if self.chance(0.3):
            sub = self.pick(["t1", "t2"])
            agg, col = self.pick(["MAX", "MIN", "COUNT"]), self.pick(["a", "c", "d", "dt"])
            cols.append(f"(SELECT {agg}(z.{col}) "
                        f"FROM {sub} z WHERE z.b = {tables[0]}.{self.pick(['a', 'b', 'id'])})")
            types.append("num" if agg == "COUNT" else {"c": "str", "dt": "date"}.get(col, "num"))
        distinct = "DISTINCT " if self.chance(0.25) else ""
        sel = ", ".join(f"{c} AS x{i}" for i, c in enumerate(cols))
        if extra and self.chance(0.5):
            part = self.column(tables)[0]
            order = self.column(tables)[0]
            fn = self.pick(["ROW_NUMBER()", "RANK()", "DENSE_RANK()", f"SUM({self.column(tables, 'num')[0]})",
                            f"COUNT({self.column(tables)[0]})", f"MAX({self.column(tables)[0]})",
                            f"LAG({self.column(tables)[0]})", f"FIRST_VALUE({self.column(tables)[0]})"])
            if fn in ("ROW_NUMBER()",) or fn.startswith(("LAG", "FIRST_VALUE")):
                # Deterministic only under a total order.
                order = f"{order}, " + ", ".join(f"{t}.id" for t in tables)
            frame = ""
            if fn.startswith(("SUM", "COUNT", "MAX")) and self.chance(0.4):
                frame = " ROWS BETWEEN 1 PRECEDING AND CURRENT ROW"
                order = f"{order}, " + ", ".join(f"{t}.id" for t in tables)
            return f"SELECT {sel}, {fn} OVER (PARTITION BY {part} ORDER BY {order}{frame}) AS w FROM {frm}{where}"
        q = f"SELECT {distinct}{sel} FROM {frm}{where}"
        if self.wide and not distinct and self.chance(0.4):
            # ORDER BY … LIMIT under a total order (the ids last), so both must agree.
            keys = [self.scalar(tables, 1) for _ in range(self.r.randint(1, 2))]
            dirs = [self.pick(["", " DESC"]) for _ in keys]
            order = ", ".join(f"{k}{d}" for k, d in zip(keys, dirs))
            ids = ", ".join(f"{t}.id" for t in tables)
            q += f" ORDER BY {order}, {ids} LIMIT {self.r.randint(1, 12)}"
            if self.chance(0.3):
                q += f" OFFSET {self.r.randint(0, 5)}"
        if extra and self.chance(0.4):
            frm2, tables2 = self.from_clause()
            cols2 = [self.scalar(tables2, 0, t) for t in types]
            q2 = f"SELECT {', '.join(cols2)} FROM {frm2} WHERE {self.predicate(tables2, 1)}"
            q = f"{q} {self.pick(['UNION', 'UNION ALL'])} {q2}"
        elif extra and self.chance(0.3):
            q = f"SELECT * FROM ({q}) AS dt WHERE dt.x0 IS NOT NULL"
        return q

    # --- `shapes` mode: query structures the other modes do not build ----------------------
    def ids(self, tables):
        return ", ".join(f"{t}.id" for t in tables)

    def shape(self):
        """A query of one of a dozen structures: joins of three tables, RIGHT JOIN, USING,
        CTEs (recursive ones too), row-constructor IN, subqueries in HAVING and the select
        list, window functions with frames and ranking, INTERSECT/EXCEPT, ORDER BY … LIMIT
        inside a derived table; every ordering that picks rows is total (ids last)."""
        k = self.r.randint(0, 11)
        if k == 0:
            on2 = f"t1.{self.pick(['a', 'b', 'id'])} = t2.{self.pick(['a', 'b', 'id'])}"
            on3 = f"t3.{self.pick(['a', 'b', 'id'])} = t2.{self.pick(['a', 'b', 'id'])}"
            j2, j3 = self.pick(["JOIN", "LEFT JOIN"]), self.pick(["JOIN", "LEFT JOIN", "RIGHT JOIN"])
            tables = ["t1", "t2", "t3"]
            cols = ", ".join(f"{self.scalar(tables, 1)} AS x{i}" for i in range(self.r.randint(1, 3)))
            where = f" WHERE {self.predicate(tables, 1)}" if self.chance(0.6) else ""
            return f"SELECT {cols} FROM t1 {j2} t2 ON {on2} {j3} t1 AS t3 ON {on3}{where}"
        if k == 1:
            tables = ["t1", "t2"]
            cols = ", ".join(f"{self.scalar(tables, 1)} AS x{i}" for i in range(self.r.randint(1, 3)))
            join = self.pick(["RIGHT JOIN t2 ON t1.a = t2.b", "JOIN t2 USING (id)", "LEFT JOIN t2 USING (a)",
                              "RIGHT JOIN t2 USING (b)", "JOIN t2 USING (a, b)"])
            where = f" WHERE {self.predicate(tables, 1)}" if self.chance(0.6) else ""
            return f"SELECT {cols} FROM t1 {join}{where}"
        if k == 2:
            # A CTE read twice, joined with itself.
            inner = self.pick(["t1", "t2"])
            ty = self.pick(["num", "str"])
            col, _ = self.column([inner], ty)
            key = self.column([inner], "num")[0]
            return (f"WITH c AS (SELECT {inner}.id AS id, {col} AS v, {key} AS k FROM {inner} "
                    f"WHERE {self.predicate([inner], 1)}) "
                    f"SELECT c1.id, c1.v, c2.id FROM c AS c1 {self.pick(['JOIN', 'LEFT JOIN'])} c AS c2 "
                    f"ON c1.k {self.pick(['=', '<'])} c2.k AND c2.id < {self.r.randint(3, 30)}")
        if k == 3:
            n = self.r.randint(1, 15)
            col = self.pick(["a", "b", "u"])
            agg = self.pick(["COUNT(t1.id)", "SUM(t1.d)", "MAX(t1.c)", "MIN(t1.dt)"])
            return (f"WITH RECURSIVE r(n) AS (SELECT {self.r.randint(-3, 2)} UNION ALL "
                    f"SELECT n + 1 FROM r WHERE n < {n}) "
                    f"SELECT r.n, {agg} FROM r LEFT JOIN t1 ON t1.{col} = r.n GROUP BY r.n")
        if k == 4:
            cols = self.pick([("a", "b"), ("b", "a"), ("a", "u"), ("c", "dt"), ("b", "id")])
            lhs = ", ".join(f"t1.{c}" for c in cols)
            rhs = ", ".join(f"s.{c}" for c in cols)
            return (f"SELECT t1.id, t1.a FROM t1 WHERE ({lhs}) {self.pick(['', 'NOT '])}IN "
                    f"(SELECT {rhs} FROM t2 s WHERE {self.predicate(['s'], 1)})")
        if k == 5:
            t = self.pick(["t1", "t2"])
            other = "t2" if t == "t1" else "t1"
            key = self.scalar([t], 1)
            agg = self.pick([f"SUM({t}.d)", f"COUNT(*)", f"MAX({t}.a)", f"AVG({t}.f)"])
            sub = self.pick([f"(SELECT AVG(o.d) FROM {other} o)", f"(SELECT COUNT(*) FROM {other} o WHERE o.a > 3)",
                             f"(SELECT MIN(o.b) FROM {other} o WHERE o.c = MAX({t}.c))"])
            return (f"SELECT {key} AS k, {agg} AS g FROM {t} WHERE {self.predicate([t], 1)} "
                    f"GROUP BY k HAVING {agg} {self.pick(['>', '<', '>=', '<>'])} {sub}")
        if k == 6:
            t = self.pick(["t1", "t2"])
            other = "t2" if t == "t1" else "t1"
            sub = self.pick([f"(SELECT COUNT(*) FROM {other} o WHERE o.a = {t}.a)",
                             f"(SELECT MAX(o.d) FROM {other} o WHERE o.b < {t}.b)",
                             f"EXISTS (SELECT 1 FROM {other} o WHERE o.c = {t}.c)",
                             f"{t}.a IN (SELECT o.b FROM {other} o WHERE o.d > {self.r.randint(-5, 20)})",
                             f"(SELECT o.c FROM {other} o WHERE o.id = {t}.b)"])
            return f"SELECT {t}.id, {sub} AS s FROM {t} WHERE {self.predicate([t], 1)}"
        if k == 7:
            t = self.pick(["t1", "t2"])
            part = self.pick(["", f"PARTITION BY {self.column([t])[0]} "])
            order = f"{self.column([t])[0]}{self.pick(['', ' DESC'])}, {t}.id"
            fn = self.pick(["NTILE(3)", "PERCENT_RANK()", "CUME_DIST()", f"LEAD({t}.a, 2)",
                            f"LAG({t}.c, 1)", f"NTH_VALUE({t}.b, 2)", f"LAST_VALUE({t}.d)",
                            f"SUM({t}.d)", f"AVG({t}.b)", f"COUNT(*)", f"MIN({t}.dt)"])
            frame = ""
            if fn.startswith(("NTH_VALUE", "LAST_VALUE", "SUM", "AVG", "COUNT", "MIN")):
                frame = self.pick(["", " ROWS BETWEEN UNBOUNDED PRECEDING AND UNBOUNDED FOLLOWING",
                                   " ROWS BETWEEN 2 PRECEDING AND 1 FOLLOWING",
                                   " ROWS BETWEEN CURRENT ROW AND UNBOUNDED FOLLOWING"])
            if fn.startswith(("SUM", "COUNT", "AVG")) and self.chance(0.4):
                order = f"{t}.b"
                frame = self.pick([" RANGE BETWEEN 2 PRECEDING AND CURRENT ROW",
                                   " RANGE BETWEEN CURRENT ROW AND 3 FOLLOWING", ""])
            return f"SELECT {t}.id, {fn} OVER ({part}ORDER BY {order}{frame}) AS w FROM {t}"
        if k == 8:
            ty = self.pick(["num", "str", "date"])
            q1 = f"SELECT {self.column(['t1'], ty)[0]} FROM t1 WHERE {self.predicate(['t1'], 1)}"
            q2 = f"SELECT {self.column(['t2'], ty)[0]} FROM t2 WHERE {self.predicate(['t2'], 1)}"
            q3 = f"SELECT {self.column(['t1'], ty)[0]} FROM t1 WHERE {self.predicate(['t1'], 1)}"
            op1, op2 = self.pick(["INTERSECT", "EXCEPT", "UNION"]), self.pick(["INTERSECT", "EXCEPT", "UNION ALL"])
            return f"{q1} {op1} {q2} {op2} {q3}"
        if k == 9:
            t = self.pick(["t1", "t2"])
            key = self.scalar([t], 1)
            n = self.r.randint(1, 10)
            return (f"SELECT d.k, d.id FROM (SELECT {key} AS k, {t}.id FROM {t} "
                    f"ORDER BY k{self.pick(['', ' DESC'])}, {t}.id LIMIT {n}) AS d "
                    f"WHERE d.k IS NOT NULL")
        if k == 10:
            t = self.pick(["t1", "t2"])
            cols = self.pick([("a", "b"), ("c", "dt"), ("a", "c"), ("d", "u")])
            return (f"SELECT COUNT(DISTINCT {t}.{cols[0]}, {t}.{cols[1]}), "
                    f"COUNT(DISTINCT {t}.{cols[0]}) FROM {t} WHERE {self.predicate([t], 1)}")
        # Nested EXISTS two levels down, correlated at both.
        return (f"SELECT t1.id FROM t1 WHERE {self.pick(['', 'NOT '])}EXISTS (SELECT 1 FROM t2 "
                f"WHERE t2.a = t1.{self.pick(['a', 'b'])} AND {self.pick(['', 'NOT '])}EXISTS "
                f"(SELECT 1 FROM t1 AS t3 WHERE t3.b = t2.b AND t3.c {self.pick(['=', '<>'])} t1.c))")

    def dml(self):
        k = self.r.randint(0, 6)
        if k == 0:
            col, _, kind = self.pick(COLUMNS)
            t = self.pick(["t1", "t2"])
            val = self.scalar([t], 1, kind_type(kind)) if self.chance(0.6) else self.literal(kind)
            return f"UPDATE {t} SET {col} = {val} WHERE {self.predicate([t], 1)}"
        if k == 1:
            col, _, _ = self.pick(COLUMNS)
            return (f"UPDATE t1, t2 SET t1.{col} = t2.{col} WHERE t1.{self.pick(['a', 'b'])} = "
                    f"t2.{self.pick(['a', 'b', 'id'])} AND {self.predicate(['t1', 't2'], 1)}")
        if k == 2:
            t = self.pick(["t1", "t2"])
            return f"DELETE FROM {t} WHERE {self.predicate([t], 1)}"
        if k == 3:
            cols = ", ".join(c for c, _, _ in COLUMNS)
            sel = ", ".join(f"t2.{c}" for c, _, _ in COLUMNS)
            return (f"INSERT INTO t1 (id, {cols}) SELECT t2.id + {self.r.randint(100, 900)}, {sel} "
                    f"FROM t2 WHERE {self.predicate(['t2'], 1)}")
        if k == 4:
            row = self.rows(1, self.r.randint(1, 60))[0]
            return f"REPLACE INTO t2 VALUES {row}"
        if k == 5:
            row = self.rows(1, self.r.randint(1, 60))[0]
            col, _, _ = self.pick(COLUMNS)
            return f"INSERT INTO t1 VALUES {row} ON DUPLICATE KEY UPDATE {col} = VALUES({col})"
        t = self.pick(["t1", "t2"])
        col, _, _ = self.pick(COLUMNS)
        return f"UPDATE {t} SET {col} = NULL WHERE {self.predicate([t], 1)}"


# --- running and comparing --------------------------------------------------------------------

def kind_type(kind):
    """The expression type of a column kind."""
    return {"str": "str", "chr": "str", "date": "date", "datetime": "date"}.get(kind, "num")


def connect(port, exact=False):
    # `--exact`: no decoders, so every value arrives as the text the server sent.
    extra = {"conv": {}} if exact else {}
    return pymysql.connect(host="127.0.0.1", port=port, user="root", password="",
                           autocommit=True, charset="utf8mb4", **extra)


# Result column type codes (protocol field types) grouped as MySQL 8 clients tell them
# apart: an integer, an exact decimal, a double, text, a date or time.
TYPE_CLASSES = {1: "int", 2: "int", 3: "int", 8: "int", 9: "int", 13: "int", 16: "int",
                0: "decimal", 246: "decimal", 4: "real", 5: "real",
                10: "date", 7: "datetime", 12: "datetime", 11: "time",
                15: "text", 252: "text", 253: "text", 254: "text", 245: "json"}


def exact_key(v, type_code):
    """`--exact`: one value as the text the server sent, tagged with its column's type
    class; only text is case-folded and right-trimmed (the collations differ there)."""
    cls = TYPE_CLASSES.get(type_code, str(type_code))
    if v is None:
        return (cls, "null", "")
    if isinstance(v, bytes):
        try:
            v = v.decode()
        except UnicodeDecodeError:
            return (cls, "hex", v.hex())
    return (cls, "", v.rstrip(" ").lower() if cls == "text" else v)


def normalise(v):
    """One value as a comparable key: numbers by value (12 significant digits), strings
    case-folded without trailing spaces, dates as text."""
    if v is None:
        return ("null",)
    if isinstance(v, (int, float, decimal.Decimal)):
        try:
            d = decimal.Decimal(v)
        except decimal.InvalidOperation:
            return ("num", str(v))
        if d.is_zero():
            return ("num", "0")
        return ("num", format(d, ".12g") if not d == d.to_integral_value() else str(int(d)))
    if isinstance(v, bytes):
        try:
            v = v.decode()
        except UnicodeDecodeError:
            return ("bytes", v.hex())
    s = str(v)
    # A number shown as text on one side only (e.g. a string-typed branch): compare by value.
    try:
        d = decimal.Decimal(s.strip())
        if s.strip() and not s.strip().lower() in ("nan", "inf", "infinity", "-inf"):
            return normalise(d)
    except decimal.InvalidOperation:
        pass
    return ("str", s.rstrip(" ").lower())


def near_equal(a, b):
    """Whether two sorted row lists differ only in numbers within a relative 1e-3."""
    if len(a) != len(b):
        return False
    for ra, rb in zip(a, b):
        for va, vb in zip(ra, rb):
            if va == vb:
                continue
            if va[0] != "num" or vb[0] != "num":
                return False
            x, y = decimal.Decimal(va[1]), decimal.Decimal(vb[1])
            if abs(x - y) > abs(y) * decimal.Decimal("1e-3") + decimal.Decimal("1e-9"):
                return False
    return True


class Prepared:
    """`--prepared`: statements run as server-side prepared statements (COM_STMT_PREPARE
    and COM_STMT_EXECUTE), so results come back in the binary protocol; through
    mysql-connector-python, whose C-free driver decodes each binary type itself."""

    def __init__(self, port):
        import mysql.connector
        self.errors = mysql.connector.Error
        self.conn = mysql.connector.connect(host="127.0.0.1", port=port, user="root", password="",
                                            autocommit=True, charset="utf8mb4", use_pure=True)

    def run(self, sql):
        try:
            cur = self.conn.cursor(prepared=True)
            try:
                cur.execute(sql)
                rows = cur.fetchall() if cur.with_rows else []
            finally:
                cur.close()
            return [tuple(normalise(v) for v in row) for row in rows], None
        except self.errors as e:
            return None, (e.errno, e.msg)


def run(conn, sql, exact=False):
    """(rows or None, error code or None)."""
    if isinstance(conn, Prepared):
        return conn.run(sql)
    try:
        with conn.cursor() as cur:
            cur.execute(sql)
            rows = cur.fetchall()
            if exact:
                types = [d[1] for d in cur.description or []]
                return [tuple(exact_key(v, t) for v, t in zip(row, types)) for row in rows], None
            return [tuple(normalise(v) for v in row) for row in rows], None
    except pymysql.err.MySQLError as e:
        code = e.args[0] if e.args else -1
        return None, (code, str(e.args[1]) if len(e.args) > 1 else "")


def setup(conns, engine, gen):
    t1 = gen.rows(40)
    t2 = gen.rows(25)
    cols = ", ".join(f"{n} {t}" for n, t, _ in COLUMNS)
    for conn in conns:
        with conn.cursor() as cur:
            cur.execute(f"DROP DATABASE IF EXISTS {DATABASE}")
            cur.execute(f"CREATE DATABASE {DATABASE}")
            cur.execute(f"USE {DATABASE}")
            for name, rows in (("t1", t1), ("t2", t2)):
                cur.execute(f"CREATE TABLE {name} (id INT PRIMARY KEY, {cols}, KEY (a), KEY (c)) ENGINE={engine}")
                cur.execute(f"INSERT INTO {name} VALUES {','.join(rows)}")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--strata", type=int, required=True, help="Strata's port on 127.0.0.1")
    ap.add_argument("--reference", type=int, default=3902, help="the reference server's port")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--count", type=int, default=400, help="statements to generate")
    ap.add_argument("--engine", default="innodb", choices=["innodb", "myisam"])
    ap.add_argument("--mode", default="select", choices=["select", "extra", "dml", "funcs", "shapes"])
    ap.add_argument("--verbose", action="store_true", help="print every statement")
    ap.add_argument("--prepared", action="store_true",
                    help="run each generated SELECT on Strata as a prepared statement too "
                         "(binary protocol) and compare that with Strata's text result")
    ap.add_argument("--exact", action="store_true",
                    help="compare SELECT results as the text sent and the column's type class "
                         "(catches display and type differences the by-value comparison hides)")
    ap.add_argument("--wide-columns", action="store_true",
                    help="add BIGINT UNSIGNED, TINYINT, CHAR(4) and DATETIME(3) columns")
    args = ap.parse_args()
    if args.wide_columns:
        COLUMNS.extend(WIDE_COLUMNS)

    gen = Gen(args.seed, wide=args.mode == "funcs")
    exact_run = args.exact and args.mode != "dml"
    strata, ref = connect(args.strata, args.exact), connect(args.reference, args.exact)
    for conn in (strata, ref):
        with conn.cursor() as cur:
            cur.execute(f"SET SESSION sql_mode = '{MYSQL8_SQL_MODE}'")
            cur.execute("SET SESSION div_precision_increment = 4")
            # MySQL 8's default (MariaDB 10.11's is 1 MiB).
            cur.execute("SET SESSION group_concat_max_len = 1024")
    setup((strata, ref), args.engine, gen)
    if args.prepared:
        prepared = (Prepared(args.strata),)
        for p in prepared:
            for stmt in (f"SET SESSION sql_mode = '{MYSQL8_SQL_MODE}'",
                         "SET SESSION div_precision_increment = 4",
                         "SET SESSION group_concat_max_len = 1024", f"USE {DATABASE}"):
                p.conn.cmd_query(stmt)

    diffs = unsupported = both_failed = near = mysql8_refusals = shown = 0
    for i in range(args.count):
        if args.mode == "shapes":
            sql = gen.shape()
        else:
            sql = gen.dml() if args.mode == "dml" else gen.select(args.mode in ("extra", "funcs"))
        if args.verbose:
            print(f"[{i}] {sql}")
        exact = args.exact and args.mode != "dml"
        a, ea = run(strata, sql, exact)
        b, eb = run(ref, sql, exact)
        if args.mode == "dml":
            if ea and ea[0] == 1235:
                unsupported += 1
                continue
            if ea and ea[0] == 1093 and eb is None:
                # MySQL 8 refuses a subquery reading the table a data change writes
                # (1093); MariaDB 10.3+ allows it.
                mysql8_refusals += 1
                setup((strata, ref), args.engine, Gen(args.seed * 7919 + i))
                continue
            if (ea is None) != (eb is None):
                diffs += 1
                print(f"DIFF [{i}] {sql}\n  strata: {ea}\n  reference: {eb}")
                setup((strata, ref), args.engine, Gen(args.seed * 7919 + i))
                continue
            for t in ("t1", "t2"):
                ta, _ = run(strata, f"SELECT * FROM {t}")
                tb, _ = run(ref, f"SELECT * FROM {t}")
                if sorted(ta) != sorted(tb):
                    diffs += 1
                    only_a = [r for r in ta if r not in tb][:5]
                    only_b = [r for r in tb if r not in ta][:5]
                    print(f"DIFF [{i}] {sql}\n  table {t}: strata only {only_a}\n  reference only {only_b}")
                    setup((strata, ref), args.engine, Gen(args.seed * 7919 + i))
                    break
            continue
        if ea is not None and ea[0] == 1235:
            unsupported += 1
            continue
        if args.prepared and ea is None:
            # The binary protocol against Strata's own text result: both are Strata's,
            # so any difference is Strata's (the text result is compared below).
            ta, _ = run(strata, sql) if exact else (a, None)
            pa, pea = run(prepared[0], sql)
            if pea is not None or (sorted(pa) != sorted(ta) and not near_equal(sorted(pa), sorted(ta))):
                diffs += 1
                detail = (f"prepared: {pea}" if pea else
                          f"prepared only: {[r for r in pa if r not in ta][:3]}\n"
                          f"  text only: {[r for r in ta if r not in pa][:3]}")
                print(f"DIFF (prepared vs text) [{i}] {sql}\n  {detail}")
                continue
        if ea is not None and eb is not None:
            both_failed += 1
            continue
        if (ea is None) != (eb is None):
            diffs += 1
            print(f"DIFF [{i}] {sql}\n  strata: {ea or (len(a), 'rows')}\n  reference: {eb or (len(b), 'rows')}")
            continue
        if exact and sorted(a) != sorted(b):
            # Separate a difference of text or type alone from one of values.
            by_value = [sorted(tuple(normalise(None if k[1] == "null" else k[2]) for k in row)
                               for row in rows) for rows in (a, b)]
            if by_value[0] == by_value[1] or near_equal(*by_value):
                shown += 1
                only_a = [r for r in a if r not in b][:3]
                only_b = [r for r in b if r not in a][:3]
                print(f"SHOWN [{i}] {sql}\n  strata only: {only_a}\n  reference only: {only_b}")
                continue
            a, b = by_value
        if sorted(a) != sorted(b):
            if near_equal(sorted(a), sorted(b)):
                # MariaDB's GROUP BY temporary table rounds a quotient to the digits it
                # shows before SUM/AVG add it up; MySQL 8 and Strata keep them.
                near += 1
                if args.verbose:
                    print(f"NEAR [{i}] {sql}")
                continue
            diffs += 1
            only_a = [r for r in a if r not in b][:5]
            only_b = [r for r in b if r not in a][:5]
            print(f"DIFF [{i}] {sql}\n  rows {len(a)} vs {len(b)}\n  strata only: {only_a}\n  reference only: {only_b}")
    print(f"seed {args.seed} mode {args.mode} engine {args.engine}: {args.count} statements, "
          f"{diffs} differences, {near} near-equal (numbers within 1e-3), {unsupported} unsupported "
          f"(1235), {both_failed} failed on both, {mysql8_refusals} refused as MySQL 8 does (1093)"
          + (f", {shown} equal by value but shown or typed differently (--exact)" if exact_run else ""))
    sys.exit(1 if diffs else 0)


if __name__ == "__main__":
    main()
