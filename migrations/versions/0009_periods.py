"""Announced periods: change events say whether they happened by themselves, as announced.

Revision ID: 0009
Revises: 0001
"""

import sqlalchemy as sa
from alembic import op

revision = "0009"
down_revision = "0001"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("change_events") as table:
        table.add_column(sa.Column("scheduled", sa.Boolean(), nullable=False, server_default=sa.false()))


def downgrade() -> None:
    with op.batch_alter_table("change_events") as table:
        table.drop_column("scheduled")
