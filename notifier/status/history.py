"""What the clock has seen: the last recorded state of each board, every change event, and every cycle.

The web pages read the history from here (board page, Atom feed); the digest code reads change events to
decide who hears what. Nothing here depends on Flask.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import JSON, Boolean, ForeignKey, Integer, String, Text, func, select
from sqlalchemy.orm import Mapped, Session, mapped_column

from notifier.db import Base, UtcDateTime, utcnow


class BoardState(Base):
    """The last state of a board that the clock recorded; the next cycle diffs the file against it."""

    __tablename__ = "board_states"

    board_id: Mapped[str] = mapped_column(String(32), primary_key=True)
    data: Mapped[dict[str, Any]] = mapped_column(JSON)
    file_version: Mapped[str] = mapped_column(String(32))
    recorded_at: Mapped[datetime] = mapped_column(UtcDateTime, default=utcnow)
    # The next moment what is in force changes by itself (an announced period starting or ending), if any.
    pending_effective: Mapped[datetime | None] = mapped_column(UtcDateTime, nullable=True)


class Cycle(Base):
    """One run of the clock's job: when, on which file version, and how it ended (for `status` and /healthz)."""

    __tablename__ = "cycles"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    started_at: Mapped[datetime] = mapped_column(UtcDateTime, default=utcnow)
    finished_at: Mapped[datetime | None] = mapped_column(UtcDateTime, nullable=True)
    outcome: Mapped[str] = mapped_column(String(16), default="running")  # running, ok, invalid, failed
    detail: Mapped[str] = mapped_column(Text, default="")
    file_version: Mapped[str | None] = mapped_column(String(32), nullable=True)


class ChangeEvent(Base):
    """One thing a parent would notice: a status, a panel, a withdrawal, the message, or a period announced ahead."""

    __tablename__ = "change_events"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    cycle_id: Mapped[int | None] = mapped_column(ForeignKey("cycles.id"), nullable=True)
    board_id: Mapped[str] = mapped_column(String(32), index=True)
    kind: Mapped[str] = mapped_column(String(32))
    panel: Mapped[str | None] = mapped_column(String(16), nullable=True)
    key: Mapped[str | None] = mapped_column(String(64), nullable=True)
    before: Mapped[Any] = mapped_column(JSON, nullable=True)
    after: Mapped[Any] = mapped_column(JSON, nullable=True)
    urgent: Mapped[bool] = mapped_column(Boolean, default=False)
    # False for edits published with "notify parents" off (a typo fix): shown in history, never sent.
    notify: Mapped[bool] = mapped_column(Boolean, default=True)
    # True when it happened by itself, as announced (a period started or ended): told only to who asked for it.
    scheduled: Mapped[bool] = mapped_column(Boolean, default=False)
    effective_at: Mapped[datetime | None] = mapped_column(UtcDateTime, nullable=True)
    recorded_at: Mapped[datetime] = mapped_column(UtcDateTime, default=utcnow, index=True)


def board_history(session: Session, board_id: str, limit: int = 50) -> list[ChangeEvent]:
    """The board's recorded changes, newest first."""
    query = (
        select(ChangeEvent)
        .where(ChangeEvent.board_id == board_id)
        .order_by(ChangeEvent.id.desc())
        .limit(limit)
    )
    return list(session.scalars(query))


def latest_event_id(session: Session) -> int:
    """The id of the newest change event (0 when none): tells the web cache when history has moved on."""
    return session.scalar(select(func.max(ChangeEvent.id))) or 0


def last_cycle(session: Session) -> Cycle | None:
    return session.scalars(select(Cycle).order_by(Cycle.id.desc()).limit(1)).first()
