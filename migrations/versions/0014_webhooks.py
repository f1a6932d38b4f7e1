"""Webhooks: organisations' endpoints following a board, and a unique key for their outbox rows.

Revision ID: 0014
Revises: 0013
"""

import sqlalchemy as sa
from alembic import op

from notifier.db import UtcDateTime

revision = "0014"
down_revision = "0013"
branch_labels = None
depends_on = "0006"  # the outbox is created on the delivery branch (0003, 0006)


def upgrade() -> None:
    op.create_table(
        "webhook_endpoints",
        sa.Column("id", sa.Integer(), primary_key=True),
        sa.Column("public_id", sa.String(32), nullable=False),
        sa.Column("board_id", sa.String(32), nullable=False),
        sa.Column("panels", sa.String(64), nullable=False),
        sa.Column("url", sa.Text(), nullable=False),
        sa.Column("format", sa.String(8), nullable=False),
        sa.Column("language", sa.String(2), nullable=False),
        sa.Column("secret", sa.String(128), nullable=False),
        sa.Column("owner_email", sa.String(254), nullable=True),
        sa.Column("added_by", sa.String(254), nullable=False),
        sa.Column("created_at", UtcDateTime(), nullable=False),
        sa.Column("failing_since", UtcDateTime(), nullable=True),
        sa.Column("last_error", sa.Text(), nullable=True),
        sa.Column("disabled_at", UtcDateTime(), nullable=True),
        sa.Column("disabled_reason", sa.Text(), nullable=True),
        sa.Column("owner_notified_at", UtcDateTime(), nullable=True),
        sa.PrimaryKeyConstraint("id", name="pk_webhook_endpoints"),
        sa.UniqueConstraint("public_id", name="uq_webhook_endpoints_public_id"),
        sqlite_autoincrement=True,
    )
    op.create_index("ix_webhook_endpoints_board_id", "webhook_endpoints", ["board_id"])
    op.create_index("uq_outbox_webhook_key", "outbox", ["digest_key"], unique=True,
                    sqlite_where=sa.text("channel = 'webhook'"), postgresql_where=sa.text("channel = 'webhook'"))


def downgrade() -> None:
    op.drop_index("uq_outbox_webhook_key", table_name="outbox")
    op.drop_index("ix_webhook_endpoints_board_id", table_name="webhook_endpoints")
    op.drop_table("webhook_endpoints")
