"""The one app of the compatibility project: authors, books, tags and reviews."""
