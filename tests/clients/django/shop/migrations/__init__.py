"""Migrations of the shop app, applied in order by run.py (0002 and 0003 alter the schema)."""
