"""Inbound texts acted on once: MessageSids seen, and when a contact's last texted keyword was applied.

Revision ID: 0011
Revises: 0010
"""

import sqlalchemy as sa
from alembic import op

from notifier.db import UtcDateTime

revision = "0011"
down_revision = "0010"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "inbound_texts",
        sa.Column("sid", sa.String(64), nullable=False),
        sa.Column("received_at", UtcDateTime(), nullable=False),
        sa.PrimaryKeyConstraint("sid", name="pk_inbound_texts"),
    )
    with op.batch_alter_table("contacts") as table:
        table.add_column(sa.Column("keyword_at", UtcDateTime(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("contacts") as table:
        table.drop_column("keyword_at")
    op.drop_table("inbound_texts")
