"""The figures every process shares, read from the database: one scrape tells the whole truth, whichever process
sent. /metrics (`notifier.web.metrics`) turns them into Prometheus gauges and counters.

The outbox rows, channel pauses and contacts are counted by index-backed GROUP BYs; /metrics keeps the result a
few seconds so a scrape every 15 s (or several scrapers) costs one read.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import overload

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from notifier.delivery import health, totals
from notifier.delivery.channels.base import EMAIL, SMS, WEBHOOK
from notifier.delivery.outbox import Failure, OutboxRow, RowStatus
from notifier.status.history import last_cycle
from notifier.subscribers.models import Contact, ContactStatus

CHANNELS = (EMAIL, SMS, WEBHOOK)  # always reported, at zero when idle, so a graph falls back to zero


@dataclass
class Figures:
    """What /metrics reports from the database."""

    outbox: Counter[tuple[str, str]] = field(default_factory=Counter)  # (channel, state) -> rows
    oldest_due_seconds: dict[str, float] = field(default_factory=dict)  # channel -> age of its oldest due row
    settled: Counter[tuple[str, str, str]] = field(default_factory=Counter)  # (channel, status, reason) -> ever
    paused: dict[str, bool] = field(default_factory=dict)
    contacts: Counter[tuple[str, str]] = field(default_factory=Counter)  # (channel, state) -> contacts
    last_cycle_age_seconds: float | None = None


def read(session: Session, now: datetime) -> Figures:
    """Read every shared figure at `now`."""
    figures = Figures()
    channels = set(CHANNELS)
    for channel, status, count in session.execute(
            select(OutboxRow.channel, OutboxRow.status, func.count()).group_by(OutboxRow.channel, OutboxRow.status)):
        figures.outbox[(channel, status)] += count
        channels.add(channel)
    due = session.execute(select(OutboxRow.channel, func.min(OutboxRow.due_at))
                          .where(OutboxRow.status == RowStatus.PENDING.value, OutboxRow.due_at <= now)
                          .group_by(OutboxRow.channel))
    oldest = {channel: _aware(at) for channel, at in due}
    paused = {pause.channel for pause in health.pauses(session)}
    channels |= paused
    for channel in sorted(channels):
        for state in RowStatus:
            figures.outbox.setdefault((channel, state.value), 0)
        at = oldest.get(channel)
        figures.oldest_due_seconds[channel] = max(0.0, (now - at).total_seconds()) if at else 0.0
        figures.paused[channel] = channel in paused
    figures.settled = totals.settled(session)
    for channel in channels:  # every series from zero, so that rate() sees the first message
        figures.settled.setdefault((channel, RowStatus.SENT.value, ""), 0)
        for reason in Failure:
            figures.settled.setdefault((channel, RowStatus.FAILED.value, reason.value), 0)
    for channel, status, count in session.execute(
            select(Contact.channel, Contact.status, func.count()).group_by(Contact.channel, Contact.status)):
        figures.contacts[(channel, status)] += count
    for channel in (EMAIL, SMS):
        for contact_state in ContactStatus:
            figures.contacts.setdefault((channel, contact_state.value), 0)
    cycle = last_cycle(session)
    if cycle is not None:
        figures.last_cycle_age_seconds = max(0.0, (now - _aware(cycle.started_at)).total_seconds())
    return figures


@overload
def _aware(at: datetime) -> datetime: ...
@overload
def _aware(at: datetime | None) -> datetime | None: ...
def _aware(at: datetime | None) -> datetime | None:
    return at.replace(tzinfo=UTC) if at is not None and at.tzinfo is None else at
