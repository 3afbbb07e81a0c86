#!/usr/bin/env python3
"""Drives the Django project against the server under test (STRATA_HOST / STRATA_PORT) the way
an application's deployment does, checking what each step leaves in the database:

1. `migrate` from an empty database to 0001, 0002, 0003, reading the schema back through
   Django's introspection (columns, constraints, indexes) after each, and `inspectdb`;
2. `manage.py test` (Django creates test_dj_shop, runs shop/tests.py, drops it);
3. data written through the ORM, `dumpdata` (XML), the tables emptied, `loaddata`, compared;
4. `migrate shop 0001` (the reverse migrations) and `migrate shop zero`.

Prints `django: N checks passed` and exits 0, or stops at the first failed check."""

import io
import os
import subprocess
import sys
import tempfile

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "strataproj.settings")
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import strataproj  # noqa: E402,F401  (PyMySQL as MySQLdb when needed)
import pymysql  # noqa: E402

DB = os.environ.get("DJANGO_DB", "dj_shop")
checks = 0


def check(cond, what):
    global checks
    if not cond:
        print(f"FAILED: {what}", flush=True)
        sys.exit(1)
    checks += 1


def admin_sql(*stmts):
    c = pymysql.connect(
        host=os.environ.get("STRATA_HOST", "127.0.0.1"), port=int(os.environ.get("STRATA_PORT", "3306")),
        user=os.environ.get("STRATA_USER", "root"), password="", autocommit=True,
    )
    try:
        with c.cursor() as cur:
            for s in stmts:
                cur.execute(s)
            return cur.fetchall()
    finally:
        c.close()


admin_sql(f"DROP DATABASE IF EXISTS {DB}", f"DROP DATABASE IF EXISTS test_{DB}", f"CREATE DATABASE {DB} CHARACTER SET utf8mb4")

import django  # noqa: E402

django.setup()

from django.core.management import call_command  # noqa: E402
from django.db import connection  # noqa: E402


def columns(table):
    with connection.cursor() as cur:
        return {c.name: c for c in connection.introspection.get_table_description(cur, table)}


def constraints(table):
    with connection.cursor() as cur:
        return connection.introspection.get_constraints(cur, table)


def index_on(table, cols, **kind):
    for name, c in constraints(table).items():
        if c["columns"] == cols and all(c.get(k) == v for k, v in kind.items()):
            return name
    return None


def migrate(*args):
    out = io.StringIO()
    call_command("migrate", *args, interactive=False, verbosity=1, stdout=out)
    print(out.getvalue(), flush=True)


# --- 1. migrations from an empty database ---------------------------------------------------------
migrate("shop", "0001")
with connection.cursor() as cur:
    tables = set(connection.introspection.table_names(cur))
check({"shop_author", "shop_tag", "shop_book", "shop_book_tags", "shop_review", "django_migrations"} <= tables, f"0001 tables: {tables}")
book = columns("shop_book")
check(set(book) == {"id", "title", "author_id", "meta", "published", "price", "stock"}, f"shop_book columns {set(book)}")
check(book["price"].precision == 8 and book["price"].scale == 2, f"price is DECIMAL(8,2): {book['price']}")
check(book["title"].internal_size == 200, f"title is VARCHAR(200): {book['title']}")
with connection.cursor() as cur:
    cur.execute("SELECT DATETIME_PRECISION FROM information_schema.COLUMNS WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = 'shop_book' AND COLUMN_NAME = 'published'")
    check(cur.fetchone()[0] == 6, "published is DATETIME(6)")
    cur.execute("SELECT DATA_TYPE FROM information_schema.COLUMNS WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = 'shop_book' AND COLUMN_NAME = 'meta'")
    # MariaDB's JSON is LONGTEXT with a JSON_VALID check; MySQL 8's is JSON.
    check(cur.fetchone()[0] in ("json", "longtext"), "meta is a JSON column")
