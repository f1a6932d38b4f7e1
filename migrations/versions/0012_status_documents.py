"""The published status document: every version of boards.yaml's text, shared by every process.

Revision ID: 0012
Revises: 0011
"""

import sqlalchemy as sa
from alembic import op

from notifier.db import UtcDateTime

revision = "0012"
down_revision = "0011"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "status_documents",
        sa.Column("id", sa.Integer(), primary_key=True, autoincrement=True),
        sa.Column("text", sa.Text(), nullable=False),
        sa.Column("author", sa.String(254), nullable=False),
        sa.Column("note", sa.Text(), nullable=False, server_default=""),
        sa.Column("created_at", UtcDateTime(), nullable=False),
        sa.Column("parent_id", sa.Integer(), sa.ForeignKey("status_documents.id"), nullable=True),
        sa.Column("file_sha", sa.String(64), nullable=True),
        sa.UniqueConstraint("parent_id", name="uq_status_documents_parent_id"),
    )


def downgrade() -> None:
    op.drop_table("status_documents")
