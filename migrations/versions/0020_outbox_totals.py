"""Totals of sent and failed messages that outlive the outbox rows the retention sweep deletes, so that
`notifier_sent_total` and `notifier_failed_total` only go up.

Revision ID: 0020
Revises: 0019
"""

import sqlalchemy as sa
from alembic import op

revision = "0020"
down_revision = "0019"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "outbox_totals",
        sa.Column("channel", sa.String(8), nullable=False),
        sa.Column("status", sa.String(16), nullable=False),
        sa.Column("reason", sa.String(16), nullable=False),
        sa.Column("count", sa.Integer(), nullable=False),
        sa.PrimaryKeyConstraint("channel", "status", "reason", name="pk_outbox_totals"),
    )


def downgrade() -> None:
    op.drop_table("outbox_totals")
