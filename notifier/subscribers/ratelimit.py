"""Rate limits that hold across every web worker: counters live in the database, one row per key and window.

A fixed window per key (e.g. "signup:ip:203.0.113.7" for the current hour). The increment is one conditional
UPDATE, so two workers can never both take the last slot; a new window's row is inserted in a savepoint and a
lost race simply retries the UPDATE. Rows of finished windows are deleted when the key opens a new one.
"""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import BigInteger, Integer, String, delete, select, update
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Mapped, Session, mapped_column

from notifier.db import Base, rowcount


class RateCounter(Base):
    """How many times `key` was used in the window starting at `window_start` (Unix seconds)."""

    __tablename__ = "rate_counters"

    key: Mapped[str] = mapped_column(String(160), primary_key=True)
    window_start: Mapped[int] = mapped_column(BigInteger, primary_key=True)
    count: Mapped[int] = mapped_column(Integer, default=0)


def allow(session: Session, key: str, limit: int, window_seconds: int, now: datetime) -> bool:
    """True (and counted) if `key` was used fewer than `limit` times in the current window; False otherwise.

    The count is part of `session`'s transaction: commit it (even when the request is then refused) so other
    workers see it.
    """
    if limit <= 0:
        return False
    start = int(now.timestamp()) // window_seconds * window_seconds
    for _ in range(2):
        if _increment(session, key, start, limit):
            return True
        exists = session.scalar(
            select(RateCounter.count).where(RateCounter.key == key, RateCounter.window_start == start)
        )
        if exists is not None:
            return False  # the window is full
        try:
            with session.begin_nested():
                session.execute(delete(RateCounter).where(RateCounter.key == key, RateCounter.window_start < start))
                session.add(RateCounter(key=key, window_start=start, count=1))
            return True
        except IntegrityError:  # another worker opened the window first: count against its row
            continue
    return False


def _increment(session: Session, key: str, start: int, limit: int) -> bool:
    result = session.execute(
        update(RateCounter)
        .where(RateCounter.key == key, RateCounter.window_start == start, RateCounter.count < limit)
        .values(count=RateCounter.count + 1)
        .execution_options(synchronize_session=False)
    )
    return rowcount(result) == 1
