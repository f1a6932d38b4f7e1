"""Staff sessions kept on the server, and a random public id per staff account that is never reused.

The public id is filled for existing accounts here. On SQLite the column stays nullable in the schema (making it
NOT NULL would rebuild staff_members, and dropping that table with foreign keys on would cascade to staff_boards);
the model always gives one. Downgrading drops the sessions (everyone signs in again) and the public ids.

Revision ID: 0010
Revises: 0009
"""

import secrets

import sqlalchemy as sa
from alembic import op

from notifier.db import UtcDateTime

revision = "0010"
down_revision = "0009"
branch_labels = None
depends_on = "0004"  # staff_members is created there


def upgrade() -> None:
    op.add_column("staff_members", sa.Column("public_id", sa.String(32), nullable=True))
    connection = op.get_bind()
    members = sa.table("staff_members", sa.column("id", sa.Integer()), sa.column("public_id", sa.String(32)))
    for (member_id,) in connection.execute(sa.select(members.c.id)).all():
        connection.execute(members.update().where(members.c.id == member_id).values(public_id=secrets.token_hex(16)))
    if connection.dialect.name != "sqlite":
        op.alter_column("staff_members", "public_id", existing_type=sa.String(32), nullable=False)
    op.create_index("ix_staff_members_public_id", "staff_members", ["public_id"], unique=True)
    op.create_table(
        "staff_sessions",
        sa.Column("token_hash", sa.String(64), primary_key=True),
        sa.Column("staff_id", sa.Integer(), sa.ForeignKey("staff_members.id", ondelete="CASCADE"), nullable=False),
        sa.Column("created_at", UtcDateTime(), nullable=False),
        sa.Column("expires_at", UtcDateTime(), nullable=False),
        sa.Column("ip", sa.String(64), nullable=False),
    )
    op.create_index("ix_staff_sessions_staff_id", "staff_sessions", ["staff_id"])
    op.create_index("ix_staff_sessions_expires_at", "staff_sessions", ["expires_at"])


def downgrade() -> None:
    op.drop_table("staff_sessions")
    op.drop_index("ix_staff_members_public_id", table_name="staff_members")
    # Plain ALTER TABLE (SQLite 3.35+ and PostgreSQL): a batch rebuild would drop staff_members and, with foreign
    # keys on, cascade to staff_boards.
    op.execute("ALTER TABLE staff_members DROP COLUMN public_id")
