"""Keeping delivery data and history only as long as the privacy office asks (NOTIFIER_RETENTION_DAYS, 400 by
default: MFIPPA keeps personal information that was used at least a year; see docs/security.md).

`sweep` deletes what is older than that: settled outbox rows (sent, failed, cancelled, superseded: never a pending
or sending one), delivery receipts, change events and cycles. The ids of inbound texts stay: they hold no number
and no words, and a signed request replayed years later must still be recognised (Twilio's signature has no time;
docs/security.md, "Inbound texts"). It works in batches of
BATCH rows, each its own short transaction, so no sending process waits on a long lock. Sent and failed rows are
added to `outbox_totals` in the batch that deletes them, so the metrics' totals never go down. A change event is
kept while a message still waiting names it (its words are written from it when it leaves), and the newest cycle is
always kept (/healthz and `status` report it).
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import ColumnElement, delete, func, or_, select
from sqlalchemy.orm import InstrumentedAttribute, Session, sessionmaker

from notifier.db import Base, utcnow
from notifier.delivery import totals
from notifier.delivery.outbox import DeliveryReceipt, OutboxRow, RowStatus, event_ids
from notifier.status.history import ChangeEvent, Cycle

log = logging.getLogger(__name__)

BATCH = 500
SETTLED = (RowStatus.SENT.value, RowStatus.FAILED.value, RowStatus.CANCELLED.value, RowStatus.SUPERSEDED.value)
WAITING = (RowStatus.PENDING.value, RowStatus.SENDING.value)


@dataclass
class Swept:
    """How many rows of each kind a sweep deleted."""

    counts: dict[str, int] = field(default_factory=dict)

    def line(self, days: int) -> str:
        """One line for the log and the command."""
        done = ", ".join(f"{count} {name}" for name, count in self.counts.items() if count)
        return f"retention ({days} days): deleted {done or 'nothing'}"

# The conditions selecting a table's rows to delete, built in the session that deletes them.
Conditions = Callable[[Session], list[ColumnElement[bool]]]


def sweep(sessions: sessionmaker[Session], days: int, now: datetime | None = None, batch: int = BATCH) -> Swept:
    """Delete what is older than `days` (see the module's docstring); returns how many rows of each kind went."""
    cutoff = (now or utcnow()) - timedelta(days=days)
    swept = Swept()
    swept.counts["outbox rows"] = _in_batches(sessions, OutboxRow, OutboxRow.id, batch, _settled_before(cutoff),
                                              fold=True)
    swept.counts["delivery receipts"] = _in_batches(sessions, DeliveryReceipt, DeliveryReceipt.provider_id, batch,
                                                    lambda _s: [DeliveryReceipt.updated_at < cutoff])
    with sessions() as session:
        named = _oldest_named_event(session)
    named_kept = [] if named is None else [ChangeEvent.id < named]
    swept.counts["change events"] = _in_batches(sessions, ChangeEvent, ChangeEvent.id, batch,
                                                lambda _s: [ChangeEvent.recorded_at < cutoff, *named_kept])
    swept.counts["cycles"] = _in_batches(sessions, Cycle, Cycle.id, batch, _old_cycles(cutoff))
    return swept


def _settled_before(cutoff: datetime) -> Conditions:
    def conditions(_session: Session) -> list[ColumnElement[bool]]:
        return [OutboxRow.status.in_(SETTLED), OutboxRow.created_at < cutoff,
                or_(OutboxRow.sent_at.is_(None), OutboxRow.sent_at < cutoff)]
    return conditions


def _oldest_named_event(session: Session) -> int | None:
    """The oldest change event a message still waiting names (its digest is written from them when it leaves); None
    when none waits. Read once per sweep, a few thousand rows at a time."""
    oldest: int | None = None
    query = select(OutboxRow.event_ids).where(OutboxRow.status.in_(WAITING), OutboxRow.event_ids != "")
    for value in session.scalars(query.execution_options(yield_per=5000)):
        named = event_ids(value)
        if named:
            oldest = min(named) if oldest is None else min(oldest, *named)
    return oldest


def _old_cycles(cutoff: datetime) -> Conditions:
    def conditions(session: Session) -> list[ColumnElement[bool]]:
        newest = session.scalar(select(func.max(Cycle.id))) or 0
        referenced = select(ChangeEvent.cycle_id).where(ChangeEvent.cycle_id.is_not(None))
        return [Cycle.started_at < cutoff, Cycle.id < newest, Cycle.id.not_in(referenced)]
    return conditions


def _in_batches(sessions: sessionmaker[Session], table: type[Base], key: InstrumentedAttribute[Any], batch: int,
                conditions: Conditions, fold: bool = False) -> int:
    """Delete the rows of `table` matching `conditions(session)`, `batch` at a time, each batch committed. Each batch
    starts after the last one's key, so the primary key's index is walked once, not once per batch."""
    deleted, last = 0, None
    while True:
        with sessions() as session, session.begin():
            after: list[ColumnElement[bool]] = [] if last is None else [key > last]
            query = select(key).where(*conditions(session), *after).order_by(key).limit(batch)
            keys = list(session.scalars(query.with_for_update() if fold else query))  # no row moves while counted
            if not keys:
                return deleted
            if fold:
                totals.fold(session, key.in_(keys))
            session.execute(delete(table).where(key.in_(keys)))
        deleted, last = deleted + len(keys), keys[-1]
        if len(keys) < batch:
            return deleted
