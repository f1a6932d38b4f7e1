"""Running totals of settled messages that outlive the outbox rows they count.

`notifier_sent_total` and `notifier_failed_total` must only go up, yet the retention sweep deletes old outbox rows
(and deleting a contact deletes its rows). Whatever deletes settled rows folds them in here first, in the same
transaction: the figures are then the live rows plus these totals, and deleting a row never lowers them.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from sqlalchemy import ColumnElement, Integer, String, func, select, update
from sqlalchemy.orm import Mapped, Session, mapped_column

from notifier.db import Base, insert_new
from notifier.delivery.outbox import OutboxRow, RowStatus

SETTLED_COUNTED = (RowStatus.SENT.value, RowStatus.FAILED.value)  # what the totals count (cancelled rows are not)


class OutboxTotal(Base):
    """How many rows of one channel ended one way (sent, or failed for one reason) and were deleted since."""

    __tablename__ = "outbox_totals"

    channel: Mapped[str] = mapped_column(String(8), primary_key=True)
    status: Mapped[str] = mapped_column(String(16), primary_key=True)  # sent or failed
    reason: Mapped[str] = mapped_column(String(16), primary_key=True)  # a failure reason; "" for sent
    count: Mapped[int] = mapped_column(Integer, default=0)


def _grouped(session: Session, *conditions: ColumnElement[bool]) -> Counter[tuple[str, str, str]]:
    rows = session.execute(
        select(OutboxRow.channel, OutboxRow.status, OutboxRow.failure, func.count())
        .where(OutboxRow.status.in_(SETTLED_COUNTED), *conditions)
        .group_by(OutboxRow.channel, OutboxRow.status, OutboxRow.failure))
    counts: Counter[tuple[str, str, str]] = Counter()
    for channel, status, failure, count in rows:
        counts[(channel, status, "" if status == RowStatus.SENT.value else failure or "unknown")] += count
    return counts


def fold(session: Session, *conditions: ColumnElement[bool]) -> int:
    """Add the sent and failed outbox rows matching `conditions` to the totals (call just before deleting them, in
    the same transaction); returns how many rows were counted."""
    counts = _grouped(session, *conditions)
    for (channel, status, reason), count in counts.items():
        key = {"channel": channel, "status": status, "reason": reason}
        session.execute(insert_new(session, OutboxTotal).values(**key, count=0))
        session.execute(update(OutboxTotal).filter_by(**key).values(count=OutboxTotal.count + count))
    return sum(counts.values())


def settled(session: Session) -> Counter[tuple[str, str, str]]:
    """(channel, status, reason) -> every row ever sent or failed: those in the outbox and those folded in."""
    counts = _grouped(session)
    for total in session.scalars(select(OutboxTotal)):
        counts[(total.channel, total.status, total.reason)] += total.count
    return counts


def as_dict(counts: Counter[tuple[str, str, str]]) -> dict[str, Any]:
    """The totals keyed "channel/status/reason", for a test or a log line."""
    return {"/".join(key): value for key, value in sorted(counts.items())}
