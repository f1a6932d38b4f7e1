"""Delivery at scale: sending processes, channel health, and the outbox's priorities and fixed messages.

Revision ID: 0006
Revises: 0003
"""

import sqlalchemy as sa
from alembic import op

from notifier.db import UtcDateTime

revision = "0006"
down_revision = "0003"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "senders",
        sa.Column("id", sa.Integer(), primary_key=True),
        sa.Column("host", sa.String(255), nullable=False),
        sa.Column("pid", sa.Integer(), nullable=False),
        sa.Column("kind", sa.String(16), nullable=False),
        sa.Column("started_at", UtcDateTime(), nullable=False),
        sa.Column("heartbeat_at", UtcDateTime(), nullable=False),
        sa.Column("stopped_at", UtcDateTime(), nullable=True),
    )
    op.create_table(
        "channel_health",
        sa.Column("channel", sa.String(8), primary_key=True),
        sa.Column("paused_at", UtcDateTime(), nullable=True),
        sa.Column("reason", sa.Text(), nullable=True),
        sa.Column("code", sa.String(16), nullable=True),
        sa.Column("probed_at", UtcDateTime(), nullable=True),
        sa.Column("resumed_at", UtcDateTime(), nullable=True),
    )
    with op.batch_alter_table("outbox") as batch:
        batch.add_column(sa.Column("priority", sa.Integer(), nullable=False, server_default="1"))
        batch.add_column(sa.Column("payload", sa.Text(), nullable=True))
        batch.add_column(sa.Column("failure", sa.String(16), nullable=True))
        batch.alter_column("contact_id", existing_type=sa.Integer(), nullable=True)
    op.create_index("ix_outbox_claim_order", "outbox", ["channel", "priority", sa.text("urgent DESC"), "id"],
                    sqlite_where=sa.text("status = 'pending'"), postgresql_where=sa.text("status = 'pending'"))


def downgrade() -> None:
    op.drop_index("ix_outbox_claim_order", "outbox")
    op.execute("DELETE FROM outbox WHERE contact_id IS NULL")
    with op.batch_alter_table("outbox") as batch:
        batch.alter_column("contact_id", existing_type=sa.Integer(), nullable=False)
        batch.drop_column("failure")
        batch.drop_column("payload")
        batch.drop_column("priority")
    op.drop_table("channel_health")
    op.drop_table("senders")
