"""Shared pytest fixtures for the Python driver suites: where the server under test listens
(STRATA_HOST / STRATA_PORT, set by crates/server/tests/drivers.rs) and a fresh database per
test module, so the suites do not see each other's tables."""

import os

import pymysql
import pytest

HOST = os.environ.get("STRATA_HOST", "127.0.0.1")
PORT = int(os.environ.get("STRATA_PORT", "3306"))
USER = os.environ.get("STRATA_USER", "root")


def admin():
    """A plain PyMySQL connection without a default database, for setup and teardown."""
    return pymysql.connect(host=HOST, port=PORT, user=USER, password="", autocommit=True)


@pytest.fixture(scope="module")
def dbname(request):
    name = "py_" + request.module.__name__.rsplit(".", 1)[-1]
    c = admin()
    try:
        with c.cursor() as cur:
            cur.execute(f"DROP DATABASE IF EXISTS {name}")
            cur.execute(f"CREATE DATABASE {name} CHARACTER SET utf8mb4")
    finally:
        c.close()
    yield name
