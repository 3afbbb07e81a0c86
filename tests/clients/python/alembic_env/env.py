"""Alembic environment for test_sqlalchemy.py: the URL and the target metadata come from the
test through the Config's attributes, so no ini file or network is involved."""

from alembic import context

config = context.config
target_metadata = config.attributes["target_metadata"]

with config.attributes["engine"].connect() as connection:
    context.configure(connection=connection, target_metadata=target_metadata, compare_type=True)
    with context.begin_transaction():
        context.run_migrations()
