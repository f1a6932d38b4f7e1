"""Core tables: recorded board states, change events, clock cycles, named locks.

Revision ID: 0001
Revises:
"""

import sqlalchemy as sa
from alembic import op

from notifier.db import UtcDateTime

revision = "0001"
down_revision = None
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "board_states",
        sa.Column("board_id", sa.String(32), primary_key=True),
        sa.Column("data", sa.JSON(), nullable=False),
        sa.Column("file_version", sa.String(32), nullable=False),
        sa.Column("recorded_at", UtcDateTime(), nullable=False),
        sa.Column("pending_effective", UtcDateTime(), nullable=True),
    )
    op.create_table(
        "cycles",
        sa.Column("id", sa.Integer(), primary_key=True),
        sa.Column("started_at", UtcDateTime(), nullable=False),
        sa.Column("finished_at", UtcDateTime(), nullable=True),
        sa.Column("outcome", sa.String(16), nullable=False),
        sa.Column("detail", sa.Text(), nullable=False),
        sa.Column("file_version", sa.String(32), nullable=True),
    )
    op.create_table(
        "change_events",
        sa.Column("id", sa.Integer(), primary_key=True),
        sa.Column("cycle_id", sa.Integer(), sa.ForeignKey("cycles.id"), nullable=True),
        sa.Column("board_id", sa.String(32), nullable=False),
        sa.Column("kind", sa.String(32), nullable=False),
        sa.Column("panel", sa.String(16), nullable=True),
        sa.Column("key", sa.String(64), nullable=True),
        sa.Column("before", sa.JSON(), nullable=True),
        sa.Column("after", sa.JSON(), nullable=True),
        sa.Column("urgent", sa.Boolean(), nullable=False),
        sa.Column("notify", sa.Boolean(), nullable=False, server_default=sa.true()),
        sa.Column("effective_at", UtcDateTime(), nullable=True),
        sa.Column("recorded_at", UtcDateTime(), nullable=False),
    )
    op.create_index("ix_change_events_board_id", "change_events", ["board_id"])
    op.create_index("ix_change_events_recorded_at", "change_events", ["recorded_at"])
    op.create_table(
        "locks",
        sa.Column("name", sa.String(32), primary_key=True),
        sa.Column("held_at", UtcDateTime(), nullable=True),
    )


def downgrade() -> None:
    op.drop_table("locks")
    op.drop_table("change_events")
    op.drop_table("cycles")
    op.drop_table("board_states")
