"""SQLAlchemy 2 (PyMySQL dialect) and Alembic against the server under test: create_all of
MySQL-dialect types (ENUM, JSON, DATETIME(fsp=6)), foreign keys and indexes; inspect()
reflection compared with the model; the ORM's savepoints (begin_nested), a correlated
subquery, window functions, the mysql dialect's INSERT ... ON DUPLICATE KEY UPDATE; and an
Alembic autogenerate / upgrade / downgrade cycle. Run by crates/server/tests/drivers.rs."""

import datetime
import os
from decimal import Decimal

import pytest
import sqlalchemy as sa
from sqlalchemy import exc, func, inspect, select
from sqlalchemy.dialects import mysql
from sqlalchemy.orm import DeclarativeBase, Mapped, Session, mapped_column, relationship

from conftest import HOST, PORT, USER

HERE = os.path.dirname(os.path.abspath(__file__))
# ENUM columns are native (MySQL ENUM); STRATA_SA_NATIVE_ENUM=0 stores them as VARCHAR.
NATIVE_ENUM = os.environ.get("STRATA_SA_NATIVE_ENUM", "1") != "0"


class Base(DeclarativeBase):
    pass


class Customer(Base):
    __tablename__ = "customer"
    id: Mapped[int] = mapped_column(primary_key=True)
    name: Mapped[str] = mapped_column(sa.String(50), unique=True)
    tier: Mapped[str] = mapped_column(
        sa.Enum("gold", "silver", "bronze", name="tier", native_enum=NATIVE_ENUM), default="bronze"
    )
    created: Mapped[datetime.datetime] = mapped_column(mysql.DATETIME(fsp=6))
    profile: Mapped[dict] = mapped_column(sa.JSON, nullable=True)
    orders: Mapped[list["Order"]] = relationship(back_populates="customer", order_by="Order.id")


class Order(Base):
    __tablename__ = "orders"
    id: Mapped[int] = mapped_column(primary_key=True)
    customer_id: Mapped[int] = mapped_column(sa.ForeignKey("customer.id", ondelete="CASCADE"))
    total: Mapped[Decimal] = mapped_column(sa.Numeric(10, 2))
    placed: Mapped[datetime.datetime] = mapped_column(mysql.DATETIME(fsp=6))
    customer: Mapped[Customer] = relationship(back_populates="orders")
    __table_args__ = (
        sa.Index("ix_orders_placed", "placed"),
        sa.Index("ix_orders_cust_total", "customer_id", "total"),
    )


class Counter(Base):
    __tablename__ = "counter"
    k: Mapped[str] = mapped_column(sa.String(20), primary_key=True)
    n: Mapped[int] = mapped_column(sa.Integer)
    note: Mapped[str] = mapped_column(sa.String(20), nullable=True)


T0 = datetime.datetime(2024, 5, 6, 7, 8, 9, 123456)


@pytest.fixture(scope="module")
def engine(dbname):
    e = sa.create_engine(f"mysql+pymysql://{USER}:@{HOST}:{PORT}/{dbname}?charset=utf8mb4")
    Base.metadata.create_all(e)
    yield e
    e.dispose()


@pytest.fixture(scope="module")
def loaded(engine):
    with Session(engine) as s, s.begin():
        for i, (name, tier) in enumerate([("ann", "gold"), ("bob", "silver"), ("cy", "bronze")]):
            c = Customer(name=name, tier=tier, created=T0 + datetime.timedelta(microseconds=i), profile={"n": i, "tags": [name]})
            s.add(c)
            for j in range(i + 1):
                c.orders.append(Order(total=Decimal(10 * (j + 1)) + Decimal("0.5"), placed=T0 + datetime.timedelta(days=j)))
    return engine


