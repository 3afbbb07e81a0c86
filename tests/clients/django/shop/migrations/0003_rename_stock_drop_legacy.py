"""Third migration: renames a column (Book.stock -> copies), removes one (Author.legacy_code)
and removes the index 0002 added."""

from django.db import migrations


class Migration(migrations.Migration):
    dependencies = [("shop", "0002_author_email_book_title_idx")]

    operations = [
        migrations.RenameField(model_name="book", old_name="stock", new_name="copies"),
        migrations.RemoveField(model_name="author", name="legacy_code"),
        migrations.RemoveIndex(model_name="book", name="book_title_idx"),
    ]
