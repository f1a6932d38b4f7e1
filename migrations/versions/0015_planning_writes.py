"""Cheaper writes for a fan-out: room in each contacts page for its update, no index entry for an unsent message.

Planning moves every planned contact's `seen_event_id` on. On PostgreSQL that update is "HOT" (no index touched)
only when the row's new version fits in the same page: with pages half full, all of a fan-out's updates are. The
setting applies to pages written from now on (`VACUUM FULL contacts` rewrites the existing ones). The provider-id
index only serves rows that have a provider id, so planned rows no longer add an entry each.

Revision ID: 0015
Revises: 0014
"""

import sqlalchemy as sa
from alembic import op

revision = "0015"
down_revision = "0014"
branch_labels = None
depends_on = None

HAS_PROVIDER_ID = sa.text("provider_id IS NOT NULL")


def upgrade() -> None:
    op.drop_index("ix_outbox_provider_id", table_name="outbox")
    op.create_index("ix_outbox_provider_id", "outbox", ["provider_id"], sqlite_where=HAS_PROVIDER_ID,
                    postgresql_where=HAS_PROVIDER_ID)
    if op.get_bind().dialect.name == "postgresql":
        op.execute("ALTER TABLE contacts SET (fillfactor = 50)")


def downgrade() -> None:
    if op.get_bind().dialect.name == "postgresql":
        op.execute("ALTER TABLE contacts RESET (fillfactor)")
    op.drop_index("ix_outbox_provider_id", table_name="outbox")
    op.create_index("ix_outbox_provider_id", "outbox", ["provider_id"])
