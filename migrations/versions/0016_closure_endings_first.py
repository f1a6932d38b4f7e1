"""A digest saying a closure is over or called off is claimed before other digests: a new priority between the
account messages (0) and the digests, which move from 1 to 2.

A correction saved during a fan-out otherwise waited behind every stale closure still pending (each is settled
only when claimed): at 100 texts a second, tens of seconds for a quarter of a million of them.

Revision ID: 0016
Revises: 0015
"""

import sqlalchemy as sa
from alembic import op

revision = "0016"
down_revision = "0015"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.execute("UPDATE outbox SET priority = 2 WHERE priority = 1")
    _default("2")


def downgrade() -> None:
    op.execute("UPDATE outbox SET priority = 1 WHERE priority = 2")
    _default("1")


def _default(value: str) -> None:
    """PostgreSQL changes the column's default in place. SQLite would have to copy the whole table, whose partial
    indexes a copy may not keep: it keeps the old default, which nothing uses (the model names every row's
    priority)."""
    if op.get_bind().dialect.name == "postgresql":
        op.alter_column("outbox", "priority", existing_type=sa.Integer(), server_default=value)
