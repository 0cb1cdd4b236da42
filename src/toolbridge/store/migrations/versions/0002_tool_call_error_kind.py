"""The tool-call log keeps why a call failed (`error_kind`); `timeout` becomes an error of that kind.

Revision ID: 0002_tool_call_error_kind
Revises: 0001_initial
Create Date: 2026-11-22
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0002_tool_call_error_kind"
down_revision: str | None = "0001_initial"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("tool_calls") as batch:
        batch.add_column(sa.Column("error_kind", sa.String(length=30), nullable=True))
    # Rows logged before kept timeouts and declined calls in `status`; other errors' kinds are unknown.
    op.execute("UPDATE tool_calls SET status = 'error', error_kind = 'timeout' WHERE status = 'timeout'")
    op.execute("UPDATE tool_calls SET error_kind = 'denied' WHERE status = 'denied'")


def downgrade() -> None:
    op.execute("UPDATE tool_calls SET status = 'timeout' WHERE error_kind = 'timeout'")
    op.execute("UPDATE tool_calls SET status = 'error' WHERE status = 'cancelled'")
    with op.batch_alter_table("tool_calls") as batch:
        batch.drop_column("error_kind")
