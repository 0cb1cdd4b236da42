"""Stored `/v1/responses` answers, for `previous_response_id`.

Revision ID: 0008_stored_responses
Revises: 0007_model_usage_reserved
Create Date: 2026-11-29
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0008_stored_responses"
down_revision: str | None = "0007_model_usage_reserved"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "stored_responses",
        sa.Column("id", sa.String(length=100), nullable=False),
        sa.Column("user_id", sa.Integer(), nullable=True),
        sa.Column("messages", sa.JSON(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("id", name="pk_stored_responses"),
    )
    op.create_index("ix_stored_responses_user_id", "stored_responses", ["user_id"])
    op.create_index("ix_stored_responses_created_at", "stored_responses", ["created_at"])


def downgrade() -> None:
    op.drop_index("ix_stored_responses_created_at", table_name="stored_responses")
    op.drop_index("ix_stored_responses_user_id", table_name="stored_responses")
    op.drop_table("stored_responses")
