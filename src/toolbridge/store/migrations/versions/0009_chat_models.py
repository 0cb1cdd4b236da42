"""Which model a chat uses and which wrote each answer; the tools allowed for a chat.

Revision ID: 0009_chat_models
Revises: 0008_stored_responses
Create Date: 2026-11-29
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0009_chat_models"
down_revision: str | None = "0008_stored_responses"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    # Nullable columns only: added in place on SQLite too (no table rebuild).
    op.add_column("chats", sa.Column("model", sa.String(length=200), nullable=True))
    op.add_column("chats", sa.Column("allowed_tools", sa.JSON(), nullable=True))
    op.add_column("messages", sa.Column("model", sa.String(length=200), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("messages") as batch:
        batch.drop_column("model")
    with op.batch_alter_table("chats") as batch:
        batch.drop_column("allowed_tools")
        batch.drop_column("model")
