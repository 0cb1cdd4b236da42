"""User messages keep the resources attached to them (`attachments`, content parts as JSON).

Revision ID: 0003_message_attachments
Revises: 0002_tool_call_error_kind
Create Date: 2026-11-22
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0003_message_attachments"
down_revision: str | None = "0002_tool_call_error_kind"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("messages") as batch:
        batch.add_column(sa.Column("attachments", sa.JSON(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("messages") as batch:
        batch.drop_column("attachments")
