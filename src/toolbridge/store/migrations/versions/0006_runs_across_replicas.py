"""Runs with leases, their events and signals as rows, and users' requests: what replicas share.

Revision ID: 0006_runs_across_replicas
Revises: 0005_users_and_keys
Create Date: 2026-11-22
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0006_runs_across_replicas"
down_revision: str | None = "0005_users_and_keys"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def _timestamp(name: str, *, nullable: bool = False) -> sa.Column[object]:
    return sa.Column(name, sa.DateTime(timezone=True), nullable=nullable)


def upgrade() -> None:
    op.create_table(
        "runs",
        sa.Column("id", sa.String(length=64), nullable=False),
        sa.Column("chat_id", sa.Integer(), nullable=False),
        sa.Column("replica", sa.String(length=200), nullable=False),
        sa.Column("status", sa.String(length=20), nullable=False),
        _timestamp("started_at"),
        _timestamp("lease_until"),
        _timestamp("ended_at", nullable=True),
        sa.ForeignKeyConstraint(["chat_id"], ["chats.id"], name="fk_runs_chat_id_chats", ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("id", name="pk_runs"),
    )
    running = sa.text("status = 'running'")
    op.create_index(
        "uq_runs_chat_id_running",
        "runs",
        ["chat_id"],
        unique=True,
        sqlite_where=running,
        postgresql_where=running,
    )
    op.create_index("ix_runs_status_lease_until", "runs", ["status", "lease_until"])
    op.create_table(
        "run_events",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("chat_id", sa.Integer(), nullable=False),
        sa.Column("run_id", sa.String(length=64), nullable=False),
        sa.Column("data", sa.Text(), nullable=False),
        _timestamp("created_at"),
        sa.ForeignKeyConstraint(
            ["chat_id"], ["chats.id"], name="fk_run_events_chat_id_chats", ondelete="CASCADE"
        ),
        sa.ForeignKeyConstraint(
            ["run_id"], ["runs.id"], name="fk_run_events_run_id_runs", ondelete="CASCADE"
        ),
        sa.PrimaryKeyConstraint("id", name="pk_run_events"),
    )
    op.create_index("ix_run_events_chat_id_id", "run_events", ["chat_id", "id"])
    op.create_table(
        "run_signals",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("run_id", sa.String(length=64), nullable=False),
        sa.Column("kind", sa.String(length=20), nullable=False),
        sa.Column("call_id", sa.String(length=200), nullable=True),
        sa.Column("payload", sa.Text(), nullable=True),
        _timestamp("created_at"),
        sa.ForeignKeyConstraint(
            ["run_id"], ["runs.id"], name="fk_run_signals_run_id_runs", ondelete="CASCADE"
        ),
        sa.PrimaryKeyConstraint("id", name="pk_run_signals"),
    )
    op.create_index("ix_run_signals_run_id_id", "run_signals", ["run_id", "id"])
    op.create_table(
        "user_requests",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("user_name", sa.String(length=200), nullable=False),
        _timestamp("at"),
        sa.PrimaryKeyConstraint("id", name="pk_user_requests"),
    )
    op.create_index("ix_user_requests_user_name_at", "user_requests", ["user_name", "at"])


def downgrade() -> None:
    op.drop_index("ix_user_requests_user_name_at", table_name="user_requests")
    op.drop_table("user_requests")
    op.drop_index("ix_run_signals_run_id_id", table_name="run_signals")
    op.drop_table("run_signals")
    op.drop_index("ix_run_events_chat_id_id", table_name="run_events")
    op.drop_table("run_events")
    op.drop_index("ix_runs_status_lease_until", table_name="runs")
    op.drop_index("uq_runs_chat_id_running", table_name="runs")
    op.drop_table("runs")