check(index_on("shop_book", ["published"], index=True) == "book_published_idx", "book_published_idx on published")
check(index_on("shop_book", ["author_id", "title"], unique=True) == "uniq_author_title", "uniq_author_title")
check(index_on("shop_review", ["book_id", "reviewer"], unique=True) is not None, "unique_together (book, reviewer)")
check(index_on("shop_author", ["name"], unique=True) is not None, "Author.name unique")
fks = {tuple(c["columns"]): c["foreign_key"] for c in constraints("shop_book").values() if c["foreign_key"]}
check(fks.get(("author_id",)) == ("shop_author", "id"), f"shop_book.author_id references shop_author.id: {fks}")
m2m = {tuple(c["columns"]): c["foreign_key"] for c in constraints("shop_book_tags").values() if c["foreign_key"]}
check(m2m.get(("book_id",)) == ("shop_book", "id") and m2m.get(("tag_id",)) == ("shop_tag", "id"), f"M2M table FKs: {m2m}")
# Rows written under 0001 must survive the later migrations.
admin_sql(
    f"INSERT INTO {DB}.shop_author (name, legacy_code) VALUES ('Old', 'L1')",
    f"INSERT INTO {DB}.shop_book (title, author_id, meta, published, price, stock) "
    f"SELECT 'Kept', id, '{{\"a\": 1}}', '2020-01-02 03:04:05.678901', 1.50, 7 FROM {DB}.shop_author",
)

migrate("shop", "0002")
author = columns("shop_author")
check(set(author) == {"id", "name", "legacy_code", "email"}, f"0002 added email: {set(author)}")
check(index_on("shop_book", ["title"], index=True) == "book_title_idx", "0002 added book_title_idx")
check(admin_sql(f"SELECT email FROM {DB}.shop_author WHERE name = 'Old'") == (("",),), "existing row got the default email")

migrate("shop")
book = columns("shop_book")
check("copies" in book and "stock" not in book, f"0003 renamed stock to copies: {set(book)}")
check(set(columns("shop_author")) == {"id", "name", "email"}, "0003 removed legacy_code")
check(index_on("shop_book", ["title"], index=True) is None, "0003 removed book_title_idx")
check(index_on("shop_book", ["published"], index=True) == "book_published_idx", "book_published_idx kept")
check(
    admin_sql(f"SELECT title, copies, published FROM {DB}.shop_book")[0][:2] == ("Kept", 7),
    "the renamed column kept its value",
)
from shop.models import Author, Book, Review, Tag  # noqa: E402

check(Book.objects.get(title="Kept").published.microsecond == 678901, "microseconds survive ALTERs")
applied = sorted(n for a, n in admin_sql(f"SELECT app, name FROM {DB}.django_migrations") if a == "shop")
check(applied == ["0001_initial", "0002_author_email_book_title_idx", "0003_rename_stock_drop_legacy"], f"django_migrations rows {applied}")
out = io.StringIO()
call_command("makemigrations", "shop", "--check", "--dry-run", stdout=out)
check("No changes detected" in out.getvalue(), f"models and migrations agree: {out.getvalue()}")

# inspectdb reads the whole schema back as models.
out = io.StringIO()
call_command("inspectdb", "shop_author", "shop_book", "shop_book_tags", stdout=out)
models_text = out.getvalue()
for line in (
    "    id = models.BigAutoField(primary_key=True)",
    "    name = models.CharField(unique=True, max_length=100)",
    "    author = models.ForeignKey(ShopAuthor, models.DO_NOTHING)",
    "    meta = models.JSONField()",
    "    published = models.DateTimeField()",
    "    price = models.DecimalField(max_digits=8, decimal_places=2)",
    "    copies = models.IntegerField()",
    "        unique_together = (('author', 'title'),)",
    "    tag = models.ForeignKey('ShopTag', models.DO_NOTHING)",
    "        unique_together = (('book', 'tag'),)",
):
    check(line in models_text.splitlines(), f"inspectdb wrote {line!r}:\n{models_text}")

