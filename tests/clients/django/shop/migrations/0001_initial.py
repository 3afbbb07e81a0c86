"""First schema: every table, the FK and M2M, a unique_together, a UniqueConstraint and an
index on Book.published."""

from django.db import migrations, models
import django.db.models.deletion


class Migration(migrations.Migration):
    initial = True
    dependencies = []

    operations = [
        migrations.CreateModel(
            name="Author",
            fields=[
                ("id", models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name="ID")),
                ("name", models.CharField(max_length=100, unique=True)),
                ("legacy_code", models.CharField(max_length=20, default="")),
            ],
        ),
        migrations.CreateModel(
            name="Tag",
            fields=[
                ("id", models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name="ID")),
                ("name", models.CharField(max_length=50, unique=True)),
            ],
        ),
        migrations.CreateModel(
            name="Book",
            fields=[
                ("id", models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name="ID")),
                ("title", models.CharField(max_length=200)),
                ("author", models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name="books", to="shop.author")),
                ("tags", models.ManyToManyField(blank=True, related_name="books", to="shop.tag")),
                ("meta", models.JSONField(default=dict)),
                ("published", models.DateTimeField()),
                ("price", models.DecimalField(decimal_places=2, max_digits=8)),
                ("stock", models.IntegerField(default=0)),
            ],
            options={
                "constraints": [models.UniqueConstraint(fields=("author", "title"), name="uniq_author_title")],
                "indexes": [models.Index(fields=["published"], name="book_published_idx")],
            },
        ),
        migrations.CreateModel(
            name="Review",
            fields=[
                ("id", models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name="ID")),
                ("book", models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name="reviews", to="shop.book")),
                ("reviewer", models.CharField(max_length=100)),
                ("rating", models.IntegerField()),
                ("written", models.DateTimeField(auto_now_add=True)),
            ],
            options={"unique_together": {("book", "reviewer")}},
        ),
    ]
