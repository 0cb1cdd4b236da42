"""Alembic's environment: toolbridge runs migrations itself, on a connection it opened (see `_engine`).

A new revision is a file in `versions/` named like `0002_what_changes.py`, with the same string as its
`revision` (see `script.py.mako`). tests/store/test_migrations.py fails until the migrated schema matches
the models in `_schema.py`.
"""

from alembic import context

from toolbridge.store._schema import Base

connection = context.config.attributes.get("connection")
if connection is None:
    raise RuntimeError("toolbridge migrations run through toolbridge.store.Store, which passes a connection")

context.configure(
    connection=connection,
    target_metadata=Base.metadata,
    render_as_batch=True,  # SQLite cannot ALTER most things; batch mode rebuilds the table instead
    compare_type=True,
)
with context.begin_transaction():
    context.run_migrations()