def test_reflection_matches_model(loaded):
    insp = inspect(loaded)
    assert set(insp.get_table_names()) >= {"customer", "orders", "counter"}
    cols = {c["name"]: c for c in insp.get_columns("customer")}
    assert list(cols) == ["id", "name", "tier", "created", "profile"]
    assert isinstance(cols["name"]["type"], sa.String) and cols["name"]["type"].length == 50
    assert isinstance(cols["created"]["type"], mysql.DATETIME) and cols["created"]["type"].fsp == 6
    if NATIVE_ENUM:
        assert isinstance(cols["tier"]["type"], mysql.ENUM)
        assert list(cols["tier"]["type"].enums) == ["gold", "silver", "bronze"]
    assert cols["id"]["autoincrement"] is True and cols["id"]["nullable"] is False
    assert cols["profile"]["nullable"] is True and cols["name"]["nullable"] is False
    assert insp.get_pk_constraint("orders")["constrained_columns"] == ["id"]
    fks = insp.get_foreign_keys("orders")
    assert len(fks) == 1
    assert fks[0]["constrained_columns"] == ["customer_id"]
    assert fks[0]["referred_table"] == "customer" and fks[0]["referred_columns"] == ["id"]
    assert fks[0]["options"].get("ondelete") == "CASCADE"
    idx = {i["name"]: i for i in insp.get_indexes("orders")}
    assert idx["ix_orders_placed"]["column_names"] == ["placed"] and not idx["ix_orders_placed"]["unique"]
    assert idx["ix_orders_cust_total"]["column_names"] == ["customer_id", "total"]
    uniq = [u["column_names"] for u in insp.get_unique_constraints("customer")]
    assert uniq == [["name"]]


def test_types_round_trip(loaded):
    with Session(loaded) as s:
        ann = s.scalars(select(Customer).where(Customer.name == "ann")).one()
        assert ann.tier == "gold"
        assert ann.created == T0
        assert ann.profile == {"n": 0, "tags": ["ann"]}
        cy = s.scalars(select(Customer).where(Customer.name == "cy")).one()
        assert cy.created == T0 + datetime.timedelta(microseconds=2)
        assert [o.total for o in cy.orders] == [Decimal("10.50"), Decimal("20.50"), Decimal("30.50")]
        assert s.scalar(select(func.count()).select_from(Customer).where(Customer.tier == "silver")) == 1
        assert s.scalar(select(Customer.name).where(Customer.profile["n"].as_integer() == 1)) == "bob"


def test_correlated_subquery_and_window_function(loaded):
    with Session(loaded) as s:
        n_orders = (
            select(func.count(Order.id)).where(Order.customer_id == Customer.id).correlate(Customer).scalar_subquery()
        )
        rows = s.execute(select(Customer.name, n_orders.label("n")).order_by(Customer.name)).all()
        assert [tuple(r) for r in rows] == [("ann", 1), ("bob", 2), ("cy", 3)]
        big = s.scalars(
            select(Customer.name).where(
                select(func.max(Order.total)).where(Order.customer_id == Customer.id).scalar_subquery() > 15
            ).order_by(Customer.name)
        ).all()
        assert big == ["bob", "cy"]
        rn = func.row_number().over(partition_by=Order.customer_id, order_by=Order.total.desc()).label("rn")
        running = func.sum(Order.total).over(partition_by=Order.customer_id, order_by=Order.placed).label("running")
        rows = s.execute(
            select(Customer.name, Order.total, rn, running).join(Order.customer).order_by(Customer.name, Order.placed)
        ).all()
        assert [tuple(r) for r in rows] == [
            ("ann", Decimal("10.50"), 1, Decimal("10.50")),
            ("bob", Decimal("10.50"), 2, Decimal("10.50")),
            ("bob", Decimal("20.50"), 1, Decimal("31.00")),
            ("cy", Decimal("10.50"), 3, Decimal("10.50")),
            ("cy", Decimal("20.50"), 2, Decimal("31.00")),
            ("cy", Decimal("30.50"), 1, Decimal("61.50")),
        ]


def test_begin_nested_savepoints(loaded):
    with Session(loaded) as s:
        with s.begin():
            s.add(Customer(name="dee", created=T0))
            s.flush()
            nested = s.begin_nested()
            s.add(Customer(name="eve", created=T0))
            s.flush()
            nested.rollback()
            # A duplicate unique key inside a savepoint: the savepoint rolls back, the
            # transaction goes on.
            with pytest.raises(exc.IntegrityError) as e:
                with s.begin_nested():
                    s.add(Customer(name="ann", created=T0))
                    s.flush()
            assert e.value.orig.args[0] == 1062
            with s.begin_nested():
                s.add(Customer(name="fay", created=T0))
        names = s.scalars(select(Customer.name).where(Customer.name.in_(["dee", "eve", "fay"])).order_by(Customer.name)).all()
        assert names == ["dee", "fay"]
        s.execute(sa.delete(Customer).where(Customer.name.in_(["dee", "fay"])))
        s.commit()


