"""Second migration: adds a column (Author.email, with a default for existing rows) and an
index (Book.title)."""

from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [("shop", "0001_initial")]

    operations = [
        migrations.AddField(
            model_name="author",
            name="email",
            field=models.CharField(default="", max_length=200),
        ),
        migrations.AddIndex(
            model_name="book",
            index=models.Index(fields=["title"], name="book_title_idx"),
        ),
    ]
