"""Models covering the column and constraint kinds Django emits for MySQL: a ForeignKey, a
ManyToMany (through table), JSONField, DateTimeField with microseconds, DecimalField, a
unique_together, a UniqueConstraint and named indexes. This is the state after migration 0003."""

from django.db import models


class Author(models.Model):
    name = models.CharField(max_length=100, unique=True)
    email = models.CharField(max_length=200, default="")  # added by 0002
    # legacy_code existed up to 0002 and is removed by 0003

    def __str__(self):
        return self.name


class Tag(models.Model):
    name = models.CharField(max_length=50, unique=True)


class Book(models.Model):
    title = models.CharField(max_length=200)
    author = models.ForeignKey(Author, on_delete=models.CASCADE, related_name="books")
    tags = models.ManyToManyField(Tag, related_name="books", blank=True)
    meta = models.JSONField(default=dict)
    published = models.DateTimeField()
    price = models.DecimalField(max_digits=8, decimal_places=2)
    copies = models.IntegerField(default=0)  # called `stock` before 0003

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["author", "title"], name="uniq_author_title"),
        ]
        indexes = [models.Index(fields=["published"], name="book_published_idx")]


class Review(models.Model):
    book = models.ForeignKey(Book, on_delete=models.CASCADE, related_name="reviews")
    reviewer = models.CharField(max_length=100)
    rating = models.IntegerField()
    written = models.DateTimeField(auto_now_add=True)

    class Meta:
        unique_together = [("book", "reviewer")]
