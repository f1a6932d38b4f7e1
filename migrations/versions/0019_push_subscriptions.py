"""Web Push: one browser's subscription (endpoint and keys) per push contact.

Revision ID: 0019
Revises: 0018
"""

import sqlalchemy as sa
from alembic import op

from notifier.db import UtcDateTime

revision = "0019"
down_revision = "0018"
branch_labels = None
depends_on = "0002"  # contacts are created on the subscriptions branch


def upgrade() -> None:
    op.create_table(
        "push_subscriptions",
        sa.Column("id", sa.Integer(), primary_key=True),
        sa.Column("contact_id", sa.Integer(), sa.ForeignKey("contacts.id", ondelete="CASCADE",
                                                              name="fk_push_subscriptions_contact_id_contacts"),
                  nullable=False),
        sa.Column("endpoint_hash", sa.String(64), nullable=False),
        sa.Column("endpoint", sa.Text(), nullable=False),
        sa.Column("p256dh", sa.String(128), nullable=False),
        sa.Column("auth", sa.String(64), nullable=False),
        sa.Column("created_at", UtcDateTime(), nullable=False),
        sa.Column("updated_at", UtcDateTime(), nullable=False),
        sa.PrimaryKeyConstraint("id", name="pk_push_subscriptions"),
        sa.UniqueConstraint("endpoint_hash", name="uq_push_subscriptions_endpoint_hash"),
        sa.UniqueConstraint("contact_id", name="uq_push_subscriptions_contact_id"),
        sqlite_autoincrement=True,
    )


def downgrade() -> None:
    op.drop_table("push_subscriptions")
