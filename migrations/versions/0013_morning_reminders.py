"""Morning reminders: a contact may ask for a short reminder each school morning while a disruption lasts.

Revision ID: 0013
Revises: 0012
"""

import sqlalchemy as sa
from alembic import op

revision = "0013"
down_revision = "0012"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("contacts") as table:
        table.add_column(sa.Column("morning_reminder", sa.Boolean(), nullable=False, server_default=sa.false()))


def downgrade() -> None:
    with op.batch_alter_table("contacts") as table:
        table.drop_column("morning_reminder")