def test_orm_update_counts_matched_rows(loaded):
    # An ORM flush checks the matched-row count; an UPDATE to the same value must count 1.
    with Session(loaded) as s, s.begin():
        ann = s.scalars(select(Customer).where(Customer.name == "ann")).one()
        ann.tier = "gold"
        ann.profile = {"n": 0, "tags": ["ann"]}
        s.flush()
        r = s.execute(sa.update(Customer).where(Customer.name == "ann").values(tier="gold"))
        assert r.rowcount == 1


def test_on_duplicate_key_update(loaded):
    with loaded.begin() as c:
        ins = mysql.insert(Counter).values(k="a", n=1, note="first")
        r = c.execute(ins.on_duplicate_key_update(n=ins.inserted.n + Counter.n, note="again"))
        assert r.rowcount == 1
        r = c.execute(ins.on_duplicate_key_update(n=ins.inserted.n + Counter.n, note="again"))
        assert r.rowcount == 2
        rows = [dict(k=k, n=i, note=None) for i, k in enumerate("bcd", 10)]
        ins = mysql.insert(Counter).values(rows)
        c.execute(ins.on_duplicate_key_update(n=ins.inserted.n))
        ins = mysql.insert(Counter).values([dict(k="b", n=5, note=None), dict(k="e", n=1, note=None)])
        c.execute(ins.on_duplicate_key_update(n=Counter.n + ins.inserted.n, note="dup"))
        got = c.execute(select(Counter.k, Counter.n, Counter.note).order_by(Counter.k)).all()
    assert [tuple(r) for r in got] == [
        ("a", 2, "again"), ("b", 15, "dup"), ("c", 11, None), ("d", 12, None), ("e", 1, None),
    ]


def test_alembic_autogenerate_upgrade_downgrade(engine, tmp_path):
    from alembic import command
    from alembic.config import Config

    versions = tmp_path / "versions"
    versions.mkdir()
    cfg = Config()
    cfg.set_main_option("script_location", os.path.join(HERE, "alembic_env"))
    cfg.set_main_option("path_separator", "os")
    cfg.set_main_option("version_locations", str(versions))
    cfg.attributes["engine"] = engine

    # The database already matches Base.metadata: stamp it as the first revision.
    cfg.attributes["target_metadata"] = Base.metadata
    first = command.revision(cfg, message="baseline", autogenerate=True, rev_id="r1")
    assert "pass" in open(first.path).read().split("def upgrade")[1].split("def downgrade")[0], (
        "autogenerate found differences between create_all and its reflection:\n" + open(first.path).read()
    )
    command.upgrade(cfg, "head")

    # A changed model: a new column, a new index, a changed length.
    md = sa.MetaData()
    for t in Base.metadata.tables.values():
        t.to_metadata(md)
    counter = md.tables["counter"]
    counter.append_column(sa.Column("hits", sa.Integer, nullable=True))
    sa.Index("ix_counter_note", counter.c.note)
    customer = md.tables["customer"]
    customer.c.name.type = sa.String(80)
    cfg.attributes["target_metadata"] = md
    second = command.revision(cfg, message="hits", autogenerate=True, rev_id="r2")
    text = open(second.path).read()
    up = text.split("def upgrade")[1].split("def downgrade")[0]
    assert "op.add_column('counter', sa.Column('hits'" in up, text
    assert "op.create_index('ix_counter_note'" in up, text
    assert "op.alter_column('customer', 'name'" in up and "String(length=80)" in up, text

    command.upgrade(cfg, "head")
    insp = inspect(engine)
    cols = {c["name"]: c for c in insp.get_columns("counter")}
    assert "hits" in cols
    assert {i["name"] for i in insp.get_indexes("counter")} == {"ix_counter_note"}
    assert {c["name"]: c for c in insp.get_columns("customer")}["name"]["type"].length == 80
    with engine.connect() as c:
        assert c.execute(sa.text("SELECT version_num FROM alembic_version")).scalar() == "r2"
        assert c.execute(sa.text("SELECT COUNT(*) FROM counter WHERE hits IS NULL")).scalar() == 5

    command.downgrade(cfg, "r1")
    insp = inspect(engine)
    assert "hits" not in {c["name"] for c in insp.get_columns("counter")}
    assert insp.get_indexes("counter") == []
    assert {c["name"]: c for c in insp.get_columns("customer")}["name"]["type"].length == 50
    with engine.connect() as c:
        assert c.execute(sa.text("SELECT version_num FROM alembic_version")).scalar() == "r1"
        assert c.execute(sa.text("SELECT COUNT(*) FROM counter")).scalar() == 5
