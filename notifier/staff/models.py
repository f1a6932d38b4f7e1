"""The staff console's tables: accounts, the boards each may publish, sign-in links, sessions, and the audit trail."""

from __future__ import annotations

import secrets
from datetime import datetime
from typing import Any

from sqlalchemy import JSON, Boolean, ForeignKey, Integer, String, Text, UniqueConstraint
from sqlalchemy.orm import Mapped, mapped_column

from notifier.db import Base, UtcDateTime, utcnow


def new_public_id() -> str:
    """A random id for an account, never reused (SQLite reuses the highest numeric row id after a delete)."""
    return secrets.token_hex(16)


class StaffMember(Base):
    """One person who may publish: an address to send sign-in links to, and whether they administer everything.

    `public_id` is what anything outside the database is bound to (the edit form's signed state); the numeric `id`
    only joins tables, since SQLite gives a removed account's id to the next one.
    """

    __tablename__ = "staff_members"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    public_id: Mapped[str] = mapped_column(String(32), unique=True, index=True, default=new_public_id)
    email: Mapped[str] = mapped_column(String(320), unique=True)
    is_admin: Mapped[bool] = mapped_column(Boolean, default=False)
    created_at: Mapped[datetime] = mapped_column(UtcDateTime, default=utcnow)


class StaffBoard(Base):
    """A board a staff member may publish for (administrators need none: they may publish for every board)."""

    __tablename__ = "staff_boards"
    __table_args__ = (UniqueConstraint("staff_id", "board_id", name="uq_staff_boards_staff_board"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    staff_id: Mapped[int] = mapped_column(ForeignKey("staff_members.id", ondelete="CASCADE"), index=True)
    board_id: Mapped[str] = mapped_column(String(32))


class SigninToken(Base):
    """One emailed sign-in link: the hash of its token, when it expires, and when it was used (once)."""

    __tablename__ = "staff_signin_tokens"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    staff_id: Mapped[int] = mapped_column(ForeignKey("staff_members.id", ondelete="CASCADE"), index=True)
    token_hash: Mapped[str] = mapped_column(String(64), unique=True)
    created_at: Mapped[datetime] = mapped_column(UtcDateTime)
    expires_at: Mapped[datetime] = mapped_column(UtcDateTime)
    used_at: Mapped[datetime | None] = mapped_column(UtcDateTime, nullable=True)


class StaffSession(Base):
    """One signed-in browser: the hash of the random id its cookie holds, whose account it is, and until when.

    Checked on every request; deleted at sign-out and with the account, so a copied cookie stops working there.
    """

    __tablename__ = "staff_sessions"

    token_hash: Mapped[str] = mapped_column(String(64), primary_key=True)
    staff_id: Mapped[int] = mapped_column(ForeignKey("staff_members.id", ondelete="CASCADE"), index=True)
    created_at: Mapped[datetime] = mapped_column(UtcDateTime)
    expires_at: Mapped[datetime] = mapped_column(UtcDateTime, index=True)
    ip: Mapped[str] = mapped_column(String(64), default="")


class AuditEntry(Base):
    """One action by one staff member: a published edit of a board, or an account added or removed."""

    __tablename__ = "staff_audit"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    at: Mapped[datetime] = mapped_column(UtcDateTime, index=True)
    staff_email: Mapped[str] = mapped_column(String(320))
    action: Mapped[str] = mapped_column(String(32))  # edit, staff_add, staff_remove
    board_id: Mapped[str | None] = mapped_column(String(32), nullable=True, index=True)
    summary: Mapped[str] = mapped_column(Text, default="")
    changes: Mapped[list[dict[str, Any]]] = mapped_column(JSON, default=list)
    notify: Mapped[bool | None] = mapped_column(Boolean, nullable=True)
    ip: Mapped[str] = mapped_column(String(64), default="")
    file_version: Mapped[str | None] = mapped_column(String(32), nullable=True)
