"""TestCases run by `manage.py test` (so Django creates and drops the test database, and wraps
every test in atomic() blocks, i.e. transactions and savepoints). Each checks the rows, counts
and values the ORM reads back, not only that no exception was raised."""

import datetime
from decimal import Decimal

from django.db import IntegrityError, connection, transaction
from django.db.models import Count, Exists, F, Max, OuterRef, Subquery, Sum
from django.test import TestCase, TransactionTestCase

from shop.models import Author, Book, Review, Tag

UTC = datetime.timezone.utc


def when(day, micro=0):
    return datetime.datetime(2024, 3, day, 10, 20, 30, micro, tzinfo=UTC)


class Catalogue(TestCase):
    @classmethod
    def setUpTestData(cls):
        cls.ann = Author.objects.create(name="Ann", email="ann@example.com")
        cls.bob = Author.objects.create(name="Bob")
        cls.cy = Author.objects.create(name="Cy")
        Tag.objects.bulk_create([Tag(name="sf"), Tag(name="crime"), Tag(name="old")])
        # MySQL sends back no ids from a multi-row INSERT (MariaDB does, with RETURNING).
        cls.sf, cls.crime, cls.old = (Tag.objects.get(name=n) for n in ("sf", "crime", "old"))
        cls.b1 = Book.objects.create(
            title="Dune", author=cls.ann, published=when(1, 123456), price=Decimal("9.99"),
            copies=3, meta={"pages": 412, "lang": "en", "awards": ["hugo", "nebula"]},
        )
        cls.b2 = Book.objects.create(
            title="Emma", author=cls.ann, published=when(2, 1), price=Decimal("5.50"), copies=0,
            meta={"pages": 300, "lang": "en"},
        )
        cls.b3 = Book.objects.create(
            title="Maigret", author=cls.bob, published=when(3), price=Decimal("7.25"), copies=8,
            meta={"pages": 190, "lang": "fr"},
        )
        cls.b1.tags.set([cls.sf, cls.old])
        cls.b3.tags.add(cls.crime, cls.old)
        Review.objects.create(book=cls.b1, reviewer="zed", rating=5)
        Review.objects.create(book=cls.b1, reviewer="yan", rating=3)
        Review.objects.create(book=cls.b3, reviewer="zed", rating=4)

    def test_datetime_microseconds_round_trip(self):
        self.assertEqual(Book.objects.get(title="Dune").published, when(1, 123456))
        self.assertEqual(Book.objects.get(title="Emma").published, when(2, 1))
        self.assertEqual(
            list(Book.objects.filter(published__gt=when(1, 123456)).values_list("title", flat=True).order_by("title")),
            ["Emma", "Maigret"],
        )

    def test_json_field(self):
        dune = Book.objects.get(pk=self.b1.pk)
        self.assertEqual(dune.meta, {"pages": 412, "lang": "en", "awards": ["hugo", "nebula"]})
        self.assertEqual(
            sorted(Book.objects.filter(meta__lang="en").values_list("title", flat=True)), ["Dune", "Emma"]
        )
        self.assertEqual(list(Book.objects.filter(meta__pages__gt=250).order_by("title").values_list("title", flat=True)), ["Dune", "Emma"])
        self.assertEqual(list(Book.objects.filter(meta__has_key="awards").values_list("title", flat=True)), ["Dune"])

    def test_annotate_count_and_aggregates(self):
        rows = list(
            Author.objects.annotate(n=Count("books")).order_by("name").values_list("name", "n")
        )
        self.assertEqual(rows, [("Ann", 2), ("Bob", 1), ("Cy", 0)])
        tagged = dict(Tag.objects.annotate(n=Count("books")).values_list("name", "n"))
        self.assertEqual(tagged, {"sf": 1, "crime": 1, "old": 2})
        self.assertEqual(Book.objects.aggregate(s=Sum("copies"))["s"], 11)

    def test_subquery_outerref_exists(self):
        newest = Book.objects.filter(author=OuterRef("pk")).order_by("-published")
        rows = list(
            Author.objects.annotate(latest=Subquery(newest.values("title")[:1]))
            .order_by("name").values_list("name", "latest")
        )
        self.assertEqual(rows, [("Ann", "Emma"), ("Bob", "Maigret"), ("Cy", None)])
        reviewed = Review.objects.filter(book=OuterRef("pk"), rating__gte=4)
        self.assertEqual(
            list(Book.objects.filter(Exists(reviewed)).order_by("title").values_list("title", flat=True)),
            ["Dune", "Maigret"],
        )
        self.assertEqual(
            list(Book.objects.filter(~Exists(Review.objects.filter(book=OuterRef("pk")))).values_list("title", flat=True)),
            ["Emma"],
        )
        best = Review.objects.filter(book=OuterRef("pk")).values("book").annotate(m=Max("rating")).values("m")
        self.assertEqual(
            dict(Book.objects.annotate(best=Subquery(best)).values_list("title", "best")),
            {"Dune": 5, "Emma": None, "Maigret": 4},
        )

    def test_select_related_and_prefetch_related(self):
        with self.assertNumQueries(1):
            names = [b.author.name for b in Book.objects.select_related("author").order_by("title")]
        self.assertEqual(names, ["Ann", "Ann", "Bob"])
        with self.assertNumQueries(2):
            tags = {b.title: sorted(t.name for t in b.tags.all()) for b in Book.objects.prefetch_related("tags")}
        self.assertEqual(tags, {"Dune": ["old", "sf"], "Emma": [], "Maigret": ["crime", "old"]})

    def test_get_or_create_and_update_or_create(self):
        tag, created = Tag.objects.get_or_create(name="sf")
        self.assertFalse(created)
        self.assertEqual(tag.pk, self.sf.pk)
        tag, created = Tag.objects.get_or_create(name="poetry")
        self.assertTrue(created)
        self.assertEqual(Tag.objects.count(), 4)
        a, created = Author.objects.update_or_create(name="Bob", defaults={"email": "bob@example.com"})
        self.assertFalse(created)
        self.assertEqual(Author.objects.get(pk=self.bob.pk).email, "bob@example.com")
        a, created = Author.objects.update_or_create(name="Dee", defaults={"email": "dee@example.com"})
        self.assertTrue(created)
        self.assertEqual(Author.objects.get(name="Dee").email, "dee@example.com")

    def test_bulk_create_and_f_updates(self):
        made = Book.objects.bulk_create(
            [
                Book(title=f"Vol {i}", author=self.cy, published=when(10 + i, i), price=Decimal("1.00") * i, copies=i)
                for i in range(1, 6)
            ]
        )
        self.assertEqual(len(made), 5)
        # MySQL returns no ids from a multi-row INSERT; the rows are there all the same.
        self.assertEqual(Book.objects.filter(author=self.cy).count(), 5)
        n = Book.objects.filter(author=self.cy).update(copies=F("copies") * 10 + 1)
        self.assertEqual(n, 5)
        self.assertEqual(
            list(Book.objects.filter(author=self.cy).order_by("copies").values_list("copies", flat=True)),
            [11, 21, 31, 41, 51],
        )
        # An update that changes nothing still counts the matched rows (CLIENT_FOUND_ROWS).
        self.assertEqual(Book.objects.filter(author=self.cy).update(copies=F("copies")), 5)
        Book.objects.filter(pk=self.b2.pk).update(price=F("price") + Decimal("0.25"))
        self.assertEqual(Book.objects.get(pk=self.b2.pk).price, Decimal("5.75"))

    def test_unique_constraints_inside_savepoints(self):
        with self.assertRaises(IntegrityError):
            with transaction.atomic():
                Book.objects.create(title="Dune", author=self.ann, published=when(5), price=1)
        with self.assertRaises(IntegrityError):
            with transaction.atomic():
                Review.objects.create(book=self.b1, reviewer="zed", rating=1)
        # The outer transaction (the TestCase's) is still usable and saw no partial write.
        self.assertEqual(Book.objects.filter(title="Dune").count(), 1)
        self.assertEqual(Review.objects.count(), 3)
        Review.objects.create(book=self.b2, reviewer="zed", rating=2)
        self.assertEqual(Review.objects.count(), 4)

    def test_nested_atomic_rolls_back_inner_only(self):
        with transaction.atomic():
            Tag.objects.create(name="outer")
            try:
                with transaction.atomic():
                    Tag.objects.create(name="inner")
                    raise RuntimeError("roll the savepoint back")
            except RuntimeError:
                pass
        self.assertTrue(Tag.objects.filter(name="outer").exists())
        self.assertFalse(Tag.objects.filter(name="inner").exists())

    def test_cascade_delete(self):
        self.ann.delete()
        self.assertEqual(sorted(Book.objects.values_list("title", flat=True)), ["Maigret"])
        self.assertEqual(Review.objects.count(), 1)
        self.assertEqual(Book.tags.through.objects.count(), 2)


class Transactions(TransactionTestCase):
    """Real commits (no wrapping transaction): the table is flushed between tests."""

    def test_commit_and_rollback(self):
        a = Author.objects.create(name="T1")
        try:
            with transaction.atomic():
                Author.objects.filter(pk=a.pk).update(email="changed")
                raise RuntimeError("abort")
        except RuntimeError:
            pass
        self.assertEqual(Author.objects.get(pk=a.pk).email, "")
        with transaction.atomic():
            Author.objects.filter(pk=a.pk).update(email="kept")
        self.assertEqual(Author.objects.get(pk=a.pk).email, "kept")
        self.assertFalse(connection.in_atomic_block)
