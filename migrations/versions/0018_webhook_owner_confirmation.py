"""A webhook's owner confirms their address before any mail but the confirmation goes to it: when the
confirmation was sent (`owner_asked_at`) and when the owner confirmed (`owner_confirmed_at`).

Endpoints added before keep their owner unconfirmed: the next planning pass sends each such owner a confirmation
link, and until they confirm, no "webhook turned off" email goes to them.

Revision ID: 0018
Revises: 0017
"""

import sqlalchemy as sa
from alembic import op

from notifier.db import UtcDateTime

revision = "0018"
down_revision = "0017"
branch_labels = None
depends_on = None


def upgrade() -> None:
    # Plain ALTER TABLE ... ADD COLUMN (nullable, no default): SQLite and PostgreSQL both do it in place.
    op.add_column("webhook_endpoints", sa.Column("owner_asked_at", UtcDateTime(), nullable=True))
    op.add_column("webhook_endpoints", sa.Column("owner_confirmed_at", UtcDateTime(), nullable=True))


def downgrade() -> None:
    # SQLite 3.35+ and PostgreSQL drop a column in place.
    op.drop_column("webhook_endpoints", "owner_confirmed_at")
    op.drop_column("webhook_endpoints", "owner_asked_at")