# --- 2. manage.py test: test database created, TestCases, test database dropped -------------------
env = dict(os.environ, PYTHONDONTWRITEBYTECODE="1")
r = subprocess.run(
    [sys.executable, "manage.py", "test", "shop", "--noinput", "-v", "2"], cwd=HERE, env=env,
    capture_output=True, text=True, timeout=600,
)
print(r.stdout, r.stderr, flush=True)
check(r.returncode == 0, "manage.py test passed")
check("Ran 11 tests" in r.stderr and "\nOK" in r.stderr, "manage.py test ran all 11 tests")
dbs = [d for (d,) in admin_sql("SHOW DATABASES")]
check(f"test_{DB}" not in dbs, f"the test database was dropped: {dbs}")

# --- 3. dumpdata / loaddata round trip ------------------------------------------------------------
ann = Author.objects.create(name="Ann", email="ann@example.com")
sf = Tag.objects.create(name="sf")
crime = Tag.objects.create(name="crime")
import datetime  # noqa: E402
from decimal import Decimal  # noqa: E402

UTC = datetime.timezone.utc
b = Book.objects.create(
    title="Dune", author=ann, published=datetime.datetime(2024, 1, 2, 3, 4, 5, 654321, tzinfo=UTC),
    price=Decimal("12.34"), copies=2, meta={"k": [1, 2, {"x": None}], "s": "é✓"},
)
b.tags.set([sf, crime])
Review.objects.create(book=b, reviewer="r1", rating=4)


def snapshot():
    return {
        "author": list(Author.objects.order_by("pk").values_list("pk", "name", "email")),
        "tag": list(Tag.objects.order_by("pk").values_list("pk", "name")),
        "book": list(Book.objects.order_by("pk").values_list("pk", "title", "author_id", "meta", "published", "price", "copies")),
        "tags": sorted(Book.tags.through.objects.values_list("book_id", "tag_id")),
        "review": list(Review.objects.order_by("pk").values_list("pk", "book_id", "reviewer", "rating", "written")),
    }


before = snapshot()
with tempfile.TemporaryDirectory() as tmp:
    # XML, because Django's JSON serializer cuts datetimes to milliseconds.
    path = os.path.join(tmp, "shop.xml")
    call_command("dumpdata", "shop", "--format", "xml", "--indent", "1", "--output", path)
    with open(path) as f:
        n_objects = f.read().count("<object model=")
    check(n_objects == 2 + 2 + 2 + 1, f"dumpdata wrote every object: {n_objects}")
    Review.objects.all().delete()
    Book.objects.all().delete()
    Tag.objects.all().delete()
    Author.objects.all().delete()
    check(Author.objects.count() == 0 and Book.tags.through.objects.count() == 0, "tables emptied")
    out = io.StringIO()
    call_command("loaddata", path, stdout=out)
    check("Installed 7 object(s)" in out.getvalue(), f"loaddata: {out.getvalue()}")
after = snapshot()
check(after == before, f"loaddata restored the same rows:\n{before}\n{after}")
# loaddata sets explicit ids; the next generated id must come after them.
nxt = Author.objects.create(name="Next")
check(nxt.pk > max(p for p, _, _ in before["author"]), f"AUTO_INCREMENT continues past loaded ids: {nxt.pk}")

# --- 4. reverse migrations -----------------------------------------------------------------------
Author.objects.filter(name="Next").delete()
migrate("shop", "0001")
check("stock" in columns("shop_book") and "legacy_code" in columns("shop_author"), "0003 and 0002 reversed")
check(index_on("shop_book", ["title"], index=True) is None and "email" not in columns("shop_author"), "0002 reversed")
check(admin_sql(f"SELECT stock FROM {DB}.shop_book WHERE title = 'Dune'") == ((2,),), "reversed rename kept the value")
migrate("shop", "zero")
with connection.cursor() as cur:
    left = set(connection.introspection.table_names(cur))
check(not any(t.startswith("shop_") for t in left), f"migrate zero dropped the app's tables: {left}")

admin_sql(f"DROP DATABASE {DB}")
print(f"django: {checks} checks passed")
