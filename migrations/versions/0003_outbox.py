"""The digest outbox, delivery receipts and the clock's shared state.

Revision ID: 0003
Revises: 0002
"""

import sqlalchemy as sa
from alembic import op

from notifier.db import UtcDateTime

revision = "0003"
down_revision = "0002"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "outbox",
        sa.Column("id", sa.Integer(), primary_key=True),
        sa.Column("contact_id", sa.Integer(), sa.ForeignKey("contacts.id", ondelete="CASCADE"), nullable=False),
        sa.Column("channel", sa.String(8), nullable=False),
        sa.Column("digest_key", sa.String(64), nullable=False),
        sa.Column("event_ids", sa.Text(), nullable=False),
        sa.Column("urgent", sa.Boolean(), nullable=False),
        sa.Column("status", sa.String(16), nullable=False),
        sa.Column("due_at", UtcDateTime(), nullable=False),
        sa.Column("attempts", sa.Integer(), nullable=False),
        sa.Column("claim", sa.String(64), nullable=True),
        sa.Column("claimed_at", UtcDateTime(), nullable=True),
        sa.Column("provider_id", sa.String(255), nullable=True),
        sa.Column("last_error", sa.Text(), nullable=True),
        sa.Column("created_at", UtcDateTime(), nullable=False),
        sa.Column("sent_at", UtcDateTime(), nullable=True),
        sa.UniqueConstraint("contact_id", "digest_key", name="uq_outbox_contact_id"),
    )
    op.create_index("ix_outbox_due", "outbox", ["status", "channel", "due_at"])
    op.create_index("ix_outbox_provider_id", "outbox", ["provider_id"])
    op.create_table(
        "delivery_receipts",
        sa.Column("provider_id", sa.String(255), primary_key=True),
        sa.Column("status", sa.String(16), nullable=False),
        sa.Column("error_code", sa.String(16), nullable=True),
        sa.Column("updated_at", UtcDateTime(), nullable=False),
    )
    op.create_table(
        "clock_state",
        sa.Column("name", sa.String(32), primary_key=True),
        sa.Column("number", sa.Integer(), nullable=False),
        sa.Column("at", UtcDateTime(), nullable=True),
    )


def downgrade() -> None:
    op.drop_table("clock_state")
    op.drop_table("delivery_receipts")
    op.drop_index("ix_outbox_provider_id", "outbox")
    op.drop_index("ix_outbox_due", "outbox")
    op.drop_table("outbox")
