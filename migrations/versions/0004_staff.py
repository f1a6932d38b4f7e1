"""Staff accounts, the boards they may publish for, sign-in links, and the staff audit trail.

Revision ID: 0004
Revises: 0002
"""

import sqlalchemy as sa
from alembic import op

from notifier.db import UtcDateTime

revision = "0004"
down_revision = "0002"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "staff_members",
        sa.Column("id", sa.Integer(), primary_key=True),
        sa.Column("email", sa.String(320), nullable=False),
        sa.Column("is_admin", sa.Boolean(), nullable=False),
        sa.Column("created_at", UtcDateTime(), nullable=False),
        sa.UniqueConstraint("email", name="uq_staff_members_email"),
    )
    op.create_table(
        "staff_boards",
        sa.Column("id", sa.Integer(), primary_key=True),
        sa.Column("staff_id", sa.Integer(), sa.ForeignKey("staff_members.id", ondelete="CASCADE"), nullable=False),
        sa.Column("board_id", sa.String(32), nullable=False),
        sa.UniqueConstraint("staff_id", "board_id", name="uq_staff_boards_staff_board"),
    )
    op.create_index("ix_staff_boards_staff_id", "staff_boards", ["staff_id"])
    op.create_table(
        "staff_signin_tokens",
        sa.Column("id", sa.Integer(), primary_key=True),
        sa.Column("staff_id", sa.Integer(), sa.ForeignKey("staff_members.id", ondelete="CASCADE"), nullable=False),
        sa.Column("token_hash", sa.String(64), nullable=False),
        sa.Column("created_at", UtcDateTime(), nullable=False),
        sa.Column("expires_at", UtcDateTime(), nullable=False),
        sa.Column("used_at", UtcDateTime(), nullable=True),
        sa.UniqueConstraint("token_hash", name="uq_staff_signin_tokens_token_hash"),
    )
    op.create_index("ix_staff_signin_tokens_staff_id", "staff_signin_tokens", ["staff_id"])
    op.create_table(
        "staff_audit",
        sa.Column("id", sa.Integer(), primary_key=True),
        sa.Column("at", UtcDateTime(), nullable=False),
        sa.Column("staff_email", sa.String(320), nullable=False),
        sa.Column("action", sa.String(32), nullable=False),
        sa.Column("board_id", sa.String(32), nullable=True),
        sa.Column("summary", sa.Text(), nullable=False),
        sa.Column("changes", sa.JSON(), nullable=False),
        sa.Column("notify", sa.Boolean(), nullable=True),
        sa.Column("ip", sa.String(64), nullable=False),
        sa.Column("file_version", sa.String(32), nullable=True),
    )
    op.create_index("ix_staff_audit_at", "staff_audit", ["at"])
    op.create_index("ix_staff_audit_board_id", "staff_audit", ["board_id"])


def downgrade() -> None:
    op.drop_table("staff_audit")
    op.drop_table("staff_signin_tokens")
    op.drop_table("staff_boards")
    op.drop_table("staff_members")
