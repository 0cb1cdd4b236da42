"""Tokens a run in flight holds back from its user's day, on the run's `model_usage` row.

Revision ID: 0007_model_usage_reserved
Revises: 0006_runs_across_replicas
Create Date: 2026-11-28
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0007_model_usage_reserved"
down_revision: str | None = "0006_runs_across_replicas"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.add_column(
        "model_usage", sa.Column("reserved_tokens", sa.Integer(), nullable=False, server_default="0")
    )


def downgrade() -> None:
    with op.batch_alter_table("model_usage") as batch:
        batch.drop_column("reserved_tokens")
