"""Subscribers, their contacts, what they follow, consent records, the consent hash key and rate-limit counters.

Revision ID: 0002
Revises: 0001
"""

import sqlalchemy as sa
from alembic import op

from notifier.db import UtcDateTime

revision = "0002"
down_revision = "0001"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "subscribers",
        sa.Column("id", sa.Integer(), primary_key=True),
        sa.Column("language", sa.String(2), nullable=False),
        sa.Column("notify_on_effect", sa.Boolean(), nullable=False),
        sa.Column("created_at", UtcDateTime(), nullable=False),
        sqlite_autoincrement=True,
    )
    op.create_table(
        "contacts",
        sa.Column("id", sa.Integer(), primary_key=True),
        sa.Column("subscriber_id", sa.Integer(), sa.ForeignKey("subscribers.id", ondelete="CASCADE"),
                  nullable=False),
        sa.Column("channel", sa.String(8), nullable=False),
        sa.Column("address", sa.String(320), nullable=False),
        sa.Column("status", sa.String(16), nullable=False),
        sa.Column("frequency", sa.String(16), nullable=False),
        sa.Column("created_at", UtcDateTime(), nullable=False),
        sa.Column("confirmed_at", UtcDateTime(), nullable=True),
        sa.Column("status_changed_at", UtcDateTime(), nullable=True),
        sa.Column("seen_event_id", sa.Integer(), nullable=False),
        sa.UniqueConstraint("channel", "address", name="uq_contacts_channel_address"),
        sqlite_autoincrement=True,
    )
    op.create_index("ix_contacts_subscriber_id", "contacts", ["subscriber_id"])
    op.create_index("ix_contacts_status", "contacts", ["status"])
    op.create_table(
        "follows",
        sa.Column("id", sa.Integer(), primary_key=True),
        sa.Column("subscriber_id", sa.Integer(), sa.ForeignKey("subscribers.id", ondelete="CASCADE"),
                  nullable=False),
        sa.Column("board_id", sa.String(32), nullable=False),
        sa.Column("panel", sa.String(16), nullable=False),
        sa.UniqueConstraint("subscriber_id", "board_id", "panel", name="uq_follows_subscriber_board"),
    )
    op.create_index("ix_follows_subscriber_id", "follows", ["subscriber_id"])
    op.create_index("ix_follows_board_id", "follows", ["board_id"])
    op.create_table(
        "consents",
        sa.Column("id", sa.Integer(), primary_key=True),
        sa.Column("subscriber_id", sa.Integer(), nullable=True),
        sa.Column("channel", sa.String(8), nullable=False),
        sa.Column("address_hash", sa.String(64), nullable=False),
        sa.Column("address_masked", sa.String(64), nullable=False),
        sa.Column("action", sa.String(16), nullable=False),
        sa.Column("method", sa.String(16), nullable=False),
        sa.Column("source", sa.String(128), nullable=False),
        sa.Column("text_version", sa.String(32), nullable=False),
        sa.Column("language", sa.String(2), nullable=False),
        sa.Column("note", sa.Text(), nullable=False),
        sa.Column("at", UtcDateTime(), nullable=False),
    )
    op.create_index("ix_consents_subscriber_id", "consents", ["subscriber_id"])
    op.create_index("ix_consents_address_hash", "consents", ["address_hash"])
    op.create_table(
        "consent_keys",
        sa.Column("id", sa.Integer(), primary_key=True),
        sa.Column("key", sa.String(64), nullable=False),
    )
    op.create_table(
        "rate_counters",
        sa.Column("key", sa.String(160), primary_key=True),
        sa.Column("window_start", sa.BigInteger(), primary_key=True),
        sa.Column("count", sa.Integer(), nullable=False),
    )


def downgrade() -> None:
    op.drop_table("rate_counters")
    op.drop_table("consent_keys")
    op.drop_table("consents")
    op.drop_table("follows")
    op.drop_table("contacts")
    op.drop_table("subscribers")
